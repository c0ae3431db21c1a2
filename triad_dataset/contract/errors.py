"""The one exception type for user errors: the CLI prints its message and exits non-zero, without a traceback."""

from __future__ import annotations


class TriadError(Exception):
    """A user-facing error (bad input file, unknown name, invalid folder...). The message names what is wrong."""
