"""End to end: the Gradio app on 127.0.0.1, a `triad run` output submitted with gradio_client, read back from
/leaderboard; 20 parallel API submissions; a restart; a Chromium browser check that user strings stay text."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ark_dataset import names as ark_names
from spaces_app import testing as T
from spaces_app.settings import Settings
from triad_dataset import names as n

XSS = "<img src=x onerror=alert(1)>"
XSS_FAMILY = "<script>alert(2)</script>"
MARKDOWN_NAME = "form **md** [x](https://example.org/x)"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
N_PARALLEL = 20
TOKEN = "test-admin-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(settings: Settings):
    from spaces_app.app import CSS, build_app

    demo = build_app(settings)
    demo.queue(default_concurrency_limit=4)
    demo.launch(server_name="127.0.0.1", server_port=settings.port, prevent_thread_lock=True, quiet=True, css=CSS)
    return demo


def run_files(run: Path) -> list[Path]:
    return sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"]


@pytest.fixture(scope="module")
def space(tmp_path_factory: pytest.TempPathFactory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRADIO_ANALYTICS_ENABLED", "False")
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRIAD_SPACE_RATE_LIMIT", "100/3600")  # every client here is 127.0.0.1
        yield from _space(tmp_path_factory)


def _space(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("space_app")
    tables = T.triad_tables(3, 10, seed=2, configs=n.MAIN_CONFIGS)
    T.write_triad_gold(root / "triad", tables, 10, with_corpora=True)
    ark = T.ark_tables(4, 30, seed=9, subtypes=ark_names.SUBTYPES[:2])
    T.write_ark_gold(root / "ark", ark)
    # the run a user makes: `triad run` with the tiny random model (randomly initialised; a test, not a result)
    cmd = [sys.executable, "-m", "triad_dataset.cli", "run", "--model", "tiny-random-clip", "--data",
           str(root / "triad"), "--out", str(root / "run"), "--no-validate", "--quiet", "--cache-dir",
           str(root / "cache")]
    subprocess.run(cmd, check=True, env={**os.environ, "TOKENIZERS_PARALLELISM": "false"}, timeout=300)
    settings = Settings(root / "triad", root / "ark", root / "space.sqlite", TOKEN, free_port(), "127.0.0.1")
    demo = start(settings)
    from gradio_client import Client

    client = Client(f"http://127.0.0.1:{settings.port}/", verbose=False)
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
        "Rejected: these rankings were already submitted as submission id 1 (tiny-random-clip (test)). Nothing was stored.")


def test_only_the_two_public_endpoints(space: dict) -> None:
    api = space["client"].view_api(return_format="dict", print_info=False)
    assert set(api["named_endpoints"]) == {"/submit", "/leaderboard"}
    assert api["unnamed_endpoints"] == {}


def test_rejection_message_through_the_api(space: dict) -> None:
    files = [f for f in run_files(space["root"] / "run") if f.stem != n.ABSTRACTION_CONFIGS[1]]
    msg = submit(space["client"], files, "incomplete")
    assert msg == (f"Rejected: missing main subset(s): {n.ABSTRACTION_CONFIGS[1]} (C2I); all six are needed "
                   "(paper Table 2). Nothing was stored.")


def test_ark_submission_and_table(space: dict) -> None:
    ark = space["ark"]
    run = T.write_run(space["root"] / "ark_run", ark, T.ark_random_rankings(ark, seed=1), benchmark="ark")
    msg = submit(space["client"], run_files(run), "ark model")
    assert msg.startswith("Accepted: submission id ") and "(ARK, 2 configs)" in msg, msg
    rows = space["client"].predict("ark", api_name="/leaderboard")
    assert [r["Model"] for r in rows] == ["ark model"]
    assert set(rows[0]) >= {"R@1 macro", "Visual Cognition"}


def test_parallel_api_submissions(space: dict) -> None:
    tables, root, client = space["tables"], space["root"], space["client"]
    runs = [T.write_run(root / f"p{i}", tables, T.random_rankings(tables, seed=500 + i)) for i in range(N_PARALLEL)]
    before = {r["id"] for r in client.predict(api_name="/leaderboard")}
    with ThreadPoolExecutor(N_PARALLEL) as pool:
        messages = list(pool.map(lambda i: submit(client, run_files(runs[i]), f"parallel {i}"), range(N_PARALLEL)))
    assert all(m.startswith("Accepted") for m in messages), [m for m in messages if not m.startswith("Accepted")]
    rows = client.predict(api_name="/leaderboard")
    assert {r["Model"] for r in rows if r["id"] not in before} == {f"parallel {i}" for i in range(N_PARALLEL)}
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
    from playwright.sync_api import sync_playwright

    tables, root = space["tables"], space["root"]
    run = T.write_run(root / "xss_run", tables, T.random_rankings(tables, seed=77))
    assert submit(space["client"], run_files(run), XSS, family=XSS_FAMILY).startswith("Accepted")
    ark_run = T.write_run(root / "ark_browser", space["ark"], T.ark_random_rankings(space["ark"], seed=55), benchmark="ark")
    assert submit(space["client"], run_files(ark_run), "ark in the browser").startswith("Accepted")
    url = f"http://127.0.0.1:{space['settings'].port}/"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            dialogs: list[str] = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(url)
            table = page.locator("#main-table")
            table.get_by_text(XSS, exact=True).filter(visible=True).first.wait_for(timeout=30_000)  # verbatim text
            assert table.get_by_text(XSS_FAMILY, exact=True).filter(visible=True).count() >= 1
            for tab in ("Reference tasks", "Diagnostics", "Rank range", "Compare", "ARK", "Submit", "TRIAD"):
                page.get_by_role("tab", name=tab).click()
                page.wait_for_timeout(300)
            page.get_by_role("tab", name="ARK").click()
            ark_cell = page.locator("#ark-table").get_by_text("ark in the browser", exact=True).filter(visible=True)
            ark_cell.first.wait_for(timeout=10_000)
            page.get_by_role("tab", name="TRIAD").click()
            page.wait_for_timeout(500)
            # a submission through the UI form appears in the table with the server's numbers
            ui_run = T.write_run(root / "ui_run", tables, T.random_rankings(tables, seed=78))
            page.get_by_role("tab", name="Submit").click()
            page.locator("#upload input[type=file]").set_input_files([str(f) for f in run_files(ui_run)])
            page.get_by_role("textbox", name="Model name", exact=True).fill(MARKDOWN_NAME)
            page.get_by_role("textbox", name="Parameters (e.g. 86M, 1.5B)").fill("86M")
            page.wait_for_timeout(1500)  # uploads finish
            page.get_by_role("button", name="Submit", exact=True).click()
            status = page.locator("#status textarea")
            page.wait_for_function("document.querySelector('#status textarea').value.length > 0", timeout=30_000)
            assert status.input_value().startswith("Accepted: submission id "), status.input_value()
            page.get_by_role("tab", name="TRIAD").click()
            form_cell = page.locator("#main-table").get_by_text(MARKDOWN_NAME, exact=True)  # Markdown not rendered
            form_cell.filter(visible=True).first.wait_for(timeout=15_000)
            assert page.locator('a[href="https://example.org/x"]').count() == 0
            assert page.locator('img[src="x"]').count() == 0  # never parsed as markup
            assert page.locator("script", has_text="alert(2)").count() == 0
            assert dialogs == []  # no alert() ever ran
        finally:
            browser.close()
