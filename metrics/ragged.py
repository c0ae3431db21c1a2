"""Ragged Arrow list columns as numpy arrays: the helpers the columnar gold and the run's planner share.

>>> import numpy as np, pyarrow as pa
>>> offsets, flat = list_parts(pa.array([[1, 2], None, [3]]))
>>> offsets.tolist(), flat.to_pylist()
([0, 2, 2, 3], [1, 2, 3])
>>> padded(offsets, np.asarray(flat), 2, -1, np.int64).tolist()
[[1, 2], [-1, -1], [3, -1]]
"""

from __future__ import annotations

from collections.abc import Sequence
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
    offsets = to_numpy(column.offsets).astype(np.int64)
    return offsets - offsets[0], column.flatten()


def to_numpy(array: Any) -> np.ndarray:
    """A numeric or boolean Arrow array (chunked or not) as a numpy array, read from its buffers when it has no nulls.

    pyarrow's own conversions (`to_numpy`, `np.asarray`) import pandas on their first use, which costs more than a
    cached re-run's whole plan; reading the data buffer does not. With nulls: pyarrow's conversion.

    >>> import pyarrow as pa
    >>> to_numpy(pa.array([True, False, True]).slice(1)).tolist(), to_numpy(pa.chunked_array([[1], [2, 3]])).tolist()
    ([False, True], [1, 2, 3])
    """
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        parts = [to_numpy(chunk) for chunk in array.chunks]
        return np.concatenate(parts) if parts else np.empty(0, dtype=_numpy_type(array.type))
    if array.null_count:
        return np.asarray(array)
    data = array.buffers()[1]
    if pa.types.is_boolean(array.type):  # bit-packed, least significant bit first
        if data is None:
            return np.empty(0, dtype=bool)
        bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")
        return bits[array.offset : array.offset + len(array)].astype(bool)
    dtype = _numpy_type(array.type)
    if data is None:
        return np.empty(0, dtype=dtype)
    return np.frombuffer(data, dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)


def from_numpy(values: np.ndarray) -> Any:
    """A 1-D numeric numpy array as an Arrow array over the same memory (`pyarrow.array` imports pandas first).

    >>> from_numpy(np.array([3, 1], dtype=np.int32)).to_pylist()
    [3, 1]
    """
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)])


def strings(values: Sequence[str]) -> Any:
    """Python strings as an Arrow string array, built from its buffers (`pyarrow.array` imports pandas first).

    >>> strings(["ab", "", "é"]).to_pylist()
    ['ab', '', 'é']
    """
    import pyarrow as pa

    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    data = pa.py_buffer(b"".join(encoded))
    return pa.Array.from_buffers(pa.large_string(), len(encoded), [None, pa.py_buffer(offsets), data]).cast(pa.string())


def _numpy_type(arrow_type: Any) -> np.dtype:
    """The numpy dtype of a fixed-width numeric Arrow type; ValueError for any other type."""
    import pyarrow as pa

    if not (pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type)):
        raise ValueError(f"not a numeric Arrow type: {arrow_type}")
    return np.dtype(arrow_type.to_pandas_dtype())
