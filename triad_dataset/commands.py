"""`triad build {mini,full,scaled}` and `triad audit DIR`: TRIAD's commands (ARK's: ark_dataset/commands.py;
`triad validate` / `triad publish`, for either benchmark: triad_cli/folders.py).

Registered into the `triad` CLI by triad_cli/main.py. Handlers import their (heavy) modules lazily.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from triad_dataset.contract.errors import TriadError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("audit", help="print the audit table of a built TRIAD folder")
    p.add_argument("dir", help="dataset folder")
    p.set_defaults(handler=_audit)


def register_build(kinds: Any) -> None:
    p = kinds.add_parser("mini", help="the embedded, deterministic TRIAD mini edition (offline, < 2 min)")
    _out_args(p, seed=0)
    p.set_defaults(handler=_build_mini)

    p = kinds.add_parser(
        "full",
        help="TRIAD from your copies of WordNet, ImageNet-21K, Fashion Product Images and Stanford Cars",
        description="Builds each track whose sources are given (see docs/dataset.md for the file formats).",
    )
    _out_args(p, seed=0)
    g = p.add_argument_group("abstraction")
    g.add_argument("--imagenet", type=Path, help="ImageNet-21K-style folder <wnid>/<image files>")
    g.add_argument("--wordnet", type=Path, help="WordNet 3.0 dict dir with data.noun (default: committed graph)")
    g = p.add_argument_group("fashion")
    g.add_argument("--fashion-styles", type=Path, help="Fashion Product Images styles.csv")
    g.add_argument("--fashion-images", type=Path, help="folder with <id>.jpg (or the images of --fashion-table)")
    g.add_argument(
        "--fashion-annotations",
        type=Path,
        help="CSV id + the schema's visual attributes (default: neckline,pattern,sleeve_length,length)",
    )
    g.add_argument("--fashion-table", type=Path, help="complete attribute table (instead of --fashion-styles)")
    g.add_argument(
        "--skip-unsupported",
        action="store_true",
        help="skip (and count) styles.csv rows whose articleType is outside the schema",
    )
    g = p.add_argument_group("cars")
    g.add_argument(
        "--cars-annotations", type=Path, help="CSV image,class_name,colour,view,setting[,body_type][,product_id]"
    )
    g.add_argument("--cars-images", type=Path, help="Stanford Cars image folder")
    g.add_argument("--cars-table", type=Path, help="complete attribute table (instead of --cars-annotations)")
    p.add_argument(
        "--schema",
        type=Path,
        help="attribute schema JSON {fashion: ..., cars: ...} replacing the default "
        "roles, values and budgets (docs/constraints.md; `python -m triad_dataset.contract.schema` prints the default)",
    )
    g = p.add_argument_group("sizes")
    g.add_argument("--queries", type=int, default=1000, help="queries per main subset and Self direction (1000)")
    g.add_argument("--same-queries", type=int, default=500, help="Same queries per domain (500)")
    g.add_argument("--pool-size", type=int, default=1000, help="candidates per query (1000)")
    p.set_defaults(handler=_build_full)

    p = kinds.add_parser("scaled", help="nested larger pools for the constraints subsets (paper A.5)")
    p.add_argument("--src", required=True, type=Path, help="a built TRIAD folder")
    p.add_argument("--size", required=True, help="pool size (e.g. 3000) or 'full' (every eligible product)")
    _out_args(p, seed=2027)
    p.set_defaults(handler=_build_scaled)


def _out_args(p: argparse.ArgumentParser, *, seed: int | None) -> None:
    p.add_argument("--out", required=True, type=Path, help="output folder (written atomically)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing dataset folder")
    if seed is not None:
        p.add_argument("--seed", type=int, default=seed, help=f"random seed (default {seed})")


# ---------------------------------------------------------------------------------------------------- handlers


def _build_mini(args: argparse.Namespace) -> int:
    from triad_dataset.editions.mini import build_mini

    build_mini(args.out, seed=args.seed, overwrite=args.overwrite)
    return 0


def _build_full(args: argparse.Namespace) -> int:
    from triad_dataset.editions.full import FullSources, build_full

    sources = FullSources(
        imagenet=args.imagenet,
        wordnet=args.wordnet,
        fashion_styles=args.fashion_styles,
        fashion_images=args.fashion_images,
        fashion_annotations=args.fashion_annotations,
        fashion_table=args.fashion_table,
        cars_annotations=args.cars_annotations,
        cars_images=args.cars_images,
        cars_table=args.cars_table,
        schema=args.schema,
    )
    build_full(
        args.out,
        sources,
        n_queries=args.queries,
        same_queries=args.same_queries,
        pool_size=args.pool_size,
        seed=args.seed,
        overwrite=args.overwrite,
        skip_unsupported=args.skip_unsupported,
    )
    return 0


def _build_scaled(args: argparse.Namespace) -> int:
    from triad_dataset.editions.pool_scaling import scale_folder

    if args.size == "full":
        size = None
    elif args.size.isdigit() and int(args.size) > 0:
        size = int(args.size)
    else:
        raise TriadError(f"--size {args.size!r}: expected a positive integer or 'full'")
    try:
        path = scale_folder(args.src, args.out, size, seed=args.seed, overwrite=args.overwrite)
    except ValueError as exc:  # e.g. fewer eligible products than the requested pool size: a user-input problem
        raise TriadError(f"{args.src}: {exc}") from exc
    return _report_validation(path)


def _report_validation(path: Path) -> int:
    """Validate a folder the builder just wrote: every build runs the validator."""
    from triad_dataset.folder.validate import validate_folder

    violations = validate_folder(path)
    for line in violations:
        print(line, file=sys.stderr)
    print(f"wrote {path} ({len(violations)} validation violations)")
    return 1 if violations else 0


def _audit(args: argparse.Namespace) -> int:
    from triad_dataset.folder.audit import format_folder_audit
    from triad_dataset.folder.io import read_audit

    if read_audit(args.dir).get("benchmark") != "triad":
        raise TriadError(f"{args.dir}: `triad audit` prints TRIAD audits; see audit.json of this folder")
    print(format_folder_audit(args.dir))
    return 0
