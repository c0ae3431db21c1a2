"""Ctrl-C in each phase of `triad run`: the line names the phase it stopped and what was kept, and --out holds
nothing half-written (model_adapters/run/interrupt.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_adapters.run import console, runner
from model_adapters.run.interrupt import RunInterrupted, Stopped
from tests.doubles.folders import write_tiny_triad
from triad_cli.main import main

ENCODER = """
import numpy as np


class Lengths:
    dim = 3
    revision = {revision!r}

    def _encode(self, batch):
        return np.stack([[len(m.text) + 1.0, 1.0, float(i % 3)] for i, m in enumerate(batch)])

    encode_queries = encode_candidates = _encode


def build():
    return Lengths()
"""


@pytest.fixture(scope="module")
def triad_dir(tmp_path_factory) -> str:
    return str(write_tiny_triad(tmp_path_factory.mktemp("data") / "triad"))


def _interrupted(tmp_path: Path, triad_dir: str, *extra: str, revision: str | None = "v1") -> tuple[str, Path]:
    """Run the CLI once, expect Ctrl-C's exit code; return its one stderr line and the --out folder."""
    (tmp_path / "lengths.py").write_text(ENCODER.format(revision=revision), encoding="utf-8")
    out = tmp_path / "out"
    code = main(
        ["run", "--encoder", f"{tmp_path / 'lengths.py'}:build", "--data", triad_dir, "--out", str(out)]
        + ["--cache-dir", str(tmp_path / "cache"), "--quiet", "--no-validate", *extra]
    )
    return str(code), out


def _raise(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


def _line(capsys: pytest.CaptureFixture[str]) -> str:
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


def _untouched(out: Path) -> bool:
    """No results.json, no rankings, no staging folder left behind."""
    return not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize(
    ("where", "phase"),
    [
        ("select_configs", "preparing (resolving the model, validating the folder)"),
        ("plan_triad", "planning the inputs"),
    ],
)
def test_before_encoding_nothing_is_encoded_or_written(triad_dir, tmp_path, capsys, monkeypatch, where, phase):
    monkeypatch.setattr(runner, where, _raise)
    code, out = _interrupted(tmp_path, triad_dir)
    assert code == "130" and _line(capsys) == (
        f"triad run: interrupted while {phase}; no vector was encoded yet; nothing was written to {out}"
    )
    assert _untouched(out) and not list((tmp_path / "cache").rglob("*.npz"))


def test_before_the_first_batch_is_done_no_vector_is_claimed(triad_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(runner, "encode_plan", _raise)
    code, out = _interrupted(tmp_path, triad_dir)
    assert _line(capsys) == (
        f"triad run: interrupted while encoding; no batch was finished yet, so no new vector is kept; nothing was "
        f"written to {out}"
    )
    assert code == "130" and _untouched(out)


@pytest.mark.parametrize(
    ("extra", "revision", "why"),
    [(("--no-cache",), "v1", "--no-cache"), ((), None, "Lengths declares no revision")],
)
def test_encoding_without_a_cache_keeps_nothing(triad_dir, tmp_path, capsys, monkeypatch, extra, revision, why):
    monkeypatch.setattr(runner, "encode_plan", _raise)
    code, out = _interrupted(tmp_path, triad_dir, *extra, revision=revision)
    assert _line(capsys) == (
        f"triad run: interrupted while encoding; no vector is kept ({why}): a re-run encodes everything again; "
        f"nothing was written to {out}"
    )
    assert code == "130" and _untouched(out) and not list((tmp_path / "cache").rglob("*.npz"))


@pytest.mark.parametrize(
    ("where", "phase"),
    [("triad_rankings", "ranking"), ("score", "scoring"), ("results_json", "writing the results")],
)
def test_after_encoding_every_vector_is_cached_and_out_is_as_it_was(
    triad_dir, tmp_path, capsys, monkeypatch, where, phase
):
    monkeypatch.setattr(runner, where, _raise)
    code, out = _interrupted(tmp_path, triad_dir)
    (folder,) = [p for p in (tmp_path / "cache").iterdir() if p.is_dir() and list(p.rglob("*.npz"))]
    assert _line(capsys) == (
        f"triad run: interrupted while {phase}; every vector is in the embedding cache {folder}: a re-run does not "
        f"encode them again; the rankings made so far were discarded: {out} is left as it was"
    )
    assert code == "130" and _untouched(out)


def test_after_the_results_are_written_the_line_says_so(triad_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(console, "print_results", _raise)
    monkeypatch.setattr(runner.Run, "run", _printing_run(runner.Run.run))
    code, out = _interrupted(tmp_path, triad_dir)
    assert code == "130" and _line(capsys) == f"triad run: interrupted after the run finished: its results are in {out}"
    assert (out / "results.json").is_file()


def _printing_run(run):  # --quiet skips the tables: interrupt where they would be printed
    def wrapped(self):
        results = run(self)
        console.print_results(results, self.benchmark, self.cfg.out)
        return results

    return wrapped


def test_python_callers_get_the_same_line_as_a_keyboard_interrupt(triad_dir, tmp_path, monkeypatch):
    import numpy as np

    from model_adapters import evaluate

    class Stops:
        dim, revision = 2, None

        def encode_queries(self, batch):
            raise KeyboardInterrupt

        def encode_candidates(self, batch):
            return np.ones((len(batch), 2))

    with pytest.raises(KeyboardInterrupt) as caught:
        evaluate(Stops(), data=triad_dir, out=str(tmp_path / "o"), quiet=True, validate=False)
    assert isinstance(caught.value, RunInterrupted) and str(caught.value).startswith("interrupted while encoding; ")


def test_the_phase_words_for_an_unknown_phase():
    assert Stopped("load", "o").line() == "interrupted while load; no vector was encoded yet; nothing was written to o"
