"""How the Space refuses a submission: the error it raises and how a message repeats submitted values.

Every check of the submission path (`spaces_app.uploads`, `spaces_app.ranking_files`, `spaces_app.validation`)
raises ``SubmissionError`` with a message naming the file / config / query and what is wrong; the submission flow
turns it into the status line and stores nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from triad_dataset.contract.errors import TriadError

MAX_EXAMPLES = 3  # how many offending ids a message lists
MAX_ECHO = 60  # characters of a submitted id or name a message repeats


class SubmissionError(TriadError):
    """A rejected upload; the message is shown to the submitter as is."""


def short(value: Any, limit: int = MAX_ECHO) -> str:
    """A submitted value as a message repeats it: its repr, cut to ``limit`` characters (ids can be megabytes).

    >>> short("q1"), short("x" * 1000, limit=12)
    ("'q1'", "'xxx…' (1000 characters)")
    """
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f" ({len(value)} characters)" if isinstance(value, str) else ""
    return text[: limit - 8] + "…'" + size


def clip(text: Any, limit: int = MAX_ECHO) -> str:
    """A submitted name as a message repeats it: as is, cut to ``limit`` characters."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def examples(items: Iterable[str]) -> str:
    """Up to `MAX_EXAMPLES` of ``items`` as a message lists them (sorted, each cut by `short`), and how many more."""
    items = sorted(items)
    shown = ", ".join(short(x) for x in items[:MAX_EXAMPLES])
    return shown + (f" and {len(items) - MAX_EXAMPLES} more" if len(items) > MAX_EXAMPLES else "")
