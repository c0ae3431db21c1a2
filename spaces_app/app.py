"""The TRIAD / ARK leaderboard Space (Gradio Blocks, no gradio_leaderboard).

Run locally with ``triad space`` or ``python spaces_app/app.py``; on a Hugging Face Space this file is the entry
point (see spaces_app/README.md). Every number shown comes from the server's own rescoring of the submitted
rankings (spaces_app/submit.py); every user string is shown in plain-text components only.
"""

from __future__ import annotations

import contextlib
import gc
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
from starlette.middleware import Middleware  # noqa: E402

from spaces_app import (  # noqa: E402
    answers,
    diagnostics,
    endpoints,
    explorer_tab,
    handlers,
    legend,
    mirror,
    moderation,
    significance,
    views,
)
from spaces_app.board import Leaderboard  # noqa: E402
from spaces_app.gold import require_gold  # noqa: E402
from spaces_app.guard import Sweeper, UploadGuard  # noqa: E402
from spaces_app.identity import UPLOAD_SUFFIXES, Guards  # noqa: E402
from spaces_app.settings import Settings  # noqa: E402
from spaces_app.submit import FAMILIES  # noqa: E402
from spaces_app.uploads import Limits  # noqa: E402
from spaces_app.validation import ARK_MIN_DEPTH  # noqa: E402
from spaces_app.worker import JOIN_S, VerifyQueue  # noqa: E402
from triad_dataset.contract.errors import TriadError  # noqa: E402

__all__ = ["Leaderboard", "build_app", "launch", "main"]
ADMIN_ACTIONS = moderation.ACTIONS
SUBMIT_CONCURRENCY = 2  # each submission in progress holds at most ~0.5 GB (docs/space.md)
UPLOAD_CACHE = (300, 600)  # every 5 min, delete uploads older than 10 min (Gradio's delete_cache)
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
REQUEST_HELP = """### Or ask the leaderboard to run a registry model itself
No files: the leaderboard runs the model on every query of the gold with its own code, and the result appears as
a row *evaluated by the leaderboard*. One request per model and gold; requests are rate limited.
"""
SUBMIT_HELP = """Upload what `triad run` wrote: the `rankings/*.parquet` files and `results.json`, or one zip of the
run folder. TRIAD needs the six main subsets (Self/Same optional); ARK needs every subtype the server holds.
The server checks and rescores everything; the status below names any problem. Nothing is stored on rejection.
"""
# Rank, id, model, its marker, one width per subset (the six fit a 1280 px window; long names wrap), then family,
# size, submitter, results.json, status and ties (all fit 1920 px)
MAIN_WIDTHS: list[str | int] = ["80px", "44px", "164px", "112px", *["116px"] * len(handlers.MAIN)]
MAIN_WIDTHS += ["100px", "72px", "96px", "112px", "280px", "100px"]
CSS = """
.gradio-container {max-width: 100% !important}
#status textarea {font-family: ui-monospace, monospace; font-size: 13px}
"""


def build_app(settings: Settings | None = None) -> gr.Blocks:
    """The Blocks app; endpoints /submit and /leaderboard are stable API names."""
    return layout(Leaderboard(settings or Settings.from_env()))


def layout(lb: Leaderboard) -> gr.Blocks:
    """The page's components and the wiring of their events to the handlers bound to ``lb``."""
    print(lb.status_line(), file=sys.stderr)
    answers.install()  # every error a client gets is one line
    main_labels = handlers.MAIN_LABELS
    # Gradio passes the Hub profile to a parameter annotated `gr.OAuthProfile | None`: with login on, the endpoints
    # that take one (spaces_app/endpoints.py)
    caller = endpoints.WithLogin if lb.settings.oauth else endpoints.Anonymous

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
                    wrap=True,
                    column_widths=MAIN_WIDTHS,
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
                diag_pick = gr.Dropdown(label="Submission", choices=[], elem_id="diagnostics-pick")
                panels = diagnostics_panels(diagnostics.DIAGNOSTICS)
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
                ark_empty = gr.Markdown(elem_id="ark-empty")
                with gr.Column(visible=False) as ark_body:
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
                gr.Markdown(REQUEST_HELP)
                with gr.Row():
                    r_model = gr.Dropdown(
                        label="Registry model",
                        choices=lb.requestable(),
                        allow_custom_value=True,
                        elem_id="request-model",
                    )
                    r_bench = gr.Radio(["triad", "ark"], value="triad", label="Benchmark", elem_id="request-bench")
                request_btn = gr.Button("Request an evaluation", elem_id="request")
                r_status = gr.Textbox(label="Request status", interactive=False, lines=3, elem_id="request-status")
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
            ark_body,
            ark_empty,
            about_status,
            main_legend,
            ref_legend,
            ark_legend,
        ]
        private = "private"
        refresh, rank_range = lb.bind(handlers.refresh), lb.bind(handlers.rank_range)
        triad_inputs, rank_outputs = [search, family, sort_by, every_row], [rr_plot, rr_table, tau_table]
        demo.load(refresh, triad_inputs, refresh_outputs, api_visibility=private)
        for trigger in (search.submit, family.change, sort_by.change, every_row.change):
            trigger(lb.bind(handlers.triad_table), triad_inputs, main_table, api_visibility=private)
            trigger(lb.bind(handlers.reference_table), [search, family], ref_table, api_visibility=private)
        detail_pick.change(lb.bind(handlers.detail), detail_pick, [meta_df, detail_df], api_visibility=private)
        diag_pick.change(lb.bind(handlers.diagnostics), diag_pick, panels, api_visibility=private)
        for trigger in (family.change, every_row.change):
            trigger(rank_range, [family, every_row], rank_outputs, api_visibility=private)
        demo.load(rank_range, [family, every_row], rank_outputs, api_visibility=private)
        cmp_btn.click(
            lb.bind(handlers.compare), [pick_a, pick_b], [cmp_plot, cmp_table, cmp_note], api_visibility=private
        )
        submit_btn.click(
            lb.bind(caller.submit),
            [files, f_name, f_link, f_family, f_params],
            status,
            api_name="submit",
            concurrency_limit=SUBMIT_CONCURRENCY,
        ).then(refresh, triad_inputs, refresh_outputs, api_visibility=private).then(
            rank_range, [family, every_row], rank_outputs, api_visibility=private
        )
        request_btn.click(
            lb.bind(caller.request_evaluation), [r_model, r_bench], r_status, api_name="request_evaluation"
        ).then(refresh, triad_inputs, refresh_outputs, api_visibility=private)
        if lb.settings.admin_token:
            a_btn.click(lb.bind(caller.admin), [a_token, a_id, a_action], [a_msg, a_table], api_visibility=private)
        gr.api(lb.bind(endpoints.leaderboard), api_name="leaderboard")
        gr.api(lb.bind(endpoints.submission), api_name="submission")
        gr.api(lb.bind(caller.verify_tasks), api_name="verify_tasks")
        gr.api(lb.bind(caller.verify_report), api_name="verify_report")
        gr.api(lb.bind(caller.verify_claim), api_name="verify_claim")
        gr.api(lb.bind(caller.reference_tasks), api_name="reference_tasks")
        gr.api(lb.bind(caller.reference_report), api_name="reference_report")
    return demo


def diagnostics_panels(declared: tuple[diagnostics.Diagnostic, ...]) -> list[gr.components.Component]:
    """One component per declared diagnostic, in order (call inside the Diagnostics tab); returns them."""
    out: list[gr.components.Component] = []
    i = 0
    while i < len(declared):
        row = declared[i].row
        group = [declared[i]]
        while row and i + len(group) < len(declared) and declared[i + len(group)].row == row:
            group.append(declared[i + len(group)])
        if row:
            with gr.Row():
                for column in _columns(group):
                    with gr.Column():
                        out += [_panel(d) for d in column]
        else:
            out.append(_panel(group[0]))
        i += len(group)
    return out


def _columns(group: list[diagnostics.Diagnostic]) -> list[list[diagnostics.Diagnostic]]:
    """A row's panels split into columns, a new column at each plot."""
    columns: list[list[diagnostics.Diagnostic]] = []
    for d in group:
        if d.kind == diagnostics.PLOT or not columns:
            columns.append([])
        columns[-1].append(d)
    return columns


def _panel(d: diagnostics.Diagnostic) -> gr.components.Component:
    """The component of one diagnostic: a plot, a table, or a table in a closed accordion."""
    elem = d.elem_id or None
    if d.kind == diagnostics.PLOT:
        return gr.Plot(label=d.label, elem_id=elem)
    if d.folded:
        with gr.Accordion(d.label, open=False):
            return gr.Dataframe(interactive=False, elem_id=elem)
    return gr.Dataframe(label=d.label, interactive=False, elem_id=elem)


def stop_threads(threads: tuple[Sweeper, VerifyQueue], lb: Leaderboard | None = None) -> None:
    """Stop the sweeper and the verify queue and wait for both to end, so that no thread is inside a model's native
    code when the interpreter exits (a check still running is abandoned, its row left pending); then let the mirror
    finish its uploads."""
    sweeper, queue = threads
    sweeper.stop()
    if not queue.shutdown():
        print(f"verify queue: still running after {JOIN_S:.0f} s; exiting without it.", file=sys.stderr)
    sweeper.join(JOIN_S)
    if lb is not None and lb.mirror is not None and not lb.mirror.flush(JOIN_S):
        print(f"mirror: uploads still running after {JOIN_S:.0f} s; exiting without them.", file=sys.stderr)


def launch(settings: Settings | None = None, **kwargs: Any) -> gr.Blocks:
    """Build and serve the app; refuses to start without any gold folder. ``kwargs`` go to ``Blocks.launch``.

    The objects alive once the gold is read are frozen (`gc.freeze`) until the server closes. Also started: the
    upload sweeper, the reproduction-check queue (spaces_app/worker.py) and, in the main thread, a SIGTERM handler
    that refuses new submissions, lets those in flight finish (up to `DRAIN_S`) and then stops."""
    settings = settings or Settings.from_env()
    require_gold({"triad": settings.triad_dir, "ark": settings.ark_dir})
    # the client address is the TCP peer unless TRIAD_SPACE_TRUSTED_PROXIES says otherwise (spaces_app/identity.py):
    # uvicorn must not rewrite it from X-Forwarded-For on its own
    os.environ["FORWARDED_ALLOW_IPS"] = ""
    lb = Leaderboard(settings)
    lb.mirror = mirror.start(lb.db, log=lambda line: print(line, file=sys.stderr))  # an empty database restored
    demo = layout(lb)
    # the gold read at start-up lives as long as the server: full garbage collections skip its objects from now on
    gc.collect()
    gc.freeze()
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
    lb.queue = VerifyQueue(lb.db, lb.golds.available(), golds=lb.golds)
    lb.queue.start()
    threads = (sweeper, lb.queue)
    if threading.current_thread() is threading.main_thread():

        def on_term(signum: int, frame: Any) -> None:
            left = lb.drain()
            time.sleep(1.0)  # the last answers leave through the queue's event streams
            stop_threads(threads, lb)
            print(f"SIGTERM: submissions drained ({left} unfinished); closing the server.", file=sys.stderr)
            raise KeyboardInterrupt  # Blocks.block_thread closes the server on it

        signal.signal(signal.SIGTERM, on_term)
    demo.queue(default_concurrency_limit=4)
    with contextlib.suppress(KeyboardInterrupt):  # raised by on_term: the server has stopped
        demo.launch(
            server_name=settings.host,
            server_port=settings.port,
            max_file_size=limits.max_file_bytes,
            css=CSS,
            footer_links=["api"],
            app_kwargs={"middleware": [guard]},
            **kwargs,
        )
    if not kwargs.get("prevent_thread_lock"):  # the server has stopped
        stop_threads(threads, lb)
        gc.unfreeze()
        return demo
    close = demo.close

    def closing(*args: Any, **kw: Any) -> None:
        stop_threads(threads, lb)
        close(*args, **kw)
        gc.unfreeze()  # a process that goes on (a test) collects what the server held again

    demo.close = closing  # type: ignore[method-assign]  # Blocks has no on-close hook: wrap this instance's close
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
