"""Each leaderboard row carries a short status marker beside the model name, and an unranked row says so in the row;
the page explains the marker, the Rank rule and the Ties column in one line each."""

from __future__ import annotations

from typing import Any

from spaces_app import legend, status, verify, views
from spaces_app.db import ScoreRow
from triad_dataset.contract import names as n

C1, C2 = n.MAIN_CONFIGS[:2]
GOLD = "f" * 64


def _sub(i: int, state: str, value: float, *, gold: str = GOLD, summary: dict | None = None) -> dict[str, Any]:
    return {
        "id": i,
        "model_name": f"m{i}",
        "family": "f",
        "params": None,
        "created_at": 0.0,
        "status": state,
        "dataset_fingerprint": gold,
        "summary": summary or {},
        "scores": {C1: ScoreRow(C1, "map", value, None, None, 1), C2: ScoreRow(C2, "map", 0.2, None, None, 1)},
    }


TIED = {"all_tied": {"queries": {C1: 3}, "of": {C1: 10}}}
SUBS = [
    _sub(1, verify.VERIFIED, 0.30),
    _sub(2, verify.UNVERIFIED, 0.50),
    _sub(3, verify.PENDING, 0.40),
    _sub(4, verify.VERIFIED, 0.20),
    _sub(5, verify.UNVERIFIED, 0.10, gold="0" * 64),
    _sub(6, verify.FAILED, 0.60),
    _sub(7, verify.VERIFIED, 0.25, summary=TIED),
]


def _table(rank_all: bool = False) -> dict[str, tuple[str, str]]:
    notes = status.annotate(SUBS, [C1, C2], None, GOLD, status.Plausibility(bound=2.0, margin=5.0))
    table = views.score_table(SUBS, [C1, C2], sort_by=n.DISPLAY_NAMES[C1], status=notes, rank_all=rank_all)
    columns = list(table.columns)
    subsets = [n.DISPLAY_NAMES[C1], n.DISPLAY_NAMES[C2]]  # right after the marker; family and size later
    assert (
        columns[: columns.index(views.FAMILY_COL)]
        == [views.RANK_COL, views.ID_COL, views.MODEL_COL, "Verified?"] + subsets
    )
    return {
        m: (r, k) for m, r, k in zip(table[views.MODEL_COL], table[views.RANK_COL], table["Verified?"], strict=True)
    }


def test_marker_beside_the_name_and_each_groups_rank() -> None:
    assert _table() == {
        "m1": ("1", "✓ verified"),
        "m4": ("2", "✓ verified"),
        "m7": ("", "✓ verified, scores tied · unranked"),  # a flag takes the row out of the ranking
        "m2": ("1 (self)", "unverified"),  # ranked among the self-reported rows, marked so
        "m3": ("1 (pending)", "pending"),
        "m5": ("", "older gold · unranked"),
        "m6": ("", "✗ failed · unranked"),
    }


def test_self_reported_rows_are_ranked_in_listing_order() -> None:
    subs = [_sub(i, verify.UNVERIFIED, v) for i, v in ((1, 0.2), (2, 0.5), (3, 0.5), (4, 0.1))]
    notes = status.annotate(subs, [C1, C2], None, GOLD, status.Plausibility(bound=2.0, margin=5.0))
    table = views.score_table(subs, [C1, C2], sort_by=n.DISPLAY_NAMES[C1], status=notes)
    assert table[views.MODEL_COL].tolist() == ["m2", "m3", "m1", "m4"]
    assert table[views.RANK_COL].tolist() == [f"{r} (self)" for r in (1, 1, 3, 4)]  # ties share a rank


def test_every_row_ranks_the_unverified_but_not_older_gold_or_failed() -> None:
    assert _table(rank_all=True) == {
        "m1": ("3", "✓ verified"),
        "m4": ("5", "✓ verified"),
        "m7": ("4", "✓ verified, scores tied"),
        "m2": ("1", "unverified"),
        "m3": ("2", "pending"),
        "m5": ("", "older gold · unranked"),
        "m6": ("", "✗ failed · unranked"),
    }


def test_a_flag_other_than_ties_reads_flagged() -> None:
    assert status.marker(verify.UNVERIFIED, ["I2C 1.000 ≥ 1", "scores all tied in 3 of 10 queries"]) == (
        "unverified, flagged"
    )
    assert status.marker(verify.PENDING, []) == "pending"


def test_ark_table_gets_the_marker_beside_the_name() -> None:
    notes = {1: {"marker": "✓ verified", "text": "verified (9 queries)"}, 2: {"marker": "pending", "text": "p"}}
    frame = views.ark_table([_sub(1, verify.VERIFIED, 0.3), _sub(2, verify.PENDING, 0.1)], "subtype")
    shown = views.with_status(frame, notes)
    assert list(shown.columns)[:3] == [views.ID_COL, views.MODEL_COL, "Verified?"]
    assert shown["Verified?"].tolist() == ["✓ verified", "pending"]
    assert shown[views.STATUS_COL].tolist() == ["verified (9 queries)", "p"]


def test_the_page_explains_the_marker_the_rank_and_the_ties() -> None:
    md = legend.legend_markdown(n.MAIN_CONFIGS, {})
    assert "**Verified?**" in md and "*unranked*" in md and "**Ties (mAP range)**" in md
    assert md.count("\n") == len(n.MAIN_CONFIGS) + 1 + 4  # the table, then two one-paragraph notes
    assert "scores tied" in legend.ARK_TAB_NOTE and "Verified?" in legend.ARK_COLUMNS
