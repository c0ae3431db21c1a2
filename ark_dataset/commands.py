"""`triad build ark --from RELEASE --out DIR` and `triad build ark-mini --out DIR` (registered into the `triad` CLI
by triad_cli/main.py). Each build is validated by ARK's own validator. Handlers import their modules lazily."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register_build(kinds: Any) -> None:
    p = kinds.add_parser("ark", help="import an ARK release into a Hub-style folder")
    p.add_argument("--from", "--src", dest="src", required=True, type=Path, help="the release folder")
    p.add_argument(
        "--map", action="append", default=[], metavar="FIELD=COLUMN", help="rename a release column (repeatable)"
    )
    p.add_argument("--out", required=True, type=Path, help="output folder (written atomically)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing dataset folder")
    p.set_defaults(handler=_build_ark)

    p = kinds.add_parser("ark-mini", help="the embedded ARK mini edition")
    p.add_argument("--out", required=True, type=Path, help="output folder (written atomically)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing dataset folder")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.set_defaults(handler=_build_ark_mini)


def _build_ark(args: argparse.Namespace) -> int:
    from ark_dataset.importer import import_release, parse_mapping

    path = import_release(args.src, args.out, mapping=parse_mapping(args.map) or None, overwrite=args.overwrite)
    return _report_validation(path)


def _build_ark_mini(args: argparse.Namespace) -> int:
    from ark_dataset.mini import build_ark_mini

    path = build_ark_mini(args.out, seed=args.seed, overwrite=args.overwrite)
    return _report_validation(path)


def _report_validation(path: Path) -> int:
    """Validate the folder the builder just wrote: every build runs the validator."""
    from ark_dataset.validate import validate_folder

    violations = list(validate_folder(path))
    for line in violations:
        print(line, file=sys.stderr)
    print(f"wrote {path} ({len(violations)} validation violations)")
    return 1 if violations else 0
