"""Writes files through a temporary file in the same folder, so a reader never sees half a file.

>>> import tempfile
>>> target = Path(tempfile.mkdtemp()) / "out.txt"
>>> atomic_write(target, b"done")
>>> target.read_bytes(), sorted(p.name for p in target.parent.iterdir())
(b'done', ['out.txt'])
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`, moved onto `path` when the block ends and removed if the block fails.

    The temporary name starts with a dot and ends with `.tmp`. Nothing is created until the block writes it.
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write(path: str | Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file in the same folder."""
    with replacing(path) as tmp, open(tmp, "xb") as handle:
        handle.write(data)
