"""Admin actions (hide, unhide, delete) behind TRIAD_SPACE_ADMIN_TOKEN, compared in constant time."""

from __future__ import annotations

import hmac
from typing import Any

from spaces_app.db import Database

ACTIONS = ("hide", "unhide", "delete")


def authorized(expected: str | None, given: Any) -> bool:
    """True only when a token is configured and the given one matches it."""
    return bool(expected) and hmac.compare_digest(str(given or "").encode(), str(expected).encode())


def apply(db: Database, expected: str | None, token: Any, submission_id: Any, action: str) -> str:
    """Run one admin action; the returned line says what happened (or why nothing did)."""
    if not expected:
        return "Admin actions are disabled: TRIAD_SPACE_ADMIN_TOKEN is not set."
    if not authorized(expected, token):
        return "Wrong admin token."
    try:
        sid = int(submission_id)
    except (TypeError, ValueError):
        return "Give a submission id."
    if action not in ACTIONS:
        return f"Unknown action {action!r}; one of {', '.join(ACTIONS)}."
    ok = db.delete(sid) if action == "delete" else db.set_hidden(sid, action == "hide")
    if ok and action == "delete":
        from spaces_app import explore_store

        explore_store.remove(db.path, sid)
    return f"Submission id {sid}: {action} done." if ok else f"Submission id {sid} does not exist."
