"""The leaderboard tabs' handlers: module-level functions of the leaderboard state, callable without Blocks.

`app.build_app` binds each to its `Leaderboard` (the bound method keeps the handler's name, which is the event's
name in Gradio, and its signature without `lb`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gradio as gr
import pandas as pd

from spaces_app import diagnostics as diag
from spaces_app import legend, plots, views
from spaces_app.board import Leaderboard
from triad_dataset.contract import names as triad_names

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MAIN = triad_names.MAIN_CONFIGS
REFERENCE = triad_names.REFERENCE_CONFIGS
ARK_AXES = ("domain", "reasoning_skill", "subtype")
MAIN_HEADERS = legend.headers(MAIN)  # "Abstraction I2C", ... (the page's column names)
REF_HEADERS = legend.headers(REFERENCE)
MAIN_LABELS = [MAIN_HEADERS[c] for c in MAIN]
COMPARE_NOTE = (
    "ΔmAP = mean over shared queries of AP(A) − AP(B); 95% paired bootstrap interval (3,000 resamples); "
    "Significant? = Holm-adjusted two-sided Wilcoxon p < 0.05 and an interval excluding 0 on the same "
    "side (the rule above)."
)


def triad_table(
    lb: Leaderboard, search: str = "", family: str = views.ALL_FAMILIES, sort_by: str = "", every_row: bool = False
) -> pd.DataFrame:
    """The TRIAD table: mAP per main subset, filtered by family and name, sorted by a column."""
    subs = views.filter_subs(lb.board("triad", MAIN, every_row=every_row), family, search)
    return views.for_display(
        views.score_table(
            subs,
            MAIN,
            sort_by=sort_by or MAIN_LABELS[0],
            labels=MAIN_HEADERS,
            status=lb.annotations("triad", MAIN),
            rank_all=every_row,
        )
    )


def reference_table(lb: Leaderboard, search: str = "", family: str = views.ALL_FAMILIES) -> pd.DataFrame:
    """The reference tasks' table (Self, Same), filtered like the TRIAD table."""
    subs = views.filter_subs(lb.board("triad", MAIN), family, search)
    return views.for_display(
        views.score_table(
            subs,
            list(REFERENCE),
            sort_by=REF_HEADERS[REFERENCE[0]],
            labels=REF_HEADERS,
            status=lb.annotations("triad", MAIN),
        )
    )


def legends(lb: Leaderboard) -> tuple[str, str, str]:
    """The column legends with the chance level of the gold now served, and ARK's chance line."""
    chances = lb.chance("triad")
    return (
        legend.legend_markdown(MAIN, chances) + "\n\n" + legend.CHANCE_NOTE,
        legend.legend_markdown(REFERENCE, chances),
        legend.ARK_COLUMNS + " " + legend.ark_chance_line(lb.chance("ark")),
    )


def detail(lb: Leaderboard, sid: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One submission's metadata and its per-subset intervals; two empty tables for an unknown id."""
    sub = lb.by_id(sid)
    if sub is None:
        return pd.DataFrame(), pd.DataFrame()
    return views.metadata_table(sub), views.for_display(views.detail_table(sub, MAIN + REFERENCE))


def diagnostics(lb: Leaderboard, sid: Any) -> tuple[Any, ...]:
    """The Diagnostics tab's panels for one submission, one value per `diagnostics.DIAGNOSTICS` entry in order."""
    sub = lb.by_id(sid)
    return diag.values(diag.DIAGNOSTICS, sub, lb.chance("triad") if sub is not None else {})


def _rank_cell(x: float) -> str:
    return "–" if x != x else f"{x:g}"


def rank_range(
    lb: Leaderboard, family: str = views.ALL_FAMILIES, every_row: bool = False
) -> tuple[Figure, pd.DataFrame, pd.DataFrame]:
    """The rank-range figure, the rank per subset and the rank agreement between subsets."""
    subs = views.filter_subs(lb.subs("triad", verified_only=not every_row), family)
    ranks = views.subset_ranks(subs, MAIN).map(_rank_cell).reset_index(names="Model")
    return plots.rank_range_figure(subs), ranks, views.for_display(views.rank_agreement(subs))


def compare(lb: Leaderboard, a: Any, b: Any) -> tuple[Figure | None, pd.DataFrame, str]:
    """Two submissions' paired comparison per subset: the forest plot, its table and how to read it."""
    sa, sb = lb.by_id(a), lb.by_id(b)
    if sa is None or sb is None:
        return None, pd.DataFrame(), "Pick two submissions."
    if sa["id"] == sb["id"]:
        return None, pd.DataFrame(), "Pick two different submissions."
    table = views.paired_comparison(sa, sb, lb.db.query_scores)
    note = f"A = id {sa['id']}: {sa['model_name']}\nB = id {sb['id']}: {sb['model_name']}\n" + COMPARE_NOTE
    return plots.delta_forest(table), views.for_display(table), note


def ark_configs(lb: Leaderboard) -> list[str]:
    """The ARK subtypes of the gold served; none without an ARK gold."""
    return list(lb.golds.get("ark").configs) if "ark" in lb.golds.available() else []


def ark_status(lb: Leaderboard, df: pd.DataFrame) -> pd.DataFrame:
    """The ARK table with each row's Status cell (spaces_app/status.py)."""
    if not len(df):
        return df
    return views.with_status(df, lb.annotations("ark", list(lb.golds.get("ark").configs)))


def ark_empty_state(lb: Leaderboard) -> tuple[dict[str, Any], str]:
    """The ARK tab's tables shown only with rows; else hidden, and a line saying why there are none."""
    if "ark" not in lb.golds.available():
        return gr.update(visible=False), legend.ARK_NOT_SERVED
    if not lb.board("ark", ark_configs(lb)):
        return gr.update(visible=False), legend.ARK_EMPTY
    return gr.update(visible=True), ""


def ark_tables(lb: Leaderboard) -> tuple[Any, ...]:
    """The ARK tab: the table by domain, the domain and skill bars each with its tables, subtypes, robustness."""
    subs = lb.board("ark", ark_configs(lb))
    fmt = views.for_display
    domain, skill = ARK_AXES[:2]

    def table(axis: str) -> pd.DataFrame:
        return fmt(ark_status(lb, views.ark_table(subs, axis)))

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


def refresh(lb: Leaderboard, search: str, family: str, sort_by: str, every_row: bool = False) -> tuple[Any, ...]:
    """Everything the page shows on load and after a submission: tables, pickers, ARK tab, status, legends."""
    t_choices = lb.choices("triad")
    fams = views.families(lb.subs("triad"))
    fam_value = family if family in fams else views.ALL_FAMILIES
    first = t_choices[0][1] if t_choices else None
    second = t_choices[1][1] if len(t_choices) > 1 else first
    return (
        triad_table(lb, search, fam_value, sort_by, every_row),
        gr.update(choices=fams, value=fam_value),
        reference_table(lb, search, fam_value),
        gr.update(choices=t_choices, value=first),
        gr.update(choices=t_choices, value=first),
        gr.update(choices=t_choices, value=first),
        gr.update(choices=t_choices, value=second),
        *ark_tables(lb),
        *ark_empty_state(lb),
        lb.status_line(),
        *legends(lb),
    )
