"""The one submission path: read → check → score → store.

The UI form, the ``/submit`` API and ``make demo`` (through ``submit_run_dir``) all call ``submit_files``, which runs
`_submit` on a `Submission` under the server's `Rules`: the form fields and the rate limit here, the uploads read
within limits (`spaces_app.uploads`), the ranking files parsed (`spaces_app.ranking_files`), the rankings checked
against the gold (`spaces_app.validation`), scored with ``metrics.scoring`` and stored (`Database.insert`). The
numbers stored are the server's, never the submitter's own ``results.json`` (which is only compared, and every
mismatch reported back). Every refusal — a bad file, the rate limit, an owned name, a duplicate — is one
`SubmissionError` raised by `_submit`, which otherwise returns the `Stored` row; the acceptance message is written
after the commit, so that nothing failing past it can turn a stored submission into a refusal.
"""

from __future__ import annotations

import math
import os
import re
import sys
import traceback
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ark_dataset import names as ark_names
from model_adapters.models.recipes import SYSTEM_TYPES
from spaces_app import captioner, identity, names, ranking_files, reference, uploads, validation, verify
from spaces_app import gold as gold_mod
from spaces_app.db import ROW, Database, DuplicateSubmission, NameTaken, NewSubmission, ScoreRow
from spaces_app.ranking_files import ParsedSubmission
from spaces_app.refusal import Duplicate, SubmissionError, clip, short, status_line
from spaces_app.uploads import Limits
from triad_dataset.contract import names as triad_names
from triad_dataset.contract.errors import TriadError

TRIAD_METRIC = "map"  # paper Table 2: mAP per subset
ARK_METRIC = "recall@1"  # ARK paper: Recall@1 is the primary metric
MISMATCH_TOL = 1e-6
TIES_KEY = "tie_sensitivity"  # summary key: per config, mAP with positives first / last within exact score ties
ALL_TIED_KEY = "all_tied"  # summary key: per config, the queries whose scores are all equal
MAX_NAME = 80
MAX_LINK = 300
MAX_FAMILY = 40
MAX_PARAMS = 10**15  # far above any model, far below SQLite's 64-bit integers
# The leaderboard's family names: the systems table's types (docs/models.md) a first stage can be, then the others.
FAMILIES = (*(t for t in SYSTEM_TYPES if t not in ("reranker", "captioner")), "lexical", "baseline", "other")


@dataclass(frozen=True)
class RateLimit:
    """At most ``attempts`` submissions per submitter in ``window_s`` seconds (env TRIAD_SPACE_RATE_LIMIT="N/SECONDS")."""

    attempts: int = 10
    window_s: float = 3600.0

    @classmethod
    def from_env(cls) -> RateLimit:
        raw = os.environ.get("TRIAD_SPACE_RATE_LIMIT", "").strip()
        if not raw:
            return cls()
        m = re.fullmatch(r"(\d+)\s*/\s*(\d+(?:\.\d+)?)", raw)
        if m is None:
            raise TriadError(f"TRIAD_SPACE_RATE_LIMIT={raw!r}: expected N/SECONDS, e.g. 10/3600")
        return cls(int(m.group(1)), float(m.group(2)))


@dataclass(frozen=True)
class Meta:
    """Checked model metadata."""

    model_name: str
    model_link: str
    family: str
    params: int | None
    submitter: str


@dataclass(frozen=True)
class Outcome:
    """What a submission attempt produced: the status message is shown to the user verbatim (as plain text)."""

    accepted: bool
    message: str
    submission_id: int | None = None
    benchmark: str | None = None
    mismatches: tuple[str, ...] = ()
    existing_id: int | None = None  # a refused duplicate: the stored submission it repeats


# --- metadata ------------------------------------------------------------------------------------------------
def _clean_text(value: Any, field_name: str, max_len: int, *, required: bool) -> str:
    text = "" if value is None else str(value)
    text = unicodedata.normalize("NFC", text).strip()
    if required and not text:
        raise SubmissionError(f"{field_name} is required")
    if len(text) > max_len:
        raise SubmissionError(f"{field_name} is {len(text)} characters long; the limit is {max_len}")
    bad = [c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp")]
    if bad:
        raise SubmissionError(f"{field_name} contains a control or invisible character (U+{ord(bad[0]):04X})")
    return text


def parse_params(value: Any) -> int | None:
    """Parameter count from 123456, "86M", "1.5B", "350k" or empty.

    >>> parse_params("1.5B"), parse_params("86m"), parse_params(""), parse_params(7000)
    (1500000000, 86000000, None, 7000)
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise SubmissionError(f"parameter count {value!r} is not a number")
    if isinstance(value, int | float):
        if not math.isfinite(value) or value < 0:
            raise SubmissionError(f"parameter count {value!r} is not a positive number")
        count = value
    else:
        m = re.fullmatch(r"\s*(\d{1,20}(?:\.\d{1,20})?)\s*([kKmMbBtT]?)\s*", str(value))
        if m is None:
            raise SubmissionError(f"parameter count {str(value)[:40]!r}: use a number such as 86000000, 86M or 1.5B")
        count = float(m.group(1)) * {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}[m.group(2).lower()]
    if count > MAX_PARAMS:
        raise SubmissionError(
            f"parameter count {str(value)[:40]}: more than {MAX_PARAMS:.0e}; give the model's real size"
        )
    return round(count)


def check_meta(model_name: Any, model_link: Any, family: Any, params: Any, submitter: Any) -> Meta:
    """Validate the form fields. The model name is shown as `names.clean_name` makes it (NFKC, invisible characters
    dropped); names are always displayed as text, never as markup."""
    try:
        name = names.clean_name(model_name, "model name", MAX_NAME)
    except names.BadName as exc:
        raise SubmissionError(str(exc)) from None
    link = _clean_text(model_link, "model link", MAX_LINK, required=False)
    if link and (not re.fullmatch(r"https?://[^\s<>\"'`]+", link)):
        raise SubmissionError("model link must be an http:// or https:// URL without spaces or quotes")
    fam = _clean_text(family, "family", MAX_FAMILY, required=False) or "other"
    who = _clean_text(submitter, "submitter", 200, required=False) or "anonymous"
    return Meta(name, link, fam, parse_params(params), who)


# --- scoring -------------------------------------------------------------------------------------------------
def score_triad_positions(gold: gold_mod.Gold, positions: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The one call from the Space into ``metrics.scoring`` for TRIAD (CONTRACTS §4).

    ``positions[config][q, r]`` is the pool position of the candidate ranked ``r + 1`` for the gold's ``q``-th query
    (already checked to be a permutation per query): exactly the orders `metrics.scoring.score_triad_arrays` takes,
    scored against the gold's columnar arrays (built once per server), with no Python object per candidate.
    """
    from metrics import scoring

    return scoring.score_triad_arrays({c: gold.columnar(c) for c in positions}, positions)


def _score(benchmark: str, gold: gold_mod.Gold, checked: validation.CheckedRankings) -> dict[str, Any]:
    """Score checked rankings with the shared metrics core (CONTRACTS §4)."""
    from metrics import scoring

    if benchmark == "triad":
        try:
            return score_triad_positions(gold, checked.positions)
        except ValueError as exc:  # checked already, so this is the server's fault, not the submitter's
            raise TriadError(f"the server could not score these rankings ({exc}); please report this") from exc
    return scoring.score_ark({s: gold.rows[s] for s in checked.ark}, checked.ark)


def _flatten(obj: Any, prefix: str = "") -> dict[str, float]:
    out: dict[str, float] = {}
    if isinstance(obj, Mapping):
        for k, val in obj.items():
            out.update(_flatten(val, f"{prefix}.{k}" if prefix else str(k)))
    elif validation.finite_number(obj):
        out[prefix] = float(obj)
    return out


def compare_results(
    server: Mapping[str, Any], results: Mapping[str, Any] | None, configs: Iterable[str], fingerprint: str
) -> tuple[list[str], list[str]]:
    """(mismatches, notes) between the server's per-config metrics and the submitter's results.json."""
    if results is None:
        return [], []
    notes: list[str] = []
    declared_fp = (
        (results.get("dataset") or {}).get("fingerprint") if isinstance(results.get("dataset"), Mapping) else None
    )
    if declared_fp and declared_fp != fingerprint:
        notes.append(
            f"results.json was computed on dataset {str(declared_fp)[:12]}, the server holds {fingerprint[:12]}"
        )
    theirs_all = results.get("configs")
    if not isinstance(theirs_all, Mapping):
        return [], notes + ["results.json has no 'configs' object: nothing compared"]
    mismatches: list[str] = []
    compared = 0
    for c in configs:
        theirs = theirs_all.get(c)
        if not isinstance(theirs, Mapping):
            notes.append(f"results.json has no numbers for {c}")
            continue
        ours = _flatten(server.get(c, {}).get("metrics", {}))
        for key, val in sorted(_flatten(theirs.get("metrics", {})).items()):
            if key not in ours:
                continue
            compared += 1
            if abs(ours[key] - val) > MISMATCH_TOL:
                mismatches.append(f"{c} {key}: results.json {val:.6g}, server {ours[key]:.6g}")
    notes.append(f"results.json: {compared - len(mismatches)} of {compared} numbers match the server's")
    return mismatches, notes


def _interval(entry: Mapping[str, Any], metric: str) -> tuple[float | None, float | None]:
    iv = (entry.get("intervals") or {}).get(metric)
    if isinstance(iv, Sequence) and len(iv) == 2 and all(validation.finite_number(x) for x in iv):
        return float(iv[0]), float(iv[1])
    return None, None


def rows_for_db(
    benchmark: str, scored: Mapping[str, Any], configs: Sequence[str]
) -> tuple[list[ScoreRow], dict[str, dict[str, float]], dict[str, Any]]:
    """What a row stores of a scoring output: its score rows, per-query values and summary without per-query maps."""
    metric = TRIAD_METRIC if benchmark == "triad" else ARK_METRIC
    per_query_key = "per_query_ap" if benchmark == "triad" else "positive_rank"  # CONTRACTS §4 output keys
    rows, per_query, summary = [], {}, {}
    for key, entry in scored.items():
        if key in configs and isinstance(entry, Mapping):
            value = (entry.get("metrics") or {}).get(metric)
            if not validation.finite_number(value):
                raise TriadError(f"server scoring of {key} gave no finite {metric}")  # a bug, not the submitter's
            lo, hi = _interval(entry, metric)
            rows.append(ScoreRow(key, metric, float(value), lo, hi, int(entry.get("n_queries", 0))))
            pq = entry.get(per_query_key)
            if isinstance(pq, Mapping):
                per_query[key] = {str(q): float(x) for q, x in pq.items() if validation.finite_number(x)}
            summary[key] = _lean({k: val for k, val in entry.items() if k != per_query_key})
        else:
            summary[key] = _lean(entry)
    return rows, per_query, summary


def _lean(node: Any) -> Any:
    """The summary without per-query maps (those live in the query_scores table)."""
    if isinstance(node, Mapping):
        return {k: _lean(val) for k, val in node.items() if not str(k).startswith("per_query")}
    return node


def _headline(benchmark: str, rows: Sequence[ScoreRow]) -> str:
    names = triad_names.DISPLAY_NAMES if benchmark == "triad" else {}
    order = {c: i for i, c in enumerate(triad_names.TASK_CONFIGS + ark_names.SUBTYPES)}
    parts = [
        f"{names.get(r.config, r.config)} {r.value:.3f}" for r in sorted(rows, key=lambda r: order.get(r.config, 99))
    ]
    return ("mAP: " if benchmark == "triad" else "R@1: ") + ", ".join(parts)


# --- names, run identity ----------------------------------------------------------------------------------------
def name_claim(db: Database, meta: Meta, *, login: bool) -> tuple[str, str | None]:
    """(ownership key to claim or respect, owner claiming it) for a name no registry model goes by, or a refusal.

    Such a name belongs to its first owner: the Hub user (login on) or the local owner of a board without login;
    an anonymous remote client owns nothing and cannot take an owned name. The claim itself is made in the
    submission's transaction (`Database.insert`), which refuses a name claimed meanwhile with the same message."""
    key = names.name_key(meta.model_name)
    owner = identity.name_owner(meta.submitter)
    holder = db.name_owner(key)
    if holder is not None and holder != owner:
        raise SubmissionError(name_taken(meta.model_name, meta.submitter, login=login))
    return key, owner


def registry_name_rule(name: str, reserved: str, results: Mapping[str, Any] | None) -> None:
    """Refuse a registry model's name for a run that does not name that model.

    A registry model's name (by its confusable skeleton: "MiniLM", "Qwen/Qwen3-VL-Embedding-8B", ...) belongs to
    runs of that model, checked against the leaderboard's own run of it (spaces_app/verify.py), never to a
    submitter."""
    if verify.claimed_entry(results) != reserved:
        raise SubmissionError(
            f"model name {short(name)} stands for the registry model {reserved!r}; only a run of "
            f"that model may use it (its rows are checked by re-encoding); name your own model distinctly"
        )


def name_taken(name: str, submitter: str, *, login: bool) -> str:
    """The refusal of an owned name; it suggests logging in only where login exists and the submitter is not."""
    hint = (
        ", or log in with the account that submitted it"
        if login and not submitter.startswith(identity.USER_PREFIX)
        else ""
    )
    return (
        f"model name {short(name)} (or one that looks the same) belongs to another submitter; choose a "
        f"distinct name{hint}"
    )


MODEL_KEYS = ("name", "revision", "source", "source_kind", "input_pipeline")  # what a results.json says produced it


def run_info(results: Mapping[str, Any] | None, mismatches: Sequence[str]) -> dict[str, Any]:
    """What the run says about itself (shown in Details as claims, never used for scores) and how its numbers
    compared. results.json strings were cleaned and bounded when it was read (`uploads.clean_string`)."""
    if results is None:
        return {"results_json": "absent"}
    said, configs = results.get("model"), results.get("configs")
    model: Mapping[str, Any] = said if isinstance(said, Mapping) else {}
    theirs: Mapping[str, Any] = configs if isinstance(configs, Mapping) else {}
    has_numbers = any(isinstance(c, Mapping) and c.get("metrics") for c in theirs.values())
    info: dict[str, Any] = {"results_json": "differs" if mismatches else "matches" if has_numbers else "no numbers"}
    for key in MODEL_KEYS:
        val = model.get(key)
        if isinstance(val, str | int | float) and not isinstance(val, bool):
            info[f"model_{key}"] = uploads.clean_string(str(val))
    for key in ("variant", "complete"):
        val = results.get(key)
        if isinstance(val, bool | str):
            info[key] = val if isinstance(val, bool) else uploads.clean_string(val, 80)
    return info


def _rejected(reason: Any) -> Outcome:
    """The outcome of a refusal; a `Duplicate` keeps the id of the row it repeats."""
    return Outcome(False, status_line(reason), existing_id=getattr(reason, "existing_id", None))


def _duplicate(exc: DuplicateSubmission) -> Duplicate:
    """The refusal of a duplicate; a hidden row is never named."""
    which = (
        "an earlier submission that is not public"
        if exc.hidden
        else f"submission id {exc.existing_id} ({clip(exc.model_name)})"
    )
    if exc.same == "scores":
        reason = (
            f"these rankings score exactly as {which} on every query (a reordering that changes no score is "
            "not a new result)"
        )
    else:
        reason = f"these rankings were already submitted as {which}"
    return Duplicate(reason, exc.existing_id)


def score_digest(per_query: Mapping[str, Mapping[str, float]], configs: Sequence[str]) -> str:
    """sha256 of every per-query score of ``configs`` (rounded to 1e-12): equal for rankings that score the same."""
    import hashlib

    h = hashlib.sha256()
    for c in sorted(set(configs) & set(per_query)):
        h.update(b"\x00" + c.encode())
        for q in sorted(per_query[c]):
            h.update(f"{q}\x01{round(per_query[c][q], 12)!r}\x02".encode())
    return h.hexdigest()


# --- the flow ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Submission:
    """One submission as the form, the API or the command line gives it: its files and its form fields.

    ``submitter`` is the identity key (``spaces_app.identity``)."""

    paths: Sequence[str | Path]
    model_name: Any
    model_link: Any = ""
    family: Any = ""
    params: Any = None
    submitter: Any = "anonymous"


@dataclass(frozen=True)
class Rules:
    """What the server applies to a submission: size limits, the per-submitter rate limit (``rate_limited=False``:
    the operator's command line, which is not limited and writes nothing before an acceptance) and whether it has
    Hub login (messages may suggest it)."""

    limits: Limits
    rate_limit: RateLimit
    rate_limited: bool = True
    login: bool = False


@dataclass(frozen=True)
class Stored:
    """A submission committed to the database, with what its acceptance message reports."""

    submission_id: int
    benchmark: str
    configs: Sequence[str]
    rows: Sequence[ScoreRow]
    status: str
    verification: Mapping[str, Any]
    mismatches: Sequence[str]
    notes: Sequence[str]


def submit_files(
    db: Database,
    golds: gold_mod.GoldStore,
    paths: Sequence[str | Path],
    *,
    model_name: Any,
    model_link: Any = "",
    family: Any = "",
    params: Any = None,
    submitter: Any = "anonymous",
    limits: Limits | None = None,
    rate_limit: RateLimit | None = None,
    rate_limited: bool = True,
    login: bool = False,
) -> Outcome:
    """Validate, rescore and store one submission; every failure is an Outcome(accepted=False) with the reason.

    ``submitter`` is the identity key (``spaces_app.identity``); ``rate_limited=False`` (the operator's command line)
    skips the per-submitter limit and writes nothing before a submission is accepted; ``login``: the server has
    Hub login (messages may suggest it). Once the row is committed the answer is an acceptance, whatever happens
    after; before, a refusal, and nothing is stored.
    """
    submission = Submission(paths, model_name, model_link, family, params, submitter)
    rules = Rules(limits or Limits.from_env(), rate_limit or RateLimit.from_env(), rate_limited, login)
    try:
        result = _submit(db, golds, submission, rules)
    except (SubmissionError, TriadError) as exc:
        return _rejected(exc)
    except Exception as exc:  # a bug must not reach the client as Gradio's generic error, nor leak server details
        traceback.print_exc(file=sys.stderr)
        return _failed(exc)
    try:
        return _accepted(result)
    except Exception:  # the row is committed: the answer is an acceptance
        traceback.print_exc(file=sys.stderr)
        return _accepted_anyway(result.submission_id)


def _failed(exc: BaseException) -> Outcome:
    """The refusal of a submission the server failed on before storing it: storage failures named as such."""
    if _disk_full(exc):
        return _rejected("the server's storage is full; nothing could be written (please report this)")
    if _storage_failed(exc):
        return _rejected(
            "the server's storage failed (full or unwritable); nothing could be written (please report this)"
        )
    return _rejected(f"the server failed while checking this submission ({type(exc).__name__}); please report this")


def _accepted_anyway(sid: int) -> Outcome:
    return Outcome(
        True,
        f"Accepted: submission id {sid}, scored on the server (its details could not be listed "
        "here; see the leaderboard).",
        sid,
    )


def _disk_full(exc: BaseException) -> bool:
    import errno
    import sqlite3

    return (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)) or (
        isinstance(exc, sqlite3.OperationalError) and "full" in str(exc)
    )


def _storage_failed(exc: BaseException) -> bool:
    """A write the storage refused other than "full": SQLite's I/O and read-only errors (a full disk under WAL often
    reads "disk I/O error"), an OS input/output or read-only-filesystem error."""
    import errno
    import sqlite3

    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        return "disk i/o error" in text or "readonly" in text or "read-only" in text
    return isinstance(exc, OSError) and exc.errno in (errno.EIO, errno.EROFS)


def _keep_for_explorer(db: Database, sid: int, staged: Path) -> None:
    """Give the staged explorer file its row's name, retried once; runs past the commit, so nothing failing here
    turns the stored row into a refusal: a file that could not be stored is said on the row."""
    from spaces_app import explore_store

    for attempt in (1, 2):
        try:
            explore_store.commit(staged, db.path, sid)
            db.changed(ROW, sid)  # the row's listeners (the mirror) see its explorer file now
            return
        except Exception as exc:  # the row is committed: the answer stays an acceptance
            traceback.print_exc(file=sys.stderr)
            problem = f"{type(exc).__name__}: {exc}"[:200]
            print(f"submission {sid}: explorer rankings not stored, try {attempt} ({problem})", file=sys.stderr)
    explore_store.discard(staged)
    try:
        db.set_run_note(sid, explore_store.NOT_STORED, "not stored: the server's storage failed")
    except Exception:  # the storage is failing: the row stays, the Explorer says it has no file
        traceback.print_exc(file=sys.stderr)


def take_attempt(db: Database, submitter: str, limit: RateLimit, action: str = "submit") -> int:
    """Count and record one attempt of ``submitter`` (its row id), or refuse it past the rate limit."""
    attempt = db.take_attempt(submitter, limit.window_s, limit.attempts, action=action)
    if attempt is None:
        noun = "submissions" if action == "submit" else "requests"
        raise SubmissionError(
            f"rate limit reached ({limit.attempts} {noun} per {limit.window_s:.0f} s per submitter); try again later"
        )
    return attempt


def _submit(db: Database, golds: gold_mod.GoldStore, submission: Submission, rules: Rules) -> Stored:
    """Read, check, score and store one submission: the `Stored` row; every refusal raises `SubmissionError` (or
    `TriadError`), and nothing is stored then."""
    meta = check_meta(
        submission.model_name, submission.model_link, submission.family, submission.params, submission.submitter
    )
    attempt = take_attempt(db, meta.submitter, rules.rate_limit) if rules.rate_limited else None
    known = golds.known_configs()
    if not known:
        raise SubmissionError("this server holds no gold data (set TRIAD_SPACE_DATA / TRIAD_SPACE_ARK_DATA)")
    reserved = names.registry_model(meta.model_name)
    # an owned name is refused before anything is read; a registry model's name once the run says what it is
    key, owner = ("", None) if reserved is not None else name_claim(db, meta, login=rules.login)
    files = uploads.read_uploads(submission.paths, rules.limits)
    parsed = ranking_files.parse_uploads(files, rules.limits, known, golds.bounds())
    del files  # the raw bytes are not needed past parsing
    if reserved is not None:
        registry_name_rule(meta.model_name, reserved, parsed.results)
    benchmark = parsed.benchmark()
    gold = golds.get(benchmark)
    # duplicates are the same main-subset rankings, whatever optional reference configs come along
    main = triad_names.MAIN_CONFIGS if benchmark == "triad" else None
    digest = parsed.digest(main)
    dup = db.find_digest(benchmark, digest, gold.content)
    if dup is not None:
        raise _duplicate(DuplicateSubmission(dup[0], dup[1], dup[2]))
    done = evaluate(golds, parsed)
    configs, rows, per_query, summary = done.configs, done.rows, done.per_query, done.summary
    mismatches, notes = compare_results(done.scored, parsed.results, configs, gold.fingerprint)
    status, verification = verify.plan(benchmark, parsed, gold)
    from spaces_app import explore_store

    staged = explore_store.stage(db.path, done.explorer_table())  # before the commit: a full disk stores nothing
    try:
        sid = db.insert(
            NewSubmission(
                benchmark,
                meta.model_name,
                meta.model_link,
                meta.family,
                meta.params,
                meta.submitter,
                gold.fingerprint,
                digest,
                summary,
                mismatches,
                rows,
                per_query,
                run=run_info(parsed.results, mismatches),
                status=status,
                verify=verification,
                name_key=key,
                name_owner=owner,
                gold_content=gold.content,
                score_digest=score_digest(per_query, main or configs),
                attempt=attempt,
                reference=reference.spec_for(benchmark, gold.content, verification)
                if status == verify.PENDING
                else None,
            )
        )
    except DuplicateSubmission as exc:
        explore_store.discard(staged)
        raise _duplicate(exc) from None
    except NameTaken:
        explore_store.discard(staged)
        raise SubmissionError(name_taken(meta.model_name, meta.submitter, login=rules.login)) from None
    except BaseException:
        explore_store.discard(staged)
        raise
    _keep_for_explorer(db, sid, staged)
    return Stored(sid, benchmark, configs, rows, status, verification, mismatches, [*parsed.notes, *notes])


@dataclass(frozen=True)
class Evaluated:
    """Parsed rankings checked against the gold and scored: what a row stores, and the explorer's table."""

    benchmark: str
    gold: gold_mod.Gold
    parsed: ParsedSubmission
    checked: validation.CheckedRankings
    scored: Mapping[str, Any]
    configs: list[str]
    rows: list[ScoreRow]
    per_query: dict[str, dict[str, float]]
    summary: dict[str, Any]

    def explorer_table(self) -> Any:
        """What the query explorer keeps of these rankings (`spaces_app.explore_store`)."""
        from spaces_app import explore_store

        if self.benchmark == "triad":
            return explore_store.triad_table(self.gold, self.checked.positions)
        return explore_store.ark_table(self.parsed, self.scored)


def evaluate(golds: gold_mod.GoldStore, parsed: ParsedSubmission) -> Evaluated:
    """Check parsed rankings against the gold they name and score them as a row of the board."""
    benchmark = parsed.benchmark()
    gold = golds.get(benchmark)
    checked = validation.check_rankings(benchmark, gold, parsed)
    scored = _score(benchmark, gold, checked)
    configs = sorted(parsed.rankings)
    rows, per_query, summary = rows_for_db(benchmark, scored, configs)
    label = captioner.label_from_results(parsed.results)
    if label:  # ARK text-space runs: the captioner is part of the row
        summary[captioner.SUMMARY_KEY] = label
    if checked.positions:
        summary[TIES_KEY] = _tie_summary(gold, parsed, checked.positions)
    all_tied = {c: r.constant for c, r in parsed.rankings.items() if r.constant}
    if all_tied:  # queries whose order is the file's list order (flagged on the row, spaces_app/status.py)
        summary[ALL_TIED_KEY] = {"queries": all_tied, "of": {c: len(r.query_ids) for c, r in parsed.rankings.items()}}
    return Evaluated(benchmark, gold, parsed, checked, scored, configs, rows, per_query, summary)


def _accepted(stored: Stored) -> Outcome:
    """The acceptance of a stored submission: its id, headline numbers, check status, mismatches and notes."""
    lines = [
        f"Accepted: submission id {stored.submission_id} ({stored.benchmark.upper()}, {len(stored.configs)} configs), "
        "scored on the server.",
        _headline(stored.benchmark, stored.rows),
        _status_line(stored.status, stored.verification),
    ]
    if stored.mismatches:
        lines.append(
            f"{len(stored.mismatches)} number(s) in your results.json differ from the server's (the leaderboard "
            "shows the server's and marks the row):"
        )
        lines += [f"  - {m}" for m in stored.mismatches[:20]]
    lines += stored.notes
    return Outcome(True, "\n".join(lines), stored.submission_id, stored.benchmark, tuple(stored.mismatches))


def _tie_summary(gold: gold_mod.Gold, parsed: ParsedSubmission, positions: Mapping[str, np.ndarray]) -> dict[str, Any]:
    from spaces_app import ties

    out = {}
    for c, pos in positions.items():
        flat = ties.config_ties(parsed.rankings[c], pos, gold.indexes[c].qindex)
        if flat is not None:
            g = gold.columnar(c)
            out[c] = ties.tie_sensitivity(g.labels, g.mask, pos, flat)
    return out


def _status_line(status: str, verification: Mapping[str, Any]) -> str:
    if status == verify.PENDING:
        return (
            "Reproduction check: pending (every query will be compared with the leaderboard's own run of the named "
            "model; until then the row is marked unverified and unranked)."
        )
    return (
        f"Reproduction check: not possible ({verification.get('reason', 'self-reported')}); the row is marked "
        "unverified."
    )


def run_files(run_dir: Path) -> list[Path]:
    """A `triad run` folder's rankings/*.parquet and results.json, as a submission uploads them."""
    files = sorted((run_dir / ranking_files.RANKINGS_DIR).glob("*.parquet"))
    if (run_dir / ranking_files.RESULTS_FILE).is_file():
        files.append(run_dir / ranking_files.RESULTS_FILE)
    if not files:
        raise TriadError(f"{run_dir}: no {ranking_files.RANKINGS_DIR}/*.parquet files")
    return files


def submit_run_dir(
    db_path: str | Path,
    data_dirs: Mapping[str, str | Path] | Sequence[str | Path],
    run_dir: str | Path,
    *,
    model_name: str,
    model_link: str = "",
    family: str = "other",
    params: Any = None,
    submitter: str = identity.LOCAL,
) -> Outcome:
    """Submit a `triad run` output folder through the same validation and rescoring as the Space (used by the demo).

    ``data_dirs`` maps 'triad' / 'ark' to gold folders (or lists folders; each one's audit.json names its benchmark).
    Raises TriadError when the submission is rejected, so a demo never continues with a silently missing entry;
    a run the database already holds (the same rankings, or the same scores) is not an error: the outcome names the
    stored id (`existing_id`), so the demo can be re-run on the same database. The submitter is the local owner
    (`identity.LOCAL`), the same one as a browser on this machine.
    """
    run_dir = Path(run_dir)
    golds = gold_mod.require_gold(data_dirs) if isinstance(data_dirs, Mapping) else gold_mod.GoldStore(data_dirs)
    outcome = submit_files(  # the database file is created only when the run is accepted
        Database(db_path, create=False),
        golds,
        run_files(run_dir),
        model_name=model_name,
        model_link=model_link,
        family=family,
        params=params,
        submitter=submitter,
        rate_limited=False,
    )
    if not outcome.accepted and outcome.existing_id is None:
        raise TriadError(f"{run_dir}: {outcome.message}")
    return outcome
