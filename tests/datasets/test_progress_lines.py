"""Progress off a terminal (triad_dataset/contract/progress.py): whole lines, at least every interval, even while a
slow step gives the bar nothing to advance; on a terminal, tqdm's bar redrawn in place."""

from __future__ import annotations

import io
import time

import pytest

from triad_dataset.contract import progress as progress_module
from triad_dataset.contract.progress import LineWriter, lines_wanted, progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_redraws_become_whole_lines_without_repeats() -> None:
    sink = io.StringIO()
    writer = LineWriter(sink)
    for text in ("\rencode:  0%| 0/4", "\rencode:  0%| 0/4   ", "\rencode: 50%| 2/4", "\n", ""):
        writer.write(text)
    assert sink.getvalue() == "encode:  0%| 0/4\nencode: 50%| 2/4\n"


def test_a_file_gets_lines_and_a_slow_step_still_gets_one_every_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(progress_module.MODE_ENV, raising=False)
    sink = io.StringIO()
    bar = progress(total=2, desc="encode", unit="item", file=sink, interval=0.1)
    bar.update(1)
    time.sleep(0.6)  # one slow batch: no update for 6 intervals
    bar.update(1)
    bar.close()
    lines = sink.getvalue().splitlines()
    assert "\r" not in sink.getvalue() and all(line.startswith("encode:") for line in lines)
    waiting = [line for line in lines if "1/2" in line]
    assert len(waiting) >= 3, lines  # the heartbeat drew the bar while the step ran
    assert lines[-1].startswith("encode: 100%") and "2/2" in lines[-1]


def test_a_fast_bar_off_a_terminal_prints_few_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(progress_module.MODE_ENV, raising=False)
    sink = io.StringIO()
    for _ in progress(range(1000), desc="rank", file=sink, interval=60):
        pass
    lines = sink.getvalue().splitlines()
    assert len(lines) <= 2 and "1000/1000" in lines[-1]


def test_a_terminal_keeps_the_redrawn_bar_and_the_variable_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(progress_module.MODE_ENV, raising=False)
    terminal = Terminal()
    assert not lines_wanted(terminal) and lines_wanted(io.StringIO())
    for _ in progress(range(3), desc="rank", file=terminal, mininterval=0):
        pass
    assert "\rrank:" in terminal.getvalue()
    monkeypatch.setenv(progress_module.MODE_ENV, "lines")
    assert lines_wanted(terminal)
    monkeypatch.setenv(progress_module.MODE_ENV, "bar")
    assert not lines_wanted(io.StringIO())


def test_a_notebook_keeps_its_widget(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    monkeypatch.delenv(progress_module.MODE_ENV, raising=False)
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    assert not lines_wanted() and lines_wanted(io.StringIO())
