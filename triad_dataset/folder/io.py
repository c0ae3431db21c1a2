"""Hub-style dataset folders: write them atomically, read them back without `datasets` (docs/CONTRACTS.md §1).

Layout::

    <dir>/README.md        dataset card; YAML front matter lists every config (`configs:`) and its features
    <dir>/audit.json       the build audit ("benchmark": "triad" | "ark", "pool_size", figures per config)
    <dir>/LICENSE.md       the licences of the folder's contents, when the builder gives them (the card links it)
    <dir>/data/<config>/test-<hash12>-00000-of-00001.parquet

`hash12` is the first 12 hex digits of the sha256 of the shard's bytes. `datasets` caches a local folder by its
data-file paths, so a rebuilt folder with different rows has different shard names and is never served stale.
The same rows, features, card and audit always give byte-identical files.

>>> import tempfile, pathlib
>>> from datasets import Features, Value
>>> out = pathlib.Path(tempfile.mkdtemp()) / "toy"
>>> _ = write_folder(out, {"toy": [{"x": "a"}, {"x": "b"}]}, features={"toy": Features({"x": Value("string")})},
...                  card="# Toy", audit={"benchmark": "triad", "pool_size": 2})
>>> list_configs(out), read_rows(out, "toy"), read_audit(out)["pool_size"]
(['toy'], [{'x': 'a'}, {'x': 'b'}], 2)
>>> sorted(p.name for p in (out / "data" / "toy").iterdir())
['test-...-00000-of-00001.parquet']
>>> import shutil; shutil.rmtree(out.parent)
"""

from __future__ import annotations

import copy
import functools
import hashlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, cast, overload

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from triad_dataset.contract import names
from triad_dataset.contract.errors import TriadError

CARD_NAME = "README.md"
AUDIT_NAME = "audit.json"
LICENSE_NAME = "LICENSE.md"  # the card's `license_link` when its licence is `other`
# The Hub's size categories of a dataset card (huggingface_hub DatasetCardData), by their upper bound on rows.
SIZE_CATEGORIES: tuple[tuple[float, str], ...] = (
    (1e3, "n<1K"),
    (1e4, "1K<n<10K"),
    (1e5, "10K<n<100K"),
    (1e6, "100K<n<1M"),
    (1e7, "1M<n<10M"),
    (1e8, "10M<n<100M"),
    (1e9, "100M<n<1B"),
)
DATA_DIR = "data"
Benchmark = Literal["triad", "ark"]
BENCHMARKS: tuple[Benchmark, ...] = ("triad", "ark")
# datasets writes image datasets in row groups of 100 rows (config.PARQUET_ROW_GROUP_SIZE_FOR_IMAGE_DATASETS),
# which keeps streaming and the Hub viewer responsive; other tables use larger groups.
IMAGE_ROW_GROUP = 100
ROW_GROUP = 1000
COMPRESSION = "zstd"
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: cards list every feature
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


# ---------------------------------------------------------------------------------------------------- writing


def shard_name(digest: str) -> str:
    """File name of a config's single shard, from the sha256 hex digest of its bytes."""
    return f"{names.SPLIT}-{digest[:12]}-00000-of-00001.parquet"


def encode_image(value: Any) -> dict[str, Any] | None:
    """A datasets `Image()` storage value from None, bytes, a {"bytes", "path"} dict, a PIL image or a file path.

    >>> encode_image(b"\\x89PNG")
    {'bytes': b'\\x89PNG', 'path': None}
    >>> encode_image(None) is None
    True
    """
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        return {"bytes": bytes(value), "path": None}
    if isinstance(value, Mapping):
        data, path = value.get("bytes"), value.get("path")
        if data is None and path is not None:  # make the folder self-contained: embed the file's bytes
            return encode_image(Path(path))
        return {"bytes": data, "path": path}
    if isinstance(value, str | os.PathLike):
        path = Path(value)
        try:
            return {"bytes": path.read_bytes(), "path": path.name}
        except OSError as exc:
            raise TriadError(f"{path}: cannot read image file ({exc.strerror or exc})") from exc
    if hasattr(value, "save"):  # PIL.Image.Image, encoded losslessly
        buffer = io.BytesIO()
        value.save(buffer, format="PNG")
        return {"bytes": buffer.getvalue(), "path": None}
    raise ValueError(f"cannot store {type(value).__name__} as an image")


def _image_columns(features: Mapping[str, Any]) -> list[str]:
    from datasets import Image

    return [name for name, feature in features.items() if isinstance(feature, Image)]


def _prepare_rows(
    config: str, rows: Sequence[Mapping[str, Any]], features: Mapping[str, Any], offset: int = 0
) -> list[dict]:
    """Fill missing columns with None, encode images and JSON columns; an unknown column is a ValueError."""
    columns = list(features)
    known = set(columns)
    from triad_dataset.contract.features import JSON_COLUMNS  # imports `datasets` (seconds): only when writing

    images = set(_image_columns(features))
    prepared = []
    for index, row in enumerate(rows):
        extra = set(row) - known
        if extra:
            row_id = row.get("query_id", row.get("item_id", offset + index))
            raise ValueError(f"{config} / {row_id}: columns not in the config's features: {sorted(extra)}")
        out = {}
        for column in columns:
            value = row.get(column)
            if column in images:
                value = encode_image(value)
            elif column in JSON_COLUMNS and value is not None and not isinstance(value, str):
                value = json.dumps(value, sort_keys=True, ensure_ascii=False)
            out[column] = value
        prepared.append(out)
    return prepared


def _row_error(config: str, prepared: Sequence[dict], schema: pa.Schema, offset: int) -> ValueError:
    """A ValueError naming the first row (and column) of a chunk that does not fit the schema."""
    for index, row in enumerate(prepared):
        for field in schema:
            try:
                pa.array([row[field.name]], type=field.type)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as exc:
                row_id = row.get("query_id", row.get("item_id", offset + index))
                return ValueError(
                    f"{config} / {row_id}: column {field.name} does not match the config's features "
                    f"({field.type}): {exc}"
                )
    return ValueError(f"{config}: rows {offset}-{offset + len(prepared) - 1} do not match the config's features")


def write_shard(directory: Path, config: str, rows: Sequence[Mapping[str, Any]], features: Any) -> tuple[str, int]:
    """Write one config's parquet shard into `directory`; returns (shard file name, in-memory Arrow size).

    Rows are converted and written one row group at a time, so memory stays near the size of the rows themselves;
    the file is then hashed (streamed) and renamed to its content-hashed name. Identical inputs give identical bytes.
    """
    schema = features.arrow_schema
    rows = rows if isinstance(rows, Sequence) else list(rows)
    group = IMAGE_ROW_GROUP if _image_columns(features) else ROW_GROUP
    partial = directory / f".{config}.partial"
    num_bytes = 0
    with pq.ParquetWriter(partial, schema, compression=COMPRESSION) as writer:
        for start in range(0, len(rows), group):
            prepared = _prepare_rows(config, rows[start : start + group], features, offset=start)
            try:
                chunk = pa.Table.from_pylist(prepared, schema=schema)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as exc:
                raise _row_error(config, prepared, schema, start) from exc
            writer.write_table(chunk, row_group_size=group)
            num_bytes += chunk.nbytes
    digest = hashlib.sha256()
    with partial.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    shard = shard_name(digest.hexdigest())
    os.replace(partial, directory / shard)
    return shard, num_bytes


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(YAML front matter as a dict, markdown body) of a dataset card; no front matter gives ({}, text)."""
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            meta = yaml.load(text[4:end], Loader=_YAML_LOADER) or {}
            body = text[end + 4 :].lstrip("\n")
            if not isinstance(meta, dict):
                raise ValueError("dataset card front matter is not a YAML mapping")
            return meta, body
    return {}, text


def size_category(rows: int) -> str:
    """The Hub's `size_categories` value for a dataset of `rows` rows in all.

    >>> size_category(999), size_category(1000), size_category(14_502), size_category(10**9)
    ('n<1K', '1K<n<10K', '10K<n<100K', '1B<n<10B')
    """
    return next((label for bound, label in SIZE_CATEGORIES if rows < bound), "1B<n<10B")


def card_with_configs(
    card: str, shards: Mapping[str, str], features: Mapping[str, Any], counts: Mapping[str, tuple[int, int]]
) -> str:
    """The README text: the card's own front matter, `size_categories` from the rows of every config, and
    `configs:` and `dataset_info:` for every shard."""
    from datasets.info import DatasetInfo, DatasetInfosDict
    from datasets.splits import SplitDict, SplitInfo
    from huggingface_hub import DatasetCardData

    meta, body = split_front_matter(card)
    meta = {k: v for k, v in meta.items() if k not in ("configs", "dataset_info")}
    meta["size_categories"] = [size_category(sum(rows for rows, _ in counts.values()))]
    infos = {}
    for config in shards:
        splits = SplitDict()
        num_examples, num_bytes = counts[config]
        splits.add(SplitInfo(name=names.SPLIT, num_examples=num_examples, num_bytes=num_bytes))
        infos[config] = DatasetInfo(features=features[config], config_name=config, splits=splits)
    card_data = DatasetCardData(**meta)
    DatasetInfosDict(infos).to_dataset_card_data(card_data)
    meta_yaml = card_data.to_dict()
    meta_yaml["configs"] = [
        {
            "config_name": config,
            "data_files": [
                {"split": names.SPLIT, "path": f"{DATA_DIR}/{config}/{shard.split('-00000-')[0]}-*.parquet"}
            ],
        }
        for config, shard in shards.items()
    ]
    front = yaml.dump(meta_yaml, Dumper=_YAML_DUMPER, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{front}---\n\n{body.rstrip()}\n"


def _looks_like_dataset_folder(path: Path) -> bool:
    return path.is_dir() and ((path / AUDIT_NAME).is_file() or not any(path.iterdir()))


def _check_target(out_dir: Path, overwrite: bool) -> None:
    if out_dir.exists() or out_dir.is_symlink():
        if not overwrite:
            raise TriadError(f"{out_dir}: output folder exists (pass --overwrite to replace it)")
        if not _looks_like_dataset_folder(out_dir):
            raise TriadError(
                f"{out_dir}: refusing to overwrite: not an empty folder or a dataset folder (no {AUDIT_NAME})"
            )


def _write_files(
    tmp: Path,
    tables: Mapping[str, Sequence[Mapping]],
    features: Mapping[str, Any],
    card: str,
    audit: Mapping[str, Any],
    licence: str | None,
) -> None:
    shards: dict[str, str] = {}
    counts: dict[str, tuple[int, int]] = {}
    from tqdm.auto import tqdm  # imports asyncio: only where a folder is written

    for config in tqdm(list(tables), desc="writing parquet", unit="config", leave=False):
        target = tmp / DATA_DIR / config
        target.mkdir(parents=True)
        shard, num_bytes = write_shard(target, config, tables[config], features[config])
        shards[config], counts[config] = shard, (len(tables[config]), num_bytes)
    (tmp / CARD_NAME).write_text(card_with_configs(card, shards, features, counts), encoding="utf-8")
    (tmp / AUDIT_NAME).write_text(json.dumps(audit, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if licence is not None:
        (tmp / LICENSE_NAME).write_text(licence.rstrip() + "\n", encoding="utf-8")


def check_output_dir(out_dir: str | os.PathLike, overwrite: bool) -> None:
    """Fail early (TriadError) when `write_folder(out_dir, overwrite=overwrite)` would refuse to write."""
    _check_target(Path(out_dir), overwrite)


def write_folder(
    out_dir: str | os.PathLike,
    tables: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    features: Mapping[str, Any],
    card: str,
    audit: Mapping[str, Any],
    overwrite: bool = False,
    check: Callable[[Path], None] | None = None,
    licence: str | None = None,
) -> Path:
    """Write a dataset folder into a temporary sibling, then rename it to `out_dir` (nothing half-written).

    `tables` maps config -> rows (dicts; missing columns become null, `attributes` dicts become JSON, images may be
    bytes, {"bytes", "path"} dicts, PIL images or file paths). `features` maps config -> `datasets.Features`.
    `card` is the card's markdown (it may start with YAML front matter; `configs:` and `dataset_info:` are added).
    An existing `out_dir` is a TriadError unless `overwrite`; even then only an empty folder or a dataset folder
    (one with audit.json) is replaced. `check(tmp_dir)`, when given, runs on the finished temporary folder before
    the rename; whatever it raises aborts the write and leaves `out_dir` as it was. `licence`, when given, is written
    as LICENSE.md, the file a card with `license: other` names in `license_link`.
    """
    out_dir = Path(out_dir)
    missing = [c for c in tables if c not in features]
    if missing:
        raise ValueError(f"no features given for configs {missing}")
    if audit.get("benchmark") not in BENCHMARKS:
        raise ValueError(f"audit['benchmark'] must be one of {BENCHMARKS}, got {audit.get('benchmark')!r}")
    _check_target(out_dir, overwrite)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    trash = None
    try:
        _write_files(tmp, tables, features, card, audit, licence)
        if check is not None:
            check(tmp)
        _check_target(out_dir, overwrite)  # it may have appeared while we were writing
        if out_dir.exists():
            trash = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
            os.replace(out_dir, trash / out_dir.name)
        os.replace(tmp, out_dir)
        os.chmod(out_dir, 0o755)  # mkdtemp makes 0700 folders
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if trash is not None and not out_dir.exists() and (trash / out_dir.name).exists():
            os.replace(trash / out_dir.name, out_dir)  # put the old folder back
        raise
    finally:
        if trash is not None:
            shutil.rmtree(trash, ignore_errors=True)
    return out_dir


# ---------------------------------------------------------------------------------------------------- reading


def _require_folder(path: Path) -> None:
    if not path.is_dir():
        raise TriadError(f"{path}: not a dataset folder (no such directory)")


def read_card_meta(directory: str | os.PathLike) -> dict[str, Any]:
    """The YAML front matter of a folder's README.md ({} without one); parsed once per card version."""
    return copy.deepcopy(_shared_card_meta(directory))


def _shared_card_meta(directory: str | os.PathLike) -> dict[str, Any]:
    """`read_card_meta` without the copy: the cached dict itself, for readers that never change it."""
    card = Path(directory) / CARD_NAME
    try:
        stat = card.stat()
    except FileNotFoundError:
        return {}
    return _card_meta(str(card.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=32)
def _card_meta(card: str, mtime_ns: int, size: int) -> dict[str, Any]:
    try:
        return split_front_matter(Path(card).read_text(encoding="utf-8"))[0]
    except (yaml.YAMLError, ValueError) as exc:
        raise TriadError(f"{card}: unreadable YAML front matter ({exc})") from exc


def list_configs(directory: str | os.PathLike) -> list[str]:
    """Config names in card order (`configs:` of README.md), else the sub-folders of data/ in sorted order."""
    path = Path(directory)
    _require_folder(path)
    configs = _shared_card_meta(path).get("configs") or []
    if configs:
        return [entry["config_name"] for entry in configs]
    data = path / DATA_DIR
    return sorted(p.name for p in data.iterdir() if p.is_dir()) if data.is_dir() else []


def shard_paths(directory: str | os.PathLike, config: str) -> list[Path]:
    """The parquet files of one config's test split (card `data_files` patterns, else data/<config>/*.parquet)."""
    path = Path(directory)
    _require_folder(path)
    patterns: list[str] = []
    for entry in _shared_card_meta(path).get("configs") or []:
        if entry.get("config_name") == config:
            files = entry.get("data_files") or []
            if isinstance(files, str):
                files = [{"split": names.SPLIT, "path": files}]
            for item in files:
                if item.get("split", names.SPLIT) == names.SPLIT:
                    paths = item["path"]
                    patterns.extend([paths] if isinstance(paths, str) else paths)
    if not patterns:
        patterns = [f"{DATA_DIR}/{config}/*.parquet"]
    found = sorted({p for pattern in patterns for p in path.glob(pattern)})
    if not found:
        known = ", ".join(list_configs(path)) or "none"
        raise TriadError(f"{path}: no parquet data for config {config!r} (configs: {known})")
    return found


def read_table(directory: str | os.PathLike, config: str, columns: Sequence[str] | None = None) -> pa.Table:
    """One config as a pyarrow Table, read straight from parquet (no datasets cache, images left as bytes)."""
    tables = []
    for shard in shard_paths(directory, config):
        try:
            tables.append(pq.read_table(shard, columns=list(columns) if columns is not None else None))
        except (pa.ArrowInvalid, OSError, KeyError) as exc:
            raise TriadError(f"{shard}: cannot read parquet ({exc})") from exc
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables)


def read_rows(directory: str | os.PathLike, config: str, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """One config as a list of row dicts (images stay {"bytes", "path"} dicts, `attributes` stays JSON text)."""
    return read_table(directory, config, columns).to_pylist()


def read_audit(directory: str | os.PathLike) -> dict[str, Any]:
    """The folder's audit.json as a dict."""
    path = Path(directory)
    _require_folder(path)
    audit_path = path / AUDIT_NAME
    try:
        return json.loads(audit_path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TriadError(f"{audit_path}: missing (every built folder has one)") from exc
    except json.JSONDecodeError as exc:
        raise TriadError(f"{audit_path}: not valid JSON ({exc})") from exc


@overload
def benchmark_of(directory: str | os.PathLike, *, strict: Literal[True] = ...) -> Benchmark: ...
@overload
def benchmark_of(directory: str | os.PathLike, *, strict: bool) -> Benchmark | None: ...
def benchmark_of(directory: str | os.PathLike, *, strict: bool = True) -> Benchmark | None:
    """Which benchmark a dataset folder is: 'triad' or 'ark', as its audit.json says.

    Args:
        directory: the dataset folder.
        strict: when False, a folder without audit.json, or whose audit.json names neither benchmark, gives None
            instead of an error.

    Raises:
        TriadError: no such folder, audit.json not valid JSON, or (strict) audit.json missing or naming neither.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> benchmark_of(out, strict=False) is None
    True
    >>> _ = (out / "audit.json").write_text('{"benchmark": "ark"}')
    >>> benchmark_of(out)
    'ark'
    >>> _ = (out / "audit.json").write_text('{"benchmark": "other"}')
    >>> benchmark_of(out)
    Traceback (most recent call last):
    triad_dataset.contract.errors.TriadError: .../audit.json: unknown benchmark 'other'
    >>> import shutil; shutil.rmtree(out)
    """
    path = Path(directory)
    if not strict and path.is_dir() and not (path / AUDIT_NAME).exists():
        return None
    bench = read_audit(path).get("benchmark")
    if bench in BENCHMARKS:
        return cast("Benchmark", bench)
    if not strict:
        return None
    raise TriadError(f"{path}/{AUDIT_NAME}: unknown benchmark {bench!r}")


def _parquet_files(path: Path) -> Iterable[Path]:
    return sorted(path.rglob("*.parquet"), key=lambda p: p.relative_to(path).as_posix())


def fingerprint(directory: str | os.PathLike) -> str:
    """sha256 hex over the sorted relative paths and bytes of every parquet file in the folder."""
    path = Path(directory)
    _require_folder(path)
    digest = hashlib.sha256()
    for file in _parquet_files(path):
        digest.update(file.relative_to(path).as_posix().encode("utf-8") + b"\0")
        with file.open("rb") as handle:
            for chunk in iter(functools.partial(handle.read, 1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()
