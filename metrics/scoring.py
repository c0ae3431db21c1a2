"""The one path from rankings to numbers (CONTRACTS §4), used by the runner and by the Space.

``score_triad(gold, rankings)``: gold is config -> docs/protocol.md §1 query rows, rankings is config -> query_id -> ranked
candidate ids (the complete pool, best first). A ranking becomes scores by position (no ties), and every number
comes from `metrics.core`. ``score_ark(gold, rankings)`` does the same for ARK from each query's positive rank.

>>> rows = [{"query_id": "q1", "candidate_ids": ["a", "b", "c"], "positive_ids": ["c"],
...          "candidate_roles": ["random", "sibling", "positive"], "candidate_trap": [False, False, False]}]
>>> out = score_triad({"self_i2c": rows}, {"self_i2c": {"q1": ["b", "c", "a"]}})
>>> out["self_i2c"]["metrics"]["map"], out["self_i2c"]["metrics"]["entry_rate@10"]
(0.5, {'sibling': 1.0, 'random': 1.0})
>>> score_triad({"self_i2c": rows}, {"self_i2c": {"q1": ["b", "c", "c"]}})
Traceback (most recent call last):
...
ValueError: config self_i2c, query_id 'q1': ranking is not a permutation of the pool (duplicate id 'c')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ark_dataset import names as ark_names
from metrics.columnar import TriadGold, first_non_permutation, gold_from_rows
from metrics.core import kernels, stats
from metrics.core.ark import ndcg_at_rank, recall_at_rank
from metrics.core.diagnostics import group_indices, has_hop, hop_ap
from metrics.core.ranking import Ranked, rank_from_order
from metrics.core.registry import compute, compute_ark
from metrics.paper_scoring import paper_diagnostics
from triad_dataset.contract import names

TOP_K = 10  # paper B.1: top-10 entry rates
TRIAD_METRICS: tuple[str, ...] = ("map", "top1_hit", "mrr", "recall@1", "recall@5", "recall@10", "ndcg@10")
ARK_METRICS: tuple[str, ...] = ("recall@1", "recall@5", "recall@10", "ndcg@5", "ndcg@10", "ndcg@20")
DIALOGUE_COST = "dialogue_cost"  # run-level key next to the config names in score_triad's output
PAPER_DIAGNOSTICS = "paper_diagnostics"  # run-level key: paper C.3, C.4, Fig. 9, D.3 (metrics/paper_scoring.py)
ARK_SUMMARY_KEYS: tuple[str, ...] = ("macro", "by_domain", "by_cognitive_demand", "by_reasoning_skill")


# --- rankings -> arrays ---------------------------------------------------------------------------------------
def _ranking_order(config: str, qid: str, index: Mapping[str, int], ranked: Sequence[str]) -> list[int]:
    """Pool indices in ranked order (length-checked; duplicates are caught in bulk by `_check_permutations`)."""
    where = f"config {config}, query_id {qid!r}"
    if isinstance(ranked, (str, bytes)) or not isinstance(ranked, Sequence | np.ndarray):
        raise ValueError(f"{where}: ranking must be a list of candidate ids, got {type(ranked).__name__}")
    try:
        order = list(map(index.__getitem__, ranked))
    except (KeyError, TypeError):
        bad = next(c for c in ranked if not isinstance(c, str) or c not in index)
        raise ValueError(f"{where}: ranking is not a permutation of the pool (id {bad!r} is not a candidate)") from None
    if len(order) != len(index):
        raise ValueError(
            f"{where}: ranking is not a permutation of the pool ({len(order)} ids for a pool of {len(index)})"
        )
    return order


def _check_permutations(
    config: str, rows: Sequence[Mapping[str, Any]], ranking: Mapping[str, Any], order: np.ndarray
) -> None:
    """Every row of ``order`` (length-checked, padded with its own tail) must hit every pool slot exactly once."""
    hit = np.zeros(order.shape, dtype=bool)
    np.put_along_axis(hit, order, True, axis=1)
    bad = np.flatnonzero(~hit.all(axis=1))
    if bad.size:
        qid = rows[int(bad[0])]["query_id"]
        dup = _first_repeat(ranking[qid])
        raise ValueError(
            f"config {config}, query_id {qid!r}: ranking is not a permutation of the pool (duplicate id {dup!r})"
        )


def _first_repeat(ids: Sequence[str]) -> str:
    """The first id that appears a second time in ``ids`` (StopIteration when none does)."""
    seen: set[str] = set()
    for c in ids:
        if c in seen:
            return c
        seen.add(c)
    raise StopIteration


def _gold_rows(config: str, rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    rows = list(rows)
    if not rows:
        raise ValueError(f"config {config}: no gold queries")
    seen: set[Any] = set()
    for row in rows:
        qid = row.get("query_id")
        if qid in seen:
            raise ValueError(f"config {config}, query_id {qid!r}: appears twice in the gold rows")
        seen.add(qid)
    return rows


def _queries_match(config: str, rows: Sequence[Mapping[str, Any]], ranking: Mapping[str, Any]) -> None:
    gold_ids = {row["query_id"] for row in rows}
    missing = [row["query_id"] for row in rows if row["query_id"] not in ranking]
    if missing:
        raise ValueError(f"config {config}, query_id {missing[0]!r}: no ranking ({len(missing)} gold queries missing)")
    extra = [q for q in ranking if q not in gold_ids]
    if extra:
        raise ValueError(f"config {config}, query_id {extra[0]!r}: ranked but not a gold query")


class _Config:
    """One TRIAD config ready to score: its columnar gold (`metrics.columnar.TriadGold`) and the ranking as pool
    positions best first. Built from row dicts and id lists (`from_rows`) or given as arrays (`score_triad_arrays`)."""

    def __init__(self, gold: TriadGold, order: np.ndarray) -> None:
        self.config, self.rows, self.gold = gold.config, gold.rows, gold
        self.role_code, self.trap, self.hops, self.has_hops = gold.role_code, gold.trap, gold.hops, gold.has_hops
        self.query_ids = [row["query_id"] for row in gold.rows]
        self.order = order
        self.ranked: Ranked = rank_from_order(order, gold.labels, gold.mask)

    @classmethod
    def from_rows(cls, config: str, rows: Sequence[Mapping[str, Any]], ranking: Mapping[str, Sequence[str]]) -> _Config:
        rows = _gold_rows(config, rows)
        _queries_match(config, rows, ranking)
        gold = gold_from_rows(config, rows)
        width = gold.mask.shape[1]
        order = np.tile(np.arange(width, dtype=np.int64), (len(rows), 1))
        for q, row in enumerate(rows):
            pool = row["candidate_ids"]
            index = dict(zip(pool, range(len(pool)), strict=True))
            order[q, : len(pool)] = _ranking_order(config, row["query_id"], index, ranking[row["query_id"]])
        _check_permutations(config, rows, ranking, order)
        return cls(gold, order)


# --- TRIAD ----------------------------------------------------------------------------------------------------
def _summary(values: np.ndarray, seed: int) -> dict[str, Any]:
    lo, hi = stats.bootstrap_ci(values, seed=seed)
    return {"map": float(values.mean()), "n_queries": int(values.size), "interval": [lo, hi]}


def _by_key(ap: np.ndarray, keys: Sequence[Any], seed: int, order: Sequence[Any] | None = None) -> dict[str, Any]:
    groups = group_indices([str(k) for k in keys])
    ordered = [str(k) for k in order if str(k) in groups] if order else sorted(groups)
    ordered += [k for k in sorted(groups) if k not in ordered]
    return {k: _summary(ap[groups[k]], seed) for k in ordered}


def _hop_diagnostics(cfg: _Config, seed: int) -> dict[str, Any]:
    """Per-hop I2C AP (paper B.1) and the compressed-rank sensitivity variant on shared queries (paper C.6)."""
    out: dict[str, Any] = {"per_hop": {}, "per_query_ap_by_hop": {}}
    hops_present = sorted({int(h) for h in np.unique(cfg.hops) if h > 0})
    for hop in hops_present:
        eligible = has_hop(cfg.hops, hop)
        ap = hop_ap(cfg.ranked, cfg.hops, hop)[eligible]
        out["per_hop"][str(hop)] = _summary(ap, seed)
        ids = [q for q, e in zip(cfg.query_ids, eligible, strict=True) if e]
        out["per_query_ap_by_hop"][str(hop)] = dict(zip(ids, ap.tolist(), strict=True))
    if len(hops_present) == 2:
        h1, h2 = hops_present
        shared = has_hop(cfg.hops, h1) & has_hop(cfg.hops, h2)
        if shared.any():
            for variant, compress in (("shared_original", False), ("shared_compressed", True)):
                a1 = hop_ap(cfg.ranked, cfg.hops, h1, compress=compress)[shared]
                a2 = hop_ap(cfg.ranked, cfg.hops, h2, compress=compress)[shared]
                out[variant] = {
                    "n_queries": int(shared.sum()),
                    str(h1): float(a1.mean()),
                    str(h2): float(a2.mean()),
                    "difference": float((a2 - a1).mean()),  # paper C.6: two-level minus one-level
                    "interval": list(stats.paired_bootstrap_ci(a2, a1, seed=seed)),
                    "wilcoxon_p": stats.wilcoxon(a2, a1),
                }
    return out


def _diagnostics(cfg: _Config, ap: np.ndarray, seed: int) -> dict[str, Any]:
    rows, config = cfg.rows, cfg.config
    if cfg.has_hops:
        return _hop_diagnostics(cfg, seed)
    if config in names.ABSTRACTION_CONFIGS and any(r.get("depth") is not None for r in rows):
        return {"map_by_depth": _by_key(ap, [r.get("depth") for r in rows], seed)}  # paper 5.1: mAP by depth
    if config in names.CONSTRAINTS_CONFIGS:
        counts = [_condition_count(r) for r in rows]
        return {
            "map_by_profile": _by_key(ap, [r.get("profile") for r in rows], seed, order=list(names.PROFILES)),
            "map_by_condition_count": _by_key(ap, counts, seed),  # paper Fig. 4a
        }
    if config in names.STATE_CONFIGS:
        out: dict[str, Any] = {}
        for session in names.SESSION_TYPES:
            idx = [i for i, r in enumerate(rows) if r.get("session_type") == session]
            if idx:
                sel = np.asarray(idx)
                out[session] = _by_key(ap[sel], [rows[i].get("num_turns") for i in idx], seed)
        return {"map_by_session": out}
    return {}


def _condition_count(row: Mapping[str, Any]) -> int:
    """A constraints query's condition count: its conditions, else the sum of its profile's P and N counts."""
    if row.get("conditions") is not None:
        return len(row["conditions"])
    positive, negative = names.PROFILES.get(str(row.get("profile")), (0, 0))
    return positive + negative


def _entry_rates(cfg: _Config) -> dict[str, float | None]:
    """Typed-negative entry rate@10 per role, pooled over queries (paper B.1)."""
    rates: dict[str, float | None] = {}
    present = cfg.gold.derived.get("roles")
    if present is None:  # a property of the gold alone: found once per gold
        present = cfg.gold.derived["roles"] = set(np.unique(cfg.role_code[cfg.role_code >= 0]).tolist())
    for i, role in enumerate(names.ROLES):
        if role == names.POSITIVE or i not in present:
            continue
        num, den = kernels.topk_counts(cfg.ranked, cfg.role_code == i, TOP_K)
        rates[role] = kernels.pooled_rate(num, den)
    return rates


def score_triad_config(
    config: str, rows: Sequence[Mapping[str, Any]], ranking: Mapping[str, Sequence[str]], *, seed: int = 0
) -> dict[str, Any]:
    """Score one TRIAD config: metrics, the mAP interval, diagnostics and per-query AP (CONTRACTS §4)."""
    if config not in names.TASK_CONFIGS:
        raise ValueError(f"config {config!r} is not a TRIAD task config; valid: {', '.join(names.TASK_CONFIGS)}")
    return _score_config(_Config.from_rows(config, rows, ranking), seed)


def _score_config(cfg: _Config, seed: int) -> dict[str, Any]:
    config = cfg.config
    per_query = compute(cfg.ranked, TRIAD_METRICS)
    ap = per_query["map"]
    metrics: dict[str, Any] = {name: float(values.mean()) for name, values in per_query.items()}
    metrics[f"entry_rate@{TOP_K}"] = _entry_rates(cfg)
    if config in names.STATE_CONFIGS:  # paper B.1: conflict-trap top-10 rate and share of queries with a trap
        num, den = kernels.topk_counts(cfg.ranked, cfg.trap, TOP_K)
        metrics[f"trap_rate@{TOP_K}"] = kernels.pooled_rate(num, den)
        with_trap = cfg.trap.any(axis=1)
        share = kernels.any_in_topk(cfg.ranked, cfg.trap, TOP_K)[with_trap]
        metrics[f"trap_query_share@{TOP_K}"] = float(share.mean()) if share.size else None
        metrics["n_trap_queries"] = int(with_trap.sum())
    lo, hi = stats.bootstrap_ci(ap, seed=seed)
    return {
        "n_queries": len(cfg.rows),
        "metrics": metrics,
        "intervals": {"map": [lo, hi]},
        "diagnostics": _diagnostics(cfg, ap, seed),
        "per_query_ap": dict(zip(cfg.query_ids, ap.tolist(), strict=True)),
    }


def dialogue_cost(
    state: Mapping[str, Any], constraints: Mapping[str, Any], state_rows: Sequence[Mapping[str, Any]], *, seed: int = 0
) -> dict[str, Any]:
    """State AP minus constraints AP paired by query_id, overall and by session type x turns (paper B.1).

    ``state``/``constraints`` are `score_triad_config` outputs; queries without a partner are counted, not used.
    """
    s_ap, c_ap = state["per_query_ap"], constraints["per_query_ap"]
    paired = [r for r in state_rows if r["query_id"] in c_ap]
    out: dict[str, Any] = {"n_pairs": len(paired), "n_unpaired": len(state_rows) - len(paired)}
    if not paired:
        return out
    diff = np.asarray([s_ap[r["query_id"]] - c_ap[r["query_id"]] for r in paired])
    out["mean"] = float(diff.mean())
    out["interval"] = list(stats.bootstrap_ci(diff, seed=seed))
    out["wilcoxon_p"] = stats.wilcoxon(diff, np.zeros_like(diff))
    by: dict[str, Any] = {}
    for session in names.SESSION_TYPES:
        idx = [i for i, r in enumerate(paired) if r.get("session_type") == session]
        for turns, sel in sorted(group_indices([str(paired[i].get("num_turns")) for i in idx]).items()):
            values = diff[np.asarray(idx)[sel]]
            by.setdefault(session, {})[turns] = {
                "mean": float(values.mean()),
                "n_queries": int(values.size),
                "interval": list(stats.bootstrap_ci(values, seed=seed)),
            }
    out["by_session"] = by
    return out


def score_triad(
    gold: Mapping[str, Sequence[Mapping[str, Any]]],
    rankings: Mapping[str, Mapping[str, Sequence[str]]],
    *,
    seed: int = 0,
) -> dict[str, Any]:
    """Score every config in ``rankings`` against ``gold`` (CONTRACTS §4); adds the run-level dialogue cost.

    Each ranked config must be a gold config; every gold query of it must be ranked exactly once, as a permutation
    of its pool. Gold configs without rankings are not scored. The seed drives the bootstrap intervals.
    """
    unknown = [c for c in rankings if c not in gold]
    if unknown:
        raise ValueError(f"config {unknown[0]}: ranked but not in the gold data (gold: {', '.join(gold)})")
    bad = [c for c in rankings if c not in names.TASK_CONFIGS]
    if bad:
        raise ValueError(f"config {bad[0]!r} is not a TRIAD task config; valid: {', '.join(names.TASK_CONFIGS)}")
    configs = {c: _Config.from_rows(c, gold[c], rankings[c]) for c in rankings}
    out: dict[str, Any] = {c: _score_config(cfg, seed) for c, cfg in configs.items()}
    out[DIALOGUE_COST] = _dialogue_costs(out, gold, seed)
    out[PAPER_DIAGNOSTICS] = paper_diagnostics(
        {c: cfg.gold for c, cfg in configs.items()}, {c: cfg.order for c, cfg in configs.items()}, out, seed=seed
    )
    return out


def score_triad_arrays(
    gold: Mapping[str, TriadGold], orders: Mapping[str, np.ndarray], *, seed: int = 0
) -> dict[str, Any]:
    """`score_triad` from arrays (CONTRACTS §4): the array-native entry of the runner and the Space.

    ``gold[config]`` is a `metrics.columnar.TriadGold` (from `metrics.columnar.gold_from_table(config, table)`,
    the gold parquet read with pyarrow, or `gold_from_rows`); ``orders[config]`` is an int array of shape
    ``gold[config].mask.shape``: row q lists query q's pool positions best first (gold query order; padding slots
    after the real ones). Rankings given as ids become orders with `metrics.columnar.order_from_ids(gold[config],
    query_id_column, candidate_ids_column)`, which raises ValueError naming config and query_id when a ranking is not
    a permutation of its pool. Returns exactly what `score_triad` returns for the same rankings.
    """
    unknown = [c for c in orders if c not in gold]
    if unknown:
        raise ValueError(f"config {unknown[0]}: ranked but not in the gold data (gold: {', '.join(gold)})")
    out: dict[str, Any] = {}
    for config, order in orders.items():
        if config not in names.TASK_CONFIGS:
            raise ValueError(f"config {config!r} is not a TRIAD task config; valid: {', '.join(names.TASK_CONFIGS)}")
        g = gold[config]
        order = np.asarray(order, dtype=np.int64)
        if order.shape != g.mask.shape:
            raise ValueError(f"config {config}: order of shape {order.shape} for gold pools of shape {g.mask.shape}")
        bad = first_non_permutation(order)
        if bad is not None:
            raise ValueError(
                f"config {config}, query_id {g.rows[bad]['query_id']!r}: ranking is not a permutation of the pool"
            )
        out[config] = _score_config(_Config(g, order), seed)
    out[DIALOGUE_COST] = _dialogue_costs(out, {c: g.rows for c, g in gold.items()}, seed)
    out[PAPER_DIAGNOSTICS] = paper_diagnostics(gold, orders, {c: out[c] for c in orders}, seed=seed)
    return out


def _dialogue_costs(
    out: Mapping[str, Any], rows: Mapping[str, Sequence[Mapping[str, Any]]], seed: int
) -> dict[str, Any]:
    costs: dict[str, Any] = {}
    for domain, c_cfg, s_cfg in zip(names.DOMAINS, names.CONSTRAINTS_CONFIGS, names.STATE_CONFIGS, strict=True):
        if c_cfg in out and s_cfg in out:
            costs[domain] = dialogue_cost(out[s_cfg], out[c_cfg], rows[s_cfg], seed=seed)
    return costs


# --- ARK ------------------------------------------------------------------------------------------------------
def _positive_rank(subtype: str, row: Mapping[str, Any], value: Any) -> int:
    where = f"config {subtype}, query_id {row['query_id']!r}"
    if isinstance(value, Mapping):
        if "positive_rank" not in value:
            raise ValueError(f"{where}: ranking has no positive_rank")
        value = value["positive_rank"]
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        ids = list(value)
        if row.get("positive_id") not in ids:
            raise ValueError(
                f"{where}: positive {row.get('positive_id')!r} is not in the ranked ids and no positive_rank"
            )
        if len(set(ids)) != len(ids):
            raise ValueError(f"{where}: ranking lists an id twice")
        return ids.index(row["positive_id"]) + 1
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{where}: positive_rank {value!r} is not a 1-based rank")
    return int(value)


def _mean_with_interval(per_query: Mapping[str, np.ndarray], seed: int) -> dict[str, Any]:
    return {
        "n_queries": int(next(iter(per_query.values())).size),
        "metrics": {m: float(v.mean()) for m, v in per_query.items()},
        "intervals": {m: list(stats.bootstrap_ci(v, seed=seed)) for m, v in per_query.items()},
    }


def score_ark_subtype(
    subtype: str, rows: Sequence[Mapping[str, Any]], ranking: Mapping[str, Any], *, seed: int = 0
) -> dict[str, Any]:
    """One ARK subtype: R@1/5/10 and nDCG@5/10/20 with bootstrap intervals, and every query's positive rank."""
    if subtype not in ark_names.SUBTYPES:
        raise ValueError(f"config {subtype!r} is not an ARK subtype; valid: {', '.join(ark_names.SUBTYPES)}")
    rows = _gold_rows(subtype, rows)
    _queries_match(subtype, rows, ranking)
    ranks = np.asarray([_positive_rank(subtype, r, ranking[r["query_id"]]) for r in rows], dtype=np.int64)
    out = _mean_with_interval(compute_ark(ranks, ARK_METRICS), seed)
    out["positive_rank"] = dict(zip([r["query_id"] for r in rows], ranks.tolist(), strict=True))
    return out


def _macro(per_subtype: Mapping[str, Mapping[str, np.ndarray]], seed: int) -> dict[str, Any]:
    """Unweighted mean over subtypes; interval from a bootstrap stratified by subtype (same seed per subtype)."""
    metrics, intervals = {}, {}
    for m in ARK_METRICS:
        values = [v[m] for v in per_subtype.values()]
        metrics[m] = float(np.mean([v.mean() for v in values]))
        boot = np.mean([stats.bootstrap_means(v, seed=seed + i) for i, v in enumerate(values)], axis=0)
        intervals[m] = [float(x) for x in np.quantile(boot, [0.025, 0.975])]
    return {"n_subtypes": len(per_subtype), "subtypes": list(per_subtype), "metrics": metrics, "intervals": intervals}


def score_ark(
    gold: Mapping[str, Sequence[Mapping[str, Any]]], rankings: Mapping[str, Mapping[str, Any]], *, seed: int = 0
) -> dict[str, Any]:
    """Score ARK (CONTRACTS §4): per subtype, macro over the subtypes present, and breakdowns.

    ``rankings[subtype][query_id]`` is the 1-based positive rank, a mapping with ``positive_rank``, or a ranked id
    list containing the positive. ``by_domain`` macro-averages the domain's subtypes; ``by_cognitive_demand`` and
    ``by_reasoning_skill`` pool queries across subtypes (a query counts once per reasoning skill it carries).
    """
    unknown = [c for c in rankings if c not in gold]
    if unknown:
        raise ValueError(f"config {unknown[0]}: ranked but not in the gold data (gold: {', '.join(gold)})")
    subtypes = [s for s in ark_names.SUBTYPES if s in rankings] + [s for s in rankings if s not in ark_names.SUBTYPES]
    out: dict[str, Any] = {s: score_ark_subtype(s, gold[s], rankings[s], seed=seed) for s in subtypes}
    per_query: dict[str, dict[str, np.ndarray]] = {}
    demand: dict[str, list[int]] = {}
    skill: dict[str, list[int]] = {}
    all_ranks: list[int] = []
    for s in subtypes:
        ranks = np.asarray([out[s]["positive_rank"][r["query_id"]] for r in gold[s]])
        per_query[s] = compute_ark(ranks, ARK_METRICS)
        for r, rank in zip(gold[s], ranks.tolist(), strict=True):
            i = len(all_ranks)
            all_ranks.append(rank)
            if r.get("cognitive_demand") is not None:
                demand.setdefault(r["cognitive_demand"], []).append(i)
            for sk in r.get("reasoning_skills") or ():
                skill.setdefault(sk, []).append(i)
    if not subtypes:
        return out
    out["macro"] = _macro(per_query, seed)
    out["by_domain"] = {
        d: _macro({s: per_query[s] for s in subs if s in per_query}, seed)
        for d, subs in ark_names.DOMAIN_SUBTYPES.items()
        if any(s in per_query for s in subs)
    }
    ranks_all = np.asarray(all_ranks, dtype=np.int64)

    def _pooled(groups: Mapping[str, list[int]], order: Sequence[str]) -> dict[str, Any]:
        keys = [k for k in order if k in groups] + sorted(k for k in groups if k not in order)
        return {k: _mean_with_interval(compute_ark(ranks_all[groups[k]], ARK_METRICS), seed) for k in keys}

    out["by_cognitive_demand"] = _pooled(demand, ark_names.COGNITIVE_DEMANDS)
    out["by_reasoning_skill"] = _pooled(skill, ark_names.REASONING_SKILLS)
    return out


# Re-exported for callers that score a single positive rank array without gold rows.
__all__ = [
    "ARK_METRICS",
    "ARK_SUMMARY_KEYS",
    "DIALOGUE_COST",
    "PAPER_DIAGNOSTICS",
    "TRIAD_METRICS",
    "dialogue_cost",
    "ndcg_at_rank",
    "recall_at_rank",
    "score_ark",
    "score_ark_subtype",
    "score_triad",
    "score_triad_arrays",
    "score_triad_config",
]
