"""`triad results RUN...`: several runs' results.json side by side, one table per benchmark, one row per subset, with
chance and the 95 % intervals (as mteb and lmms-eval print a table over runs); `--compare` pairs two runs.

A RUN is a run folder, a folder of run folders (`demo_output/runs`) or a quoted glob (`'runs/*-triad'`).
"""

from __future__ import annotations

import glob
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from model_adapters.ranks.output import RESULTS
from model_adapters.results.formats import Table
from triad_dataset.contract.errors import TriadError

PRIMARY = {"triad": ("map", "mAP"), "ark": ("recall@1", "R@1")}
GLOB_CHARS = "*?["


def read_results(run_dir: str | Path) -> dict[str, Any]:
    """A run folder's results.json; TriadError naming the folder when it has none or it is not JSON."""
    path = Path(run_dir) / RESULTS
    if not path.is_file():
        raise TriadError(f"{run_dir}: no {RESULTS}; pass a folder written by `triad run --out`")
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TriadError(f"{path}: not readable JSON ({exc})") from exc
    if (
        not isinstance(results, dict)
        or results.get("benchmark") not in PRIMARY
        or not isinstance(results.get("configs"), dict)
    ):
        raise TriadError(f"{path}: not a `triad run` results file (no benchmark / configs)")
    return results


def _runs_in(folder: Path) -> list[Path]:
    """The run folders directly inside `folder`, sorted by name."""
    return sorted(p for p in folder.iterdir() if (p / RESULTS).is_file()) if folder.is_dir() else []


def expand_runs(args: Sequence[str]) -> list[str]:
    """Run folders from RUN arguments: a run folder as given, a folder's run folders, a glob's matches (sorted).

    A folder holding no results.json and no run folder, or a glob matching nothing, is a TriadError naming it.
    """
    out: list[str] = []
    for arg in args:
        path = Path(arg)
        if (path / RESULTS).is_file() or not (path.is_dir() or any(c in arg for c in GLOB_CHARS)):
            out.append(arg)  # a run folder, or a path `read_results` refuses with its own message
            continue
        matches = sorted(glob.glob(arg)) if not path.exists() else [arg]
        found = [m for m in matches if (Path(m) / RESULTS).is_file()]
        found += [str(p) for m in matches if not (Path(m) / RESULTS).is_file() for p in _runs_in(Path(m))]
        if not found:
            raise TriadError(f"{arg}: no run folder (a folder holding {RESULTS}) there; pass `triad run --out` folders")
        out += found
    return list(dict.fromkeys(out))


def _interval(node: Mapping[str, Any] | None, metric: str) -> tuple[float | None, float | None, float | None]:
    """(value, lo, hi) of `metric` in a results.json config node; None where absent."""
    if not node or (node.get("metrics") or {}).get(metric) is None:
        return None, None, None
    interval = (node.get("intervals") or {}).get(metric) or [None, None]
    return float(node["metrics"][metric]), interval[0], interval[1]


def _cell(value: float | None, lo: float | None, hi: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.4f} [{lo:.4f}, {hi:.4f}]" if lo is not None and hi is not None else f"{value:.4f}"


def _labels(run_dirs: Sequence[str | Path], runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each run's model name, with its folder when two runs share a name; `(partial)` for a --limit run."""
    names = [model_name(d, r) for d, r in zip(run_dirs, runs, strict=True)]
    out = []
    for d, r, name in zip(run_dirs, runs, names, strict=True):
        label = f"{name} ({d})" if names.count(name) > 1 else name
        out.append(label + (" (partial)" if r.get("complete") is False else ""))
    return out


def model_name(run_dir: str | Path, results: Mapping[str, Any]) -> str:
    """The model name results.json states, else the run folder's name."""
    return str((results.get("model") or {}).get("name") or Path(run_dir).name)


def _chance(runs: Sequence[Mapping[str, Any]], config: str) -> float | None | str:
    """The config's chance level when every run states the same one; "varies" when they differ."""
    levels = {round(float(r["configs"][config]["chance"]), 6) for r in runs if "chance" in r["configs"].get(config, {})}
    return levels.pop() if len(levels) == 1 else (None if not levels else "varies")


def _chance_cell(chance: float | None | str) -> str:
    return "—" if chance is None else chance if isinstance(chance, str) else f"{chance:.4f}"


def benchmark_table(benchmark: str, run_dirs: Sequence[str | Path], runs: Sequence[Mapping[str, Any]]) -> Table:
    """One benchmark's runs: a row per subset (ARK: + the macro average), the primary metric with its interval."""
    from triad_dataset.contract.names import DISPLAY_NAMES

    metric, label = PRIMARY[benchmark]
    labels = _labels(run_dirs, runs)
    configs = list(dict.fromkeys(c for r in runs for c in r["configs"]))
    nodes = {c: [r["configs"].get(c) for r in runs] for c in configs}
    if benchmark == "ark":
        nodes["macro"] = [(r.get("summary") or {}).get("macro") for r in runs]
    rows, records = [], []
    for config, per_run in nodes.items():
        name = DISPLAY_NAMES.get(config, "") if benchmark == "triad" else ""
        chance = _chance(runs, config) if config in configs else None
        values = [_interval(node, metric) for node in per_run]
        rows.append([config, name, _chance_cell(chance) if config in configs else "", *(_cell(*v) for v in values)])
        for run_dir, run, run_label, node, (value, lo, hi) in zip(run_dirs, runs, labels, per_run, values, strict=True):
            if value is not None:
                records.append(
                    {
                        "benchmark": benchmark,
                        "config": config,
                        "name": name,
                        "run": run_label,
                        "path": str(run_dir),
                        "metric": metric,
                        "value": value,
                        "ci_low": lo,
                        "ci_high": hi,
                        "chance": chance,
                        "n_queries": (node or {}).get("n_queries"),
                        "complete": run.get("complete", True) is not False,
                    }
                )
    fingerprints = {(r.get("dataset") or {}).get("fingerprint") for r in runs}
    notes = (
        [] if len(fingerprints) == 1 else ["note: these runs ranked different dataset folders (fingerprints differ)"]
    )
    title = f"{benchmark.upper()} · {label} [95% CI] per {'subset' if benchmark == 'triad' else 'subtype'}"
    meta = {"benchmark": benchmark, "metric": metric, "runs": _run_meta(run_dirs, runs, labels)}
    return Table(title, ["config", "name", "chance", *labels], rows, records, notes, meta)


def _run_meta(
    run_dirs: Sequence[str | Path], runs: Sequence[Mapping[str, Any]], labels: Sequence[str]
) -> list[dict[str, Any]]:
    """Who produced each column: label, folder, model name, source and revision, dataset fingerprint."""
    return [
        {
            "label": label,
            "path": str(d),
            "model": model_name(d, r),
            "source": (r.get("model") or {}).get("source"),
            "revision": (r.get("model") or {}).get("revision"),
            "complete": r.get("complete", True) is not False,
            "fingerprint": (r.get("dataset") or {}).get("fingerprint"),
        }
        for d, r, label in zip(run_dirs, runs, labels, strict=True)
    ]


def side_by_side_tables(run_dirs: Sequence[str | Path]) -> list[Table]:
    """The tables of `triad results`: one per benchmark the runs cover, runs in the order given."""
    runs = [read_results(d) for d in run_dirs]
    tables = []
    for benchmark in PRIMARY:
        picked = [(d, r) for d, r in zip(run_dirs, runs, strict=True) if r["benchmark"] == benchmark]
        if picked:
            tables.append(benchmark_table(benchmark, [d for d, _ in picked], [r for _, r in picked]))
    return tables


def side_by_side(run_dirs: Sequence[str | Path], fmt: str = "table") -> str:
    """`side_by_side_tables` printed in one of `formats.FORMATS`."""
    from model_adapters.results.formats import render

    return render(side_by_side_tables(run_dirs), fmt)
