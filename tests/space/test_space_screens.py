"""In Chromium: every tab of the leaderboard, served without an admin token, shows the track headers, the
chance level, the links and the plots (each with its table one click away), and no Admin tab. A screenshot of
every tab is saved to artifacts/space/ (git-ignored; TRIAD_ARTIFACTS=DIR saves them under DIR/space/ instead)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ark_dataset import names as ark_names
from spaces_app import chance, legend
from spaces_app.gold import load_gold
from spaces_app.settings import Settings
from spaces_app.submit import submit_run_dir
from tests.doubles import space_runs as testing
from triad_dataset.contract import names as n

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TRIAD_MODELS = (("random ranking", 0.0), ("model-small", 1.0), ("model-large", 2.2))
ARK_MODELS = (("ark random", 0.0), ("ark model", 2.5))

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def artifacts() -> Path:
    base = Path(os.environ["TRIAD_ARTIFACTS"]) if os.environ.get("TRIAD_ARTIFACTS") else ROOT / "artifacts"
    out = base / "space"
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (install Debian's chromium: apt-get install -y chromium)")
    root = tmp_path_factory.mktemp("space_screens")
    tables = testing.triad_tables(40, 120, seed=3)
    testing.write_triad_gold(root / "triad", tables, 120)
    ark = testing.ark_tables(20, 50, seed=9, subtypes=ark_names.SUBTYPES[:6])
    testing.write_ark_gold(root / "ark", ark)
    db, gold = root / "space.sqlite", {"triad": root / "triad", "ark": root / "ark"}
    for i, (name, skill) in enumerate(TRIAD_MODELS):
        run = testing.write_run(root / f"run{i}", tables, testing.skilled_rankings(tables, skill, seed=10 + i))
        submit_run_dir(db, gold, run, model_name=name, family="dual-tower", params="86M")
    for i, (name, skill) in enumerate(ARK_MODELS):
        run = testing.write_run(
            root / f"ark{i}", ark, testing.ark_skilled_rankings(ark, skill, seed=20 + i), benchmark="ark"
        )
        submit_run_dir(db, gold, run, model_name=name, family="vlm")
    with served(root / "triad", root / "ark", db) as url:
        yield {"url": url, "chance": chance.triad_chance(load_gold(root / "triad"))}


@contextmanager
def served(triad: Path, ark: Path, db: Path) -> Iterator[str]:
    """The Space on a free local port, offline, with no links or admin token configured; yields its address."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRADIO_ANALYTICS_ENABLED", "False")
        mp.setenv("HF_HUB_OFFLINE", "1")
        for var in (legend.REPO_URL_ENV, legend.DATASET_URL_ENV, "SPACE_ID", "TRIAD_SPACE_ADMIN_TOKEN"):
            mp.delenv(var, raising=False)
        from spaces_app.app import launch

        demo = launch(Settings(triad, ark, db, None, port, "127.0.0.1"), prevent_thread_lock=True, quiet=True)
        try:
            yield f"http://127.0.0.1:{port}/"
        finally:
            demo.close()


@pytest.fixture(scope="module")
def page(board: dict):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            tab = browser.new_page(viewport={"width": 1300, "height": 900})
            tab.goto(board["url"])
            tab.locator("#main-table").get_by_text("model-large", exact=True).first.wait_for(timeout=60_000)
            yield tab
        finally:
            browser.close()


def _open(page, tab: str) -> None:
    page.get_by_role("tab", name=tab, exact=True).click()
    page.wait_for_timeout(500)


def _plot(page, elem_id: str) -> None:
    """The plot in `#elem_id` rendered as an image with a non-trivial size."""
    img = page.locator(f"#{elem_id} img").first
    img.wait_for(timeout=60_000)
    box = img.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 150, (elem_id, box)


def _table_one_click_away(page, accordion: str, header: str) -> None:
    page.get_by_text(accordion, exact=True).click()
    page.get_by_role("columnheader", name=header).first.wait_for(timeout=30_000)


def _shot(page, name: str) -> None:
    page.wait_for_timeout(800)
    page.screenshot(path=str(artifacts() / f"{name}.png"), full_page=True)


def test_triad_tab_explains_its_columns_and_links_the_papers(page, board: dict) -> None:
    tabs = [t.inner_text().strip() for t in page.get_by_role("tab").all()]
    assert "Admin" not in tabs and tabs[0] == "TRIAD" and "About" in tabs  # no token configured: no Admin tab
    table = page.locator("#main-table")
    for c in n.MAIN_CONFIGS:
        table.get_by_role("columnheader", name=legend.header(c)).first.wait_for(timeout=10_000)
    legend_box = page.locator("#legend")
    for c in n.MAIN_CONFIGS:
        assert f"{board['chance'][c]:.4f}" in legend_box.inner_text()  # the chance level of the served gold
    assert "chance mAP" in legend_box.inner_text()
    assert page.locator(f'#links a[href="{legend.TRIAD_PAPER_URL}"]').count() == 1
    assert legend.ARK_TITLE in page.locator("#links").inner_text()
    _shot(page, "triad")
    _open(page, "Reference tasks")
    page.get_by_role("columnheader", name=legend.header(n.REFERENCE_CONFIGS[0])).first.wait_for(timeout=10_000)
    _shot(page, "reference")


def test_diagnostics_plots_with_their_tables(page) -> None:
    _open(page, "Diagnostics")
    for elem in ("depth-plot", "profile-plot", "cost-plot"):
        _plot(page, elem)
    _table_one_click_away(page, "C2I mAP by concept depth: table", "Depth")
    _table_one_click_away(page, "mAP by profile: table", "Conditions")
    _table_one_click_away(page, "Dialogue cost: table", "Session")
    _shot(page, "diagnostics")


def test_rank_range_tab(page) -> None:
    _open(page, "Rank range")
    page.get_by_text("Rank per subset (average ranks for ties)").first.wait_for(timeout=10_000)
    _shot(page, "rank_range")


def test_compare_states_its_rule_and_draws_the_forest(page) -> None:
    _open(page, "Compare")
    assert "Wilcoxon signed-rank" in page.get_by_text("is decided by the paper's test").first.inner_text()
    page.get_by_role("button", name="Compare", exact=True).click()
    _plot(page, "compare-plot")
    _table_one_click_away(page, "Paired comparison per subset: table", "Significant?")
    cells = page.locator("#compare-table").get_by_text("yes: ", exact=False).filter(visible=True)
    cells.first.wait_for(timeout=10_000)  # random ranking vs model-small: B is better on some subset
    _shot(page, "compare")


def test_ark_tab_bars_with_their_tables(page) -> None:
    _open(page, "ARK")
    page.locator("#ark-table").get_by_text("ark model", exact=True).first.wait_for(timeout=10_000)
    _plot(page, "ark-domain-plot")
    _plot(page, "ark-skill-plot")
    assert "top 100 of its subtype's whole gallery" in page.get_by_text("writes each query's top").first.inner_text()
    assert "Chance R@1 (1 / gallery size" in page.get_by_text("Chance R@1").first.inner_text()
    _table_one_click_away(page, "R@1 per knowledge domain with 95% intervals: table", "95% CI low")
    _shot(page, "ark")


def test_submit_and_about_tabs(page) -> None:
    _open(page, "Submit")
    _shot(page, "submit")
    _open(page, "About")
    about = page.get_by_text("How submissions work").first
    about.wait_for(timeout=10_000)
    body = page.locator("body").inner_text()
    assert "--benchmark ark" not in body and "read from the dataset folder's audit.json" in body
    page.get_by_text("Dataset card of the TRIAD gold served here", exact=True).click()
    page.locator("#dataset-card").get_by_text("Synthetic TRIAD gold").wait_for(timeout=10_000)
    _shot(page, "about")
