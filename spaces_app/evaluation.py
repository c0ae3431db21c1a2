"""Evaluation requests: anyone may ask the leaderboard to run a registry model itself (no files to upload).

A request names a registry model and a benchmark; it is rate limited per requester and accepted once per model
identity and gold: it marks that reference run as wanted with a requester (`Database.want_reference`). When the run
is made — by the Space's own queue for the models it loads, else by a verifier machine (`triad space verify`) —
`make_rows` puts it on the board as a row "evaluated by the leaderboard": the run's own numbers, verified by
construction, as the Open LLM Leaderboard evaluates its requests.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

from spaces_app import names, verify
from spaces_app.db import ROW, Database, DuplicateSubmission, NewSubmission, ScoreRow
from spaces_app.db_mirror import LEADERBOARD
from spaces_app.local_models import runs_here
from spaces_app.reference import Reference, RefSpec
from spaces_app.refusal import SubmissionError, short
from spaces_app.submit import RateLimit, score_digest, take_attempt
from triad_dataset.contract import names as triad_names

BENCHMARKS: Final = ("triad", "ark")


def _entry(model_name: Any) -> Any:
    """The registry entry a requested name stands for (its name, Hub id or look-alike), or a refusal."""
    try:
        from model_adapters.models.registry import find_entry
    except ImportError:
        raise SubmissionError("this server has no model registry: it evaluates no model itself") from None
    try:
        name = names.clean_name(model_name, "model name")
    except names.BadName as exc:
        raise SubmissionError(str(exc)) from None
    found = find_entry(name) or find_entry(names.registry_model(name) or "")
    if found is None:
        raise SubmissionError(
            f"model {short(name)} is not in this leaderboard's registry; submit a run of it instead (Submit tab)"
        )
    entry = found[0]
    from model_adapters.models.catalog import status

    if entry.random_init:
        raise SubmissionError(f"model {entry.name} is a test model with random weights: its numbers are not results")
    if status(entry) in ("API", "refused"):
        why = "an API model, which runs at its provider" if status(entry) == "API" else "refused by its recipe"
        raise SubmissionError(f"model {entry.name} is {why}: the leaderboard cannot run it itself")
    return entry


def request(db: Database, golds: Any, model_name: Any, benchmark: Any, requester: str, limit: RateLimit | None) -> str:
    """Queue the leaderboard's own run of a registry model on one served gold; the status line, or a refusal
    (`SubmissionError`). ``limit``: the requester's rate limit (None: the operator, not limited)."""
    bench = str(benchmark or "triad").strip().lower()
    if bench not in BENCHMARKS or bench not in golds.available():
        raise SubmissionError(f"benchmark {short(benchmark)}: this server serves {', '.join(golds.available())}")
    if limit is not None:
        take_attempt(db, requester, limit, action="request")
    entry = _entry(model_name)
    spec = RefSpec(bench, golds.get(bench).content, entry.name, str(entry.revision or ""), "full", "")
    state = db.reference_state(spec.key)
    if state is not None and state["requested_by"]:
        where = f"submission id {state['row_id']}" if state["row_id"] is not None else "in the queue"
        raise SubmissionError(f"{entry.name} on this {bench.upper()} gold was requested already ({where})")
    db.want_reference(spec, requested_by=requester)
    where = "this Space's CPU" if runs_here(entry.name) else "a verifier machine with the model (`triad space verify`)"
    return (
        f"Accepted: the leaderboard will run {entry.name} on every {bench.upper()} query itself (on {where}); its "
        'row appears as "evaluated by the leaderboard" once the run is made.'
    )


def _row(ref: Reference, gold_fingerprint: str) -> NewSubmission:
    """The board row of a requested reference run: its own scores, verified as the leaderboard's run."""
    from model_adapters.models.catalog import system_type
    from model_adapters.models.registry import get_entry

    entry = get_entry(ref.spec.spec)
    hub = names.hub_ids(entry.name)
    scores = [ScoreRow(c, **v) for c, v in ref.scores.items()]
    per_query = {c: {q: float(v[0]) for q, v in per.items()} for c, per in ref.queries.items()}
    digest = hashlib.sha256(f"reference:{ref.spec.key}".encode()).hexdigest()
    record = {
        "evaluated_by": LEADERBOARD,
        "spec": ref.spec.spec,
        "revision": ref.spec.revision,
        "variant": ref.spec.variant,
        "reference": ref.spec.key,
        "input_pipeline": "verified",
    }
    model = ref.meta.get("model") or {}
    run = {"results_json": "matches", **{f"model_{k}": str(v) for k, v in model.items() if v is not None}}
    return NewSubmission(
        ref.spec.benchmark,
        entry.name,
        f"https://huggingface.co/{hub[0]}" if hub else "",
        system_type(entry),
        None,
        LEADERBOARD,
        gold_fingerprint,
        digest,
        ref.summary,
        [],
        scores,
        per_query,
        run=run,
        status=verify.VERIFIED,
        verify=record,
        gold_content=ref.spec.gold_content,
        score_digest=score_digest(
            per_query, triad_names.MAIN_CONFIGS if ref.spec.benchmark == "triad" else list(per_query)
        ),
        same_scores_allowed=True,  # an honest submission of the same run may be on the board already
    )


def make_rows(db: Database, golds: Any) -> int:
    """Put every made, requested reference run on the board (once); how many rows were added."""
    from spaces_app import explore_store

    added = 0
    for state in db.requested_references():
        ref = db.reference(state["key"])
        if ref is None:
            continue
        bench = ref.spec.benchmark
        served = bench in golds.available() and golds.get(bench).content == ref.spec.gold_content
        fingerprint = golds.get(bench).fingerprint if served else ref.spec.gold_content
        try:
            sid = db.insert(_row(ref, fingerprint))
        except DuplicateSubmission as exc:  # a submitted row holds exactly these scores: it stands for the run
            db.set_reference_row(ref.spec.key, exc.existing_id)
            continue
        table = db.reference_explorer(ref.spec.key)
        if table is not None:
            explore_store.save_bytes(db.path, sid, table)
            db.changed(ROW, sid)
        db.set_reference_row(ref.spec.key, sid)
        added += 1
    return added
