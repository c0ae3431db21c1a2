"""In Chromium, a local board at a glance: at 1280 and 1920 px every TRIAD subset header lies inside the window, the
self-reported rows of a local board are ranked in order and marked so, the ARK tab with no submission says so
instead of showing empty tables, and the Explorer opens on the newest submission's worst query. Screenshots go to
the test's temporary folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ark_dataset import names as ark_names
from spaces_app import legend
from spaces_app.status import RANKED_APART, SHORT
from spaces_app.submit import submit_run_dir
from spaces_app.verify import UNVERIFIED
from tests.doubles import space_runs as testing
from tests.space.test_space_screens import ARGS, CHROMIUM, served
from triad_dataset.contract import names as n

WIDTHS = (1280, 1920)
MODELS = (("local-weak", 0.5), ("local-strong", 2.5), ("local-middle", 1.5))  # best first: strong, middle, weak
SELF = RANKED_APART[1]

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Three self-reported TRIAD rows (a local board: nothing verified) and an ARK gold with no row, served."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (install Debian's chromium: apt-get install -y chromium)")
    root = tmp_path_factory.mktemp("board_screens")
    tables = testing.triad_tables(12, 40, seed=4)
    testing.write_triad_gold(root / "triad", tables, 40)
    testing.write_ark_gold(root / "ark", testing.ark_tables(4, 20, seed=5, subtypes=ark_names.SUBTYPES[:2]))
    db, gold = root / "space.sqlite", {"triad": root / "triad", "ark": root / "ark"}
    for i, (name, skill) in enumerate(MODELS):
        run = testing.write_run(root / f"run{i}", tables, testing.skilled_rankings(tables, skill, seed=30 + i))
        outcome = submit_run_dir(db, gold, run, model_name=name, family="dual-tower", params="86M")
        assert outcome.accepted, outcome.message
    with served(root / "triad", root / "ark", db) as url:
        yield {"url": url, "shots": root / "shots"}


@pytest.fixture(scope="module")
def page(board: dict[str, Any]) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            tab = browser.new_page(viewport={"width": WIDTHS[0], "height": 900})
            tab.goto(board["url"])
            main = tab.locator("#main-table").get_by_text("local-strong", exact=True).filter(visible=True)
            main.first.wait_for(timeout=90_000)
            yield tab
        finally:
            browser.close()


def _shot(page: Any, board: dict[str, Any], name: str) -> Path:
    board["shots"].mkdir(exist_ok=True)
    path = board["shots"] / f"{name}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000
    return path


def test_six_subset_headers_inside_the_window(page: Any, board: dict[str, Any]) -> None:
    table = page.locator("#main-table")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_function(f"window.innerWidth === {width}")
        for c in n.MAIN_CONFIGS:
            header = table.get_by_role("columnheader", name=legend.header(c)).first
            header.wait_for(timeout=10_000)
            box = header.bounding_box()
            assert box is not None and box["width"] > 0, (c, width, box)
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, (c, width, box)  # no sideways scrolling
        _shot(page, board, f"board-{width}")
    page.set_viewport_size({"width": WIDTHS[0], "height": 900})


def test_local_rows_are_ranked_in_order_and_marked_self_reported(page: Any) -> None:
    table = page.locator("#main-table")

    def cell(text: str) -> Any:
        return table.get_by_text(text, exact=True).filter(visible=True)

    cell(f"3{SELF}").first.wait_for(timeout=10_000)
    ranks = [cell(f"{r}{SELF}").first for r in (1, 2, 3)]
    names = [cell(name).first for name in ("local-strong", "local-middle", "local-weak")]
    tops = [cell.bounding_box()["y"] for cell in ranks]
    assert tops == sorted(tops) and len(set(tops)) == 3  # rank 1, 2, 3 from the top down
    for rank, name in zip(ranks, names, strict=True):  # each beside its model, in the same table row
        r, m = rank.bounding_box(), name.bounding_box()
        assert r["y"] <= m["y"] + m["height"] / 2 <= r["y"] + r["height"], (r, m)
    assert cell(SHORT[UNVERIFIED]).count() == 3  # the marker, with no "unranked"
    assert table.get_by_text("unranked", exact=False).filter(visible=True).count() == 0


def test_ark_tab_without_submissions_says_so(page: Any, board: dict[str, Any]) -> None:
    page.get_by_role("tab", name="ARK", exact=True).click()
    empty = page.locator("#ark-empty").get_by_text("No ARK submission yet.", exact=True)
    empty.wait_for(timeout=10_000)
    assert "upload the run in the Submit tab" in page.locator("#ark-empty").inner_text()
    page.locator("#ark-table").wait_for(state="hidden", timeout=10_000)  # no table headed 1 2 3
    _shot(page, board, "ark-empty")


def test_explorer_opens_on_the_newest_worst_query(page: Any, board: dict[str, Any]) -> None:
    page.get_by_role("tab", name="Explorer", exact=True).click()
    view = page.locator("#explorer-view .qv[data-query]").first
    view.wait_for(timeout=60_000)  # preselected: the newest submission, the first subset, its worst query
    assert view.get_attribute("data-query").startswith(n.MAIN_CONFIGS[0][:3])
    _shot(page, board, "explorer-worst")
    page.locator("#explorer-bench").get_by_label("ark", exact=True).check()
    page.locator("#explorer-view").get_by_text("No ARK submission on the board yet", exact=False).wait_for(
        timeout=30_000
    )
    _shot(page, board, "explorer-empty")
