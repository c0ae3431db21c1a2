"""Shared test setup (keep tiny).

- Every test runs offline: the Hugging Face offline switches are set here, before `datasets` or `huggingface_hub`
  is imported by a test module (they read them at import time). The Space's reference runs cache their vectors in
  a temporary folder of the session (TRIAD_SPACE_CACHE), never in the user's cache.
- `minilm_mini` (session scope, for slow tests): `minilm`'s run of every config of the mini edition, made once per
  session, with its embedding cache; the leaderboard's own run of minilm on that folder (TRIAD_SPACE_CACHE pointed
  at the cache) then reads every vector from it.
- `mini_triad_dir` (session scope): the mini TRIAD edition built ONCE per test session by
  `triad_dataset.editions.mini.build_mini` into a temporary folder named `triad` (so `load_dataset("triad", cfg)` works from
  its parent). Reuse it instead of building again; treat it as read-only (copy it before changing anything).
- The tiny families and the `tiny-random-*` models are test doubles (`tests/doubles/`): they come through the
  `triad.models` entry point of a small distribution that `tests.doubles.declare` puts on sys.path and PYTHONPATH,
  so the `triad` subprocesses, torchrun workers and Space servers that the tests start see them too.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tests.doubles.declare import declare

for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_name, "1")
# the leaderboard's reference runs cache their vectors in a folder of this session, not in the user's cache
os.environ.setdefault("TRIAD_SPACE_CACHE", tempfile.mkdtemp(prefix="triad-space-cache-"))

declare()


@pytest.fixture(scope="session")
def mini_triad_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mini TRIAD edition, built once per session (about 35 s on 2 busy cores)."""
    from triad_dataset.editions.mini import build_mini

    out = tmp_path_factory.mktemp("mini") / "triad"
    build_mini(out, seed=0, quiet=True)
    return out


@pytest.fixture(scope="session")
def minilm_mini(mini_triad_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """minilm over every config of the mini TRIAD edition (`triad run`), once per session: {"root", "run", "cache",
    "data", "results"}; treat it as read-only."""
    from model_adapters.runner import RunConfig, run

    root = tmp_path_factory.mktemp("minilm_mini")
    results = run(
        RunConfig(
            model="minilm",
            data=str(mini_triad_dir),
            out=str(root / "run"),
            validate=False,
            quiet=True,
            cache_dir=str(root / "cache"),
        )
    )
    return {"root": root, "run": root / "run", "cache": root / "cache", "data": mini_triad_dir, "results": results}
