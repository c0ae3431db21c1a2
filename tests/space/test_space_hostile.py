"""The Space against a hostile submitter: bounded decoding, named rejections for every malformed input,
duplicates by main-subset content, name ownership, bookkeeping, trust marks, partial runs, a kill during a burst,
and the operator's command line. Each test fails on the code before these defences."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spaces_app import views
from spaces_app.db import Database
from spaces_app.gold import GoldStore
from spaces_app.identity import Window, address_key, client_address, shown
from spaces_app.pools import PoolIndex
from spaces_app.ranking_files import ParsedRanking
from spaces_app.refusal import SubmissionError, short
from spaces_app.submit import RateLimit, submit_files
from spaces_app.uploads import Limits, json_depth
from spaces_app.validation import explain_ranking, pool_positions
from tests.doubles import space_runs as testing
from tests.space_refusals import rejected
from triad_dataset.contract import names as n

I2C = n.ABSTRACTION_CONFIGS[0]
SELF = n.SELF_CONFIGS[0]
POOL = 8
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("space_hostile")
    configs = [*n.MAIN_CONFIGS, SELF]
    tables = testing.triad_tables(4, POOL, seed=13, configs=configs)
    testing.write_triad_gold(root / "triad", tables, POOL)
    rankings = testing.random_rankings(tables, seed=14)
    main_only = {c: rankings[c] for c in n.MAIN_CONFIGS}
    return {
        "root": root,
        "tables": tables,
        "rankings": rankings,
        "run": testing.write_run(root / "run", tables, main_only),
        "run_with_self": testing.write_run(root / "run_self", tables, rankings),
        "golds": GoldStore({"triad": root / "triad"}),
    }


@pytest.fixture
def db(tmp_path: Path) -> Database:
    return Database(tmp_path / "space.sqlite")


def run_files(run: Path) -> list[Path]:
    return sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"]


def submit(db: Database, world: dict, files: list[Path], name: str = "model", **kw):
    return submit_files(
        db,
        world["golds"],
        files,
        model_name=name,
        submitter=kw.pop("submitter", "tester"),
        rate_limit=kw.pop("rate_limit", RateLimit(1000, 3600)),
        **kw,
    )


def replaced(tmp: Path, run: Path, name: str, data: bytes) -> list[Path]:
    """The run's files with one of them (by file name) replaced by crafted bytes."""
    out = tmp / "crafted"
    out.mkdir(exist_ok=True)
    files = []
    for f in run_files(run):
        if f.name == name:
            (out / name).write_bytes(data)
            files.append(out / name)
        else:
            files.append(f)
    return files


def dictionary_bomb(n_ids: int) -> bytes:
    """A tiny parquet file whose one ranking declares ``n_ids`` copies of one id (dictionary + RLE encoded)."""
    cand = pa.ListArray.from_arrays(pa.array([0, n_ids], pa.int32()), pa.array(["c"] * n_ids, pa.string()))
    scores = pa.ListArray.from_arrays(pa.array([0, n_ids], pa.int32()), pa.array(np.zeros(n_ids)))
    table = pa.table({"query_id": ["q0"], "candidate_ids": cand, "scores": scores})
    sink = io.BytesIO()
    pq.write_table(table, sink, use_dictionary=True, compression="zstd")
    return sink.getvalue()


# --- 1. memory: decoded sizes bounded before they are materialized ----------------------------------------------
def test_dictionary_bomb_is_refused_from_the_footer(db: Database, world: dict, tmp_path: Path) -> None:
    data = dictionary_bomb(2_000_000)
    assert len(data) < 20_000  # a few KB declaring two million ids
    files = replaced(tmp_path, world["run"], f"{I2C}.parquet", data)
    rejected(
        db,
        submit(db, world, files),
        f"{I2C}.parquet (config {I2C}): column 'candidate_ids' declares",
        f"at most {4 * POOL} are possible (4 queries x {POOL} ids)",
    )


def test_a_ranking_longer_than_its_pool_is_refused(db: Database, world: dict, tmp_path: Path) -> None:
    r = {q: list(ids) for q, ids in world["rankings"][I2C].items()}
    first = next(iter(r))
    r[first] = r[first] + ["extra"]
    table = testing.ranking_table(r)
    files = replaced(tmp_path, world["run"], f"{I2C}.parquet", testing.parquet_bytes(table))
    rejected(db, submit(db, world, files), f"row 0 lists {POOL + 1} ids; a ranking holds at most {POOL}")


# --- 6. every malformed input has a named rejection -------------------------------------------------------------
def test_deeply_nested_results_json(db: Database, world: dict, tmp_path: Path) -> None:
    deep = b"[" * 200_000 + b"]" * 200_000
    rejected(
        db,
        submit(db, world, replaced(tmp_path, world["run"], "results.json", deep)),
        "results.json: JSON nested 200000 levels deep, more than the limit of 32",
    )


def test_oversized_results_json(db: Database, world: dict, tmp_path: Path) -> None:
    big = b'{"pad": "' + b"x" * 2000 + b'"}'
    outcome = submit(
        db, world, replaced(tmp_path, world["run"], "results.json", big), limits=Limits(max_json_bytes=1000)
    )
    rejected(db, outcome, f"results.json: {len(big)} bytes, over the limit of 1000 for JSON")


def test_json_depth_ignores_brackets_in_strings() -> None:
    assert json_depth(b'{"a": "[[[[\\"[[", "b": [[1]]}') == 3
    assert json_depth(json.dumps({"k": [{"x": "]" * 50}]}).encode()) == 3


def _zip_bytes(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytearray:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return bytearray(buf.getvalue())


def _members(run: Path) -> dict[str, bytes]:
    return {"run/" + str(f.relative_to(run)): f.read_bytes() for f in run_files(run)}


def _header_offsets(data: bytearray, name: bytes) -> tuple[int, int]:
    """(local header offset, central directory offset) of the member called ``name``."""
    central = data.find(b"PK\x01\x02")
    while central != -1:
        length = struct.unpack("<H", data[central + 28 : central + 30])[0]
        if bytes(data[central + 46 : central + 46 + length]) == name:
            return struct.unpack("<I", data[central + 42 : central + 46])[0], central
        central = data.find(b"PK\x01\x02", central + 4)
    raise AssertionError(name)


def test_zip_member_lying_about_its_size(db: Database, world: dict, tmp_path: Path) -> None:
    data = _zip_bytes(_members(world["run"]))
    local, central = _header_offsets(data, b"run/results.json")
    struct.pack_into("<I", data, local + 22, 10)  # uncompressed size: 10 bytes, in both headers
    struct.pack_into("<I", data, central + 24, 10)
    (tmp_path / "lying.zip").write_bytes(bytes(data))
    rejected(db, submit(db, world, [tmp_path / "lying.zip"]), "lying.zip: 'run/results.json' is corrupt")


def test_zip_member_with_corrupt_stream(db: Database, world: dict, tmp_path: Path) -> None:
    data = _zip_bytes(_members(world["run"]))
    local, _ = _header_offsets(data, b"run/results.json")
    start = (
        local
        + 30
        + struct.unpack("<H", data[local + 26 : local + 28])[0]
        + struct.unpack("<H", data[local + 28 : local + 30])[0]
    )
    for i in range(start, start + 40):
        data[i] ^= 0xA5
    (tmp_path / "corrupt.zip").write_bytes(bytes(data))
    rejected(db, submit(db, world, [tmp_path / "corrupt.zip"]), "corrupt.zip: 'run/results.json' is corrupt")


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, 9])  # bzip2 (Python reads it), deflate64 (it cannot)
def test_zip_member_with_another_compression_method(db: Database, world: dict, tmp_path: Path, method: int) -> None:
    data = _zip_bytes(_members(world["run"]), zipfile.ZIP_BZIP2)
    for name in _members(world["run"]):
        local, central = _header_offsets(data, name.encode())
        struct.pack_into("<H", data, local + 8, method)
        struct.pack_into("<H", data, central + 10, method)
    (tmp_path / "method.zip").write_bytes(bytes(data))
    rejected(
        db,
        submit(db, world, [tmp_path / "method.zip"]),
        f"uses compression method {method}; only stored or deflated members are accepted",
    )


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ("9" * 400, "use a number such as 86000000, 86M or 1.5B"),
        ("99999999999999999999", "more than 1e+15"),
        (1e300, "more than 1e+15"),
    ],
)
def test_parameter_count_out_of_range(db: Database, world: dict, params: object, fragment: str) -> None:
    rejected(db, submit(db, world, run_files(world["run"]), params=params), fragment)


def test_unexpected_failure_is_a_named_rejection(db: Database, world: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    from spaces_app import submit as submit_mod

    def broken(*args, **kwargs):
        raise KeyError("/srv/secret/path")

    monkeypatch.setattr(submit_mod, "score_triad_positions", broken)
    outcome = submit(db, world, run_files(world["run"]))
    rejected(db, outcome, "the server failed while checking this submission (KeyError); please report this")
    assert "/srv" not in outcome.message


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("..%2fx.parquet", "a path separator once URL-decoded"),
        ("..%252frankings%252fabstraction_i2c.parquet", "a path separator once URL-decoded"),
        ("rankings%5cabstraction_i2c.parquet", "a path separator once URL-decoded"),
        ("%2e%2e", "it names a folder, not a file"),
        ("a\x01b.parquet", "a control or invisible character (U+0001)"),
        ("a%01b.parquet", "a control or invisible character (U+0001)"),
        ("results\u202e.json", "a control or invisible character (U+202E)"),
        ("x" * 200 + ".parquet", "208 characters long; the limit is 128"),
    ],
)
def test_unsafe_file_names_are_one_named_refusal(
    db: Database, world: dict, tmp_path: Path, name: str, fragment: str
) -> None:
    bad = tmp_path / "upload" / name
    bad.parent.mkdir()
    bad.write_bytes((world["run"] / "rankings" / f"{I2C}.parquet").read_bytes())
    outcome = submit(db, world, [*run_files(world["run"]), bad])
    rejected(db, outcome, f"file name {short(name)} is refused: ", fragment)
    assert outcome.message.endswith("upload the files under the names `triad run` gave them. Nothing was stored.")


@pytest.mark.parametrize(
    ("member", "fragment"),
    [
        ("run/..%2f..%2fetc%2fresults.json", "a path outside the folder once URL-decoded"),
        ("%2fetc/results.json", "a path outside the folder once URL-decoded"),
        ("run/a\x07/results.json", "a control or invisible character, U+0007"),
        ("run/" + "d" * 300 + "/x.json", "longer than 255 characters"),
    ],
)
def test_unsafe_zip_member_names(db: Database, world: dict, tmp_path: Path, member: str, fragment: str) -> None:
    archive = tmp_path / "evil.zip"
    archive.write_bytes(bytes(_zip_bytes({**_members(world["run"]), member: b"{}"})))
    rejected(db, submit(db, world, [archive]), "evil.zip: unsafe path", fragment)


# --- only complete runs; the run's model identity is shown ---------------------------------------------------
@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"complete": False}, 'partial run ("complete": false'),
        ({"run": {"limit": 5}}, "partial run (run.limit = 5)"),
    ],
)
def test_partial_runs_are_refused(db: Database, world: dict, tmp_path: Path, change: dict, fragment: str) -> None:
    results = {**json.loads((world["run"] / "results.json").read_text()), **change}
    files = replaced(tmp_path, world["run"], "results.json", json.dumps(results).encode())
    rejected(db, submit(db, world, files), fragment, "only a complete run over every query is submittable")


def test_model_identity_from_results_json_is_shown(db: Database, world: dict, tmp_path: Path) -> None:
    results = json.loads((world["run"] / "results.json").read_text())
    results["complete"] = True
    results["model"] = {"name": "org/model", "revision": "abc123", "source": "hub:org/model", "source_kind": "hub"}
    files = replaced(tmp_path, world["run"], "results.json", json.dumps(results).encode())
    assert submit(db, world, files).accepted
    meta = dict(views.metadata_table(db.submissions()[0]).itertuples(index=False))
    assert (meta["Model (results.json, claimed)"], meta["Revision (results.json, claimed)"]) == ("org/model", "abc123")
    assert (meta["Source (results.json, claimed)"], meta["Source kind (results.json, claimed)"]) == (
        "hub:org/model",
        "hub",
    )
    assert meta["results.json"] == "matches"


# --- 7. duplicates by main-subset content; name ownership -----------------------------------------------------
def test_duplicate_main_rankings_with_other_reference_configs(db: Database, world: dict) -> None:
    assert submit(db, world, run_files(world["run"])).accepted
    again = submit(db, world, run_files(world["run_with_self"]), name="model")
    assert again.message == (
        "Rejected: these rankings were already submitted as submission id 1 (model). Nothing was stored."
    )


def test_model_names_belong_to_their_first_submitter(db: Database, world: dict) -> None:
    assert submit(db, world, run_files(world["run"]), name="Shared Name", submitter="hf:alice").accepted
    out = submit(db, world, run_files(world["run_with_self"]), name="shared  name", submitter="hf:mallory")
    assert out.message == (
        "Rejected: model name 'shared name' (or one that looks the same) belongs to another "
        "submitter; choose a distinct name. Nothing was stored."
    )
    tables = world["tables"]
    other = testing.write_run(
        world["root"] / "alice2", tables, testing.random_rankings(tables, seed=99, configs=n.MAIN_CONFIGS)
    )
    assert submit(db, world, run_files(other), name="Shared Name", submitter="hf:alice").accepted  # the owner may


# --- 8. bookkeeping ---------------------------------------------------------------------------------------------
def test_attempts_are_marked_accepted_and_pruned(db: Database, world: dict) -> None:
    db.record_attempt("old", accepted=False, at=time.time() - 30 * 86400)
    assert submit(db, world, run_files(world["run"])).accepted
    with sqlite3.connect(db.path) as conn:
        rows = conn.execute("SELECT submitter, accepted, action FROM attempts ORDER BY rowid").fetchall()
    assert rows == [("tester", 1, "submit")]  # the month-old attempt is gone


# --- 9. trust signals and private data ------------------------------------------------------------------------
def test_main_table_marks_a_results_json_that_disagreed(db: Database, world: dict, tmp_path: Path) -> None:
    results = json.loads((world["run"] / "results.json").read_text())
    results["configs"][I2C]["metrics"]["map"] = 0.999
    files = replaced(tmp_path, world["run"], "results.json", json.dumps(results).encode())
    assert submit(db, world, files, name="tampered").accepted
    honest = testing.write_run(
        tmp_path / "honest", world["tables"], testing.random_rankings(world["tables"], seed=7, configs=n.MAIN_CONFIGS)
    )
    assert submit(db, world, run_files(honest), name="honest").accepted
    table = views.score_table(db.submissions(), n.MAIN_CONFIGS)
    marks = dict(zip(table[views.MODEL_COL], table[views.CHECK_COL], strict=True))
    assert marks == {"tampered": "DIFFERS from server", "honest": "matches"}


def test_addresses_are_stored_hashed_and_never_shown() -> None:
    key = address_key("198.51.100.7", b"k" * 32)
    assert key.startswith("ip:") and "198.51.100.7" not in key and len(key) == 19
    assert [shown(s) for s in (key, "ip:198.51.100.7", "hf:alice", "user:bob", "cli")] == [
        "anonymous",
        "anonymous",
        "alice",
        "bob",
        "cli",
    ]


# --- 2 and 4: identity and rate windows -------------------------------------------------------------------------
def test_forwarded_for_counts_only_behind_trusted_proxies() -> None:
    headers = {"x-forwarded-for": "6.6.6.6, 7.7.7.7, 10.0.0.5"}  # client-forged, client, first proxy
    assert client_address("10.0.0.9", headers, 0) == "10.0.0.9"
    assert client_address("10.0.0.9", headers, 1) == "10.0.0.5"
    assert client_address("10.0.0.9", headers, 2) == "7.7.7.7"
    assert client_address("10.0.0.9", {}, 2) == "10.0.0.9"


def test_window_limits_count_and_amount() -> None:
    w = Window(3, 10.0)
    assert [w.take("a", now=t) for t in (0, 1, 2, 3)] == [True, True, True, False]
    assert w.take("b", now=3) and w.take("a", now=10.5)  # other keys unaffected; the window slides
    b = Window(100, 10.0)
    assert b.take("a", 60, now=0) and not b.take("a", 60, now=1) and b.take("a", 40, now=1)


# --- the array pool check equals the per-query reference check ------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(data=st.data(), size=st.integers(1, 6))
def test_pool_positions_match_the_reference_check(data: st.DataObject, size: int) -> None:
    pools = [[f"c{q}-{i}" if i % 2 else f"shared{i}" for i in range(size)] for q in range(3)]
    index = PoolIndex.build(I2C, [{"query_id": f"q{q}", "candidate_ids": p} for q, p in enumerate(pools)])
    order = data.draw(st.permutations(range(3)))
    alphabet = sorted({c for p in pools for c in p} | {"stranger"})
    ranked = [
        data.draw(st.one_of(st.permutations(pools[q]), st.lists(st.sampled_from(alphabet), max_size=size + 1)))
        for q in order
    ]
    parsed = ParsedRanking([f"q{q}" for q in order], pa.array(ranked, pa.list_(pa.string())))
    try:
        for q, r in zip(order, ranked, strict=True):
            explain_ranking(I2C, f"q{q}", r, pools[q])
        valid = True
    except SubmissionError as exc:
        valid, expected = False, str(exc)
    if valid:
        pos = pool_positions(I2C, parsed, index)
        for q, r in zip(order, ranked, strict=True):
            assert [pools[q][j] for j in pos[q]] == r
    else:
        with pytest.raises(SubmissionError) as err:
            pool_positions(I2C, parsed, index)
        assert str(err.value) == expected  # the first offending query, named the same way


# --- a kill during a burst loses nothing --------------------------------------------------------------------------
BURST = """
import sys
from pathlib import Path
from spaces_app.db import Database
from spaces_app.gold import GoldStore
from spaces_app.submit import RateLimit, submit_files
db, golds = Database(sys.argv[1]), GoldStore({"triad": sys.argv[2]})
for run in sys.argv[3:]:
    files = sorted((Path(run) / "rankings").glob("*.parquet")) + [Path(run) / "results.json"]
    out = submit_files(db, golds, files, model_name=Path(run).name, submitter="burst", rate_limit=RateLimit(10**6, 1))
    print(out.submission_id if out.accepted else "REJECTED " + out.message, flush=True)
"""


@pytest.mark.slow
def test_kill_during_a_burst_loses_nothing(world: dict, tmp_path: Path) -> None:
    tables = world["tables"]
    runs = [
        testing.write_run(
            tmp_path / f"b{i}", tables, testing.random_rankings(tables, seed=300 + i, configs=n.MAIN_CONFIGS)
        )
        for i in range(40)
    ]
    db_path = tmp_path / "burst.sqlite"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    reported: list[int] = []
    for order in (runs, runs[::-1]):  # two kills, each a few accepted submissions into a burst
        proc = subprocess.Popen(
            [sys.executable, "-c", BURST, str(db_path), str(world["root"] / "triad"), *map(str, order)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(3):
            line = proc.stdout.readline()
            assert line.strip().isdigit(), line
            reported.append(int(line))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    db = Database(db_path)
    assert db.integrity_ok()
    stored = {s["id"] for s in db.submissions(include_hidden=True)}
    assert set(reported) <= stored and len(reported) >= 4  # every reported acceptance survived the kills
    assert db.counts()["scores"] == len(stored) * len(n.MAIN_CONFIGS)  # no half-written submission


# --- operator command line ----------------------------------------------------------------------------------------
def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "GRADIO_ANALYTICS_ENABLED": "False",
    }
    for var in ("TRIAD_SPACE_DATA", "TRIAD_SPACE_ARK_DATA", "TRIAD_SPACE_DB"):
        env.pop(var, None)
    return subprocess.run(
        [sys.executable, "-m", "triad_cli", "space", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_cli_without_gold_and_rejected_submit(world: dict, tmp_path: Path) -> None:
    out = _cli(["--port", "0"], tmp_path)
    assert out.returncode == 2 and "--data" in out.stderr and "Traceback" not in out.stderr, out.stderr
    partial = tmp_path / "partial"
    testing.write_run(partial, world["tables"], {c: world["rankings"][c] for c in n.MAIN_CONFIGS[:3]})
    out = _cli(["--submit", str(partial), "--model-name", "m", "--data", str(world["root"] / "triad")], tmp_path)
    assert out.returncode == 2 and "missing main subset(s)" in out.stderr, out.stderr
    assert not (tmp_path / "demo_output").exists()  # no database left behind by a refused run
    out = _cli(["--submit", str(world["run"]), "--model-name", "m", "--data", str(world["root"] / "triad")], tmp_path)
    assert out.returncode == 0 and out.stdout.startswith("Accepted: submission id 1"), out.stderr
    assert (tmp_path / "demo_output" / "space.sqlite").is_file()


# --- Hugging Face login: the identity, and required for submitting ----------------------------------------------
@pytest.mark.slow
def test_with_login_the_hub_user_is_the_submitter(world: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    import gradio as gr

    from spaces_app.app import build_app

    monkeypatch.setattr(gr, "LoginButton", lambda *a, **k: None)  # its local mock needs a Hub token; not under test
    from spaces_app.settings import Settings

    settings = Settings(
        world["root"] / "triad", tmp_path / "no-ark", tmp_path / "s.sqlite", None, 7860, "127.0.0.1", oauth=True
    )
    demo = build_app(settings)
    fn = next(f.fn for f in demo.fns.values() if f.name == "submit")
    request = SimpleNamespace(client=SimpleNamespace(host="127.0.0.1"), headers={})
    files = [str(f) for f in run_files(world["run"])]
    assert fn(files, "m", "", "other", "", request, None) == (
        "Rejected: log in with Hugging Face (the button at the top) to submit. Nothing was stored."
    )
    assert fn(files, "m", "", "other", "", request, SimpleNamespace(username="alice")).startswith("Accepted")
    stored = Database(settings.db_path).submissions()[0]
    assert stored["submitter"] == "hf:alice" and views.submitter_text(stored) == "alice"


def test_run_info_states_what_was_compared() -> None:
    from spaces_app.submit import run_info

    assert run_info(None, []) == {"results_json": "absent"}
    assert run_info({"configs": {}, "model": {"name": "m", "revision": True}}, []) == {
        "results_json": "no numbers",
        "model_name": "m",
    }
    assert run_info({"configs": {I2C: {"metrics": {"map": 0.5}}}, "complete": True}, ["x"]) == {
        "results_json": "differs",
        "complete": True,
    }
