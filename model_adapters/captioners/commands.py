"""`triad caption`, `triad rewrite` and `triad robustness` (heavy imports happen inside the handlers)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    from model_adapters.captioners.registry import CAPTIONER, REGISTRY, REWRITER

    captioners = ", ".join(n for n, e in REGISTRY.items() if e.kind == CAPTIONER)
    rewriters = ", ".join(n for n, e in REGISTRY.items() if e.kind == REWRITER)
    p = subparsers.add_parser(
        "caption",
        help="caption every ARK gallery image (and image query) once, for text-space runs",
        description="Writes OUT/captions.parquet (config, item_id, role, image_sha256, caption, error) and "
        "OUT/captioner.json; captions are cached by captioner identity + image bytes, so a re-run "
        "captions nothing. Use the folder with `triad run --captions OUT`.",
    )
    p.add_argument("--captioner", required=True, help=f"registry name: {captioners}")
    p.add_argument("--data", required=True, help="ARK dataset folder")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--subtype", default="all", help="subtypes, comma-separated, or 'all' (default)")
    p.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a captioner setting (part of its identity), e.g. Global.text_score=0.8",
    )
    p.add_argument(
        "--cache-dir", default=None, help="caption cache (default $TRIAD_CAPTION_CACHE or ~/.cache/triad/captions)"
    )
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the caption cache")
    p.add_argument("--model-path", default=None, help="local copy of the captioner's weights")
    p.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda when available)")
    p.add_argument("--batch-size", type=int, default=None, help="images per batch (default: registry)")
    p.add_argument(
        "--fail-on-bad-images",
        action="store_true",
        help="stop on an image that does not decode (default: name it and caption the rest)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(handler=_caption)

    r = subparsers.add_parser(
        "rewrite", help="rewrite ARK queries with an LLM into the JSON Lines `triad run --rewrites` reads"
    )
    r.add_argument(
        "--rewriter",
        required=True,
        help=f"registry name: {rewriters}; or api:MODEL (an OpenAI-compatible "
        "chat completions model: $OPENAI_API_KEY, $OPENAI_BASE_URL)",
    )
    r.add_argument("--data", required=True, help="ARK dataset folder")
    r.add_argument("--out", required=True, help="output .jsonl file")
    r.add_argument("--subtype", default="all", help="subtypes, comma-separated, or 'all' (default)")
    r.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a rewriter setting, e.g. max_new_tokens=128",
    )
    r.add_argument("--model-path", default=None, help="local copy of the rewriter's weights")
    r.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda when available)")
    r.add_argument("--limit", type=int, default=None, help="first N queries of each subtype")
    r.add_argument(
        "--offline",
        action="store_true",
        help="API rewriters: read only the response cache (no request; missing queries stop the command)",
    )
    r.add_argument(
        "--api-cache",
        default=None,
        metavar="DIR",
        help="API response cache (default $TRIAD_API_CACHE or ~/.cache/triad/api)",
    )
    r.add_argument("--quiet", action="store_true", help="no progress bars")
    r.set_defaults(handler=_rewrite)

    s = subparsers.add_parser(
        "robustness",
        help="captioner robustness of ARK text-space runs (paper H.1): Spearman rho, caption gain",
        description="Reads results.json of runs of several text models under several captioners (`triad run "
        "--captions`), prints the Spearman rho of the model rankings between every two captioners on "
        "the knowledge axis (macro R@1 over subtypes) and the reasoning-skill axis (macro R@1 over the "
        "six skills), and each model's gain with the reference captioner over the mean of the others.",
    )
    s.add_argument("runs", nargs="+", help="run folders (or results.json files)")
    s.add_argument("--reference", required=True, help="captioner name whose gain is reported (paper: Qwen)")
    s.add_argument(
        "--family",
        default=None,
        help="model-name prefix of the reference captioner's family "
        "(e.g. qwen): the mean gain is reported for family and non-family models",
    )
    s.add_argument("--json", action="store_true", help="print JSON instead of tables")
    s.set_defaults(handler=_robustness)


def _caption(args: argparse.Namespace) -> int:
    from model_adapters.captioners.caption import CaptionConfig, run_caption
    from triad_dataset.contract.errors import output_folder

    output_folder(args.out)  # before any image is captioned
    if args.batch_size is not None and args.batch_size < 1:
        from triad_dataset.contract.errors import TriadError

        raise TriadError(f"--batch-size must be at least 1, got {args.batch_size}")
    run_caption(
        CaptionConfig(
            captioner=args.captioner,
            data=args.data,
            out=args.out,
            subtypes=args.subtype,
            settings=args.settings,
            cache_dir=args.cache_dir,
            no_cache=args.no_cache,
            model_path=args.model_path,
            device=args.device,
            batch_size=args.batch_size,
            fail_on_bad_images=args.fail_on_bad_images,
            quiet=args.quiet,
        )
    )
    return 0


def _rewrite(args: argparse.Namespace) -> int:
    from model_adapters.captioners.rewrite import RewriteConfig, run_rewrite
    from triad_dataset.contract.errors import output_file

    output_file(args.out)  # before any query is rewritten
    run_rewrite(
        RewriteConfig(
            rewriter=args.rewriter,
            data=args.data,
            out=args.out,
            subtypes=args.subtype,
            settings=args.settings,
            model_path=args.model_path,
            device=args.device,
            limit=args.limit,
            quiet=args.quiet,
            offline=args.offline,
            api_cache=args.api_cache,
        )
    )
    return 0


def _robustness(args: argparse.Namespace) -> int:
    from metrics.robustness import report_from_runs

    print(report_from_runs(args.runs, reference=args.reference, family=args.family, as_json=args.json))
    return 0
