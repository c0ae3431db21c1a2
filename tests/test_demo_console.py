"""`make demo`'s quiet console (scripts/demo_console.py): a stage's whole output — Python prints, tqdm bars,
`logging` with colours, a child process writing to the inherited descriptors — lands in its log as plain lines,
and the console shows only the stage's own progress bar (redrawn on a terminal, once in its final state in a log).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("demo_console", ROOT / "scripts" / "demo_console.py")
demo_console = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(demo_console)


def test_carriage_return_updates_collapse_to_the_last_state() -> None:
    lines: list[str] = []
    seen: list[str] = []
    cleaner = demo_console.LogCleaner(lines.append, seen.append)
    cleaner.feed(b"encode:   0%|  | 0/4\rencode:  50%|# | 2/4\r")
    cleaner.feed(b"encode: 100%|##| 4/4\n\x1b[32m[RapidOCR]\x1b[0m empty\r\n")
    cleaner.feed(b"inner:  10%\r" + b" " * 20 + b"\r\n")  # a leave=False bar erased: its last state is kept
    cleaner.feed(b"\x1b[Aunterminated")
    cleaner.close()
    assert lines == ["encode: 100%|##| 4/4", "[RapidOCR] empty", "inner:  10%", "unterminated"]
    assert seen[:3] == ["encode:   0%|  | 0/4", "encode:  50%|# | 2/4", "encode: 100%|##| 4/4"]


def test_a_split_multibyte_character_and_a_split_carriage_return_survive() -> None:
    lines: list[str] = []
    cleaner = demo_console.LogCleaner(lines.append)
    data = "bar ██ done\r\nnext\n".encode()
    for i in range(len(data)):  # one byte at a time, as a pipe may deliver them
        cleaner.feed(data[i : i + 1])
    cleaner.close()
    assert lines == ["bar ██ done", "next"]


STAGE = """
import logging, os, subprocess, sys
from pathlib import Path
sys.path.insert(0, {scripts!r})
from demo_console import StageConsole
from tqdm import tqdm

logger = logging.getLogger("chatty")
logger.addHandler(logging.StreamHandler(sys.stderr))  # as RapidOCR's logger does: the stderr of the moment
console = StageConsole({fd})
assert console.tty is False
console.say("[1/1] stage")
with console.stage(Path({log!r}), bar="encode"):
    print("a table row")
    logger.warning("\\x1b[33mthe text detection result is empty\\x1b[0m")
    for _ in tqdm(range(3), desc="encode", unit="item", mininterval=0):
        pass
    for _ in tqdm(range(2), desc="inner", leave=False, mininterval=0):
        pass
    subprocess.run([sys.executable, "-c", "import os; os.write(2, b'from a C library' + bytes([10]))"], check=True)
console.say("      done")
"""


@pytest.mark.parametrize("console_fd", [1, 2])
def test_a_stage_logs_everything_and_shows_one_bar(tmp_path: Path, console_fd: int) -> None:
    """In a process of its own, as `make demo > demo.log` runs it (the console is a file, not a terminal)."""
    log_path = tmp_path / "logs" / "1-stage.log"
    code = STAGE.format(scripts=str(ROOT / "scripts"), fd=console_fd, log=str(log_path))
    with open(tmp_path / "console.txt", "wb") as sink:
        subprocess.run(
            [sys.executable, "-c", code], check=True, timeout=120, **{"stdout" if console_fd == 1 else "stderr": sink}
        )
    console, log = (tmp_path / "console.txt").read_text(encoding="utf-8"), log_path.read_text(encoding="utf-8")
    bar = [line for line in console.splitlines() if line.startswith("encode:")]
    assert console.splitlines()[0] == "[1/1] stage" and console.splitlines()[-1] == "      done"
    assert len(bar) == 1 and bar[0].startswith("encode: 100%") and "3/3" in bar[0]
    assert "\r" not in console and "\x1b" not in console and "inner" not in console and "table row" not in console
    assert "\r" not in log and "\x1b" not in log
    assert {"a table row", "the text detection result is empty", "from a C library"} <= set(log.splitlines())
    assert [line for line in log.splitlines() if line.startswith("encode:")] == bar  # the final state only


def test_minutes() -> None:
    assert [demo_console.minutes(s) for s in (5.04, 59.96, 60.4, 299.5)] == [
        "5.0 s",
        "60.0 s",
        "1 min 0 s",
        "5 min 0 s",
    ]


def test_on_a_terminal_the_stage_bar_is_redrawn_in_place(tmp_path: Path) -> None:
    import pty

    log_path = tmp_path / "logs" / "1-stage.log"
    code = STAGE.format(scripts=str(ROOT / "scripts"), fd=1, log=str(log_path)).replace(
        "assert console.tty is False", "assert console.tty is True"
    )
    master, slave = pty.openpty()
    child = subprocess.Popen([sys.executable, "-c", code], stdout=slave, stderr=subprocess.DEVNULL)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert child.wait(timeout=120) == 0
    text = seen.decode()
    assert text.count("\rencode:") >= 2 and "inner" not in text and "table row" not in text  # redrawn, alone
    assert text.replace("\r\n", "\n").rstrip().endswith("      done")
