"""Reads and compares results.json files; `results.schema.json` beside this file is their JSON Schema (`SCHEMA_PATH`).

`model_adapters.run.results_json` assembles results.json (docs/CONTRACTS.md §3), and the tests check every
assembled file against the schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

SCHEMA_PATH: Final = Path(__file__).with_name("results.schema.json")
