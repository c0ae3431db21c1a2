"""The leaderboard database: concurrent submissions, restarts, moderation, schema guard."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from spaces_app import testing as T
from spaces_app.db import Database, DuplicateSubmission, NewSubmission, ScoreRow
from spaces_app.gold import GoldStore
from spaces_app.submit import RateLimit, submit_files
from triad_dataset.contract import names as n

N_PARALLEL = 20


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("space_db")
    tables = T.triad_tables(3, 8, seed=7, configs=n.MAIN_CONFIGS)
    T.write_triad_gold(root / "triad", tables, 8)
    dirs = [T.write_run(root / f"run{i}", tables, T.random_rankings(tables, seed=1000 + i)) for i in range(N_PARALLEL)]
    return {"root": root, "dirs": dirs}


def files(run: Path) -> list[Path]:
    return sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"]


def test_parallel_submissions_are_all_stored(runs: dict, tmp_path: Path) -> None:
    db = Database(tmp_path / "space.sqlite")
    golds = GoldStore({"triad": runs["root"] / "triad"})
    golds.get("triad")
    outcomes: list = [None] * N_PARALLEL
    barrier = threading.Barrier(N_PARALLEL)

    def worker(i: int) -> None:
        barrier.wait()
        outcomes[i] = submit_files(db, golds, files(runs["dirs"][i]), model_name=f"model {i}",
                                   submitter=f"user{i}", rate_limit=RateLimit(5, 60))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(N_PARALLEL)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(o.accepted for o in outcomes), [o.message for o in outcomes if not o.accepted]
    ids = sorted(o.submission_id for o in outcomes)
    assert ids == list(range(1, N_PARALLEL + 1))
    subs = db.submissions("triad")
    assert sorted(s["model_name"] for s in subs) == sorted(f"model {i}" for i in range(N_PARALLEL))
    assert db.counts() == {"submissions": N_PARALLEL, "scores": N_PARALLEL * 6, "query_scores": N_PARALLEL * 6 * 3,
                           "attempts": N_PARALLEL}
    assert all(len(s["scores"]) == 6 for s in subs)
    assert db.integrity_ok()
    with sqlite3.connect(tmp_path / "space.sqlite") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_parallel_duplicates_store_exactly_one(runs: dict, tmp_path: Path) -> None:
    db = Database(tmp_path / "space.sqlite")
    golds = GoldStore({"triad": runs["root"] / "triad"})
    outcomes: list = [None] * 6
    barrier = threading.Barrier(6)

    def worker(i: int) -> None:
        barrier.wait()
        outcomes[i] = submit_files(db, golds, files(runs["dirs"][0]), model_name=f"copy {i}", submitter=f"u{i}",
                                   rate_limit=RateLimit(5, 60))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(o.accepted for o in outcomes) == 1
    assert all("already submitted as submission id 1" in o.message for o in outcomes if not o.accepted)
    assert db.counts()["submissions"] == 1 and db.integrity_ok()


def _record(digest: str, name: str = "m") -> NewSubmission:
    return NewSubmission("triad", name, "", "f", None, "s", "fp", digest, {"x": 1}, [],
                         [ScoreRow(n.MAIN_CONFIGS[0], "map", 0.25, 0.1, 0.4, 2)], {n.MAIN_CONFIGS[0]: {"q1": 0.5}})


def test_restart_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "space.sqlite"
    first = Database(path)
    sid = first.insert(_record("d1", "kept"))
    first.set_hidden(first.insert(_record("d2", "hidden")), True)
    del first
    again = Database(path)  # a new process would do exactly this
    visible = again.submissions("triad")
    assert [(s["id"], s["model_name"]) for s in visible] == [(sid, "kept")]
    assert visible[0]["scores"][n.MAIN_CONFIGS[0]] == ScoreRow(n.MAIN_CONFIGS[0], "map", 0.25, 0.1, 0.4, 2)
    assert again.query_scores(sid, n.MAIN_CONFIGS[0]) == {"q1": 0.5}
    assert len(again.submissions("triad", include_hidden=True)) == 2
    with pytest.raises(DuplicateSubmission):
        again.insert(_record("d1"))


def test_moderation_hide_and_delete(tmp_path: Path) -> None:
    db = Database(tmp_path / "space.sqlite")
    sid = db.insert(_record("d1"))
    assert db.set_hidden(sid, True) and db.submissions() == []
    assert db.set_hidden(sid, False) and len(db.submissions()) == 1
    assert db.delete(sid) and not db.delete(sid) and not db.set_hidden(sid, True)
    assert db.counts() == {"submissions": 0, "scores": 0, "query_scores": 0, "attempts": 0}  # cascade
    db.insert(_record("d1"))  # deleted rankings may be submitted again


def test_fingerprint_filter_and_schema_guard(tmp_path: Path) -> None:
    path = tmp_path / "space.sqlite"
    db = Database(path)
    db.insert(_record("d1"))
    assert len(db.submissions("triad", fingerprint="fp")) == 1
    assert db.submissions("triad", fingerprint="other") == []
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(ValueError, match="schema version '99', this code expects '3'"):
        Database(path)


def test_admin_actions_need_the_token(tmp_path: Path) -> None:
    from spaces_app import moderation

    db = Database(tmp_path / "space.sqlite")
    sid = db.insert(_record("d1"))
    assert moderation.apply(db, None, "x", sid, "delete") == (
        "Admin actions are disabled: TRIAD_SPACE_ADMIN_TOKEN is not set.")
    assert moderation.apply(db, "secret", "guess", sid, "delete") == "Wrong admin token."
    assert moderation.apply(db, "secret", "", sid, "delete") == "Wrong admin token."
    assert len(db.submissions()) == 1
    assert moderation.apply(db, "secret", "secret", sid, "hide") == f"Submission id {sid}: hide done."
    assert db.submissions() == []
    assert moderation.apply(db, "secret", "secret", float(sid), "unhide") == f"Submission id {sid}: unhide done."
    assert moderation.apply(db, "secret", "secret", "x", "hide") == "Give a submission id."
    assert moderation.apply(db, "secret", "secret", sid, "drop") == "Unknown action 'drop'; one of hide, unhide, delete."
    assert moderation.apply(db, "secret", "secret", sid, "delete") == f"Submission id {sid}: delete done."
    assert moderation.apply(db, "secret", "secret", sid, "delete") == f"Submission id {sid} does not exist."


def test_mirror_status_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    from spaces_app import mirror

    monkeypatch.delenv("TRIAD_SPACE_HUB_REPO", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert mirror.status().startswith("Hub mirroring: off (HF_HUB_OFFLINE is set)")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    assert mirror.status().startswith("Hub mirroring: off (TRIAD_SPACE_HUB_REPO and HF_TOKEN not configured)")
    monkeypatch.setenv("TRIAD_SPACE_HUB_REPO", "org/results")
    assert "HF_TOKEN not configured" in mirror.status()


def test_revision_changes_with_every_change_to_the_submissions(tmp_path: Path) -> None:
    db = Database(tmp_path / "space.sqlite")
    seen = [db.revision()]
    sid = db.insert(_record("d1"))
    seen.append(db.revision())
    db.record_attempt("someone", accepted=False)  # attempts do not change what is shown
    assert db.revision() == seen[-1]
    db.set_hidden(sid, True)
    seen.append(db.revision())
    db.set_hidden(sid, False)
    seen.append(db.revision())
    db.delete(sid)
    seen.append(db.revision())
    assert seen == [0, 1, 2, 3, 4]
    with pytest.raises(DuplicateSubmission):
        db.insert(_record("d0")) and db.insert(_record("d0"))
    assert db.revision() == 5  # the failed insert rolled back, its bump too
