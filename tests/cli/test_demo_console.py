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

ROOT = Path(__file__).resolve().parents[2]
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


SLOW_STAGE = """
import sys, time
from pathlib import Path
sys.path.insert(0, {scripts!r})
from demo_console import StageConsole
from triad_dataset.contract.progress import progress

log = Path({log!r})
console = StageConsole(1, interval=0.2)
with console.stage(log, bar="encode"):
    print("loading the model")
    time.sleep(1.0)  # no bar yet, no output: the console still hears from the stage
    sys.stderr.write("log so far: " + repr(log.read_text()) + "\\n")  # written as it goes, not at the end
    bar = progress(total=3, desc="encode", unit="item", interval=0.2)
    for _ in range(3):
        time.sleep(0.5)
        bar.update(1)
    bar.close()
console.say("      done")
"""


def test_off_a_terminal_a_slow_stage_prints_progress_lines_and_logs_as_it_goes(tmp_path: Path) -> None:
    """`make demo > log`: a line at least every interval (0.2 s here, 10 s in the demo), the log line by line."""
    log_path = tmp_path / "logs" / "1-stage.log"
    code = SLOW_STAGE.format(scripts=str(ROOT / "scripts"), log=str(log_path))
    with open(tmp_path / "console.txt", "wb") as sink:
        subprocess.run([sys.executable, "-c", code], check=True, timeout=120, stdout=sink)
    console = (tmp_path / "console.txt").read_text(encoding="utf-8").splitlines()
    log = log_path.read_text(encoding="utf-8").splitlines()
    assert sum(line.startswith("      still running, ") for line in console) >= 3  # while the model loads
    bar = [line for line in console if line.startswith("encode:")]
    assert len(bar) >= 3 and "3/3" in bar[-1] and any("1/3" in line or "2/3" in line for line in bar)
    assert console[-1] == "      done"
    assert "log so far: 'loading the model\\n'" in log  # the stage's first line was in its log a second later
    assert sum(line.startswith("encode:") for line in log) >= 3  # the bar's states, as lines


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


# --- the demo's own screens (scripts/demo.py) -----------------------------------------------------------------------
class Said(demo_console.StageConsole):
    """A console that keeps what the demo says (stages still log to their files)."""

    def __init__(self) -> None:
        super().__init__(1)
        self.lines: list[str] = []

    def say(self, text: str = "") -> None:
        self.lines.extend(text.splitlines() or [""])


def _demo_module():
    sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location("demo_script", ROOT / "scripts" / "demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_text_only_model_gets_no_ark_row_and_one_line_saying_why(tmp_path: Path) -> None:
    demo = _demo_module()
    text_only = demo.Demo(tmp_path, "minilm", False, Said())
    assert list(text_only.runs) == ["triad"] and text_only.n_stages == 5  # 2 builds, the run, the report, the board
    assert text_only.text_only_notice() == (
        "ARK: minilm is text-only and ARK's galleries are images, so every score would tie: no raw ARK run and no "
        "ARK row on the board for it (make demo-ocr ranks it over OCR captions)"
    )
    with_ocr = demo.Demo(tmp_path, "minilm", True, Said())
    assert list(with_ocr.runs) == ["triad", "ark-ocr"] and with_ocr.n_stages == 7  # + OCR captions, + that run
    assert with_ocr.text_only_notice().endswith("(ranked over OCR captions below)")
    sees = demo.Demo(tmp_path, "clip-vit-b32", False, Said())
    assert list(sees.runs) == ["triad", "ark"] and sees.n_stages == 6


def test_the_demo_writes_a_report_and_its_summary_names_it(tmp_path: Path) -> None:
    from spaces_app.gold import load_gold
    from tests.doubles import space_runs as testing
    from tests.doubles.folders import write_tiny_triad

    demo = _demo_module()
    console = Said()
    run = demo.Demo(tmp_path / "out", "minilm", False, console)
    write_tiny_triad(run.triad_dir)
    gold = load_gold(run.triad_dir)
    testing.write_run(
        run.runs["triad"], gold.rows, testing.random_rankings(gold.rows, seed=1), fingerprint=gold.fingerprint
    )
    run.write_report()
    assert run.report == tmp_path / "out" / "report-minilm-triad.html" and run.report.is_file()
    assert "<html" in run.report.read_text(encoding="utf-8")[:500].lower()
    assert console.lines[0] == f"[1/5] report of minilm on TRIAD -> {run.report}"
    assert console.lines[1].endswith(f"· log {tmp_path / 'out' / 'logs' / '1-report.log'}")
    assert "opens offline in a browser" in console.lines[1]

    console.lines.clear()
    run.results["triad"] = {"configs": {c: {"metrics": {"map": 0.125}} for c in ("state_cars", "abstraction_i2c")}}
    run.seeded = "1 runs accepted, 0 already there"
    run.final_screen(12.0, tmp_path / "out" / "space.sqlite")
    shown = "\n".join(console.lines)
    assert any(line.split() == [str(run.report), "minilm", "on", "TRIAD", "as", "one", "HTML", "page:", "scores,",
                                "diagnostics,", "worst", "queries", "with", "images"] for line in console.lines)  # fmt: skip
    assert "minilm-ark" not in shown and "I2C 0.125   C-Cars 0.125" in shown
    assert "examples/my_encoder.py:build" in shown  # the example file, as a path that works from here


def test_with_ocr_a_text_only_models_captioned_ark_run_is_shown_beside_chance(tmp_path: Path) -> None:
    demo = _demo_module()
    console = Said()
    run = demo.Demo(tmp_path, "minilm", True, console)
    run.results["ark-ocr"] = {
        "configs": {"calendar": {"metrics": {"recall@1": 0.25, "recall@10": 0.75}, "chance": 0.05}}
    }
    run.compare_ocr()
    assert console.lines == [
        "",
        "ARK R@1 / R@10: chance -> over OCR captions",
        "  calendar         0.050 / 0.500   ->   0.250 / 0.750",
    ]


def test_ctrl_c_in_the_demo_names_the_stage_and_what_its_run_kept():
    demo = _demo_module()
    assert demo.interrupted_line("[3/5] minilm on TRIAD -> o", "interrupted while ranking; x") == (
        "demo: interrupted in stage [3/5] minilm on TRIAD -> o (interrupted while ranking; x); the finished stages "
        "are reused by the next make demo"
    )
    assert demo.interrupted_line("", "") == (
        "demo: interrupted before its first stage; the finished stages are reused by the next make demo"
    )
