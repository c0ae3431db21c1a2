"""results.json of a run (docs/CONTRACTS.md §3): `build.results_json` assembles it; `results.schema.json` beside
this file is its JSON Schema (`SCHEMA_PATH`), which the tests check every assembled file against."""

from __future__ import annotations

from pathlib import Path
from typing import Final

SCHEMA_PATH: Final = Path(__file__).with_name("results.schema.json")
