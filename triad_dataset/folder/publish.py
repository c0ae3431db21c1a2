"""`triad publish DIR --repo ORG/NAME [--dry-run]`: upload a validated dataset folder to the Hub.

The folder is validated first; `--dry-run` lists what would be uploaded (no token or network needed). Without a
token, in offline mode, or when the Hub cannot be reached, the command fails with one clear TriadError message.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from triad_dataset.contract.errors import TriadError
from triad_dataset.folder.io import AUDIT_NAME, CARD_NAME, DATA_DIR, LICENSE_NAME

REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*/[A-Za-z0-9][A-Za-z0-9_.\-]*$")
TOKEN_HELP = "log in with `hf auth login` or set HF_TOKEN"


def upload_plan(directory: str | os.PathLike) -> list[tuple[str, int]]:
    """(relative path, size in bytes) of every file that would be uploaded, sorted by path."""
    root = Path(directory)
    if not root.is_dir():
        raise TriadError(f"{root}: not a dataset folder (no such directory)")
    files = [root / CARD_NAME, root / AUDIT_NAME, *sorted((root / DATA_DIR).rglob("*.parquet"))]
    missing = [p.name for p in files[:2] if not p.is_file()]
    if missing or len(files) == 2:
        raise TriadError(f"{root}: not a built dataset folder (missing {', '.join(missing) or 'data/*.parquet'})")
    if (root / LICENSE_NAME).is_file():
        files.insert(0, root / LICENSE_NAME)  # sorted: "LICENSE.md" < "README.md"
    return [(p.relative_to(root).as_posix(), p.stat().st_size) for p in files]


def format_plan(plan: list[tuple[str, int]], repo_id: str) -> str:
    width = max(len(path) for path, _ in plan)
    lines = [f"would upload {len(plan)} files ({_size(sum(s for _, s in plan))}) to datasets/{repo_id}:"]
    lines += [f"  {path.ljust(width)}  {_size(size).rjust(9)}" for path, size in plan]
    return "\n".join(lines)


def _size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def _token(token: str | None) -> str:
    from huggingface_hub import constants, get_token

    if constants.HF_HUB_OFFLINE:
        raise TriadError("cannot publish while HF_HUB_OFFLINE is set (unset it, or use --dry-run)")
    token = token or get_token()
    if not token:
        raise TriadError(f"no Hugging Face token found: {TOKEN_HELP}")
    return token


def publish(
    directory: str | os.PathLike,
    repo_id: str,
    *,
    dry_run: bool = False,
    private: bool = False,
    token: str | None = None,
    commit_message: str | None = None,
    validate: Callable[[Path], list[str]] | None = None,
) -> str:
    """Validate `directory` and upload it as the dataset repo `repo_id`; returns the printed report."""
    if not REPO_ID.match(repo_id or ""):
        raise TriadError(f"--repo {repo_id!r}: expected ORG/NAME (e.g. my-org/triad)")
    root = Path(directory)
    plan = upload_plan(root)
    if validate is None:
        from triad_dataset.folder.validate import validate_folder

        validate = validate_folder
    violations = validate(root)
    if violations:
        raise TriadError(
            f"{root}: refusing to publish a folder with {len(violations)} validation violations "
            f"(run `triad validate {root}`); first: {violations[0]}"
        )
    if dry_run:
        return format_plan(plan, repo_id)
    from huggingface_hub import HfApi

    api = HfApi(token=_token(token))
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        info = api.upload_folder(
            folder_path=str(root),
            repo_id=repo_id,
            repo_type="dataset",
            allow_patterns=[path for path, _ in plan],
            commit_message=commit_message or f"Upload {root.name} with triad publish",
        )
    except Exception as exc:  # network, auth and Hub errors all become one clear line, never a traceback
        raise TriadError(f"upload of {root} to datasets/{repo_id} failed: {_describe(exc)}") from exc
    url = getattr(info, "commit_url", None) or f"https://huggingface.co/datasets/{repo_id}"
    return f"uploaded {len(plan)} files to datasets/{repo_id}: {url}"


def _describe(exc: Exception) -> str:
    from huggingface_hub.errors import HfHubHTTPError

    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(exc, HfHubHTTPError) and status in (401, 403):
        return f"the Hub refused the token (HTTP {status}): {TOKEN_HELP} with write access"
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    if any(word in name for word in ("Connect", "Timeout", "Network")) or isinstance(exc, OSError):
        return f"cannot reach the Hub ({name}: {first_line}); check the network connection"
    return f"{name}: {first_line}"
