"""scripts/check_artifacts.py's venv sees the packages of the interpreter that runs it, also from inside a venv."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_MAKE_INNER = """
import subprocess, sys
sys.path.insert(0, sys.argv[1])
import check_artifacts
from pathlib import Path
inner = Path(sys.argv[2])
subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(inner)], check=True)
print(check_artifacts.expose_outer_packages(inner / "bin" / "python"))
"""


def _site(python: Path) -> Path:
    out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def _inner_sees(outer: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    inner = tmp_path / "inner"
    subprocess.run([str(outer), "-c", _MAKE_INNER, str(ROOT / "scripts"), str(inner)], check=True,
                   capture_output=True, text=True)
    return subprocess.run([str(inner / "bin" / "python"), "-c", "import outer_only_probe; print(outer_only_probe.X)"],
                          capture_output=True, text=True)


def test_inner_venv_sees_an_outer_venvs_packages(tmp_path: Path) -> None:
    outer_venv = tmp_path / "outer"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(outer_venv)], check=True)
    outer = outer_venv / "bin" / "python"
    (_site(outer) / "outer_only_probe.py").write_text("X = 'outer'\n", encoding="utf-8")
    done = _inner_sees(outer, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "outer"


def test_inner_venv_from_the_running_interpreter_sees_its_packages(tmp_path: Path) -> None:
    inner = tmp_path / "inner"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(inner)], check=True)
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import check_artifacts
        pth = check_artifacts.expose_outer_packages(inner / "bin" / "python")
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    listed = pth.read_text(encoding="utf-8").splitlines()
    assert sysconfig.get_path("purelib") in listed or not Path(sysconfig.get_path("purelib")).is_dir()
    done = subprocess.run([str(inner / "bin" / "python"), "-c", "import pytest; print(pytest.__name__)"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
