"""Errors a user makes or meets are one line, exit 2, nothing written (`--debug` keeps the traceback): an exception
in your own encoder (its file, line, batch and input), an --out or --cache-dir that is a file, `triad list | head`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import model_adapters
from tests.doubles.folders import write_tiny_triad
from triad_cli.main import main
from triad_dataset.contract.errors import TriadError

ROOT = Path(__file__).resolve().parents[2]

FAILING = """import numpy as np


class Picky:
    dim = 3
    revision = "v1"

    def encode_queries(self, batch):
        if {whole} and len(batch) > 1:
            raise RuntimeError("batches of more than one input are not supported")
        for item in batch:
            if {picky} and "brand: Kia" in item.text:  # query q3
                raise ValueError("cannot encode this one")
        return np.stack([[len(m.text) + 1.0, 1.0, 2.0] for m in batch])

    def encode_candidates(self, batch):
        return np.stack([[len(m.text) + 1.0, 1.0, 2.0] for m in batch])


def build():
    return Picky()
"""


@pytest.fixture(scope="module")
def triad_dir(tmp_path_factory) -> str:
    return str(write_tiny_triad(tmp_path_factory.mktemp("data") / "triad"))


def _run(tmp_path: Path, triad_dir: str, *extra: str, whole: bool = False) -> tuple[list[str], Path]:
    (tmp_path / "picky.py").write_text(FAILING.format(whole=whole, picky=not whole), encoding="utf-8")
    out = tmp_path / "out"
    args = ["run", "--encoder", f"{tmp_path / 'picky.py'}:build", "--data", triad_dir, "--config", "constraints_cars"]
    return args + ["--out", str(out), "--cache-dir", str(tmp_path / "cache"), "--quiet", "--no-validate", *extra], out


def _one_line(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    code = main(args)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_your_encoders_exception_names_its_file_line_batch_and_input(triad_dir, tmp_path, capsys):
    args, out = _run(tmp_path, triad_dir, "--batch-size", "8")
    line = _one_line(capsys, args)
    raising = FAILING.splitlines().index('                raise ValueError("cannot encode this one")') + 1
    assert re.fullmatch(
        rf"triad run: error: {re.escape(str(tmp_path / 'picky.py'))}:{raising}: your encoder Picky raised ValueError: "
        r"cannot encode this one, on query batch \d+ \(4 inputs\): input constraints_cars query q3 fails alone; "
        r"--debug shows the traceback",
        line,
    ), line
    assert not (out / "results.json").exists()


def test_a_batch_that_fails_only_whole_is_named_by_its_inputs(triad_dir, tmp_path, capsys):
    args, _ = _run(tmp_path, triad_dir, "--batch-size", "8", whole=True)
    line = _one_line(capsys, args)
    assert line.endswith(
        "raised RuntimeError: batches of more than one input are not supported, on query batch 5 (4 inputs): inputs "
        "constraints_cars query q3 ... constraints_cars query q0, none of which fails alone; --debug shows the "
        "traceback"
    ), line


def test_debug_keeps_the_traceback(triad_dir, tmp_path, capsys):
    args, _ = _run(tmp_path, triad_dir, "--debug")
    with pytest.raises(TriadError, match="your encoder Picky raised ValueError") as caught:
        main(args)
    assert isinstance(caught.value.__cause__, ValueError)  # the encoder's own traceback, chained


def test_a_registry_models_exception_is_not_blamed_on_you(triad_dir, tmp_path, monkeypatch):
    from model_adapters.run import runner

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug of ours")

    monkeypatch.setattr(runner, "encode_plan", broken)
    with pytest.raises(ZeroDivisionError):  # a project bug keeps its traceback
        main(["run", "--model", "tiny-random-clip", "--data", triad_dir, "--out", str(tmp_path / "o"), "--quiet"])


def test_python_out_that_is_a_file_is_one_line_and_untouched(triad_dir, tmp_path):
    blocker = tmp_path / "results.txt"
    blocker.write_text("mine", encoding="utf-8")
    encoder = object()  # any object: the folder is refused before the encoder is looked at
    with pytest.raises(TriadError) as caught:
        model_adapters.evaluate(encoder, data=triad_dir, out=str(blocker))
    assert str(caught.value) == (
        f"--out {blocker}: {blocker} is a file, not a folder; give a folder path to write into"
    )
    assert blocker.read_text(encoding="utf-8") == "mine"


def test_cache_dir_that_is_a_file_is_one_line(triad_dir, tmp_path, capsys):
    (tmp_path / "cache").write_text("", encoding="utf-8")
    args, out = _run(tmp_path, triad_dir)
    assert _one_line(capsys, args) == (
        f"triad run: error: --cache-dir {tmp_path / 'cache'}: {tmp_path / 'cache'} is a file, not a folder; give a "
        "folder path to write into"
    )
    assert not out.exists()


def test_a_closed_pipe_ends_the_listing_quietly(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-m", "triad_cli", "list", "configs"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # `| head` that has read enough
    err = child.stderr.read().decode()
    assert child.wait(timeout=120) == 141 and err == ""


def test_the_report_file_respects_the_umask(tmp_path, monkeypatch):
    from spaces_app import report

    monkeypatch.setattr(report, "build_report", lambda run_dirs, **kwargs: "<html></html>")
    old = os.umask(0o022)
    try:
        path = report.write_report([], tmp_path / "r.html")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644 and not list(tmp_path.glob("*.tmp"))
