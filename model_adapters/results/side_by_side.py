"""`triad results RUN...`: several runs' results.json side by side, one table per benchmark, one row per subset, with
chance and the 95 % intervals (as mteb and lmms-eval print a table over runs)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from model_adapters.ranks.output import RESULTS, text_table
from triad_dataset.contract.errors import TriadError

PRIMARY = {"triad": ("map", "mAP"), "ark": ("recall@1", "R@1")}


def read_results(run_dir: str | Path) -> dict[str, Any]:
    """A run folder's results.json; TriadError naming the folder when it has none or it is not JSON."""
    path = Path(run_dir) / RESULTS
    if not path.is_file():
        raise TriadError(f"{run_dir}: no {RESULTS}; pass a folder written by `triad run --out`")
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TriadError(f"{path}: not readable JSON ({exc})") from exc
    if results.get("benchmark") not in PRIMARY or not isinstance(results.get("configs"), dict):
        raise TriadError(f"{path}: not a `triad run` results file (no benchmark / configs)")
    return results


def _cell(node: Mapping[str, Any] | None, metric: str) -> str:
    if not node or node.get("metrics", {}).get(metric) is None:
        return "—"
    value, interval = node["metrics"][metric], (node.get("intervals") or {}).get(metric)
    return f"{value:.4f} [{interval[0]:.4f}, {interval[1]:.4f}]" if interval else f"{value:.4f}"


def _labels(run_dirs: Sequence[str | Path], runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each run's model name, with its folder when two runs share a name; `(partial)` for a --limit run."""
    names = [str((r.get("model") or {}).get("name") or Path(d).name) for d, r in zip(run_dirs, runs, strict=True)]
    out = []
    for d, r, name in zip(run_dirs, runs, names, strict=True):
        label = f"{name} ({d})" if names.count(name) > 1 else name
        out.append(label + (" (partial)" if r.get("complete") is False else ""))
    return out


def _chance(runs: Sequence[Mapping[str, Any]], config: str) -> str:
    levels = {round(float(r["configs"][config]["chance"]), 6) for r in runs if "chance" in r["configs"].get(config, {})}
    return f"{levels.pop():.4f}" if len(levels) == 1 else ("—" if not levels else "varies")


def benchmark_table(benchmark: str, run_dirs: Sequence[str | Path], runs: Sequence[Mapping[str, Any]]) -> str:
    """One benchmark's runs: a row per subset (ARK: + the macro average), the primary metric with its interval."""
    from triad_dataset.contract.names import DISPLAY_NAMES

    metric, label = PRIMARY[benchmark]
    configs = list(dict.fromkeys(c for r in runs for c in r["configs"]))
    names = [DISPLAY_NAMES.get(c, "") if benchmark == "triad" else "" for c in configs]
    rows = [
        [c, name, _chance(runs, c), *(_cell(r["configs"].get(c), metric) for r in runs)]
        for c, name in zip(configs, names, strict=True)
    ]
    if benchmark == "ark":
        macros = [((r.get("summary") or {}).get("macro")) for r in runs]
        rows.append(["macro", "", "", *(_cell(m, metric) for m in macros)])
    fingerprints = {(r.get("dataset") or {}).get("fingerprint") for r in runs}
    note = "" if len(fingerprints) == 1 else "\nnote: these runs ranked different dataset folders (fingerprints differ)"
    title = f"{benchmark.upper()} · {label} [95% CI] per {'subset' if benchmark == 'triad' else 'subtype'}"
    table = text_table(["config", "name", "chance", *_labels(run_dirs, runs)], rows)
    return f"{title}\n" + "\n".join(line.rstrip() for line in table.splitlines()) + note


def side_by_side(run_dirs: Sequence[str | Path]) -> str:
    """The tables of `triad results`: one per benchmark the runs cover, runs in the order given."""
    runs = [read_results(d) for d in run_dirs]
    parts = []
    for benchmark in PRIMARY:
        picked = [(d, r) for d, r in zip(run_dirs, runs, strict=True) if r["benchmark"] == benchmark]
        if picked:
            parts.append(benchmark_table(benchmark, [d for d, _ in picked], [r for _, r in picked]))
    return "\n\n".join(parts)
