"""`triad list models`, `triad list configs DIR` (the names `triad run --model` and `--config` accept) and `triad
results RUN...` (finished runs side by side)."""

from __future__ import annotations

import argparse
from typing import Any

from model_adapters.results.formats import FORMATS, WRITTEN_FORMATS
from triad_dataset.contract.errors import TriadError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("list", help="list the models `triad run --model` knows, or a folder's configs")
    what = p.add_subparsers(dest="what", metavar="{models,configs}", required=True)
    m = what.add_parser(
        "models", help="name, type, verified / refused / API, text or images, loadable here, what it needs"
    )
    m.set_defaults(handler=_models)
    c = what.add_parser(
        "configs",
        help="every TRIAD config and ARK subtype as the papers define them, or a dataset folder's configs",
    )
    c.add_argument("dir", nargs="?", help="a dataset folder (default: none, the papers' task metadata)")
    c.set_defaults(handler=_configs)
    r = subparsers.add_parser(
        "results",
        help="print runs side by side (per subset: score, 95%% interval, chance), or compare two (--compare)",
        description="One table per benchmark: a row per subset (ARK: + macro), a column per run folder. With "
        "--compare, two TRIAD runs per main subset: paired ΔmAP, its 95%% interval, Wilcoxon and Holm p and the "
        "verdict, as the leaderboard's Compare tab shows them.",
    )
    r.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="`triad run --out` folders, folders of them (demo_output/runs) or quoted globs ('runs/*-triad')",
    )
    r.add_argument("--compare", action="store_true", help="compare two TRIAD runs (A = the first) per subset")
    r.add_argument(
        "--format",
        default="table",
        choices=FORMATS + WRITTEN_FORMATS,
        help="table (default), markdown, latex (booktabs), csv or json (csv and json: unrounded records); mteb "
        "writes each run's mteb TaskResult files and model_meta.json under RUN/mteb/ (docs/mteb.md)",
    )
    r.set_defaults(handler=_results)


def models_table() -> str:
    """Every real registry and plug-in model, one line each (docs/models.md explains each row)."""
    from model_adapters.models.catalog import model_rows
    from model_adapters.models.registry import REGISTRY, plugin_entries
    from model_adapters.ranks.output import text_table

    entries = {**REGISTRY, **{name: entry for name, (entry, _) in plugin_entries().items()}}
    rows = [[r.name, r.type, r.status, r.sees, r.backends, r.loadable, r.needs] for r in model_rows(entries)]
    return _strip(text_table(["model", "type", "status", "input", "backends", "loadable", "needs"], rows))


def configs_table(folder: str) -> str:
    """The folder's configs (TRIAD) or subtypes with their gallery sizes (ARK), with query counts."""
    import pyarrow.parquet as pq

    from ark_dataset.names import GALLERY_SUFFIX, SUBTYPE_DOMAIN
    from model_adapters.planning.configs import BUILD_HINT, detect_benchmark
    from model_adapters.ranks.output import text_table
    from triad_dataset.contract.names import DISPLAY_NAMES, TASK_CONFIGS
    from triad_dataset.folder.io import list_configs, shard_paths

    benchmark = detect_benchmark(folder)
    names = list_configs(folder)
    if not names:
        raise TriadError(f"{folder}: not a benchmark dataset folder; {BUILD_HINT}")

    def count(config: str) -> str:
        return str(sum(pq.ParquetFile(f).metadata.num_rows for f in shard_paths(folder, config)))

    if benchmark == "ark":
        subtypes = [c for c in names if not c.endswith(GALLERY_SUFFIX)]
        rows = [[s, SUBTYPE_DOMAIN.get(s, "?"), count(s), count(s + GALLERY_SUFFIX)] for s in subtypes]
        return f"ARK folder {folder}\n" + _strip(text_table(["subtype", "domain", "queries", "gallery"], rows))
    rows = [[c, DISPLAY_NAMES.get(c, ""), count(c), "task" if c in TASK_CONFIGS else "corpus"] for c in names]
    return f"TRIAD folder {folder}\n" + _strip(text_table(["config", "name", "rows", "kind"], rows))


def _count(value: float | None, fmt: str = "{:,}") -> str:
    return "—" if value is None else fmt.format(value)


def tasks_table() -> str:
    """Every TRIAD config and ARK subtype: paper name, inputs, main score, the paper edition's counts and chance."""
    from ark_dataset.tasks import RELEASE_GALLERY, RELEASE_QUERIES
    from ark_dataset.tasks import TASK_LIST as ARK_TASKS
    from model_adapters.ranks.output import text_table
    from triad_dataset.contract.tasks import MAIN_CHANCE_RANGE
    from triad_dataset.contract.tasks import TASK_LIST as TRIAD_TASKS

    def inputs(modalities: tuple[str, ...] | None) -> str:
        return "+".join(modalities) if modalities else "?"

    header = ["config", "paper", "group", "query -> candidates", "score", "queries", "pool", "pos/query", "chance"]
    parts = []
    for title, tasks in (("TRIAD tasks (paper edition)", TRIAD_TASKS), ("ARK subtypes (paper edition)", ARK_TASKS)):
        rows = [
            [
                t.name,
                t.paper_name,
                t.group,
                f"{inputs(t.query_modalities)} -> {inputs(t.candidate_modalities)}",
                t.main_score,
                _count(t.queries),
                _count(t.pool_size),
                _count(t.mean_positives, "{:.3g}"),
                _count(t.chance, "{:.3g}"),
            ]
            for t in tasks
        ]
        width = max(len(t.name) for t in tasks)
        described = "\n".join(f"  {t.name.ljust(width)}  {t.description}" for t in tasks)
        parts.append(f"{title}\n" + _strip(text_table(header, rows)) + "\n\n" + described)
    lo, hi = MAIN_CHANCE_RANGE
    parts.append(
        "chance: the main score of a uniformly random ranking, computed from the counts; — where the paper's text "
        f"gives no count (TRIAD B.1 states {lo}-{hi} mAP for the six main subsets; ARK's release has "
        f"{RELEASE_QUERIES:,} queries and {RELEASE_GALLERY:,} gallery items, per subtype in its Table 1). "
        "`triad list configs DIR` lists a built folder's configs."
    )
    return "\n\n".join(parts)


def _strip(table: str) -> str:
    return "\n".join(line.rstrip() for line in table.splitlines())


def _models(args: argparse.Namespace) -> int:
    print(models_table())
    return 0


def _configs(args: argparse.Namespace) -> int:
    print(configs_table(args.dir) if args.dir else tasks_table())
    return 0


def _results(args: argparse.Namespace) -> int:
    from model_adapters.results.formats import render
    from model_adapters.results.side_by_side import expand_runs, side_by_side_tables

    runs = expand_runs(args.runs)
    if args.format in WRITTEN_FORMATS:
        from model_adapters.results.formats import write_runs

        print(write_runs(runs, args.format))
        return 0
    if args.compare:
        from model_adapters.results.paired_runs import compare_table

        print(render([compare_table(runs)], args.format))
    else:
        print(render(side_by_side_tables(runs), args.format))
    return 0
