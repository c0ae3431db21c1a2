"""The leaderboard database: concurrent submissions, restarts, moderation, schema guard."""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from spaces_app.db import Database, DuplicateSubmission, NewSubmission, ScoreRow
from spaces_app.gold import GoldStore
from spaces_app.submit import RateLimit, submit_files
from tests.doubles import space_runs as testing
from triad_dataset.contract import names as n

N_PARALLEL = 20


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("space_db")
    tables = testing.triad_tables(3, 8, seed=7, configs=n.MAIN_CONFIGS)
    testing.write_triad_gold(root / "triad", tables, 8)
    dirs = [
        testing.write_run(root / f"run{i}", tables, testing.random_rankings(tables, seed=1000 + i))
        for i in range(N_PARALLEL)
    ]
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
        outcomes[i] = submit_files(
            db,
            golds,
            files(runs["dirs"][i]),
            model_name=f"model {i}",
            submitter=f"user{i}",
            rate_limit=RateLimit(5, 60),
        )

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
    assert db.counts() == {
        "submissions": N_PARALLEL,
        "scores": N_PARALLEL * 6,
        "query_scores": N_PARALLEL * 6 * 3,
        "attempts": N_PARALLEL,
    }
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
        outcomes[i] = submit_files(
            db, golds, files(runs["dirs"][0]), model_name=f"copy {i}", submitter=f"u{i}", rate_limit=RateLimit(5, 60)
        )

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(o.accepted for o in outcomes) == 1
    assert all("already submitted as submission id 1" in o.message for o in outcomes if not o.accepted)
    assert db.counts()["submissions"] == 1 and db.integrity_ok()


def _record(digest: str, name: str = "m") -> NewSubmission:
    return NewSubmission(
        "triad",
        name,
        "",
        "f",
        None,
        "s",
        "fp",
        digest,
        {"x": 1},
        [],
        [ScoreRow(n.MAIN_CONFIGS[0], "map", 0.25, 0.1, 0.4, 2)],
        {n.MAIN_CONFIGS[0]: {"q1": 0.5}},
    )


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
        "Admin actions are disabled: TRIAD_SPACE_ADMIN_TOKEN is not set."
    )
    assert moderation.apply(db, "secret", "guess", sid, "delete") == "Wrong admin token."
    assert moderation.apply(db, "secret", "", sid, "delete") == "Wrong admin token."
    assert len(db.submissions()) == 1
    assert moderation.apply(db, "secret", "secret", sid, "hide") == f"Submission id {sid}: hide done."
    assert db.submissions() == []
    assert moderation.apply(db, "secret", "secret", float(sid), "unhide") == f"Submission id {sid}: unhide done."
    assert moderation.apply(db, "secret", "secret", "x", "hide") == "Give a submission id."
    assert (
        moderation.apply(db, "secret", "secret", sid, "drop") == "Unknown action 'drop'; one of hide, unhide, delete."
    )
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


# the schema-2 tables as the previous release created them (spaces_app/db.py before the trust review)
SCHEMA_2 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    benchmark TEXT NOT NULL CHECK (benchmark IN ('triad', 'ark')),
    model_name TEXT NOT NULL,
    model_link TEXT NOT NULL,
    family TEXT NOT NULL,
    params INTEGER,
    submitter TEXT NOT NULL,
    created_at REAL NOT NULL,
    dataset_fingerprint TEXT NOT NULL,
    file_digest TEXT NOT NULL,
    hidden INTEGER NOT NULL DEFAULT 0 CHECK (hidden IN (0, 1)),
    summary_json TEXT NOT NULL,
    mismatches_json TEXT NOT NULL,
    run_json TEXT NOT NULL DEFAULT '{}',
    UNIQUE (benchmark, file_digest)
);
CREATE TABLE IF NOT EXISTS scores (
    submission_id INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    config TEXT NOT NULL,
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    lo REAL,
    hi REAL,
    n_queries INTEGER NOT NULL,
    PRIMARY KEY (submission_id, config)
);
CREATE TABLE IF NOT EXISTS query_scores (
    submission_id INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    config TEXT NOT NULL,
    query_id TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (submission_id, config, query_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS attempts (
    submitter TEXT NOT NULL,
    at REAL NOT NULL,
    accepted INTEGER NOT NULL,
    action TEXT NOT NULL DEFAULT 'submit'
);
CREATE INDEX IF NOT EXISTS attempts_by_submitter ON attempts (submitter, at);
"""


def test_a_schema_2_database_is_migrated_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA_2)
        conn.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?)",
            [("schema_version", "2"), ("revision", "3"), ("id_secret", "ab" * 32)],
        )
        for sid, name, who in ((1, "minilm", "demo"), (2, "My Model", "cli"), (3, "my model", "ip:0123456789abcdef")):
            conn.execute(
                "INSERT INTO submissions (id, benchmark, model_name, model_link, family, params, submitter,"
                " created_at, dataset_fingerprint, file_digest, hidden, summary_json, mismatches_json) VALUES"
                " (?, 'triad', ?, '', 'f', NULL, ?, 1.0, 'fp', ?, 0, '{}', '[]')",
                (sid, name, who, f"d{sid}"),
            )
            conn.execute("INSERT INTO scores VALUES (?, ?, 'map', 0.5, NULL, NULL, 2)", (sid, n.MAIN_CONFIGS[0]))
    db = Database(path)
    subs = db.submissions(include_hidden=True)
    assert [(s["id"], s["status"], s["gold_content"]) for s in subs] == [(i, "unverified", "fp") for i in (1, 2, 3)]
    assert db.counts()["scores"] == 3 and db.integrity_ok()  # the rebuild did not cascade into the scores
    from spaces_app.names import name_key

    assert db.name_owner(name_key("MY MODEL")) == "local"  # "cli" and "demo" are the local owner now
    assert db.revision() == 3 and db.secret() == bytes.fromhex("ab" * 32)
    with pytest.raises(DuplicateSubmission):
        db.insert(NewSubmission("triad", "m", "", "f", None, "s", "fp", "d1", {}, [], [], {}))


def _old_key(name: str) -> str:
    """A name key as stored before case folding came first (skeleton, then case folded)."""
    from spaces_app import names

    return " ".join(names._fold_key(names.clean_name(name)).split())


def test_name_keys_stored_the_old_way_are_recomputed_on_open(tmp_path: Path) -> None:
    from spaces_app.names import name_key

    path = tmp_path / "keys.sqlite"
    db = Database(path)
    claims = (("Fish", "hf:alice"), ("flsh", "hf:bob"), ("minilm", None), ("My Model", "hf:carol"))
    for i, (name, owner) in enumerate(claims):
        row = NewSubmission("triad", name, "", "f", None, owner or "s", "fp", f"d{i}", {}, [], [], {})
        db.insert(replace(row, name_key=_old_key(name), name_owner=owner, created_at=float(i)))
    with sqlite3.connect(path) as conn:  # a file written before the keys were recomputed on open
        conn.execute("DELETE FROM meta WHERE key = 'name_keys'")
    assert _old_key("Fish") != name_key("Fish") == name_key("FISH") == _old_key("flsh")
    assert Database(path).name_owner(name_key("FISH")) == "hf:alice"  # the first claim keeps the shared key
    assert Database(path).name_owner(name_key("MY MODEL")) == "hf:carol"
    with sqlite3.connect(path) as conn:
        stored = dict(conn.execute("SELECT model_name, name_key FROM submissions").fetchall())
        keys = {k for (k,) in conn.execute("SELECT name_key FROM names")}
        version = conn.execute("SELECT value FROM meta WHERE key = 'name_keys'").fetchone()[0]
    assert stored == {name: name_key(name) for name, _ in claims}
    assert keys == {name_key("Fish"), name_key("My Model")} and _old_key("Fish") not in keys
    from spaces_app.names import KEY_VERSION

    assert version == KEY_VERSION
