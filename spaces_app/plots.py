"""The leaderboard's plots, each drawn from the same table the page shows one click below it.

    delta_forest(paired_comparison(...))        Compare: ΔmAP (A − B) per subset with its 95% paired interval
    depth_plot(sub) / depth_table(sub)          C2I mAP by concept depth, with intervals (TRIAD §5.1, Fig. 3b)
    profile_plot(sub) / profile_long(sub)       constraints mAP by profile D1–D7, with intervals (TRIAD §5.2)
    dialogue_cost_plot(sub)                     AP(state) − AP(constraints) by domain × session × turns (TRIAD B.1)
    ark_bars(subs, axis) / ark_long(subs, axis) ARK R@1 per knowledge domain or reasoning skill, with intervals
    rank_range_figure(subs) / subset_ranks      best and worst rank of each model over the six subsets (Figure 2)
    entry_rate_figure(sub) / entry_rate_matrix  typed-negative top-10 entry rate per role and subset (heatmap)

No Gradio here; figures are matplotlib `Figure`s outside pyplot's registry (safe in worker threads). User strings
(model names) reach a figure only through `views.plain` (mathtext off).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ark_dataset import names as ark_names
from spaces_app import legend, significance, views
from spaces_app.cells import ark_label, figure, rounded
from spaces_app.views import ark_macro, depth_table, dialogue_cost_table, plain
from triad_dataset.contract import names as n

if TYPE_CHECKING:
    from matplotlib.figure import Figure

LO, HI = "95% CI low", "95% CI high"
MAX_ARK_MODELS = 8  # bars per group; the table below the plot lists every model
CHANCE_STYLE: dict[str, Any] = {"color": "0.45", "linestyle": ":", "linewidth": 1.2}


def _empty(message: str, width: float = 6.5, height: float = 2.2) -> Figure:
    fig, ax = figure(width, height)
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, fontsize=10)
    ax.set_axis_off()
    return fig


def _errors(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Asymmetric error bar lengths (2, n) from interval ends; 0 where an end is missing."""
    below = np.where(np.isfinite(lo), values - lo, 0.0)
    above = np.where(np.isfinite(hi), hi - values, 0.0)
    return np.vstack([np.clip(below, 0, None), np.clip(above, 0, None)])


def _floats(series: pd.Series) -> np.ndarray:
    return np.array([np.nan if x is None or (isinstance(x, float) and math.isnan(x)) else float(x) for x in series])


# --- Compare: forest of paired ΔmAP -----------------------------------------------------------------------------
def delta_forest(table: pd.DataFrame) -> Figure:
    """One row per subset: ΔmAP (A − B) and its 95% paired bootstrap interval; filled where the decision rule
    (spaces_app/significance.py) says significant, hollow otherwise; the dotted line is "no difference"."""
    if table.empty:
        return _empty("pick two submissions and press Compare")
    labels = list(table["Subset"])
    delta, lo, hi = _floats(table["ΔmAP (A−B)"]), _floats(table[LO]), _floats(table[HI])
    verdicts = [str(v) for v in table.get(significance.COLUMN, [""] * len(table))]
    sig = [significance.is_significant(v) for v in verdicts]
    fig, ax = figure(8.0, 0.45 * len(labels) + 1.5)
    y = np.arange(len(labels))[::-1]
    ax.errorbar(delta, y, xerr=_errors(delta, lo, hi), fmt="none", ecolor="0.35", elinewidth=1.5, capsize=3)
    for yi, d, s in zip(y, delta, sig, strict=True):
        ax.plot(d, yi, "o", markersize=7, color="tab:blue", markerfacecolor="tab:blue" if s else "white")
    for yi, v in zip(y, verdicts, strict=True):  # the verdict beside its row, as in the table
        ax.text(1.02, yi, v, transform=ax.get_yaxis_transform(), va="center", fontsize=8)
    ax.axvline(0.0, **CHANCE_STYLE)
    ax.set_yticks(y, labels, fontsize=9)
    ax.set_ylim(-0.7, len(labels) - 0.3)
    ax.set_xlabel("ΔmAP (A − B), 95% paired bootstrap interval")
    ax.set_title("A − B per subset (filled: significant by the rule above)", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


# --- Diagnostics: mAP by depth / profile, dialogue cost ---------------------------------------------------------
def _line(ax: Any, x: np.ndarray, table: pd.DataFrame, label: str | None = None) -> None:
    values, lo, hi = _floats(table["mAP"]), _floats(table[LO]), _floats(table[HI])
    line = ax.plot(x, values, "o-", markersize=4, label=label)[0]
    ok = np.isfinite(lo) & np.isfinite(hi)
    ax.fill_between(x[ok], lo[ok], hi[ok], color=line.get_color(), alpha=0.15, linewidth=0)


def _chance_line(ax: Any, value: float | None, label: str = "chance (random ranking)") -> None:
    if value is not None and math.isfinite(value):
        ax.axhline(value, label=label, **CHANCE_STYLE)


def depth_plot(sub: Mapping[str, Any], chance: float | None = None) -> Figure:
    """C2I mAP per WordNet depth of the query concept, its 95% bootstrap band, and the subset's chance level."""
    table = depth_table(sub)
    if table.empty:
        return _empty("no depth diagnostics (C2I rows without depth)")
    fig, ax = figure(6.5, 3.4)
    x = np.array([int(d) for d in table["Depth"]])
    _line(ax, x, table, label="mAP")
    _chance_line(ax, chance)
    ax.set_xticks(x)
    ax.set_xlabel("depth of the query concept in WordNet")
    ax.set_ylabel("C2I mAP")
    ax.set_ylim(bottom=0)
    ax.set_title(plain(f"C2I mAP by concept depth\nid {sub['id']}: {sub['model_name']}"), fontsize=9)
    ax.legend(fontsize=8, frameon=False)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def profile_long(sub: Mapping[str, Any]) -> pd.DataFrame:
    """Constraints mAP by profile D1–D7 (TRIAD A.2: the number of positive / negative conditions), per subset, with
    the 95% bootstrap interval and the query count."""
    rows = []
    for c in n.CONSTRAINTS_CONFIGS:
        by = ((sub["summary"].get(c) or {}).get("diagnostics") or {}).get("map_by_profile") or {}
        for profile in [p for p in n.PROFILES if isinstance(by.get(p), Mapping)]:
            node = by[profile]
            n_p, n_n = n.PROFILES[profile]
            iv = node.get("interval") or [None, None]
            rows.append(
                {
                    "Subset": legend.header(c),
                    "Profile": profile,
                    "Conditions": f"{n_p}P + {n_n}N",
                    "mAP": rounded(node.get("map")),
                    LO: rounded(iv[0]),
                    HI: rounded(iv[1]),
                    "Queries": node.get("n_queries"),
                }
            )
    return pd.DataFrame(rows, columns=["Subset", "Profile", "Conditions", "mAP", LO, HI, "Queries"])


def profile_plot(sub: Mapping[str, Any], chance: Mapping[str, float] | None = None) -> Figure:
    """One line per constraints subset over the profiles D1–D7, each with its band; chance per subset dotted."""
    table = profile_long(sub)
    if table.empty:
        return _empty("no profile diagnostics")
    fig, ax = figure(6.5, 3.4)
    order = [p for p in n.PROFILES if p in set(table["Profile"])]
    for c in n.CONSTRAINTS_CONFIGS:
        part = table[table["Subset"] == legend.header(c)]
        if len(part):
            part = part.set_index("Profile").reindex(order).reset_index()
            _line(ax, np.arange(len(order)), part, label=legend.header(c))
    for c in n.CONSTRAINTS_CONFIGS:
        if chance and c in chance:
            _chance_line(ax, chance[c], label=f"chance, {legend.header(c)}")
    ax.set_xticks(np.arange(len(order)), [f"{p}\n{n.PROFILES[p][0]}P+{n.PROFILES[p][1]}N" for p in order], fontsize=8)
    ax.set_ylabel("mAP")
    ax.set_ylim(bottom=0)
    ax.set_title(plain(f"Constraints mAP by profile\nid {sub['id']}: {sub['model_name']}"), fontsize=9)
    ax.legend(fontsize=7, frameon=False, ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def dialogue_cost_plot(sub: Mapping[str, Any]) -> Figure:
    """Forest of the dialogue cost: mean AP(state) − AP(constraints) over paired queries, per domain (bold), then
    per session type × number of turns, each with its 95% bootstrap interval; left of 0 = the dialogue costs."""
    table = dialogue_cost_table(sub)
    if table.empty:
        return _empty("no dialogue-cost diagnostics (needs the state and constraints subsets)")
    labels = [
        f"{r.Domain}: all" if r.Session == "all" else f"{r.Domain}: {r.Session}, {r.Turns} turns"
        for r in table.itertuples()
    ]
    delta, lo, hi = _floats(table["Δ AP"]), _floats(table[LO]), _floats(table[HI])
    overall = (table["Session"] == "all").to_numpy()
    fig, ax = figure(6.5, 0.38 * len(labels) + 1.4)
    y = np.arange(len(labels))[::-1]
    ax.errorbar(delta, y, xerr=_errors(delta, lo, hi), fmt="none", ecolor="0.4", elinewidth=1.3, capsize=3)
    ax.scatter(delta[overall], y[overall], marker="D", s=40, color="tab:red", zorder=3, label="domain")
    ax.scatter(delta[~overall], y[~overall], marker="o", s=25, color="tab:blue", zorder=3, label="session × turns")
    ax.axvline(0.0, **CHANCE_STYLE)
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xlabel("mean AP(state) − AP(constraints), paired by query, 95% interval")
    ax.set_title(plain(f"Dialogue cost — id {sub['id']}: {sub['model_name']}"), fontsize=9)
    ax.legend(fontsize=7, frameon=False, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


# --- ARK: R@1 per domain / reasoning skill -------------------------------------------------------------------------
ARK_ORDER = {"domain": ark_names.DOMAINS, "reasoning_skill": ark_names.REASONING_SKILLS}


def _ark_group(sub: Mapping[str, Any], axis: str, group: str) -> tuple[float | None, float | None, float | None]:
    node = (sub["summary"].get(f"by_{axis}") or {}).get(group)
    if not isinstance(node, Mapping):
        return None, None, None
    value = (node.get("metrics") or {}).get("recall@1")
    iv = (node.get("intervals") or {}).get("recall@1") or [None, None]
    return value, iv[0], iv[1]


def ark_long(subs: Sequence[Mapping[str, Any]], axis: str = "domain") -> pd.DataFrame:
    """One row per submission × group: R@1 with its 95% interval (the data of `ark_bars`)."""
    label = "Domain" if axis == "domain" else "Reasoning skill"
    rows = []
    for s in subs:
        for group in ARK_ORDER[axis]:
            value, lo, hi = _ark_group(s, axis, group)
            if value is not None:
                rows.append(
                    {
                        "id": int(s["id"]),
                        "Model": str(s["model_name"]),
                        label: ark_label(group),
                        "R@1": rounded(value),
                        LO: rounded(lo),
                        HI: rounded(hi),
                    }
                )
    return pd.DataFrame(rows, columns=["id", "Model", label, "R@1", LO, HI])


def ark_bars(
    subs: Sequence[Mapping[str, Any]], axis: str = "domain", chance: Mapping[str, float] | None = None
) -> Figure:
    """Grouped bars: per group (knowledge domain or reasoning skill), one bar per model (the best
    MAX_ARK_MODELS by macro R@1), with 95% intervals; chance per group as a dotted tick."""
    ranked = sorted(subs, key=lambda s: -(ark_macro(s) or 0.0))[:MAX_ARK_MODELS]
    groups = [g for g in ARK_ORDER[axis] if any(_ark_group(s, axis, g)[0] is not None for s in ranked)]
    if not groups:
        return _empty("no ARK submissions yet")
    fig, ax = figure(7.2, 3.6)
    width = 0.8 / len(ranked)
    x = np.arange(len(groups))
    for i, s in enumerate(ranked):
        cells = [_ark_group(s, axis, g) for g in groups]
        values = np.array([np.nan if v is None else v for v, _, _ in cells], dtype=float)
        lo = np.array([np.nan if c[1] is None else c[1] for c in cells], dtype=float)
        hi = np.array([np.nan if c[2] is None else c[2] for c in cells], dtype=float)
        ax.bar(
            x - 0.4 + width * (i + 0.5),
            np.nan_to_num(values),
            width,
            yerr=_errors(np.nan_to_num(values), lo, hi),
            capsize=2,
            label=plain(f"{s['id']}: {s['model_name']}"),
            error_kw={"elinewidth": 0.8},
        )
    if chance:
        for xi, g in zip(x, groups, strict=True):
            if g in chance:
                ax.hlines(chance[g], xi - 0.42, xi + 0.42, **CHANCE_STYLE)
        ax.plot([], [], label="chance (random ranking)", **CHANCE_STYLE)
    ax.set_xticks(x, [ark_label(g).replace(" ", "\n", 1) for g in groups], fontsize=8)
    ax.set_ylabel("R@1")
    ax.set_ylim(bottom=0)
    what = "knowledge domain" if axis == "domain" else "reasoning skill"
    more = f" (best {MAX_ARK_MODELS} by R@1 macro)" if len(subs) > MAX_ARK_MODELS else ""
    ax.set_title(f"ARK R@1 per {what}{more}, 95% intervals", fontsize=10)
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def rank_range_figure(subs: Sequence[Mapping[str, Any]], configs: Sequence[str] = n.MAIN_CONFIGS) -> Figure:
    """Vertical segments from each model's best to worst rank over the six subsets (lower is better)."""
    ranks = views.subset_ranks(subs, configs)
    fig, ax = figure(max(6.0, 0.55 * len(ranks) + 2), 4.2)
    if ranks.empty:
        ax.text(0.5, 0.5, "no submissions yet", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    markers = "osD^vP"
    x = np.arange(len(ranks))
    lo, hi = ranks.min(axis=1).to_numpy(), ranks.max(axis=1).to_numpy()
    ax.vlines(x, lo, hi, color="0.55", linewidth=2.5, zorder=1)
    for j, col in enumerate(ranks.columns):
        ax.scatter(x, ranks[col], marker=markers[j % len(markers)], s=36, zorder=2, label=col)
    from matplotlib.ticker import MaxNLocator

    ax.set_xticks(x, [plain(n) for n in ranks.index], rotation=35, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(ranks) - 0.4)
    ax.set_ylim(len(ranks) + 0.5, 0.5)  # rank 1 at the top
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("rank on subset (1 = best)")
    ax.set_title("Rank range across the six TRIAD subsets")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def entry_rate_figure(sub: Mapping[str, Any]) -> Figure:
    """Typed-negative top-10 entry rate per candidate role and subset, as a heatmap (`views.entry_rate_matrix`)."""
    mat = views.entry_rate_matrix(sub)
    fig, ax = figure(6.5, 3.8)
    if mat.empty:
        ax.text(0.5, 0.5, "no entry-rate diagnostics", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    vals = mat.to_numpy(dtype=float)
    im = ax.imshow(
        np.ma.masked_invalid(vals), cmap="viridis", vmin=0.0, vmax=max(0.05, float(np.nanmax(vals))), aspect="auto"
    )
    ax.set_xticks(range(mat.shape[1]), mat.columns, fontsize=8)
    ax.set_yticks(range(mat.shape[0]), mat.index, fontsize=8)
    for i in range(mat.shape[0]):
        for j in range(mat.shape[1]):
            if np.isfinite(vals[i, j]):
                ax.text(
                    j,
                    i,
                    f"{vals[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if vals[i, j] < 0.5 * np.nanmax(vals) else "black",
                )
    fig.colorbar(im, ax=ax, fraction=0.04)
    ax.set_title(plain(f"Top-10 entry rate by candidate role — id {sub['id']}: {sub['model_name']}"), fontsize=9)
    fig.tight_layout()
    return fig
