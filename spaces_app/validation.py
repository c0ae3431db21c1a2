"""Everything an upload must pass before it is scored or stored.

Uploads are read into memory, never extracted to disk, never unpickled and never executed: only parquet (read with
pyarrow, fixed columns) and JSON (``json.loads``) are accepted. A zip of a run folder is opened with ``zipfile`` and
every member is checked (name, type, size, compression ratio) before its bytes are read, with a bounded read.

Each check raises ``SubmissionError`` with a message naming the file / config / query and what is wrong; the
submission flow turns it into the status line and stores nothing.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import posixpath
import re
import stat
import unicodedata
import urllib.parse
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ark_dataset import names as ark_names
from triad_dataset.contract import names as triad_names
from triad_dataset.contract.errors import TriadError

RESULTS_FILE = "results.json"
RANKINGS_DIR = "rankings"
FIRST_STAGE_DIR = "rankings_first_stage"  # a reranked run's first-stage rankings: not scored, ignored
RERANK_COLUMN = "rerank_scores"  # reranked runs: the head is ordered by these, the tail by `scores`
PARQUET_MAGIC = b"PAR1"
ZIP_MAGIC = b"PK\x03\x04"
# ARK runs keep the top of each whole-gallery ranking (CONTRACTS §3: top 100); R@10 and nDCG@20 need the top 20.
ARK_MIN_DEPTH = 20
MAX_EXAMPLES = 3  # how many offending ids a message lists
MAX_ECHO = 60  # characters of a submitted id or name a message repeats
MAX_RESULTS_STRING = 300  # characters kept of any string in results.json (the runner's longest is a path)
# control, format (bidi overrides, zero-width), private-use characters and line breaks: removed from results.json
# strings before anything keeps or shows them
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ue000-\uf8ff\ufff9-\ufffb]"
)


class SubmissionError(TriadError):
    """A rejected upload; the message is shown to the submitter as is."""


def short(value: Any, limit: int = MAX_ECHO) -> str:
    """A submitted value as a message repeats it: its repr, cut to ``limit`` characters (ids can be megabytes).

    >>> short("q1"), short("x" * 1000, limit=12)
    ("'q1'", "'xxx…' (1000 characters)")
    """
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f" ({len(value)} characters)" if isinstance(value, str) else ""
    return text[: limit - 8] + "…'" + size


def clip(text: Any, limit: int = MAX_ECHO) -> str:
    """A submitted name as a message repeats it: as is, cut to ``limit`` characters."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clean_string(text: str, limit: int = MAX_RESULTS_STRING) -> str:
    """A results.json string as kept: control, bidi and other invisible characters removed, cut to ``limit``."""
    cleaned = _UNSAFE.sub("", text)
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def _clean_json(node: Any) -> Any:
    """Every string (and key) of a parsed results.json cleaned and bounded (`clean_string`)."""
    if isinstance(node, str):
        return clean_string(node)
    if isinstance(node, dict):
        return {clean_string(str(k)): _clean_json(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_clean_json(v) for v in node]
    return node


@dataclass(frozen=True)
class Limits:
    """Size and count limits for one submission (env: TRIAD_SPACE_MAX_FILE_MB, TRIAD_SPACE_MAX_TOTAL_MB).

    Every limit applies to what is *decoded*, checked before it is materialized: parquet footers (rows, values per
    column chunk, uncompressed bytes) before any column is read, zip members while they are inflated, JSON size and
    nesting before ``json.loads``.
    """

    max_file_bytes: int = 64 * 2**20  # one uploaded file or one zip member
    max_total_bytes: int = 256 * 2**20  # all files together, after unzipping
    max_files: int = 64  # uploaded files plus zip members
    max_zip_ratio: float = 100.0  # uncompressed / compressed per member (zip bombs)
    max_rows: int = 20_000  # queries per config
    max_parquet_bytes: int = 128 * 2**20  # uncompressed column data per parquet file
    max_json_bytes: int = 16 * 2**20  # results.json
    max_json_depth: int = 32  # nesting of objects / arrays in results.json (the runner's is about 8 deep)
    max_list_length: int = 100_000  # ids in one ranking when the gold gives no tighter bound

    @classmethod
    def from_env(cls) -> Limits:
        base = cls()
        mb = 2**20
        return cls(
            max_file_bytes=int(float(os.environ.get("TRIAD_SPACE_MAX_FILE_MB", base.max_file_bytes / mb)) * mb),
            max_total_bytes=int(float(os.environ.get("TRIAD_SPACE_MAX_TOTAL_MB", base.max_total_bytes / mb)) * mb),
        )


@dataclass(frozen=True)
class Bound:
    """What the gold allows one config's ranking file to hold: queries, ids per query and ids in all."""

    rows: int
    per_row: int
    total: int

    @classmethod
    def of(cls, n_queries: int, per_row: int) -> Bound:
        return cls(n_queries, per_row, n_queries * per_row)


@dataclass(frozen=True)
class Upload:
    """One file of a submission: its name (relative path inside a zip, else the file name) and bytes."""

    name: str
    data: bytes


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


# --- reading uploads ---------------------------------------------------------------------------------------
MAX_FILE_NAME = 128  # characters of an uploaded file's name (the runner's longest is about 30)
MAX_MEMBER_PATH = 255  # characters of a zip member's path


def _url_decoded(name: str) -> str:
    """``name`` with percent-escapes undone until nothing changes (``%252f`` is ``/`` too), at most four times."""
    for _ in range(4):
        decoded = urllib.parse.unquote(name)
        if decoded == name:
            break
        name = decoded
    return name


def _control_character(text: str) -> str | None:
    """The first control or invisible character of ``text`` as ``U+XXXX``, or None."""
    bad = next((c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp")), None)
    return None if bad is None else f"U+{ord(bad):04X}"


def _file_name_problem(name: str) -> str | None:
    """What is wrong with an uploaded file's name, or None when it is a plain file name."""
    if len(name) > MAX_FILE_NAME:
        return f"it is {len(name)} characters long; the limit is {MAX_FILE_NAME}"
    for text in (name, _url_decoded(name)):
        control = _control_character(text)
        if control is not None:
            return f"it contains a control or invisible character ({control})"
        if "/" in text or "\\" in text:
            return "it contains a path separator once URL-decoded"
        if text in (".", ".."):
            return "it names a folder, not a file"
    return None


def check_file_name(name: str) -> None:
    """Refuse an uploaded file whose name is not a plain file name: a path separator or '..' (also URL-encoded, as
    in ``..%2fx.parquet``), a control character, or an over-long name."""
    problem = _file_name_problem(name)
    if problem is not None:
        raise SubmissionError(
            f"file name {short(name)} is refused: {problem}; upload the files under the names `triad run` gave them"
        )


def _check_member_name(name: str, where: str) -> str:
    """A zip member name must be a plain relative path: no absolute path, no '..', no backslash, no drive, no
    control character, not over-long; the same once URL-decoded."""
    if "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":") or "\x00" in name:
        raise SubmissionError(f"{where}: unsafe path {short(name)} (absolute path or backslash)")
    parts = [p for p in name.split("/") if p]
    if any(p == ".." for p in parts):
        raise SubmissionError(f"{where}: unsafe path {short(name)} (path traversal with '..')")
    if len(name) > MAX_MEMBER_PATH:
        raise SubmissionError(f"{where}: unsafe path {short(name)} (longer than {MAX_MEMBER_PATH} characters)")
    control = _control_character(name)
    if control is not None:
        raise SubmissionError(f"{where}: unsafe path {short(name)} (a control or invisible character, {control})")
    decoded = _url_decoded(name)
    if decoded != name:
        if "\\" in decoded or decoded.startswith("/") or any(p == ".." for p in decoded.split("/")):
            raise SubmissionError(f"{where}: unsafe path {short(name)} (a path outside the folder once URL-decoded)")
        control = _control_character(decoded)
        if control is not None:
            raise SubmissionError(
                f"{where}: unsafe path {short(name)} (a control or invisible character once URL-decoded, {control})"
            )
    return posixpath.normpath(name)


ZIP_CHUNK = 1 << 20
ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)  # what `zipfile` in a run folder's zip uses


def _inflate(zf: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, cap: int, ratio: float) -> bytes:
    """A member's bytes, inflated in chunks and stopped at ``cap`` bytes or ``ratio`` x its compressed size,
    whatever its header declares; CRC, truncation and corrupt streams are named errors."""
    member = repr(info.filename)
    if info.compress_type not in ZIP_METHODS:
        raise SubmissionError(
            f"{where}: {member} uses compression method {info.compress_type}; only stored or "
            "deflated members are accepted"
        )
    ratio_cap = int(max(info.compress_size, 1) * ratio)
    parts: list[bytes] = []
    size = 0
    try:
        with zf.open(info) as fh:
            while chunk := fh.read(ZIP_CHUNK):
                size += len(chunk)
                if size > cap:
                    raise SubmissionError(
                        f"{where}: {member} inflates to more than {cap} bytes (the per-file or "
                        "total limit); refusing it"
                    )
                if size > ratio_cap:
                    raise SubmissionError(
                        f"{where}: {member} expands more than {ratio:.0f}x its compressed size; "
                        "refusing a possible zip bomb"
                    )
                parts.append(chunk)
    except SubmissionError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError) as exc:
        raise SubmissionError(f"{where}: {member} is corrupt ({type(exc).__name__}: {exc})") from None
    if size != info.file_size:
        raise SubmissionError(f"{where}: {member} holds {size} bytes but its header says {info.file_size}")
    return b"".join(parts)


def _read_zip(data: bytes, where: str, limits: Limits, budget: list[int]) -> list[Upload]:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        members = zf.infolist()
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError) as exc:
        raise SubmissionError(f"{where}: not a readable zip file ({exc})") from None
    out: list[Upload] = []
    with zf:
        if len(members) > limits.max_files:
            raise SubmissionError(f"{where}: {len(members)} entries, more than the limit of {limits.max_files}")
        for info in members:
            name = _check_member_name(info.filename, where)
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise SubmissionError(f"{where}: {short(info.filename)} is a symbolic link; links are not accepted")
            if info.is_dir():
                continue
            if info.flag_bits & 0x1:
                raise SubmissionError(f"{where}: {short(info.filename)} is encrypted")
            if info.file_size > limits.max_file_bytes:  # a cheap early refusal; the inflation below is the bound
                raise SubmissionError(
                    f"{where}: {short(info.filename)} is {info.file_size} bytes uncompressed, over the per-file limit of"
                    f" {limits.max_file_bytes} bytes"
                )
            if info.compress_size and info.file_size / info.compress_size > limits.max_zip_ratio:
                raise SubmissionError(
                    f"{where}: {short(info.filename)} expands {info.file_size / info.compress_size:.0f}x (limit"
                    f" {limits.max_zip_ratio:.0f}x); refusing a possible zip bomb"
                )
            if budget[0] - info.file_size < 0:
                raise SubmissionError(f"{where}: the files add up to more than {limits.max_total_bytes} bytes")
            blob = _inflate(zf, info, where, min(limits.max_file_bytes, budget[0]), limits.max_zip_ratio)
            budget[0] -= len(blob)
            if blob[:4] == ZIP_MAGIC or name.lower().endswith(".zip"):
                raise SubmissionError(
                    f"{where}: {short(info.filename)} is a zip inside the zip; nested archives are refused"
                )
            out.append(Upload(name, blob))
    return out


def read_uploads(paths: Iterable[str | Path], limits: Limits) -> list[Upload]:
    """Read uploaded files (a zip is expanded in memory) after the size and count checks."""
    paths = [Path(p) for p in paths]
    if not paths:
        raise SubmissionError("no files uploaded: give the rankings/*.parquet files and results.json, or a zip")
    if len(paths) > limits.max_files:
        raise SubmissionError(f"{len(paths)} files uploaded, more than the limit of {limits.max_files}")
    budget = [limits.max_total_bytes]
    uploads: list[Upload] = []
    for p in paths:
        check_file_name(p.name)
        if not p.is_file() or p.is_symlink():
            raise SubmissionError(f"{p.name}: not a regular file")
        size = p.stat().st_size
        if size > limits.max_file_bytes:
            raise SubmissionError(f"{p.name}: {size} bytes, over the per-file limit of {limits.max_file_bytes} bytes")
        with p.open("rb") as fh:
            data = fh.read(limits.max_file_bytes + 1)
        if data[:4] == ZIP_MAGIC or p.suffix.lower() == ".zip":
            uploads.extend(_read_zip(data, p.name, limits, budget))
        else:
            budget[0] -= len(data)
            if budget[0] < 0:
                raise SubmissionError(f"the files add up to more than {limits.max_total_bytes} bytes")
            uploads.append(Upload(p.name, data))
    return uploads


_JSON_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_JSON_STRING = re.compile(rb'"[^"]*"')
_OPEN, _CLOSE = np.frombuffer(b"[{", np.uint8), np.frombuffer(b"]}", np.uint8)


def json_depth(data: bytes) -> int:
    """Deepest nesting of arrays / objects in JSON text (brackets inside strings do not count), without parsing it.

    >>> json_depth(b'{"a": [1, {"b": "]]]"}]}'), json_depth(b'[[[[]]]]'), json_depth(b'1')
    (3, 4, 0)
    """
    text = _JSON_STRING.sub(b'""', _JSON_ESCAPE.sub(b"", data))  # two linear passes: escapes, then strings
    arr = np.frombuffer(text, np.uint8)
    step = np.isin(arr, _OPEN).astype(np.int32) - np.isin(arr, _CLOSE).astype(np.int32)
    return int(np.cumsum(step).max(initial=0))


def _read_results(up: Upload, limits: Limits) -> dict[str, Any]:
    def no_constants(token: str) -> float:
        raise SubmissionError(f"{up.name}: non-finite number {token} in JSON")

    if len(up.data) > limits.max_json_bytes:
        raise SubmissionError(f"{up.name}: {len(up.data)} bytes, over the limit of {limits.max_json_bytes} for JSON")
    depth = json_depth(up.data)
    if depth > limits.max_json_depth:
        raise SubmissionError(
            f"{up.name}: JSON nested {depth} levels deep, more than the limit of {limits.max_json_depth}"
        )
    try:
        obj = json.loads(up.data.decode("utf-8"), parse_constant=no_constants)
    except UnicodeDecodeError:
        raise SubmissionError(f"{up.name}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise SubmissionError(f"{up.name}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except (RecursionError, ValueError) as exc:  # e.g. an integer with more digits than Python converts
        raise SubmissionError(f"{up.name}: not acceptable JSON ({type(exc).__name__}: {str(exc)[:120]})") from None
    if not isinstance(obj, dict):
        raise SubmissionError(f"{up.name}: expected a JSON object, got {type(obj).__name__}")
    check_complete_run(up.name, obj)
    return _clean_json(obj)


def check_complete_run(name: str, results: Mapping[str, Any]) -> None:
    """Only a complete run is submittable: the runner writes ``"complete": false`` for a ``--limit`` run, and older
    results.json files record the limit in ``run.limit``. ``complete`` must be a JSON boolean: ``"false"`` or
    ``0`` is refused rather than read as true."""
    if "complete" in results and not isinstance(results["complete"], bool):
        raise SubmissionError(
            f'{name}: "complete" must be true or false (a JSON boolean), got '
            f"{type(results['complete']).__name__} {short(results['complete'], 30)}"
        )
    if results.get("complete") is False:
        raise SubmissionError(
            f'{name}: this is a partial run ("complete": false, e.g. made with --limit); only a '
            "complete run over every query is submittable"
        )
    run = results.get("run")
    limit = run.get("limit") if isinstance(run, Mapping) else None
    if limit is not None:
        raise SubmissionError(
            f"{name}: this is a partial run (run.limit = {str(limit)[:20]}); only a complete run "
            "over every query is submittable"
        )


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _is_list_of(t: pa.DataType, pred: Any) -> bool:
    return (pa.types.is_list(t) or pa.types.is_large_list(t)) and pred(t.value_type)


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
    need = {
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
    bound = bound or Bound(limits.max_rows, limits.max_list_length, limits.max_rows * limits.max_list_length)
    _check_footer(where, meta, list(need), limits, bound)
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


class _HashSink:
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
    sink = _HashSink()
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
    results_obj = _read_results(results[0], limits) if results else None
    if results_obj is None:
        notes.append(f"no {RESULTS_FILE}: nothing to compare the server's numbers with")
    rankings = {
        c: read_ranking(up, c, limits, ark=known[c] == "ark", bound=_tighter((bounds or {}).get(c), limits))
        for c, up in sorted(rank_files.items())
    }
    return ParsedSubmission(rankings, results_obj, notes)


# --- checks against the gold data --------------------------------------------------------------------------
def _examples(items: Iterable[str]) -> str:
    items = sorted(items)
    shown = ", ".join(short(x) for x in items[:MAX_EXAMPLES])
    return shown + (f" and {len(items) - MAX_EXAMPLES} more" if len(items) > MAX_EXAMPLES else "")


def check_query_ids(config: str, submitted: Sequence[str], gold_ids: Iterable[str]) -> None:
    """Every gold query exactly once, nothing else."""
    counts = Counter(submitted)
    dups = [q for q, n in counts.items() if n > 1]
    if dups:
        raise SubmissionError(f"config {config}: query {_examples(dups)} appears more than once")
    gold = set(gold_ids)
    unknown = counts.keys() - gold
    if unknown:
        raise SubmissionError(f"config {config}: unknown query id {_examples(unknown)}")
    missing = gold - counts.keys()
    if missing:
        raise SubmissionError(
            f"config {config}: {len(missing)} of {len(gold)} queries missing, e.g. {_examples(missing)}"
        )


def check_triad_rankings(config: str, ranking: ParsedRanking, pools: Mapping[str, Sequence[str]]) -> None:
    """Each ranking is a permutation of exactly that query's pool (docs/protocol.md §1: candidate pools are per query and fixed).

    The per-query reference check; the server's hot path is the array check ``spaces_app.pools.pool_positions``,
    which calls ``explain_ranking`` on the first query it refuses.
    """
    check_query_ids(config, ranking.query_ids, pools)
    for i, qid in enumerate(ranking.query_ids):
        explain_ranking(config, qid, ranking.ranked(i), pools[qid])


def explain_ranking(config: str, qid: str, ranked: Sequence[str], pool: Sequence[str]) -> None:
    """Refuse one query's ranking that is not a permutation of its pool, naming repeated, unknown or missing ids."""
    if len(ranked) == len(pool) and set(ranked) == set(pool):
        return
    seen = Counter(ranked)
    dups = [c for c, n in seen.items() if n > 1]
    if dups:
        raise SubmissionError(f"config {config}, query {short(qid)}: candidate {_examples(dups)} ranked twice")
    unknown = seen.keys() - set(pool)
    if unknown:
        raise SubmissionError(
            f"config {config}, query {short(qid)}: candidate {_examples(unknown)} is not in this query's pool"
        )
    missing = set(pool) - seen.keys()
    raise SubmissionError(
        f"config {config}, query {short(qid)}: {len(missing)} of the {len(pool)} pool candidates missing, e.g. "
        f"{_examples(missing)}"
    )


def check_ark_rankings(
    config: str, ranking: ParsedRanking, positives: Mapping[str, str], gallery: frozenset[str] | set[str]
) -> list[int]:
    """Top-k gallery ids without duplicates, and a positive rank consistent with them; returns the checked ranks.

    ARK ranks each subtype's whole gallery (ARK paper §3); the run keeps the top 100 and the positive's rank.
    """
    check_query_ids(config, ranking.query_ids, positives)
    depth = min(ARK_MIN_DEPTH, len(gallery))
    ranks: list[int] = []
    for i, (qid, rank) in enumerate(zip(ranking.query_ids, ranking.positive_rank or [], strict=True)):
        ranked = ranking.ranked(i)
        if len(ranked) < depth:
            raise SubmissionError(
                f"config {config}, query {short(qid)}: {len(ranked)} ranked ids, at least {depth} needed"
            )
        seen = Counter(ranked)
        dups = [c for c, n in seen.items() if n > 1]
        if dups:
            raise SubmissionError(f"config {config}, query {short(qid)}: gallery item {_examples(dups)} ranked twice")
        unknown = seen.keys() - gallery
        if unknown:
            raise SubmissionError(
                f"config {config}, query {short(qid)}: {_examples(unknown)} is not in the {config} gallery"
            )
        if not 1 <= rank <= len(gallery):
            raise SubmissionError(
                f"config {config}, query {short(qid)}: positive_rank {rank} outside 1..{len(gallery)} (gallery size)"
            )
        pos = positives[qid]
        listed = ranked.index(pos) + 1 if pos in seen else None
        if listed is not None and rank != listed:
            raise SubmissionError(
                f"config {config}, query {short(qid)}: positive_rank {rank} but the positive is listed at rank {listed}"
            )
        if listed is None and rank <= len(ranked):
            raise SubmissionError(
                f"config {config}, query {short(qid)}: positive_rank {rank} but the positive is not among the"
                f" {len(ranked)} listed ids"
            )
        ranks.append(rank)
    return ranks


def finite_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
