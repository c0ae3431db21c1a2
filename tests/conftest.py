"""Shared test setup (keep tiny).

- Every test runs offline: the Hugging Face offline switches are set here, before `datasets` or `huggingface_hub`
  is imported by a test module (they read them at import time).
- `mini_triad_dir` (session scope): the mini TRIAD edition built ONCE per test session by
  `triad_dataset.mini.build_mini` into a temporary folder named `triad`. Reuse it instead of building again; do not
  modify it (copy it first). It is skipped only while a mini builder entry point does not exist yet.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_name, "1")


def require_mini_builders() -> None:
    """Skip the calling test while a mini builder entry point (docs/CONTRACTS.md §2) is missing."""
    for module, function in (
        ("triad_dataset.abstraction", "build_mini_abstraction"),
        ("triad_dataset.constraints", "build_mini_domain"),
    ):
        try:
            found = hasattr(importlib.import_module(module), function)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            found = False
        if not found:
            pytest.skip(f"{module}.{function} does not exist yet")


@pytest.fixture(scope="session")
def mini_triad_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mini TRIAD edition, built once per session (read-only by convention)."""
    require_mini_builders()
    from triad_dataset.mini import build_mini

    out = tmp_path_factory.mktemp("mini") / "triad"
    build_mini(out, seed=0)
    return out
