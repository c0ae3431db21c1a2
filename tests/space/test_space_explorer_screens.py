"""In Chromium, at 1280 px and 1920 px: the leaderboard's status marker beside the model name; the Explorer tab
with a constraints query (its reference product, the changes, a top 10 whose negatives name the condition they
violate), a state query with its turns, an ARK query with the positive's rank, two submissions side by side; and a
`triad report` page that loads no external resource and shows results.json's numbers. One app, one browser.
Screenshots go to artifacts/space/ (git-ignored; TRIAD_ARTIFACTS=DIR saves them under DIR/space/)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ark_dataset import names as ark_names
from spaces_app import verify
from spaces_app.db import Database
from spaces_app.gold import load_gold
from spaces_app.submit import submit_run_dir
from tests.doubles import space_runs as testing
from tests.space.test_space_screens import ARGS, CHROMIUM, artifacts, served
from triad_dataset.contract import names as n

WIDTHS = (1280, 1920)
TYPED = (n.P_VIOLATION, n.N_VIOLATION, n.PN_VIOLATION, n.IMPLICIT_VIOLATION)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _fooled(row: dict[str, Any]) -> dict[str, Any]:
    """The row with its typed negatives counted as positives: a model ranked on it puts near misses on top."""
    typed = [c for c, role in zip(row["candidate_ids"], row["candidate_roles"], strict=True) if role in TYPED]
    return {**row, "positive_ids": list(row["positive_ids"]) + typed}


def _stored(outcome: Any) -> int:
    assert outcome.submission_id is not None, outcome.message
    return int(outcome.submission_id)


@pytest.fixture(scope="module")
def board(mini_triad_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The mini TRIAD gold with a verified and an unverified run, a toy ARK gold with one run, served offline."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (install Debian's chromium: apt-get install -y chromium)")
    root = tmp_path_factory.mktemp("explorer_screens")
    gold = load_gold(mini_triad_dir)
    db, golds = root / "space.sqlite", {"triad": mini_triad_dir, "ark": root / "ark"}
    ark = testing.ark_tables(6, 40, seed=9, subtypes=ark_names.SUBTYPES[:2])
    testing.write_ark_gold(root / "ark", ark)
    runs, ids = {}, {}
    fooled = {c: [_fooled(r) for r in rows] for c, rows in gold.rows.items()}  # near misses score as positives
    for name, skill, seed in (("nearmiss-model", 2.5, 5), ("random-model", 0.0, 6)):
        rankings = testing.skilled_rankings(fooled, skill, seed=seed)
        runs[name] = testing.write_run(root / name, gold.rows, rankings, fingerprint=gold.fingerprint)
        ids[name] = _stored(submit_run_dir(db, golds, runs[name], model_name=name, family="dual-tower"))
    ark_run = testing.write_run(root / "ark-run", ark, testing.ark_skilled_rankings(ark, 1.5, seed=7), benchmark="ark")
    ids["ark model"] = _stored(submit_run_dir(db, golds, ark_run, model_name="ark model", family="vlm"))
    Database(db).set_verification(
        ids["nearmiss-model"], verify.VERIFIED, {"result": {"queries": 18, "pairs": 900, "disagreeing": 0}}
    )
    with served(mini_triad_dir, root / "ark", db) as url:
        yield {"url": url, "ids": ids, "runs": runs, "gold": gold, "root": root}


@pytest.fixture(scope="module")
def browser(board: dict[str, Any]) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def page(browser: Any, board: dict[str, Any]) -> Iterator[Any]:
    tab = browser.new_page(viewport={"width": WIDTHS[0], "height": 900})
    tab.goto(board["url"])
    tab.locator("#main-table").get_by_text("nearmiss-model", exact=True).filter(visible=True).first.wait_for(
        timeout=90_000
    )
    yield tab
    tab.close()


def _shots(page: Any, name: str, elements: list[Any], frame: Any = None) -> list[Path]:
    """At each width the elements lie inside the window and the window is saved; `frame` (a locator) is saved whole
    once, at the first width."""
    paths = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 1000})
        page.wait_for_timeout(400)
        for element in elements:
            element.scroll_into_view_if_needed()
            box = element.bounding_box()
            assert box is not None and box["width"] > 0 and box["x"] >= 0 and box["x"] + box["width"] <= width, (
                name,
                width,
                box,
            )
        paths.append(artifacts() / f"{name}-{width}.png")
        page.screenshot(path=str(paths[-1]))
        if frame is not None and width == WIDTHS[0]:  # the whole view, however tall (the README's picture)
            paths.append(artifacts() / f"{name}-view.png")
            frame.screenshot(path=str(paths[-1]))
    assert all(p.stat().st_size > 10_000 for p in paths)
    page.set_viewport_size({"width": WIDTHS[0], "height": 900})
    return paths


def test_leaderboard_marks_each_row_beside_its_name(page: Any) -> None:
    table = page.locator("#main-table")
    verified = table.get_by_text("✓ verified", exact=True).filter(visible=True).first
    verified.wait_for(timeout=30_000)
    unranked = table.get_by_text("unverified", exact=True).filter(visible=True).first  # self-reported: ranked apart
    unranked.wait_for(timeout=10_000)
    table.get_by_text("1 (self)", exact=True).filter(visible=True).first.wait_for(timeout=10_000)
    headers = [h.inner_text().strip() for h in table.get_by_role("columnheader").all()]
    named = [h for h in headers if h]
    assert named.index("Verified?") == named.index("Model") + 1, named  # beside the name, before the scores
    legend_box = page.locator("#legend").inner_text()
    assert "Ties (mAP range)" in legend_box and "unranked" in legend_box
    _shots(page, "leaderboard", [verified, unranked])


def _explore(page: Any, benchmark: str, first: str, config: str, mode: str, second: str = "", query: str = "") -> Any:
    page.get_by_role("tab", name="Explorer", exact=True).click()
    page.locator("#explorer-bench").get_by_label(benchmark, exact=True).check()
    page.wait_for_timeout(800)
    _choose(page, "#explorer-first", first)
    if second:
        _choose(page, "#explorer-second", second)
    _choose(page, "#explorer-config", config)
    page.locator("#explorer-mode").get_by_label(mode, exact=True).check()
    page.locator("#explorer-query textarea").fill(query)
    page.locator("#explorer-show").click()
    view = page.locator("#explorer-view .qv").first
    view.wait_for(timeout=60_000)
    return view


def _choose(page: Any, elem: str, option: str) -> None:
    page.locator(f"{elem} input").click()
    page.get_by_role("option", name=option, exact=True).click()
    page.wait_for_timeout(300)


def test_explorer_constraints_query_names_each_violated_condition(page: Any, board: dict[str, Any]) -> None:
    gold = board["gold"]
    row = next(r for r in gold.rows["constraints_cars"] if n.PN_VIOLATION in r["candidate_roles"])
    good = f"{board['ids']['nearmiss-model']}: nearmiss-model"
    view = _explore(page, "triad", good, "constraints_cars", "by query id", query=row["query_id"])
    page.locator(f'#explorer-view .qv[data-query="{row["query_id"]}"]').wait_for(timeout=30_000)
    assert view.locator(".reference").inner_text().startswith(f"Reference product: {row['query_image_id']} · ")
    changes = view.get_by_text("Requested changes:").first.locator("xpath=..").inner_text()
    for c in row["conditions"]:
        assert str(c["value"]) in changes
    cards = view.locator(".cand")
    assert cards.count() == 10
    roles = dict(zip(row["candidate_ids"], row["candidate_roles"], strict=True))
    named = 0
    for i in range(10):
        card = cards.nth(i)
        item, role = card.get_attribute("data-item"), card.get_attribute("data-role")
        assert role == roles[item] and card.get_attribute("data-rank") == str(i + 1)
        if role in TYPED:
            why = card.locator(".why").inner_text()
            assert ": " in why and ("asked" in why or "must stay" in why or "changes " in why), why
            named += 1
    assert named >= 2  # the run ranks near misses high: the top 10 holds typed negatives, each saying why
    _shots(page, "explorer-constraints", [view.locator(".reference")], view)


def test_explorer_state_query_shows_every_turn(page: Any, board: dict[str, Any]) -> None:
    row = next(r for r in board["gold"].rows["state_fashion"] if len(r["turns"]) == 3)
    good = f"{board['ids']['nearmiss-model']}: nearmiss-model"
    view = _explore(page, "triad", good, "state_fashion", "by query id", query=row["query_id"])
    page.locator(f'#explorer-view .qv[data-query="{row["query_id"]}"]').wait_for(timeout=30_000)
    turns = view.locator("ol.turns li")
    assert [turns.nth(i).inner_text() for i in range(turns.count())] == list(row["turns"])
    _shots(page, "explorer-state", [view.locator("ol.turns")], view)


def test_explorer_two_submissions_side_by_side(page: Any, board: dict[str, Any]) -> None:
    ids = board["ids"]
    good, rnd = f"{ids['nearmiss-model']}: nearmiss-model", f"{ids['random-model']}: random-model"
    _explore(page, "triad", good, "constraints_fashion", "largest difference (two submissions)", second=rnd)
    pair = page.locator("#explorer-view .qv-pair")
    pair.wait_for(timeout=30_000)
    views = pair.locator(".qv")
    assert views.count() == 2
    assert views.nth(0).get_attribute("data-query") == views.nth(1).get_attribute("data-query")
    left, right = views.nth(0).bounding_box(), views.nth(1).bounding_box()
    assert left is not None and right is not None and right["x"] >= left["x"] + left["width"] - 1  # side by side
    _shots(page, "explorer-pair", [pair], pair)


def test_explorer_ark_query_with_the_positives_rank(page: Any, board: dict[str, Any]) -> None:
    subtype = ark_names.SUBTYPES[0]
    _explore(page, "ark", f"{board['ids']['ark model']}: ark model", subtype, "worst AP")
    view = page.locator(f'#explorer-view .qv[data-query^="{subtype}-q"]')
    view.wait_for(timeout=30_000)
    ranks = view.locator(".ranks").inner_text()
    assert ranks.startswith("positive at rank ")
    rank = int(ranks.split()[3])
    header = view.locator("h4").inner_text()
    assert header.endswith(f"RR {1 / rank:.3f}") and "knowledge domain:" in view.locator(".facts").inner_text()
    _shots(page, "explorer-ark", [view.locator(".ranks")], view)


def test_report_opens_offline_with_results_json_numbers(browser: Any, board: dict[str, Any]) -> None:
    from spaces_app.report import write_report

    run = board["runs"]["nearmiss-model"]
    out = write_report(
        [run], board["root"] / "report.html", data=board["gold"].path, worst_n=1, thumbs_root=board["root"] / "th"
    )
    requests: list[str] = []
    tab = browser.new_page(viewport={"width": WIDTHS[0], "height": 900})
    try:

        def record(route: Any) -> None:
            requests.append(route.request.url)
            route.continue_()

        tab.route("**/*", record)
        tab.goto(out.as_uri())
        tab.wait_for_load_state("load")
        assert [u for u in requests if not u.startswith(("file:", "data:"))] == []
        results = json.loads((run / "results.json").read_text())
        cells = tab.locator("td.num[data-config]")
        shown = {cells.nth(i).get_attribute("data-config"): cells.nth(i).inner_text() for i in range(cells.count())}
        assert shown == {c: f"{results['configs'][c]['metrics']['map']:.4f}" for c in n.TASK_CONFIGS}
        images = tab.locator("img")
        assert images.count() > 0 and all(
            tab.evaluate("(i) => i.complete && i.naturalWidth > 0", images.nth(i).element_handle())
            for i in range(min(images.count(), 5))
        )
        _shots(tab, "report", [cells.first])
    finally:
        tab.close()
