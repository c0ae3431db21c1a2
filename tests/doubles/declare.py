"""Declares the test doubles' `triad.models` entry point: a small distribution put on the path, never installed.

The distribution `triad-benchmark-tests` holds only its metadata: `entry_points.txt` names `tests.doubles.entries`.
`declare` writes it into a temporary folder and puts that folder and the repository root on `sys.path` and on
PYTHONPATH, so the test session and every process it starts (the `triad` command, torchrun and accelerate
workers, a Space server) read the tiny families and entries the way they read any installed plug-in.
"""

from __future__ import annotations

import os
import sys
import tempfile
from importlib.metadata import entry_points
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
DISTRIBUTION: Final = "triad-benchmark-tests"
ENTRY_POINT: Final = "tests.doubles.entries:rows"


def declare() -> None:
    """Put the distribution declaring `ENTRY_POINT` on `sys.path` and PYTHONPATH, once per process tree."""
    if any(ep.value == ENTRY_POINT for ep in entry_points(group="triad.models")):
        return
    site = Path(tempfile.mkdtemp(prefix="triad-test-doubles-"))
    dist = site / f"{DISTRIBUTION.replace('-', '_')}-0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {DISTRIBUTION}\nVersion: 0\n")
    (dist / "entry_points.txt").write_text(f"[triad.models]\ntiny-random = {ENTRY_POINT}\n")
    for path in (str(ROOT), str(site)):
        if path not in sys.path:
            sys.path.append(path)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join([*paths, *(p for p in (str(ROOT), str(site)) if p not in paths)])
