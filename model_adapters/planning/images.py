"""Image bytes streamed from a dataset folder's parquet shards, never held for a whole config.

The plan keeps item references (config, row index); `ImageReader` reads the bytes of a few rows at a time from the
image column (`image` of a corpus, `query_image` of a query config) in small record batches of one row group, so a
process holds at most one read batch of images besides the batch it is encoding. `image_hashes` streams a whole
column once to hash every image (the plan's input keys) without keeping any bytes.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any, Final

import numpy as np

from metrics.ragged import to_numpy
from model_adapters.planning.inputs import image_bytes

READ_ROWS: Final = 16  # rows per record batch when streaming an image column
NO_IMAGE: Final = b""  # the hash of a row without an image


def shards(data: str, config: str) -> list[Path]:
    """The parquet files of one config (`triad_dataset.folder.io.shard_paths`, remembered per process: the card is
    parsed once, not once per read)."""
    root = Path(data).resolve()
    card = root / "README.md"
    stamp = (card.stat().st_mtime_ns, card.stat().st_size) if card.exists() else None  # the card names the shards
    return list(_shards(str(root), config, stamp))


@functools.lru_cache(maxsize=256)
def _shards(data: str, config: str, stamp: Any) -> tuple[Path, ...]:
    from triad_dataset.folder.io import shard_paths

    return tuple(shard_paths(data, config))


def image_hashes(data: str, config: str, column: str, *, limit: int | None = None) -> list[bytes]:
    """sha256 digest of every row's image in `column` (b"" where a row has none), streaming READ_ROWS at a time;
    the first `limit` rows only when given. The bytes are hashed straight from Arrow's buffers (no Python copy of
    any image), so memory does not depend on image sizes."""
    import pyarrow.parquet as pq

    out: list[bytes] = []
    for shard in shards(data, config):
        pf = pq.ParquetFile(shard)
        for group in range(pf.metadata.num_row_groups):  # one row group at a time: iter_batches over the whole
            # file holds every row group's column chunk at once (the whole image column)
            for batch in pf.iter_batches(batch_size=READ_ROWS, row_groups=[group], columns=[column]):
                out.extend(_batch_hashes(batch.column(0)))
                if limit is not None and len(out) >= limit:
                    return out[:limit]
    return out


def _batch_hashes(values: Any) -> list[bytes]:
    import pyarrow as pa

    if pa.types.is_struct(values.type):  # a datasets Image() value: {"bytes", "path"}
        present = to_numpy(values.is_valid())
        blobs, paths = values.field("bytes"), values.field("path")
    else:
        present, blobs, paths = np.ones(len(values), dtype=bool), values, None
    offsets_type = np.int64 if pa.types.is_large_binary(blobs.type) else np.int32
    buffers = blobs.buffers()
    offsets = (
        np.frombuffer(buffers[1], dtype=offsets_type)[blobs.offset : blobs.offset + len(blobs) + 1]
        if len(blobs)
        else np.zeros(1, dtype=offsets_type)
    )
    view = memoryview(buffers[2]) if buffers[2] is not None else memoryview(b"")
    has_bytes = to_numpy(blobs.is_valid())
    out = []
    for i in range(len(values)):
        if present[i] and has_bytes[i]:
            out.append(hashlib.sha256(view[offsets[i] : offsets[i + 1]]).digest())
        elif present[i] and paths is not None and paths[i].is_valid:  # an image stored as a file path
            data_bytes = image_bytes({"bytes": None, "path": paths[i].as_py()})
            out.append(NO_IMAGE if data_bytes is None else hashlib.sha256(data_bytes).digest())
        else:
            out.append(NO_IMAGE)
    return out


class ImageReader:
    """Bytes of single rows of one image column, read a record batch at a time (rows requested in increasing
    order stream through the file once). Counts the images it returned (`images_read`)."""

    def __init__(self, data: str, config: str, column: str) -> None:
        self.paths = shards(data, config)
        self.column = column
        self._files: list[Any] = []
        self._starts: list[np.ndarray] = []  # per shard: first row of each row group (global row numbers)
        offset = 0
        import pyarrow.parquet as pq

        for path in self.paths:
            pf = pq.ParquetFile(path)
            sizes = [pf.metadata.row_group(i).num_rows for i in range(pf.metadata.num_row_groups)]
            self._files.append(pf)
            self._starts.append(offset + np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64))
            offset += sum(sizes)
        self._stream: Any = None  # (shard, group, iterator, first row of the current batch, current batch values)
        self.images_read = 0

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError("ImageReader is not picklable: it holds open files")

    def _locate(self, row: int) -> tuple[int, int, int]:
        for shard, starts in enumerate(self._starts):
            end = starts[0] + self._files[shard].metadata.num_rows
            if starts[0] <= row < end:
                group = int(np.searchsorted(starts, row, side="right") - 1)
                return shard, group, int(starts[group])
        raise IndexError(f"row {row} is beyond the end of the image column {self.column}")

    def read(self, row: int) -> bytes | None:
        shard, group, group_start = self._locate(row)
        stream = self._stream
        if stream is None or stream[0] != shard or stream[1] != group or row < stream[3]:
            batches = self._files[shard].iter_batches(batch_size=READ_ROWS, row_groups=[group], columns=[self.column])
            stream = [shard, group, batches, group_start, []]
        while row >= stream[3] + len(stream[4]):
            stream[3] += len(stream[4])
            stream[4] = next(stream[2]).column(0)
        self._stream = stream
        value = stream[4][row - stream[3]].as_py()
        self.images_read += 1
        return image_bytes(value)
