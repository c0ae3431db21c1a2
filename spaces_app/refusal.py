"""How the Space refuses a submission: the errors it raises and how a message repeats submitted values.

Every refusal of the submission path raises ``SubmissionError`` (or a subclass) with a message naming the file /
config / query and what is wrong: the checks of `spaces_app.uploads`, `spaces_app.ranking_files` and
`spaces_app.validation`, the rate limit, an owned name and a duplicate (`Duplicate`, which names the stored row).
The submission flow turns each into the status line (`status_line`) and stores nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from triad_dataset.contract.errors import TriadError

MAX_EXAMPLES = 3  # how many offending ids a message lists
MAX_ECHO = 60  # characters of a submitted id or name a message repeats


MAX_MESSAGE = 4000  # characters of a status message (each echoed value is cut already; this is the backstop)


class SubmissionError(TriadError):
    """A rejected upload; the message is shown to the submitter as is."""


class Duplicate(SubmissionError):
    """Rankings the board holds already (``existing_id``: the stored submission they repeat)."""

    def __init__(self, message: str, existing_id: int) -> None:
        super().__init__(message)
        self.existing_id = existing_id


def status_line(reason: Any) -> str:
    """The status line of a refused submission: the reason, cut to `MAX_MESSAGE` characters.

    >>> status_line("no gold")
    'Rejected: no gold. Nothing was stored.'
    """
    text = str(reason)
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE] + "…"
    return f"Rejected: {text}. Nothing was stored."


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
