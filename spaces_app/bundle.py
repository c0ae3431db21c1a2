"""`triad space bundle --out DIR`: a ready-to-push Hugging Face Space folder for the leaderboard.

The folder holds everything the app needs and nothing else: the Space card (`README.md` with the Space YAML,
`app_file: app.py`), `requirements.txt`, a root `app.py`, and the packages the app imports (`spaces_app`,
`triad_dataset`, `ark_dataset`, `metrics`). Gold data is copied only when asked (`--gold-triad`, `--gold-ark`,
into `gold/triad` and `gold/ark`, which the bundled `app.py` then uses unless the Space sets `TRIAD_SPACE_DATA` /
`TRIAD_SPACE_ARK_DATA`).
"""

from __future__ import annotations

import argparse
import re
import shutil
import tempfile
from pathlib import Path

from triad_dataset.contract.errors import TriadError

PROJECT_ROOT = Path(__file__).resolve().parents[1]
# model_adapters: the registry (names reserved for runs of registry models) and the harness the reproduction checks
# re-encode with (they need the `models` extra's torch / transformers where the Space runs them)
PACKAGES: tuple[str, ...] = ("spaces_app", "triad_dataset", "ark_dataset", "metrics", "model_adapters")
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "conftest.py")
GOLD_DIRS: dict[str, str] = {"triad": "gold/triad", "ark": "gold/ark"}

APP_PY = '''"""Entry point of the TRIAD / ARK leaderboard Space (written by `triad space bundle`)."""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the bundled packages win over anything installed
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
for variable, folder in (("TRIAD_SPACE_DATA", "gold/triad"), ("TRIAD_SPACE_ARK_DATA", "gold/ark")):
    if (HERE / folder).is_dir():
        os.environ.setdefault(variable, str(HERE / folder))

from spaces_app.app import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
'''


def _card(source: str) -> str:
    """The Space card with `app_file: app.py` and a note on where the code and data come from."""
    card, count = re.subn(r"(?m)^app_file: .*$", "app_file: app.py", source, count=1)
    if count != 1:
        raise TriadError("spaces_app/README.md: the Space YAML has no app_file line")
    return card.replace(
        "This file is the Space's card: copy it to the root of the Space repository as `README.md`, together with\n"
        "`spaces_app/requirements.txt` as `requirements.txt` and the project's packages (`triad_dataset/`, `ark_dataset/`,\n"
        "`metrics/`, `spaces_app/`).",
        "This Space folder was written by `triad space bundle`: `app.py` starts the app from the bundled packages\n"
        "(`spaces_app/`, `triad_dataset/`, `ark_dataset/`, `metrics/`); gold folders, when bundled, are in `gold/`.",
    )


def write_bundle(
    out_dir: str | Path,
    *,
    gold_triad: str | Path | None = None,
    gold_ark: str | Path | None = None,
    overwrite: bool = False,
) -> list[str]:
    """Write the Space folder into ``out_dir`` (written in a temporary folder, then renamed); returns its files."""
    out = Path(out_dir)
    if out.exists() and not (overwrite and out.is_dir()):
        raise TriadError(f"{out}: already exists (pass --overwrite to replace it)")
    golds = {"triad": gold_triad, "ark": gold_ark}
    for name, folder in golds.items():
        if folder is not None and not (Path(folder) / "audit.json").is_file():
            raise TriadError(f"--gold-{name} {folder}: not a dataset folder (no audit.json)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for package in PACKAGES:
            shutil.copytree(PROJECT_ROOT / package, tmp / package, ignore=_SKIP)
        (tmp / "README.md").write_text(
            _card((PROJECT_ROOT / "spaces_app" / "README.md").read_text(encoding="utf-8")), encoding="utf-8"
        )
        shutil.copyfile(PROJECT_ROOT / "spaces_app" / "requirements.txt", tmp / "requirements.txt")
        (tmp / "app.py").write_text(APP_PY, encoding="utf-8")
        for name, folder in golds.items():
            if folder is not None:
                shutil.copytree(folder, tmp / GOLD_DIRS[name])
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())


def register(sub: argparse._SubParsersAction) -> None:
    """Add `triad space bundle` to the `triad space` subcommands."""
    p = sub.add_parser("bundle", help="write a ready-to-push Hugging Face Space folder for the leaderboard")
    p.add_argument("--out", required=True, help="the Space folder to write")
    p.add_argument("--gold-triad", help="also copy this TRIAD gold folder into the Space (gold/triad)")
    p.add_argument("--gold-ark", help="also copy this ARK gold folder into the Space (gold/ark)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out folder")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    files = write_bundle(args.out, gold_triad=args.gold_triad, gold_ark=args.gold_ark, overwrite=args.overwrite)
    print(f"{args.out}: Space folder with {len(files)} files (push it as a Gradio Space; see its README.md)")
    return 0
