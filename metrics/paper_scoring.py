"""The paper's C.3, C.4, Fig. 9 and D.3 diagnostics from gold rows, rankings and per-query AP (results.json
"paper_diagnostics"; kernels in `metrics.core.paper_diagnostics`).

``paper_diagnostics(gold, orders, scored)`` (columnar gold, rankings as pool positions) is called once by
`metrics.scoring.score_triad_arrays` (and so by `score_triad`) with its own per-config output and returns::

    {"matched_comparisons": {constraints config: [C.3 comparison per (left, right) profile pair]},
     "trap_stratified": {domain: Fig. 9 strata of the paired AP change},
     "shared_pool": {domain: C.4 single- vs multi-turn AP on the candidates both pools contain},
     "resolution": {config: {n: 95% bootstrap half-width of mAP at n queries}}}   # D.3, Fig. 12a; n in
                                                      # 100, 200, 300, 500, 700, 1000 and the query count

C.3 strata are the reference's category (gold key ``reference_category``, added by `triad_dataset.folder.strata`; absent
-> ``"?"``) crossed with the sorted attribute names of the query's conditions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from metrics.columnar import TriadGold
from metrics.core import paper_diagnostics as pdg
from metrics.core import stats
from metrics.ragged import padded
from triad_dataset.contract import names

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


def _common_codes(s: TriadGold, c: TriadGold) -> tuple[np.ndarray, np.ndarray, int]:
    """Each pool slot's candidate as a code shared by the two configs (their id dictionaries differ), padded to the
    pools' width with -1; and the number of codes."""
    codes: dict[str, int] = {}
    out = []
    for g in (s, c):
        if g.id_dictionary is None or g.pool_codes is None or g.pool_offsets is None:
            raise ValueError(f"config {g.config}: gold built without candidate ids (ids=False); C.4 needs them")
        table = np.asarray([codes.setdefault(i, len(codes)) for i in g.id_dictionary.to_pylist()], dtype=np.int64)
        flat = table[np.asarray(g.pool_codes)]
        out.append(padded(np.asarray(g.pool_offsets, dtype=np.int64), flat, g.mask.shape[1], -1, np.int64))
    return out[0], out[1], len(codes)


def _members(codes: np.ndarray, n_codes: int, select: np.ndarray | None = None) -> np.ndarray:
    """(n_queries, n_codes + 1) membership of each row's codes (column 0: the padding code -1, never a member)."""
    member = np.zeros((codes.shape[0], n_codes + 1), dtype=bool)
    rows = np.repeat(np.arange(codes.shape[0]), codes.shape[1]).reshape(codes.shape)
    keep = codes >= 0 if select is None else (codes >= 0) & select
    member[rows[keep], codes[keep] + 1] = True
    return member


def _lookup(member: np.ndarray, codes: np.ndarray) -> np.ndarray:
    return np.take_along_axis(member, codes + 1, axis=1)


POSITIVE, KEPT = 1, 2  # pool-slot flags of the C.4 rescoring: a shared positive / a candidate both pools contain


@dataclass(frozen=True)
class _Pairing:
    """What C.4 / Fig. 9 need from one domain's gold alone (built once per gold pair, kept on the state gold):
    the paired queries' rows in both configs and every pool slot's flags (`POSITIVE`, `KEPT`), so a submission only
    reorders the flags by its rankings."""

    paired: list[int]  # state query indices with a constraints partner
    sq: np.ndarray
    cq: np.ndarray
    eligible: np.ndarray  # trap-constructed conflict sessions (Fig. 9)
    flags: tuple[np.ndarray, np.ndarray]  # (constraints, state) pool-aligned int8 flags of the paired rows
    width: int
    used: np.ndarray  # paired queries with a positive in both pools (always, in a built folder)
    shared: np.ndarray  # candidates both pools contain, per used query
    by_session: dict[str, dict[str, list[int]]]


def _pairing(state: TriadGold, constraints: TriadGold, paired: list[int]) -> _Pairing:
    qids = [state.rows[q]["query_id"] for q in paired]
    conflict = np.asarray([state.rows[q].get("session_type") == names.SESSION_TYPES[1] for q in paired])
    sq = np.asarray(paired)
    cq = np.asarray([constraints.query_index[i] for i in qids])
    s_all, c_all, n_codes = _common_codes(state, constraints)
    s_codes, c_codes = s_all[sq], c_all[cq]
    in_state, in_constraints = _members(s_codes, n_codes), _members(c_codes, n_codes)
    shared_in_state = _lookup(in_constraints, s_codes)  # state pool slots whose candidate both pools contain
    positive = _members(s_codes, n_codes, select=(state.labels[sq] == 1) & shared_in_state)

    def slot_flags(codes: np.ndarray) -> np.ndarray:
        kept = _lookup(in_state, codes) & _lookup(in_constraints, codes)
        return (_lookup(positive, codes) * POSITIVE + kept * KEPT).astype(np.int8)

    flags = (slot_flags(c_codes), slot_flags(s_codes))
    used = np.flatnonzero((flags[0] & POSITIVE).any(axis=1))
    by: dict[str, dict[str, list[int]]] = {}
    for i, q in enumerate(sq[used].tolist()):
        row = state.rows[q]
        by.setdefault(str(row.get("session_type")), {}).setdefault(str(row.get("num_turns")), []).append(i)
    return _Pairing(
        paired,
        sq,
        cq,
        conflict & state.trap[sq].any(axis=1),
        flags,
        max(s_codes.shape[1], c_codes.shape[1]),
        used,
        shared_in_state[used].sum(axis=1),
        by,
    )


def _cached_pairing(state: TriadGold, constraints: TriadGold, paired: list[int]) -> _Pairing:
    key = f"pairing:{constraints.config}"
    cached = state.derived.get(key)
    if cached is None or cached[0] is not constraints or cached[1].paired != paired:
        cached = state.derived[key] = (constraints, _pairing(state, constraints, paired))
    return cached[1]


def state_pairs(
    state: TriadGold,
    constraints: TriadGold,
    state_order: np.ndarray,
    constraints_order: np.ndarray,
    state_ap: Mapping[str, float],
    constraints_ap: Mapping[str, float],
    *,
    seed: int = 0,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(Fig. 9 trap strata, C.4 shared-pool rescoring) of one domain, over the state queries with a paired
    constraints query. Gold as `metrics.columnar.TriadGold` (with candidate ids), rankings as pool positions; the
    gold-only part (`_Pairing`) is built once per gold pair, the rest is an array operation over all paired queries."""
    paired = [
        q
        for q, r in enumerate(state.rows)
        if r["query_id"] in constraints.query_index and r["query_id"] in constraints_ap
    ]
    if not paired:
        return {}, {}
    pairing = _cached_pairing(state, constraints, paired)
    sq, cq = pairing.sq, pairing.cq
    qids = [state.rows[q]["query_id"] for q in paired]
    delta = np.asarray([state_ap[i] - constraints_ap[i] for i in qids])
    top = np.asarray(np.take_along_axis(state.trap[sq], state_order[sq, :TOP_K], axis=1).any(axis=1))
    strata = pdg.trap_stratified_delta(delta, top, pairing.eligible)
    used = pairing.used
    if not used.size:
        return strata, {"n_pairs": 0, "n_skipped": len(paired)}
    aps = []
    for flags, order in zip(pairing.flags, (constraints_order[cq[used]], state_order[sq[used]]), strict=True):
        ranked = np.zeros((used.size, pairing.width), dtype=np.int8)
        ranked[:, : flags.shape[1]] = np.take_along_axis(flags[used], order[:, : flags.shape[1]], axis=1)
        aps.append(pdg.restricted_ap((ranked & POSITIVE).astype(bool), (ranked & KEPT).astype(bool)))
    ap_single, ap_multi = aps
    diff = ap_multi - ap_single
    shared_pool = {
        "n_pairs": int(used.size),
        "n_skipped": len(paired) - int(used.size),
        "mean_shared_candidates": float(pairing.shared.mean()),
        "single_turn_map": float(ap_single.mean()),
        "multi_turn_map": float(ap_multi.mean()),
        "delta": float(diff.mean()),
        "interval": list(stats.bootstrap_ci(diff, seed=seed)),
        "by_session": {
            s: {t: {"delta": float(diff[idx].mean()), "n_queries": len(idx)} for t, idx in turns.items()}
            for s, turns in pairing.by_session.items()
        },
    }
    return strata, shared_pool


def paper_diagnostics(
    gold: Mapping[str, TriadGold], orders: Mapping[str, np.ndarray], scored: Mapping[str, Any], *, seed: int = 0
) -> dict[str, Any]:
    """C.3, Fig. 9, C.4 and D.3 for every config (pair) present in ``scored`` (score_triad_config outputs); gold as
    `metrics.columnar.TriadGold`, rankings as pool positions best first (`metrics.scoring.score_triad_arrays`)."""
    out: dict[str, Any] = {"matched_comparisons": {}, "trap_stratified": {}, "shared_pool": {}, "resolution": {}}
    for config in names.CONSTRAINTS_CONFIGS:
        if config in scored:
            out["matched_comparisons"][config] = matched_comparisons(gold[config].rows, scored[config]["per_query_ap"])
    for domain, c_cfg, s_cfg in zip(names.DOMAINS, names.CONSTRAINTS_CONFIGS, names.STATE_CONFIGS, strict=True):
        if c_cfg in scored and s_cfg in scored:
            strata, shared = state_pairs(
                gold[s_cfg],
                gold[c_cfg],
                np.asarray(orders[s_cfg]),
                np.asarray(orders[c_cfg]),
                scored[s_cfg]["per_query_ap"],
                scored[c_cfg]["per_query_ap"],
                seed=seed,
            )
            out["trap_stratified"][domain], out["shared_pool"][domain] = strata, shared
    for config in names.MAIN_CONFIGS:
        if config in scored:
            ap = np.asarray(list(scored[config]["per_query_ap"].values()), dtype=np.float64)
            sizes = sorted({*pdg.RESOLUTION_SIZES, ap.size})  # the paper's n and the subset's own query count
            out["resolution"][config] = pdg.resolution_curve(ap, sizes, seed=seed)
    return out
