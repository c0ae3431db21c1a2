"""Tables of the leaderboard, built from database rows (no Gradio here, so tests can call them).

Every user-supplied string goes into a plain-text table cell or a matplotlib text artist (with mathtext ``$``
escaped); none is ever placed into Markdown or HTML.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pandas as pd

from ark_dataset import names as ark_names
from spaces_app import captioner
from spaces_app.cells import DECIMALS, ark_label, rounded
from triad_dataset.contract import names as triad_names

ID_COL, MODEL_COL, FAMILY_COL, PARAMS_COL, DATE_COL = "id", "Model", "Family", "Params", "Submitted"
SUBMITTER_COL, CHECK_COL = "Submitter", "results.json"
STATUS_COL, TIES_COL, RANK_COL = "Status", "Ties (mAP range)", "Rank"  # spaces_app/status.py
MARKER_COL = "Verified?"  # the short status beside the model name (spaces_app/status.py `marker`)
CHECK_TEXT = {
    "matches": "matches",
    "differs": "DIFFERS from server",
    "absent": "not sent",
    "no numbers": "no numbers to compare",
}
ALL_FAMILIES = "All families"


def display(config: str) -> str:
    return triad_names.DISPLAY_NAMES.get(config, config)


def plain(text: Any) -> str:
    """A user string for matplotlib: mathtext off by escaping '$' (matplotlib never interprets HTML)."""
    return str(text).replace("$", r"\$")


def fmt_params(n: int | None) -> str:
    """Human parameter count.

    >>> fmt_params(86_000_000), fmt_params(1_500_000_000), fmt_params(None)
    ('86M', '1.5B', '')
    """
    if n is None:
        return ""
    for scale, unit in ((10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "k")):
        if n >= scale:
            return f"{n / scale:.3g}{unit}"
    return str(n)


def _date(ts: float, *, time_of_day: bool = False) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d %H:%M" if time_of_day else "%Y-%m-%d")


def for_display(df: pd.DataFrame) -> pd.DataFrame:
    """Numbers as fixed 3-decimal text ("0.370"), missing as "–", so every cell renders the same way."""
    out = df.copy()
    for col in out.columns:
        if pd.api.types.is_float_dtype(out[col]) or out[col].map(lambda x: isinstance(x, float)).any():
            out[col] = out[col].map(
                lambda x: (
                    "–"
                    if x is None or (isinstance(x, float) and not math.isfinite(x))
                    else f"{x:.{DECIMALS}f}"
                    if isinstance(x, float)
                    else str(x)
                )
            )
    return out


def filter_subs(subs: Sequence[Mapping[str, Any]], family: str | None = None, search: str = "") -> list[Mapping]:
    """Keep one family (or all) and names containing ``search`` (case-insensitive, plain substring)."""
    needle = (search or "").strip().casefold()
    return [
        s
        for s in subs
        if (not family or family == ALL_FAMILIES or s["family"] == family)
        and (not needle or needle in str(s["model_name"]).casefold())
    ]


def score_table(
    subs: Sequence[Mapping[str, Any]],
    configs: Sequence[str],
    *,
    sort_by: str | None = None,
    labels: Mapping[str, str] | None = None,
    status: Mapping[int, Mapping[str, Any]] | None = None,
    rank_all: bool = False,
) -> pd.DataFrame:
    """One row per submission, one column per config (3 decimals); no aggregate column (paper: none over subsets).

    With ``status`` (`spaces_app.status.annotate`): a short status marker beside the model name ("· unranked"
    where the row has no rank), Status and Ties columns, verified rows listed first, and a Rank (by ``sort_by``):
    verified rows among themselves, self-reported and pending rows each among their own group and marked so, or
    every row among all with ``rank_all``."""
    labels = labels or {c: display(c) for c in configs}
    rows = []
    for s in subs:
        row: dict[str, Any] = {
            ID_COL: int(s["id"]),
            MODEL_COL: str(s["model_name"]),
            FAMILY_COL: str(s["family"]),
            PARAMS_COL: fmt_params(s["params"]),
        }
        for c in configs:
            sc = s["scores"].get(c)
            row[labels[c]] = rounded(sc.value) if sc is not None else None
        row[SUBMITTER_COL], row[CHECK_COL] = submitter_text(s), check_text(s)
        if status is not None:
            info = status[int(s["id"])]
            row[MARKER_COL], row[STATUS_COL], row["_order"] = info["marker"], info["text"], info["order"]
            row[TIES_COL] = "none" if info["ties"] is None else f"±{info['ties'] / 2:.{DECIMALS}f}"
        rows.append(row)
    marker = [MARKER_COL] if status is not None else []
    # the subsets right after the name and its marker, so that all six fit a 1280 px window; family and size after
    cols = [ID_COL, MODEL_COL, *marker, *(labels[c] for c in configs), FAMILY_COL, PARAMS_COL, SUBMITTER_COL, CHECK_COL]
    if status is not None:
        cols += [STATUS_COL, TIES_COL, "_order"]
    df = pd.DataFrame(rows, columns=cols)
    if sort_by and sort_by in df.columns and len(df):
        df = df.sort_values(sort_by, ascending=sort_by in (MODEL_COL, FAMILY_COL), na_position="last", kind="stable")
    if status is not None:
        df = _ranked(df.sort_values("_order", kind="stable"), sort_by, rank_all)
    return df.reset_index(drop=True)


def _ranked(df: pd.DataFrame, sort_by: str | None, rank_all: bool) -> pd.DataFrame:
    """The Rank column by ``sort_by``: every listed row among every other with ``rank_all``; else each unflagged
    group among itself — verified rows plainly, self-reported and pending ones marked (`status.RANKED_APART`)."""
    from spaces_app.status import ORDER, RANKED_APART

    ranks = pd.Series([""] * len(df), index=df.index, dtype=object)
    if sort_by in df.columns and sort_by not in (MODEL_COL, FAMILY_COL, PARAMS_COL):
        groups = {"": df["_order"] < ORDER["older gold"]} if rank_all else _rank_groups(df["_order"], RANKED_APART)
        for word, eligible in groups.items():
            if eligible.any():
                values = pd.to_numeric(df.loc[eligible, sort_by], errors="coerce").rank(ascending=False, method="min")
                ranks[eligible] = [_rank_cell(r, word) for r in values]
    df = df.drop(columns="_order")
    df.insert(0, RANK_COL, ranks)
    unranked = ranks == ""
    df.loc[unranked, MARKER_COL] = df.loc[unranked, MARKER_COL] + " · unranked"
    return df


def _rank_cell(rank: float, word: str) -> str:
    return "" if rank != rank else f"{rank:.0f}{word}"


def _rank_groups(order: pd.Series, apart: Mapping[int, str]) -> dict[str, pd.Series]:
    """The rows ranked among themselves: verified (order 0) with no word, then each group of ``apart``."""
    return {"": order == 0, **{word: order == group for group, word in apart.items()}}


def with_status(df: pd.DataFrame, notes: Mapping[int, Mapping[str, Any]]) -> pd.DataFrame:
    """A table without ranks (ARK) with each row's short marker beside the model name and its Status cell."""
    if not len(df):
        return df
    ids = [int(i) for i in df[ID_COL]]
    out = df.assign(**{STATUS_COL: [notes[i]["text"] for i in ids]})
    out.insert(list(out.columns).index(MODEL_COL) + 1, MARKER_COL, [notes[i]["marker"] for i in ids])
    return out


def families(subs: Sequence[Mapping[str, Any]]) -> list[str]:
    return [ALL_FAMILIES, *sorted({str(s["family"]) for s in subs})]


def detail_table(sub: Mapping[str, Any], configs: Sequence[str]) -> pd.DataFrame:
    """Per config: the primary number, its 95% bootstrap interval and the query count."""
    rows = []
    for c in configs:
        sc = sub["scores"].get(c)
        if sc is None:
            continue
        metrics = (sub["summary"].get(c) or {}).get("metrics") or {}
        extra = {
            k: rounded(metrics[k])
            for k in ("top1_hit", "mrr", "recall@5", "recall@10", "ndcg@10")
            if isinstance(metrics.get(k), int | float)
        }
        ties = (sub["summary"].get("tie_sensitivity") or {}).get(c) or {}
        if ties:
            extra.update(
                {
                    "mAP, tied positives first": rounded(ties.get("positives_first")),
                    "mAP, tied positives last": rounded(ties.get("positives_last")),
                }
            )
        rows.append(
            {
                "Subset": display(c),
                "Metric": sc.metric,
                "Value": rounded(sc.value),
                "95% CI low": rounded(sc.lo),
                "95% CI high": rounded(sc.hi),
                "Queries": sc.n_queries,
                **extra,
            }
        )
    return pd.DataFrame(rows)


def submitter_text(sub: Mapping[str, Any]) -> str:
    """The Hub user who submitted, else "anonymous" — never an address (spaces_app.identity.shown)."""
    from spaces_app.identity import shown

    return shown(str(sub.get("submitter") or ""))


def check_text(sub: Mapping[str, Any]) -> str:
    """How the submitter's results.json compared with the server's rescoring (the main table marks a difference)."""
    status = (sub.get("run") or {}).get("results_json")
    if status is None:  # stored before this was recorded: only a difference is known
        status = "differs" if sub.get("mismatches") else None
    return CHECK_TEXT.get(status, "–") if isinstance(status, str) else "–"


RUN_FIELDS = (
    ("model_name", "Model (results.json, claimed)"),
    ("model_revision", "Revision (results.json, claimed)"),
    ("model_source", "Source (results.json, claimed)"),
    ("model_source_kind", "Source kind (results.json, claimed)"),
    ("model_input_pipeline", "Input pipeline (results.json, claimed)"),
    ("variant", "Variant (results.json)"),
)


def metadata_table(sub: Mapping[str, Any]) -> pd.DataFrame:
    """Submission metadata as (field, value) text rows — links are shown as text, never rendered."""
    run = sub.get("run") or {}
    items = [
        ("Submission id", sub["id"]),
        ("Model", sub["model_name"]),
        ("Link", sub["model_link"]),
        ("Family", sub["family"]),
        ("Parameters", fmt_params(sub["params"])),
        ("Submitter", submitter_text(sub)),
        ("Submitted (UTC)", _date(sub["created_at"], time_of_day=True)),
        ("Dataset fingerprint", sub["dataset_fingerprint"][:16]),
        ("Rankings digest", sub["file_digest"][:16]),
        *((label, run[key]) for key, label in RUN_FIELDS if key in run),
        ("results.json", check_text(sub)),
        ("results.json mismatches", "; ".join(sub["mismatches"]) or "none"),
        ("Reproduction check", _verification_text(sub)),
    ]
    return pd.DataFrame([{"Field": k, "Value": str(val)} for k, val in items])


def _verification_text(sub: Mapping[str, Any]) -> str:
    from spaces_app import status as st

    return st.text(sub, st.row_status(sub), [])


def submission_record(sub: Mapping[str, Any]) -> dict[str, Any]:
    """One submission for the ``/submission`` API: everything the server computed, no address or server path."""
    return {
        "id": int(sub["id"]),
        "benchmark": sub["benchmark"],
        "model": str(sub["model_name"]),
        "link": str(sub["model_link"]),
        "family": str(sub["family"]),
        "params": sub["params"],
        "submitter": submitter_text(sub),
        "submitted_utc": _date(sub["created_at"], time_of_day=True),
        "dataset_fingerprint": sub["dataset_fingerprint"],
        "run": dict(sub.get("run") or {}),
        "results_json": check_text(sub),
        "mismatches": list(sub["mismatches"]),
        "verification": _verification(sub),
        "scores": {
            c: {"metric": sc.metric, "value": sc.value, "interval": [sc.lo, sc.hi], "n_queries": sc.n_queries}
            for c, sc in sub["scores"].items()
        },
        "summary": sub["summary"],  # per config: metrics, intervals, diagnostics (per-query values omitted)
    }


def _verification(sub: Mapping[str, Any]) -> dict[str, Any]:
    """The reproduction check as a visitor may see it (the sample stays secret until it is checked)."""
    from spaces_app.disclosure import public

    return public(sub.get("verify") or {}, str(sub.get("status") or "unverified"))


# --- rank ranges (paper Figure 2) -------------------------------------------------------------------------
def subset_ranks(subs: Sequence[Mapping[str, Any]], configs: Sequence[str]) -> pd.DataFrame:
    """Rank of each model on each subset (1 = best; average ranks for ties, on unrounded scores, as in Figure 2)."""
    from scipy.stats import rankdata

    names = [f"{s['id']}: {s['model_name']}" for s in subs]
    out = pd.DataFrame(index=names)
    for c in configs:
        vals = np.array([s["scores"][c].value if c in s["scores"] else np.nan for s in subs], dtype=float)
        ranks = np.full(len(subs), np.nan)
        ok = np.isfinite(vals)
        if ok.any():
            ranks[ok] = rankdata(-vals[ok], method="average")
        out[display(c)] = ranks
    return out


def rank_agreement(
    subs: Sequence[Mapping[str, Any]], configs: Sequence[str] = triad_names.MAIN_CONFIGS
) -> pd.DataFrame:
    """Kendall tau-b between the subsets' model orderings (paper C.2, Figure 8); needs at least 3 models."""
    from metrics.core import stats

    labels = [display(c) for c in configs]
    scores = {c: [s["scores"][c].value if c in s["scores"] else np.nan for s in subs] for c in configs}
    out = pd.DataFrame(index=labels, columns=labels, dtype=float)
    for a, la in zip(configs, labels, strict=True):
        for b, lb in zip(configs, labels, strict=True):
            x, y = np.array(scores[a]), np.array(scores[b])
            ok = np.isfinite(x) & np.isfinite(y)
            if ok.sum() >= 3 and np.ptp(x[ok]) > 0 and np.ptp(y[ok]) > 0:
                out.loc[la, lb] = stats.kendall_tau_b(x[ok].tolist(), y[ok].tolist())[0]
    return out.reset_index(names="Subset")


# --- diagnostics --------------------------------------------------------------------------------------------
def entry_rate_matrix(sub: Mapping[str, Any], configs: Sequence[str] = triad_names.MAIN_CONFIGS) -> pd.DataFrame:
    """Typed-negative top-10 entry rate per role (rows) and subset (columns); NaN where a role is absent."""
    data: dict[str, dict[str, float]] = {}
    for c in configs:
        rates = ((sub["summary"].get(c) or {}).get("metrics") or {}).get("entry_rate@10") or {}
        if isinstance(rates, Mapping):
            data[display(c)] = {r: float(v) for r, v in rates.items() if isinstance(v, int | float)}
    roles = [r for r in triad_names.ROLES if any(r in d for d in data.values())]
    return pd.DataFrame({c: [d.get(r, np.nan) for r in roles] for c, d in data.items()}, index=roles)


def paired_comparison(
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    per_query: Any,
    configs: Sequence[str] = triad_names.MAIN_CONFIGS,
    *,
    seed: int = 0,
) -> pd.DataFrame:
    """Per subset: ΔmAP (a − b) on shared queries, its paired bootstrap interval, Wilcoxon p, Holm-adjusted p and
    the verdict of the one decision rule (`metrics.core.paired`, which `triad results --compare` prints too).

    ``per_query(submission_id, config) -> {query_id: AP}``. Paper D.3: 3,000 query-bootstrap resamples, two-sided
    Wilcoxon signed-rank with Holm correction within the family (here: the compared subsets), rank-biserial.
    """
    from metrics.core import paired

    runs = [{c: per_query(s["id"], c) for c in configs} for s in (a, b)]
    return pd.DataFrame([r.shown(display(r.config)) for r in paired.compare(runs[0], runs[1], configs, seed=seed)])


# --- ARK ----------------------------------------------------------------------------------------------------
ARK_MACRO = "R@1 macro"
CAPTIONER_COL = "Captioner"  # text-space runs (`triad run --captions`); empty when the model saw the images


def _ark_base(s: Mapping[str, Any]) -> dict[str, Any]:
    return {
        ID_COL: int(s["id"]),
        MODEL_COL: str(s["model_name"]),
        CAPTIONER_COL: captioner.label(s),
        FAMILY_COL: str(s["family"]),
        PARAMS_COL: fmt_params(s["params"]),
        ARK_MACRO: rounded(ark_macro(s)),
    }


def _ark_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return captioner.group_rows(pd.DataFrame(rows), MODEL_COL, ARK_MACRO)


def ark_robustness(subs: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Captioner robustness of text-space rows (paper H.1): Spearman ρ between captioners, per axis."""
    return captioner.robustness_table(subs, ark_macro, lambda s: _breakdown(s["summary"], "reasoning_skill"))


def ark_table(subs: Sequence[Mapping[str, Any]], axis: str = "domain") -> pd.DataFrame:
    """R@1 macro-average over subtypes, then per knowledge domain (``axis="domain"``), reasoning skill
    (``"reasoning_skill"``), cognitive demand (``"cognitive_demand"``) or subtype (``"subtype"``); ARK paper §4."""
    order = {
        "domain": ark_names.DOMAINS,
        "reasoning_skill": ark_names.REASONING_SKILLS,
        "cognitive_demand": ark_names.COGNITIVE_DEMANDS,
        "subtype": ark_names.SUBTYPES,
    }[axis]
    rows = []
    for s in subs:
        row = _ark_base(s)
        values = {c: sc.value for c, sc in s["scores"].items()} if axis == "subtype" else _breakdown(s["summary"], axis)
        for key in order:
            if key in values:
                row[ark_label(key)] = rounded(values[key])
        rows.append(row)
    return _ark_frame(rows)


def ark_macro(sub: Mapping[str, Any]) -> float | None:
    """The server's macro R@1 from the stored summary, else the mean of the per-subtype rows."""
    macro = (sub["summary"].get("macro") or {}).get("metrics") or {}
    if isinstance(macro.get("recall@1"), int | float):
        return float(macro["recall@1"])
    vals = [sc.value for sc in sub["scores"].values()]
    return float(np.mean(vals)) if vals else None


def _breakdown(summary: Mapping[str, Any], axis: str) -> dict[str, float]:
    """{group: R@1} from the scoring summary's breakdown by ``axis`` (domain, cognitive_demand, reasoning_skill)."""
    node = (summary.get("breakdowns") or {}).get(axis) or summary.get(f"by_{axis}") or {}
    out = {}
    if isinstance(node, Mapping):
        for g, val in node.items():
            if isinstance(val, Mapping):
                val = (val.get("metrics") or val).get("recall@1")
            if isinstance(val, int | float):
                out[str(g)] = float(val)
    return out


# --- diagnostic tables (paper §5, B.1) ---------------------------------------------------------------------
def _interval_cells(node: Mapping[str, Any]) -> dict[str, Any]:
    iv = node.get("interval") or [None, None]
    return {"95% CI low": rounded(iv[0]), "95% CI high": rounded(iv[1])}


def trap_table(sub: Mapping[str, Any]) -> pd.DataFrame:
    """Conflict-trap top-10 rate (pooled over trap candidates) and the share of trap queries with one in the top 10."""
    rows = []
    for c in triad_names.STATE_CONFIGS:
        m = (sub["summary"].get(c) or {}).get("metrics") or {}
        if "trap_rate@10" in m:
            rows.append(
                {
                    "Subset": display(c),
                    "Trap top-10 rate": rounded(m.get("trap_rate@10")),
                    "Queries with a trap in top 10": rounded(m.get("trap_query_share@10")),
                    "Trap queries": m.get("n_trap_queries"),
                }
            )
    return pd.DataFrame(rows)


def hop_table(sub: Mapping[str, Any]) -> pd.DataFrame:
    """Per-hop I2C mAP: only that hop's positives count, other-hop positives stay in place (paper B.1)."""
    diag = (sub["summary"].get(triad_names.ABSTRACTION_CONFIGS[0]) or {}).get("diagnostics") or {}
    rows = [
        {"Hop": hop, "mAP": rounded(node.get("map")), **_interval_cells(node), "Queries": node.get("n_queries")}
        for hop, node in (diag.get("per_hop") or {}).items()
        if isinstance(node, Mapping)
    ]
    return pd.DataFrame(rows)


def depth_table(sub: Mapping[str, Any]) -> pd.DataFrame:
    """C2I mAP by the query concept's WordNet depth (paper §5.1, Figure 3b)."""
    diag = (sub["summary"].get(triad_names.ABSTRACTION_CONFIGS[1]) or {}).get("diagnostics") or {}
    by = diag.get("map_by_depth") or {}
    rows = [
        {"Depth": depth, "mAP": rounded(node.get("map")), **_interval_cells(node), "Queries": node.get("n_queries")}
        for depth, node in sorted(by.items(), key=lambda kv: (len(kv[0]), kv[0]))
        if isinstance(node, Mapping)
    ]
    return pd.DataFrame(rows)


def profile_table(sub: Mapping[str, Any]) -> pd.DataFrame:
    """mAP by constraint profile D1–D7 (rows) for each constraints subset (columns)."""
    data = {}
    for c in triad_names.CONSTRAINTS_CONFIGS:
        by = ((sub["summary"].get(c) or {}).get("diagnostics") or {}).get("map_by_profile") or {}
        data[display(c)] = {p: rounded(node.get("map")) for p, node in by.items() if isinstance(node, Mapping)}
    profiles = [p for p in triad_names.PROFILES if any(p in d for d in data.values())]
    if not profiles:
        return pd.DataFrame()
    return pd.DataFrame({"Profile": profiles, **{c: [d.get(p) for p in profiles] for c, d in data.items()}})


def dialogue_cost_table(sub: Mapping[str, Any]) -> pd.DataFrame:
    """Mean AP(state) − AP(constraints) paired by query, by domain × session type × turns (paper B.1)."""
    from metrics.scoring import DIALOGUE_COST

    costs = sub["summary"].get(DIALOGUE_COST) or {}
    rows = []
    order = [d for d in triad_names.DOMAINS if d in costs] + sorted(d for d in costs if d not in triad_names.DOMAINS)
    for domain in order:  # the stored summary has sorted keys; show the names modules' order
        node = costs[domain]
        if not isinstance(node, Mapping) or "mean" not in node:
            continue
        rows.append(
            {
                "Domain": domain,
                "Session": "all",
                "Turns": "all",
                "Δ AP": rounded(node["mean"]),
                **_interval_cells(node),
                "Queries": node.get("n_pairs"),
            }
        )
        sessions = node.get("by_session") or {}
        for session in [t for t in triad_names.SESSION_TYPES if t in sessions]:
            by_turns = sessions[session]
            for turns, cell in by_turns.items():
                rows.append(
                    {
                        "Domain": domain,
                        "Session": session,
                        "Turns": turns,
                        "Δ AP": rounded(cell.get("mean")),
                        **_interval_cells(cell),
                        "Queries": cell.get("n_queries"),
                    }
                )
    return pd.DataFrame(rows)


def paper_diagnostics_table(sub: Mapping[str, Any]) -> pd.DataFrame:
    """The paper's C.3 matched comparisons, Fig. 9 trap strata, C.4 shared-pool change and D.3 resolution as one
    long table (results.json "paper_diagnostics", metrics/paper_scoring.py)."""
    from metrics.scoring import PAPER_DIAGNOSTICS

    node = sub["summary"].get(PAPER_DIAGNOSTICS) or {}
    rows: list[dict[str, Any]] = []

    def add(diagnostic: str, where: str, group: str, value: Any, queries: Any) -> None:
        rows.append(
            {"Diagnostic": diagnostic, "Subset": where, "Group": group, "Value": rounded(value), "Queries": queries}
        )

    for config, pairs in (node.get("matched_comparisons") or {}).items():
        for p in pairs:
            pair = f"{p['right']} − {p['left']}"
            add("C.3 ΔmAP (complete)", display(config), pair, p.get("difference"), f"{p['n_left']}/{p['n_right']}")
            add("C.3 ΔmAP (standardized)", display(config), pair, p.get("standardized"), p.get("weight"))
    for domain, strata in (node.get("trap_stratified") or {}).items():
        for key, label in (("trap_in_top10", "trap in top 10"), ("trap_free", "no trap in top 10")):
            cell = strata.get(key) or {}
            add("Fig. 9 ΔAP (conflict, trap-built)", domain, label, cell.get("mean"), cell.get("n_queries"))
    for domain, shared in (node.get("shared_pool") or {}).items():
        if shared:
            add("C.4 ΔAP on the shared pool", domain, "all", shared.get("delta"), shared.get("n_pairs"))
            for session, turns in (shared.get("by_session") or {}).items():
                for k, cell in turns.items():
                    add(
                        "C.4 ΔAP on the shared pool", domain, f"{session}/{k}", cell.get("delta"), cell.get("n_queries")
                    )
    for config, curve in (node.get("resolution") or {}).items():
        for n_queries, half in curve.items():
            add("D.3 95% half-width of mAP", display(config), f"n = {n_queries}", half, n_queries)
    return pd.DataFrame(rows)


def admin_table(subs: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Every submission for the admin (hidden ones included): its submitter key, hidden flag, time and status."""
    rows = [
        {
            ID_COL: int(s["id"]),
            "Benchmark": s["benchmark"],
            MODEL_COL: str(s["model_name"]),
            "Submitter": str(s["submitter"]),  # admin only: a Hub user, "local", or a hashed address
            "Hidden": "yes" if s["hidden"] else "no",
            DATE_COL: _date(s["created_at"], time_of_day=True),
            STATUS_COL: str(s.get("status") or ""),
            "Dataset": s["dataset_fingerprint"][:12],
        }
        for s in subs
    ]
    return pd.DataFrame(
        rows, columns=[ID_COL, "Benchmark", MODEL_COL, "Submitter", "Hidden", DATE_COL, STATUS_COL, "Dataset"]
    )
