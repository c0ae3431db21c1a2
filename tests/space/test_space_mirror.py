"""The mirror: every row, its status, its per-query values, its explorer file and every reference run come back into
an empty database, from a folder or from a Hub dataset repo (huggingface_hub's own client talking to a stand-in Hub
on 127.0.0.1, tests/fake_hub.py) — the same code behind both; nothing secret is uploaded; and a killed server whose
database was deleted comes back whole."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spaces_app import explore_store, mirror, names, reference, status, verify, views, worker
from spaces_app.db import Database
from spaces_app.gold import GoldStore
from spaces_app.reference import Reference
from spaces_app.submit import RateLimit, submit_files
from tests.doubles import space_runs as testing
from tests.fake_hub import FakeHub
from triad_dataset.contract import names as n

POOL = 8
ROOT = Path(__file__).resolve().parents[2]
SECRETS = ('"sample":', '"private":', "ip:")  # never mirrored
UNDECIDED_SECRETS = ('"own":', '"sample_seed":', '"result":')  # nor, for a failed or pending row, its check's data


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("space_mirror")
    tables = testing.triad_tables(4, POOL, seed=61, configs=n.MAIN_CONFIGS)
    testing.write_triad_gold(root / "triad", tables, POOL)
    runs = [testing.write_run(root / f"run{i}", tables, testing.random_rankings(tables, seed=70 + i)) for i in range(6)]
    for run in runs[:3]:  # three runs claim the tiny registry model: checkable, pending until its reference run
        results = json.loads((run / "results.json").read_text())
        results["model"] = {"name": "tiny-random-clip", "source_kind": "registry", "revision": "seed0"}
        (run / "results.json").write_text(json.dumps(results))
    return {"root": root, "tables": tables, "runs": runs, "golds": GoldStore({"triad": root / "triad"})}


def files(run: Path) -> list[Path]:
    return sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"]


def submit(db: Database, world: dict, i: int, name: str, who: str = "hf:alice") -> int:
    out = submit_files(
        db, world["golds"], files(world["runs"][i]), model_name=name, submitter=who, rate_limit=RateLimit(99, 9)
    )
    assert out.accepted, out.message
    return int(out.submission_id)


def board(world: dict, db: Database) -> dict[int, int]:
    """A board with a verified, a failed, a pending, an unverified, a hidden and a deleted row, and a reference run
    (made here from the first row's own values, each query's tie range a single point)."""
    ids = {
        "verified": submit(db, world, 0, "tiny A"),
        "failed": submit(db, world, 1, "tiny B", "hf:bob"),
    }
    task = db.verification_tasks(ids=[ids["verified"]])[0]
    spec = reference.spec_for("triad", task["gold_content"], task["verify"])
    assert spec is not None and spec.key == task["verify"]["reference"]
    own = {c: db.query_scores(ids["verified"], c) for c in n.MAIN_CONFIGS}
    sub = db.submissions()[0]
    scores = {
        c: {"metric": s.metric, "value": s.value, "lo": s.lo, "hi": s.hi, "n_queries": s.n_queries}
        for c, s in sub["scores"].items()
    }
    ref = Reference(spec, scores, {c: {q: (v, v, v) for q, v in per.items()} for c, per in own.items()}, {"model": {}})
    worker.DatabaseStore(db, world["golds"]).add_reference(ref, b"explorer bytes of the reference run")
    ids["pending"] = submit(db, world, 2, "tiny C", "hf:carol")
    ids["unverified"] = submit(db, world, 3, "my model", "ip:0123456789abcdef")
    ids["hidden"] = submit(db, world, 4, "hidden model", "local")
    db.set_hidden(ids["hidden"], True)
    gone = submit(db, world, 5, "gone model")
    db.delete(gone)
    explore_store.remove(db.path, gone)
    return ids


def state(db: Database, world: dict) -> dict:
    """Everything a visitor sees of a board, and what the checks need."""
    gold = world["golds"].get("triad")
    subs = db.submissions(include_hidden=True)
    notes = status.annotate(subs, n.MAIN_CONFIGS, gold.content, gold.fingerprint)
    return {
        s["id"]: {
            "status": s["status"],
            "text": notes[s["id"]]["text"],
            "hidden": s["hidden"],
            "scores": s["scores"],
            "per_query": {c: db.query_scores(s["id"], c) for c in n.MAIN_CONFIGS},
            "explorer": explore_store.file_of(db.path, s["id"]).read_bytes(),
            "public": db.mirror_row(s["id"]),
        }
        for s in subs
    }


@pytest.fixture(params=["folder", "hub"])
def target(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    if request.param == "folder":
        yield mirror.FolderTarget(tmp_path / "mirror")
        return
    import huggingface_hub.constants

    hub = FakeHub().start()
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)  # conftest keeps every test offline
    yield mirror.HubTarget("org/results", "token")
    hub.stop()


def test_an_empty_database_comes_back_from_the_mirror(world: dict, tmp_path: Path, target) -> None:
    db = Database(tmp_path / "space.sqlite")
    copy = mirror.Mirror(db, target)
    copy.start()
    db.listeners.append(copy.changed)
    ids = board(world, db)
    assert copy.flush(60)
    before = state(db, world)
    assert {k: before[i]["status"] for k, i in ids.items()} == {
        "verified": verify.VERIFIED,
        "failed": verify.FAILED,
        "pending": verify.PENDING,
        "unverified": verify.UNVERIFIED,
        "hidden": verify.UNVERIFIED,
    }
    stored = target.list()
    assert f"submissions/{max(ids.values()) + 1}.json" not in stored  # the deleted row left the mirror too
    for name in stored:  # nothing secret: no sample, no model scores of a failed row, no client address
        text = target.get(name).decode("latin-1")
        assert not any(secret in text for secret in SECRETS), (name, [s for s in SECRETS if s in text])
    for key in ("failed", "pending"):
        text = target.get(f"submissions/{ids[key]}.json").decode()
        assert not any(secret in text for secret in UNDECIDED_SECRETS), (key, text[:2000])

    again = Database(tmp_path / "restored.sqlite")
    assert mirror.restore(again, target, log=lambda line: None) == (len(ids), 1)
    after = state(again, world)
    assert after == before  # rows, statuses, texts, the reference run's numbers, per-query values, explorer files
    assert again.name_owner(names.name_key("hidden model")) == "local"
    key = again.verification_tasks(ids=[ids["pending"]])[0]["verify"]["reference"]
    assert again.reference(key) is not None and again.reference_explorer(key) == b"explorer bytes of the reference run"
    # a restored pending row (its secret sample was never mirrored) is judged against the restored reference run
    assert worker.settle(again, key) == [(ids["pending"], verify.FAILED)]
    with pytest.raises(verify.TriadError, match="not empty"):
        mirror.restore(again, target)


def test_the_public_record_of_a_failed_row_says_where_not_the_scores(world: dict, tmp_path: Path) -> None:
    db = Database(tmp_path / "space.sqlite")
    ids = board(world, db)
    record = db.mirror_row(ids["failed"])
    assert record is not None and set(record["verify"]) >= {"status", "failed", "spec", "reference"}
    assert set(record["verify"]["failed"]) == {"test", "config", "query_id", "text"}
    assert record["verify"]["failed"]["test"] == "tie range" and "sample_seed" not in record["verify"]
    assert record["submitter"] == "hf:bob" and db.mirror_row(ids["unverified"])["submitter"] == "anonymous"
    failed = next(s for s in db.submissions(include_hidden=True) if s["id"] == ids["failed"])
    shown = views.submission_record(failed)["verification"]  # what /submission answers
    assert shown == record["verify"] and '"own":' not in json.dumps(shown) and "sample_seed" not in shown


SERVER = """
import sys
from spaces_app.app import launch
from spaces_app.settings import Settings
launch(Settings(sys.argv[1], sys.argv[1] + "-no-ark", sys.argv[2], "token", int(sys.argv[3]), "127.0.0.1"), quiet=True)
"""


def _serve(data: Path, db: Path, port: int, env: dict) -> tuple[subprocess.Popen, object]:
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(data), str(db), str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    from gradio_client import Client

    deadline = time.monotonic() + 240
    while True:
        assert proc.poll() is None, proc.stderr.read()[-3000:] if proc.stderr else ""
        try:
            return proc, Client(f"http://127.0.0.1:{port}/", verbose=False)
        except Exception:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(1)


@pytest.mark.slow
@pytest.mark.parametrize("where", ["folder", "hub"])
def test_a_killed_server_whose_database_was_deleted_comes_back_whole(tmp_path: Path, where: str) -> None:
    from gradio_client import handle_file

    from tests.space import test_space_verify as sv
    from tests.space.test_space_app import free_port

    root = tmp_path
    tables = testing.triad_tables(4, 10, seed=81, configs=n.MAIN_CONFIGS)
    testing.write_triad_gold(root / "triad", tables, 10, with_corpora=True)
    from model_adapters.runner import RunConfig, run

    run(
        RunConfig(
            model="tiny-random-clip",
            data=str(root / "triad"),
            out=str(root / "run"),
            validate=False,
            quiet=True,
            cache_dir=str(root / "cache"),
        )
    )
    oracle = sv._oracle({"root": root, "tables": tables, "run": root / "run"}, "oracle")
    other = testing.write_run(root / "other", tables, testing.random_rankings(tables, seed=3))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.update(GRADIO_TEMP_DIR=str(root / "gradio"), TRIAD_SPACE_CACHE=str(root / "space-cache"))
    env.pop("TRIAD_SPACE_VERIFY_MODELS", None)
    hub = None
    if where == "folder":
        env["TRIAD_SPACE_MIRROR_DIR"] = str(root / "mirror")
        target: mirror.Target = mirror.FolderTarget(root / "mirror")
    else:
        hub = FakeHub().start()
        env.update(TRIAD_SPACE_HUB_REPO="org/results", HF_TOKEN="token", HF_ENDPOINT=hub.url, HF_HUB_OFFLINE="0")
        target = _HubView(hub, "org/results")
    db = root / "space.sqlite"
    try:
        proc, client = _serve(root / "triad", db, free_port(), env)
        for path, name in ((root / "run", "tiny-random-clip"), (oracle, "oracle of tiny"), (other, "my model")):
            answer = client.predict(
                [handle_file(str(f)) for f in files(path)], name, "", "other", "", api_name="/submit"
            )
            assert answer.startswith("Accepted"), answer
        deadline = time.monotonic() + 400
        while any(client.predict(i, api_name="/submission")["verification"]["status"] == "pending" for i in (1,)):
            assert time.monotonic() < deadline, "the queue did not decide the row"
            time.sleep(2)
        rows = client.predict(api_name="/leaderboard")
        records = {i: client.predict(i, api_name="/submission") for i in (1, 3)}
        assert records[1]["verification"]["status"] == "verified"
        while _mirrored(target) != {1: "verified", 2: "failed", 3: "unverified"}:  # the uploads run in the background
            assert time.monotonic() < deadline, _mirrored(target)
            time.sleep(1)
        views_before = _views(root, db)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        for leftover in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            leftover.unlink(missing_ok=True)
        shutil.rmtree(explore_store.directory(db))
        proc, client = _serve(root / "triad", db, free_port(), env)
        assert client.predict(api_name="/leaderboard") == rows
        assert {i: client.predict(i, api_name="/submission") for i in (1, 3)} == records
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)
        assert _views(root, db) == views_before  # the Explorer shows the same queries
    finally:
        if proc.poll() is None:
            proc.kill()
        if hub is not None:
            hub.stop()


def _mirrored(target: mirror.Target) -> dict[int, str]:
    out = {}
    for name in target.list():
        if name.startswith("submissions/"):
            out[int(Path(name).stem)] = json.loads(target.get(name))["status"]
    return out


def _views(root: Path, db: Path) -> dict[int, str]:
    """The Explorer's view of every visible row's worst I2C query."""
    from spaces_app import explorer_tab
    from spaces_app.board import Leaderboard
    from spaces_app.settings import Settings

    lb = Leaderboard(Settings(root / "triad", root / "no-ark", db, None, 0, "127.0.0.1"))
    subs = lb.all_subs("triad")
    return {s["id"]: explorer_tab.render(lb, "triad", s["id"], None, n.MAIN_CONFIGS[0], "worst AP") for s in subs}


class _HubView:
    """The stand-in Hub's repo read directly (the test's own view of what was uploaded)."""

    def __init__(self, hub: FakeHub, repo: str) -> None:
        self.hub, self.repo = hub, repo

    def list(self) -> list[str]:
        with self.hub.lock:
            return sorted(self.hub.repos.get(self.repo, {}))

    def get(self, path: str) -> bytes:
        with self.hub.lock:
            return self.hub.repos[self.repo][path]

    def put(self, path: str, data: bytes) -> None:
        raise NotImplementedError

    def delete(self, path: str) -> None:
        raise NotImplementedError
