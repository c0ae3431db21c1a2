"""`make test-unit`'s guard (tests/import_guard.py): a session that imports a forbidden module fails and names the
test that imported it; a doctest whose examples import it is deselected instead of run."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_forbidden_import_fails_the_session_and_a_doctest_using_it_is_deselected(tmp_path: Path) -> None:
    (tmp_path / "test_uses_wave.py").write_text(
        textwrap.dedent(
            """
            def test_plain():
                assert 1 + 1 == 2

            def test_imports_wave():
                import wave
                assert wave.open
            """
        )
    )
    (tmp_path / "doc_uses_wave.py").write_text(
        textwrap.dedent(
            '''
            def double(x):
                """Twice x.

                >>> import wave
                >>> double(2)
                4
                """
                return 2 * x
            '''
        )
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(tmp_path),
            "-p",
            "no:cacheprovider",
            "-p",
            "tests.import_guard",
            "--forbid-imports",
            "wave",
            str(tmp_path / "test_uses_wave.py"),
            str(tmp_path / "doc_uses_wave.py"),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])},
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "2 passed, 1 deselected" in out, out
    assert "--forbid-imports: wave was imported, first during test_uses_wave.py::test_imports_wave" in out, out
