"""What a run must encode — every distinct model input over all requested configs — and each config's pools, as
columns.

Candidates are shared across pools and across configs, so an item is identified by the hash of its exact
serialized input (`inputs.input_key`): each distinct input is encoded once, however many pools contain it.

The plan is columnar: the distinct inputs form one item table (`ItemTable`: key, role, text, instruction and a
reference to where the image lives — config and row — never the image bytes), and each config's pools are
integer arrays indexing it. Memory per pool slot (TRIAD): item index int32 + corpus row int32 + the scoring gold
(`metrics.columnar.TriadGold`: label int8, mask bool, role int16, trap bool, hop int16) = 15 bytes. Images are read
from the parquet shards when a batch is encoded (`model_adapters.planning.images`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics.ragged import from_numpy, list_parts, padded, to_numpy
from model_adapters.planning import images, inputs
from model_adapters.planning.textspace import Captions, apply_caption
from model_adapters.protocol import ModelInput
from triad_dataset.contract.errors import TriadError

if TYPE_CHECKING:
    from metrics.columnar import TriadGold

IMAGE_COLUMNS = ("image", "query_image")
ROLE_CODES = (inputs.QUERY, inputs.CANDIDATE)


@dataclass
class Item:
    role: str  # inputs.QUERY or inputs.CANDIDATE
    model_input: ModelInput
    label: str  # where it comes from, for error messages ("fashion_items item f12", "state_cars query q3")


OPEN_READERS = 2  # image readers kept open (each holds a row group's column chunk): a query source and a corpus


class ItemTable(Mapping[str, Item]):
    """The distinct inputs of a run in first-seen order: key -> `Item`, with the image read from its parquet row
    when the item is looked up (only the encoder's current batch holds image bytes)."""

    def __init__(self, data: str) -> None:
        self.data = data
        self.sources: list[tuple[str, str | None]] = []  # (config, image column or None)
        self.key_list: list[str] = []  # in first-seen order
        self.index: dict[str, int] = {}
        self.roles: list[int] = []
        self.texts: list[str] = []
        self.instructions: list[str | None] = []
        self.ids: list[str] = []  # query_id / item_id, for labels
        self.source: list[int] = []
        self.row: list[int] = []
        self.has_image: list[bool] = []
        self._readers: dict[int, images.ImageReader] = {}
        self._closed_images_read = 0  # images returned by readers closed since (`close_images`)

    def __getstate__(self) -> dict[str, Any]:  # broadcast to other processes without open files
        return {**self.__dict__, "_readers": {}}

    def add_source(self, config: str, image_column: str | None) -> int:
        self.sources.append((config, image_column))
        return len(self.sources) - 1

    def add(
        self,
        role: str,
        source: int,
        rows: Sequence[int] | np.ndarray,
        keys: Sequence[str],
        texts: Sequence[str],
        instructions: Sequence[str | None],
        ids: Sequence[str],
        has_image: Sequence[bool],
    ) -> np.ndarray:
        """Add the given rows of one source; returns each row's item index (an existing one for a repeated key)."""
        out = np.empty(len(keys), dtype=np.int32)
        code = ROLE_CODES.index(role)
        for i, key in enumerate(keys):
            at = self.index.get(key)
            if at is None:
                at = self.index[key] = len(self.key_list)
                self.key_list.append(key)
                self.roles.append(code)
                self.texts.append(texts[i])
                self.instructions.append(instructions[i])
                self.ids.append(ids[i])
                self.source.append(source)
                self.row.append(int(rows[i]))
                self.has_image.append(bool(has_image[i]))
            out[i] = at
        return out

    # --- Mapping[str, Item] ------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.key_list)

    def __iter__(self) -> Iterator[str]:
        return iter(self.key_list)

    def __contains__(self, key: object) -> bool:
        return key in self.index

    def __getitem__(self, key: str) -> Item:
        i = self.index[key]
        return Item(ROLE_CODES[self.roles[i]], self.model_input(i), self.label(i))

    def model_input(self, i: int) -> ModelInput:
        """The input of item i (its image read now from the parquet shard)."""
        return ModelInput(self.texts[i], self._image(i), self.instructions[i])

    def text_input(self, i: int) -> ModelInput:
        """The input of item i without reading its image (text and instruction only)."""
        return ModelInput(self.texts[i], None, self.instructions[i])

    def label(self, i: int) -> str:
        config = self.sources[self.source[i]][0]
        kind = "query" if self.roles[i] == 0 else "item"
        return f"{config} {kind} {self.ids[i]}"

    def role(self, key: str) -> str:
        return ROLE_CODES[self.roles[self.index[key]]]

    def _image(self, i: int) -> bytes | None:
        if not self.has_image[i]:
            return None
        src = self.source[i]
        reader = self._readers.pop(src, None)
        if reader is None:
            config, column = self.sources[src]
            reader = images.ImageReader(self.data, config, column or "image")
        self._readers[src] = reader  # most recently used last
        while len(self._readers) > OPEN_READERS:  # encoding goes source by source; a reranker alternates two
            oldest = next(iter(self._readers))
            self._closed_images_read += self._readers.pop(oldest).images_read
        return reader.read(self.row[i])

    @property
    def images_read(self) -> int:
        return self._closed_images_read + sum(r.images_read for r in self._readers.values())

    def close_images(self) -> None:
        """Drop the open image readers once encoding is done (each holds its current row group's column chunk and
        read batch); a later lookup (a reranker's inputs) opens a reader again."""
        self._closed_images_read = self.images_read
        self._readers = {}
        release_arrow_memory()

    def storage_order(self, keys: Sequence[str]) -> list[str]:
        """`keys` ordered by where their images live (source, row): contiguous slices read disjoint row groups."""
        return sorted(keys, key=lambda k: (self.source[self.index[k]], self.row[self.index[k]], k))

    def encode_order_key(self, key: str) -> tuple:
        """Encoding order: by role; items with an image in storage order (their images stream through the file),
        items without one by text length (batches pad little)."""
        i = self.index[key]
        role = ROLE_CODES[self.roles[i]]
        if self.has_image[i]:
            return (role, 0, self.source[i], self.row[i], key)
        return (role, 1, len(self.texts[i]), 0, key)


@dataclass
class ConfigPlan:
    """One TRIAD config (fixed pools) or one ARK subtype (whole gallery), as arrays over the item table."""

    config: str
    rows: list[dict[str, Any]]  # per-query columns of the gold rows (no pool lists, no images)
    query_items: np.ndarray  # int32 (n_queries,): item index of each query
    pool_items: np.ndarray  # TRIAD: int32 (n_queries, width), -1 = padding; ARK: (n_gallery,) the gallery once
    pool_rows: np.ndarray  # corpus row of each pool slot (same shape as pool_items)
    corpus_ids: Any  # pyarrow array: item_id of each corpus row
    gold: TriadGold | None = None  # TRIAD: the scoring gold
    positives: np.ndarray | None = None  # ARK: gallery position of each query's positive

    def triad_gold(self) -> TriadGold:
        """The scoring gold of a TRIAD config; an ARK subtype has none."""
        if self.gold is None:
            raise RuntimeError(f"{self.config}: an ARK subtype has no TRIAD gold")
        return self.gold

    @property
    def query_ids(self) -> list[str]:
        return [row["query_id"] for row in self.rows]

    @property
    def pool_slots(self) -> int:
        if self.positives is not None:
            return int(self.pool_items.size) * len(self.rows)
        return int((self.pool_items >= 0).sum())

    @property
    def distinct_keys(self) -> np.ndarray:
        """Item indices of every distinct input of this config (queries and candidates)."""
        return sorted_distinct(self.query_items, self.pool_items[self.pool_items >= 0])

    def candidate_items(self) -> np.ndarray:
        """Distinct candidate item indices in first-seen pool order (the row order of the ranking's item matrix)."""
        flat = self.pool_items[self.pool_items >= 0]
        if not flat.size:
            return flat
        positions = np.arange(flat.size)
        first = np.full(int(flat.max()) + 1, flat.size, dtype=np.int64)
        np.minimum.at(first, flat, positions)  # each item's first pool position (one pass, no sort)
        return flat[first[flat] == positions]


def sorted_distinct(*arrays: np.ndarray) -> np.ndarray:
    """The distinct values of non-negative integer arrays, ascending (`np.union1d` / `np.unique`), through a mask
    over their range instead of a sort.

    >>> sorted_distinct(np.array([5, 1, 5], dtype=np.int32), np.array([0, 1])).tolist()
    [0, 1, 5]
    """
    dtype = np.result_type(*arrays)
    size = max((int(a.max()) + 1 for a in arrays if a.size), default=0)
    seen = np.zeros(size, dtype=bool)
    for a in arrays:
        seen[a] = True
    return np.flatnonzero(seen).astype(dtype)


@dataclass
class Plan:
    benchmark: str
    configs: list[ConfigPlan]
    items: ItemTable
    sees_images: bool = True  # False for text-only models: their inputs (and keys) carry no image
    corpora: dict[str, _CorpusRows] = field(default_factory=dict)  # corpus -> its rows as model inputs
    captions: Captions | None = None  # ARK text-space runs: captions applied to every row's input


# --- reading ------------------------------------------------------------------------------------------------
def _column_names(data: str, config: str) -> list[str]:
    import pyarrow.parquet as pq

    return list(pq.read_schema(images.shards(data, config)[0]).names)


def _read(data: str, config: str, columns: Sequence[str] | None = None) -> Any:
    """Non-image columns of one config as an Arrow table (`pyarrow.parquet.ParquetFile`: no dataset machinery)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = _column_names(data, config)
    wanted = [c for c in names if c not in IMAGE_COLUMNS] if columns is None else [c for c in columns if c in names]
    tables = []
    for shard in images.shards(data, config):
        try:
            tables.append(pq.ParquetFile(shard).read(columns=wanted))
        except (pa.ArrowInvalid, OSError, KeyError) as exc:
            raise TriadError(f"{shard}: cannot read parquet ({exc})") from exc
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables)


def _image_column(data: str, config: str, column: str, sees_images: bool) -> str | None:
    return column if sees_images and column in _column_names(data, config) else None


def _keys(
    role: str, texts: Sequence[str], hashes: Sequence[bytes] | None, instructions: Sequence[str | None]
) -> list[str]:
    """`inputs.input_key` of each row from its text, image digest (b"": none) and instruction."""
    out = []
    for i, text in enumerate(texts):
        digest = hashes[i] if hashes is not None else images.NO_IMAGE
        out.append(inputs.key_from_parts(role, text, digest.hex() if digest else None, instructions[i]))
    return out


def _hashes(data: str, config: str, column: str | None, n: int) -> list[bytes] | None:
    if column is None:
        return None
    hashes = images.image_hashes(data, config, column, limit=n)
    if len(hashes) != n:
        raise TriadError(f"{data}: config {config}: {len(hashes)} images for {n} rows")
    return hashes


@dataclass
class _CorpusRows:
    ids: Any  # pyarrow array of item_id
    keys: list[str]
    texts: list[str]
    has_image: list[bool]
    source: int
    items: np.ndarray  # item index per corpus row, -1 until a pool references the row


def _corpus(plan: Plan, corpus: str) -> _CorpusRows:
    """A corpus's rows as model inputs. This is the one place where a corpus row becomes a model input: its
    serialized `text` and its `image` (paper B.3), never an instruction."""
    if corpus not in plan.corpora:
        table = _read(plan.items.data, corpus, ["item_id", "text", "modality"])
        texts = [t or "" for t in table.column("text").to_pylist()]
        if plan.captions is not None:  # caption-then-embed (ARK text space; planning.textspace)
            rows = table.select([c for c in ("item_id", "modality") if c in table.column_names]).to_pylist()
            texts = [
                apply_caption(plan.captions, corpus, row, ModelInput(text)).text
                for row, text in zip(rows, texts, strict=True)
            ]
        column = _image_column(plan.items.data, corpus, "image", plan.sees_images)
        hashes = _hashes(plan.items.data, corpus, column, len(texts))
        keys = _keys(inputs.CANDIDATE, texts, hashes, [None] * len(texts))
        has_image = [bool(h) for h in hashes] if hashes is not None else [False] * len(texts)
        plan.corpora[corpus] = _CorpusRows(
            table.column("item_id").combine_chunks(),
            keys,
            texts,
            has_image,
            plan.items.add_source(corpus, column),
            np.full(len(texts), -1, np.int32),
        )
    return plan.corpora[corpus]


def _referenced(plan: Plan, rows: _CorpusRows, used: np.ndarray) -> np.ndarray:
    """Add the corpus rows a pool references (first time only) to the item table; item index per corpus row."""
    new = sorted_distinct(used[used >= 0])
    new = new[rows.items[new] < 0]
    if new.size:
        picked = new.tolist()
        rows.items[new] = plan.items.add(
            inputs.CANDIDATE,
            rows.source,
            picked,
            [rows.keys[i] for i in picked],
            [rows.texts[i] for i in picked],
            [None] * len(picked),
            rows.ids.take(from_numpy(new)).to_pylist(),
            [rows.has_image[i] for i in picked],
        )
    return rows.items


def _queries(
    plan: Plan,
    config: str,
    rows: list[dict[str, Any]],
    variant: str,
    benchmark: str,
    rewrites: Mapping[str, str] | None = None,
) -> np.ndarray:
    """Item index of every query row under the input variant (`rewrites`: ARK query_id -> rewritten text)."""
    column = _image_column(plan.items.data, config, "query_image", plan.sees_images)
    hashes = _hashes(plan.items.data, config, column, len(rows))
    has_images = any(hashes) if hashes is not None else False
    inputs.check_variant(variant, config, benchmark=benchmark, has_images=has_images or not plan.sees_images)
    texts, instructions, has_image = [], [], []
    for q, row in enumerate(rows):
        marker = {"query_image": b"image" if hashes is not None and hashes[q] else None}
        text = (rewrites or {}).get(row["query_id"])
        mi = inputs.query_input({**row, **marker}, variant, text=text)
        if variant == inputs.FULL:  # image queries are captioned too (ARK text space)
            mi = apply_caption(plan.captions, config, row, mi)
        texts.append(mi.text)
        instructions.append(mi.instruction)
        has_image.append(mi.image is not None)
    digests = [h if keep else images.NO_IMAGE for h, keep in zip(hashes or [b""] * len(rows), has_image, strict=True)]
    keys = _keys(inputs.QUERY, texts, digests, instructions)
    source = plan.items.add_source(config, column)
    return plan.items.add(
        inputs.QUERY, source, np.arange(len(rows)), keys, texts, instructions, [r["query_id"] for r in rows], has_image
    )


def _pool_rows(config: str, table: Any, corpus: str, corpus_ids: Any, rows: list[dict[str, Any]]) -> np.ndarray:
    """Corpus row of every pool slot, (n_queries, width) padded with -1; an id not in the corpus is an error."""
    import pyarrow.compute as pc

    offsets, flat = list_parts(table.column("candidate_ids"))
    at = pc.index_in(flat, value_set=corpus_ids)
    if at.null_count:
        i = int(np.flatnonzero(np.asarray(at.is_null()))[0])
        q = int(np.searchsorted(offsets, i, side="right") - 1)
        raise TriadError(
            f"{config} query {rows[q]['query_id']}: candidate id {flat[i].as_py()!r} is not in corpus {corpus}"
        )
    width = int(np.diff(offsets).max(initial=0))
    return padded(offsets, to_numpy(at).astype(np.int32), width, -1, np.int32)


def release_arrow_memory() -> None:
    """Hand the memory Arrow's pool keeps after freeing a config's tables back to the system (mimalloc otherwise
    holds freed buffers for reuse); called once per config."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def plan_triad(data: str, configs: Sequence[str], *, variant: str, limit: int | None, sees_images: bool = True) -> Plan:
    from metrics.columnar import POOL_COLUMNS, gold_from_table
    from triad_dataset.contract.names import CANDIDATE_CORPUS, CONSTRAINTS_CONFIGS, STATE_CONFIGS

    plan = Plan("triad", [], ItemTable(data), sees_images=sees_images)
    for config in configs:
        table = _read(data, config)
        table = table.slice(0, limit) if limit is not None else table
        rows = table.drop_columns([c for c in POOL_COLUMNS if c in table.column_names]).to_pylist()
        query_items = _queries(plan, config, rows, variant, "triad")
        corpus = CANDIDATE_CORPUS[config]
        corpus_rows = _corpus(plan, corpus)
        pool_rows = _pool_rows(config, table, corpus, corpus_rows.ids, rows)
        corpus_items = _referenced(plan, corpus_rows, pool_rows.ravel())
        pool_items = np.where(pool_rows >= 0, corpus_items[np.maximum(pool_rows, 0)], -1).astype(np.int32)
        try:
            # rankings are positions: ids are kept only where the paper's C.4 shared-pool rescoring matches two pools
            gold = gold_from_table(config, table, ids=config in CONSTRAINTS_CONFIGS + STATE_CONFIGS)
        except ValueError as exc:
            raise TriadError(f"{data}: {exc}") from exc
        plan.configs.append(
            ConfigPlan(config, gold.rows, query_items, pool_items, pool_rows, corpus_rows.ids, gold=gold)
        )
        del table
        release_arrow_memory()
    return plan


def load_rewrites(path: str | None) -> dict[str, str]:
    """Rewritten ARK queries from JSON Lines: one {"query_id": str, "query_text": str} object per line."""
    if not path:
        return {}
    out: dict[str, str] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise TriadError(f"{path}: cannot read the rewrites file ({exc})") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TriadError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
        if (
            not isinstance(obj, dict)
            or not isinstance(obj.get("query_id"), str)
            or not isinstance(obj.get("query_text"), str)
        ):
            raise TriadError(f'{path}:{number}: expected {{"query_id": str, "query_text": str}}')
        if obj["query_id"] in out:
            raise TriadError(f"{path}:{number}: query_id {obj['query_id']!r} rewritten twice")
        out[obj["query_id"]] = obj["query_text"]
    return out


def plan_ark(
    data: str,
    subtypes: Sequence[str],
    *,
    variant: str,
    limit: int | None,
    rewrites: Mapping[str, str] | None = None,
    sees_images: bool = True,
    captions: Captions | None = None,
) -> Plan:
    from ark_dataset.names import GALLERY_SUFFIX

    rewrites = dict(rewrites or {})
    plan = Plan("ark", [], ItemTable(data), sees_images=sees_images, captions=captions)
    used: set[str] = set()
    for subtype in subtypes:
        rows = _read(data, subtype).to_pylist()[:limit]
        gallery = subtype + GALLERY_SUFFIX
        gallery_rows = _corpus(plan, gallery)
        ids = gallery_rows.ids
        gallery_items = _referenced(plan, gallery_rows, np.arange(len(ids)))
        position = {cid: i for i, cid in enumerate(ids.to_pylist())}
        positives = []
        for row in rows:
            if row.get("positive_id") not in position:
                raise TriadError(
                    f"{subtype} query {row['query_id']}: positive {row.get('positive_id')!r} is not in {gallery}"
                )
            positives.append(position[row["positive_id"]])
            used.update([row["query_id"]] if row["query_id"] in rewrites else [])
        query_items = _queries(plan, subtype, rows, variant, "ark", rewrites)
        plan.configs.append(
            ConfigPlan(
                subtype,
                rows,
                query_items,
                gallery_items,
                np.arange(len(gallery_items), dtype=np.int32),
                ids,
                positives=np.asarray(positives, dtype=np.int64),
            )
        )
    unused = sorted(set(rewrites) - used)
    if unused and limit is None:
        raise TriadError(
            f"rewrites name {len(unused)} query ids that are not in the selected subtypes (first: {unused[0]!r})"
        )
    return plan
