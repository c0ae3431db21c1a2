"""The Space's endpoints: submit, request_evaluation, submission, leaderboard, admin, and the verifier's API.

Module-level functions of the leaderboard state, callable without Blocks; `app.build_app` binds them to its
`Leaderboard`. Gradio injects the caller's Hub profile into a parameter annotated `gr.OAuthProfile | None` only,
so the endpoints that know who calls come twice: `Anonymous` (no login) and `WithLogin` (one parameter more).
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

import gradio as gr
import pandas as pd

from spaces_app import evaluation, moderation, views
from spaces_app.board import Leaderboard
from spaces_app.guard import UploadGone, claim_uploads
from spaces_app.handlers import MAIN, REFERENCE, ark_configs, ark_status
from spaces_app.refusal import status_line
from spaces_app.submit import RateLimit, submit_files
from spaces_app.verifier_api import (
    run_reference_report,
    run_reference_tasks,
    run_verify_claim,
    run_verify_report,
    run_verify_tasks,
)
from triad_dataset.contract.errors import TriadError

LOGIN_REQUIRED = "Rejected: log in with Hugging Face (the button at the top) to submit. Nothing was stored."
SHUTTING_DOWN = "Rejected: the server is shutting down; submit again in a minute. Nothing was stored."


def run_submission(
    lb: Leaderboard,
    files: list[str] | None,
    fields: tuple[str, str, str, str],
    request: gr.Request | None,
    profile: Any,
) -> str:
    """Read, check, score and store one submission; the status line the submitter sees.

    Args:
        lb: the leaderboard state.
        files: the uploaded paths (Gradio's temporary copies).
        fields: model name, model link, family, parameters as typed in the form.
        request: the HTTP request (the submitter's identity without login).
        profile: the Hub profile with login on, else None.
    """
    paths = [f if isinstance(f, str) else getattr(f, "name", str(f)) for f in (files or [])]
    if lb.settings.oauth and profile is None:
        return LOGIN_REQUIRED
    if not lb.enter():
        return SHUTTING_DOWN
    model_name, model_link, family, params = fields
    try:
        try:
            with claim_uploads(paths) as own:  # this submission's own copies, deleted when it is done
                outcome = submit_files(
                    lb.db,
                    lb.golds,
                    own,
                    model_name=model_name,
                    model_link=model_link,
                    family=family,
                    params=params,
                    submitter=lb.who(request, profile),
                    limits=lb.limits,
                    login=lb.settings.oauth,
                )
        except UploadGone as gone:
            return (
                f"Rejected: {str(gone)[:80]} is no longer on the server (uploads are kept "
                "10 minutes); upload it again. Nothing was stored."
            )
        if outcome.accepted and outcome.submission_id is not None:
            after_accept(lb, outcome.submission_id)
        return outcome.message
    finally:
        lb.leave()


def after_accept(lb: Leaderboard, sid: int) -> None:
    """Wake the verification queue: never allowed to turn an acceptance into an error (the mirror listens to the
    database itself)."""
    try:
        if lb.queue is not None:
            lb.queue.notify()
    except Exception as exc:  # reported on the server only; the submission is stored
        print(f"after submission {sid}: {type(exc).__name__}: {exc}", file=sys.stderr)


def submission(lb: Leaderboard, submission_id: int) -> dict[str, Any]:
    """One visible submission: metadata, per-config metrics with 95% intervals, diagnostics, results.json check."""
    sub = lb.by_id(submission_id, "triad") or lb.by_id(submission_id, "ark")
    if sub is None:
        raise gr.Error(f"no visible submission with id {str(submission_id)[:20]}")
    return views.submission_record(sub)


def leaderboard(lb: Leaderboard, benchmark: str = "triad") -> list[dict[str, Any]]:
    """The current leaderboard as rows (one dict per visible submission; TRIAD mAP per subset, or ARK R@1)."""
    if benchmark not in ("triad", "ark"):
        raise gr.Error("benchmark must be 'triad' or 'ark'")
    if benchmark == "ark":
        df = ark_status(lb, views.ark_table(lb.board("ark", ark_configs(lb))))
    else:
        df = views.score_table(
            lb.board("triad", MAIN),
            MAIN + REFERENCE,
            sort_by=views.display(MAIN[0]),
            status=lb.annotations("triad", MAIN),
        )  # the API keeps the paper's keys (I2C, ...)
    return [
        {str(k): (None if isinstance(v, float) and v != v else v) for k, v in row.items()}
        for row in df.to_dict(orient="records")
    ]


def run_admin(
    lb: Leaderboard, token: str, sid: Any, action: str, request: gr.Request | None, profile: Any
) -> tuple[str, pd.DataFrame]:
    """Apply one moderation action with the admin token; the message and, when authorized, every submission."""
    who = lb.who(request, profile)  # the Hub user with login on, so one account's guesses lock out only it
    if lb.settings.admin_token and lb.admin_locked(who):
        limit, window = lb.guards.admin_failures
        return (
            f"Too many wrong admin tokens from this client ({limit} in {window:.0f} s); try again later.",
            pd.DataFrame(),
        )
    msg = moderation.apply(lb.db, lb.settings.admin_token, token, sid, action)
    ok = moderation.authorized(lb.settings.admin_token, token)
    if lb.settings.admin_token:
        lb.db.record_attempt(who, accepted=ok, action="admin")
    if not ok:
        return msg, pd.DataFrame()
    return msg, views.admin_table(lb.db.submissions(include_hidden=True))


def run_request(lb: Leaderboard, model_name: str, benchmark: str, request: gr.Request | None, profile: Any) -> str:
    """Ask the leaderboard to run a registry model itself on one benchmark; the status line (`evaluation`)."""
    if lb.settings.oauth and profile is None:
        return LOGIN_REQUIRED.replace("to submit", "to request an evaluation")
    try:
        message = evaluation.request(
            lb.db, lb.golds, model_name, benchmark, lb.who(request, profile), RateLimit.from_env()
        )
    except TriadError as exc:
        return status_line(exc)
    except Exception as exc:  # a bug must not reach the client as Gradio's generic error
        traceback.print_exc(file=sys.stderr)
        return status_line(f"the server failed on this request ({type(exc).__name__}); please report this")
    if lb.queue is not None:
        lb.queue.notify()
    return message


class Anonymous:
    """The endpoints that know their caller, on a board without login (the caller is its client address)."""

    @staticmethod
    def submit(
        lb: Leaderboard,
        files: list[str] | None,
        model_name: str,
        model_link: str,
        family: str,
        params: str,
        request: gr.Request,
    ) -> str:
        """Submit a run's rankings/*.parquet and results.json (or a zip of the run folder); returns the status."""
        return run_submission(lb, files, (model_name, model_link, family, params), request, None)

    @staticmethod
    def admin(lb: Leaderboard, token: str, sid: Any, action: str, request: gr.Request) -> tuple[str, pd.DataFrame]:
        """Apply a moderation action (admin token); the result and every submission."""
        return run_admin(lb, token, sid, action, request, None)

    @staticmethod
    def verify_tasks(
        lb: Leaderboard, token: str, submission_id: int | None, request: gr.Request
    ) -> list[dict[str, Any]]:
        """Admin token: the submissions to re-encode (the pending ones, or one by id) with their secret samples."""
        return run_verify_tasks(lb, token, submission_id, request, None)

    @staticmethod
    def verify_report(
        lb: Leaderboard, token: str, submission_id: int, outcome: str, record_json: str, request: gr.Request
    ) -> str:
        """Admin token: store a verifier's result for one submission (outcome: verified | failed | unverified)."""
        return run_verify_report(lb, token, (submission_id, outcome, record_json), request, None)

    @staticmethod
    def request_evaluation(lb: Leaderboard, model_name: str, benchmark: str, request: gr.Request) -> str:
        """Ask the leaderboard to run a registry model itself (no files); returns the status."""
        return run_request(lb, model_name, benchmark, request, None)

    @staticmethod
    def verify_claim(lb: Leaderboard, token: str, item: str, worker: str, action: str, request: gr.Request) -> bool:
        """Admin token: take ("claim") or give back ("release") a row or reference run for one worker."""
        return run_verify_claim(lb, token, (item, worker, action), request, None)

    @staticmethod
    def reference_tasks(lb: Leaderboard, token: str, request: gr.Request) -> list[dict[str, str]]:
        """Admin token: the reference runs wanted."""
        return run_reference_tasks(lb, token, request, None)

    @staticmethod
    def reference_report(
        lb: Leaderboard, token: str, reference_json: str, explorer_b64: str, request: gr.Request
    ) -> str:
        """Admin token: store a made reference run; the rows it decided."""
        return run_reference_report(lb, token, (reference_json, explorer_b64), request, None)


class WithLogin:
    """The same endpoints with login on: Gradio passes the Hub profile to the `gr.OAuthProfile | None` parameter."""

    @staticmethod
    def submit(
        lb: Leaderboard,
        files: list[str] | None,
        model_name: str,
        model_link: str,
        family: str,
        params: str,
        request: gr.Request,
        profile: gr.OAuthProfile | None,
    ) -> str:
        """Submit a run's rankings/*.parquet and results.json (or a zip of the run folder); returns the status."""
        return run_submission(lb, files, (model_name, model_link, family, params), request, profile)

    @staticmethod
    def admin(
        lb: Leaderboard, token: str, sid: Any, action: str, request: gr.Request, profile: gr.OAuthProfile | None
    ) -> tuple[str, pd.DataFrame]:
        """Apply a moderation action (admin token); the result and every submission."""
        return run_admin(lb, token, sid, action, request, profile)

    @staticmethod
    def verify_tasks(
        lb: Leaderboard, token: str, submission_id: int | None, request: gr.Request, profile: gr.OAuthProfile | None
    ) -> list[dict[str, Any]]:
        """Admin token: the submissions to re-encode (the pending ones, or one by id) with their secret samples."""
        return run_verify_tasks(lb, token, submission_id, request, profile)

    @staticmethod
    def verify_report(
        lb: Leaderboard,
        token: str,
        submission_id: int,
        outcome: str,
        record_json: str,
        request: gr.Request,
        profile: gr.OAuthProfile | None,
    ) -> str:
        """Admin token: store a verifier's result for one submission (outcome: verified | failed | unverified)."""
        return run_verify_report(lb, token, (submission_id, outcome, record_json), request, profile)

    @staticmethod
    def request_evaluation(
        lb: Leaderboard, model_name: str, benchmark: str, request: gr.Request, profile: gr.OAuthProfile | None
    ) -> str:
        """Ask the leaderboard to run a registry model itself (no files); returns the status."""
        return run_request(lb, model_name, benchmark, request, profile)

    @staticmethod
    def verify_claim(
        lb: Leaderboard,
        token: str,
        item: str,
        worker: str,
        action: str,
        request: gr.Request,
        profile: gr.OAuthProfile | None,
    ) -> bool:
        """Admin token: take ("claim") or give back ("release") a row or reference run for one worker."""
        return run_verify_claim(lb, token, (item, worker, action), request, profile)

    @staticmethod
    def reference_tasks(
        lb: Leaderboard, token: str, request: gr.Request, profile: gr.OAuthProfile | None
    ) -> list[dict[str, str]]:
        """Admin token: the reference runs wanted."""
        return run_reference_tasks(lb, token, request, profile)

    @staticmethod
    def reference_report(
        lb: Leaderboard,
        token: str,
        reference_json: str,
        explorer_b64: str,
        request: gr.Request,
        profile: gr.OAuthProfile | None,
    ) -> str:
        """Admin token: store a made reference run; the rows it decided."""
        return run_reference_report(lb, token, (reference_json, explorer_b64), request, profile)
