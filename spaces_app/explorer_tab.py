"""The Space's query explorer tab: a submission (or two), a subset, a query, and what each ranked first.

The handlers are module-level functions of the leaderboard state (`Leaderboard`: its database, golds, settings);
`build` only lays out the components and wires them. Only submissions the board shows can be explored.
"""

from __future__ import annotations

import html
import math
import secrets
import threading
from pathlib import Path
from typing import Any, Final

import gradio as gr

from ark_dataset import names as ark_names
from spaces_app import explore_store
from spaces_app import explorer as ex
from spaces_app.board import Leaderboard
from spaces_app.explorer_html import CSS, pair_html, view_html
from spaces_app.gold import Gold
from spaces_app.refusal import short
from spaces_app.thumbs import Thumbnails
from triad_dataset.contract import names as triad_names

MODES: Final = ("worst AP", "largest difference (two submissions)", "random", "by query id")
NOTE: Final = (
    "Pick a submission (and optionally a second one), a subset and a query: the query as the model saw it, then "
    "the submission's top k. Each candidate carries the dataset's role for it — positive, or which requirement it "
    "violates — and the rank of every positive is listed. The worst query is the one with the lowest AP (ARK: "
    "reciprocal rank of the positive)."
)
EMPTY: Final = "No {bench} submission on the board yet: once a run is submitted, its worst query is shown here first."
BEFORE: Final = "Pick a submission and a subset, then Show."
_LOCK = threading.Lock()
_CORPORA: dict[tuple[str, str], tuple[ex.Corpus, Thumbnails]] = {}


def _message(text: str) -> str:
    return f'<div class="qv"><p>{html.escape(text)}</p></div>'


def configs(benchmark: str) -> list[str]:
    """The subsets one can explore: TRIAD's task configs, ARK's subtypes."""
    return list(triad_names.TASK_CONFIGS) if benchmark == "triad" else list(ark_names.SUBTYPES)


def choices(lb: Leaderboard, benchmark: str) -> list[tuple[str, int]]:
    """(label, id) of every submission the board shows for this benchmark, newest first."""
    return [(f"{s['id']}: {s['model_name']}", int(s["id"])) for s in reversed(lb.all_subs(benchmark))]


def _corpus(lb: Leaderboard, benchmark: str) -> tuple[Gold, ex.Corpus, Thumbnails]:
    gold = lb.golds.get(benchmark)
    key = (str(gold.path), gold.fingerprint)
    with _LOCK:
        if key not in _CORPORA:
            corpus = ex.Corpus(gold.path)
            root = Path(lb.settings.db_path).with_name(Path(lb.settings.db_path).name + ".thumbs")
            _CORPORA[key] = (corpus, Thumbnails(corpus, gold.fingerprint, root))
        corpus, thumbs = _CORPORA[key]
    return gold, corpus, thumbs


def _pick(mode: str, values: list[dict[str, float]], query_id: str) -> str | None:
    if mode == MODES[3]:
        return query_id.strip() if query_id.strip() in values[0] else None
    if mode == MODES[2]:
        return secrets.choice(sorted(values[0])) if values[0] else None
    if mode == MODES[1] and len(values) == 2:
        found = ex.moved_most(values[0], values[1], 1)
        return found[0] if found else None
    found = ex.worst(values[0], 1)
    return found[0] if found else None


def render(
    lb: Leaderboard,
    benchmark: str,
    first: Any,
    second: Any,
    config: str,
    mode: str,
    query_id: str = "",
    k: float = 10,
) -> str:
    """The HTML of the chosen query for one or two submissions; a one-line message when nothing can be shown."""
    if benchmark not in lb.golds.available():
        return _message(f"this Space serves no {benchmark.upper()} gold")
    visible = {int(s["id"]): s for s in lb.all_subs(benchmark)}
    ids = [int(x) for x in (first, second) if x not in (None, "")]
    if not ids or any(i not in visible for i in ids):
        return _message("pick a submission shown on the board")
    if config not in configs(benchmark):
        return _message("pick a subset")
    if mode == MODES[1] and len(ids) < 2:
        return _message("pick a second submission to find the query whose AP differs most")
    stored = [explore_store.load(lb.settings.db_path, i, config) for i in ids]
    for i, (tops, _) in zip(ids, stored, strict=True):
        if not tops:
            note = (visible[i].get("run") or {}).get(explore_store.NOT_STORED)
            why = f"its explorer file was {note}" if note else "it predates the explorer"
            return _message(f"submission {i} has no stored rankings for {config} ({why})")
    values = [lb.db.query_scores(i, config) for i in ids]
    chosen = _pick(mode, values, query_id)
    if chosen is None:
        return _message(f"no query {short(query_id.strip())} in {config}" if mode == MODES[3] else "no query to show")
    gold, corpus, thumbs = _corpus(lb, benchmark)
    row = next((r for r in gold.rows[config] if r["query_id"] == chosen), None)
    if row is None or any(chosen not in tops for tops, _ in stored):
        return _message(f"query {short(chosen)} is not in every chosen submission's {config} rankings")
    top = top_k(k)
    views = [
        ex.query_view(
            benchmark, corpus, config, row, tops[chosen], top, ranks[chosen] if benchmark == "triad" else None
        )
        for tops, ranks in stored
    ]
    titles = [f"{i}: {visible[i]['model_name']}" for i in ids]
    body = (
        view_html(views[0], thumbs.data_uri, titles[0])
        if len(views) == 1
        else pair_html(views, titles, thumbs.data_uri)
    )
    return f"<style>{CSS}</style>{body}"


def top_k(k: Any) -> int:
    """How many candidates to show: ``k`` within 1 and `explore_store.TOP_STORED`; the default for anything that
    is not a finite number (None, NaN, text)."""
    try:
        value = float(k)
    except (TypeError, ValueError):
        return ex.TOP_K
    return max(1, min(int(value), explore_store.TOP_STORED)) if math.isfinite(value) else ex.TOP_K


def explorer_choices(lb: Leaderboard, benchmark: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], str]:
    """The pickers for a benchmark with its newest submission and first subset preselected, and that submission's
    worst query; without any submission, the pickers empty and a line saying so."""
    options: list[tuple[str, int | str]] = [*choices(lb, benchmark)]
    subsets = configs(benchmark)
    first = options[0][1] if options else None
    if first is None:
        shown = _message(EMPTY.format(bench=benchmark.upper()))
    else:
        shown = render(lb, benchmark, first, None, subsets[0], MODES[0])
    return (
        gr.update(choices=options, value=first),
        gr.update(choices=[("none", ""), *options], value=""),
        gr.update(choices=subsets, value=subsets[0] if options else None),
        shown,
    )


def explorer_show(lb: Leaderboard, benchmark: str, a: Any, b: Any, cfg: str, how: str, qid: str, top: float) -> str:
    """`render` with the Explorer tab's inputs (an empty query id box gives "")."""
    return render(lb, benchmark, a, b, cfg, how, qid or "", top)


def build(lb: Leaderboard, demo: gr.Blocks) -> None:
    """The Explorer tab (call inside `gr.Tabs`)."""
    with gr.Tab("Explorer", id="explorer"):
        gr.Markdown(NOTE)
        with gr.Row():
            bench = gr.Radio(["triad", "ark"], value="triad", label="Benchmark", elem_id="explorer-bench")
            first = gr.Dropdown(label="Submission", choices=[], elem_id="explorer-first")
            second = gr.Dropdown(label="Second submission (optional)", choices=[], elem_id="explorer-second")
        with gr.Row():
            config = gr.Dropdown(label="Subset", choices=configs("triad"), value=None, elem_id="explorer-config")
            mode = gr.Radio(list(MODES), value=MODES[0], label="Which query", elem_id="explorer-mode")
            query = gr.Textbox(label="Query id (for 'by query id')", elem_id="explorer-query")
            k = gr.Slider(1, explore_store.TOP_STORED, value=ex.TOP_K, step=1, label="Top k", elem_id="explorer-k")
        show = gr.Button("Show", elem_id="explorer-show")
        out = gr.HTML(_message(BEFORE), elem_id="explorer-view")
    pickers, outputs = lb.bind(explorer_choices), [first, second, config, out]
    bench.change(pickers, bench, outputs, api_visibility="private")
    demo.load(pickers, bench, outputs, api_visibility="private")
    show.click(lb.bind(explorer_show), [bench, first, second, config, mode, query, k], out, api_visibility="private")
