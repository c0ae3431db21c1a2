"""A storage failure is said as one ("disk I/O error" included), and a row whose reproduction check failed (hidden
from the default view) is never named in a duplicate's refusal."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from spaces_app import submit, verify
from spaces_app.db import Database
from spaces_app.gold import GoldStore
from tests.doubles import space_runs as testing
from triad_dataset.contract import names as n

POOL = 10


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("space_storage")
    tables = testing.triad_tables(4, POOL, seed=33, configs=n.MAIN_CONFIGS)
    testing.write_triad_gold(root / "triad", tables, POOL)
    run = testing.write_run(root / "run", tables, testing.random_rankings(tables, seed=44))
    return {"golds": GoldStore({"triad": root / "triad"}), "run": run}


def send(db: Database, world: dict, name: str) -> submit.Outcome:
    run = world["run"]
    paths = sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"]
    return submit.submit_files(
        db, world["golds"], paths, model_name=name, submitter="hf:alice", rate_limit=submit.RateLimit(1000, 3600)
    )


@pytest.mark.parametrize(
    "error",
    [
        sqlite3.OperationalError("disk I/O error"),
        sqlite3.OperationalError("attempt to write a readonly database"),
        OSError(5, "Input/output error"),
    ],
)
def test_storage_failures_are_reported_as_such(
    world: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    def failing(*args: object) -> submit.Outcome:
        raise error

    monkeypatch.setattr(submit, "_submit", failing)
    out = send(Database(tmp_path / "db.sqlite"), world, "model")
    assert (out.accepted, out.message) == (
        False,
        "Rejected: the server's storage failed (full or unwritable); "
        "nothing could be written (please report this). Nothing was stored.",
    )


def test_a_failed_row_is_not_named_in_a_duplicate_refusal(world: dict, tmp_path: Path) -> None:
    db = Database(tmp_path / "db.sqlite")
    first = send(db, world, "secret-name")
    assert first.accepted, first.message
    again = send(db, world, "other")
    assert "secret-name" in again.message  # a public row is named ...
    db.set_verification(first.submission_id, verify.FAILED, {"result": {}})
    again = send(db, world, "other")
    assert not again.accepted and "secret-name" not in again.message  # ... a failed one never
    assert "these rankings were already submitted as an earlier submission that is not public" in again.message
