"""`triad results A B --compare`: two TRIAD runs compared per subset, as the leaderboard's Compare tab does.

The statistics and the verdict are `metrics.core.paired`'s, read from the per-query APs each results.json holds,
over the six main subsets (the Compare tab's family for Holm's correction).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from model_adapters.results.formats import Table
from model_adapters.results.side_by_side import model_name, read_results
from triad_dataset.contract.errors import TriadError

RULE: Final = (
    "Significant?: two-sided Wilcoxon signed-rank on the per-query AP differences, Holm-adjusted over the subsets "
    'shown, α = 0.05; "yes" only when the 95% paired bootstrap interval of ΔmAP (3,000 resamples) also excludes 0 '
    "on the same side, else the cell says which of the two disagrees (metrics/core/paired.py)."
)


def _per_query(run_dir: str | Path, results: Mapping[str, Any], configs: Sequence[str]) -> dict[str, dict[str, float]]:
    """config -> query id -> AP from results.json; TriadError when a scored config lacks its per-query APs."""
    out = {}
    for config in configs:
        node = results["configs"].get(config)
        if node is None:
            continue
        per_query = node.get("per_query_ap")
        if not isinstance(per_query, dict) or not per_query:
            raise TriadError(
                f"{run_dir}: results.json has no per_query_ap for {config}; re-run `triad run` to write it"
            )
        out[config] = {str(q): float(v) for q, v in per_query.items()}
    return out


def _check_pair(dirs: Sequence[str | Path], runs: Sequence[Mapping[str, Any]]) -> None:
    if len(runs) != 2:
        raise TriadError(f"--compare takes exactly two runs, got {len(runs)}: {', '.join(map(str, dirs))}")
    for d, r in zip(dirs, runs, strict=True):
        if r["benchmark"] != "triad":
            raise TriadError(f"{d}: an ARK run; --compare pairs the per-query APs of two TRIAD runs")
    fingerprints = [(r.get("dataset") or {}).get("fingerprint") for r in runs]
    if all(fingerprints) and fingerprints[0] != fingerprints[1]:
        raise TriadError(
            f"{dirs[1]}: ranked another dataset folder than {dirs[0]} (fingerprints differ); compare runs of one folder"
        )


def _cell(value: Any) -> str:
    """A value as the Compare tab shows it (spaces_app.views.for_display): 3 decimals, "–" when missing."""
    return f"{value:.3f}" if isinstance(value, float) else "–" if value is None else str(value)


def compare_table(run_dirs: Sequence[str | Path]) -> Table:
    """The paired comparison of two TRIAD runs (A = the first) on the main subsets both ranked."""
    from metrics.core import paired
    from triad_dataset.contract.names import DISPLAY_NAMES, MAIN_CONFIGS

    runs = [read_results(d) for d in run_dirs]
    _check_pair(run_dirs, runs)
    a, b = (_per_query(d, r, MAIN_CONFIGS) for d, r in zip(run_dirs, runs, strict=True))
    compared = paired.compare(a, b, MAIN_CONFIGS)
    if not compared:
        raise TriadError(f"{run_dirs[0]} and {run_dirs[1]}: no main subset with queries both runs ranked")
    shown = [r.shown(DISPLAY_NAMES.get(r.config, r.config)) for r in compared]
    names = [model_name(d, r) for d, r in zip(run_dirs, runs, strict=True)]
    notes = [f"A = {names[0]} ({run_dirs[0]})", f"B = {names[1]} ({run_dirs[1]})", RULE]
    notes += [
        f"note: {d} is a partial run (--limit)"
        for d, r in zip(run_dirs, runs, strict=True)
        if r.get("complete") is False
    ]
    meta = {"benchmark": "triad", "a": {"model": names[0], "path": str(run_dirs[0])}}
    meta["b"] = {"model": names[1], "path": str(run_dirs[1])}
    return Table(
        title=f"TRIAD · paired comparison, A − B per subset: {names[0]} vs {names[1]}",
        header=list(shown[0]),
        rows=[[_cell(v) for v in row.values()] for row in shown],
        records=[{"config": r.config, **row} for r, row in zip(compared, shown, strict=True)],
        notes=notes,
        meta=meta,
    )
