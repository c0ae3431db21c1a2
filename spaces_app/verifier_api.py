"""The admin-token API a verifier machine works through (`triad space verify --url URL --token T`).

`/verify_tasks` hands out pending rows with their secret samples, `/verify_report` records a sampled first look
(it can fail a row, never verify one: `worker.after_first_look`), `/verify_claim` takes or gives back a row or a
reference run for one worker, `/reference_tasks` lists the reference runs wanted, and `/reference_report` stores
a made one — the server then judges every row naming it and adds the rows requested (`worker.DatabaseStore`).
Functions of the leaderboard state, callable without Blocks; `endpoints` binds them.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Final

import gradio as gr

from spaces_app import moderation, verify, worker
from spaces_app.board import Leaderboard
from spaces_app.db_references import spec_json
from spaces_app.reference import Reference

MAX_RECORD: Final = 2_000_000  # characters of a first look's record
MAX_REFERENCE: Final = 256 * 2**20  # characters of a reference run's JSON or explorer table (base64)


def verifier_refusal(lb: Leaderboard, token: str, request: gr.Request | None, profile: Any = None) -> str | None:
    """None when the admin token is right (and the caller not locked out), else the refusal.

    The caller is keyed as in `endpoints.run_admin`: the Hub user with login on, so one account's wrong tokens
    lock out only that account."""
    who = lb.who(request, profile)
    if not lb.settings.admin_token:
        return "verification API disabled: TRIAD_SPACE_ADMIN_TOKEN is not set"
    if lb.admin_locked(who):
        return "too many wrong admin tokens from this client; try again later"
    ok = moderation.authorized(lb.settings.admin_token, token)
    lb.db.record_attempt(who, accepted=ok, action="admin")
    return None if ok else "wrong admin token"


def _refuse_unless_admin(lb: Leaderboard, token: str, request: gr.Request | None, profile: Any) -> None:
    refusal = verifier_refusal(lb, token, request, profile)
    if refusal:
        raise gr.Error(refusal)


def run_verify_tasks(
    lb: Leaderboard, token: str, submission_id: int | None, request: gr.Request | None, profile: Any
) -> list[dict[str, Any]]:
    """Admin token: the submissions to re-encode (the pending ones, or one by id) with their secret samples."""
    _refuse_unless_admin(lb, token, request, profile)
    ids = None if not submission_id else [int(submission_id)]  # None, "" or 0: every pending one
    return lb.db.verification_tasks(ids=ids, pending_only=ids is None)


def run_verify_report(
    lb: Leaderboard,
    token: str,
    report: tuple[int, str, str],
    request: gr.Request | None,
    profile: Any,
) -> str:
    """Admin token: store a verifier's first look (submission id, outcome, record JSON) for one submission."""
    _refuse_unless_admin(lb, token, request, profile)
    submission_id, outcome, record_json = report
    if outcome not in (verify.VERIFIED, verify.FAILED, verify.UNVERIFIED):
        raise gr.Error("outcome must be 'verified', 'failed' or 'unverified'")
    try:
        record = json.loads(str(record_json)[:MAX_RECORD])
    except ValueError:
        raise gr.Error("record_json is not JSON") from None
    if not isinstance(record, dict) or not lb.db.verification_tasks(ids=[int(submission_id)], pending_only=False):
        raise gr.Error(f"no submission with id {str(submission_id)[:20]}")
    status = worker.record_first_look(lb.db, int(submission_id), outcome, record)
    return f"submission {int(submission_id)}: {status}"


def run_verify_claim(
    lb: Leaderboard, token: str, claim: tuple[str, str, str], request: gr.Request | None, profile: Any
) -> bool:
    """Admin token: take (``action`` "claim") or give back ("release") a row or reference run for one worker."""
    _refuse_unless_admin(lb, token, request, profile)
    item, worker_name, action = (str(x)[:200] for x in claim)
    if not item.startswith(("row:", "ref:")) or not worker_name:
        raise gr.Error("item must be 'row:ID' or 'ref:KEY', with the worker's name")
    if action == "release":
        lb.db.release(item, worker_name)
        return True
    return lb.db.claim(item, worker_name, worker.LEASE_S)


def run_reference_tasks(lb: Leaderboard, token: str, request: gr.Request | None, profile: Any) -> list[dict[str, str]]:
    """Admin token: the reference runs wanted (what a verifier runs), oldest first."""
    _refuse_unless_admin(lb, token, request, profile)
    return [spec_json(spec) for spec in lb.db.wanted_references()]


def run_reference_report(
    lb: Leaderboard, token: str, made: tuple[str, str], request: gr.Request | None, profile: Any
) -> str:
    """Admin token: store a made reference run (its JSON and explorer table in base64); the rows it decided, as
    JSON [[id, status], ...]."""
    _refuse_unless_admin(lb, token, request, profile)
    reference_json, explorer_b64 = (str(x) for x in made)
    if len(reference_json) > MAX_REFERENCE or len(explorer_b64) > MAX_REFERENCE:
        raise gr.Error("the reference run is too large")
    try:
        ref = Reference.from_json(json.loads(reference_json))
        explorer = base64.b64decode(explorer_b64, validate=True)
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise gr.Error(f"not a reference run ({type(exc).__name__})") from None
    if lb.db.reference_state(ref.spec.key) is None:
        raise gr.Error(f"no reference run {ref.spec.key} is wanted here")
    decided = worker.DatabaseStore(lb.db, lb.golds).add_reference(ref, explorer)
    if lb.queue is not None:
        lb.queue.notify()
    return json.dumps(decided)
