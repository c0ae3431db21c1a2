"""TRIAD pool checks on arrays: each submitted ranking becomes a row of pool positions, without a Python object
per candidate id.

The gold side (``PoolIndex``, built once per config) holds every query's fixed pool as integer codes; a submitted
config is checked by looking each (query, id) pair up in one sorted key array, and a ranking is a permutation of
its pool exactly when its sorted positions are 0..P-1 (docs/protocol.md §1: candidate pools are per query and fixed). The result
is, per config, a 2-D ``int32`` array ``positions[q, r]`` = pool position of the candidate ranked ``r + 1`` for the
gold's ``q``-th query — the form the scoring call takes (``spaces_app.submit.score_triad_positions``).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spaces_app.validation import ParsedRanking, check_query_ids, explain_ranking
from triad_dataset.contract.errors import TriadError


@dataclass(frozen=True)
class PoolIndex:
    """One TRIAD config's pools: codes of the candidate ids per query and a sorted (query, code) -> position map."""

    query_ids: list[str]
    qindex: dict[str, int]
    vocab: pa.Array  # distinct candidate ids of the config
    codes: np.ndarray  # (queries, pool) int32 codes into vocab, in pool order
    keys: np.ndarray  # sorted query * len(vocab) + code (int64)
    slots: np.ndarray  # pool position of each sorted key
    ids: np.ndarray  # (queries, pool) object array of the gold's own id strings (for list-based scoring)

    @property
    def pool_size(self) -> int:
        return int(self.codes.shape[1])

    @classmethod
    def build(cls, config: str, rows: Sequence[Mapping[str, Any]]) -> PoolIndex:
        pools = [r["candidate_ids"] for r in rows]
        sizes = {len(p) for p in pools}
        if len(sizes) > 1:
            raise TriadError(f"gold config {config}: pools of different sizes {sorted(sizes)[:5]}; docs/protocol.md §1 fixes one size")
        size = sizes.pop() if sizes else 0
        encoded = pa.array(list(itertools.chain.from_iterable(pools)), pa.string()).dictionary_encode()
        codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32).reshape(len(pools), size)
        vocab = encoded.dictionary
        keys = (np.arange(len(pools), dtype=np.int64)[:, None] * len(vocab) + codes).ravel()
        order = np.argsort(keys, kind="stable")
        slots = np.tile(np.arange(size, dtype=np.int32), len(pools))[order]
        ids = np.empty((len(pools), size), dtype=object)
        for i, p in enumerate(pools):
            ids[i] = p
        qids = [str(r["query_id"]) for r in rows]
        return cls(qids, {q: i for i, q in enumerate(qids)}, vocab, codes, keys[order], slots, ids)


def _flat_ids(ranking: ParsedRanking) -> pa.Array:
    ids = ranking.candidate_ids
    if isinstance(ids, pa.Array):
        return ids.flatten()
    return pa.array(list(itertools.chain.from_iterable(ids)), pa.string())


def pool_positions(config: str, ranking: ParsedRanking, index: PoolIndex) -> np.ndarray:
    """``positions[q, r]`` for every gold query (gold order); refuses anything that is not, per query, a permutation
    of exactly that query's pool, naming the first offending query and ids."""
    check_query_ids(config, ranking.query_ids, index.query_ids)
    size = index.pool_size

    def explain(row: int) -> None:
        qid = ranking.query_ids[row]
        explain_ranking(config, qid, ranking.ranked(row), list(index.ids[index.qindex[qid]]))
        raise TriadError(f"config {config}, query {qid!r}: the array check and the detailed check disagree")

    lengths = ranking.lengths()
    n_rows = len(ranking.query_ids)
    rowq = np.fromiter((index.qindex[q] for q in ranking.query_ids), dtype=np.int64, count=n_rows)
    row_of = np.repeat(np.arange(n_rows), lengths)
    codes = pc.index_in(_flat_ids(ranking), value_set=index.vocab).fill_null(-1).to_numpy(zero_copy_only=False)
    key = rowq[row_of] * len(index.vocab) + codes
    at = np.minimum(np.searchsorted(index.keys, key), max(len(index.keys) - 1, 0))
    found = (codes >= 0) & (index.keys[at] == key) if len(index.keys) else np.zeros(key.shape, bool)
    bad = (lengths != size) | (np.bincount(row_of[~found], minlength=n_rows) > 0)
    keep = ~bad[row_of]
    pos = index.slots[at[keep]].reshape(-1, size)
    not_perm = (np.sort(pos, axis=1) != np.arange(size, dtype=pos.dtype)).any(axis=1)
    bad[np.flatnonzero(~bad)[not_perm]] = True
    if bad.any():
        explain(int(np.flatnonzero(bad)[0]))  # the first offending query in file order, named in detail
    out = np.empty((len(index.query_ids), size), dtype=np.int32)
    out[rowq] = pos
    return out
