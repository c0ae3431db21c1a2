"""The one exception type for user errors: the CLI prints its message and exits non-zero, without a traceback."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from pathlib import Path


class TriadError(Exception):
    """A user-facing error (bad input file, unknown name, invalid folder...). The message names what is wrong."""


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """` (did you mean 'x'?)` for the closest of `choices` to a mistyped `name` (difflib), or "" when none is close.

    >>> did_you_mean("minlm", ["minilm", "bge-m3"]), did_you_mean("zzz", ["minilm"])
    (" (did you mean 'minilm'?)", '')
    """
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _file_above(path: Path) -> Path | None:
    """The nearest existing path above `path` when it is not a folder: nothing can be written below it."""
    for parent in path.parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def output_folder(path: str | os.PathLike[str], option: str = "--out") -> Path:
    """`path` as a folder to write into; TriadError when it, or a path above it, is an existing file.

    >>> output_folder("runs/new").name
    'new'
    """
    out = Path(path)
    blocker = out if out.exists() and not out.is_dir() else _file_above(out)
    if blocker is not None:
        raise TriadError(f"{option} {path}: {blocker} is a file, not a folder; give a folder path to write into")
    return out


def output_file(path: str | os.PathLike[str], option: str = "--out") -> Path:
    """`path` as a file to write; TriadError when it is a folder or a path above it is an existing file."""
    out = Path(path)
    if out.is_dir():
        raise TriadError(f"{option} {path}: a folder; give the path of the file to write")
    blocker = _file_above(out)
    if blocker is not None:
        raise TriadError(f"{option} {path}: {blocker} is a file, not a folder; give a path inside a folder")
    return out
