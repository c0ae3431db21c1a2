"""The protocol's scores from mteb's retrieval results: each query's candidate scores read back in pool order and
ranked with stable ties (docs/protocol.md §4), then scored by the project's one metrics path.

mteb's stock `map_at_1000` comes from trec_eval, which breaks exact ties by document id; the protocol keeps tied
candidates in pool order (TRIAD) or gallery order (ARK). Text models tie on most product pools, so the two differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from metrics.columnar import TriadGold
from model_adapters.mteb.metadata import ARK_MAIN, TRIAD_MAIN

Results = Mapping[str, Mapping[str, float]]  # mteb: query id -> {document id: score}


def _missing(config: str, qid: str, doc: str) -> ValueError:
    return ValueError(
        f"{config} query {qid}: mteb returned no score for pool candidate {doc}; run with top_k >= the pool"
    )


def pool_scores(config: str, gold: TriadGold, pool_ids: Sequence[Sequence[str]], results: Results) -> np.ndarray:
    """(n_queries, width) scores in pool order, -inf on padding slots."""
    out = np.full(gold.mask.shape, -np.inf)
    for q, qid in enumerate(gold.query_ids):
        got = results.get(qid, {})
        for j, doc in enumerate(pool_ids[q]):
            if doc not in got:
                raise _missing(config, qid, doc)
            out[q, j] = got[doc]
    return out


def tie_identical(scores: np.ndarray, same_input: Sequence[np.ndarray]) -> np.ndarray:
    """Give every pool slot the score of the first slot holding the same model input.

    The protocol encodes each distinct input once, so identical inputs tie exactly; mteb encodes every document row
    on its own, and identical inputs may then differ in the last bits.

    >>> tie_identical(np.array([[0.5, 0.7, 0.50001]]), [np.array([3, 1, 3])]).tolist()
    [[0.5, 0.7, 0.5]]
    """
    out = scores.copy()
    for q, numbers in enumerate(same_input):
        _, first, inverse = np.unique(numbers, return_index=True, return_inverse=True)
        out[q, : numbers.size] = scores[q, first[inverse]]
    return out


def _key(name: str) -> str:
    return name.replace("@", "_at_")


def triad_scores(
    config: str, gold: TriadGold, pool_ids: Sequence[Sequence[str]], same_input: Sequence[np.ndarray], results: Results
) -> dict[str, float]:
    """The protocol's mAP (main score), expected AP under random tie order, top-10 typed-negative entry rates and,
    for State, the conflict-trap rates; a rate with no eligible slot is left out (mteb scores are numbers)."""
    from metrics.core.kernels import average_precision
    from metrics.core.ranking import rank_scores
    from metrics.scoring import score_triad_arrays

    scores = tie_identical(pool_scores(config, gold, pool_ids, results), same_input)
    order = np.argsort(np.where(gold.mask, -scores, np.inf), axis=1, kind="stable")  # ties keep pool order
    scored = score_triad_arrays({config: gold}, {config: order})[config]["metrics"]
    expected = average_precision(rank_scores(np.where(gold.mask, scores, 0.0), gold.labels, gold.mask, ties="expected"))
    return {**triad_score_dict(scored), "triad_expected_ap": float(expected.mean())}


def triad_score_dict(metrics: Mapping[str, Any]) -> dict[str, float]:
    """A TRIAD config's results.json metrics as mteb score keys; rates with no eligible slot are left out.

    >>> triad_score_dict({"map": 0.5, "recall@1": 0.25, "entry_rate@10": {"anchor_violating": 0.1, "x": None}})
    {'triad_map': 0.5, 'triad_recall_at_1': 0.25, 'entry_rate_at_10_anchor_violating': 0.1}
    """
    out = {TRIAD_MAIN: float(metrics["map"])}
    out.update({f"triad_{_key(k)}": float(v) for k, v in metrics.items() if k != "map" and isinstance(v, float)})
    for name, rates in metrics.items():
        if isinstance(rates, Mapping):
            out.update({f"{_key(name)}_{role}": float(v) for role, v in rates.items() if v is not None})
    return out


def positive_ranks(
    subtype: str, query_ids: Sequence[str], gallery: Sequence[str], positives: Sequence[str], results: Results
) -> np.ndarray:
    """Each query's 1-based rank of its positive in the whole gallery, ties in gallery order; a positive mteb did not
    return (outside its top_k) ranks after everything it returned."""
    position = {doc: i for i, doc in enumerate(gallery)}
    ranks = np.empty(len(query_ids), dtype=np.int64)
    for q, (qid, pos) in enumerate(zip(query_ids, positives, strict=True)):
        got = results.get(qid, {})
        if pos not in got:
            ranks[q] = len(got) + 1
            continue
        s, p = got[pos], position[pos]
        ranks[q] = 1 + sum(1 for d, v in got.items() if v > s or (v == s and position[d] < p))
    return ranks


def ark_scores(
    subtype: str, rows: Sequence[Mapping[str, Any]], gallery: Sequence[str], results: Results
) -> dict[str, float]:
    """ARK's Recall@1 (main score) and the subtype's other metrics, ranks as `positive_ranks` gives them."""
    from metrics.scoring import score_ark_subtype

    ids = [r["query_id"] for r in rows]
    ranks = positive_ranks(subtype, ids, gallery, [r["positive_id"] for r in rows], results)
    return ark_score_dict(score_ark_subtype(subtype, rows, dict(zip(ids, ranks.tolist(), strict=True)))["metrics"])


def ark_score_dict(metrics: Mapping[str, Any]) -> dict[str, float]:
    """An ARK subtype's results.json metrics as mteb score keys.

    >>> ark_score_dict({"recall@1": 0.5, "ndcg@10": 0.75})
    {'ark_recall_at_1': 0.5, 'ark_ndcg_at_10': 0.75}
    """
    return {
        ARK_MAIN: float(metrics["recall@1"]),
        **{f"ark_{_key(k)}": float(v) for k, v in metrics.items() if k != "recall@1"},
    }
