"""`triad report` in Chromium at 1280 px: a table of contents whose links reach every section, no candidate card whose
id or text spills out of it, and the stated size bound (thumbnails past it left out, the page says how many).
Screenshots go to artifacts/space/ (git-ignored; TRIAD_ARTIFACTS=DIR saves them under DIR/space/)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from spaces_app.gold import load_gold
from spaces_app.report import MAX_IMAGE_BYTES, build_report, write_report
from tests.doubles import space_runs as testing
from tests.space.test_space_screens import ARGS, CHROMIUM, artifacts
from triad_dataset.contract import names as n

WIDTH = 1280
# every element of a card that must stay inside it, and the card's own overflow (scrollWidth past its box)
OVERFLOW_JS = """cards => cards.filter(c => {
  const box = c.getBoundingClientRect();
  const out = [...c.querySelectorAll('*')].some(e => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && (r.left < box.left - 0.5 || r.right > box.right + 0.5);
  });
  return out || c.scrollWidth > c.clientWidth + 1;
}).map(c => c.dataset.item)"""


@pytest.fixture(scope="module")
def report(mini_triad_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two runs of the mini edition (ids such as `n01234567/n01234567_placeholder.png`) and their report."""
    root = tmp_path_factory.mktemp("report_browser")
    gold = load_gold(mini_triad_dir)
    runs = [
        testing.write_run(
            root / f"run{i}",
            gold.rows,
            testing.skilled_rankings(gold.rows, skill, seed=40 + i),
            model=f"model-{i}",
            fingerprint=gold.fingerprint,
        )
        for i, skill in enumerate((1.5, 0.5))
    ]
    out = write_report(runs, root / "report.html", data=mini_triad_dir, worst_n=3, thumbs_root=root / "th")
    return {"runs": runs, "out": out, "gold": mini_triad_dir, "root": root}


@pytest.fixture(scope="module")
def tab(report: dict[str, Any]) -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (install Debian's chromium: apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": 900})
            page.goto(report["out"].as_uri())
            page.wait_for_load_state("load")
            yield page
        finally:
            browser.close()


@pytest.mark.browser
@pytest.mark.slow
def test_the_contents_link_every_section(tab: Any) -> None:
    links = tab.locator("nav#contents a")
    targets = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert targets[:3] == ["#scores", "#paired", "#diagnostics"]
    assert targets[3:] == [f"#{c}" for c in n.TASK_CONFIGS]
    for target in (targets[1], targets[-1]):
        tab.locator(f'nav#contents a[href="{target}"]').click()
        tab.wait_for_timeout(200)
        heading = tab.locator(f"h2{target}").bounding_box()
        assert heading is not None and -2 <= heading["y"] < 900, (target, heading)  # scrolled to the window
    tab.locator("a.top").last.click()
    tab.wait_for_timeout(200)
    assert tab.locator("nav#contents").bounding_box()["y"] < 900
    tab.evaluate("window.scrollTo(0, 0)")
    tab.screenshot(path=str(artifacts() / f"report-contents-{WIDTH}.png"))


@pytest.mark.browser
@pytest.mark.slow
def test_no_candidate_card_overflows_at_1280_px(tab: Any) -> None:
    cards = tab.locator(".qv .cand")
    assert cards.count() >= 100
    ids = [cards.nth(i).get_attribute("data-item") for i in range(cards.count())]
    assert max(len(i) for i in ids) >= 30  # long ids with no space to break at
    assert tab.locator(".qv .cand").evaluate_all(OVERFLOW_JS) == []
    assert tab.evaluate("document.documentElement.scrollWidth") <= WIDTH  # nothing makes the page scroll sideways
    card = tab.locator(".qv .cand").filter(has_text="placeholder").first
    card.scroll_into_view_if_needed()
    tab.screenshot(path=str(artifacts() / f"report-cards-{WIDTH}.png"))


@pytest.mark.slow
def test_the_size_bound_is_stated_and_kept(report: dict[str, Any]) -> None:
    text = report["out"].read_text(encoding="utf-8")
    assert (
        "Size bound: 3 queries per subset (at most 100: --worst), each with its top 10 candidates; 160-px "
        f"thumbnails, inlined up to {MAX_IMAGE_BYTES / 2**20:g} MiB in all.</p>"
    ) in text
    one = {"data": report["gold"], "worst_n": 3, "thumbs_root": report["root"] / "th"}
    full = build_report(report["runs"][:1], **one).count('src="data:image/jpeg;base64,')
    small = build_report(report["runs"][:1], **one, max_image_bytes=20_000)
    uris = [part.split('"', 1)[0] for part in small.split('src="data:')[1:] if part.startswith("image/jpeg")]
    assert uris and sum(len("data:") + len(u) for u in uris) <= 20_000
    left = int(small.split("MiB in all. ")[1].split(" thumbnails were left out")[0])
    assert len(uris) + left == full and "thumbnails were left out" not in build_report(report["runs"][:1], **one)
