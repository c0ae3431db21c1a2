"""Optional mirroring of accepted submissions to a Hub dataset repo of results.

Active only when both ``TRIAD_SPACE_HUB_REPO`` (e.g. ``my-org/triad-results``) and a token (``HF_TOKEN``) are set and
``HF_HUB_OFFLINE`` is not; otherwise the status line says why it is off. The SQLite file stays the source of truth:
a failed upload is reported in the status line and never blocks a submission.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from collections.abc import Mapping
from typing import Any

_last_error: list[str] = []
_lock = threading.Lock()


def _config() -> tuple[str | None, str | None]:
    return os.environ.get("TRIAD_SPACE_HUB_REPO") or None, os.environ.get("HF_TOKEN") or None


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes")


def status() -> str:
    """One line for the About tab."""
    repo, token = _config()
    if _offline():
        return "Hub mirroring: off (HF_HUB_OFFLINE is set); results live only in the local SQLite database."
    if not repo or not token:
        missing = " and ".join(n for n, val in (("TRIAD_SPACE_HUB_REPO", repo), ("HF_TOKEN", token)) if not val)
        return f"Hub mirroring: off ({missing} not configured); results live only in the local SQLite database."
    with _lock:
        err = _last_error[-1] if _last_error else None
    return f"Hub mirroring: on, to dataset repo {repo}" + (f" (last upload failed: {err})" if err else "")


def mirror(submission: Mapping[str, Any]) -> None:
    """Upload one submission's record as ``submissions/<id>.json`` in a background thread (no-op when off)."""
    repo, token = _config()
    if not repo or not token or _offline():
        return

    def work() -> None:
        try:
            from huggingface_hub import HfApi

            record = {**submission, "scores": {c: dataclasses.asdict(sc) for c, sc in submission["scores"].items()}}
            data = json.dumps(record, sort_keys=True, default=str).encode()
            HfApi(token=token).upload_file(
                path_or_fileobj=data,
                path_in_repo=f"submissions/{submission['id']}.json",
                repo_id=repo,
                repo_type="dataset",
            )
        except Exception as exc:  # reported in the status line, never raised into the submission
            with _lock:
                _last_error.append(f"{type(exc).__name__}: {exc}"[:200])

    threading.Thread(target=work, daemon=True).start()
