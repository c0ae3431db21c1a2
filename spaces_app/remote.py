"""Where `triad space verify` reads its work and posts its results: a leaderboard database file on this machine,
or a running Space through its admin-token API (`/verify_tasks`, `/verify_report`), so the check can run on any
machine that has the model (a GPU worker, a maintainer's box)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spaces_app import verify
from triad_dataset.contract.errors import TriadError


class Checker:
    """Runs the reproduction check of each task it is given and reports it where the tasks came from."""

    def __init__(self) -> None:
        self._models: dict[tuple[str, str | None], Any] = {}

    def tasks(self, submission_id: int | None) -> list[dict[str, Any]]:
        raise NotImplementedError

    def report(self, submission_id: int, status: str, record: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def _load(self, spec: str, revision: str | None, device: str) -> Any:
        key = (spec, revision)
        if key not in self._models:
            self._models = {key: verify.load_model(spec, revision, device)}
        return self._models[key]

    def run(self, submission_id: int | None, folders: Mapping[str, str | Path], device: str) -> int:
        """Check the submission (or every pending one); exit status 1 when any failed."""
        tasks = self.tasks(submission_id)
        if submission_id is not None and not tasks:
            raise TriadError(f"no submission with id {submission_id}")
        if not tasks:
            print("no pending submissions")
            return 0
        failed = 0
        for task in tasks:
            sid = task["id"]
            reason = (task.get("verify") or {}).get("reason")
            if not (task.get("verify") or {}).get("sample"):
                print(f"submission {sid} ({task.get('model_name')}): not checkable ({reason or 'no sample'})")
                continue
            print(
                f"submission {sid} ({task.get('model_name')}): re-encoding with {task['verify'].get('spec')} "
                f"on {device}",
                file=sys.stderr,
            )
            try:
                status, record = verify.check(
                    task, folders, device=device, loader=self._load, log=lambda m: print(m, file=sys.stderr)
                )
            except verify.Unavailable as exc:
                print(f"submission {sid}: left pending ({exc})")
                continue
            except Exception as exc:  # one broken row must not hold up the rows after it
                status, record = verify.crash_record(task, exc)
            self.report(sid, status, record)
            result = record.get("result")
            if result is None:
                print(f"submission {sid}: {status} ({record.get('reason')})")
            else:
                print(
                    f"submission {sid}: {status} ({result['queries']} queries, {result['pairs']} pairs compared, "
                    f"{result['disagreeing']} disagreeing, {result['within_tolerance']} within "
                    f"{verify.TOLERANCE:g})"
                )
            failed += status == verify.FAILED
        return 1 if failed else 0


class DatabaseChecker(Checker):
    def __init__(self, path: str | Path) -> None:
        super().__init__()
        from spaces_app.db import Database

        if not Path(path).is_file():
            raise TriadError(f"{path}: no leaderboard database (give --db, or --url and --token)")
        self.db = Database(path)

    def tasks(self, submission_id: int | None) -> list[dict[str, Any]]:
        ids = None if submission_id is None else [submission_id]
        return self.db.verification_tasks(ids=ids, pending_only=ids is None)

    def report(self, submission_id: int, status: str, record: Mapping[str, Any]) -> None:
        self.db.set_verification(submission_id, status, record)


class SpaceChecker(Checker):
    def __init__(self, url: str, token: str | None) -> None:
        super().__init__()
        if not token:
            raise TriadError("--url needs the admin token (--token or TRIAD_SPACE_ADMIN_TOKEN)")
        from gradio_client import Client

        self.client, self.token = Client(url, verbose=False), token

    def tasks(self, submission_id: int | None) -> list[dict[str, Any]]:
        return list(self.client.predict(self.token, submission_id, api_name="/verify_tasks"))

    def report(self, submission_id: int, status: str, record: Mapping[str, Any]) -> None:
        self.client.predict(self.token, submission_id, status, json.dumps(record), api_name="/verify_report")


def checker(*, db: str | Path | None, url: str | None, token: str | None) -> Checker:
    return SpaceChecker(url, token) if url else DatabaseChecker(db or "")
