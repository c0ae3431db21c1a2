"""A quiet console for `make demo`: each stage's whole output goes to its own log file, the console (standard
output) shows one progress bar per stage.

    console = StageConsole()
    with console.stage("minilm on TRIAD", Path("logs/3-run-triad.log"), bar="encode"):
        run(...)            # prints, tqdm bars, logging, warnings, C libraries: all go to the log

While a stage runs, file descriptors 1 and 2 point into a pipe, so everything written there — by Python, by
`logging` (RapidOCR's coloured lines), by `warnings` or by a C library (onnxruntime) — is read back by one thread.
It writes the log as plain lines: colour and cursor codes removed, a carriage-return progress bar kept as its last
state only (`LogCleaner`). Of the stage's progress bars, the one whose description is ``bar`` is shown on the
console: redrawn in place when it is a terminal. Else (`make demo > demo.log`) it is printed as whole lines: its
state every `LINE_EVERY` s while the stage runs ("still running" when it has no bar), and its final state at the
end. The log is written line by line as the stage goes, with a bar's state at most every `LINE_EVERY` s.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from triad_dataset.contract.progress import LINE_EVERY, MODE_ENV

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]")  # colours, cursor moves, charset switches


class LogCleaner:
    """Bytes as a terminal would leave them, as plain text lines: carriage-return updates collapse to the last
    non-blank state of the line, escape codes are dropped. ``on_segment(text)`` sees every state of every line (the
    live bar relay). Feed bytes with `feed`; `close` flushes an unterminated last line."""

    def __init__(
        self,
        write_line: Callable[[str], None],
        on_segment: Callable[[str], None] | None = None,
        every: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._write_line = write_line
        self._on_segment = on_segment or (lambda text: None)
        self._pending = b""  # bytes after the last \r or \n
        self._last = ""  # last non-blank state of the current line
        self._every, self._clock = every, clock  # a bar's state is written every `every` s (None: final state only)
        self._written = clock()

    def feed(self, data: bytes) -> None:
        data = self._pending + data
        start = 0
        for match in re.finditer(rb"[\r\n]", data):
            self._segment(data[start : match.start()], newline=match.group() == b"\n")
            start = match.end()
        self._pending = data[start:]

    def close(self) -> None:
        if self._pending:
            self._segment(self._pending, newline=True)
            self._pending = b""
        elif self._last:
            self._segment(b"", newline=True)

    def _segment(self, raw: bytes, *, newline: bool) -> None:
        text = ANSI.sub("", raw.decode("utf-8", errors="replace")).rstrip()
        if text.strip():
            self._last = text
            self._on_segment(text)
        if newline:
            self._line(self._last)
            self._last = ""
        elif text.strip() and self._every is not None and self._clock() - self._written >= self._every:
            self._line(text)  # a bar redrawn in place: its state now, as a line of its own

    def _line(self, text: str) -> None:
        self._written = self._clock()
        self._write_line(text)


class StageConsole:
    """One progress bar per stage on the console (standard output as the process started: fd 1 or 2), everything
    else into logs."""

    def __init__(self, fd: int = 1, interval: float = LINE_EVERY, clock: Callable[[], float] = time.monotonic) -> None:
        if fd not in (1, 2):
            raise ValueError(f"the console is fd 1 or 2, not {fd}")
        self.fd = fd
        self.tty = os.isatty(fd)
        self.interval, self.clock = interval, clock

    def say(self, text: str = "") -> None:
        """A line on the console (called outside a stage; inside one, fd 1 is the stage's log)."""
        sys.stdout.flush()
        sys.stderr.flush()
        os.write(self.fd, (text + "\n").encode())

    @contextmanager
    def stage(self, log_path: Path, bar: str | None = None) -> Iterator[None]:
        """Run the body with fds 1 and 2 captured into ``log_path``; show the bar named ``bar`` (its description,
        as tqdm prints it before the colon)."""
        log_path.parent.mkdir(parents=True, exist_ok=True)
        sys.stdout.flush()
        sys.stderr.flush()
        saved = {fd: os.dup(fd) for fd in (1, 2)}
        live = _Live(saved[self.fd], self.tty, bar, self.interval, self.clock)
        read_end, write_end = os.pipe()
        mode = os.environ.get(MODE_ENV)
        os.environ[MODE_ENV] = "bar" if self.tty else "lines"  # the stage's own bars: as the console shows them
        with open(log_path, "w", encoding="utf-8", buffering=1) as log:  # line by line, as the stage goes
            cleaner = LogCleaner(lambda line: log.write(line + "\n"), live.relay, self.interval, self.clock)

            def pump() -> None:
                while True:
                    if select.select([read_end], [], [], self.interval / 4)[0]:
                        chunk = os.read(read_end, 65536)
                        if not chunk:
                            break
                        cleaner.feed(chunk)
                    live.beat()
                cleaner.close()

            reader = threading.Thread(target=pump, name="demo-log", daemon=True)
            reader.start()
            for fd in (1, 2):
                os.dup2(write_end, fd)
            os.close(write_end)
            try:
                yield
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                for fd, copy in saved.items():
                    os.dup2(copy, fd)  # the pipe's last write end closes: the reader sees the end
                    os.close(copy)
                reader.join(timeout=30)
                os.close(read_end)
                _restore(MODE_ENV, mode)
        live.end(self.fd)


class _Live:
    """The stage's bar on the console: redrawn on a terminal; else a line every `interval` s while it runs."""

    def __init__(self, fd: int, tty: bool, bar: str | None, interval: float, clock: Callable[[], float]) -> None:
        self.fd, self.tty, self.bar, self.interval, self.clock = fd, tty, bar, interval, clock
        self.width = _width(fd) if tty else 0
        self.start = self.said = clock()
        self.state = ""  # the bar's last state
        self.fresh = False  # a state not yet on the console

    def relay(self, text: str) -> None:
        """Take a state of a line the stage wrote: the stage's bar is kept, and redrawn on a terminal."""
        if self.bar is None or not text.startswith(self.bar + ":"):
            return
        self.state, self.fresh = text, True
        if self.tty:
            os.write(self.fd, ("\r" + text[: self.width].ljust(self.width)).encode())

    def beat(self) -> None:
        """Off a terminal, print the bar's new state, or that the stage still runs, when `interval` s went by quietly."""
        now = self.clock()
        if self.tty or now - self.said < self.interval:
            return
        line = self.state if self.fresh else f"      still running, {minutes(now - self.start)} so far"
        os.write(self.fd, (line + "\n").encode())
        self.said, self.fresh = now, False

    def end(self, console: int) -> None:
        """Show the bar's final state once the stage is done (off a terminal, unless its last line showed it)."""
        if self.state and (self.tty or self.fresh):
            text = ("\r" + self.state[: self.width].ljust(self.width)) if self.tty else self.state
            os.write(console, text.encode() + b"\n")


def _width(fd: int) -> int:
    try:
        return os.get_terminal_size(fd).columns - 1
    except OSError:
        return shutil.get_terminal_size().columns - 1


def _restore(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def minutes(seconds: float) -> str:
    """`1 min 58 s` / `42.0 s`.

    >>> minutes(118.4), minutes(42.04)
    ('1 min 58 s', '42.0 s')
    """
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    return f"{whole // 60} min {whole % 60} s"


class Timer:
    def __init__(self) -> None:
        self.start = time.perf_counter()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start
