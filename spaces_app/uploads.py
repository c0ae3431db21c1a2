"""Reading a submission's uploaded files into memory, within limits: file names, zips, results.json.

Uploads are read into memory, never extracted to disk, never unpickled and never executed. A zip of a run folder is
opened with ``zipfile`` and every member is checked (name, type, size, compression ratio) before its bytes are read,
with a bounded read; results.json is checked for size and nesting before ``json.loads`` and its strings are cleaned.
The ranking files themselves are parsed by `spaces_app.ranking_files`.
"""

from __future__ import annotations

import io
import json
import os
import posixpath
import re
import stat
import unicodedata
import urllib.parse
import zipfile
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from spaces_app.refusal import SubmissionError, short

ZIP_MAGIC = b"PK\x03\x04"
MAX_RESULTS_STRING = 300  # characters kept of any string in results.json (the runner's longest is a path)
# control, format (bidi overrides, zero-width), private-use characters and line breaks: removed from results.json
# strings before anything keeps or shows them
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ue000-\uf8ff\ufff9-\ufffb]"
)


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
class Upload:
    """One file of a submission: its name (relative path inside a zip, else the file name) and bytes."""

    name: str
    data: bytes


# --- file names -----------------------------------------------------------------------------------------
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


# --- zips and loose files -------------------------------------------------------------------------------
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
    files = [Path(p) for p in paths]
    if not files:
        raise SubmissionError("no files uploaded: give the rankings/*.parquet files and results.json, or a zip")
    if len(files) > limits.max_files:
        raise SubmissionError(f"{len(files)} files uploaded, more than the limit of {limits.max_files}")
    budget = [limits.max_total_bytes]
    uploads: list[Upload] = []
    for p in files:
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


# --- results.json ---------------------------------------------------------------------------------------
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


def read_results(up: Upload, limits: Limits) -> dict[str, Any]:
    """results.json as a dict with every string cleaned, after the size, nesting and complete-run checks."""

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
