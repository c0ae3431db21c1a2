"""Independent cross-check of `metrics.scoring` on the real mini editions (TRIAD paper B.1, C.4, C.6; ARK §4).

The expected values come from plain Python loops written straight from the papers' formulas; nothing from
`metrics.core` is used for them. Rankings need no model: a seeded random permutation of every pool, and an
"oracle-ish" ranking that puts positives, traps and typed negatives at chosen ranks (including the rank-10/11
boundary and hop-2 positives above hop-1 positives). Every number must agree to 1e-12.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ark_dataset import names as ark_names
from metrics import scoring
from metrics.core import stats
from tests.datasets.test_ark_support import mini_build
from triad_dataset.contract import names as n
from triad_dataset.folder.io import read_rows

pytestmark = pytest.mark.slow  # cross-checks on the mini edition, built once per session

TOL = 1e-12
K = 10
COLUMNS = [
    "query_id",
    "candidate_ids",
    "candidate_roles",
    "candidate_trap",
    "positive_ids",
    "positive_hops",
    "depth",
    "profile",
    "conditions",
    "session_type",
    "num_turns",
]
Row = Mapping[str, Any]


# --- reference formulas (plain loops) -------------------------------------------------------------------------
def ref_ap(ranking: Sequence[str], positives: set[str]) -> float:
    """Paper B.1 eq. 1: (1/|P|) sum_k Precision@k * rel_k over the full ranking."""
    hits, total = 0, 0.0
    for k, cid in enumerate(ranking, start=1):
        if cid in positives:
            hits += 1
            total += hits / k
    return total / len(positives)


def ref_first_rank(ranking: Sequence[str], positives: set[str]) -> int:
    for k, cid in enumerate(ranking, start=1):
        if cid in positives:
            return k
    raise AssertionError("no positive ranked")


def ref_recall(ranking: Sequence[str], positives: set[str], k: int) -> float:
    return sum(1 for cid in ranking[:k] if cid in positives) / len(positives)


def ref_ndcg(ranking: Sequence[str], positives: set[str], k: int) -> float:
    dcg = sum(1.0 / math.log2(i + 1) for i, cid in enumerate(ranking[:k], start=1) if cid in positives)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(k, len(positives)) + 1))
    return dcg / ideal


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def close(actual: float, expected: float) -> bool:
    return abs(actual - expected) <= TOL


def per_query(rows: Sequence[Row], ranking: Mapping[str, Sequence[str]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for row in rows:
        ranked, pos = ranking[row["query_id"]], set(row["positive_ids"])
        first = ref_first_rank(ranked, pos)
        out[row["query_id"]] = {
            "map": ref_ap(ranked, pos),
            "top1_hit": float(ranked[0] in pos),
            "mrr": 1.0 / first,
            "recall@1": ref_recall(ranked, pos, 1),
            "recall@5": ref_recall(ranked, pos, 5),
            "recall@10": ref_recall(ranked, pos, 10),
            "ndcg@10": ref_ndcg(ranked, pos, 10),
        }
    return out


# --- data and rankings ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gold(mini_triad_dir: Path) -> dict[str, list[dict[str, Any]]]:
    return {c: read_rows(mini_triad_dir, c, columns=COLUMNS) for c in n.TASK_CONFIGS}


def random_ranking(row: Row, rng: random.Random) -> list[str]:
    ranked = list(row["candidate_ids"])
    rng.shuffle(ranked)
    return ranked


def oracle_ranking(i: int, row: Row, rng: random.Random) -> list[str]:
    """Positives, traps and typed negatives at chosen 1-based ranks; everything else shuffled into the gaps."""
    pool, size = list(row["candidate_ids"]), len(row["candidate_ids"])
    hops = dict(zip(row["positive_ids"], row.get("positive_hops") or [1] * len(row["positive_ids"]), strict=True))
    positives = sorted(row["positive_ids"], key=lambda c: -hops[c])  # hop 2 first: it sits above hop 1
    traps = [c for c, t in zip(pool, row["candidate_trap"], strict=True) if t]
    typed: list[str] = []
    for role in n.NEGATIVE_ROLES:
        if role != n.RANDOM:
            typed += [c for c, r in zip(pool, row["candidate_roles"], strict=True) if r == role][:2]
    fixed: dict[int, str] = {}

    def put(rank: int, cid: str) -> None:
        if cid not in fixed.values() and rank not in fixed and 1 <= rank <= size:
            fixed[rank] = cid

    mode = i % 4
    if mode == 0:  # positives first, then traps and typed negatives
        for j, cid in enumerate(positives + traps + typed, start=1):
            put(j, cid)
    elif mode == 1:  # traps and typed negatives in the top 10, first positive exactly at rank 10
        for j, cid in enumerate(traps + typed, start=1):
            put(j if j < 10 else 10 + len(positives) + j, cid)
        for j, cid in enumerate(positives):
            put(10 + j, cid)
    elif mode == 2:  # positives at odd ranks (hop 2 above hop 1), negatives in between
        for j, cid in enumerate(positives):
            put(2 * j + 1, cid)
        for j, cid in enumerate(traps + typed):
            put(2 * j + 2, cid)
    else:  # positives last, a trap / typed negative exactly at ranks 10 and 11
        for j, cid in enumerate(reversed(positives)):
            put(size - j, cid)
        for j, cid in enumerate(traps + typed):
            put(10 + j, cid)
    rest = [c for c in pool if c not in set(fixed.values())]
    rng.shuffle(rest)
    it = iter(rest)
    return [fixed[r] if r in fixed else next(it) for r in range(1, size + 1)]


def make_rankings(gold: Mapping[str, Sequence[Row]], kind: str) -> dict[str, dict[str, list[str]]]:
    rng = random.Random(f"crosscheck-{kind}")
    make = (
        (lambda i, row: random_ranking(row, rng)) if kind == "random" else (lambda i, row: oracle_ranking(i, row, rng))
    )
    return {c: {row["query_id"]: make(i, row) for i, row in enumerate(rows)} for c, rows in gold.items()}


@pytest.fixture(scope="module", params=["random", "oracle"])
def case(request: pytest.FixtureRequest, gold: dict) -> tuple[dict, dict, dict]:
    rankings = make_rankings(gold, request.param)
    return gold, rankings, scoring.score_triad(gold, rankings, seed=0)


# --- TRIAD ----------------------------------------------------------------------------------------------------
def test_main_metrics_and_per_query_ap(case) -> None:
    gold, rankings, out = case
    for config, rows in gold.items():
        ref = per_query(rows, rankings[config])
        got = out[config]
        assert got["n_queries"] == len(rows)
        assert set(got["per_query_ap"]) == set(ref)
        for qid, values in ref.items():
            assert close(got["per_query_ap"][qid], values["map"]), (config, qid)
        for name in scoring.TRIAD_METRICS:
            expected = mean([values[name] for values in ref.values()])
            assert close(got["metrics"][name], expected), (config, name, got["metrics"][name], expected)
        if config in n.SELF_CONFIGS:  # exactly one positive: mAP = MRR
            assert close(got["metrics"]["map"], got["metrics"]["mrr"])


def test_entry_rates_and_traps_pooled_over_queries(case) -> None:
    gold, rankings, out = case
    for config, rows in gold.items():
        in_top: dict[str, int] = {}
        total: dict[str, int] = {}
        trap_in = trap_total = trap_queries = trap_queries_hit = 0
        for row in rows:
            top = set(rankings[config][row["query_id"]][:K])
            for cid, role, trap in zip(
                row["candidate_ids"], row["candidate_roles"], row["candidate_trap"], strict=True
            ):
                if role != n.POSITIVE:
                    total[role] = total.get(role, 0) + 1
                    in_top[role] = in_top.get(role, 0) + (cid in top)
                if trap:
                    trap_total += 1
                    trap_in += cid in top
            flagged = [c for c, t in zip(row["candidate_ids"], row["candidate_trap"], strict=True) if t]
            if flagged:
                trap_queries += 1
                trap_queries_hit += any(c in top for c in flagged)
        metrics = out[config]["metrics"]
        rates = metrics[f"entry_rate@{K}"]
        assert set(rates) == set(total), config
        for role in total:
            assert close(rates[role], in_top[role] / total[role]), (config, role)
        if config in n.STATE_CONFIGS:
            assert trap_total > 0 and metrics["n_trap_queries"] == trap_queries
            assert close(metrics[f"trap_rate@{K}"], trap_in / trap_total), config
            assert close(metrics[f"trap_query_share@{K}"], trap_queries_hit / trap_queries), config
        else:
            assert f"trap_rate@{K}" not in metrics and "n_trap_queries" not in metrics


def _hop_ap(ranking: Sequence[str], hops: Mapping[str, int], hop: int, compress: bool) -> float:
    """Only this hop's positives are relevant; other-hop positives stay in place, or are removed (C.6)."""
    if compress:
        ranking = [c for c in ranking if hops.get(c, hop) == hop]
    return ref_ap(ranking, {c for c, h in hops.items() if h == hop})


def test_per_hop_i2c(case) -> None:
    gold, rankings, out = case
    config = n.ABSTRACTION_CONFIGS[0]
    diag = out[config]["diagnostics"]
    by_hop: dict[int, dict[str, float]] = {1: {}, 2: {}}
    shared: dict[str, dict[int, dict[bool, float]]] = {}
    for row in gold[config]:
        hops = dict(zip(row["positive_ids"], row["positive_hops"], strict=True))
        ranked = rankings[config][row["query_id"]]
        for hop in (1, 2):
            if hop in hops.values():
                by_hop[hop][row["query_id"]] = _hop_ap(ranked, hops, hop, compress=False)
        if set(hops.values()) == {1, 2}:
            shared[row["query_id"]] = {h: {c: _hop_ap(ranked, hops, h, c) for c in (False, True)} for h in (1, 2)}
    assert by_hop[1] and by_hop[2] and shared  # the mini edition exercises both hops and the shared set
    assert len(by_hop[2]) < len(gold[config])  # hop 2 is only over queries that have hop-2 positives
    for hop in (1, 2):
        got = diag["per_hop"][str(hop)]
        assert got["n_queries"] == len(by_hop[hop])
        assert close(got["map"], mean(list(by_hop[hop].values()))), hop
        assert set(diag["per_query_ap_by_hop"][str(hop)]) == set(by_hop[hop])
        for qid, ap in by_hop[hop].items():
            assert close(diag["per_query_ap_by_hop"][str(hop)][qid], ap), (hop, qid)
    for variant, compress in (("shared_original", False), ("shared_compressed", True)):
        got = diag[variant]
        assert got["n_queries"] == len(shared)
        a1 = [v[1][compress] for v in shared.values()]
        a2 = [v[2][compress] for v in shared.values()]
        assert close(got["1"], mean(a1)) and close(got["2"], mean(a2)), variant
        assert close(got["difference"], mean([y - x for x, y in zip(a1, a2, strict=True)])), variant


def _grouped(rows: Sequence[Row], ap: Mapping[str, float], key: str) -> dict[str, list[float]]:
    groups: dict[str, list[float]] = {}
    for row in rows:
        value = len(row["conditions"]) if key == "conditions" else row[key]
        groups.setdefault(str(value), []).append(ap[row["query_id"]])
    return groups


def _check_groups(got: Mapping[str, Any], groups: Mapping[str, list[float]], field: str = "map") -> None:
    assert set(got) == set(groups)
    for key, values in groups.items():
        assert got[key]["n_queries"] == len(values), key
        assert close(got[key][field], mean(values)), (key, got[key][field], mean(values))


def test_grouped_diagnostics(case) -> None:
    gold, rankings, out = case
    ap = {
        c: {r["query_id"]: ref_ap(rankings[c][r["query_id"]], set(r["positive_ids"])) for r in rows}
        for c, rows in gold.items()
    }
    c2i = n.ABSTRACTION_CONFIGS[1]
    _check_groups(out[c2i]["diagnostics"]["map_by_depth"], _grouped(gold[c2i], ap[c2i], "depth"))
    for config in n.CONSTRAINTS_CONFIGS:
        diag = out[config]["diagnostics"]
        _check_groups(diag["map_by_profile"], _grouped(gold[config], ap[config], "profile"))
        assert list(diag["map_by_profile"]) == [p for p in n.PROFILES if p in diag["map_by_profile"]]
        _check_groups(diag["map_by_condition_count"], _grouped(gold[config], ap[config], "conditions"))
    for config in n.STATE_CONFIGS:
        by_session = out[config]["diagnostics"]["map_by_session"]
        sessions = {r["session_type"] for r in gold[config]}
        assert set(by_session) == sessions
        for session in sessions:
            rows = [r for r in gold[config] if r["session_type"] == session]
            _check_groups(by_session[session], _grouped(rows, ap[config], "num_turns"))


def test_dialogue_cost_paired_by_query_id(case) -> None:
    gold, rankings, out = case
    for domain, c_cfg, s_cfg in zip(n.DOMAINS, n.CONSTRAINTS_CONFIGS, n.STATE_CONFIGS, strict=True):
        c_ap = {r["query_id"]: ref_ap(rankings[c_cfg][r["query_id"]], set(r["positive_ids"])) for r in gold[c_cfg]}
        diffs: dict[str, dict[str, list[float]]] = {}
        all_diffs: list[float] = []
        for r in gold[s_cfg]:
            d = ref_ap(rankings[s_cfg][r["query_id"]], set(r["positive_ids"])) - c_ap[r["query_id"]]
            all_diffs.append(d)
            diffs.setdefault(r["session_type"], {}).setdefault(str(r["num_turns"]), []).append(d)
        got = out[scoring.DIALOGUE_COST][domain]
        assert got["n_pairs"] == len(gold[s_cfg]) and got["n_unpaired"] == 0
        assert close(got["mean"], mean(all_diffs))
        assert set(got["by_session"]) == set(diffs)
        for session, by_turns in diffs.items():
            _check_groups(got["by_session"][session], by_turns, field="mean")


def test_dialogue_cost_pairs_by_id_not_by_position(gold) -> None:
    """Shuffling the constraints rows (and dropping one) must not change which queries are paired."""
    c_cfg, s_cfg = n.CONSTRAINTS_CONFIGS[0], n.STATE_CONFIGS[0]
    rankings = make_rankings({c: gold[c] for c in (c_cfg, s_cfg)}, "oracle")
    shuffled = list(gold[c_cfg])
    random.Random(3).shuffle(shuffled)
    dropped = shuffled.pop()["query_id"]
    rankings[c_cfg].pop(dropped)
    out = scoring.score_triad({c_cfg: shuffled, s_cfg: gold[s_cfg]}, rankings, seed=0)
    diffs: dict[str, dict[str, list[float]]] = {}
    for r in gold[s_cfg]:
        if r["query_id"] != dropped:
            d = ref_ap(rankings[s_cfg][r["query_id"]], set(r["positive_ids"])) - ref_ap(
                rankings[c_cfg][r["query_id"]], set(r["positive_ids"])
            )
            diffs.setdefault(r["session_type"], {}).setdefault(str(r["num_turns"]), []).append(d)
    cost = out[scoring.DIALOGUE_COST][n.DOMAINS[0]]
    flat = [d for by_turns in diffs.values() for ds in by_turns.values() for d in ds]
    assert cost["n_pairs"] == len(flat) and cost["n_unpaired"] == 1
    assert close(cost["mean"], mean(flat))
    for session, by_turns in diffs.items():  # the group means expose a positional pairing
        _check_groups(cost["by_session"][session], by_turns, field="mean")


# --- bootstrap ------------------------------------------------------------------------------------------------
def _intervals(node: Any, path: str = "") -> Iterator[tuple[str, float, list[float]]]:
    """Every (mean, interval) pair in a scoring output."""
    if isinstance(node, Mapping):
        if "interval" in node and ("map" in node or "mean" in node or "difference" in node):
            value = node.get("map", node.get("mean", node.get("difference")))
            yield path, value, node["interval"]
        if "intervals" in node and "metrics" in node:
            for name, interval in node["intervals"].items():
                yield f"{path}/{name}", node["metrics"][name], interval
        for key, child in node.items():
            yield from _intervals(child, f"{path}/{key}")


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default) of already sorted values."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def test_every_interval_contains_its_mean(case) -> None:
    _, _, out = case
    found = list(_intervals(out))
    assert len(found) > 40
    for path, value, (lo, hi) in found:
        assert lo - TOL <= value <= hi + TOL, (path, lo, value, hi)


def test_bootstrap_is_seeded_3000_resample_percentile(gold) -> None:
    config = n.CONSTRAINTS_CONFIGS[0]
    rankings = make_rankings({config: gold[config]}, "random")
    ap = [ref_ap(rankings[config][r["query_id"]], set(r["positive_ids"])) for r in gold[config]]
    out0 = scoring.score_triad({config: gold[config]}, rankings, seed=0)[config]
    assert out0 == scoring.score_triad({config: gold[config]}, rankings, seed=0)[config]  # seeded: reproducible
    out1 = scoring.score_triad({config: gold[config]}, rankings, seed=1)[config]
    assert out1["intervals"]["map"] != out0["intervals"]["map"] and out1["metrics"] == out0["metrics"]
    # the reported interval is the 2.5/97.5 percentile of exactly 3,000 seeded resample means
    means = stats.bootstrap_means(np.asarray(ap), seed=0)
    assert stats.N_RESAMPLES == 3000 and means.shape == (3000,)
    ordered = sorted(means.tolist())
    lo, hi = out0["intervals"]["map"]
    assert close(lo, _percentile(ordered, 0.025)) and close(hi, _percentile(ordered, 0.975))
    # ... and those are query-bootstrap means: an independent 3,000-resample bootstrap (own RNG) agrees within
    # Monte-Carlo error (endpoint standard error is about 1-2% of the interval width here)
    rng = random.Random(12345)
    ref = sorted(mean([ap[rng.randrange(len(ap))] for _ in ap]) for _ in range(3000))
    ref_lo, ref_hi = _percentile(ref, 0.025), _percentile(ref, 0.975)
    width = ref_hi - ref_lo
    assert abs(lo - ref_lo) < 0.12 * width and abs(hi - ref_hi) < 0.12 * width, (lo, hi, ref_lo, ref_hi)
    assert abs(mean(means.tolist()) - mean(ap)) < 0.05 * width


# --- ARK ------------------------------------------------------------------------------------------------------
ARK_KS = {"recall@1": 1, "recall@5": 5, "recall@10": 10, "ndcg@5": 5, "ndcg@10": 10, "ndcg@20": 20}


def _ark_value(name: str, rank: int) -> float:
    k = ARK_KS[name]
    if name.startswith("recall"):
        return 1.0 if rank <= k else 0.0
    return 1.0 / math.log2(rank + 1) if rank <= k else 0.0


@pytest.fixture(scope="module")
def ark_case() -> tuple[dict, dict, dict]:
    rng = random.Random("crosscheck-ark")
    gold: dict[str, list[dict[str, Any]]] = {}
    rankings: dict[str, dict[str, Any]] = {}
    ranks: dict[str, dict[str, int]] = {}
    for subtype in ark_names.MINI_SUBTYPES:
        build = mini_build(subtype)
        gallery = [item["item_id"] for item in build.gallery]
        keep = len(build.queries) - 17 * ark_names.MINI_SUBTYPES.index(subtype)  # unequal sizes: macro != pooled
        rows = [dict(q) for q in build.queries[:keep]]
        for i, row in enumerate(rows[: len(rows) // 2]):  # relabel half: demands/skills shared across subtypes
            row["cognitive_demand"] = ark_names.COGNITIVE_DEMANDS[i % len(ark_names.COGNITIVE_DEMANDS)]
            row["reasoning_skills"] = rng.sample(list(ark_names.REASONING_SKILLS), 1 + i % 3)
        gold[subtype] = rows
        rankings[subtype], ranks[subtype] = {}, {}
        for i, row in enumerate(rows):
            rank = rng.randint(1, 25) if rng.random() < 0.6 else rng.randint(1, len(gallery))
            ranks[subtype][row["query_id"]] = rank
            if i % 3 == 0:
                rankings[subtype][row["query_id"]] = rank
            elif i % 3 == 1:
                rankings[subtype][row["query_id"]] = {"positive_rank": rank}
            else:  # a ranked id list with the positive at `rank`
                others = [g for g in gallery if g != row["positive_id"]]
                rankings[subtype][row["query_id"]] = others[: rank - 1] + [row["positive_id"]] + others[rank - 1 :]
    return gold, ranks, scoring.score_ark(gold, rankings, seed=0)


def test_ark_per_subtype_macro_and_breakdowns(ark_case) -> None:
    gold, ranks, out = ark_case
    sub_means: dict[str, dict[str, float]] = {}
    for subtype, rows in gold.items():
        got = out[subtype]
        assert got["n_queries"] == len(rows) and got["positive_rank"] == ranks[subtype]
        sub_means[subtype] = {}
        for name in ARK_KS:
            expected = mean([_ark_value(name, ranks[subtype][r["query_id"]]) for r in rows])
            sub_means[subtype][name] = expected
            assert close(got["metrics"][name], expected), (subtype, name)
    assert out["macro"]["n_subtypes"] == len(gold)
    for name in ARK_KS:  # unweighted mean over subtypes
        assert close(out["macro"]["metrics"][name], mean([m[name] for m in sub_means.values()])), name
    for domain, subs in ark_names.DOMAIN_SUBTYPES.items():
        present = [s for s in subs if s in gold]
        if not present:
            assert domain not in out["by_domain"]
            continue
        for name in ARK_KS:
            assert close(out["by_domain"][domain]["metrics"][name], mean([sub_means[s][name] for s in present]))
    demand: dict[str, list[int]] = {}
    skill: dict[str, list[int]] = {}
    for subtype, rows in gold.items():
        for r in rows:
            demand.setdefault(r["cognitive_demand"], []).append(ranks[subtype][r["query_id"]])
            for sk in r["reasoning_skills"]:
                skill.setdefault(sk, []).append(ranks[subtype][r["query_id"]])
    for key, groups in (("by_cognitive_demand", demand), ("by_reasoning_skill", skill)):
        assert set(out[key]) == set(groups), key
        for label, group in groups.items():
            assert out[key][label]["n_queries"] == len(group)
            for name in ARK_KS:
                expected = mean([_ark_value(name, r) for r in group])
                assert close(out[key][label]["metrics"][name], expected), (key, label, name)
    for path, value, (lo, hi) in _intervals(out):
        assert lo - TOL <= value <= hi + TOL, (path, lo, value, hi)
