"""The TRIAD / ARK leaderboard Space (Gradio Blocks, no gradio_leaderboard).

Run locally with ``triad space`` or ``python spaces_app/app.py``; on a Hugging Face Space this file is the entry
point (see spaces_app/README.md). Every number shown comes from the server's own rescoring of the submitted
rankings (spaces_app/submit.py); every user string is shown in plain-text components only.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
if __package__ in (None, ""):  # `python spaces_app/app.py`: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gradio as gr  # noqa: E402
import pandas as pd  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402

from spaces_app import (
    chance,
    explorer_tab,
    identity,
    legend,
    mirror,
    moderation,
    plots,
    significance,
    status,
    verify,
    views,
)  # noqa: E402
from spaces_app.db import Database  # noqa: E402
from spaces_app.gold import GoldStore, require_gold  # noqa: E402
from spaces_app.guard import Sweeper, UploadGone, UploadGuard, claim_uploads  # noqa: E402
from spaces_app.identity import UPLOAD_SUFFIXES, Guards  # noqa: E402
from spaces_app.settings import Settings  # noqa: E402
from spaces_app.submit import FAMILIES, submit_files  # noqa: E402
from spaces_app.uploads import Limits  # noqa: E402
from spaces_app.validation import ARK_MIN_DEPTH  # noqa: E402
from spaces_app.worker import JOIN_S, VerifyQueue  # noqa: E402
from triad_dataset.contract import names as triad_names  # noqa: E402
from triad_dataset.contract.errors import TriadError  # noqa: E402

MAIN = triad_names.MAIN_CONFIGS
REFERENCE = triad_names.REFERENCE_CONFIGS
ADMIN_ACTIONS = moderation.ACTIONS
SUBMIT_CONCURRENCY = 2  # each submission in progress holds at most ~0.5 GB (docs/space.md)
DRAIN_S = 120.0  # on SIGTERM, how long in-flight submissions may take to finish before the server exits
UPLOAD_CACHE = (300, 600)  # every 5 min, delete uploads older than 10 min (Gradio's delete_cache)
ARK_AXES = ("domain", "reasoning_skill", "subtype")
ARK_TOP = 100  # what `triad run` keeps of each ARK ranking (CONTRACTS §3; model_adapters.ranks.rank_plan.ARK_TOP)

INTRO = """# TRIAD leaderboard
Multimodal retrieval across three tracks: **Abstraction** (instance ↔ concept over WordNet, I2C and C2I),
**Constraints** (a reference product plus requested changes) and **State** (the same intent over a multi-turn
dialogue), on Fashion and Cars. Each subset is reported on its own (mAP, 3 decimals; what each column measures and
its chance level: under the table) — there is deliberately **no aggregate column**. Every number is recomputed on
this server from the submitted rankings against the gold labels it holds; submitted scores are never taken on
faith. ARK (knowledge × reasoning) has its own tab.
"""
ABOUT = f"""### How submissions work
1. Run `triad run --model NAME --data DIR --out RUN` (or `--encoder my_encoder.py:build` for your own model); the
   benchmark, TRIAD or ARK, is read from the dataset folder's audit.json.
2. Upload `RUN/rankings/*.parquet` and `RUN/results.json`, or a zip of the whole `RUN` folder, in the **Submit** tab
   (or with `gradio_client`: `Client(url).predict(files, model_name, model_link, family, params, api_name="/submit")`).
3. The server checks every file (known configs, every query exactly once, each TRIAD ranking a permutation of
   exactly that query's pool, each ARK ranking at least the top {ARK_MIN_DEPTH} of the subtype's gallery with the
   positive's rank, finite scores sorted best first, size limits; parquet and JSON only), rescores the rankings
   with the shared metrics core, compares your `results.json` and reports any difference. Nothing is stored on
   rejection; the same rankings cannot be submitted twice.

Statistics follow the paper: 95% query-bootstrap percentile intervals (3,000 resamples); in Compare, two-sided
Wilcoxon signed-rank tests with Holm correction over the compared subsets, rank-biserial effect sizes, and one
decision rule (a difference is significant only when the test and the interval agree).
"""
SUBMIT_HELP = """Upload what `triad run` wrote: the `rankings/*.parquet` files and `results.json`, or one zip of the
run folder. TRIAD needs the six main subsets (Self/Same optional); ARK needs every subtype the server holds.
The server checks and rescores everything; the status below names any problem. Nothing is stored on rejection.
"""
CSS = """
.gradio-container {max-width: 1280px !important}
#status textarea {font-family: ui-monospace, monospace; font-size: 13px}
"""


class Leaderboard:
    """Reads for the views; one instance per app."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.db = Database(settings.db_path)
        self.golds = GoldStore({"triad": settings.triad_dir, "ark": settings.ark_dir})
        self.limits = Limits.from_env()
        self.guards = Guards.from_env()
        self.plausibility = status.Plausibility.from_env()
        self.secret = self.db.secret()
        self._lock = threading.Lock()
        self._cache: dict[tuple, list[dict[str, Any]]] = {}
        self.queue: VerifyQueue | None = None  # the reproduction checks on this server's CPU (started by launch)
        self.draining = threading.Event()  # SIGTERM: finish what runs, take nothing new
        self._inflight = 0
        self._idle = threading.Condition()
        self._chance: dict[tuple, dict[str, float]] = {}
        for bench in self.golds.available():  # read the gold once at start-up
            self.golds.get(bench)

    def fingerprint(self, bench: str) -> str | None:
        return self.golds.get(bench).fingerprint if bench in self.golds.available() else None

    def chance(self, bench: str, axis: str | None = None) -> dict[str, float]:
        """Chance level per config (TRIAD mAP, ARK R@1; per ARK domain / reasoning skill with ``axis``) of the gold
        now served, computed once per gold fingerprint (spaces_app/chance.py)."""
        fp = self.fingerprint(bench)
        if fp is None:
            return {}
        key = (bench, axis, fp)
        with self._lock:
            hit = self._chance.get(key)
        if hit is None:
            gold = self.golds.get(bench)
            if bench == "triad":
                hit = chance.triad_chance(gold)
            else:
                hit = chance.ark_chance_by(gold, axis) if axis else chance.ark_chance(gold)
            with self._lock:
                self._chance[key] = hit
        return hit

    def card(self) -> str:
        """The served TRIAD gold folder's dataset card (README.md without its YAML header); "" when it has none."""
        path = self.golds.available().get("triad")
        try:
            return legend.card_markdown((path / "README.md").read_text(encoding="utf-8")) if path else ""
        except OSError:
            return ""

    def content(self, bench: str) -> str | None:
        return self.golds.get(bench).content if bench in self.golds.available() else None

    def all_subs(self, bench: str, *, include_hidden: bool = False) -> list[dict[str, Any]]:
        """Every visible submission of a benchmark, whatever gold it was scored on; cached until the database
        revision changes."""
        if bench not in self.golds.available():
            return []
        key = (bench, include_hidden, self.db.revision())
        with self._lock:
            hit = self._cache.get(key)
        if hit is None:
            hit = self.db.submissions(bench, include_hidden=include_hidden)
            with self._lock:
                self._cache = {k: val for k, val in self._cache.items() if k[2] == key[2]}
                self._cache[key] = hit
        return hit

    def annotations(self, bench: str, configs: list[str]) -> dict[int, dict[str, Any]]:
        return status.annotate(
            self.all_subs(bench),
            configs,
            self.content(bench),
            self.fingerprint(bench),
            self.plausibility,
            self.chance(bench),
        )

    def board(self, bench: str, configs: list[str], *, every_row: bool = False) -> list[dict[str, Any]]:
        """The rows a table lists: failed rows only with ``every_row``; older-gold rows listed (marked)."""
        notes = self.annotations(bench, configs)
        return [s for s in self.all_subs(bench) if every_row or notes[int(s["id"])]["status"] != verify.FAILED]

    def subs(self, bench: str, *, verified_only: bool = False) -> list[dict[str, Any]]:
        """Rows scored on the gold served now, failed ones left out (what comparisons and ranks are made of)."""
        content, fp = self.content(bench), self.fingerprint(bench)
        out = [s for s in self.all_subs(bench) if status.current(s, content, fp) and s.get("status") != verify.FAILED]
        return [s for s in out if s.get("status") == verify.VERIFIED] if verified_only else out

    def by_id(self, sid: Any, bench: str = "triad") -> dict[str, Any] | None:
        try:
            sid = int(sid)
        except (TypeError, ValueError):
            return None
        return next((s for s in self.all_subs(bench) if s["id"] == sid), None)

    def choices(self, bench: str) -> list[tuple[str, int]]:
        return [(f"{s['id']}: {s['model_name']}", int(s["id"])) for s in self.subs(bench)]

    def status_line(self) -> str:
        """Gold fingerprints and counts for the About tab (no server paths: this goes to every visitor)."""
        parts = []
        for bench in ("triad", "ark"):
            fp = self.fingerprint(bench)
            parts.append(
                f"{bench.upper()} gold: "
                + (f"dataset {fp[:12]}, {len(self.subs(bench))} visible submissions" if fp else "not served")
            )
        return "\n".join(parts + [mirror.status()])

    def who(self, request: gr.Request | None, profile: Any = None) -> str:
        """The identity key of a request: the Hub user when logged in, the local owner for this machine on a board
        without login, else the (hashed) client address."""
        username = getattr(profile, "username", None) if profile is not None else None
        return identity.request_key(
            request, self.secret, self.guards.trusted_proxies, username, local_owner=not self.settings.oauth
        )

    def admin_locked(self, who: str) -> bool:
        limit, window = self.guards.admin_failures
        return self.db.count_attempts(who, time.time() - window, action="admin", failed_only=True) >= limit

    # --- in-flight submissions, for a graceful SIGTERM ----------------------------------------------------------
    def enter(self) -> bool:
        with self._idle:
            if self.draining.is_set():
                return False
            self._inflight += 1
            return True

    def leave(self) -> None:
        with self._idle:
            self._inflight -= 1
            self._idle.notify_all()

    def drain(self, timeout: float = DRAIN_S) -> int:
        """Refuse new submissions and wait until those in flight are answered; returns how many were left."""
        self.draining.set()
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._inflight and time.monotonic() < deadline:
                self._idle.wait(max(0.0, deadline - time.monotonic()))
            return self._inflight


def build_app(settings: Settings | None = None) -> gr.Blocks:
    """The Blocks app; endpoints /submit and /leaderboard are stable API names."""
    lb = Leaderboard(settings or Settings.from_env())
    print(lb.status_line(), file=sys.stderr)
    main_headers, ref_headers = legend.headers(MAIN), legend.headers(REFERENCE)  # "Abstraction I2C", ... (the page)
    main_labels = [main_headers[c] for c in MAIN]

    # --- view functions ---------------------------------------------------------------------------------
    def triad_table(
        search: str = "", family: str = views.ALL_FAMILIES, sort_by: str = "", every_row: bool = False
    ) -> pd.DataFrame:
        subs = views.filter_subs(lb.board("triad", MAIN, every_row=every_row), family, search)
        return views.for_display(
            views.score_table(
                subs,
                MAIN,
                sort_by=sort_by or main_labels[0],
                labels=main_headers,
                status=lb.annotations("triad", MAIN),
                rank_all=every_row,
            )
        )

    def reference_table(search: str = "", family: str = views.ALL_FAMILIES) -> pd.DataFrame:
        subs = views.filter_subs(lb.board("triad", MAIN), family, search)
        return views.for_display(
            views.score_table(
                subs,
                list(REFERENCE),
                sort_by=ref_headers[REFERENCE[0]],
                labels=ref_headers,
                status=lb.annotations("triad", MAIN),
            )
        )

    def legends() -> tuple[str, str, str]:
        """The column legends with the chance level of the gold now served, and ARK's chance line."""
        chances = lb.chance("triad")
        return (
            legend.legend_markdown(MAIN, chances) + "\n\n" + legend.CHANCE_NOTE,
            legend.legend_markdown(REFERENCE, chances),
            legend.ARK_COLUMNS + " " + legend.ark_chance_line(lb.chance("ark")),
        )

    def detail(sid: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
        sub = lb.by_id(sid)
        if sub is None:
            return pd.DataFrame(), pd.DataFrame()
        return views.metadata_table(sub), views.for_display(views.detail_table(sub, MAIN + REFERENCE))

    def diagnostics(sid: Any):
        """Heatmap, traps, hops; the depth, profile and dialogue-cost plots each with its table; paper tables."""
        sub = lb.by_id(sid)
        if sub is None:
            empty = pd.DataFrame()
            return None, empty, empty, None, empty, None, empty, None, empty, empty
        chances = lb.chance("triad")
        fmt = views.for_display
        return (
            views.entry_rate_figure(sub),
            fmt(views.trap_table(sub)),
            fmt(views.hop_table(sub)),
            plots.depth_plot(sub, chances.get(MAIN[1])),
            fmt(views.depth_table(sub)),
            plots.profile_plot(sub, chances),
            fmt(plots.profile_long(sub)),
            plots.dialogue_cost_plot(sub),
            fmt(views.dialogue_cost_table(sub)),
            fmt(views.paper_diagnostics_table(sub)),
        )

    def rank_range(family: str = views.ALL_FAMILIES, every_row: bool = False):
        subs = views.filter_subs(lb.subs("triad", verified_only=not every_row), family)
        ranks = views.subset_ranks(subs, MAIN).map(lambda x: "–" if x != x else f"{x:g}").reset_index(names="Model")
        return views.rank_range_figure(subs), ranks, views.for_display(views.rank_agreement(subs))

    def compare(a: Any, b: Any) -> tuple[Any, pd.DataFrame, str]:
        sa, sb = lb.by_id(a), lb.by_id(b)
        if sa is None or sb is None:
            return None, pd.DataFrame(), "Pick two submissions."
        if sa["id"] == sb["id"]:
            return None, pd.DataFrame(), "Pick two different submissions."
        table = views.paired_comparison(sa, sb, lb.db.query_scores)
        note = (
            f"A = id {sa['id']}: {sa['model_name']}\nB = id {sb['id']}: {sb['model_name']}\n"
            "ΔmAP = mean over shared queries of AP(A) − AP(B); 95% paired bootstrap interval (3,000 resamples); "
            "Significant? = Holm-adjusted two-sided Wilcoxon p < 0.05 and an interval excluding 0 on the same "
            "side (the rule above)."
        )
        return plots.delta_forest(table), views.for_display(table), note

    def ark_status(df: pd.DataFrame) -> pd.DataFrame:
        """The ARK table with each row's Status cell (spaces_app/status.py)."""
        if not len(df):
            return df
        return views.with_status(df, lb.annotations("ark", list(lb.golds.get("ark").configs)))

    def ark_tables() -> tuple[Any, ...]:
        """The ARK tab: the table by domain, the domain and skill bars each with its tables, subtypes, robustness."""
        subs = lb.board("ark", list(lb.golds.get("ark").configs) if "ark" in lb.golds.available() else [])
        fmt = views.for_display
        domain, skill = ARK_AXES[:2]

        def table(axis: str) -> pd.DataFrame:
            return fmt(ark_status(views.ark_table(subs, axis)))

        return (
            table(domain),
            plots.ark_bars(subs, domain, lb.chance("ark", domain)),
            fmt(plots.ark_long(subs, domain)),
            plots.ark_bars(subs, skill, lb.chance("ark", skill)),
            fmt(plots.ark_long(subs, skill)),
            table(skill),
            table("subtype"),
            fmt(views.ark_robustness(subs)),
        )

    def refresh(search: str, family: str, sort_by: str, every_row: bool = False):
        t_choices = lb.choices("triad")
        fams = views.families(lb.subs("triad"))
        fam_value = family if family in fams else views.ALL_FAMILIES
        first = t_choices[0][1] if t_choices else None
        second = t_choices[1][1] if len(t_choices) > 1 else first
        return (
            triad_table(search, fam_value, sort_by, every_row),
            gr.update(choices=fams, value=fam_value),
            reference_table(search, fam_value),
            gr.update(choices=t_choices, value=first),
            gr.update(choices=t_choices, value=first),
            gr.update(choices=t_choices, value=first),
            gr.update(choices=t_choices, value=second),
            *ark_tables(),
            lb.status_line(),
            *legends(),
        )

    def run_submission(
        files: list[str] | None,
        model_name: str,
        model_link: str,
        family: str,
        params: str,
        request: gr.Request | None,
        profile: Any,
    ) -> str:
        paths = [f if isinstance(f, str) else getattr(f, "name", str(f)) for f in (files or [])]
        if lb.settings.oauth and profile is None:
            return "Rejected: log in with Hugging Face (the button at the top) to submit. Nothing was stored."
        if not lb.enter():
            return "Rejected: the server is shutting down; submit again in a minute. Nothing was stored."
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
                _after_accept(outcome.submission_id)
            return outcome.message
        finally:
            lb.leave()

    def _after_accept(sid: int) -> None:
        """Mirroring and the verification queue: never allowed to turn an acceptance into an error."""
        try:
            if lb.queue is not None:
                lb.queue.notify()
            stored = next((s for s in lb.db.submissions(include_hidden=True) if s["id"] == sid), None)
            if stored is not None:
                mirror.mirror(stored)
        except Exception as exc:  # reported on the server only; the submission is stored
            print(f"after submission {sid}: {type(exc).__name__}: {exc}", file=sys.stderr)

    if lb.settings.oauth:

        def submit(
            files: list[str] | None,
            model_name: str,
            model_link: str,
            family: str,
            params: str,
            request: gr.Request,
            profile: gr.OAuthProfile | None,
        ) -> str:
            """Submit a run's rankings/*.parquet and results.json (or a zip of the run folder); returns the status."""
            return run_submission(files, model_name, model_link, family, params, request, profile)
    else:

        def submit(
            files: list[str] | None, model_name: str, model_link: str, family: str, params: str, request: gr.Request
        ) -> str:
            """Submit a run's rankings/*.parquet and results.json (or a zip of the run folder); returns the status."""
            return run_submission(files, model_name, model_link, family, params, request, None)

    def submission(submission_id: int) -> dict[str, Any]:
        """One visible submission: metadata, per-config metrics with 95% intervals, diagnostics, results.json check."""
        sub = lb.by_id(submission_id, "triad") or lb.by_id(submission_id, "ark")
        if sub is None:
            raise gr.Error(f"no visible submission with id {str(submission_id)[:20]}")
        return views.submission_record(sub)

    def leaderboard(benchmark: str = "triad") -> list[dict[str, Any]]:
        """The current leaderboard as rows (one dict per visible submission; TRIAD mAP per subset, or ARK R@1)."""
        if benchmark not in ("triad", "ark"):
            raise gr.Error("benchmark must be 'triad' or 'ark'")
        if benchmark == "ark":
            subs = lb.board("ark", list(lb.golds.get("ark").configs) if "ark" in lb.golds.available() else [])
            df = ark_status(views.ark_table(subs))
        else:
            df = views.score_table(
                lb.board("triad", MAIN),
                MAIN + REFERENCE,
                sort_by=views.display(MAIN[0]),
                status=lb.annotations("triad", MAIN),
            )  # the API keeps the paper's keys (I2C, ...)
        return [
            {k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}
            for row in df.to_dict(orient="records")
        ]

    def run_admin(
        token: str, sid: Any, action: str, request: gr.Request | None, profile: Any
    ) -> tuple[str, pd.DataFrame]:
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

    if lb.settings.oauth:

        def admin(
            token: str, sid: Any, action: str, request: gr.Request, profile: gr.OAuthProfile | None
        ) -> tuple[str, pd.DataFrame]:
            return run_admin(token, sid, action, request, profile)
    else:

        def admin(token: str, sid: Any, action: str, request: gr.Request) -> tuple[str, pd.DataFrame]:
            return run_admin(token, sid, action, request, None)

    def _verifier(token: str, request: gr.Request | None, profile: Any = None) -> str | None:
        """None when the admin token is right (and the caller not locked out), else the refusal.

        The caller is keyed as in `admin`: the Hub user with login on, so one account's wrong tokens lock out
        only that account."""
        who = lb.who(request, profile)
        if not lb.settings.admin_token:
            return "verification API disabled: TRIAD_SPACE_ADMIN_TOKEN is not set"
        if lb.admin_locked(who):
            return "too many wrong admin tokens from this client; try again later"
        ok = moderation.authorized(lb.settings.admin_token, token)
        lb.db.record_attempt(who, accepted=ok, action="admin")
        return None if ok else "wrong admin token"

    def run_verify_tasks(
        token: str, submission_id: int | None, request: gr.Request | None, profile: Any
    ) -> list[dict[str, Any]]:
        refusal = _verifier(token, request, profile)
        if refusal:
            raise gr.Error(refusal)
        ids = None if submission_id in (None, "", 0) else [int(submission_id)]
        return lb.db.verification_tasks(ids=ids, pending_only=ids is None)

    def run_verify_report(
        token: str, submission_id: int, outcome: str, record_json: str, request: gr.Request | None, profile: Any
    ) -> str:
        refusal = _verifier(token, request, profile)
        if refusal:
            raise gr.Error(refusal)
        if outcome not in (verify.VERIFIED, verify.FAILED, verify.UNVERIFIED):
            raise gr.Error("outcome must be 'verified', 'failed' or 'unverified'")
        try:
            record = json.loads(str(record_json)[:2_000_000])
        except ValueError:
            raise gr.Error("record_json is not JSON") from None
        if not isinstance(record, dict) or not lb.db.set_verification(int(submission_id), outcome, record):
            raise gr.Error(f"no submission with id {str(submission_id)[:20]}")
        return f"submission {int(submission_id)}: {outcome}"

    if lb.settings.oauth:

        def verify_tasks(
            token: str, submission_id: int | None, request: gr.Request, profile: gr.OAuthProfile | None
        ) -> list[dict[str, Any]]:
            """Admin token: the submissions to re-encode (the pending ones, or one by id) with their secret samples."""
            return run_verify_tasks(token, submission_id, request, profile)

        def verify_report(
            token: str,
            submission_id: int,
            outcome: str,
            record_json: str,
            request: gr.Request,
            profile: gr.OAuthProfile | None,
        ) -> str:
            """Admin token: store a verifier's result for one submission (outcome: verified | failed | unverified)."""
            return run_verify_report(token, submission_id, outcome, record_json, request, profile)
    else:

        def verify_tasks(token: str, submission_id: int | None, request: gr.Request) -> list[dict[str, Any]]:
            """Admin token: the submissions to re-encode (the pending ones, or one by id) with their secret samples."""
            return run_verify_tasks(token, submission_id, request, None)

        def verify_report(token: str, submission_id: int, outcome: str, record_json: str, request: gr.Request) -> str:
            """Admin token: store a verifier's result for one submission (outcome: verified | failed | unverified)."""
            return run_verify_report(token, submission_id, outcome, record_json, request, None)

    # --- layout -----------------------------------------------------------------------------------------
    # uploaded files are deleted once their submission is read; the rest (uploads never submitted) within minutes
    with gr.Blocks(title="TRIAD leaderboard", analytics_enabled=False, delete_cache=UPLOAD_CACHE) as demo:
        gr.Markdown(INTRO)
        gr.Markdown(legend.links_markdown(), elem_id="links")
        if lb.settings.oauth:
            gr.LoginButton()
        with gr.Tabs():
            with gr.Tab("TRIAD", id="triad"):
                with gr.Row():
                    search = gr.Textbox(label="Search model name", placeholder="substring", scale=3)
                    family = gr.Dropdown(
                        choices=[views.ALL_FAMILIES], value=views.ALL_FAMILIES, label="Family", scale=2
                    )
                    sort_by = gr.Dropdown(
                        choices=main_labels + [views.MODEL_COL, views.PARAMS_COL],
                        value=main_labels[0],
                        label="Sort by",
                        scale=2,
                    )
                    every_row = gr.Checkbox(
                        label="Every row: failed ones too, ranks among all rows", value=False, scale=2
                    )
                main_table = gr.Dataframe(
                    label="mAP per subset (click a header to sort; no aggregate by design)",
                    interactive=False,
                    datatype="str",
                    elem_id="main-table",
                )
                with gr.Accordion("What the columns mean, and chance level", open=True):
                    main_legend = gr.Markdown(elem_id="legend")
                with gr.Accordion("Details: bootstrap intervals and metadata", open=False):
                    detail_pick = gr.Dropdown(label="Submission", choices=[])
                    with gr.Row():
                        meta_df = gr.Dataframe(label="Metadata", interactive=False, datatype="str", wrap=True, scale=2)
                        detail_df = gr.Dataframe(
                            label="Per subset (95% bootstrap interval)", interactive=False, scale=3
                        )
            with gr.Tab("Reference tasks", id="reference"):
                gr.Markdown(
                    "Self and Same are reference tasks (paper §3): reported separately, not part of the main table."
                )
                ref_table = gr.Dataframe(interactive=False, datatype="str", elem_id="reference-table")
                ref_legend = gr.Markdown()
            with gr.Tab("Diagnostics", id="diagnostics"):
                diag_pick = gr.Dropdown(label="Submission", choices=[])
                heatmap = gr.Plot(label="Typed-negative top-10 entry rate")
                trap_df = gr.Dataframe(label="Conflict traps (state subsets)", interactive=False)
                hop_df = gr.Dataframe(label="Per-hop I2C (other-hop positives stay in place)", interactive=False)
                with gr.Row():
                    with gr.Column():
                        depth_plot = gr.Plot(label="C2I mAP by concept depth", elem_id="depth-plot")
                        with gr.Accordion("C2I mAP by concept depth: table", open=False):
                            depth_df = gr.Dataframe(interactive=False)
                    with gr.Column():
                        profile_plot = gr.Plot(label="Constraints mAP by profile D1–D7", elem_id="profile-plot")
                        with gr.Accordion("mAP by profile: table", open=False):
                            profile_df = gr.Dataframe(interactive=False)
                cost_plot = gr.Plot(label="Dialogue cost: AP(state) − AP(constraints)", elem_id="cost-plot")
                with gr.Accordion("Dialogue cost: table", open=False):
                    cost_df = gr.Dataframe(interactive=False)
                paper_df = gr.Dataframe(label="Paper C.3 / Fig. 9 / C.4 / D.3 diagnostics", interactive=False)
            with gr.Tab("Rank range", id="rank-range"):
                rr_plot = gr.Plot(label="Best and worst rank over the six subsets (paper Figure 2)")
                rr_table = gr.Dataframe(
                    label="Rank per subset (average ranks for ties)", interactive=False, datatype="str"
                )
                tau_table = gr.Dataframe(
                    label="Rank agreement between subsets: Kendall τ-b (paper C.2; ≥ 3 models)",
                    interactive=False,
                    datatype="str",
                )
            with gr.Tab("Compare", id="compare"):
                gr.Markdown(significance.RULE)
                with gr.Row():
                    pick_a = gr.Dropdown(label="Model A", choices=[])
                    pick_b = gr.Dropdown(label="Model B", choices=[])
                cmp_btn = gr.Button("Compare")
                cmp_note = gr.Textbox(label="Reading", interactive=False, lines=3)
                cmp_plot = gr.Plot(label="ΔmAP (A − B) per subset", elem_id="compare-plot")
                with gr.Accordion("Paired comparison per subset: table", open=False):
                    cmp_table = gr.Dataframe(interactive=False, elem_id="compare-table")
            explorer_tab.build(lb, demo)
            with gr.Tab("ARK", id="ark"):
                gr.Markdown(legend.ARK_TAB_NOTE.format(top=ARK_TOP, depth=ARK_MIN_DEPTH))
                ark_legend = gr.Markdown()
                ark_df = gr.Dataframe(
                    label="R@1 by knowledge domain", interactive=False, datatype="str", elem_id="ark-table"
                )
                ark_domain_plot = gr.Plot(label="R@1 per knowledge domain", elem_id="ark-domain-plot")
                with gr.Accordion("R@1 per knowledge domain with 95% intervals: table", open=False):
                    ark_domain_long = gr.Dataframe(interactive=False, datatype="str")
                ark_skill_plot = gr.Plot(label="R@1 per reasoning skill", elem_id="ark-skill-plot")
                with gr.Accordion("R@1 per reasoning skill: tables", open=False):
                    ark_skill_df = gr.Dataframe(label="R@1 by reasoning skill", interactive=False, datatype="str")
                    ark_skill_long = gr.Dataframe(label="with 95% intervals", interactive=False, datatype="str")
                ark_sub_df = gr.Dataframe(label="R@1 per subtype", interactive=False, datatype="str")
                ark_rob_df = gr.Dataframe(
                    label="Captioner robustness of text-space rows (paper H.1): Spearman ρ of "
                    "model rankings between captioners (≥ 3 models)",
                    interactive=False,
                    datatype="str",
                )
            with gr.Tab("Submit", id="submit"):
                gr.Markdown(SUBMIT_HELP)
                files = gr.File(
                    label="rankings/*.parquet + results.json, or a zip of the run folder",
                    file_count="multiple",
                    file_types=list(UPLOAD_SUFFIXES),
                    type="filepath",
                    elem_id="upload",
                )
                with gr.Row():
                    f_name = gr.Textbox(label="Model name", max_lines=1)
                    f_link = gr.Textbox(label="Model link (https://…)", max_lines=1)
                with gr.Row():
                    f_family = gr.Dropdown(
                        label="Family", choices=list(FAMILIES), value="other", allow_custom_value=True
                    )
                    f_params = gr.Textbox(label="Parameters (e.g. 86M, 1.5B)", max_lines=1)
                submit_btn = gr.Button("Submit", variant="primary")
                status = gr.Textbox(label="Status", interactive=False, lines=8, elem_id="status")
            if lb.settings.admin_token:  # no token configured: no moderation, so no Admin tab at all
                with gr.Tab("Admin", id="admin"):
                    with gr.Row():
                        a_token = gr.Textbox(label="Admin token", type="password", max_lines=1)
                        a_id = gr.Number(label="Submission id", precision=0)
                        a_action = gr.Radio(list(ADMIN_ACTIONS), value=ADMIN_ACTIONS[0], label="Action")
                    a_btn = gr.Button("Apply")
                    a_msg = gr.Textbox(label="Result", interactive=False)
                    a_table = gr.Dataframe(
                        label="All submissions (including hidden)", interactive=False, datatype="str"
                    )
            with gr.Tab("About", id="about"):
                gr.Markdown(ABOUT)
                about_status = gr.Textbox(label="Server status", interactive=False, lines=3)
                card = lb.card()
                if card:
                    with gr.Accordion("Dataset card of the TRIAD gold served here", open=False):
                        gr.Markdown(card, elem_id="dataset-card")

        refresh_outputs = [
            main_table,
            family,
            ref_table,
            detail_pick,
            diag_pick,
            pick_a,
            pick_b,
            ark_df,
            ark_domain_plot,
            ark_domain_long,
            ark_skill_plot,
            ark_skill_long,
            ark_skill_df,
            ark_sub_df,
            ark_rob_df,
            about_status,
            main_legend,
            ref_legend,
            ark_legend,
        ]
        private = {"api_visibility": "private"}
        demo.load(refresh, [search, family, sort_by, every_row], refresh_outputs, **private)
        for trigger in (search.submit, family.change, sort_by.change, every_row.change):
            trigger(triad_table, [search, family, sort_by, every_row], main_table, **private)
            trigger(reference_table, [search, family], ref_table, **private)
        detail_pick.change(detail, detail_pick, [meta_df, detail_df], **private)
        diag_pick.change(
            diagnostics,
            diag_pick,
            [heatmap, trap_df, hop_df, depth_plot, depth_df, profile_plot, profile_df, cost_plot, cost_df, paper_df],
            **private,
        )
        for trigger in (family.change, every_row.change):
            trigger(rank_range, [family, every_row], [rr_plot, rr_table, tau_table], **private)
        demo.load(rank_range, [family, every_row], [rr_plot, rr_table, tau_table], **private)
        cmp_btn.click(compare, [pick_a, pick_b], [cmp_plot, cmp_table, cmp_note], **private)
        submit_btn.click(
            submit,
            [files, f_name, f_link, f_family, f_params],
            status,
            api_name="submit",
            concurrency_limit=SUBMIT_CONCURRENCY,
        ).then(refresh, [search, family, sort_by, every_row], refresh_outputs, **private).then(
            rank_range, [family, every_row], [rr_plot, rr_table, tau_table], **private
        )
        if lb.settings.admin_token:
            a_btn.click(admin, [a_token, a_id, a_action], [a_msg, a_table], **private)
        gr.api(leaderboard, api_name="leaderboard")
        gr.api(submission, api_name="submission")
        gr.api(verify_tasks, api_name="verify_tasks")
        gr.api(verify_report, api_name="verify_report")
    demo.leaderboard = lb  # launch() starts the queue and the drain on it
    return demo


def stop_threads(threads: tuple[Sweeper, VerifyQueue]) -> None:
    """Stop the sweeper and the verify queue and wait for both to end, so that no thread is inside a model's native
    code when the interpreter exits (a check still running is abandoned, its row left pending)."""
    sweeper, queue = threads
    sweeper.stop()
    if not queue.shutdown():
        print(f"verify queue: still running after {JOIN_S:.0f} s; exiting without it.", file=sys.stderr)
    sweeper.join(JOIN_S)


def launch(settings: Settings | None = None, **kwargs: Any) -> gr.Blocks:
    """Build and serve the app; refuses to start without any gold folder. ``kwargs`` go to ``Blocks.launch``.

    Also started: the upload sweeper, the reproduction-check queue (spaces_app/worker.py) and, in the main thread,
    a SIGTERM handler that refuses new submissions, lets those in flight finish (up to `DRAIN_S`) and then stops."""
    settings = settings or Settings.from_env()
    require_gold({"triad": settings.triad_dir, "ark": settings.ark_dir})
    # the client address is the TCP peer unless TRIAD_SPACE_TRUSTED_PROXIES says otherwise (spaces_app/identity.py):
    # uvicorn must not rewrite it from X-Forwarded-For on its own
    os.environ["FORWARDED_ALLOW_IPS"] = ""
    demo = build_app(settings)
    lb: Leaderboard = demo.leaderboard
    limits = Limits.from_env()
    guard = Middleware(
        UploadGuard,
        guards=Guards.from_env(),
        secret=lb.secret,
        max_request_bytes=limits.max_file_bytes,
        admin_token=settings.admin_token,
    )
    sweeper = Sweeper()
    sweeper.start()
    lb.queue = VerifyQueue(lb.db, lb.golds.available())
    lb.queue.start()
    threads = (sweeper, lb.queue)
    if threading.current_thread() is threading.main_thread():

        def on_term(signum: int, frame: Any) -> None:
            left = lb.drain()
            time.sleep(1.0)  # the last answers leave through the queue's event streams
            stop_threads(threads)
            print(f"SIGTERM: submissions drained ({left} unfinished); closing the server.", file=sys.stderr)
            raise KeyboardInterrupt  # Blocks.block_thread closes the server on it

        signal.signal(signal.SIGTERM, on_term)
    demo.queue(default_concurrency_limit=4)
    try:
        demo.launch(
            server_name=settings.host,
            server_port=settings.port,
            max_file_size=limits.max_file_bytes,
            css=CSS,
            footer_links=["api"],
            app_kwargs={"middleware": [guard]},
            **kwargs,
        )
    except KeyboardInterrupt:
        pass
    if not kwargs.get("prevent_thread_lock"):  # the server has stopped
        stop_threads(threads)
        return demo
    close = demo.close

    def closing(*args: Any, **kw: Any) -> None:
        stop_threads(threads)
        close(*args, **kw)

    demo.close = closing
    return demo


def main() -> int:
    try:
        launch()
    except TriadError as exc:
        print(f"triad space: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
