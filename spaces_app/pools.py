"""TRIAD pool checks on arrays: each submitted ranking becomes a row of pool positions, without a Python object
per candidate id.

The gold side (``PoolIndex``, built once per config) holds every query's fixed pool as integer codes, and each pool's
codes sorted ascending with the pool position of each. A submitted ranking's ids become codes (a hash lookup of the
distinct ids only when the file is dictionary-encoded, as pyarrow writes it), and a ranking is a permutation of its
pool exactly when its codes, sorted, equal the pool's sorted codes (docs/protocol.md §1: candidate pools are per
query, fixed and without repeats); the same sort gives every candidate's pool position. 16-bit codes sort with a
radix sort. The check itself, with the 2-D ``int32`` array ``positions[q, r]`` = pool position of the candidate
ranked ``r + 1`` for the gold's ``q``-th query that it yields, is `spaces_app.validation.pool_positions`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

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
