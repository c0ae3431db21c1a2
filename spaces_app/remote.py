"""Where `triad space verify` reads its work and posts its results: a leaderboard database file on this machine,
or a running Space through its admin-token API (`/verify_tasks`, `/verify_report`, `/reference_tasks`,
`/reference_claim`, `/reference_report`), so first looks and reference runs can be made on any machine that has the
model (a GPU worker, a maintainer's box)."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spaces_app import verify, worker
from spaces_app.reference import Reference, RefSpec
from triad_dataset.contract.errors import TriadError


class SpaceStore:
    """A running Space's admin-token API as a worker's `worker.Store`; the Space judges the rows itself once it
    holds a reference run."""

    def __init__(self, url: str, token: str | None) -> None:
        if not token:
            raise TriadError("--url needs the admin token (--token or TRIAD_SPACE_ADMIN_TOKEN)")
        from gradio_client import Client

        self.client, self.token = Client(url, verbose=False), token

    def pending(self, submission_id: int | None = None) -> list[dict[str, Any]]:
        return list(self.client.predict(self.token, submission_id, api_name="/verify_tasks"))

    def claim(self, item: str, worker_name: str) -> bool:
        return bool(self.client.predict(self.token, item, worker_name, "claim", api_name="/verify_claim"))

    def release(self, item: str, worker_name: str) -> None:
        self.client.predict(self.token, item, worker_name, "release", api_name="/verify_claim")

    def report(self, submission_id: int, status: str, record: Mapping[str, Any]) -> None:
        self.client.predict(self.token, submission_id, status, json.dumps(record), api_name="/verify_report")

    def wanted(self) -> list[RefSpec]:
        return [RefSpec.from_json(s) for s in self.client.predict(self.token, api_name="/reference_tasks")]

    def settle(self, key: str) -> list[tuple[int, str]]:
        return []  # the Space's own queue judges the rows of a made reference run

    def add_reference(self, ref: Reference, explorer: bytes) -> list[tuple[int, str]]:
        answer = self.client.predict(
            self.token,
            json.dumps(ref.to_json()),
            base64.b64encode(explorer).decode(),
            api_name="/reference_report",
        )
        return [(int(sid), str(status)) for sid, status in json.loads(answer)]


def store(*, db: str | Path | None, url: str | None, token: str | None, golds: Any) -> worker.Store:
    """The database file or the Space a verifier works for."""
    if url:
        return SpaceStore(url, token)
    from spaces_app.db import Database

    if not db or not Path(db).is_file():
        raise TriadError(f"{db}: no leaderboard database (give --db, or --url and --token)")
    return worker.DatabaseStore(Database(db), golds)


def run(
    source: worker.Store,
    folders: Mapping[str, Path],
    golds: Any,
    submission_id: int | None,
    device: str,
    cache: Path,
) -> int:
    """`triad space verify`: first looks and reference runs for ``source``; exit status 1 when a row failed."""
    tasks = source.pending(submission_id)
    if submission_id is not None and not tasks:
        raise TriadError(f"no submission with id {submission_id}")
    wanted = source.wanted()
    if not tasks and not wanted:
        print("no pending submissions")
        return 0
    for task in tasks:
        if not (task.get("verify") or {}).get("sample") and not (task.get("verify") or {}).get("reference"):
            reason = (task.get("verify") or {}).get("reason") or "no sample"
            print(f"submission {task['id']} ({task.get('model_name')}): not checkable ({reason})")
    checker = worker.Worker(source, folders, golds, device=device, cache=cache)
    checker.run_once(submission_id)
    left = [t for t in source.pending(submission_id) if t.get("status") == verify.PENDING]
    for task in left:
        print(f"submission {task['id']}: left pending")
    return 1 if checker.failed else 0


def cache_for(db: str | Path | None) -> Path:
    """Where a verifier keeps its reference runs' embeddings: TRIAD_SPACE_CACHE, beside ``db``, else `triad run`'s
    own cache (TRIAD_CACHE, ~/.cache/triad/embeddings)."""
    if db or os.environ.get("TRIAD_SPACE_CACHE"):
        return worker.cache_dir(db or ".")
    from model_adapters.run.config import default_cache_dir

    return Path(default_cache_dir())
