"""`triad robustness`: the H.1 analysis (metrics.core.robustness) over run folders of `triad run --captions`.

The knowledge axis is a run's `summary.macro` R@1 (mean over subtypes); the reasoning axis is the unweighted mean of
`summary.by_reasoning_skill` R@1 over the skills the run has (paper Table 25: "across the six reasoning skills").
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from metrics.core.robustness import captioner_gain, group_gains, rank_correlations
from triad_dataset.contract.errors import TriadError

AXES = ("knowledge", "reasoning")
METRIC = "recall@1"


def axis_scores(results: Mapping[str, Any]) -> dict[str, float]:
    """(knowledge, reasoning) R@1 of one ARK results.json."""
    summary = results.get("summary") or {}
    skills = summary.get("by_reasoning_skill") or {}
    reasoning = [v["metrics"][METRIC] for v in skills.values()]
    return {
        "knowledge": float(summary["macro"]["metrics"][METRIC]),
        "reasoning": float(np.mean(reasoning)) if reasoning else float("nan"),
    }


def collect(runs: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """axis -> captioner name -> model name -> score, from ARK results dicts of captioned runs."""
    out: dict[str, dict[str, dict[str, float]]] = {a: {} for a in AXES}
    seen: dict[tuple[str, str], str] = {}
    for res in runs:
        where = str(res.get("_path", "results.json"))
        cap = res.get("captioner")
        if res.get("benchmark") != "ark" or not cap:
            raise TriadError(f"{where}: not an ARK run over captions (`triad run --captions`)")
        captioner, model = str(cap["identity"]["name"]), str(res["model"]["name"])
        if (captioner, model) in seen:
            raise TriadError(f"{where}: model {model} under captioner {captioner} also in {seen[captioner, model]}")
        seen[captioner, model] = where
        for axis, value in axis_scores(res).items():
            out[axis].setdefault(captioner, {})[model] = value
    return out


def analyse(runs: Sequence[Mapping[str, Any]], *, reference: str, family: str | None = None) -> dict[str, Any]:
    """Per axis: Spearman rho between every two captioners, each model's gain with `reference`, family means."""
    report: dict[str, Any] = {"reference": reference, "family": family, "metric": METRIC}
    for axis, scores in collect(runs).items():
        gains = captioner_gain(scores, reference) if reference in scores and len(scores) > 1 else {}
        members = [m for m in gains if family and m.lower().startswith(family.lower())]
        report[axis] = {
            "scores": scores,
            "spearman": [{"a": a, "b": b, "rho": r} for (a, b), r in rank_correlations(scores).items()],
            "gain": gains,
            "mean_gain": group_gains(gains, members) if family else None,
        }
    return report


def load_runs(paths: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for p in paths:
        path = Path(p) / "results.json" if Path(p).is_dir() else Path(p)
        try:
            res = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise TriadError(f"{path}: cannot read results ({exc})") from exc
        res["_path"] = str(path)
        out.append(res)
    return out


def report_from_runs(paths: Sequence[str], *, reference: str, family: str | None = None, as_json: bool = False) -> str:
    report = analyse(load_runs(paths), reference=reference, family=family)
    if as_json:
        return json.dumps(report, indent=2)
    lines = []
    for axis in AXES:
        part = report[axis]
        lines.append(f"{axis} axis ({METRIC})")
        for pair in part["spearman"]:
            lines.append(f"  Spearman rho {pair['a']} vs {pair['b']}: {pair['rho']:.2f}")
        for model, gain in sorted(part["gain"].items()):
            lines.append(f"  {reference}-caption gain of {model}: {100 * gain:+.2f} points")
        if part["mean_gain"]:
            fam, oth = part["mean_gain"]["family"], part["mean_gain"]["others"]
            lines.append(f"  mean gain: {family} models {_pts(fam)}, other models {_pts(oth)}")
    return "\n".join(lines)


def _pts(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.2f} points"
