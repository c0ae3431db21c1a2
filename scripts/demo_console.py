"""A quiet console for `make demo`: each stage's whole output goes to its own log file, the console (standard
output) shows one progress bar per stage.

    console = StageConsole()
    with console.stage("minilm on TRIAD", Path("logs/3-run-triad.log"), bar="encode"):
        run(...)            # prints, tqdm bars, logging, warnings, C libraries: all go to the log

While a stage runs, file descriptors 1 and 2 point into a pipe, so everything written there — by Python, by
`logging` (RapidOCR's coloured lines), by `warnings` or by a C library (onnxruntime) — is read back by one thread.
It writes the log as plain lines: colour and cursor codes removed, a carriage-return progress bar kept as its last
state only (`LogCleaner`). Of the stage's progress bars, the one whose description is ``bar`` is shown on the
console: redrawn in place when it is a terminal, else printed once, in its final state, when the stage ends (a log
of `make demo > demo.log` holds no carriage-return updates).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]")  # colours, cursor moves, charset switches


class LogCleaner:
    """Bytes as a terminal would leave them, as plain text lines: carriage-return updates collapse to the last
    non-blank state of the line, escape codes are dropped. ``on_segment(text)`` sees every state of every line (the
    live bar relay). Feed bytes with `feed`; `close` flushes an unterminated last line."""

    def __init__(self, write_line: Callable[[str], None], on_segment: Callable[[str], None] | None = None) -> None:
        self._write_line = write_line
        self._on_segment = on_segment or (lambda text: None)
        self._pending = b""  # bytes after the last \r or \n
        self._last = ""  # last non-blank state of the current line

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
            self._write_line(self._last)
            self._last = ""


class StageConsole:
    """One progress bar per stage on the console (standard output as the process started: fd 1 or 2), everything
    else into logs."""

    def __init__(self, fd: int = 1) -> None:
        if fd not in (1, 2):
            raise ValueError(f"the console is fd 1 or 2, not {fd}")
        self.fd = fd
        self.tty = os.isatty(fd)

    def say(self, text: str = "") -> None:
        """A line on the console (called outside a stage; inside one, fd 1 is the stage's log)."""
        sys.stdout.flush()
        sys.stderr.flush()
        os.write(self.fd, (text + "\n").encode())

    def _width(self, fd: int) -> int:
        try:
            return os.get_terminal_size(fd).columns - 1
        except OSError:
            return shutil.get_terminal_size().columns - 1

    @contextmanager
    def stage(self, log_path: Path, bar: str | None = None) -> Iterator[None]:
        """Run the body with fds 1 and 2 captured into ``log_path``; show the bar named ``bar`` (its description,
        as tqdm prints it before the colon)."""
        log_path.parent.mkdir(parents=True, exist_ok=True)
        sys.stdout.flush()
        sys.stderr.flush()
        saved = {fd: os.dup(fd) for fd in (1, 2)}
        terminal = saved[self.fd]
        width = self._width(terminal) if self.tty else 0
        shown: list[str] = []

        def relay(text: str) -> None:
            if bar is None or not text.startswith(bar + ":"):
                return
            shown[:] = [text]
            if self.tty:
                os.write(terminal, ("\r" + text[:width].ljust(width)).encode())

        read_end, write_end = os.pipe()
        with open(log_path, "w", encoding="utf-8") as log:
            cleaner = LogCleaner(lambda line: log.write(line + "\n"), relay)

            def pump() -> None:
                while chunk := os.read(read_end, 65536):
                    cleaner.feed(chunk)
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
        if shown:
            os.write(self.fd, (("\r" + shown[0][:width].ljust(width)) if self.tty else shown[0]).encode() + b"\n")


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
