"""What every builder returns: the rows of each config it built plus its audit figures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class BuildResult:
    """Rows per config name (docs/protocol.md §1 columns) and the builder's audit figures (JSON-serialisable)."""

    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    audit: dict[str, Any] = field(default_factory=dict)

    def merge(self, other: BuildResult) -> BuildResult:
        """Combine two results; a config built twice is an error."""
        clash = set(self.tables) & set(other.tables)
        if clash:
            raise ValueError(f"configs built twice: {sorted(clash)}")
        return BuildResult({**self.tables, **other.tables}, {**self.audit, **other.audit})
