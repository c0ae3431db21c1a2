"""Columnar TRIAD gold and rankings: Arrow columns in, pool-aligned numpy arrays out (no per-slot Python objects).

`TriadGold` is what `metrics.scoring.score_triad_arrays` scores. Build it from the gold parquet of a config
(`gold_from_table`, vectorised: a 1,000 x 1,000 config in tens of milliseconds) or from docs/protocol.md §1 row dicts
(`gold_from_rows`, the path `score_triad` keeps for existing callers). `order_from_ids` turns submitted rankings
(Arrow `query_id` + `candidate_ids` columns, e.g. a rankings parquet read with pyarrow) into pool positions.

>>> import pyarrow as pa
>>> gold = gold_from_table("self_i2c", pa.table({"query_id": ["q1"], "candidate_ids": [["a", "b", "c"]],
...     "candidate_roles": [["random", "sibling", "positive"]], "candidate_trap": [[False, False, False]],
...     "positive_ids": [["c"]]}))
>>> gold.labels.tolist(), gold.role_code.tolist()[0][2] == 0
([[0, 0, 1]], True)
>>> order_from_ids(gold, pa.array(["q1"]), pa.array([["b", "c", "a"]])).tolist()
[[1, 2, 0]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metrics.ragged import list_parts, padded, strings, to_numpy
from triad_dataset.contract import names

POOL_COLUMNS: tuple[str, ...] = ("candidate_ids", "candidate_roles", "candidate_trap", "positive_ids", "positive_hops")
IMAGE_COLUMNS: tuple[str, ...] = ("query_image", "image")
ROLE_CODE: dict[str, int] = {role: i for i, role in enumerate(names.ROLES)}
DENSE_LOOKUP = 1 << 25  # query x distinct-id tables up to 128 MiB (int32) map ids to pool slots without sorting


@dataclass
class TriadGold:
    """The gold of one TRIAD config as pool-aligned ``(n_queries, width)`` arrays (width = the largest pool).

    ``labels`` 1 marks a positive; ``mask`` the real pool slots; ``role_code`` indexes ``names.ROLES`` (-1: no
    role); ``trap`` the conflict-trap flags; ``hops`` the hop count of each positive (0 elsewhere; I2C).
    ``rows`` holds one dict per query with the per-query columns only (query_id, depth, profile, conditions,
    session_type, num_turns, ...; never the pool-aligned lists). To read rankings given as ids (`order_from_ids`)
    it keeps ``pool_offsets`` (where each query's pool starts in the flat candidate list), ``id_dictionary`` (the
    distinct candidate ids, Arrow) and ``pool_codes`` (int32: each pool slot's index into it) — 4 bytes per slot;
    built with ``ids=False`` (the runner, whose rankings are already positions) it keeps none of them.
    """

    config: str
    rows: list[dict[str, Any]]
    labels: np.ndarray
    mask: np.ndarray
    role_code: np.ndarray
    trap: np.ndarray
    hops: np.ndarray
    has_hops: bool = False
    pool_offsets: np.ndarray | None = None
    query_index: dict[str, int] = field(default_factory=dict)
    id_dictionary: Any = None  # the distinct candidate ids (Arrow), and each pool slot's code into it
    pool_codes: np.ndarray | None = None
    # structures scoring derives from this gold alone (e.g. the C.4 pairing), kept for the next submission
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def query_ids(self) -> list[str]:
        return [row["query_id"] for row in self.rows]

    @property
    def n_slots(self) -> int:
        return int(self.mask.sum())


def _where(config: str, rows: Sequence[Mapping[str, Any]], q: int) -> str:
    return f"config {config}, query_id {rows[q]['query_id']!r}"


def _check_rows(config: str, rows: list[dict[str, Any]]) -> dict[str, int]:
    if not rows:
        raise ValueError(f"config {config}: no gold queries")
    index: dict[Any, int] = {}  # keyed by the rows' query_id values, whatever their type
    for q, row in enumerate(rows):
        qid = row.get("query_id")
        if qid in index:
            raise ValueError(f"config {config}, query_id {qid!r}: appears twice in the gold rows")
        index[qid] = q
    return index


def _codes(*arrays: Any) -> list[Any]:
    """Integer codes of Arrow string arrays over one shared dictionary (equal strings, equal codes); the dictionary
    itself comes last."""
    import pyarrow as pa

    joined = pa.chunked_array([a.cast(pa.string()) for a in arrays]).combine_chunks().dictionary_encode()
    codes = to_numpy(joined.indices).astype(np.int64)
    out, start = [], 0
    for a in arrays:
        out.append(codes[start : start + len(a)])
        start += len(a)
    return [*out, joined.dictionary]


def _positions(pool_offsets: np.ndarray, pool_codes: np.ndarray, query: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Pool position of each (query, code) pair; -1 where the code is not in that query's pool."""
    n_codes = int(max(pool_codes.max(initial=0), codes.max(initial=0))) + 1
    n_queries = pool_offsets.size - 1
    pool_query = np.repeat(np.arange(n_queries), np.diff(pool_offsets))
    pool_slot = np.arange(pool_codes.size) - np.repeat(pool_offsets[:-1], np.diff(pool_offsets))
    known = codes >= 0  # -1: an id found in no pool
    codes = np.where(known, codes, 0)
    if n_queries * n_codes <= DENSE_LOOKUP:  # a (query, code) -> slot table: no sort
        table = np.full(
            (n_queries, n_codes), -1, dtype=np.int16 if pool_slot.size and pool_slot.max() < 32767 else np.int32
        )
        table[pool_query, pool_codes] = pool_slot
        return np.where(known, table[query, codes], -1).astype(np.int64)
    pool_keys = pool_query * n_codes + pool_codes
    sort = np.argsort(pool_keys, kind="stable")
    sorted_keys = pool_keys[sort]
    keys = query * n_codes + codes
    at = np.minimum(np.searchsorted(sorted_keys, keys), max(0, sorted_keys.size - 1))
    found = sorted_keys[at] == keys if sorted_keys.size else np.zeros(keys.size, dtype=bool)
    slot = sort[at] - pool_offsets[query]
    return np.where(found & known, slot, -1)


def gold_from_table(config: str, table: Any, *, ids: bool = True) -> TriadGold:
    """Columnar gold from an Arrow table of a config's query rows (docs/protocol.md §1 columns; images are ignored); `ids=False`
    drops what only `order_from_ids` needs."""
    drop = [c for c in (*POOL_COLUMNS, *IMAGE_COLUMNS) if c in table.column_names]
    rows = table.drop_columns(drop).to_pylist()
    _check_rows(config, rows)
    offsets, pool_flat = list_parts(table.column("candidate_ids"))
    n, lengths = len(rows), np.diff(offsets)
    width = int(lengths.max(initial=0))
    mask = padded(offsets, np.ones(pool_flat.__len__(), dtype=bool), width, False, bool)
    pos_offsets, pos_flat = list_parts(table.column("positive_ids"))
    pool_codes, pos_codes, dictionary = _codes(pool_flat, pos_flat)
    pool_query = np.repeat(np.arange(n), lengths)
    dup = _duplicates_in_pools(pool_query, pool_codes)
    if dup is not None:
        raise ValueError(f"{_where(config, rows, dup)}: gold candidate_ids contain duplicates")
    empty = np.flatnonzero(np.diff(pos_offsets) == 0)
    if empty.size:
        raise ValueError(f"{_where(config, rows, int(empty[0]))}: has no positive (AP is undefined)")
    pos_query = np.repeat(np.arange(n), np.diff(pos_offsets))
    pos_slot = _positions(offsets, pool_codes, pos_query, pos_codes)
    if (pos_slot < 0).any():
        i = int(np.flatnonzero(pos_slot < 0)[0])
        raise ValueError(
            f"{_where(config, rows, int(pos_query[i]))}: positive id {pos_flat[i].as_py()!r} is not in candidate_ids"
        )
    labels = np.zeros((n, width), dtype=np.int8)
    labels[pos_query, pos_slot] = 1
    role_code = np.full((n, width), -1, dtype=np.int16)
    if "candidate_roles" in table.column_names:
        r_offsets, r_flat = list_parts(table.column("candidate_roles"))
        _same_lengths(config, rows, "candidate_roles", r_offsets, offsets, table.column("candidate_roles"))
        role_code = _role_codes(config, rows, r_offsets, r_flat, width, table.column("candidate_roles"))
    trap = np.zeros((n, width), dtype=bool)
    if "candidate_trap" in table.column_names:
        t_offsets, t_flat = list_parts(table.column("candidate_trap"))
        _same_lengths(config, rows, "candidate_trap", t_offsets, offsets, table.column("candidate_trap"))
        trap_flat = to_numpy(t_flat.fill_null(False) if t_flat.null_count else t_flat)
        trap = padded(t_offsets, trap_flat, width, False, bool)
    hops = np.zeros((n, width), dtype=np.int16)
    has_hops = "positive_hops" in table.column_names and table.column("positive_hops").null_count < n
    if has_hops:
        h_offsets, h_flat = list_parts(table.column("positive_hops"))
        given = ~to_numpy(table.column("positive_hops").is_null())
        bad = np.flatnonzero(given & (np.diff(h_offsets) != np.diff(pos_offsets)))
        if bad.size:
            q = int(bad[0])
            raise ValueError(
                f"{_where(config, rows, q)}: {int(np.diff(h_offsets)[q])} positive_hops for "
                f"{int(np.diff(pos_offsets)[q])} positive_ids"
            )
        keep = np.repeat(given, np.diff(pos_offsets))
        hops[pos_query[keep], pos_slot[keep]] = to_numpy(h_flat).astype(np.int16)
    gold = TriadGold(config, rows, labels, mask, role_code, trap, hops, has_hops)
    if ids:
        gold.pool_offsets, gold.id_dictionary, gold.pool_codes = offsets, dictionary, pool_codes.astype(np.int32)
    check_roles(gold)
    gold.query_index = {row["query_id"]: q for q, row in enumerate(rows)}
    return gold


def _duplicates_in_pools(pool_query: np.ndarray, pool_codes: np.ndarray) -> int | None:
    keys = np.sort(pool_query * (int(pool_codes.max(initial=0)) + 1) + pool_codes)
    same = np.flatnonzero(keys[1:] == keys[:-1])
    if not same.size:
        return None
    return int(keys[same[0]] // (int(pool_codes.max(initial=0)) + 1))


def _same_lengths(
    config: str, rows: list[dict[str, Any]], column: str, offsets: np.ndarray, pool_offsets: np.ndarray, values: Any
) -> None:
    given = ~to_numpy(values.is_null())
    bad = np.flatnonzero(given & (np.diff(offsets) != np.diff(pool_offsets)))
    if bad.size:
        q = int(bad[0])
        raise ValueError(
            f"{_where(config, rows, q)}: {int(np.diff(offsets)[q])} {column} for "
            f"{int(np.diff(pool_offsets)[q])} candidate_ids"
        )


def _role_codes(
    config: str, rows: list[dict[str, Any]], offsets: np.ndarray, flat: Any, width: int, column: Any
) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc

    codes = pc.index_in(flat.cast(pa.string()), value_set=strings(names.ROLES))
    if codes.null_count:
        i = int(np.flatnonzero(to_numpy(codes.is_null()))[0])
        q = int(np.searchsorted(offsets, i, side="right") - 1)
        raise ValueError(
            f"{_where(config, rows, q)}: unknown role {flat[i].as_py()!r}; valid: {', '.join(names.ROLES)}"
        )
    out = padded(offsets, to_numpy(codes).astype(np.int16), width, -1, np.int16)
    out[to_numpy(column.is_null())] = -1
    return out


def check_roles(gold: TriadGold) -> None:
    """Candidates with role "positive" must be exactly the positive_ids (queries that carry roles)."""
    has_roles = (gold.role_code >= 0).any(axis=1)
    mismatch = has_roles & ((gold.role_code == ROLE_CODE[names.POSITIVE]) != (gold.labels == 1)).any(axis=1)
    if mismatch.any():
        q = int(np.flatnonzero(mismatch)[0])
        raise ValueError(
            f"{_where(gold.config, gold.rows, q)}: candidates with role {names.POSITIVE!r} differ from positive_ids"
        )


def order_from_ids(gold: TriadGold, query_ids: Any, candidate_ids: Any) -> np.ndarray:
    """Pool positions best first, (n_queries, width) in gold query order, from submitted rankings given as Arrow
    columns ``query_id`` and ``candidate_ids`` (each gold query once; each list a permutation of its pool).
    Raises ValueError naming config and query_id otherwise. Padding slots keep their own positions."""
    import pyarrow as pa

    config, rows = gold.config, gold.rows
    qids = pa.chunked_array([query_ids]).combine_chunks().to_pylist() if not isinstance(query_ids, list) else query_ids
    where = np.empty(len(qids), dtype=np.int64)
    seen = np.zeros(len(rows), dtype=bool)
    for i, qid in enumerate(qids):  # one lookup per query, not per slot
        q = gold.query_index.get(qid, -1)
        if q < 0:
            raise ValueError(f"config {config}, query_id {qid!r}: ranked but not a gold query")
        if seen[q]:
            raise ValueError(f"config {config}, query_id {qid!r}: ranked twice")
        seen[q], where[i] = True, q
    if not seen.all():
        missing = int(np.flatnonzero(~seen)[0])
        raise ValueError(
            f"config {config}, query_id {rows[missing]['query_id']!r}: no ranking "
            f"({int((~seen).sum())} gold queries missing)"
        )
    if gold.pool_codes is None or gold.pool_offsets is None:
        raise ValueError(f"config {config}: gold built with ids=False cannot read rankings given as ids")
    r_offsets, r_flat = list_parts(candidate_ids)
    pool_offsets = gold.pool_offsets
    n, width = gold.mask.shape
    r_len, pool_len = np.diff(r_offsets), np.diff(pool_offsets)
    bad = np.flatnonzero(r_len != pool_len[where])
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"config {config}, query_id {qids[i]!r}: ranking is not a permutation of the pool "
            f"({int(r_len[i])} ids for a pool of {int(pool_len[where[i]])})"
        )
    import pyarrow.compute as pc

    # the pools' id codes were computed with the gold: only the ranked ids are looked up (hash), -1 = no pool's id
    found = pc.index_in(r_flat.cast(pa.string()), value_set=gold.id_dictionary)
    pool_codes = gold.pool_codes
    r_codes = to_numpy(found.fill_null(-1)).astype(np.int64)
    r_query = np.repeat(where, r_len)
    slot = _positions(pool_offsets, pool_codes, r_query, r_codes)
    if (slot < 0).any():
        i = int(np.flatnonzero(slot < 0)[0])
        raise ValueError(
            f"config {config}, query_id {rows[int(r_query[i])]['query_id']!r}: ranking is not a "
            f"permutation of the pool (id {r_flat[i].as_py()!r} is not a candidate)"
        )
    order = np.tile(np.arange(width, dtype=np.int64), (n, 1))
    rank = np.arange(r_flat.__len__()) - np.repeat(r_offsets[:-1], r_len)
    order[r_query, rank] = slot
    dup = first_non_permutation(order)
    if dup is not None:
        raise ValueError(
            f"config {config}, query_id {rows[dup]['query_id']!r}: ranking is not a "
            "permutation of the pool (an id appears twice)"
        )
    return order


def first_non_permutation(order: np.ndarray) -> int | None:
    """The first row of ``order`` that is not a permutation of its columns' positions, or None.

    >>> first_non_permutation(np.array([[1, 0], [0, 0]]))
    1
    """
    hit = np.zeros(order.shape, dtype=bool)
    np.put_along_axis(hit, order, True, axis=1)
    bad = np.flatnonzero(~hit.all(axis=1))
    return int(bad[0]) if bad.size else None


def gold_from_rows(config: str, rows: Sequence[Mapping[str, Any]]) -> TriadGold:
    """Columnar gold from docs/protocol.md §1 row dicts (the `score_triad` path for callers holding Python rows)."""
    import pyarrow as pa

    rows = list(rows)
    _check_rows(config, [dict(query_id=r.get("query_id")) for r in rows])
    columns: dict[str, Any] = {
        "query_id": [r["query_id"] for r in rows],
        "candidate_ids": [list(r["candidate_ids"]) for r in rows],
        "positive_ids": [list(r.get("positive_ids") or []) for r in rows],
    }
    for name in ("candidate_roles", "candidate_trap", "positive_hops"):
        values = [r.get(name) for r in rows]
        if any(v is not None for v in values):
            columns[name] = [None if v is None else list(v) for v in values]
    try:
        table = pa.table(columns)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise ValueError(f"config {config}: gold rows have malformed pool columns ({exc})") from None
    gold = gold_from_table(config, table)
    gold.rows = [{k: v for k, v in r.items() if k not in POOL_COLUMNS and k not in IMAGE_COLUMNS} for r in rows]
    return gold
