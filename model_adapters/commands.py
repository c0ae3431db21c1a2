"""`triad run` (registered into the `triad` CLI; heavy imports happen inside the handler)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from triad_dataset.contract.errors import TriadError, output_folder


def register(subparsers: Any) -> None:
    from model_adapters.models.recipes import recipe_names
    from model_adapters.models.registry import REGISTRY
    from model_adapters.planning.inputs import VARIANTS

    embedders = ", ".join(n for n, e in REGISTRY.items() if e.kind == "embedder")
    rerankers = ", ".join(n for n, e in REGISTRY.items() if e.kind == "reranker")
    p = subparsers.add_parser(
        "run",
        help="encode, rank and score a model on a TRIAD or ARK folder",
        description="Encode each distinct input once, rank every pool (TRIAD) or gallery (ARK), write "
        "OUTDIR/rankings/<config>.parquet and OUTDIR/results.json. Several processes (GPUs, or CPU with gloo): "
        "accelerate launch --multi_gpu --num_processes N -m triad_cli run ... (not --cpu: one process) or "
        "torchrun --standalone --nproc_per_node N -m triad_cli run ...",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--model",
        default=None,
        help=f"registry name ({embedders}), a Hub id ORG/NAME or a local model folder (recipe detected)",
    )
    p.add_argument(
        "--encoder",
        default=None,
        metavar="MODULE:FACTORY",
        help="your own encoder: a factory returning an object with dim, encode_queries, encode_candidates",
    )
    p.add_argument("--name", default=None, help="the name the results are shown under (default: the model's own)")
    p.add_argument(
        "--revision",
        default=None,
        help="Hub commit / tag to pin; for --encoder your model's version (its vectors are cached then)",
    )
    p.add_argument(
        "--recipe",
        default=None,
        help=f"the input recipe of a folder / Hub id ({', '.join(recipe_names('embedder'))}); default: "
        "detected from its files, refused when no verified recipe matches (docs/models.md)",
    )
    images = p.add_mutually_exclusive_group()
    images.add_argument(
        "--sees-images",
        dest="sees_images",
        action="store_const",
        const=True,
        default=None,
        help="--encoder: give it the images (default)",
    )
    images.add_argument(
        "--text-only",
        dest="sees_images",
        action="store_const",
        const=False,
        help="--encoder: leave images out of its inputs (and of the cache keys)",
    )
    p.add_argument("--data", required=True, help="dataset folder (TRIAD or ARK)")
    p.add_argument("--config", default="all", help="config / subtype names, comma-separated, or 'all' (default)")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace another model's finished run in --out (without it, that --out is refused; the same model's "
        "run is replaced, and an interrupted one, which wrote no results.json, is resumed from the embedding cache)",
    )
    p.add_argument("--benchmark", choices=("triad", "ark"), default=None, help="default: from the folder's audit.json")
    p.add_argument("--variant", default="full", choices=VARIANTS, help="query-side input variant (default full)")
    p.add_argument("--rerank", default=None, help=f"reranker: registry name ({rerankers}), Hub id or folder")
    p.add_argument(
        "--reranker",
        default=None,
        metavar="MODULE:FACTORY",
        help="your own reranker: a factory returning an object with score_pairs",
    )
    p.add_argument(
        "--rerank-recipe",
        default=None,
        help=f"the reranker's recipe ({', '.join(recipe_names('reranker'))}); default: detected",
    )
    p.add_argument("--rerank-top", type=int, default=None, help="rerank the first-stage top K (30 TRIAD, 50 ARK)")
    p.add_argument("--batch-size", type=int, default=None, help="encoder batch size (default: registry max batch)")
    p.add_argument("--limit", type=int, default=None, help="first N queries of each config (quick checks)")
    p.add_argument("--cache-dir", default=None, help="embedding cache (default $TRIAD_CACHE or ~/.cache/triad)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the embedding cache")
    p.add_argument(
        "--model-path",
        default=None,
        help="a local copy of --model's weights, loaded with its settings and labelled with the folder",
    )
    p.add_argument("--rerank-model-path", default=None, help="local copy of the reranker's weights")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 ... (default: cuda when available)")
    p.add_argument(
        "--dtype", default=None, choices=("float32", "float16", "bfloat16"), help="override the registry dtype"
    )
    p.add_argument(
        "--backend",
        default="torch",
        choices=("torch", "onnx"),
        help="what runs the embedder: torch (default) or onnx (ONNX Runtime on the CPU: sentence-transformers, "
        "bge-m3 and the CLIP / SigLIP / SigLIP 2 / MetaCLIP 2 / BGE-VL dual towers; exported once into the cache; "
        "same vectors); the reranker's: --rerank-backend",
    )
    p.add_argument(
        "--rerank-backend",
        default="torch",
        choices=("torch", "onnx"),
        help="what runs the reranker: torch (default) or onnx (ONNX Runtime on the CPU, bge-reranker-v2-m3; "
        "exported once into the cache; same scores)",
    )
    p.add_argument("--no-validate", action="store_true", help="skip `triad validate` of the folder")
    p.add_argument(
        "--skip-bad-images",
        action="store_true",
        help="encode items whose image does not decode without it (counted in the summary)",
    )
    p.add_argument("--rewrites", default=None, help="ARK: JSON Lines of {query_id, query_text} rewritten queries")
    p.add_argument(
        "--captions",
        default=None,
        help="ARK, text-only models: a `triad caption` folder; each image is seen through its caption",
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument(
        "--cache-check",
        type=int,
        default=None,
        metavar="N",
        help="cached items re-encoded to detect a changed model (default 8; 0: no check)",
    )
    p.add_argument(
        "--offline",
        action="store_true",
        help="API models (e.g. seed1.6-embedding) read only their response cache: no request is sent, and "
        "inputs missing from it stop the run in one line saying how many",
    )
    p.add_argument(
        "--api-cache",
        default=None,
        metavar="DIR",
        help="API response cache (default $TRIAD_API_CACHE or ~/.cache/triad/api); --no-cache leaves it in use",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars or tables")
    p.set_defaults(handler=_handle)


def run_config(args: argparse.Namespace) -> Any:
    """The `RunConfig` of parsed `triad run` arguments: each field from the option of its name, except three."""
    from dataclasses import fields

    from model_adapters.run.config import RunConfig
    from model_adapters.vectors.checks import SAMPLE_SIZE

    renamed = {
        "configs": args.config,
        "validate": not args.no_validate,
        "cache_check": SAMPLE_SIZE if args.cache_check is None else args.cache_check,
    }
    same = {f.name: getattr(args, f.name) for f in fields(RunConfig) if f.name not in renamed}
    return RunConfig(**same, **renamed)


def _handle(args: argparse.Namespace) -> int:
    from model_adapters.run.runner import run

    output_folder(args.out)  # before anything is loaded or encoded
    cfg = run_config(args)
    try:
        run(cfg, check=lambda job: check_out(cfg.out, job.model.identity.name, args.overwrite, job.ctx.is_main))
    except KeyboardInterrupt as exc:  # a RunInterrupted names the phase and what was kept
        print(
            f"triad run: {exc}" if str(exc) else f"triad run: interrupted; nothing was written to {cfg.out}",
            file=sys.stderr,
        )
        return 130
    return 0


def check_out(out: str, name: str, overwrite: bool, say: bool = True) -> None:
    """Refuse an --out that holds another model's finished run unless `overwrite`; say when a run is replaced."""
    import json

    from model_adapters.ranks.output import RESULTS

    try:
        previous = json.loads((Path(out) / RESULTS).read_text(encoding="utf-8"))["model"]["name"]
    except (OSError, ValueError, KeyError, TypeError):
        return  # no finished run there (an interrupted one wrote no results.json: it is resumed)
    if previous != name and not overwrite:
        raise TriadError(
            f"--out {out} holds a run of {previous}; pass --overwrite to replace it, or choose another --out"
        )
    if say:
        print(f"{out}: replacing the finished run of {previous} there", file=sys.stderr)
