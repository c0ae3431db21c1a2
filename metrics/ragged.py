"""Ragged Arrow list columns as numpy arrays: the helpers the columnar gold and the run's planner share.

>>> import numpy as np, pyarrow as pa
>>> offsets, flat = list_parts(pa.array([[1, 2], None, [3]]))
>>> offsets.tolist(), flat.to_pylist()
([0, 2, 2, 3], [1, 2, 3])
>>> padded(offsets, np.asarray(flat), 2, -1, np.int64).tolist()
[[1, 2], [-1, -1], [3, -1]]
"""

from __future__ import annotations

from typing import Any

import numpy as np


def padded(offsets: np.ndarray, values: np.ndarray, width: int, fill: Any, dtype: Any) -> np.ndarray:
    """A ragged list column (Arrow offsets + flat values) as a padded (n, width) matrix."""
    n = offsets.size - 1
    out = np.full((n, width), fill, dtype=dtype)
    lengths = np.diff(offsets)
    cols = np.arange(values.size) - np.repeat(offsets[:-1], lengths)
    out[np.repeat(np.arange(n), lengths), cols] = values
    return out


def list_parts(column: Any) -> tuple[np.ndarray, Any]:
    """(offsets relative to the first list, flat values) of an Arrow list column (chunked or not); nulls = []."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    column = pc.fill_null(column, pa.scalar([], type=column.type)) if column.null_count else column
    offsets = np.asarray(column.offsets, dtype=np.int64)
    return offsets - offsets[0], column.flatten()
