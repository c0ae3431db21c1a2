"""metrics.scoring: the rankings -> numbers glue on small hand-made gold rows with hand-computed values."""

from __future__ import annotations

import json

import pytest

from ark_dataset import names as ark
from metrics import scoring
from triad_dataset.contract import names as n

I2C, C2I = n.ABSTRACTION_CONFIGS
CONS, STATE = n.CONSTRAINTS_CONFIGS[1], n.STATE_CONFIGS[1]  # cars
POS, RND = n.POSITIVE, n.RANDOM


def _row(qid, pool, positives, roles=None, trap=None, **meta):
    roles = roles or [POS if c in positives else RND for c in pool]
    return {
        "query_id": qid,
        "candidate_ids": pool,
        "positive_ids": positives,
        "candidate_roles": roles,
        "candidate_trap": trap or [False] * len(pool),
        **meta,
    }


FILL = [f"r{i}" for i in range(1, 10)]
GOLD = {
    I2C: [
        _row("a1", ["a", "b", "c", "d", "e"], ["a", "c"], positive_hops=[1, 2]),
        _row("a2", ["f", "g", "h"], ["g"], positive_hops=[1]),
    ],
    C2I: [_row("c1", ["a", "b"], ["b"], depth=5), _row("c2", ["c", "d"], ["c"], depth=7)],
    CONS: [
        _row(
            "q1",
            ["p", "n1", "n2", *FILL],
            ["p"],
            [POS, n.N_VIOLATION, n.P_VIOLATION] + [RND] * 9,
            profile="D2",
            conditions=[{}],
        ),
        _row("q2", ["p2", "x", "y"], ["p2"], [POS, n.P_VIOLATION, RND], profile="D5", conditions=[{}, {}]),
        _row("q3", ["z", "p3"], ["p3"], profile="D2", conditions=[{}]),
    ],
    STATE: [
        _row(
            "q1",
            ["p", "t", "r"],
            ["p"],
            [POS, n.CONFLICT_TRAP, RND],
            [False, True, False],
            session_type="conflict",
            num_turns=2,
        ),
        _row("q2", ["p2", "a", "b"], ["p2"], session_type="natural", num_turns=2),
        _row(
            "q3",
            ["p3", "t3", *FILL, "r10"],
            ["p3"],
            [POS, n.CONFLICT_TRAP] + [RND] * 10,
            [False, True] + [False] * 10,
            session_type="conflict",
            num_turns=3,
        ),
    ],
}
RANKINGS = {
    I2C: {"a1": ["c", "b", "a", "d", "e"], "a2": ["f", "g", "h"]},
    C2I: {"c1": ["a", "b"], "c2": ["c", "d"]},
    CONS: {"q1": [*FILL, "n1", "p", "n2"], "q2": ["p2", "x", "y"], "q3": ["z", "p3"]},
    STATE: {"q1": ["t", "p", "r"], "q2": ["a", "b", "p2"], "q3": ["p3", *FILL, "r10", "t3"]},
}


@pytest.fixture(scope="module")
def scored() -> dict:
    return scoring.score_triad(GOLD, RANKINGS, seed=0)


def test_main_metrics_and_per_query_ap(scored) -> None:
    assert scored[I2C]["metrics"]["map"] == pytest.approx(((1 + 2 / 3) / 2 + 1 / 2) / 2, abs=1e-15)
    assert scored[CONS]["per_query_ap"] == pytest.approx({"q1": 1 / 11, "q2": 1.0, "q3": 0.5}, abs=1e-15)
    m = scored[CONS]["metrics"]
    assert m["top1_hit"] == pytest.approx(1 / 3) and m["mrr"] == pytest.approx((1 / 11 + 1 + 1 / 2) / 3)
    assert scored[CONS]["n_queries"] == 3
    lo, hi = scored[CONS]["intervals"]["map"]
    assert 1 / 11 - 1e-12 <= lo <= m["map"] <= hi <= 1.0 + 1e-12


def test_entry_rates_pooled_over_queries(scored) -> None:
    rates = scored[CONS]["metrics"]["entry_rate@10"]
    assert rates == {n.P_VIOLATION: 0.5, n.N_VIOLATION: 1.0, RND: 1.0}  # n2 ranked 12th; x ranked 2nd


def test_trap_rates_on_state_configs(scored) -> None:
    m = scored[STATE]["metrics"]
    assert m["trap_rate@10"] == 0.5 and m["trap_query_share@10"] == 0.5 and m["n_trap_queries"] == 2
    assert m["entry_rate@10"][n.CONFLICT_TRAP] == 0.5
    assert "trap_rate@10" not in scored[CONS]["metrics"]


def test_per_hop_diagnostics(scored) -> None:
    d = scored[I2C]["diagnostics"]
    assert d["per_hop"]["1"]["map"] == pytest.approx((1 / 3 + 1 / 2) / 2) and d["per_hop"]["1"]["n_queries"] == 2
    assert d["per_hop"]["2"]["map"] == 1.0 and d["per_hop"]["2"]["n_queries"] == 1
    assert d["per_query_ap_by_hop"]["2"] == {"a1": 1.0}
    assert d["shared_original"]["n_queries"] == 1 and d["shared_original"]["difference"] == pytest.approx(2 / 3)
    assert d["shared_compressed"]["1"] == 0.5 and d["shared_compressed"]["difference"] == 0.5


def test_grouped_diagnostics(scored) -> None:
    assert {k: v["map"] for k, v in scored[C2I]["diagnostics"]["map_by_depth"].items()} == {"5": 0.5, "7": 1.0}
    by_profile = scored[CONS]["diagnostics"]["map_by_profile"]
    assert list(by_profile) == ["D2", "D5"] and by_profile["D2"]["map"] == pytest.approx((1 / 11 + 0.5) / 2)
    assert scored[CONS]["diagnostics"]["map_by_condition_count"]["2"]["map"] == 1.0
    sessions = scored[STATE]["diagnostics"]["map_by_session"]
    assert sessions["conflict"]["2"]["map"] == 0.5 and sessions["conflict"]["3"]["map"] == 1.0
    assert sessions["natural"]["2"]["map"] == pytest.approx(1 / 3)


def test_dialogue_cost_paired_by_query_id(scored) -> None:
    cost = scored[scoring.DIALOGUE_COST]["cars"]
    diffs = {"q1": 0.5 - 1 / 11, "q2": 1 / 3 - 1.0, "q3": 1.0 - 0.5}
    assert cost["n_pairs"] == 3 and cost["mean"] == pytest.approx(sum(diffs.values()) / 3)
    assert cost["by_session"]["conflict"]["2"]["mean"] == pytest.approx(diffs["q1"])
    assert cost["by_session"]["natural"]["2"]["mean"] == pytest.approx(diffs["q2"])
    assert "fashion" not in scored[scoring.DIALOGUE_COST]


def test_output_is_strict_json(scored) -> None:
    json.dumps(scored, allow_nan=False)


def test_seeded_intervals_are_reproducible() -> None:
    one = scoring.score_triad({CONS: GOLD[CONS]}, {CONS: RANKINGS[CONS]}, seed=3)
    two = scoring.score_triad({CONS: GOLD[CONS]}, {CONS: RANKINGS[CONS]}, seed=3)
    assert one == two


@pytest.mark.parametrize(
    ("ranking", "message"),
    [
        ({"q1": ["z", "p3"]}, "config constraints_cars, query_id 'q1': ranking is not a permutation.*'z' is not"),
        ({"q3": ["z", "z"]}, "query_id 'q3': ranking is not a permutation of the pool \\(duplicate id 'z'\\)"),
        ({"q3": ["z"]}, "query_id 'q3': ranking is not a permutation of the pool \\(1 ids for a pool of 2\\)"),
        ({"q9": ["z", "p3"]}, "query_id 'q9': ranked but not a gold query"),
        ({"q2": "p2"}, "query_id 'q2': ranking must be a list"),
    ],
)
def test_bad_rankings_name_config_and_query(ranking, message) -> None:
    rankings = {**RANKINGS[CONS], **ranking}
    with pytest.raises(ValueError, match=message):
        scoring.score_triad({CONS: GOLD[CONS]}, {CONS: rankings})


def test_missing_query_and_bad_gold() -> None:
    partial = {k: v for k, v in RANKINGS[CONS].items() if k != "q2"}
    with pytest.raises(ValueError, match="config constraints_cars, query_id 'q2': no ranking"):
        scoring.score_triad({CONS: GOLD[CONS]}, {CONS: partial})
    with pytest.raises(ValueError, match="config state_cars: ranked but not in the gold data"):
        scoring.score_triad({CONS: GOLD[CONS]}, {STATE: RANKINGS[STATE]})
    bad_role = [dict(GOLD[C2I][0], candidate_roles=[RND, "villain"]), GOLD[C2I][1]]
    with pytest.raises(ValueError, match="query_id 'c1': unknown role 'villain'"):
        scoring.score_triad({C2I: bad_role}, {C2I: RANKINGS[C2I]})
    twice = [GOLD[C2I][0], GOLD[C2I][0]]
    with pytest.raises(ValueError, match="query_id 'c1': appears twice"):
        scoring.score_triad({C2I: twice}, {C2I: {"c1": ["a", "b"]}})
    no_pos = [dict(GOLD[C2I][0], positive_ids=[], candidate_roles=[RND, RND]), GOLD[C2I][1]]
    with pytest.raises(ValueError, match="query_id 'c1': has no positive"):
        scoring.score_triad({C2I: no_pos}, {C2I: RANKINGS[C2I]})
    with pytest.raises(ValueError, match="is not a TRIAD task config"):
        scoring.score_triad({n.CONCEPTS_CORPUS: GOLD[C2I]}, {n.CONCEPTS_CORPUS: RANKINGS[C2I]})


# --- ARK ------------------------------------------------------------------------------------------------------
METRO, COMIC = "metro", "comic"
ARK_GOLD = {
    METRO: [
        {
            "query_id": "m1",
            "positive_id": "g1",
            "cognitive_demand": "reasoning_intensive",
            "reasoning_skills": ["spatial", "logical"],
        },
        {"query_id": "m2", "positive_id": "g2", "cognitive_demand": "both", "reasoning_skills": ["spatial"]},
    ],
    COMIC: [{"query_id": "k1", "positive_id": "h1", "cognitive_demand": "both", "reasoning_skills": ["logical"]}],
}
ARK_RANKINGS = {
    METRO: {"m1": 1, "m2": {"candidate_ids": ["x", "y", "g2"], "positive_rank": 3}},
    COMIC: {"k1": [f"c{i}" for i in range(19)] + ["h1"]},  # the positive at rank 20
}


def test_score_ark_by_hand() -> None:
    assert METRO in ark.SUBTYPES and COMIC in ark.SUBTYPES
    out = scoring.score_ark(ARK_GOLD, ARK_RANKINGS)
    assert out[METRO]["metrics"]["recall@1"] == 0.5 and out[METRO]["positive_rank"] == {"m1": 1, "m2": 3}
    assert out[METRO]["metrics"]["ndcg@5"] == pytest.approx((1 + 0.5) / 2)
    assert out[COMIC]["metrics"]["ndcg@20"] == pytest.approx(1 / 4.392317422778761)  # 1 / log2(21)
    assert out["macro"]["metrics"]["recall@1"] == 0.25 and out["macro"]["n_subtypes"] == 2
    assert out["by_domain"]["humanities_social_science"]["metrics"]["recall@1"] == 0.25
    assert out["by_cognitive_demand"]["both"]["metrics"]["recall@5"] == 0.5
    assert out["by_reasoning_skill"]["logical"]["metrics"]["recall@1"] == 0.5
    assert out["by_reasoning_skill"]["spatial"]["n_queries"] == 2
    lo, hi = out["macro"]["intervals"]["recall@1"]
    assert 0.0 <= lo <= 0.25 <= hi <= 0.5
    json.dumps(out, allow_nan=False)


def test_score_ark_bad_input() -> None:
    with pytest.raises(ValueError, match="config metro, query_id 'm1': positive_rank 0 is not a 1-based rank"):
        scoring.score_ark(ARK_GOLD, {**ARK_RANKINGS, METRO: {"m1": 0, "m2": 3}})
    with pytest.raises(ValueError, match="query_id 'k1': positive 'h1' is not in the ranked ids"):
        scoring.score_ark(ARK_GOLD, {**ARK_RANKINGS, COMIC: {"k1": ["a", "b"]}})
    with pytest.raises(ValueError, match="config metro, query_id 'm2': no ranking"):
        scoring.score_ark(ARK_GOLD, {**ARK_RANKINGS, METRO: {"m1": 1}})
