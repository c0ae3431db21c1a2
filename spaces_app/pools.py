"""TRIAD pool checks on arrays: each submitted ranking becomes a row of pool positions, without a Python object
per candidate id.

The gold side (``PoolIndex``, built once per config) holds every query's fixed pool as integer codes, and each pool's
codes sorted ascending with the pool position of each. A submitted ranking's ids become codes (a hash lookup of the
distinct ids only when the file is dictionary-encoded, as pyarrow writes it), and a ranking is a permutation of its
pool exactly when its codes, sorted, equal the pool's sorted codes (docs/protocol.md §1: candidate pools are per
query, fixed and without repeats); the same sort gives every candidate's pool position. 16-bit codes sort with a
radix sort. The result is, per config, a 2-D ``int32`` array ``positions[q, r]`` = pool position of the candidate
ranked ``r + 1`` for the gold's ``q``-th query — the form the scoring call takes
(``spaces_app.submit.score_triad_positions``).
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
    """One TRIAD config's pools: codes of the candidate ids per query, and each pool's codes sorted with their slots."""

    query_ids: list[str]
    qindex: dict[str, int]
    vocab: pa.Array  # distinct candidate ids of the config
    codes: np.ndarray  # (queries, pool) codes into vocab, in pool order (uint16 when the vocabulary allows)
    sorted_codes: np.ndarray  # each row of codes, ascending
    sorted_slots: np.ndarray  # pool position of each sorted code

    @property
    def pool_size(self) -> int:
        return int(self.codes.shape[1])

    @property
    def missing(self) -> int:
        """The code of an id in no pool (never a real code)."""
        return int(np.iinfo(self.codes.dtype).max)

    def pool(self, q: int) -> list[str]:
        """Query ``q``'s pool ids in pool order (for error messages)."""
        return self.vocab.take(pa.array(self.codes[q].astype(np.int64))).to_pylist()

    @classmethod
    def build(cls, config: str, rows: Sequence[Mapping[str, Any]]) -> PoolIndex:
        pools = [r["candidate_ids"] for r in rows]
        sizes = {len(p) for p in pools}
        if len(sizes) > 1:
            raise TriadError(
                f"gold config {config}: pools of different sizes {sorted(sizes)[:5]}; docs/protocol.md §1 fixes one size"
            )
        size = sizes.pop() if sizes else 0
        encoded = pa.array(list(itertools.chain.from_iterable(pools)), pa.string()).dictionary_encode()
        vocab = encoded.dictionary
        dtype = np.uint16 if len(vocab) < np.iinfo(np.uint16).max else np.int32  # the maximum stays free: missing
        codes = encoded.indices.to_numpy(zero_copy_only=False).astype(dtype).reshape(len(pools), size)
        order = np.argsort(codes, axis=1, kind="stable")
        sorted_codes = np.take_along_axis(codes, order, axis=1)
        repeated = np.flatnonzero((sorted_codes[:, 1:] == sorted_codes[:, :-1]).any(axis=1))
        if repeated.size:
            raise TriadError(
                f"gold config {config}, query {rows[int(repeated[0])]['query_id']!r}: candidate_ids repeat an id"
            )
        qids = [str(r["query_id"]) for r in rows]
        slots = order.astype(np.int16 if size <= np.iinfo(np.int16).max else np.int32)
        return cls(qids, {q: i for i, q in enumerate(qids)}, vocab, codes, sorted_codes, slots)


def _flat_codes(ranking: ParsedRanking, index: PoolIndex) -> np.ndarray:
    """Each ranked id's code in ``index.vocab`` (``index.missing`` for an id in no pool), in file order."""
    ids = ranking.candidate_ids
    flat = (
        ids.flatten() if isinstance(ids, pa.Array) else pa.array(list(itertools.chain.from_iterable(ids)), pa.string())
    )
    if pa.types.is_dictionary(flat.type):  # look up the file's distinct ids only
        table = pc.index_in(flat.dictionary, value_set=index.vocab).fill_null(index.missing)
        return table.to_numpy(zero_copy_only=False).astype(index.codes.dtype)[
            flat.indices.to_numpy(zero_copy_only=False)
        ]
    found = pc.index_in(flat, value_set=index.vocab).fill_null(index.missing)
    return found.to_numpy(zero_copy_only=False).astype(index.codes.dtype)


def pool_positions(config: str, ranking: ParsedRanking, index: PoolIndex) -> np.ndarray:
    """``positions[q, r]`` for every gold query (gold order); refuses anything that is not, per query, a permutation
    of exactly that query's pool, naming the first offending query and ids."""
    check_query_ids(config, ranking.query_ids, index.query_ids)
    size = index.pool_size

    def explain(row: int) -> None:
        qid = ranking.query_ids[row]
        explain_ranking(config, qid, ranking.ranked(row), index.pool(index.qindex[qid]))
        raise TriadError(f"config {config}, query {qid!r}: the array check and the detailed check disagree")

    lengths = ranking.lengths()
    n_rows = len(ranking.query_ids)
    rowq = np.fromiter((index.qindex[q] for q in ranking.query_ids), dtype=np.int64, count=n_rows)
    bad = lengths != size
    codes = _flat_codes(ranking, index)
    if bad.any():
        codes = codes[~np.repeat(bad, lengths)]
    codes = codes.reshape(-1, size)
    good = np.flatnonzero(~bad)
    by_code = np.argsort(codes, axis=1, kind="stable")  # a radix sort for 16-bit codes
    bad[good] = (np.take_along_axis(codes, by_code, axis=1) != index.sorted_codes[rowq[good]]).any(axis=1)
    if bad.any():
        explain(int(np.flatnonzero(bad)[0]))  # the first offending query in file order, named in detail
    pos = np.empty((n_rows, size), dtype=np.int32)
    np.put_along_axis(pos, by_code, index.sorted_slots[rowq], axis=1)  # rank by_code[k] holds sorted slot k
    if np.array_equal(rowq, np.arange(n_rows)):  # the file lists the queries in gold order
        return pos
    out = np.empty_like(pos)
    out[rowq] = pos
    return out
