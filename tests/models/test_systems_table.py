"""docs/models.md's table of every system of both papers against the recipe table it describes:
each verified row's entries are registry entries fed by a verified recipe whose reference commit the row names, each
refused row's entries (or Hub ids / model types) are refused by the recipe table, the counts at the top are the rows'
counts, and the types are the leaderboard's family names."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from model_adapters.models import recipes
from model_adapters.models.registry import REGISTRY

DOC = Path(__file__).resolve().parents[2] / "docs" / "models.md"
STATUSES = ("verified", "refused", "API", "runs, own prompt", "not built")


@pytest.fixture(scope="module")
def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    return text.split("## Every system of both papers", 1)[1].split("\n## ", 1)[0]


@pytest.fixture(scope="module")
def rows(section: str) -> list[dict[str, str]]:
    out = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and re.fullmatch(r"[TAC]\d+", cells[0]):
            out.append(
                dict(zip(("id", "paper", "system", "type", "status", "entries", "reference"), cells, strict=True))
            )
    return out


def _ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def test_every_row_has_a_known_status_and_type(rows):
    assert len(rows) == 49 and len({r["id"] for r in rows}) == 49
    for r in rows:
        assert r["status"] in STATUSES, r
        assert r["type"] in recipes.SYSTEM_TYPES, r


def test_verified_rows_name_verified_recipes_and_their_commits(rows):
    for r in (r for r in rows if r["status"] == "verified"):
        names = _ticked(r["entries"])
        assert names, r["id"]
        for name in names:
            entry = REGISTRY[name]
            recipe = recipes.RECIPES_BY_NAME[entry.recipe.name]
            assert recipe.reference is not None and recipe.refused is None, (r["id"], name)
            assert f"@ {recipe.reference.commit}" in r["reference"], (r["id"], name, recipe.reference.commit)


def test_refused_rows_are_refused_by_the_recipe_table(rows):
    refused = [x for x in recipes.RECIPES if x.refused]
    for r in (r for r in rows if r["status"] == "refused"):
        for name in _ticked(r["entries"]):
            if name in REGISTRY:
                assert recipes.RECIPES_BY_NAME[REGISTRY[name].recipe.name].refused, (r["id"], name)
            else:  # a Hub id or a model type that detection refuses
                assert any(name in x.match.hub_ids or name in x.match.model_types for x in refused), (r["id"], name)


def test_the_counts_at_the_top_are_the_rows(rows, section):
    counts = Counter(r["status"] for r in rows)
    head = section.split("\n| #", 1)[0]
    assert f"**{counts['verified']} of {len(rows)} rows verified**" in head
    assert f"**{counts['refused']} refused**" in head and f"**{counts['API']} API entries**" in head
    assert f"**{counts['runs, own prompt']} captioners" in head and f"**{counts['not built']} not built**" in head
    assert counts["verified"] >= 30  # at least 30 of the papers' systems verified


def test_the_leaderboard_offers_every_first_stage_type():
    from spaces_app.submit import FAMILIES

    assert set(recipes.SYSTEM_TYPES) - {"reranker", "captioner"} <= set(FAMILIES)
