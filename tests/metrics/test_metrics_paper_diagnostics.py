"""The paper's C.3, Fig. 9, C.4 and D.3 diagnostics against hand-computed examples, kernels and scoring glue."""

from __future__ import annotations

import numpy as np
import pytest

from metrics import scoring
from metrics.core import paper_diagnostics as pdg
from triad_dataset.contract import names as n


def test_matched_comparison_standardization_can_flip_the_sign() -> None:
    # left D3: stratum x {0.2, 0.4}, y {0.6}; right D5: x {0.1}, y {0.3, 0.5}, z {0.9} (z only on the right)
    ap = np.array([0.2, 0.4, 0.6, 0.1, 0.3, 0.5, 0.9])
    groups = ["D3"] * 3 + ["D5"] * 4
    strata = ["x", "x", "y", "x", "y", "y", "z"]
    out = pdg.matched_comparison(ap, groups, strata, "D3", "D5")
    # complete: 0.45 - 0.4 = +0.05; standardized: x w=1 (0.1 - 0.3), y w=1 (0.4 - 0.6) -> -0.2
    assert out["difference"] == pytest.approx(0.05, abs=1e-12)
    assert out["standardized"] == pytest.approx(-0.2, abs=1e-12)
    assert (out["n_left"], out["n_right"], out["n_strata"], out["weight"]) == (3, 4, 2, 2)
    none = pdg.matched_comparison(ap, groups, ["a"] * 3 + ["b"] * 4, "D3", "D5")
    assert none["standardized"] is None and none["n_strata"] == 0


def test_trap_stratified_delta_by_hand() -> None:
    delta = np.array([-0.3, -0.1, 0.05, -0.2, 0.4])
    top = np.array([True, False, False, True, True])
    eligible = np.array([True, True, True, True, False])  # the last is not trap-constructed
    out = pdg.trap_stratified_delta(delta, top, eligible)
    assert out["trap_in_top10"]["n_queries"] == 2 and out["trap_in_top10"]["mean"] == pytest.approx(-0.25)
    assert out["trap_free"]["n_queries"] == 2 and out["trap_free"]["mean"] == pytest.approx(-0.025)


def test_restricted_ap_by_hand() -> None:
    labels = np.array([[1, 0, 1, 0, 1], [0, 1, 0, 1, 0]])
    keep = np.array([[True, False, True, True, False], [False, True, True, True, True]])
    # query 1 keeps [1, 1, 0]: (1/1 + 2/2) / 2 = 1; query 2 keeps [1, 0, 1, 0]: (1/1 + 2/3) / 2
    assert pdg.restricted_ap(labels, keep).tolist() == pytest.approx([1.0, (1 + 2 / 3) / 2])
    with pytest.raises(ValueError, match="query 0: no positive among the kept candidates"):
        pdg.restricted_ap(np.array([[1, 0]]), np.array([[False, True]]))


def test_resolution_curve_by_hand() -> None:
    # two queries with AP 0 and 1: a 2-query resample has mean 0, 0.5 or 1 (1/4, 1/2, 1/4) -> 95% interval [0, 1]
    assert pdg.resolution_curve(np.array([0.0, 1.0]), sizes=(1, 2, 5)) == {"1": 0.5, "2": 0.5}
    assert pdg.resolution_curve(np.full(300, 0.3), sizes=(100, 200)) == {"100": 0.0, "200": 0.0}


def test_minimum_detectable_effect_by_hand() -> None:
    a = np.full(30, 0.5)
    # identical runs: any positive shift makes all 30 differences positive (two-sided p = 2 / 2^30 < 0.05 / 6), so
    # bisection from [0, 1] stops at the first step under the tolerance: 2^-11
    assert pdg.minimum_detectable_effect(a, a, 30, n_mc=5) == 2.0**-11
    # three queries can never reach p < 0.05 / 6 (smallest two-sided p is 2 / 8)
    assert pdg.minimum_detectable_effect(a[:3], a[:3], 3, n_mc=5) == float("inf")


def _state_gold() -> tuple[dict, dict]:
    """Two paired queries: q1 (conflict, a trap in the pool) and q2 (natural); pools share all but one slot."""
    c_rows = [
        {
            "query_id": "q1",
            "candidate_ids": ["p", "a", "b", "r"],
            "positive_ids": ["p"],
            "profile": "D1",
            "candidate_roles": ["positive", "random", "random", "random"],
            "candidate_trap": [False] * 4,
            "conditions": [{"attribute": "colour", "polarity": "P", "value": "Red"}],
            n.REFERENCE_CATEGORY: "Shirts",
        },
        {
            "query_id": "q2",
            "candidate_ids": ["p", "a", "b", "r"],
            "positive_ids": ["p"],
            "profile": "D2",
            "candidate_roles": ["positive", "random", "random", "random"],
            "candidate_trap": [False] * 4,
            "conditions": [{"attribute": "colour", "polarity": "N", "value": "Red"}],
            n.REFERENCE_CATEGORY: "Shirts",
        },
    ]
    s_rows = [
        {
            **c_rows[0],
            "candidate_ids": ["p", "a", "b", "t"],
            "candidate_roles": ["positive", "random", "random", "conflict_trap"],
            "candidate_trap": [False, False, False, True],
            "session_type": "conflict",
            "num_turns": 2,
        },
        {**c_rows[1], "session_type": "natural", "num_turns": 2},
    ]
    rankings = {
        "constraints_fashion": {"q1": ["a", "p", "b", "r"], "q2": ["p", "a", "b", "r"]},  # AP 1/2, 1
        "state_fashion": {"q1": ["t", "a", "b", "p"], "q2": ["a", "b", "p", "r"]},
    }
    return {"constraints_fashion": c_rows, "state_fashion": s_rows}, rankings


def test_score_triad_reports_the_paper_diagnostics() -> None:
    gold, rankings = _state_gold()
    out = scoring.score_triad(gold, rankings)
    diag = out[scoring.PAPER_DIAGNOSTICS]
    # state APs: q1 ranks t, a, b, p -> 1/4; q2 ranks a, b, p, r -> 1/3. Paired Δ: q1 1/4 - 1/2, q2 1/3 - 1
    strata = diag["trap_stratified"]["fashion"]
    assert strata["trap_in_top10"] == {"mean": pytest.approx(-0.25), "n_queries": 1}  # q1: trap at rank 1
    assert strata["trap_free"] == {"mean": None, "n_queries": 0}  # q2 is natural: not trap-constructed
    shared = diag["shared_pool"]["fashion"]
    # shared candidates: q1 {p, a, b} (r and t differ) -> single a, p, b: 1/2; multi a, b, p: 1/3
    #                    q2 {p, a, b, r}            -> single 1; multi a, b, p, r: 1/3
    assert shared["single_turn_map"] == pytest.approx((0.5 + 1) / 2)
    assert shared["multi_turn_map"] == pytest.approx((1 / 3 + 1 / 3) / 2)
    assert shared["mean_shared_candidates"] == 3.5
    assert shared["by_session"]["conflict"]["2"] == {"delta": pytest.approx(1 / 3 - 0.5), "n_queries": 1}
    c3 = diag["matched_comparisons"]["constraints_fashion"][0]  # D1 (q1, AP 1/2) vs D2 (q2, AP 1)
    assert (c3["left"], c3["right"], c3["difference"], c3["n_left"], c3["n_right"]) == ("D1", "D2", 0.5, 1, 1)
    # both queries are in the stratum "Shirts|colour" (polarity is not part of it, paper C.3): weight 1
    assert (c3["standardized"], c3["n_strata"]) == (0.5, 1)


def test_the_space_shows_the_paper_diagnostics() -> None:
    from spaces_app import views

    gold, rankings = _state_gold()
    table = views.paper_diagnostics_table({"summary": scoring.score_triad(gold, rankings)})
    fig9 = table[(table["Diagnostic"] == "Fig. 9 ΔAP (conflict, trap-built)") & (table["Group"] == "trap in top 10")]
    assert fig9[["Subset", "Value", "Queries"]].values.tolist() == [["fashion", -0.25, 1]]
    c4 = table[(table["Diagnostic"] == "C.4 ΔAP on the shared pool") & (table["Group"] == "all")]
    assert c4["Value"].tolist() == [round((1 / 3 + 1 / 3) / 2 - 0.75, views.DECIMALS)]
    assert set(table["Diagnostic"]) >= {"C.3 ΔmAP (complete)", "C.3 ΔmAP (standardized)", "D.3 95% half-width of mAP"}
