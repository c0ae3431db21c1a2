"""scripts/check_artifacts.py's venv sees the packages of the interpreter that runs it, also from inside a venv."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_MAKE_INNER = """
import subprocess, sys
sys.path.insert(0, sys.argv[1])
import check_artifacts
from pathlib import Path
inner = Path(sys.argv[2])
subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(inner)], check=True)
print(check_artifacts.expose_outer_packages(inner / "bin" / "python"))
"""


def _purelib(python: Path) -> Path:
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def _inner_imports(outer: Path, inner: Path, module: str) -> subprocess.CompletedProcess[str]:
    made = subprocess.run(
        [str(outer), "-c", _MAKE_INNER, str(ROOT / "scripts"), str(inner)], capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    return subprocess.run(
        [str(inner / "bin" / "python"), "-c", f"import {module}; print({module}.__name__)"],
        capture_output=True,
        text=True,
    )


def test_inner_venv_sees_an_outer_venvs_packages(tmp_path: Path) -> None:
    outer_venv = tmp_path / "outer"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(outer_venv)], check=True)
    outer = outer_venv / "bin" / "python"
    (_purelib(outer) / "outer_only_probe.py").write_text("X = 1\n", encoding="utf-8")
    done = _inner_imports(outer, tmp_path / "inner", "outer_only_probe")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "outer_only_probe"


def test_inner_venv_from_this_interpreter_sees_its_packages(tmp_path: Path) -> None:
    done = _inner_imports(Path(sys.executable), tmp_path / "inner", "pytest")
    assert done.returncode == 0, done.stderr
