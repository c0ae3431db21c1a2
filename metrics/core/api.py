"""List-in, dict-out entry points: what the evaluate modules forward to (no metric logic of their own).

>>> out = triad_scores([[0.9, 0.2, 0.4], [0.1, 0.8, 0.3]], [[1, 0, 1], [0, 0, 1]])
>>> out["map"], out["top1_hit"], out["mrr"]
(0.75, 0.5, 0.75)
>>> ark_scores([[0.9, 0.2, 0.4], [0.1, 0.8, 0.3]], [[0, 0, 1], [0, 1, 0]])["recall@1"]
0.5
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ark_dataset import names as ark_names
from metrics.core import kernels
from metrics.core.ranking import Ranked, pad_ragged, rank_scores
from metrics.core.registry import compute
from triad_dataset.contract import names

ARK_METRIC_NAMES: tuple[str, ...] = ("recall@1", "recall@5", "recall@10", "ndcg@5", "ndcg@10", "ndcg@20")


def _aligned(kind: str, values: Sequence[Sequence[Any]], lengths: Sequence[int], width: int) -> list[Sequence[Any]]:
    if len(values) != len(lengths):
        raise ValueError(f"{kind}: {len(values)} lists for {len(lengths)} queries")
    for q, (v, n) in enumerate(zip(values, lengths, strict=True)):
        if isinstance(v, (str, bytes)) or not hasattr(v, "__len__") or len(v) != n:
            got = len(v) if hasattr(v, "__len__") and not isinstance(v, (str, bytes)) else type(v).__name__
            raise ValueError(f"query {q}: {kind} has {got} entries for {n} candidates")
    return list(values)


def _role_flags(roles: Sequence[Sequence[str]], lengths: Sequence[int], width: int) -> dict[str, np.ndarray]:
    """Pool-aligned bool arrays per role present (unknown names raise ValueError naming the query)."""
    rows = _aligned("candidate_roles", roles, lengths, width)
    code = {r: i for i, r in enumerate(names.ROLES)}
    codes = np.full((len(rows), width), -1, dtype=np.int16)
    for q, row in enumerate(rows):
        try:
            codes[q, : len(row)] = [code[r] for r in row]
        except (KeyError, TypeError):
            bad = next(r for r in row if not isinstance(r, str) or r not in code)
            raise ValueError(f"query {q}: unknown candidate role {bad!r}; valid: {', '.join(names.ROLES)}") from None
    return {r: codes == i for i, r in enumerate(names.ROLES) if (codes == i).any()}


def _trap_flags(trap: Sequence[Sequence[bool]], lengths: Sequence[int], width: int) -> np.ndarray:
    rows = _aligned("candidate_trap", trap, lengths, width)
    flags = np.zeros((len(rows), width), dtype=bool)
    for q, row in enumerate(rows):
        bad = [t for t in row if not isinstance(t, (bool, np.bool_)) and t not in (0, 1)]
        if bad:
            raise ValueError(f"query {q}: candidate_trap value {bad[0]!r} is not a bool")
        flags[q, : len(row)] = np.asarray(row, dtype=bool)
    return flags


def _rank(
    predictions: Sequence[Sequence[float]], references: Sequence[Sequence[int]], ties: str
) -> tuple[Ranked, list[int], int]:
    scores, labels, mask = pad_ragged(predictions, references)
    lengths = [len(p) for p in predictions]
    return rank_scores(scores, labels, mask, ties=ties), lengths, scores.shape[1]


def triad_scores(
    predictions: Sequence[Sequence[float]],
    references: Sequence[Sequence[int]],
    *,
    candidate_roles: Sequence[Sequence[str]] | None = None,
    candidate_trap: Sequence[Sequence[bool]] | None = None,
    k: int = 10,
    ties: str = "stable",
    return_per_query: bool = False,
    metrics: Sequence[str] = (),
) -> dict[str, Any]:
    """mAP, top1_hit, MRR (+ entry rates per role, trap rates, extra registry metrics) from score/label lists.

    Pools may differ in length per query. See `metrics/triad_map/README.md` for the output keys.
    """
    k = kernels.check_k(k)
    ranked, lengths, width = _rank(predictions, references, ties)
    per_query = compute(ranked, ["map", "top1_hit", "mrr", *metrics])
    out: dict[str, Any] = {name: float(values.mean()) for name, values in per_query.items()}
    if candidate_roles is not None:
        rates = {}
        for role, flags in _role_flags(candidate_roles, lengths, width).items():
            if role != names.POSITIVE:
                rates[role] = kernels.pooled_rate(*kernels.topk_counts(ranked, flags, k))
        out[f"entry_rate@{k}"] = rates
    if candidate_trap is not None:
        flags = _trap_flags(candidate_trap, lengths, width)
        out[f"trap_rate@{k}"] = kernels.pooled_rate(*kernels.topk_counts(ranked, flags, k))
        with_trap = flags.any(axis=1)
        share = kernels.any_in_topk(ranked, flags, k)[with_trap]
        out[f"trap_query_share@{k}"] = float(share.mean()) if share.size else None
    if return_per_query:
        out["per_query_ap"] = per_query["map"].tolist()
    return out


def _group_summary(per_query: dict[str, np.ndarray], idx: np.ndarray) -> dict[str, Any]:
    return {"n_queries": int(idx.size), **{m: float(v[idx].mean()) for m, v in per_query.items()}}


def ark_scores(
    predictions: Sequence[Sequence[float]],
    references: Sequence[Sequence[int]],
    *,
    subtypes: Sequence[str] | None = None,
    groups: Sequence[str | Sequence[str]] | None = None,
    ties: str = "stable",
    return_per_query: bool = False,
) -> dict[str, Any]:
    """ARK metrics (R@1/5/10, nDCG@5/10/20, binary gains) from score lists with exactly one positive per query.

    ``subtypes`` (one ARK subtype per query) adds ``per_subtype`` and ``macro`` (unweighted mean over the subtypes
    present); ``groups`` (a label or a list of labels per query) adds ``per_group`` (a query counts in every group).
    """
    ranked, _, _ = _rank(predictions, references, ties)
    several = np.flatnonzero(ranked.n_pos != 1)
    if several.size:
        q = int(several[0])
        raise ValueError(f"query {q}: has {int(ranked.n_pos[q])} positives; ARK scoring needs exactly one")
    per_query = compute(ranked, ARK_METRIC_NAMES)  # one positive: recall@k = P(positive within the first k)
    out: dict[str, Any] = {m: float(v.mean()) for m, v in per_query.items()}
    n = ranked.n_queries
    if subtypes is not None:
        if len(subtypes) != n:
            raise ValueError(f"subtypes: {len(subtypes)} labels for {n} queries")
        for q, s in enumerate(subtypes):
            if s not in ark_names.SUBTYPES:
                raise ValueError(f"query {q}: unknown ARK subtype {s!r}; valid: {', '.join(ark_names.SUBTYPES)}")
        present = [s for s in ark_names.SUBTYPES if s in set(subtypes)]
        sub_idx = {s: np.flatnonzero(np.asarray(subtypes) == s) for s in present}
        out["per_subtype"] = {s: _group_summary(per_query, idx) for s, idx in sub_idx.items()}
        out["macro"] = {m: float(np.mean([v[idx].mean() for idx in sub_idx.values()])) for m, v in per_query.items()}
        out["macro"]["n_subtypes"] = len(present)
    if groups is not None:
        if len(groups) != n:
            raise ValueError(f"groups: {len(groups)} labels for {n} queries")
        members: dict[str, list[int]] = {}
        for q, g in enumerate(groups):
            labels = [g] if isinstance(g, str) else list(g) if g is not None else []
            if not all(isinstance(x, str) for x in labels):
                raise ValueError(f"query {q}: group labels must be strings, got {g!r}")
            for label in dict.fromkeys(labels):
                members.setdefault(label, []).append(q)
        out["per_group"] = {g: _group_summary(per_query, np.asarray(i)) for g, i in members.items()}
    if return_per_query:
        out["per_query"] = {m: v.tolist() for m, v in per_query.items()}
    return out
