"""A verification queue nothing can stall: a row whose check raises is recorded unverified with the error and the
rows after it are still decided (the Space's queue and `triad space verify --pending`); a bogus input variant is
refused when the submission is planned, and by the check itself."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from spaces_app import verify
from spaces_app.db import Database
from spaces_app.worker import VerifyQueue
from tests.space import test_space_verify as sv
from tests.space.test_space_verify import _oracle, cli_verify, submit

tiny = sv.tiny  # the tiny-random-clip run and its gold (a fixture)
ROOT = Path(__file__).resolve().parents[2]

CRASH = (
    "check crashed: TriadError: unknown input variant 'bogus'; valid: full, text_only, text_refmeta, "
    "image_only, last_turn_only"
)
BOGUS = "results.json variant 'bogus' is not one of: full, text_only, text_refmeta, image_only, last_turn_only"


def _bogus_then_honest(db: Database, tiny: dict) -> tuple[int, int]:
    """(bogus id, honest id): a pending row with variant "bogus" (as stored before plan validated it), then an
    honest run."""
    bogus = submit(db, tiny, _oracle(tiny, "queue_oracle"), "tiny-random-clip")
    assert bogus.accepted, bogus.message
    task = db.verification_tasks(ids=[bogus.submission_id])[0]
    db.set_verification(bogus.submission_id, verify.PENDING, {**task["verify"], "variant": "bogus"})
    honest = submit(db, tiny, tiny["run"], "tiny-random-clip")
    assert honest.accepted, honest.message
    return bogus.submission_id, honest.submission_id


def _rows(db: Database) -> dict[int, dict]:
    return {s["id"]: s for s in db.submissions(include_hidden=True)}


@pytest.fixture
def unguarded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check without its variant guard: the bogus variant reaches `query_input`, which raises TriadError."""
    monkeypatch.setattr(verify, "variant_problem", lambda results, benchmark="triad": None)


def test_the_queue_records_a_crashed_check_and_decides_the_next(tiny: dict, tmp_path: Path, unguarded: None) -> None:
    db = Database(tmp_path / "space.sqlite")
    bogus, honest = _bogus_then_honest(db, tiny)
    queue = VerifyQueue(db, {"triad": tiny["root"] / "triad"})
    assert queue.run_once() == 2
    rows = _rows(db)
    assert rows[honest]["status"] == verify.VERIFIED
    assert rows[bogus]["status"] == verify.UNVERIFIED
    assert rows[bogus]["verify"]["reason"] == CRASH
    assert db.verification_tasks(pending_only=True) == []
    assert queue.run_once() == 0  # nothing left pending, nothing retried


def test_verify_pending_records_a_crashed_check_and_decides_the_next(
    tiny: dict, tmp_path: Path, unguarded: None
) -> None:
    db = Database(tmp_path / "space.sqlite")
    bogus, honest = _bogus_then_honest(db, tiny)
    assert cli_verify(db, tiny, "--pending") == 0  # nothing failed: the crashed row is unverified
    rows = _rows(db)
    assert rows[honest]["status"] == verify.VERIFIED
    assert rows[bogus]["status"] == verify.UNVERIFIED
    assert rows[bogus]["verify"]["reason"] == CRASH


def test_the_check_refuses_a_stored_bogus_variant(tiny: dict, tmp_path: Path) -> None:
    db = Database(tmp_path / "space.sqlite")
    bogus, _ = _bogus_then_honest(db, tiny)
    task = db.verification_tasks(ids=[bogus])[0]
    status, record = verify.check(task, {"triad": tiny["root"] / "triad"})
    assert (status, record["reason"], record["variant"]) == (verify.UNVERIFIED, BOGUS, "bogus")


def test_a_bogus_variant_is_named_at_plan_time(tiny: dict) -> None:
    results = json.loads((tiny["run"] / "results.json").read_text())
    assert verify.variant_problem({**results, "variant": "bogus"}) == BOGUS
    assert verify.variant_problem({**results, "variant": "text_refmeta"}, "ark") == (
        "results.json variant 'text_refmeta' is not one of: full, text_only, image_only"
    )
    assert verify.variant_problem({**results, "variant": 7}) == (
        "results.json variant 7 is not one of: full, text_only, text_refmeta, image_only, last_turn_only"
    )
    assert [verify.variant_problem({**results, "variant": v}) for v in ("full", "image_only", None, "")] == [None] * 4
    assert verify.variant_problem(None) is None


def test_plan_leaves_a_bogus_variant_unverified(tiny: dict) -> None:
    results = json.loads((tiny["run"] / "results.json").read_text())
    parsed = SimpleNamespace(results={**results, "variant": "bogus"})
    status, record = verify.plan("triad", parsed, None)
    assert (status, record["reason"]) == (verify.UNVERIFIED, BOGUS)
    assert "sample" not in record


# --- shutdown: a running check is abandoned, its row left pending, the thread joined -----------------------------
def _encoding_forever(monkeypatch: pytest.MonkeyPatch, started: threading.Event) -> None:
    """Candidate encoding that goes on (really encoding) until the check is cancelled."""
    real = verify._batched

    def forever(encode, items):
        started.set()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            real(encode, items)
        raise AssertionError("the check was not cancelled")

    monkeypatch.setattr(verify, "_batched", forever)


def test_shutdown_abandons_the_running_check_and_joins(
    tiny: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = Database(tmp_path / "space.sqlite")
    sid = submit(db, tiny, tiny["run"], "tiny-random-clip").submission_id
    started = threading.Event()
    _encoding_forever(monkeypatch, started)
    queue = VerifyQueue(db, {"triad": tiny["root"] / "triad"})
    queue.start()
    assert started.wait(120), "the check did not start"
    assert queue.shutdown(60) and not queue.is_alive()
    assert _rows(db)[sid]["status"] == verify.PENDING  # nothing half-written: the row waits for the next start
    assert queue._models == {}  # the model went with the thread


SIGTERM_SERVER = """
import sys, time
from pathlib import Path
from spaces_app import verify
from spaces_app.app import launch
from spaces_app.settings import Settings

real = verify._batched
def forever(encode, items):
    Path(sys.argv[4]).touch()  # the model is loaded and encoding: the test sends SIGTERM now
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        real(encode, items)
    return real(encode, items)
verify._batched = forever
launch(Settings(sys.argv[1], sys.argv[1] + "-no-ark", sys.argv[2], None, int(sys.argv[3]), "127.0.0.1"), quiet=True)
print("exited cleanly", flush=True)
"""


@pytest.mark.slow
def test_sigterm_while_a_model_is_encoding_exits_cleanly(tiny: dict, tmp_path: Path) -> None:
    db = Database(tmp_path / "space.sqlite")
    sid = submit(db, tiny, tiny["run"], "tiny-random-clip").submission_id
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    flag = tmp_path / "encoding"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "GRADIO_TEMP_DIR": str(tmp_path / "gradio"),
    }
    env.pop("TRIAD_SPACE_VERIFY_MODELS", None)  # the default set: tiny-random-clip is checked on this server
    args = [str(tiny["root"] / "triad"), str(db.path), str(port), str(flag)]
    proc = subprocess.Popen(
        [sys.executable, "-c", SIGTERM_SERVER, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 180
        while not flag.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the check did not start"
            time.sleep(0.2)
        time.sleep(1.0)  # inside the model's native code
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert "exited cleanly" in out
    for abort in ("terminate called", "Aborted", "core dumped", "Fatal Python error"):
        assert abort not in err, err[-2000:]
    assert "submission 1 left pending (shutting down)" in err
    assert _rows(Database(db.path))[sid]["status"] == verify.PENDING
