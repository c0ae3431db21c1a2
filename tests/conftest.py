"""Shared test setup (keep tiny).

- Every test runs offline: the Hugging Face offline switches are set here, before `datasets` or `huggingface_hub`
  is imported by a test module (they read them at import time).
- `mini_triad_dir` (session scope): the mini TRIAD edition built ONCE per test session by
  `triad_dataset.editions.mini.build_mini` into a temporary folder named `triad` (so `load_dataset("triad", cfg)` works from
  its parent). Reuse it instead of building again; treat it as read-only (copy it before changing anything).
- The `tiny-random-*` models come through the `triad.models` entry point in setup.cfg. Where the installed metadata
  predates it (an editable install made before the entry point existed), a stand-in distribution declaring it is
  put on sys.path and PYTHONPATH (for the CLI subprocesses), so the tests see what a fresh install sees.
"""

from __future__ import annotations

import os
import sys
import tempfile
from importlib.metadata import entry_points
from pathlib import Path

import pytest

for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_name, "1")

TINY_ENTRY_POINT = "model_adapters.mocks.entries:ENTRIES"


def _declare_tiny_entry_point() -> None:
    """Put a distribution declaring the tiny models' entry point on the path unless one is installed."""
    if any(ep.value == TINY_ENTRY_POINT for ep in entry_points(group="triad.models")):
        return
    site = Path(tempfile.mkdtemp(prefix="triad-tiny-entry-point-"))
    dist = site / "triad_tiny_models-0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: triad-tiny-models\nVersion: 0\n")
    (dist / "entry_points.txt").write_text(f"[triad.models]\ntiny-random = {TINY_ENTRY_POINT}\n")
    sys.path.append(str(site))
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(site)) if p)


_declare_tiny_entry_point()


@pytest.fixture(scope="session")
def mini_triad_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mini TRIAD edition, built once per session (about 35 s on 2 busy cores)."""
    from triad_dataset.editions.mini import build_mini

    out = tmp_path_factory.mktemp("mini") / "triad"
    build_mini(out, seed=0, quiet=True)
    return out
