"""The one check of a refused submission, shared by the Space's tests."""

from __future__ import annotations

from typing import Any

from spaces_app.db import Database


def rejected(db: Database, outcome: Any, *fragments: str, stored: int = 0) -> None:
    """Assert that ``outcome`` (an `Outcome` or its message) is a refusal naming every fragment, and that the
    database still holds ``stored`` submissions (none of this one's rows, scores or per-query scores)."""
    message = outcome if isinstance(outcome, str) else outcome.message
    assert isinstance(outcome, str) or not outcome.accepted, message
    assert message.startswith("Rejected: ") and message.endswith("Nothing was stored."), message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    counts = db.counts()
    assert counts["submissions"] == stored, (counts, message)
    if stored == 0:
        assert counts["scores"] == counts["query_scores"] == 0, counts
