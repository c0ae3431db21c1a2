"""The one exception type for user errors: the CLI prints its message and exits non-zero, without a traceback."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class TriadError(Exception):
    """A user-facing error (bad input file, unknown name, invalid folder...). The message names what is wrong."""


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """` (did you mean 'x'?)` for the closest of `choices` to a mistyped `name` (difflib), or "" when none is close.

    >>> did_you_mean("minlm", ["minilm", "bge-m3"]), did_you_mean("zzz", ["minilm"])
    (" (did you mean 'minilm'?)", '')
    """
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""
