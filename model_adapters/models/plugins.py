"""Reads the rows that installed packages add through the `triad.models` entry-point group.

An entry point names a row, a list of rows, or a function returning either, e.g. in setup.cfg
`[options.entry_points] triad.models = my-models = my_pkg.triad:ROWS`. A row is one of `ROW_TYPES`: a model entry,
a model family, a captioner or rewriter, or a captioner family. Each registry takes the rows of its own type.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

from triad_dataset.contract.errors import TriadError

GROUP: Final = "triad.models"
# This project's distribution: entry points of it and of its companions named `triad-benchmark-<part>`, such as the
# test suite's doubles (CONTRIBUTING.md), add registry entries, identified as the built-in ones are.
OWN: Final = "triad-benchmark"
# The row types, named by module and class so that this low layer imports none of them.
ROW_TYPES: Final = (
    "model_adapters.models.registry.ModelEntry",
    "model_adapters.models.family_table.Family",
    "model_adapters.captioners.registry.GeneratorEntry",
    "model_adapters.captioners.registry.GeneratorFamily",
)
_reading: list[bool] = [False]


@dataclass(frozen=True)
class Row:
    """One row an entry point delivered.

    Args:
        value: the row itself, an instance of one of `ROW_TYPES`.
        where: the entry point, as messages name it.
        own: whether the entry point is declared by one of this project's distributions (`OWN`).
    """

    value: Any
    where: str
    own: bool


_read_rows: dict[tuple[str, ...], list[Row]] = {}  # the rows read for one sys.path


def is_row(value: Any) -> bool:
    """Whether `value` is an instance of one of `ROW_TYPES` or of a subclass."""
    return any(f"{cls.__module__}.{cls.__qualname__}" in ROW_TYPES for cls in type(value).__mro__)


def is_own(distribution: str) -> bool:
    """Whether the distribution named `distribution` is this project's or one of its companions (`OWN`).

    >>> [is_own(name) for name in ("triad-benchmark", "triad_benchmark_tests", "triad-benchmarks", "acme")]
    [True, True, False, False]
    """
    name = re.sub(r"[-_.]+", "-", distribution).lower()
    return name == OWN or name.startswith(OWN + "-")


def reading() -> bool:
    """Whether the entry points are being read now: a row built meanwhile is checked once they are all read."""
    return _reading[0]


@contextmanager
def _read() -> Iterator[None]:
    _reading[0] = True
    try:
        yield
    finally:
        _reading[0] = False


def rows() -> list[Row]:
    """Return every row of every entry point of the group, in entry-point order, and none while they are being read.

    The entry points are read once for each `sys.path`: a path added later, as a test's plug-in folder, reads them
    again.
    """
    if reading():
        return []
    key = tuple(sys.path)
    if key not in _read_rows:
        _read_rows.clear()
        _read_rows[key] = _read_rows_now()
    return list(_read_rows[key])


def _read_rows_now() -> list[Row]:
    from importlib.metadata import entry_points

    out: list[Row] = []
    with _read():
        for ep in entry_points(group=GROUP):
            where = f"entry point {ep.name} = {ep.value} ({GROUP})"
            try:
                obj = ep.load()
                if callable(obj) and not is_row(obj):
                    obj = obj()
            except Exception as exc:  # a broken plug-in must not hide behind a traceback
                raise TriadError(f"{where}: cannot be loaded ({type(exc).__name__}: {exc})") from exc
            for value in list(obj) if isinstance(obj, (list, tuple)) else [obj]:
                if not is_row(value):
                    names = ", ".join(name.rpartition(".")[2] for name in ROW_TYPES)
                    raise TriadError(f"{where}: gives {type(value).__name__}, expected one of {names}")
                out.append(Row(value, where, is_own(getattr(ep.dist, "name", "") or "")))
    return out
