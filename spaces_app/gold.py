"""The gold data the server scores against, read once per dataset folder and cached by its fingerprint."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ark_dataset import names as ark_names
from spaces_app.pools import PoolIndex
from spaces_app.ranking_files import Bound
from triad_dataset.contract import names as triad_names
from triad_dataset.contract.errors import TriadError
from triad_dataset.folder import io as folder
from triad_dataset.folder.strata import with_reference_categories

BENCHMARKS = ("triad", "ark")
RESAMPLE_CACHE_BYTES = 256 * 2**20  # resample draws kept for the server's golds (a 1,000-query group: 6 MB)
ITEM_ID = "item_id"


@dataclass
class Gold:
    """One benchmark's gold: query rows per config (no images), pools / galleries as sets, and the fingerprint."""

    benchmark: str
    path: Path
    fingerprint: str  # sha256 of the folder's parquet bytes (`triad_dataset.folder.io.fingerprint`)
    rows: dict[str, list[Mapping[str, Any]]]
    galleries: dict[str, frozenset[str]] = field(default_factory=dict)  # ARK subtype -> gallery ids
    indexes: dict[str, PoolIndex] = field(default_factory=dict)  # TRIAD config -> pools as arrays
    _pools: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    _columnar: dict[str, Any] = field(default_factory=dict)
    content: str = ""  # sha256 of what scoring reads (`content_fingerprint`): the same for re-encoded files

    def columnar(self, config: str) -> Any:
        """The config's gold as `metrics.columnar.TriadGold` (pool-aligned arrays; built once per server)."""
        if config not in self._columnar:
            from metrics.columnar import gold_from_rows

            self._columnar[config] = gold_from_rows(config, self.rows[config])
        return self._columnar[config]

    @property
    def configs(self) -> list[str]:
        return list(self.rows)

    def pools(self, config: str) -> dict[str, list[str]]:
        """query_id -> candidate ids of that query's fixed pool (TRIAD)."""
        if config not in self._pools:
            self._pools[config] = {r["query_id"]: list(r["candidate_ids"]) for r in self.rows[config]}
        return self._pools[config]

    def bounds(self) -> dict[str, Bound]:
        """Per config, the most a ranking file may hold: one row per query, at most a pool / gallery of ids each."""
        if self.benchmark == "triad":
            return {c: Bound.of(len(idx.query_ids), idx.pool_size) for c, idx in self.indexes.items()}
        return {s: Bound.of(len(self.rows[s]), len(self.galleries[s])) for s in self.rows}

    def query_ids(self, config: str) -> list[str]:
        return [r["query_id"] for r in self.rows[config]]

    def positives(self, config: str) -> dict[str, str]:
        """query_id -> the single positive id (ARK)."""
        return {r["query_id"]: r["positive_id"] for r in self.rows[config]}


def _is_image(t: pa.DataType) -> bool:
    return pa.types.is_struct(t) and any(t.field(i).name == "bytes" for i in range(t.num_fields))


def _text_columns(path: Path, config: str) -> list[str]:
    """Every column of a config except image columns (the server never needs the pictures)."""
    schema = pq.read_schema(folder.shard_paths(path, config)[0])
    return [f.name for f in schema if not _is_image(f.type)]


SHARED_LIST_COLUMNS = ("candidate_ids", "candidate_roles")


def _share_strings(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One string object per distinct candidate id / role: pools overlap heavily, so this divides the gold's memory
    (1,000 x 1,000 per subset) several times over."""
    shared: dict[str, str] = {}
    for row in rows:
        for col in SHARED_LIST_COLUMNS:
            values = row.get(col)
            if values is not None:
                row[col] = [shared.setdefault(x, x) for x in values]
    return rows


def _plain(table: pa.Table) -> pa.Table:
    """The table as values: dictionary columns decoded, schema metadata dropped, one chunk per column."""
    columns = [c.cast(c.type.value_type) if pa.types.is_dictionary(c.type) else c for c in table.columns]
    return pa.table(columns, names=table.column_names).combine_chunks()


def content_fingerprint(path: Path, tables: Sequence[str]) -> str:
    """sha256 over the non-image columns of ``tables`` as Arrow values: what the rows say, not how the parquet
    files encode them (compression, row groups, dictionaries, metadata). A gold rebuilt with the same rows keeps
    its leaderboard; one whose rows changed starts a new gold version (docs/space.md)."""
    import hashlib

    from spaces_app.ranking_files import HashSink

    digest = hashlib.sha256()
    for name in sorted(tables):
        table = _plain(folder.read_table(path, name, columns=_text_columns(path, name)))
        sink = HashSink()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        digest.update(name.encode() + b"\x00" + sink.hash.digest())
    return digest.hexdigest()


def load_gold(path: str | Path) -> Gold:
    """Read a TRIAD or ARK dataset folder's task configs (CONTRACTS §1) without images."""
    path = Path(path)
    bench = folder.benchmark_of(path)
    present = set(folder.list_configs(path))
    if bench == "triad":
        configs: list[str] = [c for c in triad_names.TASK_CONFIGS if c in present]
        read = {c: _share_strings(folder.read_rows(path, c, columns=_text_columns(path, c))) for c in configs}
        rows = with_reference_categories(path, read)  # paper C.3 strata (triad_dataset/folder/strata.py)
        indexes = {c: PoolIndex.build(c, rows[c]) for c in configs}
        gold = Gold(
            bench, path, folder.fingerprint(path), rows, indexes=indexes, content=content_fingerprint(path, configs)
        )
        for c in configs:  # the scoring arrays, built once with the gold rather than inside a first submission
            gold.columnar(c)
        warm_scoring(gold)
        return gold
    subtypes = [s for s in ark_names.SUBTYPES if s in present and s + ark_names.GALLERY_SUFFIX in present]
    ark_rows: dict[str, list[Mapping[str, Any]]] = {
        s: list(folder.read_rows(path, s, columns=_text_columns(path, s))) for s in subtypes
    }
    galleries = {
        s: frozenset(
            folder.read_table(path, s + ark_names.GALLERY_SUFFIX, columns=[ITEM_ID]).column(ITEM_ID).to_pylist()
        )
        for s in subtypes
    }
    content = content_fingerprint(path, [*subtypes, *(s + ark_names.GALLERY_SUFFIX for s in subtypes)])
    return Gold(bench, path, folder.fingerprint(path), ark_rows, galleries, content=content)


def warm_scoring(gold: Gold) -> None:
    """Score the gold's own pool order once, so what scoring derives from the gold alone is made with the gold, not
    inside the first submission: the C.4 pairings (kept on the columnar gold) and the bootstrap / D.3 resample
    draws, which depend only on the seed and the gold's group sizes (kept by `metrics.core.stats.RESAMPLES`, turned
    on here: ≈ 50 MB for a paper-size gold)."""
    from metrics import scoring
    from metrics.core import stats

    stats.RESAMPLES.max_bytes = max(stats.RESAMPLES.max_bytes, RESAMPLE_CACHE_BYTES)
    columnar = {c: gold.columnar(c) for c in gold.configs}
    orders = {c: np.tile(np.arange(g.mask.shape[1]), (g.mask.shape[0], 1)) for c, g in columnar.items()}
    with contextlib.suppress(ValueError):  # a gold scoring cannot read: every submission will say so (submit.py)
        scoring.score_triad_arrays(columnar, orders)


def _stat_key(path: Path) -> tuple:
    """Names, sizes and mtimes of the folder's parquet files: a cheap change detector (a rebuild renames shards)."""
    files = sorted((path / folder.DATA_DIR).rglob("*.parquet"))
    return tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files)


class GoldStore:
    """Gold per benchmark from the configured folders; re-read when a folder's fingerprint changes."""

    def __init__(self, data_dirs: Mapping[str, str | Path] | Sequence[str | Path]) -> None:
        self._dirs: dict[str, Path] = {}
        if isinstance(data_dirs, Mapping):
            for bench, p in data_dirs.items():
                if bench not in BENCHMARKS:
                    raise ValueError(f"unknown benchmark {bench!r}; expected one of {BENCHMARKS}")
                if p is not None:
                    self._dirs[bench] = Path(p)
        else:
            for p in data_dirs:
                p = Path(p)
                if (p / folder.AUDIT_NAME).is_file():
                    self._dirs[folder.benchmark_of(p)] = p
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[tuple, Gold]] = {}

    def configured(self) -> dict[str, Path]:
        return dict(self._dirs)

    def bounds(self) -> dict[str, Bound]:
        """Per config of every available benchmark, the most a submitted ranking file may decode to."""
        return {c: b for bench in self.available() for c, b in self.get(bench).bounds().items()}

    def available(self) -> dict[str, Path]:
        """Benchmarks whose folder exists (an absent ARK folder simply disables ARK)."""
        return {b: p for b, p in self._dirs.items() if (p / folder.AUDIT_NAME).is_file()}

    def get(self, benchmark: str) -> Gold:
        path = self.available().get(benchmark)
        if path is None:
            raise TriadError(f"this leaderboard has no {benchmark.upper()} gold data configured")
        key = _stat_key(path)
        with self._lock:
            cached = self._cache.get(benchmark)
            if cached is None or cached[0] != key:
                cached = self._cache[benchmark] = (key, load_gold(path))
            return cached[1]

    def known_configs(self) -> dict[str, list[str]]:
        return {b: self.get(b).configs for b in self.available()}


def require_gold(data_dirs: Mapping[str, str | Path]) -> GoldStore:
    """The gold store of the configured folders; a TriadError naming --data when none of them exists (a server or a
    command-line submission without gold would only serve an empty board or refuse everything)."""
    store = GoldStore(data_dirs)
    if not store.available():
        looked = ", ".join(f"{b.upper()}: {p}" for b, p in store.configured().items())
        raise TriadError(
            f"no gold dataset folder found ({looked}); give the TRIAD gold folder with --data (or "
            "TRIAD_SPACE_DATA) and ARK's with --ark-data"
        )
    return store
