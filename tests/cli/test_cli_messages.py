"""One line, exit 2, nothing written: `--out` naming a file (or a path under one), and `triad` started by a Python
that lacks the project's dependencies (the line names the environment that has them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.doubles.folders import write_tiny_ark, write_tiny_triad
from triad_cli.environment import ROOT, missing_dependency, missing_line
from triad_cli.main import main

ENCODER = str(Path(__file__).resolve().parents[2] / "examples" / "my_encoder.py") + ":build"


def _one_line_error(capsys, *args: str) -> str:
    code = main(list(args))
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    return lines[0]


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("messages")
    (root / "afile").write_text("keep me", encoding="utf-8")
    return {"root": root, "triad": write_tiny_triad(root / "triad"), "ark": write_tiny_ark(root / "ark")}


def test_run_out_naming_a_file_is_one_line(folders, capsys) -> None:
    afile = folders["root"] / "afile"
    for out in (afile, afile / "sub"):
        args = ["run", "--encoder", ENCODER, "--data", str(folders["triad"]), "--out", str(out), "--quiet"]
        assert _one_line_error(capsys, *args) == (
            f"triad run: error: --out {out}: {afile} is a file, not a folder; give a folder path to write into"
        )
    assert afile.read_text(encoding="utf-8") == "keep me"


def test_caption_and_rewrite_out_under_a_file_are_one_line(folders, capsys) -> None:
    afile, ark = folders["root"] / "afile", str(folders["ark"])
    assert _one_line_error(capsys, "caption", "--captioner", "ocr", "--data", ark, "--out", str(afile)) == (
        f"triad caption: error: --out {afile}: {afile} is a file, not a folder; give a folder path to write into"
    )
    out = afile / "r.jsonl"
    assert _one_line_error(
        capsys, "rewrite", "--rewriter", "tiny-random-rewriter", "--data", ark, "--out", str(out)
    ) == (f"triad rewrite: error: --out {out}: {afile} is a file, not a folder; give a path inside a folder")
    assert afile.read_text(encoding="utf-8") == "keep me"


def test_report_out_is_a_file_path_not_a_folder(folders, capsys) -> None:
    afile, root = folders["root"] / "afile", folders["root"]
    assert _one_line_error(capsys, "report", str(root), "--out", str(root)) == (
        f"triad report: error: --out {root}: a folder; give the path of the file to write"
    )
    out = afile / "report.html"
    assert _one_line_error(capsys, "report", str(root), "--out", str(out)) == (
        f"triad report: error: --out {out}: {afile} is a file, not a folder; give a path inside a folder"
    )


# --- a Python without the project's dependencies -------------------------------------------------------------------
def test_the_line_names_the_environment_to_run(tmp_path) -> None:
    kw = {"venv_exists": True, "in_venv": False, "checkout": True}
    head = "triad: error: this Python lacks 'pyarrow', which triad needs; "
    assert (
        missing_line("pyarrow", tmp_path, **kw) == head + f"run the project's environment: {tmp_path}/.venv/bin/triad"
    )
    assert missing_line("pyarrow", tmp_path, **{**kw, "venv_exists": False}) == (
        head + f"make the project's environment first: `make setup` in {tmp_path}, then {tmp_path}/.venv/bin/triad"
    )
    assert missing_line("pyarrow", tmp_path, **{**kw, "in_venv": True}) == (
        head + f"the project's environment {tmp_path}/.venv lacks it: run `make setup` in {tmp_path} again"
    )
    assert missing_line("pyarrow", tmp_path, **{**kw, "checkout": False}).startswith(
        head + "install triad-benchmark with its extras"
    )


def test_python_m_triad_cli_without_a_dependency_prints_one_line(folders) -> None:
    """`python -m triad_cli` where `pyarrow` cannot be imported (blocked in sys.modules, as a bare Python lacks it)."""
    code = (
        "import runpy, sys; sys.modules['pyarrow'] = None; "
        f"sys.argv = ['triad', 'list', 'configs', {str(folders['triad'])!r}]; runpy.run_module('triad_cli', run_name='__main__')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith("triad: error: this Python lacks 'pyarrow', which triad needs; ")
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_a_module_missing_in_other_code_is_not_blamed_on_the_environment(tmp_path) -> None:
    user = tmp_path / "mine.py"
    user.write_text("import a_module_nobody_has\n", encoding="utf-8")
    with pytest.raises(ModuleNotFoundError) as exc:
        exec(compile(user.read_text(), str(user), "exec"), {})
    assert missing_dependency(exc.value) is None
