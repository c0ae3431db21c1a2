"""The smaller findings of the attack on the whole-pool check, each answered: registry models' real Hub ids are
reserved names; every error a client gets is one line; a megabyte query id is cut; a database that cannot be
opened is one line and exit 2 at submit and at start; an explorer file that cannot be stored is said on its row;
a pending row or reference run is claimed by one checker at a time; `triad report` names a malformed field."""

from __future__ import annotations

import html as html_mod
import json
import sqlite3
import threading
from pathlib import Path

import pytest

from spaces_app import answers, explore_store, explorer_tab, names, worker
from spaces_app.board import Leaderboard
from spaces_app.db import Database, StorageError
from spaces_app.db_references import reference_item, row_item
from spaces_app.gold import GoldStore
from spaces_app.settings import Settings
from spaces_app.submit import RateLimit, submit_files
from tests.doubles import space_runs as testing
from tests.space_refusals import rejected
from triad_dataset.contract import names as n

POOL = 8


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("space_hardening")
    tables = testing.triad_tables(4, POOL, seed=91, configs=n.MAIN_CONFIGS)
    testing.write_triad_gold(root / "triad", tables, POOL)
    runs = [testing.write_run(root / f"run{i}", tables, testing.random_rankings(tables, seed=92 + i)) for i in range(3)]
    return {"root": root, "tables": tables, "runs": runs, "golds": GoldStore({"triad": root / "triad"})}


def files(run: Path) -> list[Path]:
    return sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"]


def submit(db: Database, world: dict, i: int, name: str = "model", who: str = "hf:alice"):
    return submit_files(
        db, world["golds"], files(world["runs"][i]), model_name=name, submitter=who, rate_limit=RateLimit(99, 9)
    )


@pytest.mark.parametrize(
    "name",
    [
        "all-MiniLM-L6-v2",
        "sentence-transformers/all-MiniLM-L6-v2",
        "ALL-MINILM-L6-V2",
        "Sentence-Transformers/All-MiniLM-L6-v2",
    ],
)
def test_a_registry_models_real_hub_ids_are_reserved(world: dict, tmp_path: Path, name: str) -> None:
    db = Database(tmp_path / "space.sqlite")
    assert names.registry_model(name) == "minilm"
    rejected(db, submit(db, world, 0, name), "stands for the registry model 'minilm'")


def test_gradios_own_errors_become_one_named_line() -> None:
    from gradio.exceptions import Error, InvalidPathError

    assert answers.one_line(InvalidPathError("Cannot move /etc/passwd to the gradio cache dir")) == (
        "a file this server did not receive as an upload was named; upload it first (gradio_client.handle_file)"
    )
    assert answers.one_line(Error("Value: " + "1" * 10**6 + " is not in the list of choices: []")).endswith("…")
    assert len(answers.one_line(Error("x" * 10**6))) == answers.MAX_ERROR
    assert answers.one_line(RuntimeError("/srv/space.sqlite: locked")) == (
        "the server could not process this request (RuntimeError)"
    )
    payload = answers.error_payload(None, False)
    assert payload["error"] and payload["visible"]  # never {"error": null}


def test_the_explorer_cuts_a_megabyte_query_id_and_takes_any_top_k(world: dict, tmp_path: Path) -> None:
    root = world["root"]
    lb = Leaderboard(Settings(root / "triad", root / "no-ark", tmp_path / "s.sqlite", None, 0, "127.0.0.1"))
    sid = submit(lb.db, world, 0).submission_id
    html = explorer_tab.render(lb, "triad", sid, None, n.MAIN_CONFIGS[0], "by query id", "q" * 10**6)
    assert "(1000000 characters)" in html and len(html) < 500
    for k in (None, float("nan"), "ten", -3, 10**9):
        assert explorer_tab.top_k(k) in range(1, explore_store.TOP_STORED + 1)
    assert explorer_tab.render(lb, "triad", sid, None, n.MAIN_CONFIGS[0], "worst AP", "", None).startswith("<style>")


def test_an_explorer_file_that_cannot_be_stored_is_said_on_its_row(
    world: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = world["root"]
    lb = Leaderboard(Settings(root / "triad", root / "no-ark", tmp_path / "s.sqlite", None, 0, "127.0.0.1"))
    # a full disk before the commit: a clean refusal, nothing stored (the file is written before the row)
    full = OSError(28, "No space left on device")
    monkeypatch.setattr(explore_store.pq, "write_table", lambda *a, **k: (_ for _ in ()).throw(full))
    rejected(lb.db, submit(lb.db, world, 0), "the server's storage is full")
    assert not explore_store.directory(lb.db.path).exists() or not any(explore_store.directory(lb.db.path).iterdir())
    monkeypatch.undo()
    # the rename after the commit failing twice: the row stays (an acceptance) and says so
    tries = []
    monkeypatch.setattr(explore_store, "commit", lambda *a: tries.append(1) or (_ for _ in ()).throw(OSError(5, "EIO")))
    out = submit(lb.db, world, 1)
    assert out.accepted and len(tries) == 2, out.message
    row = lb.db.submissions()[0]
    assert row["run"][explore_store.NOT_STORED] == "not stored: the server's storage failed"
    html = explorer_tab.render(lb, "triad", out.submission_id, None, n.MAIN_CONFIGS[0], "worst AP")
    assert "its explorer file was not stored: the server's storage failed" in html_mod.unescape(html)
    assert not list(explore_store.directory(lb.db.path).glob(".staged-*"))  # no staged file left behind


class _FailingPragma:
    """A connection whose `PRAGMA journal_mode` fails as a full disk under WAL does."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, *args):
        if sql.startswith("PRAGMA journal_mode"):
            raise sqlite3.OperationalError("disk I/O error")
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str):
        return getattr(self._conn, name)


@pytest.mark.parametrize("broken", ["malformed", "disk I/O error"])
def test_a_database_that_cannot_be_opened_is_one_line_and_exit_2(
    world: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, broken: str
) -> None:
    from triad_cli.main import main

    db = tmp_path / "space.sqlite"
    if broken == "malformed":
        db.write_bytes(b"this is not an SQLite file" * 100)
        said = "not a readable leaderboard database (file is not a database); move it away"
    else:
        Database(db)
        real = sqlite3.connect
        monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: _FailingPragma(real(*a, **k)))
        said = "the storage failed, full or unwritable (disk I/O error)"
    with pytest.raises(StorageError, match="storage failed|not a readable"):
        Database(db)
    args = ["space", "--data", str(world["root"] / "triad"), "--db", str(db)]
    capsys.readouterr()
    assert main([*args, "--submit", str(world["runs"][0]), "--model-name", "m"]) == 2  # at submit
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1 and "Traceback" not in err, err
    monkeypatch.setenv("TRIAD_SPACE_DATA", str(world["root"] / "triad"))
    monkeypatch.setenv("TRIAD_SPACE_DB", str(db))
    from spaces_app import app

    assert app.main() == 2  # at start, before anything is served
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err, err


def test_a_pending_row_is_claimed_by_one_checker_at_a_time(world: dict, tmp_path: Path) -> None:
    db = Database(tmp_path / "space.sqlite")
    results = json.loads((world["runs"][2] / "results.json").read_text())
    results["model"] = {"name": "tiny-random-clip", "source_kind": "registry", "revision": "seed0"}
    (world["root"] / "claimed").mkdir(exist_ok=True)
    run = world["root"] / "claimed" / "run"
    if not run.exists():
        import shutil

        shutil.copytree(world["runs"][2], run)
        (run / "results.json").write_text(json.dumps(results))
    out = submit_files(
        db, world["golds"], files(run), model_name="claimed", submitter="hf:a", rate_limit=RateLimit(9, 9)
    )
    assert out.accepted and db.submissions()[0]["status"] == "pending", out.message
    item = row_item(out.submission_id)
    won: list[str] = []
    barrier = threading.Barrier(8)

    def claim(name: str) -> None:
        barrier.wait()
        if db.claim(item, name, worker.LEASE_S):
            won.append(name)

    threads = [threading.Thread(target=claim, args=(f"w{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1  # two server processes on one database never check the same row
    assert db.claim(item, won[0], worker.LEASE_S)  # the holder renews
    later = __import__("time").time() + worker.LEASE_S + 1
    assert db.claim(item, "other", worker.LEASE_S, now=later)  # a dead checker's claim expires
    db.set_verification(out.submission_id, "unverified", {"reason": "decided"})
    assert not db.claim(item, "other", worker.LEASE_S)  # a decided row is nobody's to check
    key = db.wanted_references()[0].key
    assert db.claim(reference_item(key), "a", 60) and not db.claim(reference_item(key), "b", 60)
    db.release(reference_item(key), "a")
    assert db.claim(reference_item(key), "b", 60)


def test_triad_report_names_a_malformed_results_field(
    world: dict, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    import shutil

    from triad_cli.main import main

    run = tmp_path / "run"
    shutil.copytree(world["runs"][0], run)
    results = json.loads((run / "results.json").read_text())
    results["configs"][n.MAIN_CONFIGS[0]]["metrics"]["map"] = "0.9"
    (run / "results.json").write_text(json.dumps(results))
    args = ["report", str(run), "--out", str(tmp_path / "r.html"), "--data", str(world["root"] / "triad")]
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"configs.{n.MAIN_CONFIGS[0]}.metrics.map is '0.9', not a finite number" in err and "Traceback" not in err
    results["model"] = "minilm"
    (run / "results.json").write_text(json.dumps(results))
    assert main(args) == 2 and "'model' is 'minilm', not an object" in capsys.readouterr().err
