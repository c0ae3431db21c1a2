"""A `QueryView` as HTML: the query, then the top k as a gallery with each candidate's role; all text escaped."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Final

from spaces_app.explorer import ImageKey, QueryView, Shown
from triad_dataset.contract import names as triad_names

ImageURI = Callable[[ImageKey | None], str | None]
TEXT_CHARS: Final = 160  # candidate text shown under a thumbnail
CSS: Final = """
body{font-family:system-ui,sans-serif;margin:16px;color:#222}
table.scores{border-collapse:collapse;margin:6px 0 12px}table.scores td,table.scores th{padding:2px 10px;border-bottom:1px solid #ddd;text-align:left}
td.ok{color:#1a7f37}td.bad{color:#cf222e}img.plot{max-width:48%;vertical-align:top}
.qv{font-family:system-ui,sans-serif;font-size:13px;color:#222;margin:0 0 18px}
.qv h4{margin:4px 0 6px;font-size:15px}
.qv .query{display:flex;gap:12px;align-items:flex-start;margin-bottom:8px}
.qv .query img{max-width:160px;border:1px solid #bbb}
.qv .facts,.qv .ranks{color:#555;margin:2px 0}
.qv ol.turns{margin:2px 0 2px 18px;padding:0}
.qv .grid{display:flex;flex-wrap:wrap;gap:8px}
.qv .cand{width:172px;border:3px solid #ccc;border-radius:6px;padding:4px;background:#fafafa;overflow-wrap:anywhere}
.qv h4,.qv .ranks,.qv .query{overflow-wrap:anywhere}
.qv .cand img{max-width:160px;max-height:160px;display:block;margin:0 auto 3px}
.qv .cand.positive{border-color:#1a7f37}.qv .cand.typed{border-color:#cf222e}.qv .cand.other{border-color:#bf8700}
.qv .role{font-weight:600}.qv .why{color:#333}.qv .text{color:#555;font-size:12px}.qv .score{color:#666;font-size:11px}
.qv-pair{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:16px}
nav.toc{border:1px solid #ddd;border-radius:6px;padding:4px 16px;margin:8px 0 16px;background:#fafafa}
nav.toc ol{margin:4px 0;columns:2}a.top{font-size:12px;font-weight:normal;margin-left:8px}
"""
TYPED: Final = frozenset(
    {
        triad_names.P_VIOLATION,
        triad_names.N_VIOLATION,
        triad_names.PN_VIOLATION,
        triad_names.IMPLICIT_VIOLATION,
        triad_names.CONFLICT_TRAP,
        "hard negative",
    }
)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _kind(shown: Shown) -> str:
    if shown.role == triad_names.POSITIVE:
        return "positive"
    return "typed" if shown.role in TYPED else "other" if shown.role in (triad_names.SIBLING, "visual") else ""


def _candidate(shown: Shown, uri: ImageURI) -> str:
    src = uri(shown.image)
    image = f'<img alt="{_e(shown.item_id)}" src="{src}">' if src else ""
    text = shown.text if len(shown.text) <= TEXT_CHARS else shown.text[: TEXT_CHARS - 1] + "…"
    score = f" · score {shown.score:.4f}" if shown.score is not None else ""
    why = shown.why if shown.why and shown.why != shown.role else ""
    return (
        f'<div class="cand {_kind(shown)}" data-role="{_e(shown.role)}" data-item="{_e(shown.item_id)}" '
        f'data-rank="{shown.rank}">{image}<div class="role">#{shown.rank} {_e(shown.role)}</div>'
        f'<div class="why">{_e(why)}</div><div class="text">{_e(text)}</div>'
        f'<div class="score">{_e(shown.item_id)}{score}</div></div>'
    )


def _query(view: QueryView, uri: ImageURI) -> str:
    src = uri(view.image)
    image = f'<img alt="query image" src="{src}">' if src else ""
    parts = [f"<div><b>Query text:</b> {_e(view.text) or '<i>none</i>'}</div>"]
    if view.reference:
        parts.insert(0, f'<div class="reference"><b>Reference product:</b> {_e(view.reference)}</div>')
    if view.instruction:
        parts.append(f"<div><b>Instruction:</b> {_e(view.instruction)}</div>")
    if view.turns:
        turns = "".join(f"<li>{_e(t)}</li>" for t in view.turns)
        parts.append(f'<div><b>Turns:</b><ol class="turns">{turns}</ol></div>')
    if view.conditions:
        parts.append(f"<div><b>Requested changes:</b> {_e('; '.join(view.conditions))}</div>")
    if view.facts:
        facts = " · ".join(f"{_e(k)}: {_e(v)}" for k, v in view.facts.items() if v)
        parts.append(f'<div class="facts">{facts}</div>')
    return f'<div class="query">{image}<div>{"".join(parts)}</div></div>'


def view_html(view: QueryView, uri: ImageURI, title: str = "") -> str:
    """One query's view: header with its AP (or RR) and positive ranks, the query, the top k gallery."""
    ranks = ", ".join(str(r) for r in view.positive_ranks[:20]) + (" …" if len(view.positive_ranks) > 20 else "")
    label = "positive at rank" if view.benchmark == "ark" else f"{len(view.positive_ranks)} positives at ranks"
    ties = ""
    scores = [s.score for s in view.shown if s.score is not None]
    if len(scores) > 1 and len(set(scores)) == 1:
        ties = " · every shown candidate has the same score (a tie: the order among them is the pool order)"
    head = f"{_e(title)} — " if title else ""
    return (
        f'<div class="qv" data-query="{_e(view.query_id)}"><h4>{head}{_e(view.config)} / {_e(view.query_id)}: '
        f"{view.value_name} {view.value:.3f}</h4>"
        f'<div class="ranks">{label} {ranks} of {view.n_ranked} ranked{_e(ties)}</div>'
        f'{_query(view, uri)}<div class="grid">{"".join(_candidate(s, uri) for s in view.shown)}</div></div>'
    )


def pair_html(views: Sequence[QueryView], titles: Sequence[str], uri: ImageURI) -> str:
    """Two (or more) submissions' views of one query side by side."""
    cells = "".join(f"<div>{view_html(v, uri, t)}</div>" for v, t in zip(views, titles, strict=True))
    return f'<div class="qv-pair">{cells}</div>'


def page(body: str, title: str) -> str:
    """A complete self-contained HTML page around `body` (no external resources)."""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
        f"<style>{CSS}</style></head><body>{body}</body></html>"
    )
