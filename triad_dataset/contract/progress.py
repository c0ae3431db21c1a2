"""Progress bars that stay honest when the output is not a terminal: whole lines, at least every `LINE_EVERY` s.

    bar = progress(total=len(items), desc="encode", unit="item")

On a terminal this is a plain tqdm bar, redrawn in place. Written to a file or a pipe (`triad run > log 2>&1`), the
bar becomes whole lines: one per refresh, at most one per interval while it advances, and one every interval while
it waits on a slow step, so a log shows the work going on. `TRIAD_PROGRESS=bar` or `lines` chooses either way.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterable
from typing import IO, Any, Final

LINE_EVERY: Final = 10.0  # seconds between progress lines when the output is not a terminal
MODE_ENV: Final = "TRIAD_PROGRESS"  # "bar" or "lines": overrides what the output stream suggests


class LineWriter:
    """A file for tqdm that turns each in-place redraw (a carriage return, then the bar) into one whole line.

    Args:
        stream: where the lines go (default: the standard error of the moment).
    """

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream
        self.last = ""

    def write(self, text: str) -> int:
        """Write the bar's new state as one line, unless it repeats the line before."""
        line = text.replace("\r", "").rstrip()
        if line and line != self.last:
            out = self.stream or sys.stderr
            out.write(line + "\n")
            out.flush()
            self.last = line
        return len(text)

    def flush(self) -> None:
        """Flush the stream (each line is flushed as it is written)."""
        (self.stream or sys.stderr).flush()


def lines_wanted(stream: Any = None) -> bool:
    """Whether progress goes out as whole lines: `TRIAD_PROGRESS`, else whether `stream` is not a terminal.

    A notebook's standard error is no terminal, but draws tqdm's widget: no lines there.
    """
    mode = os.environ.get(MODE_ENV, "").strip().lower()
    if mode in ("bar", "lines"):
        return mode == "lines"
    if stream is None and "ipykernel" in sys.modules:  # a notebook: tqdm.auto draws its widget
        return False
    stream = stream or sys.stderr
    try:
        return not stream.isatty()
    except (AttributeError, ValueError):
        return True


def progress(iterable: Iterable[Any] | None = None, *, interval: float = LINE_EVERY, **options: Any) -> Any:
    """Return a tqdm bar over `iterable` that writes whole lines, at least every `interval` s, off a terminal.

    Args:
        iterable: what the bar iterates over, or None for a bar updated by hand.
        interval: the seconds between progress lines when the output is not a terminal.
        options: tqdm's own (`total`, `desc`, `unit`, `disable`, `leave` ...).
    """
    if options.get("disable") or not lines_wanted(options.get("file")):
        from tqdm.auto import tqdm as drawn

        return drawn(iterable, **options)
    from tqdm.std import tqdm  # plain text, whatever the environment

    options = {**options, "file": LineWriter(options.get("file")), "mininterval": interval, "ncols": 100}
    options.pop("dynamic_ncols", None)
    bar = tqdm(iterable, **options)
    _Heartbeat(bar, interval).start()
    return bar


class _Heartbeat(threading.Thread):
    """Redraws a bar that has not been drawn for `interval` s (a slow step between updates), until it closes."""

    def __init__(self, bar: Any, interval: float) -> None:
        super().__init__(name="progress-lines", daemon=True)
        self.bar, self.interval = bar, interval

    def run(self) -> None:
        bar, stop = self.bar, threading.Event()
        while not stop.wait(self.interval / 4):
            if getattr(bar, "disable", True):  # tqdm disables a bar when it closes
                return
            if bar._time() - bar.last_print_t >= self.interval:
                bar.refresh()
