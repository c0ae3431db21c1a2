"""Flags that apply to every row: pending rows listed below the self-reported ones, and a chance-corrected bound
that flags a near-perfect subset while no row of it is verified."""

from __future__ import annotations

from types import SimpleNamespace

from spaces_app import status, verify

CONFIG = "abstraction_i2c"


def row(sid: int, value: float, state: str) -> dict:
    return {"id": sid, "status": state, "gold_content": "g", "scores": {CONFIG: SimpleNamespace(value=value)}}


def test_pending_rows_are_listed_below_self_reported_ones() -> None:
    notes = status.annotate(
        [row(1, 0.30, verify.PENDING), row(2, 0.20, verify.UNVERIFIED)], [CONFIG], "g", None, status.Plausibility()
    )
    assert (notes[2]["order"], notes[1]["order"]) == (1, 2)


def test_a_near_perfect_subset_is_flagged_while_no_row_is_verified() -> None:
    rule = status.Plausibility()
    subs = [row(1, 0.995, verify.PENDING), row(2, 0.55, verify.UNVERIFIED), row(3, 0.92, verify.UNVERIFIED)]
    notes = status.annotate(subs, [CONFIG], "g", None, rule, {CONFIG: 0.1})
    # (0.995 - 0.1) / 0.9 = 0.994 and (0.92 - 0.1) / 0.9 = 0.91 reach 0.9; (0.55 - 0.1) / 0.9 = 0.5 does not
    assert notes[1]["flags"] == ["I2C 0.995: 0.9 of the way from chance 0.100 to 1 with no verified row"]
    assert notes[3]["flags"] == ["I2C 0.920: 0.9 of the way from chance 0.100 to 1 with no verified row"]
    assert notes[2]["flags"] == [] and notes[1]["order"] == 2.5 and notes[3]["order"] == 1.5
    with_verified = status.annotate([*subs, row(4, 0.9, verify.VERIFIED)], [CONFIG], "g", None, rule, {CONFIG: 0.1})
    assert with_verified[3]["flags"] == []  # the margin rule applies once a row is verified (0.92 ≤ 0.9 + 0.2)
