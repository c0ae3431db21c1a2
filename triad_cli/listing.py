"""`triad list models`, `triad list configs DIR` (the names `triad run --model` and `--config` accept) and `triad
results RUN...` (finished runs side by side)."""

from __future__ import annotations

import argparse
from typing import Any

from triad_dataset.contract.errors import TriadError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("list", help="list the models `triad run --model` knows, or a folder's configs")
    what = p.add_subparsers(dest="what", metavar="{models,configs}", required=True)
    m = what.add_parser(
        "models", help="name, type, verified / refused / API, text or images, loadable here, what it needs"
    )
    m.set_defaults(handler=_models)
    c = what.add_parser("configs", help="the configs (TRIAD) or subtypes (ARK) of a dataset folder")
    c.add_argument("dir", help="dataset folder")
    c.set_defaults(handler=_configs)
    r = subparsers.add_parser(
        "results",
        help="print runs side by side: per subset the score, its 95%% interval and chance",
        description="One table per benchmark: a row per subset (ARK: + macro), a column per run folder.",
    )
    r.add_argument("runs", nargs="+", metavar="RUN", help="`triad run --out` folders")
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


def _strip(table: str) -> str:
    return "\n".join(line.rstrip() for line in table.splitlines())


def _models(args: argparse.Namespace) -> int:
    print(models_table())
    return 0


def _configs(args: argparse.Namespace) -> int:
    print(configs_table(args.dir))
    return 0


def _results(args: argparse.Namespace) -> int:
    from model_adapters.results.side_by_side import side_by_side

    print(side_by_side(args.runs))
    return 0
