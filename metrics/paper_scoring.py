"""The paper's C.3, C.4, Fig. 9 and D.3 diagnostics from gold rows, rankings and per-query AP (results.json
"paper_diagnostics"; kernels in `metrics.core.paper_diagnostics`).

``paper_diagnostics(gold, rankings, scored)`` is called once by `metrics.scoring.score_triad` with its own per-config
output and returns::

    {"matched_comparisons": {constraints config: [C.3 comparison per (left, right) profile pair]},
     "trap_stratified": {domain: Fig. 9 strata of the paired AP change},
     "shared_pool": {domain: C.4 single- vs multi-turn AP on the candidates both pools contain},
     "resolution": {config: {n: 95% bootstrap half-width of mAP at n queries}}}   # D.3, Fig. 12a; n in
                                                      # 100, 200, 300, 500, 700, 1000 and the query count

C.3 strata are the reference's category (gold key ``reference_category``, added by `triad_dataset.strata`; absent
-> ``"?"``) crossed with the sorted attribute names of the query's conditions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from metrics.core import paper_diagnostics as pdg
from metrics.core import stats
from triad_dataset import names

TOP_K = 10  # paper Fig. 9: trap in the top 10


def _strata(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    keys = []
    for row in rows:
        attributes = sorted({str(c.get("attribute")) for c in row.get("conditions") or []})
        keys.append(f"{row.get(names.REFERENCE_CATEGORY) or '?'}|{'+'.join(attributes)}")
    return keys


def matched_comparisons(rows: Sequence[Mapping[str, Any]], ap: Mapping[str, float]) -> list[dict[str, Any]]:
    """Paper C.3 / Table 12 for one constraints config: D1/D2, D3/D4, D3/D5, complete and standardized."""
    values = np.asarray([ap[r["query_id"]] for r in rows], dtype=np.float64)
    profiles, strata = [r.get("profile") for r in rows], _strata(rows)
    return [pdg.matched_comparison(values, profiles, strata, left, right) for left, right in pdg.MATCHED_PAIRS]


def _ranked(ids: Sequence[str], positives: set[str], keep: set[str], width: int) -> tuple[np.ndarray, np.ndarray]:
    rel, kept = np.zeros(width, dtype=bool), np.zeros(width, dtype=bool)
    rel[: len(ids)] = [i in positives for i in ids]
    kept[: len(ids)] = [i in keep for i in ids]
    return rel, kept


def state_pairs(state_rows: Sequence[Mapping[str, Any]], constraints_rows: Sequence[Mapping[str, Any]],
                state_ranking: Mapping[str, Sequence[str]], constraints_ranking: Mapping[str, Sequence[str]],
                state_ap: Mapping[str, float], constraints_ap: Mapping[str, float], *, seed: int = 0
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(Fig. 9 trap strata, C.4 shared-pool rescoring) of one domain, over the state queries with a paired
    constraints query."""
    source = {r["query_id"]: r for r in constraints_rows}
    paired = [r for r in state_rows if r["query_id"] in source and r["query_id"] in constraints_ap]
    if not paired:
        return {}, {}
    delta = np.asarray([state_ap[r["query_id"]] - constraints_ap[r["query_id"]] for r in paired])
    conflict = np.asarray([r.get("session_type") == names.SESSION_TYPES[1] for r in paired])
    has_trap = np.asarray([any(r.get("candidate_trap") or []) for r in paired])
    top = []
    for r in paired:
        traps = {c for c, t in zip(r["candidate_ids"], r.get("candidate_trap") or [], strict=False) if t}
        top.append(any(c in traps for c in state_ranking[r["query_id"]][:TOP_K]))
    strata = pdg.trap_stratified_delta(delta, np.asarray(top), conflict & has_trap)
    width = max(max(len(r["candidate_ids"]), len(source[r["query_id"]]["candidate_ids"])) for r in paired)
    single, multi, shared_sizes, used = [], [], [], []
    for r in paired:
        qid = r["query_id"]
        shared = set(r["candidate_ids"]) & set(source[qid]["candidate_ids"])
        positives = set(r["positive_ids"]) & shared
        if not positives:  # no positive in both pools (never in a built folder: positives are identical)
            continue
        single.append(_ranked(constraints_ranking[qid], positives, shared, width))
        multi.append(_ranked(state_ranking[qid], positives, shared, width))
        shared_sizes.append(len(shared))
        used.append(r)
    if not used:
        return strata, {"n_pairs": 0, "n_skipped": len(paired)}
    ap_single = pdg.restricted_ap(np.stack([s[0] for s in single]), np.stack([s[1] for s in single]))
    ap_multi = pdg.restricted_ap(np.stack([m[0] for m in multi]), np.stack([m[1] for m in multi]))
    diff = ap_multi - ap_single
    by: dict[str, dict[str, Any]] = {}
    for i, r in enumerate(used):
        by.setdefault(str(r.get("session_type")), {}).setdefault(str(r.get("num_turns")), []).append(i)
    shared_pool = {
        "n_pairs": len(used), "n_skipped": len(paired) - len(used), "mean_shared_candidates": float(np.mean(shared_sizes)),
        "single_turn_map": float(ap_single.mean()), "multi_turn_map": float(ap_multi.mean()),
        "delta": float(diff.mean()), "interval": list(stats.bootstrap_ci(diff, seed=seed)),
        "by_session": {s: {t: {"delta": float(diff[idx].mean()), "n_queries": len(idx)} for t, idx in turns.items()}
                       for s, turns in by.items()},
    }
    return strata, shared_pool


def paper_diagnostics(gold: Mapping[str, Sequence[Mapping[str, Any]]],
                      rankings: Mapping[str, Mapping[str, Sequence[str]]], scored: Mapping[str, Any], *,
                      seed: int = 0) -> dict[str, Any]:
    """C.3, Fig. 9, C.4 and D.3 for every config (pair) present in ``scored`` (score_triad_config outputs)."""
    out: dict[str, Any] = {"matched_comparisons": {}, "trap_stratified": {}, "shared_pool": {}, "resolution": {}}
    for config in names.CONSTRAINTS_CONFIGS:
        if config in scored:
            out["matched_comparisons"][config] = matched_comparisons(gold[config], scored[config]["per_query_ap"])
    for domain, c_cfg, s_cfg in zip(names.DOMAINS, names.CONSTRAINTS_CONFIGS, names.STATE_CONFIGS, strict=True):
        if c_cfg in scored and s_cfg in scored:
            strata, shared = state_pairs(gold[s_cfg], gold[c_cfg], rankings[s_cfg], rankings[c_cfg],
                                         scored[s_cfg]["per_query_ap"], scored[c_cfg]["per_query_ap"], seed=seed)
            out["trap_stratified"][domain], out["shared_pool"][domain] = strata, shared
    for config in names.MAIN_CONFIGS:
        if config in scored:
            ap = np.asarray(list(scored[config]["per_query_ap"].values()), dtype=np.float64)
            sizes = sorted({*pdg.RESOLUTION_SIZES, ap.size})  # the paper's n and the subset's own query count
            out["resolution"][config] = pdg.resolution_curve(ap, sizes, seed=seed)
    return out
