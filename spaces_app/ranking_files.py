"""Parsing a submission's ranking files: parquet read with footer bounds into Arrow / numpy columns.

Only parquet (read with pyarrow, fixed columns) is accepted for rankings; every limit applies to what is decoded and
is checked on the footer before any column is materialized. `parse_uploads` sorts a submission's uploads
(`spaces_app.uploads`) into ranking files and results.json and returns a `ParsedSubmission`; what the rankings
must be against the gold (every query once, pools, galleries, every subset) is checked by `spaces_app.validation`.

TRIAD and ARK rankings share one parsed form, `ParsedRanking` (query ids, the ranked ids as an Arrow list array,
ARK's positive ranks). They are scored from two forms because the metrics core takes two: a TRIAD ranking is a
permutation of the query's fixed pool and is scored from pool positions (`validation.pool_positions`); an ARK
ranking is the top of a whole gallery, whose positive may lie below the listed ids, and is scored from the
positive's rank (`validation.ark_rankings`).
"""

from __future__ import annotations

import hashlib
import io
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ark_dataset import names as ark_names
from spaces_app.refusal import SubmissionError, short
from spaces_app.uploads import Limits, Upload, read_results
from triad_dataset.contract import names as triad_names

RESULTS_FILE = "results.json"
RANKINGS_DIR = "rankings"
FIRST_STAGE_DIR = "rankings_first_stage"  # a reranked run's first-stage rankings: not scored, ignored
RERANK_COLUMN = "rerank_scores"  # reranked runs: the head is ordered by these, the tail by `scores`
PARQUET_MAGIC = b"PAR1"


@dataclass(frozen=True)
class Bound:
    """What the gold allows one config's ranking file to hold: queries, ids per query and ids in all."""

    rows: int
    per_row: int
    total: int

    @classmethod
    def of(cls, n_queries: int, per_row: int) -> Bound:
        return cls(n_queries, per_row, n_queries * per_row)


@dataclass
class ParsedRanking:
    """The rankings of one config as read from its parquet file (ids stay an Arrow list array: no per-id objects)."""

    query_ids: list[str]
    candidate_ids: Any  # pa.ListArray of strings (from a file) or a list of id lists (tests)
    positive_rank: list[int] | None = None  # ARK only
    digest: str = ""  # sha256 of the canonical (query_id-sorted) ids, see `canonical_digest`
    ties: np.ndarray | None = None  # flat bool per ranked id: its score equals the one ranked just above (None: none)
    constant: int = 0  # queries whose scores are all equal (their order is the list's, not a model's)

    def ranked(self, i: int) -> list[str]:
        """Query ``i``'s ranked ids as Python strings (one query at a time: for error messages and ARK)."""
        ids = self.candidate_ids
        return ids[i].as_py() if isinstance(ids, pa.Array) else list(ids[i])

    def lengths(self) -> np.ndarray:
        ids = self.candidate_ids
        if isinstance(ids, pa.Array):
            return pc.list_value_length(ids).to_numpy(zero_copy_only=False).astype(np.int64)
        return np.array([len(x) for x in ids], dtype=np.int64)


@dataclass
class ParsedSubmission:
    """Rankings per config plus the submitter's results.json (if any) and notes for the status message."""

    rankings: dict[str, ParsedRanking]
    results: dict[str, Any] | None
    notes: list[str] = field(default_factory=list)

    def benchmark(self) -> str:
        """'triad' or 'ark', from results.json when it says so, else from the config names."""
        configs = set(self.rankings)
        triad, ark = configs & set(triad_names.TASK_CONFIGS), configs & set(ark_names.SUBTYPES)
        declared = (self.results or {}).get("benchmark")
        if triad and ark:
            raise SubmissionError(
                f"rankings mix TRIAD configs ({', '.join(sorted(triad))}) and ARK subtypes ({', '.join(sorted(ark))});"
                " submit each benchmark separately"
            )
        found = "triad" if triad else "ark" if ark else None
        if declared is not None and declared not in ("triad", "ark"):
            raise SubmissionError(f"{RESULTS_FILE}: unknown benchmark {short(declared)} (expected 'triad' or 'ark')")
        if found is None:
            unknown = ", ".join(sorted(configs)) or "none"
            raise SubmissionError(f"no known config among the ranking files (got: {unknown})")
        if declared is not None and declared != found:
            raise SubmissionError(
                f"{RESULTS_FILE} says benchmark {short(declared)} but the rankings are {found!r} configs"
            )
        return found

    def digest(self, configs: Iterable[str] | None = None) -> str:
        """sha256 over the canonical rankings of ``configs`` (default: every config): independent of packaging, file
        and row order, and of the optional configs sent along when only the main ones are digested."""
        h = hashlib.sha256()
        for config in sorted(self.rankings if configs is None else set(configs) & set(self.rankings)):
            h.update(b"\x00" + config.encode() + b"\x00" + self.rankings[config].digest.encode())
        return h.hexdigest()


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _is_list_of(t: pa.DataType, pred: Any) -> bool:
    return (pa.types.is_list(t) or pa.types.is_large_list(t)) and pred(t.value_type)


def _columns(where: str, schema: pa.Schema, *, ark: bool) -> list[str]:
    """The columns a ranking file must have (with the rerank column when it has one), checked for their types."""
    need: dict[str, Callable[[pa.DataType], bool]] = {
        "query_id": _is_string,
        "candidate_ids": lambda t: _is_list_of(t, _is_string),
        "scores": lambda t: _is_list_of(t, pa.types.is_floating),
    }
    if ark:
        need["positive_rank"] = pa.types.is_integer
    if RERANK_COLUMN in schema.names:
        need[RERANK_COLUMN] = lambda t: _is_list_of(t, pa.types.is_floating)
    for col, ok in need.items():
        if col not in schema.names:
            raise SubmissionError(f"{where}: missing column {col!r} (have: {', '.join(schema.names)})")
        if not ok(schema.field(col).type):
            raise SubmissionError(f"{where}: column {col!r} has type {schema.field(col).type}")
    return list(need)


def read_ranking(up: Upload, config: str, limits: Limits, *, ark: bool, bound: Bound | None = None) -> ParsedRanking:
    """Parse one rankings parquet file into Arrow / numpy columns, checking columns, types, nulls, finite scores and
    that nothing decodes to more than ``bound`` allows (checked on the footer before any column is read)."""
    where = f"{up.name} (config {config})"
    if up.data[:4] != PARQUET_MAGIC or up.data[-4:] != PARQUET_MAGIC:
        raise SubmissionError(f"{where}: not a parquet file (missing PAR1 magic bytes)")
    try:
        pf = pq.ParquetFile(io.BytesIO(up.data))
        schema = pf.schema_arrow
        meta = pf.metadata
    except Exception as exc:  # pyarrow raises several types for corrupt files
        raise SubmissionError(f"{where}: unreadable parquet ({type(exc).__name__}: {exc})") from None
    need = _columns(where, schema, ark=ark)
    bound = bound or Bound(limits.max_rows, limits.max_list_length, limits.max_rows * limits.max_list_length)
    _check_footer(where, meta, need, limits, bound)
    try:
        table = pf.read(columns=[c for c in need if ark or c != "candidate_ids"])
        cand = table.column("candidate_ids").combine_chunks() if ark else _dictionary_ids(up.data, meta)
    except Exception as exc:
        raise SubmissionError(f"{where}: unreadable parquet ({type(exc).__name__}: {exc})") from None
    if not ark:
        table = table.append_column("candidate_ids", pa.chunked_array([cand]))
    for col in need:
        if table.column(col).null_count:
            raise SubmissionError(f"{where}: column {col!r} has null values")
    scores = table.column("scores").combine_chunks()
    cand_lengths = pc.list_value_length(cand).to_numpy(zero_copy_only=False).astype(np.int64)
    _check_lengths(where, cand_lengths, bound)  # the decoded lengths, whatever the footer said
    if cand.flatten().null_count:
        raise SubmissionError(f"{where}: null candidate id inside a ranking")
    qids = table.column("query_id").to_pylist()
    flat = scores.flatten().to_numpy(zero_copy_only=False).astype(np.float64)
    lengths = pc.list_value_length(scores).to_numpy(zero_copy_only=False).astype(np.int64)
    bad = np.flatnonzero(lengths != cand_lengths)
    if bad.size:
        i = int(bad[0])
        raise SubmissionError(
            f"{where}: query {short(qids[i])} has {cand_lengths[i]} candidate ids but {lengths[i]} scores"
        )
    if not np.isfinite(flat).all():  # covers nulls turned into NaN as well
        pos = int(np.flatnonzero(~np.isfinite(flat))[0])
        i = int(np.searchsorted(np.cumsum(lengths), pos, side="right"))
        raise SubmissionError(f"{where}: query {short(qids[i])} has a non-finite score ({flat[pos]})")
    starts = np.concatenate([[0], np.cumsum(lengths)])
    if RERANK_COLUMN in need:
        per_query = [flat[starts[i] : starts[i + 1]] for i in range(len(qids))]
        heads = _rerank_heads(table, where, qids, cand_lengths)
        _check_best_first_reranked(where, qids, per_query, heads)
        flat = np.concatenate(
            [np.concatenate([h, s[h.size :]]) for h, s in zip(heads, per_query, strict=True)] + [np.zeros(0)]
        )
        segment = np.concatenate(
            [np.repeat([0, 1], [h.size, s.size - h.size]) for h, s in zip(heads, per_query, strict=True)]
            + [np.zeros(0, np.int64)]
        )
    else:
        _check_best_first(where, qids, flat, starts)
        segment = None
    ties, constant = _ties(where, flat, starts, segment, len(qids))
    ranks = table.column("positive_rank").to_pylist() if ark else None
    return ParsedRanking(qids, cand.to_pylist() if ark else cand, ranks, canonical_digest(table), ties, constant)


def _ties(
    where: str, flat: np.ndarray, starts: np.ndarray, segment: np.ndarray | None, n_queries: int
) -> tuple[np.ndarray | None, int]:
    """Exact score ties between neighbouring ranks of one query (a reranked head and its tail apart), and how many
    queries are one tie (all scores equal: their order is the list's, not a model's; the row is flagged)."""
    same = np.zeros(flat.size, dtype=bool)
    same[1:] = flat[1:] == flat[:-1]
    same[starts[:-1][starts[:-1] < flat.size]] = False  # a query's first candidate ties with nothing above it
    if segment is not None:
        same[1:] &= segment[1:] == segment[:-1]
    sizes = np.diff(starts)
    running = np.concatenate([[0], np.cumsum(same)])
    tied = running[starts[1:]] - running[starts[:-1]]
    constant = int(((sizes > 1) & (tied == sizes - 1)).sum())
    return (same if same.any() else None), constant


def _dictionary_ids(data: bytes, meta: pq.FileMetaData) -> pa.Array:
    """The ``candidate_ids`` column as list<dictionary<string>>: the file's distinct ids once plus an index per
    ranked id (parquet stores them so: no string per ranked id is built, and pool lookups hash the distinct ids
    only). Row groups are read one at a time (pyarrow reads nested dictionaries per row group) and joined."""
    leaf = next(
        meta.schema.column(i).path
        for i in range(meta.num_columns)
        if meta.schema.column(i).path.split(".")[0] == "candidate_ids"
    )
    pf = pq.ParquetFile(io.BytesIO(data), read_dictionary=[leaf])
    parts = [
        pf.read_row_group(i, columns=["candidate_ids"]).column(0).combine_chunks() for i in range(meta.num_row_groups)
    ]
    if len(parts) == 1 or any(part.null_count for part in parts):  # nulls: refused by the caller, as is
        return parts[0] if len(parts) == 1 else next(part for part in parts if part.null_count)
    offsets, indices, dictionaries, row_start, dict_start = [np.zeros(1, np.int64)], [], [], 0, 0
    for part in parts:  # one list array over the concatenated dictionaries (repeats across row groups are fine)
        values = part.flatten()
        offsets.append(np.asarray(part.offsets, dtype=np.int64)[1:] - part.offsets[0].as_py() + row_start)
        indices.append(np.asarray(values.indices, dtype=np.int64) + dict_start)
        dictionaries.append(values.dictionary)
        row_start, dict_start = int(offsets[-1][-1]) if len(part) else row_start, dict_start + len(values.dictionary)
    values = pa.DictionaryArray.from_arrays(
        pa.array(np.concatenate(indices), pa.int32()), pa.concat_arrays(dictionaries)
    )
    return pa.ListArray.from_arrays(pa.array(np.concatenate(offsets), pa.int32()), values)


def _tighter(bound: Bound | None, limits: Limits) -> Bound:
    rows = min(bound.rows, limits.max_rows) if bound else limits.max_rows
    per_row = min(bound.per_row, limits.max_list_length) if bound else limits.max_list_length
    return Bound.of(rows, per_row)


def _check_footer(where: str, meta: pq.FileMetaData, columns: list[str], limits: Limits, bound: Bound) -> None:
    """Rows, values per list column and uncompressed bytes from the parquet footer, before anything is decoded:
    a few KB of dictionary-encoded ids can otherwise declare millions of strings."""
    if meta.num_rows > bound.rows:
        raise SubmissionError(
            f"{where}: {meta.num_rows} rows, more than the limit of {bound.rows} (each of the config's queries once)"
        )
    values: Counter[str] = Counter()
    raw = 0
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        for j in range(group.num_columns):
            chunk = group.column(j)
            top = chunk.path_in_schema.split(".")[0]
            if top in columns:
                values[top] += max(int(chunk.num_values), 0)
                raw += max(int(chunk.total_uncompressed_size), 0)
    if raw > limits.max_parquet_bytes:
        raise SubmissionError(f"{where}: {raw} bytes of column data, over the limit of {limits.max_parquet_bytes}")
    for col, n in values.items():
        if col != "query_id" and n > bound.total + meta.num_rows:  # an empty or null list still counts one value
            raise SubmissionError(
                f"{where}: column {col!r} declares {n} values; at most {bound.total} are possible "
                f"({bound.rows} queries x {bound.per_row} ids)"
            )


def _check_lengths(where: str, lengths: np.ndarray, bound: Bound) -> None:
    if lengths.size and int(lengths.max()) > bound.per_row:
        i = int(np.argmax(lengths))
        raise SubmissionError(f"{where}: row {i} lists {int(lengths[i])} ids; a ranking holds at most {bound.per_row}")
    if int(lengths.sum()) > bound.total:
        raise SubmissionError(f"{where}: {int(lengths.sum())} ids in all, more than the {bound.total} possible")


class HashSink:
    """A write-only file that hashes what is written (the Arrow IPC stream is never assembled in memory)."""

    def __init__(self) -> None:
        self.hash = hashlib.sha256()
        self.closed = False

    def write(self, data: Any) -> int:
        self.hash.update(data)
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def canonical_digest(table: pa.Table) -> str:
    """sha256 of (query_id, candidate_ids) sorted by query_id, cast to fixed types and serialized as Arrow IPC."""
    import pyarrow.compute as pc

    schema = pa.schema([("query_id", pa.string()), ("candidate_ids", pa.list_(pa.string()))])
    t = table.select(["query_id", "candidate_ids"])
    order = pc.sort_indices(t.column("query_id"))
    if not np.array_equal(np.asarray(order), np.arange(len(order))):  # rows already sorted need no copy
        t = t.take(order)  # before the cast: dictionary-encoded ids move as indices
    t = t.cast(schema).combine_chunks()
    sink = HashSink()
    with pa.ipc.new_stream(sink, schema) as writer:
        writer.write_table(t)
    return sink.hash.hexdigest()


def _check_best_first(where: str, qids: list[str], flat: np.ndarray, starts: np.ndarray) -> None:
    """Rankings list the best candidate first (CONTRACTS §3): within a query the scores never increase."""
    rises = np.diff(flat) > 0
    rises[starts[1:-1] - 1] = False  # a step from one query's last score to the next query's first is not a rise
    if rises.any():
        pos = int(np.flatnonzero(rises)[0]) + 1
        i = int(np.searchsorted(starts, pos, side="right")) - 1
        raise SubmissionError(
            f"{where}: query {short(qids[i])} is not sorted best first (score rises at rank {pos - starts[i] + 1})"
        )


def _check_best_first_reranked(
    where: str, qids: list[str], per_query: list[np.ndarray], heads: list[np.ndarray]
) -> None:
    """A reranked run: the head follows the reranker's scores, the unchanged tail the first-stage scores (B.1)."""
    for i, s in enumerate(per_query):
        head = heads[i]
        for offset, part in ((0, head), (head.size, s[head.size :])):
            if part.size > 1 and (np.diff(part) > 0).any():
                k = offset + int(np.flatnonzero(np.diff(part) > 0)[0])
                raise SubmissionError(
                    f"{where}: query {short(qids[i])} is not sorted best first (score rises at rank {k + 2})"
                )


def _rerank_heads(table: pa.Table, where: str, qids: list[str], lengths: np.ndarray) -> list[np.ndarray]:
    col = table.column(RERANK_COLUMN).combine_chunks()
    flat = col.flatten().to_numpy(zero_copy_only=False).astype(np.float64)
    if not np.isfinite(flat).all():
        raise SubmissionError(f"{where}: non-finite value in column {RERANK_COLUMN!r}")
    sizes = np.diff(col.offsets.to_numpy())
    too_long = np.flatnonzero(sizes > lengths)
    if too_long.size:
        i = int(too_long[0])
        raise SubmissionError(f"{where}: query {short(qids[i])} has more {RERANK_COLUMN} than candidates")
    starts = np.concatenate([[0], np.cumsum(sizes)])
    return [flat[starts[i] : starts[i + 1]] for i in range(len(qids))]


def _config_of(name: str) -> str | None:
    """Config name of a rankings file (``rankings/<config>.parquet`` or ``<config>.parquet``), else None."""
    parts = name.split("/")
    base = parts[-1]
    if not base.lower().endswith(".parquet"):
        return None
    if len(parts) > 1 and parts[-2] != RANKINGS_DIR:
        return None
    return base[: -len(".parquet")]


def parse_uploads(
    uploads: Sequence[Upload],
    limits: Limits,
    known_configs: Mapping[str, Sequence[str]],
    bounds: Mapping[str, Bound] | None = None,
) -> ParsedSubmission:
    """Sort uploads into ranking files and results.json; anything but parquet and JSON is refused.

    ``known_configs`` maps benchmark ('triad' / 'ark') to the configs its gold folder holds; ``bounds`` gives per
    config the most a ranking file may decode to (from the gold: queries, pool or gallery size).
    """
    notes: list[str] = []
    rank_files: dict[str, Upload] = {}
    results: list[Upload] = []
    for up in uploads:
        base = up.name.split("/")[-1]
        lower = base.lower()
        if lower.endswith(".parquet") and FIRST_STAGE_DIR in up.name.split("/")[:-1]:
            notes.append(f"ignored {up.name} (first-stage rankings are not scored)")
        elif lower.endswith(".parquet"):
            config = _config_of(up.name)
            if config is None:
                raise SubmissionError(
                    f"{up.name}: a parquet file outside {RANKINGS_DIR}/; expected {RANKINGS_DIR}/<config>.parquet"
                )
            if config in rank_files:
                raise SubmissionError(f"config {config}: two ranking files ({rank_files[config].name}, {up.name})")
            rank_files[config] = up
        elif lower == RESULTS_FILE:
            results.append(up)
        elif lower.endswith(".json"):
            notes.append(f"ignored {up.name} (only {RESULTS_FILE} is read)")
        else:
            raise SubmissionError(f"{up.name}: only parquet ranking files and JSON are accepted")
    if not rank_files:
        raise SubmissionError(
            f"no ranking files: upload {RANKINGS_DIR}/<config>.parquet files (or a zip of the run folder)"
        )
    if len(results) > 1:
        raise SubmissionError(
            f"{len(results)} copies of {RESULTS_FILE} ({', '.join(u.name for u in results)}); give one"
        )
    known = {c: b for b, cs in known_configs.items() for c in cs}
    for config in sorted(rank_files):
        if config not in known:
            allowed = ", ".join(c for cs in known_configs.values() for c in cs)
            raise SubmissionError(
                f"{rank_files[config].name}: unknown config {short(config)}; known configs: {allowed}"
            )
    results_obj = read_results(results[0], limits) if results else None
    if results_obj is None:
        notes.append(f"no {RESULTS_FILE}: nothing to compare the server's numbers with")
    rankings = {
        c: read_ranking(up, c, limits, ark=known[c] == "ark", bound=_tighter((bounds or {}).get(c), limits))
        for c, up in sorted(rank_files.items())
    }
    return ParsedSubmission(rankings, results_obj, notes)
