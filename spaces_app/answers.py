"""Every error a client gets is one line that says what went wrong, never Gradio's bare ``{"error": null}``.

Gradio answers an exception raised outside a handler's own `gr.Error` — a file named outside its upload folder,
too few inputs for an endpoint — with no message at all, and repeats a refused dropdown value whole (a megabyte
id comes back as a megabyte). `install` replaces Gradio's error payload with `one_line`: a `gr.Error`'s own message
or a named cause, white space collapsed and cut to `MAX_ERROR` characters; nothing else of the exception (no
server path) is shown.
"""

from __future__ import annotations

import re
from typing import Any, Final

MAX_ERROR: Final = 300
_ENOUGH: Final = re.compile(r"didn't receive enough input values \(needed: (\d+), got: (\d+)\)")


def one_line(error: BaseException | None) -> str:
    """The message a client sees for ``error``.

    >>> one_line(ValueError("An event handler (f) didn't receive enough input values (needed: 4, got: 2)."))
    'wrong number of inputs: this endpoint takes 4, it got 2'
    >>> one_line(KeyError("/srv/secret/path"))
    'the server could not process this request (KeyError)'
    """
    from gradio.exceptions import Error, InvalidPathError

    if isinstance(error, Error):
        text = str(error.message)
    elif isinstance(error, InvalidPathError):
        text = "a file this server did not receive as an upload was named; upload it first (gradio_client.handle_file)"
    elif error is not None and (found := _ENOUGH.search(str(error))):
        text = f"wrong number of inputs: this endpoint takes {found.group(1)}, it got {found.group(2)}"
    else:
        text = f"the server could not process this request ({type(error).__name__})"
    text = " ".join(text.split())
    return text if len(text) <= MAX_ERROR else text[: MAX_ERROR - 1] + "…"


def error_payload(error: BaseException | None, show_error: bool) -> dict[str, Any]:
    """Gradio's error payload with `one_line` as its message (``show_error`` is ignored: every error is named)."""
    from gradio.exceptions import Error

    duration = error.duration if isinstance(error, Error) else 10
    return {"error": one_line(error), "duration": duration, "visible": True, "title": "Error"}


def install() -> None:
    """Make Gradio's queue and API routes answer errors with `error_payload` (idempotent)."""
    import gradio.queueing
    import gradio.utils

    gradio.utils.error_payload = error_payload
    gradio.queueing.error_payload = error_payload  # imported by name there
