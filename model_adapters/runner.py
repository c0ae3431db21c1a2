"""Runs one model over a benchmark folder from Python: `run(RunConfig(...)) -> dict`.

This is the documented public path, in docs/CONTRACTS.md and docs/runner.md. The run itself lives in
`model_adapters/run/`.
"""

from __future__ import annotations

from model_adapters.run.config import RunConfig
from model_adapters.run.runner import run

__all__ = ["RunConfig", "run"]
