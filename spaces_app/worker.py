"""Who decides a pending row: the full check against the leaderboard's own run, and the workers that make the runs.

A pending row names a model the server can run; it is decided against that model's reference run
(spaces_app/reference.py), made once per model identity and gold and reused for every later row. A `Worker` —
the Space's own CPU queue (`VerifyQueue`) or `triad space verify` on a machine with the model — goes through:

1. `settle`: rows whose reference run is made are judged at once (no model needed);
2. for each wanted reference run it may make (`Store.wanted`), claimed so that no other worker makes it too:
   a sampled first look at the pending rows naming it (spaces_app/verify.py: it can fail a row early, it never
   verifies one), then the run itself (`reference_run`, in a child process that the claim's lease follows), stored
   with every row naming it judged, and the rows someone requested made (spaces_app/evaluation.py).

Which models the Space runs itself: `spaces_app.local_models`.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, Protocol

from spaces_app import reference, reference_run, verify
from spaces_app.db import Database
from spaces_app.db_references import reference_item, row_item
from spaces_app.local_models import runs_here
from spaces_app.reference import Reference, RefSpec
from triad_dataset.contract.errors import TriadError

POLL_S = 10.0
JOIN_S = 60.0  # on shutdown, how long the worker may take to leave a check (it stops before the next encoder call)
LEASE_S: Final = 600.0  # a claim lasts this long unless renewed: a dead worker's item is free again after it
RENEW_S: Final = 60.0  # how often a worker renews the claim of the reference run it is making


def eligible(task: Mapping[str, Any]) -> bool:
    """Whether the Space's own queue checks this pending row."""
    return runs_here(str((task.get("verify") or {}).get("spec") or ""))


def cache_dir(db_path: str | Path) -> Path:
    """The embedding cache of the reference runs: TRIAD_SPACE_CACHE, else the folder `cache` beside the database
    (where `make demo` keeps its runs' vectors, so a model it ran is not encoded again). The cache is keyed by
    model identity and input, never by submission: nothing a submitter sends goes into it."""
    raw = os.environ.get("TRIAD_SPACE_CACHE")
    return Path(raw) if raw else Path(db_path).resolve().parent / "cache"


# --- the full check of pending rows -------------------------------------------------------------------------------
def judge_row(
    task: Mapping[str, Any], ref: Reference, submitted: Mapping[str, Mapping[str, float]]
) -> tuple[str, dict[str, Any]]:
    """(status, record) of a pending row against its reference run: unverified when the run names another
    revision than the one the leaderboard loaded, else `reference.full_check`."""
    record = dict(task.get("verify") or {})
    spec, claimed = str(record.get("spec") or ""), record.get("revision")
    loaded = (ref.meta.get("model") or {}).get("revision")
    if "/" not in spec and claimed and loaded and str(loaded) != str(claimed):
        return verify.UNVERIFIED, {
            **record,
            "reason": f"not verifiable as {spec}: the run was made at revision {str(claimed)[:60]!r}, "
            f"this server loads {str(loaded)[:60]!r}",
        }
    status, result = reference.full_check(ref, submitted)
    record["full"] = result
    if status == verify.UNVERIFIED:
        record["reason"] = result["reason"]
    return status, record


def after_first_look(status: str, record: Mapping[str, Any]) -> str:
    """The row's status after a sampled first look: failed, or unverified when the model cannot be checked as the
    run names it; a look that passed (or found every sampled score alike) leaves it pending the full check."""
    if status == verify.FAILED or (status == verify.UNVERIFIED and "result" not in record):
        return status
    return verify.PENDING


def record_first_look(db: Database, submission_id: int, status: str, record: Mapping[str, Any]) -> str:
    """Store a first look's outcome (`after_first_look`) and judge the row at once when its reference run is made;
    the row's status."""
    db.set_verification(submission_id, after_first_look(status, record), record)
    key = str(record.get("reference") or "")
    decided = dict(settle(db, key)) if key else {}
    return decided.get(submission_id, after_first_look(status, record))


def settle(db: Database, key: str) -> list[tuple[int, str]]:
    """Judge every pending row that names reference run ``key`` (once it is made): (row id, status) of each."""
    ref = db.reference(key)
    if ref is None:
        return []
    decided = []
    for task in db.verification_tasks(pending_only=True):
        if (task.get("verify") or {}).get("reference") != key:
            continue
        submitted = {c: db.query_scores(task["id"], c) for c in ref.queries}
        try:
            status, record = judge_row(task, ref, {c: v for c, v in submitted.items() if v})
        except Exception as exc:  # one broken row must not hold up the rows after it
            status, record = verify.crash_record(task, exc)
        db.set_verification(task["id"], status, record)
        decided.append((int(task["id"]), status))
    return decided


# --- where tasks come from and results go ---------------------------------------------------------------------------
class Store(Protocol):
    """A worker's view of a leaderboard: a database file here, or a running Space's admin API."""

    def pending(self, submission_id: int | None = None) -> list[dict[str, Any]]: ...

    def claim(self, item: str, worker: str) -> bool: ...

    def release(self, item: str, worker: str) -> None: ...

    def report(self, submission_id: int, status: str, record: Mapping[str, Any]) -> None:
        """Record a first look's outcome (the store decides what it means: `after_first_look`)."""

    def wanted(self) -> list[RefSpec]: ...

    def settle(self, key: str) -> list[tuple[int, str]]: ...

    def add_reference(self, ref: Reference, explorer: bytes) -> list[tuple[int, str]]: ...


class DatabaseStore:
    """The leaderboard database on this machine; a stored reference run decides its rows here."""

    def __init__(self, db: Database, golds: Any) -> None:
        self.db, self.golds = db, golds

    def pending(self, submission_id: int | None = None) -> list[dict[str, Any]]:
        ids = None if submission_id is None else [submission_id]
        return self.db.verification_tasks(ids=ids, pending_only=ids is None)

    def claim(self, item: str, worker: str) -> bool:
        return self.db.claim(item, worker, LEASE_S)

    def release(self, item: str, worker: str) -> None:
        self.db.release(item, worker)

    def report(self, submission_id: int, status: str, record: Mapping[str, Any]) -> None:
        record_first_look(self.db, submission_id, status, record)

    def wanted(self) -> list[RefSpec]:
        return self.db.wanted_references()

    def settle(self, key: str) -> list[tuple[int, str]]:
        return settle(self.db, key)

    def add_reference(self, ref: Reference, explorer: bytes) -> list[tuple[int, str]]:
        from spaces_app import evaluation

        self.db.store_reference(ref, explorer)
        decided = settle(self.db, ref.spec.key)
        evaluation.make_rows(self.db, self.golds)
        return decided


# --- a worker ---------------------------------------------------------------------------------------------------
class Worker:
    """Decides pending rows of one `Store`: sampled first looks and reference runs (module docstring).

    Args:
        store: where the tasks come from.
        folders: benchmark -> dataset folder (with the images) on this machine.
        golds: the `GoldStore` of those folders (reference runs are read against it).
        device: where models run.
        may_run: which models this worker loads (by spec).
        cache: the embedding cache of its reference runs.
        log: where progress lines go.
    """

    def __init__(
        self,
        store: Store,
        folders: Mapping[str, Path],
        golds: Any,
        *,
        device: str = "cpu",
        may_run: Callable[[str], bool] = lambda spec: True,
        cache: Path,
        log: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
    ) -> None:
        self.store, self.folders, self.golds, self.device = store, dict(folders), golds, device
        self.may_run, self.cache, self.log = may_run, cache, log
        self.name = f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self.stopping = threading.Event()
        self.failed = 0  # rows this worker failed
        self._tried: set[int] = set()  # rows whose first look could not run here
        self._tried_refs: set[str] = set()  # reference runs that could not be made here
        self._models: dict[tuple[str, str | None], Any] = {}

    def decided(self, outcomes: list[tuple[int, str]]) -> int:
        """Count and log rows decided by full checks."""
        for sid, status in outcomes:
            self.failed += status == verify.FAILED
            self.log(f"submission {sid}: {status} (full check against the leaderboard's own run)")
        return len(outcomes)

    # first looks ------------------------------------------------------------------------------------------------
    def first_look(self, task: Mapping[str, Any], *, claim: bool = True) -> bool:
        """Re-encode a row's secret sample (`verify.check`); True when the row was decided by it. ``claim``: take
        the pending row first (an operator's re-check by id does not)."""
        sid = int(task["id"])
        if claim and not self.store.claim(row_item(sid), self.name):
            return False
        try:
            status, record = verify.check(
                task, self.folders, device=self.device, loader=self._load, cancel=self.stopping.is_set
            )
        except verify.Unavailable as exc:
            self._tried.add(sid)
            self.log(f"submission {sid}: left pending ({exc})")
            self.store.release(row_item(sid), self.name)
            return False
        except verify.Cancelled:
            self.store.release(row_item(sid), self.name)
            self.log(f"submission {sid} left pending (shutting down)")
            raise
        except Exception as exc:  # one broken row must not hold up the rows after it
            status, record = verify.crash_record(task, exc)
            self.log(f"submission {sid}: {record['reason']}")
        final = after_first_look(status, record) != verify.PENDING
        self.store.report(sid, status, record)
        self.failed += status == verify.FAILED
        self.log(f"submission {sid}: first look {status}" + ("" if final else ", pending the full check"))
        return final

    def _load(self, spec: str, revision: str | None, device: str) -> Any:
        key = (spec, revision)
        if key not in self._models:
            self._models = {key: verify.load_model(spec, revision, device)}  # keep one model in memory
        return self._models[key]

    # reference runs -------------------------------------------------------------------------------------------
    def serves(self, spec: RefSpec) -> bool:
        """Whether this worker holds the gold the reference run is for, and may load its model."""
        if spec.key in self._tried_refs or not self.may_run(spec.spec) or spec.benchmark not in self.folders:
            return False
        try:
            return bool(self.golds.get(spec.benchmark).content == spec.gold_content)
        except TriadError:
            return False

    def make_reference(self, spec: RefSpec) -> tuple[Reference, bytes]:
        """Run the model in a child process (its claim renewed meanwhile) and read the run (`reference_run`)."""
        self._models.clear()  # the child loads the model: do not hold a second copy here
        out = Path(tempfile.mkdtemp(prefix="triad-reference-"))
        renewed = [time.monotonic()]

        def cancel() -> bool:
            if time.monotonic() - renewed[0] > RENEW_S:
                renewed[0] = time.monotonic()
                self.store.claim(reference_item(spec.key), self.name)
            return self.stopping.is_set()

        try:
            folder = self.folders[spec.benchmark]
            run = reference_run.run_child(
                spec, folder, out / "run", cache_dir=self.cache, device=self.device, cancel=cancel
            )
            return reference_run.ingest(self.golds, spec, run)
        finally:
            shutil.rmtree(out, ignore_errors=True)

    def reference(self, spec: RefSpec, tasks: list[dict[str, Any]]) -> int:
        """First looks at ``tasks`` (the pending rows naming ``spec``), then its reference run; rows decided."""
        item = reference_item(spec.key)
        if not self.store.claim(item, self.name):
            return 0
        decided = 0
        try:
            for task in tasks:
                if self.stopping.is_set():
                    raise reference_run.Cancelled("the worker is shutting down")
                self.store.claim(item, self.name)  # renewed: the first looks may outlast a lease
                if int(task["id"]) not in self._tried and (task.get("verify") or {}).get("sample"):
                    decided += self.first_look(task)
            self.log(f"reference run of {spec.spec} on {spec.benchmark.upper()}: started")
            ref, explorer = self.make_reference(spec)
            self.log(f"reference run of {spec.spec}: {ref.meta.get('cpu_seconds')} CPU s, stored")
            decided += self.decided(self.store.add_reference(ref, explorer))
        except (reference_run.Cancelled, verify.Cancelled):
            self.log(f"reference run of {spec.spec}: left for the next start (shutting down)")
            raise
        except TriadError as exc:
            self._tried_refs.add(spec.key)
            self.log(f"reference run of {spec.spec}: not made here ({exc})")
        finally:
            self.store.release(item, self.name)
        return decided

    def run_once(self, submission_id: int | None = None) -> int:
        """One pass over the store: rows whose reference run is made are judged, then every reference run this
        worker may make, with first looks at the rows naming it; with ``submission_id``, that row's first look (a
        re-check) and its reference run only. Returns how many rows were decided."""
        decided = 0
        if submission_id is not None:
            for task in self.store.pending(submission_id):
                decided += bool((task.get("verify") or {}).get("sample")) and self.first_look(task, claim=False)
        tasks = self.store.pending(submission_id)
        keys = {_key(t) for t in tasks} - {""}
        for key in sorted(keys):
            decided += self.decided(self.store.settle(key))
        for spec in self.store.wanted():
            if self.stopping.is_set():
                break
            if (submission_id is None or spec.key in keys) and self.serves(spec):
                rows = [t for t in self.store.pending() if _key(t) == spec.key] if submission_id is None else []
                decided += self.reference(spec, rows)
        return decided


def _key(task: Mapping[str, Any]) -> str:
    """The reference run a pending row names ("" for none)."""
    return str((task.get("verify") or {}).get("reference") or "")


class VerifyQueue(threading.Thread):
    """The Space's own worker on its CPU, in the background; `notify` after a submission, `shutdown` to end.

    A reference run still running at shutdown is stopped (its child process ends; the cache keeps what it
    encoded) and a first look is abandoned before its next encoder call; their rows stay pending."""

    def __init__(self, db: Database, folders: Mapping[str, Path], device: str = "cpu", golds: Any = None) -> None:
        super().__init__(name="verify-queue", daemon=True)
        from spaces_app.gold import GoldStore

        self.db = db
        golds = golds if golds is not None else GoldStore(dict(folders))
        self.worker = Worker(
            DatabaseStore(db, golds), folders, golds, device=device, may_run=runs_here, cache=cache_dir(db.path)
        )
        self.worker.log = lambda line: print(f"verify queue: {line}", file=sys.stderr)
        self._wake = threading.Event()
        self.busy = threading.Lock()

    @property
    def _models(self) -> dict[tuple[str, str | None], Any]:
        return self.worker._models

    def notify(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        """Take no new check and abandon the running one (returns at once)."""
        self.worker.stopping.set()
        self._wake.set()

    def shutdown(self, timeout: float = JOIN_S) -> bool:
        """`stop`, then wait up to ``timeout`` seconds for the thread to end; True when it has ended."""
        self.stop()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout)
        return not self.is_alive()

    def run(self) -> None:
        try:
            while not self.worker.stopping.is_set():
                self._wake.clear()
                try:
                    self.run_once()
                except (verify.Cancelled, reference_run.Cancelled):
                    break
                except Exception as exc:  # the queue must outlive a bad check; the row stays pending
                    print(f"verify queue: {type(exc).__name__}: {exc}", file=sys.stderr)
                self._wake.wait(POLL_S)
        finally:
            self.worker._models.clear()  # the model is released by this thread, before the interpreter exits

    def run_once(self) -> int:
        """Judge the rows whose reference run is made, make the rows requested, then one worker pass; returns how
        many rows were decided."""
        from spaces_app import evaluation

        with self.busy:
            evaluation.make_rows(self.db, self.worker.golds)
            try:
                return self.worker.run_once()
            except (verify.Cancelled, reference_run.Cancelled) as exc:
                print(f"verify queue: left pending ({exc})", file=sys.stderr)
                raise
