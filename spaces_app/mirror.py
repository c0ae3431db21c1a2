"""Mirroring the board to a Hub dataset repo or a local folder, and restoring an empty database from it.

A Space without persistent storage starts with an empty disk, so the board lives in two places: the SQLite file
(the source of truth while the server runs) and a mirror — a Hub dataset repo (``TRIAD_SPACE_HUB_REPO`` with
``HF_TOKEN``, Hub not offline) or a folder (``TRIAD_SPACE_MIRROR_DIR``, a self-hosted board). The same code runs
above both targets (`FolderTarget`, `HubTarget`: put, get, list, delete):

    submissions/<id>.json      a row: its public fields, scores, per-query values and check (`Database.mirror_row`)
    explore/<id>.parquet       the row's explorer table
    references/<key>.json      a reference run (`Database.reference_records`) with its explorer table

`Mirror` listens to the database (`Database.changed`) and uploads in a background thread; a failed upload is
reported in the status line and never blocks a submission. `restore` puts every row, its status, its explorer file
and every reference run back into an empty database before the board opens (`spaces_app.app.launch`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Protocol

from spaces_app import explore_store
from spaces_app.db import DELETED, REFERENCE, ROW, Database
from spaces_app.db_references import restore_reference
from triad_dataset.contract.errors import TriadError

ROWS, EXPLORE, REFERENCES = "submissions", "explore", "references"
_last_error: list[str] = []
_lock = threading.Lock()
WAIT_S: Final = 120.0  # how long `Mirror.flush` waits for the uploads in flight


class Target(Protocol):
    """Where the mirror's files live."""

    def put(self, path: str, data: bytes) -> None: ...

    def get(self, path: str) -> bytes: ...

    def list(self) -> list[str]: ...

    def delete(self, path: str) -> None: ...


class FolderTarget:
    """A folder on this machine (written atomically, file by file)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def put(self, path: str, data: bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def get(self, path: str) -> bytes:
        return (self.root / path).read_bytes()

    def list(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(
            p.relative_to(self.root).as_posix()
            for p in self.root.rglob("*")
            if p.is_file() and not p.name.startswith(".tmp-")
        )

    def delete(self, path: str) -> None:
        (self.root / path).unlink(missing_ok=True)


class HubTarget:
    """A Hub dataset repo, through huggingface_hub's client (HF_ENDPOINT chooses the Hub it talks to)."""

    def __init__(self, repo: str, token: str) -> None:
        from huggingface_hub import HfApi

        self.endpoint = os.environ.get("HF_ENDPOINT") or None  # read now: huggingface_hub reads it at import
        self.repo, self.token, self.api = repo, token, HfApi(endpoint=self.endpoint, token=token)

    def put(self, path: str, data: bytes) -> None:
        self.api.upload_file(
            path_or_fileobj=data,
            path_in_repo=path,
            repo_id=self.repo,
            repo_type="dataset",
            commit_message=f"mirror {path}",
        )

    def get(self, path: str) -> bytes:
        from huggingface_hub import hf_hub_download

        with tempfile.TemporaryDirectory() as cache:
            local = hf_hub_download(
                self.repo, path, repo_type="dataset", token=self.token, cache_dir=cache, endpoint=self.endpoint
            )
            return Path(local).read_bytes()

    def list(self) -> list[str]:
        return sorted(self.api.list_repo_files(self.repo, repo_type="dataset"))

    def delete(self, path: str) -> None:
        from huggingface_hub.errors import EntryNotFoundError

        with contextlib.suppress(EntryNotFoundError):  # never mirrored, or removed already
            self.api.delete_file(path, repo_id=self.repo, repo_type="dataset", commit_message=f"unmirror {path}")


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes")


def target() -> Target | None:
    """The configured mirror target, or None: a folder (TRIAD_SPACE_MIRROR_DIR) first, else the Hub repo."""
    folder = os.environ.get("TRIAD_SPACE_MIRROR_DIR")
    if folder:
        return FolderTarget(folder)
    repo, token = os.environ.get("TRIAD_SPACE_HUB_REPO"), os.environ.get("HF_TOKEN")
    if repo and token and not _offline():
        return HubTarget(repo, token)
    return None


def status() -> str:
    """One line for the About tab (no server path: it goes to every visitor)."""
    with _lock:
        err = _last_error[-1] if _last_error else None
    failed = f" (last upload failed: {err})" if err else ""
    if os.environ.get("TRIAD_SPACE_MIRROR_DIR"):
        return "Mirroring: on, to a folder on this server; an empty database is restored from it at start" + failed
    repo, token = os.environ.get("TRIAD_SPACE_HUB_REPO"), os.environ.get("HF_TOKEN")
    if _offline():
        return "Hub mirroring: off (HF_HUB_OFFLINE is set); results live only in the local SQLite database."
    if not repo or not token:
        missing = " and ".join(n for n, val in (("TRIAD_SPACE_HUB_REPO", repo), ("HF_TOKEN", token)) if not val)
        return f"Hub mirroring: off ({missing} not configured); results live only in the local SQLite database."
    return f"Hub mirroring: on, to dataset repo {repo}" + failed


def _failed(exc: BaseException) -> None:
    with _lock:
        _last_error.append(f"{type(exc).__name__}: {exc}"[:200])
    print(f"mirror: {type(exc).__name__}: {exc}"[:300], file=sys.stderr)


class Mirror(threading.Thread):
    """Uploads what changed in a database to a target, in the order it changed, each item's latest state."""

    def __init__(self, db: Database, to: Target) -> None:
        super().__init__(name="mirror", daemon=True)
        self.db, self.to = db, to
        self._pending: dict[tuple[str, Any], None] = {}
        self._cond = threading.Condition()
        self._busy = False

    def changed(self, kind: str, what: Any) -> None:
        """A `Database.changed` listener: queue the item (its latest state is read when it is uploaded)."""
        with self._cond:
            self._pending[(kind, what)] = None
            self._cond.notify_all()

    def run(self) -> None:
        while True:
            with self._cond:
                while not self._pending:
                    self._busy = False
                    self._cond.notify_all()
                    self._cond.wait()
                item = next(iter(self._pending))
                del self._pending[item]
                self._busy = True
            try:
                self.upload(*item)
            except Exception as exc:  # reported in the status line; the database keeps the truth
                _failed(exc)

    def flush(self, timeout: float = WAIT_S) -> bool:
        """Wait until everything queued is uploaded; True when it was within ``timeout`` seconds."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)

    def upload(self, kind: str, what: Any) -> None:
        """Put one item's latest state (or its removal) on the target."""
        if kind == REFERENCE:
            found = self.db.reference_record(str(what))
            if found is not None:
                self.to.put(f"{REFERENCES}/{what}.json", _reference_bytes(*found))
            return
        sid = int(what)
        record = self.db.mirror_row(sid) if kind == ROW else None
        if record is None or kind == DELETED:
            self.to.delete(f"{ROWS}/{sid}.json")
            self.to.delete(f"{EXPLORE}/{sid}.parquet")
            return
        explorer = explore_store.file_of(self.db.path, sid)
        if explorer.is_file():
            self.to.put(f"{EXPLORE}/{sid}.parquet", explorer.read_bytes())
        self.to.put(f"{ROWS}/{sid}.json", json.dumps(record, sort_keys=True, allow_nan=False).encode())


def _reference_bytes(record: dict[str, Any], explorer: bytes | None) -> bytes:
    data = {**record, "explorer_b64": base64.b64encode(explorer).decode() if explorer is not None else None}
    return json.dumps(data, sort_keys=True, allow_nan=False).encode()


def restore(db: Database, source: Target, log: Callable[[str], None] = print) -> tuple[int, int]:
    """Put the mirror's reference runs and rows (with their explorer files) into an empty database: (rows,
    reference runs) restored. Raises TriadError when the database is not empty."""
    if not db.is_empty():
        raise TriadError(f"{db.path}: not empty; the mirror is restored into an empty database only")
    files = source.list()
    refs = [f for f in files if f.startswith(f"{REFERENCES}/") and f.endswith(".json")]
    for name in refs:
        record = json.loads(source.get(name))
        b64 = record.pop("explorer_b64", None)
        restore_reference(db, record, base64.b64decode(b64) if b64 else None)
    rows = sorted(
        (f for f in files if f.startswith(f"{ROWS}/") and f.endswith(".json")),
        key=lambda f: int(Path(f).stem) if Path(f).stem.isdigit() else -1,
    )
    for name in rows:
        record = json.loads(source.get(name))
        db.restore_row(record)
        explorer = f"{EXPLORE}/{record['id']}.parquet"
        if explorer in files:
            explore_store.save_bytes(db.path, int(record["id"]), source.get(explorer))
    log(f"mirror: restored {len(rows)} rows and {len(refs)} reference runs")
    return len(rows), len(refs)


def start(db: Database, log: Callable[[str], None] = print) -> Mirror | None:
    """With a mirror configured: restore an empty database from it, then mirror every change (None: no mirror)."""
    to = target()
    if to is None:
        return None
    if db.is_empty():
        restore(db, to, log)
    mirror = Mirror(db, to)
    mirror.start()
    db.listeners.append(mirror.changed)
    return mirror
