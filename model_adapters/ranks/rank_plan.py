"""Rank a columnar plan from the vectors of its distinct items, rerank the heads, score, and build the rankings
tables — all from arrays (no per-slot Python objects).

`ConfigRanking` holds one config's result: TRIAD `order` = pool positions best first with their `scores`; ARK
`order` = gallery rows of the top 100, their `scores` and each query's `positive_rank` (whole gallery).
A run hands each config's result to `emit` (which writes its rankings table) as soon as it is ranked and keeps only
what scoring needs (`ConfigRanking.written`: the order, no scores), so no more than one config's scores and output
table are held at a time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from metrics.ragged import from_numpy, strings
from model_adapters.planning.plan import ConfigPlan, Plan, release_arrow_memory
from model_adapters.ranks import ranking
from model_adapters.ranks.output import StagedOutput
from triad_dataset.contract.errors import TriadError

ARK_TOP = 100  # ARK rankings keep the top 100 ids and scores (CONTRACTS §3)
TRIAD_RERANK_TOP = 30  # paper D.2: the reranker reorders the first-stage top 30


@dataclass
class ConfigRanking:
    order: np.ndarray  # TRIAD: (n, width) pool positions best first (int16 for pools up to 32,768); ARK: (n, top)
    scores: np.ndarray | None  # aligned with order (first-stage scores; TRIAD float32); None once written
    positive_rank: np.ndarray | None = None  # ARK: 1-based rank of the positive in the whole gallery
    rerank_scores: list[list[float]] | None = None  # reranked runs: reranker scores of each query's head

    def written(self) -> ConfigRanking:
        """What scoring still needs once the rankings table is written: the order (and ARK ranks), no scores."""
        return replace(self, scores=None, rerank_scores=None)

    def live_scores(self) -> np.ndarray:
        """The first-stage scores, aligned with `order`; a ranking already written has none."""
        if self.scores is None:
            raise RuntimeError("the scores of a ranking are dropped once it is written")
        return self.scores

    def positive_ranks(self) -> np.ndarray:
        """ARK: each query's 1-based rank of its positive in the whole gallery."""
        if self.positive_rank is None:
            raise RuntimeError("only an ARK ranking has the positives' ranks")
        return self.positive_rank


Rankings = dict[str, ConfigRanking]  # config -> its ranking

# called with (config plan, final ranking, first-stage ranking or None) as soon as a config is ranked
Emit = Callable[[ConfigPlan, ConfigRanking, "ConfigRanking | None"], None]


def _keep(
    cp: ConfigPlan,
    result: ConfigRanking,
    first: ConfigRanking | None,
    emit: Emit | None,
    final_out: dict[str, ConfigRanking],
    first_out: dict[str, ConfigRanking],
) -> None:
    if emit is not None:
        emit(cp, result, first)
        result, first = result.written(), first.written() if first is not None else None
        release_arrow_memory()  # the freed output table and the parquet writer's buffers
    final_out[cp.config] = result
    if first is not None:
        first_out[cp.config] = first


def _matrix(plan: Plan, indices: np.ndarray, vectors: Mapping[str, np.ndarray]) -> np.ndarray:
    keys = plan.items.key_list
    if len(indices) == 0:
        return np.zeros((0, 1), np.float32)
    return ranking.normalize(np.stack([vectors[keys[i]] for i in np.asarray(indices).tolist()]))


def _progress(pairs: list[Any], show: bool, unit: str) -> Any:
    """`pairs` behind a progress bar when shown; as they are otherwise (tqdm's lock imports multiprocessing)."""
    if not show:
        return pairs
    from triad_dataset.contract.progress import progress

    return progress(pairs, desc="rank", unit=unit)


def rank_triad_config(plan: Plan, cp: ConfigPlan, vectors: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Pool positions best first and their scores for every query of one config."""
    candidates = cp.candidate_items()  # distinct item indices, first-seen order
    # int32 like pool_items (no (n, width) int64 temporaries); one extra last entry -1, read by padding slots (-1)
    row_of = np.full(len(plan.items) + 1, -1, dtype=np.int32)
    row_of[candidates] = np.arange(candidates.size)
    pools = row_of[cp.pool_items]
    return ranking.rank_pools(_matrix(plan, cp.query_items, vectors), _matrix(plan, candidates, vectors), pools)


def _rerank_scores(reranker: Any, query: Any, candidates: Sequence[Any], batch: int) -> list[float]:
    scores: list[float] = []
    for start in range(0, len(candidates), batch):
        chunk = candidates[start : start + batch]
        values = np.asarray(reranker.score_pairs([query] * len(chunk), chunk), dtype=np.float64)
        if values.shape != (len(chunk),) or not np.isfinite(values).all():
            raise TriadError(f"reranker returned invalid scores (shape {values.shape}, NaN/inf or wrong length)")
        scores.extend(values.tolist())
    return scores


def _rerank(
    result: ConfigRanking, lengths: np.ndarray, heads: Any, reranker: Any, top_k: int, batch: int
) -> ConfigRanking:
    """Reorder each query's first-stage top k by the reranker (`heads(q, k)` -> (query input, head inputs))."""
    order, scores = result.order.copy(), result.live_scores().copy()
    reranked: list[list[float]] = []
    for q in range(order.shape[0]):
        n = int(lengths[q])
        k = min(top_k, n)
        query, head = heads(q, k)
        rs = _rerank_scores(reranker, query, head, batch)
        new = ranking.splice_order(rs, n)
        order[q, :n], scores[q, :n] = result.order[q, new], result.live_scores()[q, new]
        reranked.append([rs[i] for i in new[:k]])
    return replace(result, order=order, scores=scores, rerank_scores=reranked)


def triad_rankings(
    plan: Plan,
    vectors: Mapping[str, np.ndarray],
    reranker: Any,
    top_k: int,
    rerank_batch: int,
    show: bool,
    rerank_plan: Plan | None = None,
    emit: Emit | None = None,
) -> tuple[Rankings, Rankings]:
    """`rerank_plan` (same configs and pools as `plan`) supplies the reranker's inputs when they differ from the
    first stage's (a text-only first stage: the reranker still sees the images, paper D.2). With `emit`, each
    config's results go to it when ranked and only their `written()` part is returned."""
    final: dict[str, ConfigRanking] = {}
    first: dict[str, ConfigRanking] = {}
    rerank_plan = rerank_plan or plan
    items = rerank_plan.items
    for cp, rcp in _progress(list(zip(plan.configs, rerank_plan.configs, strict=True)), show, "config"):
        order, scores = rank_triad_config(plan, cp, vectors)
        result = first_stage = ConfigRanking(order, scores)
        if reranker is not None:

            def heads(q: int, k: int, rcp: ConfigPlan = rcp, order: np.ndarray = order) -> tuple[Any, list[Any]]:
                return (
                    items.model_input(int(rcp.query_items[q])),
                    [items.model_input(int(rcp.pool_items[q, i])) for i in order[q, :k]],
                )

            result = _rerank(result, (cp.pool_items >= 0).sum(axis=1), heads, reranker, top_k, rerank_batch)
        _keep(cp, result, first_stage if reranker is not None else None, emit, final, first)
        del order, scores, result, first_stage
    return final, first


def ark_rankings(
    plan: Plan,
    vectors: Mapping[str, np.ndarray],
    reranker: Any,
    top_k: int,
    rerank_batch: int,
    show: bool,
    rerank_plan: Plan | None = None,
    emit: Emit | None = None,
) -> tuple[Rankings, Rankings]:
    final: dict[str, ConfigRanking] = {}
    first: dict[str, ConfigRanking] = {}
    rerank_plan = rerank_plan or plan
    items = rerank_plan.items
    for cp, rcp in _progress(list(zip(plan.configs, rerank_plan.configs, strict=True)), show, "subtype"):
        idx, scores, ranks = ranking.rank_gallery(
            _matrix(plan, cp.query_items, vectors), _matrix(plan, cp.pool_items, vectors), cp.positives, top=ARK_TOP
        )
        result = first_stage = ConfigRanking(idx, scores, ranks)
        if reranker is not None:

            def heads(q: int, k: int, rcp: ConfigPlan = rcp, idx: np.ndarray = idx) -> tuple[Any, list[Any]]:
                return (
                    items.model_input(int(rcp.query_items[q])),
                    [items.model_input(int(rcp.pool_items[i])) for i in idx[q, :k]],
                )

            reranked = _rerank(result, np.full(idx.shape[0], idx.shape[1]), heads, reranker, top_k, rerank_batch)
            new_ranks = ranks.copy()
            for q in range(idx.shape[0]):
                k = min(top_k, idx.shape[1])
                if ranks[q] <= k:  # the positive moved inside the reranked head; ranks k+1.. are unchanged
                    new_ranks[q] = int(np.flatnonzero(reranked.order[q] == cp.positives[q])[0]) + 1
            result = replace(reranked, positive_rank=new_ranks)
        _keep(cp, result, first_stage if reranker is not None else None, emit, final, first)
    return final, first


# --- scoring ------------------------------------------------------------------------------------------------
def score(plan: Plan, rankings: Mapping[str, ConfigRanking], seed: int, data: str | None = None) -> dict[str, Any]:
    """Score the rankings through the one metrics path (CONTRACTS §4), from arrays; `data` (the folder) adds the
    reference categories the paper's C.3 strata need (`triad_dataset.folder.strata`)."""
    from metrics import scoring

    if plan.benchmark == "ark":
        ranks = {
            cp.config: dict(zip(cp.query_ids, rankings[cp.config].positive_ranks().tolist(), strict=True))
            for cp in plan.configs
        }
        return scoring.score_ark({cp.config: cp.rows for cp in plan.configs}, ranks, seed=seed)
    gold = {cp.config: cp.triad_gold() for cp in plan.configs}
    if data is not None:
        from dataclasses import replace

        from triad_dataset.folder.strata import with_reference_categories

        rows = with_reference_categories(data, {c: g.rows for c, g in gold.items()})
        gold = {c: replace(g, rows=[dict(row) for row in rows[c]]) for c, g in gold.items()}
    return scoring.score_triad_arrays(gold, {cp.config: rankings[cp.config].order for cp in plan.configs}, seed=seed)


def chance(plan: Plan) -> dict[str, float]:
    """Each config's primary metric under a uniformly random ranking of the queries ranked: TRIAD mAP
    (`random_map`, as `triad audit` and the Space compute it), ARK Recall@1 = 1 / gallery size."""
    from triad_dataset.folder.audit import random_map

    if plan.benchmark == "ark":
        return {cp.config: 1.0 / int(cp.pool_items.size) for cp in plan.configs if cp.pool_items.size}
    out = {}
    for cp in plan.configs:
        gold = cp.triad_gold()
        pools, positives = gold.mask.sum(axis=1), gold.labels.sum(axis=1)
        out[cp.config] = random_map(zip(pools.tolist(), positives.tolist(), strict=True))
    return out


def default_rerank_top(benchmark: str) -> int:
    """How many first-stage candidates the reranker reorders unless --rerank-top says: TRIAD 30, ARK its own."""
    from ark_dataset.names import RERANK_TOP_K  # ARK's two-stage depth, with its other names

    return RERANK_TOP_K if benchmark == "ark" else TRIAD_RERANK_TOP


def two_stage(plan: Plan, first: Mapping[str, ConfigRanking], final_scores: dict, k: int, seed: int) -> dict[str, Any]:
    """First-stage metrics, coverage@k and oracle@k next to the reranked numbers (docs/protocol.md §4 two-stage)."""
    from metrics.core import two_stage as ts
    from metrics.core.ranking import rank_from_order

    first_scores = score(plan, first, seed)
    out: dict[str, Any] = {}
    for cp in plan.configs:
        entry: dict[str, Any] = {
            "first_stage": first_scores[cp.config]["metrics"],
            "reranked": final_scores[cp.config]["metrics"],
            "k": k,
        }
        if plan.benchmark == "triad":
            gold = cp.triad_gold()
            ranked_first = rank_from_order(first[cp.config].order, gold.labels, gold.mask)
            entry[f"coverage@{k}"] = float(ts.coverage_at_k(ranked_first, k).mean())
            entry[f"oracle@{k}"] = float(ts.oracle_ap_at_k(ranked_first, k).mean())
        out[cp.config] = entry
    return out


# --- rankings tables ----------------------------------------------------------------------------------------
def rankings_table(cp: ConfigPlan, result: ConfigRanking, *, ark: bool, reranked: bool = False) -> Any:
    """The CONTRACTS §3 rankings table of one config, built from the arrays."""
    import pyarrow as pa

    if ark:
        rows = cp.pool_rows[result.order]  # (n, top) corpus rows
        lengths = np.full(rows.shape[0], rows.shape[1], dtype=np.int64)
        flat_rows, flat_scores = rows.ravel(), result.live_scores().ravel()
    else:
        lengths = (cp.pool_items >= 0).sum(axis=1).astype(np.int64)
        real = np.arange(result.order.shape[1])[None, :] < lengths[:, None]
        flat_rows = np.take_along_axis(cp.pool_rows, result.order, axis=1)[real]  # int32 corpus rows
        flat_scores = result.live_scores()[real]
        del real
    offsets = from_numpy(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
    ids = cp.corpus_ids.take(from_numpy(flat_rows))
    del flat_rows
    columns: dict[str, Any] = {
        "query_id": strings(cp.query_ids),
        "candidate_ids": pa.ListArray.from_arrays(offsets, ids.cast(pa.string())),
        "scores": pa.ListArray.from_arrays(offsets, from_numpy(flat_scores.astype(np.float64))),
    }
    if ark:
        columns["positive_rank"] = from_numpy(result.positive_ranks().astype(np.int64))
    if reranked:
        columns["rerank_scores"] = pa.array(result.rerank_scores or [], pa.list_(pa.float64()))
    return pa.table(columns)


class RankingsWriter:
    """The `emit` of the rank loop: writes each config's rankings (and first-stage rankings) into a staged output
    as soon as it is ranked, so its scores and output table are freed before the next config."""

    def __init__(self, staged: StagedOutput, ark: bool, reranked: bool) -> None:
        self.staged, self.ark, self.reranked = staged, ark, reranked
        self.seconds, self.cpu_seconds = 0.0, 0.0  # wall and CPU (this process) spent writing

    def __call__(self, cp: ConfigPlan, final: ConfigRanking, first: ConfigRanking | None) -> None:
        """Write one config's rankings; the time it takes is added to `seconds` (CPU: `cpu_seconds`)."""
        tick, cpu_tick = time.perf_counter(), time.process_time()
        self.staged.write_rankings(cp.config, rankings_table(cp, final, ark=self.ark, reranked=self.reranked))
        if first is not None:
            self.staged.write_rankings(cp.config, rankings_table(cp, first, ark=self.ark), first_stage=True)
        self.seconds += time.perf_counter() - tick
        self.cpu_seconds += time.process_time() - cpu_tick
