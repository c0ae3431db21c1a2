"""End to end: the Gradio app on 127.0.0.1, a `triad run` output submitted with gradio_client, read back from
/leaderboard and /submission; 50 parallel API submissions; a restart; every handler called over the queue route
without the admin token (no address, no server path comes back); forged X-Forwarded-For; the upload guard and the
admin-token throttle; a Chromium browser check that user strings stay text."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import socket
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

from ark_dataset import names as ark_names
from spaces_app.settings import Settings
from tests.doubles import space_runs as testing
from triad_dataset.contract import names as n

pytestmark = pytest.mark.slow  # one Space server for the module; its tests run in order on its state

XSS = "<img src=x onerror=alert(1)>"
XSS_FAMILY = "<script>alert(2)</script>"
MARKDOWN_NAME = "form **md** [x](https://example.org/x)"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
N_PARALLEL = 50
TOKEN = "test-admin-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(settings: Settings):
    from spaces_app.app import launch

    return launch(settings, prevent_thread_lock=True, quiet=True)  # with the upload guard, as served


def run_files(run: Path) -> list[Path]:
    return sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"]


@pytest.fixture(scope="module")
def space(tmp_path_factory: pytest.TempPathFactory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRADIO_ANALYTICS_ENABLED", "False")
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRIAD_SPACE_RATE_LIMIT", "200/3600")  # every client here is 127.0.0.1
        mp.setenv("TRIAD_SPACE_UPLOAD_LIMIT", "5000/3600")
        yield from _space(tmp_path_factory)


def _space(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("space_app")
    tables = testing.triad_tables(3, 10, seed=2, configs=n.MAIN_CONFIGS)
    testing.write_triad_gold(root / "triad", tables, 10, with_corpora=True)
    ark = testing.ark_tables(4, 30, seed=9, subtypes=ark_names.SUBTYPES[:2])
    testing.write_ark_gold(root / "ark", ark)
    # the run a user makes: `triad run` with the tiny random model (randomly initialised; a test, not a result)
    cmd = [
        sys.executable,
        "-m",
        "triad_cli",
        "run",
        "--model",
        "tiny-random-clip",
        "--data",
        str(root / "triad"),
        "--out",
        str(root / "run"),
        "--no-validate",
        "--quiet",
        "--cache-dir",
        str(root / "cache"),
    ]
    subprocess.run(cmd, check=True, env={**os.environ, "TOKENIZERS_PARALLELISM": "false"}, timeout=300)
    settings = Settings(root / "triad", root / "ark", root / "space.sqlite", TOKEN, free_port(), "127.0.0.1")
    demo = start(settings)
    from gradio_client import Client

    client = Client(f"http://127.0.0.1:{settings.port}/", verbose=False, httpx_kwargs={"timeout": 300})
    yield {"root": root, "tables": tables, "ark": ark, "settings": settings, "client": client, "demo": demo}
    demo.close()


def submit(client, files: list[Path], name: str, family: str = "dual-tower", link: str = "", params: str = "") -> str:
    from gradio_client import handle_file

    return client.predict([handle_file(str(f)) for f in files], name, link, family, params, api_name="/submit")


def row_of(rows: list[dict], name: str) -> dict:
    found = [r for r in rows if r["Model"] == name]
    assert len(found) == 1, rows
    return found[0]


def test_submit_triad_run_and_read_back(space: dict) -> None:
    client, run = space["client"], space["root"] / "run"
    msg = submit(client, run_files(run), "tiny-random-clip (test)", link="https://example.org/tiny", params="2M")
    assert msg.startswith("Accepted: submission id 1 (TRIAD, 6 configs), scored on the server."), msg
    assert "results.json: " in msg and "numbers match the server's" in msg and "differ" not in msg
    rows = client.predict(api_name="/leaderboard")
    row = row_of(rows, "tiny-random-clip (test)")
    results = json.loads((run / "results.json").read_text())
    for c in n.MAIN_CONFIGS:
        assert row[n.DISPLAY_NAMES[c]] == round(results["configs"][c]["metrics"]["map"], 3)
    assert (row["Family"], row["Params"]) == ("dual-tower", "2M")
    assert "Self-I2C" in row and row["Self-I2C"] is None  # reference configs absent from this gold: empty
    # the same run zipped is the same rankings: detected as a duplicate
    archive = space["root"] / "run.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for f in run_files(run):
            zf.write(f, "run/" + str(f.relative_to(run)))
    assert submit(client, [archive], "again") == (
        "Rejected: these rankings were already submitted as submission id 1 (tiny-random-clip (test)). Nothing was stored."
    )
    # the Space's own CPU queue takes a first look at the sample, then makes its own run of the registry model the
    # run names and compares every query
    import time

    deadline = time.monotonic() + 180
    while (record := client.predict(1, api_name="/submission"))["verification"]["status"] == "pending":
        assert time.monotonic() < deadline, record["verification"]
        time.sleep(1)
    assert record["verification"]["status"] == "verified", record["verification"]
    assert record["verification"]["result"]["disagreeing"] == 0 and record["verification"]["result"]["queries"] == 18
    row = row_of(client.predict(api_name="/leaderboard"), "tiny-random-clip (test)")
    assert row["Status"].startswith("verified as tiny-random-clip (the leaderboard's own run: all 18 queries")
    assert row["Rank"] == "1" and record["verification"]["full"]["queries"] == 18


def test_the_objects_alive_at_start_up_are_frozen_while_serving(space: dict) -> None:
    """`launch` freezes what the gold load left alive, so full garbage collections skip it while the server runs."""
    import gc

    assert gc.get_freeze_count() > 0


def test_triad_space_verify_through_the_admin_api(space: dict) -> None:
    """`triad space verify --url --token` re-checks a submission of a running Space through its admin-token API."""
    import gradio_client

    from triad_cli.main import main

    url = f"http://127.0.0.1:{space['settings'].port}/"
    with pytest.raises(gradio_client.exceptions.AppError, match="wrong admin token"):
        space["client"].predict("not the token", None, api_name="/verify_tasks")
    tasks = space["client"].predict(TOKEN, 1, api_name="/verify_tasks")
    assert [t["id"] for t in tasks] == [1] and tasks[0]["verify"]["sample"]["queries"]  # the secret sample
    assert (
        main(["space", "verify", "--url", url, "--token", TOKEN, "--id", "1", "--data", str(space["root"] / "triad")])
        == 0
    )
    record = space["client"].predict(1, api_name="/submission")
    assert record["verification"]["status"] == "verified"


def test_a_verifier_machine_makes_the_reference_run_the_space_does_not(
    space: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model the Space does not run itself waits for `triad space verify --url --token --pending`, which claims the
    wanted reference run, makes it in a child process and posts it; the Space then judges the row against it."""
    from triad_cli.main import main

    root, client = space["root"], space["client"]
    monkeypatch.setenv("TRIAD_SPACE_VERIFY_MODELS", "none")  # this server's queue makes no reference run now
    run = root / "run-siglip"
    cmd = [sys.executable, "-m", "triad_cli", "run", "--model", "tiny-random-siglip", "--no-validate"]
    cmd += ["--data", str(root / "triad"), "--out", str(run), "--quiet", "--cache-dir", str(root / "cache")]
    subprocess.run(cmd, check=True, env={**os.environ, "TOKENIZERS_PARALLELISM": "false"}, timeout=300)
    answer = submit(client, run_files(run), "tiny-random-siglip (on a verifier)")
    assert answer.startswith("Accepted") and "pending" in answer, answer
    sid = int(answer.split("submission id ")[1].split(" ")[0])
    wanted = client.predict(TOKEN, api_name="/reference_tasks")
    assert [(w["spec"], w["variant"]) for w in wanted] == [("tiny-random-siglip", "full")]
    url = f"http://127.0.0.1:{space['settings'].port}/"
    verifier = ["space", "verify", "--url", url, "--token", TOKEN, "--pending", "--data", str(root / "triad")]
    monkeypatch.setenv("TRIAD_SPACE_CACHE", str(root / "verifier-cache"))
    assert main(verifier) == 0
    assert client.predict(TOKEN, api_name="/reference_tasks") == []  # made, posted and stored
    record = client.predict(sid, api_name="/submission")
    assert record["verification"]["status"] == "verified", record["verification"]
    assert record["verification"]["full"]["queries"] == 18


def test_only_the_public_endpoints(space: dict) -> None:
    api = space["client"].view_api(return_format="dict", print_info=False)
    assert set(api["named_endpoints"]) == {
        "/submit",
        "/leaderboard",
        "/submission",
        "/request_evaluation",
        "/verify_tasks",
        "/verify_report",
        "/verify_claim",
        "/reference_tasks",
        "/reference_report",
    }  # the verify_* and reference_* endpoints need the admin token
    assert api["unnamed_endpoints"] == {}


def test_rejection_message_through_the_api(space: dict) -> None:
    files = [f for f in run_files(space["root"] / "run") if f.stem != n.ABSTRACTION_CONFIGS[1]]
    msg = submit(space["client"], files, "incomplete")
    assert msg == (
        f"Rejected: missing main subset(s): {n.ABSTRACTION_CONFIGS[1]} (C2I); all six are needed "
        "(paper Table 2). Nothing was stored."
    )


def test_ark_submission_and_table(space: dict) -> None:
    ark = space["ark"]
    run = testing.write_run(space["root"] / "ark_run", ark, testing.ark_random_rankings(ark, seed=1), benchmark="ark")
    msg = submit(space["client"], run_files(run), "ark model")
    assert msg.startswith("Accepted: submission id ") and "(ARK, 2 configs)" in msg, msg
    rows = space["client"].predict("ark", api_name="/leaderboard")
    assert [r["Model"] for r in rows] == ["ark model"]
    assert set(rows[0]) >= {"R@1 macro", "Visual Cognition"}


def test_parallel_api_submissions(space: dict) -> None:
    tables, root, client = space["tables"], space["root"], space["client"]
    runs = [
        testing.write_run(root / f"p{i}", tables, testing.random_rankings(tables, seed=500 + i))
        for i in range(N_PARALLEL)
    ]
    before = {r["id"] for r in client.predict(api_name="/leaderboard")}
    with ThreadPoolExecutor(N_PARALLEL) as pool:
        messages = list(pool.map(lambda i: submit(client, run_files(runs[i]), f"parallel {i}"), range(N_PARALLEL)))
    assert all(m.startswith("Accepted") for m in messages), [m for m in messages if not m.startswith("Accepted")]
    rows = client.predict(api_name="/leaderboard")
    new = [r["Model"] for r in rows if r["id"] not in before]
    assert sorted(new) == sorted(f"parallel {i}" for i in range(N_PARALLEL))  # 50 accepted, 50 stored, 0 lost
    from spaces_app.db import Database

    assert Database(space["settings"].db_path).integrity_ok()


def test_restart_serves_the_same_leaderboard(space: dict) -> None:
    from gradio_client import Client

    rows_before = space["client"].predict(api_name="/leaderboard")
    settings = Settings(**{**space["settings"].__dict__, "port": free_port()})
    demo = start(settings)
    try:
        rows_after = Client(f"http://127.0.0.1:{settings.port}/", verbose=False).predict(api_name="/leaderboard")
    finally:
        demo.close()
    assert rows_after == rows_before and len(rows_after) >= 1


@pytest.mark.browser
def test_browser_shows_user_strings_as_text(space: dict) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (install Debian's chromium: apt-get install -y chromium)")
    from playwright.sync_api import TimeoutError as PageTimeout
    from playwright.sync_api import sync_playwright

    tables, root = space["tables"], space["root"]
    run = testing.write_run(root / "xss_run", tables, testing.random_rankings(tables, seed=77))
    assert submit(space["client"], run_files(run), XSS, family=XSS_FAMILY).startswith("Accepted")
    ark_run = testing.write_run(
        root / "ark_browser", space["ark"], testing.ark_random_rankings(space["ark"], seed=55), benchmark="ark"
    )
    assert submit(space["client"], run_files(ark_run), "ark in the browser").startswith("Accepted")
    url = f"http://127.0.0.1:{space['settings'].port}/"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            dialogs: list[str] = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(url)
            search = page.get_by_role("textbox", name="Search model name")
            search.fill("onerror")  # the table holds 50+ models by now: show the hostile row by searching for it
            search.press("Enter")
            table = page.locator("#main-table")
            table.get_by_text(XSS, exact=True).filter(visible=True).first.wait_for(timeout=30_000)  # verbatim text
            # the family is served verbatim (the page's `script` check below shows it never became markup); its cell's
            # on-screen visibility after the search was flaky in full-suite runs, so it is read through the API
            rows = space["client"].predict(api_name="/leaderboard")
            assert [r["Family"] for r in rows if r["Model"] == XSS] == [XSS_FAMILY]
            for tab in ("Reference tasks", "Diagnostics", "Rank range", "Compare", "ARK", "Submit", "TRIAD"):
                page.get_by_role("tab", name=tab).click()
                page.wait_for_timeout(300)
            page.get_by_role("tab", name="ARK").click()
            ark_cell = page.locator("#ark-table").get_by_text("ark in the browser", exact=True).filter(visible=True)
            ark_cell.first.wait_for(timeout=10_000)
            page.get_by_role("tab", name="TRIAD").click()
            page.wait_for_timeout(500)
            # a submission through the UI form appears in the table with the server's numbers
            ui_run = testing.write_run(root / "ui_run", tables, testing.random_rankings(tables, seed=78))
            page.get_by_role("tab", name="Submit").click()
            page.locator("#upload input[type=file]").set_input_files([str(f) for f in run_files(ui_run)])
            page.get_by_role("textbox", name="Model name", exact=True).fill(MARKDOWN_NAME)
            page.get_by_role("textbox", name="Parameters (e.g. 86M, 1.5B)").fill("86M")
            page.wait_for_timeout(1500)  # uploads finish
            page.get_by_role("button", name="Submit", exact=True).click()
            status = page.locator("#status textarea")
            page.wait_for_function("document.querySelector('#status textarea').value.length > 0", timeout=30_000)
            assert status.input_value().startswith("Accepted: submission id "), status.input_value()
            assert MARKDOWN_NAME in [r["Model"] for r in space["client"].predict(api_name="/leaderboard")]
            page.get_by_role("tab", name="TRIAD").click()
            form_cell = page.locator("#main-table").get_by_text(MARKDOWN_NAME, exact=True).filter(visible=True)
            for attempt in range(
                3
            ):  # the submit's chained table refresh (app.py: .then(refresh, [search, ...])) may land
                search.fill(
                    "form **md**"
                )  # after a search typed while it was pending, showing the older filter; search again
                search.press("Enter")
                try:
                    form_cell.first.wait_for(timeout=10_000)  # Markdown not rendered: the name is shown verbatim
                    break
                except PageTimeout:
                    if attempt == 2:
                        raise
            assert page.locator('a[href="https://example.org/x"]').count() == 0
            assert page.locator('img[src="x"]').count() == 0  # never parsed as markup
            assert page.locator("script", has_text="alert(2)").count() == 0
            assert dialogs == []  # no alert() ever ran
        finally:
            browser.close()


# --- hostile callers ---------------------------------------------------------------------------------------------
FORGED = "203.0.113.9"


def call_over_queue(port: int, fn_index: int, data: list, headers: dict | None = None) -> dict:
    """What a browser (or anyone) gets calling one event handler through Gradio's queue, by its index."""
    import uuid

    import httpx

    session = uuid.uuid4().hex[:12]
    base = f"http://127.0.0.1:{port}/gradio_api"
    joined = httpx.post(
        f"{base}/queue/join",
        json={"data": data, "fn_index": fn_index, "session_hash": session, "event_data": None, "trigger_id": None},
        headers=headers or {},
        timeout=30,
    )
    joined.raise_for_status()
    with httpx.stream("GET", f"{base}/queue/data", params={"session_hash": session}, timeout=60) as resp:
        for line in resp.iter_lines():
            if line.startswith("data:"):
                msg = json.loads(line[5:])
                if msg.get("msg") == "process_completed":
                    return msg
    raise AssertionError(f"fn {fn_index}: no result")


def gradio_upload_path(name: str, data: bytes) -> Path:
    """Where Gradio keeps an upload: <upload dir>/<salted sha256 of its bytes>/<name> (gradio.route_utils)."""
    from gradio import processing_utils

    from spaces_app.guard import upload_dir

    return upload_dir() / hashlib.sha256(processing_utils.hash_seed + data).hexdigest() / name


def test_forged_forwarded_for_is_ignored(space: dict) -> None:
    from gradio_client import Client

    from spaces_app.db import Database
    from spaces_app.identity import address_key

    tables = space["tables"]
    run = testing.write_run(space["root"] / "forged", tables, testing.random_rankings(tables, seed=4242))
    client = Client(f"http://127.0.0.1:{space['settings'].port}/", verbose=False, headers={"X-Forwarded-For": FORGED})
    msg = submit(client, run_files(run), "forged header")
    assert msg.startswith("Accepted"), msg
    stored_as = [gradio_upload_path(f.name, f.read_bytes()) for f in run_files(run)]
    from spaces_app import guard

    assert all(p.exists() for p in stored_as)  # a claim never removes a shared upload ...
    old = time.time() - 2 * guard.UPLOAD_MAX_AGE_S
    for p in stored_as:
        os.utime(p, (old, old))
    guard.sweep()
    assert [p for p in stored_as if p.exists()] == []  # ... the sweeper removes it once aged out
    db = Database(space["settings"].db_path)
    stored = next(s for s in db.submissions(include_hidden=True) if s["model_name"] == "forged header")
    # the TCP peer, not the header: a loopback peer on a board without login is the local owner
    assert stored["submitter"] == "local" != address_key(FORGED, db.secret())


def test_no_handler_returns_addresses_or_paths(space: dict) -> None:
    import gradio as gr

    settings, root = space["settings"], space["root"]
    rows = space["client"].predict(api_name="/leaderboard")
    if not rows:  # run on its own: store the fixture's run first
        submit(space["client"], run_files(space["root"] / "run"), "tiny-random-clip (handlers)")
        rows = space["client"].predict(api_name="/leaderboard")
    sid = rows[0]["id"]
    sid2 = rows[-1]["id"]
    demo = space["demo"]
    args = {
        "refresh": ["", "All families", "I2C", False],
        "triad_table": ["", "All families", "I2C", False],
        "reference_table": ["", "All families"],
        "detail": [sid],
        "diagnostics": [sid],
        "rank_range": ["All families", False],
        "compare": [sid, sid2],
        "submit": [None, "x", "", "other", ""],
        "admin": ["not the token", sid, "hide"],
        "leaderboard": ["triad"],
        "submission": [sid],
        "verify_tasks": ["not the token", None],
        "verify_report": ["not the token", sid, "verified", "{}"],
        "verify_claim": ["not the token", f"row:{sid}", "w", "claim"],
        "reference_tasks": ["not the token"],
        "reference_report": ["not the token", "{}", ""],
        "request_evaluation": ["no-such-model", "triad"],
        "explorer_choices": ["triad"],
        "explorer_show": ["triad", sid, sid2, n.MAIN_CONFIGS[0], "worst AP", "", 10],
    }
    assert {fn.name for fn in demo.fns.values()} == set(args)  # every handler of the app is called below
    forbidden = ["127.0.0.1", FORGED, str(root), str(settings.db_path), "ip:"]
    request = SimpleNamespace(
        client=SimpleNamespace(host="127.0.0.1"), headers={"x-forwarded-for": FORGED}, username=None
    )
    for index, fn in demo.fns.items():
        # over the queue route, as any visitor can (dropdown values outside the page's choices are refused there) ...
        result = call_over_queue(settings.port, index, args[fn.name], headers={"X-Forwarded-For": FORGED})
        text = json.dumps(result)
        # ... and the handler itself, as if the page had offered those values
        params = inspect.signature(fn.fn).parameters
        try:
            direct = fn.fn(*args[fn.name], *([request] if "request" in params else []))
        except gr.Error as refused:  # the admin-token API refuses a wrong token
            direct = str(refused)
        text += repr(
            [x.to_json() if hasattr(x, "to_json") else x for x in (direct if isinstance(direct, tuple) else (direct,))]
        )
        for bad in forbidden:
            assert bad not in text, (fn.name, bad)
    record = space["client"].predict(sid, api_name="/submission")
    assert record["id"] == sid and record["submitter"] == "local"  # a submission from this machine (no login)
    assert "sample" not in record["verification"]  # the secret sample never leaves through it
    first = n.MAIN_CONFIGS[0]
    assert len(record["scores"][first]["interval"]) == 2 and "metrics" in record["summary"][first]


def test_upload_guard_and_admin_throttle(space: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx

    from spaces_app.guard import upload_dir

    monkeypatch.setenv("TRIAD_SPACE_UPLOAD_LIMIT", "3/3600")
    monkeypatch.setenv("TRIAD_SPACE_ADMIN_LIMIT", "5/900")
    settings = Settings(
        **{**space["settings"].__dict__, "port": free_port(), "db_path": space["root"] / "guarded.sqlite"}
    )
    demo = start(settings)
    try:
        url = f"http://127.0.0.1:{settings.port}/gradio_api/upload"
        before = set(upload_dir().rglob("payload.exe"))
        refused = httpx.post(url, files={"files": ("payload.exe", b"MZ" * 1000)})
        assert refused.status_code == 415 and "only .parquet, .json, .zip" in refused.text
        assert set(upload_dir().rglob("payload.exe")) == before  # deleted at once, not kept for an hour
        answers = [httpx.post(url, files={"files": ("results.json", b"{}")}) for _ in range(3)]
        assert [a.status_code for a in answers] == [200, 200, 429]  # the refused one counted: 3 per hour per client
        # where Gradio keeps an upload (what test_forged_forwarded_for_is_ignored checks is gone after a submission)
        assert Path(answers[0].json()[0]) == gradio_upload_path("results.json", b"{}")
        admin = next(i for i, fn in demo.fns.items() if fn.name == "admin")
        for _ in range(5):
            out = call_over_queue(settings.port, admin, ["wrong", 1, "hide"])
            assert out["output"]["data"][0] == "Wrong admin token."
        out = call_over_queue(settings.port, admin, [TOKEN, 1, "hide"])
        assert out["output"]["data"][0].startswith("Too many wrong admin tokens from this client")
    finally:
        demo.close()


def test_every_error_is_one_named_line(space: dict) -> None:
    """No {"error": null}: Gradio's own errors (a file outside the uploads, too few inputs) are named, and a long
    refused value is cut; an evaluation request for a test model is refused in one line."""
    index = {fn.name: i for i, fn in space["demo"].fns.items()}
    outside = {"path": "/etc/hostname", "meta": {"_type": "gradio.FileData"}, "orig_name": "results.json"}
    cases = {
        "submit": ([[outside], "x", "", "other", ""], "a file this server did not receive as an upload was named"),
        "verify_report": ([TOKEN, 1], "wrong number of inputs: this endpoint takes 4, it got 2"),
        "request_evaluation": (["minilm"], "wrong number of inputs: this endpoint takes 2, it got 1"),
        "detail": (["1" * 100_000], "Value: 111"),
    }
    for name, (data, said) in cases.items():
        error = call_over_queue(space["settings"].port, index[name], data)["output"]["error"]
        assert error and said in error and len(error) <= 300 and "\n" not in error, (name, error)
    assert space["client"].predict("tiny-random-clip", "triad", api_name="/request_evaluation") == (
        "Rejected: model tiny-random-clip is a test model with random weights: its numbers are not results. "
        "Nothing was stored."
    )
