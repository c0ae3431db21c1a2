"""Shared test setup (keep tiny).

- Every test runs offline: the Hugging Face offline switches are set here, before `datasets` or `huggingface_hub`
  is imported by a test module (they read them at import time).
- `mini_triad_dir` (session scope): the mini TRIAD edition built ONCE per test session by
  `triad_dataset.editions.mini.build_mini` into a temporary folder named `triad` (so `load_dataset("triad", cfg)` works from
  its parent). Reuse it instead of building again; treat it as read-only (copy it before changing anything).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_name, "1")


@pytest.fixture(scope="session")
def mini_triad_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mini TRIAD edition, built once per session (about 35 s on 2 busy cores)."""
    from triad_dataset.editions.mini import build_mini

    out = tmp_path_factory.mktemp("mini") / "triad"
    build_mini(out, seed=0, quiet=True)
    return out
