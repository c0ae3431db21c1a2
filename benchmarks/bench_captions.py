"""OCR captions: seconds per image of the `ocr` captioner on ARK mini gallery images, against a cached
`triad caption` re-run over the same folder (which reads the caption cache and does no OCR).

    python benchmarks/bench_captions.py --data demo_output/ark [--cache-dir DIR] [--sample 8]

The cached re-run uses --cache-dir (default: the demo's default caption cache), so run `triad caption --captioner
ocr --data ... ` (or `make demo`) first; images missing from that cache are OCR'd and the re-run is measured after.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def bench_ocr(data: str, sample: int) -> dict[str, float]:
    """Seconds per image of OCR on the first `sample` gallery images of every subtype (engine already loaded)."""
    from model_adapters.captioners import registry
    from model_adapters.captioners.caption import collect_images
    from model_adapters.planning.configs import select_configs

    captioner = registry.load(registry.get_entry("ocr"))
    captioner.caption([collect_images(data, select_configs(data, "ark", "all")[:1])[0].data])  # warm-up
    out = {}
    for subtype in select_configs(data, "ark", "all"):
        images = [i.data for i in collect_images(data, [subtype])[:sample]]
        start = time.perf_counter()
        captioner.caption(images)
        out[subtype] = (time.perf_counter() - start) / len(images)
    return out


def bench_cached(data: str, cache_dir: str | None) -> tuple[float, int, int]:
    from model_adapters.captioners.caption import CaptionConfig, run_caption

    with tempfile.TemporaryDirectory() as tmp:
        run_caption(CaptionConfig("ocr", data, tmp, cache_dir=cache_dir, quiet=True))  # fill any gap first
        start = time.perf_counter()
        meta = run_caption(CaptionConfig("ocr", data, tmp, cache_dir=cache_dir, quiet=True))
        return time.perf_counter() - start, meta["captioned"], meta["images"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="demo_output/ark")
    parser.add_argument("--cache-dir", default=None)
    parser.add_argument("--sample", type=int, default=8, help="images per subtype for the OCR timing")
    args = parser.parse_args()
    per_image = bench_ocr(args.data, args.sample)
    cached_s, captioned, images = bench_cached(args.data, args.cache_dir)
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("| subtype | OCR s / image |\n|---|---|")
    for subtype, secs in per_image.items():
        print(f"| {subtype} | {secs:.2f} |")
    mean = sum(per_image.values()) / len(per_image)
    print(
        f"\ncached `triad caption` re-run over {images} images: {cached_s:.1f} s, {captioned} captioned "
        f"({cached_s / images * 1000:.1f} ms per image; OCR is {mean / (cached_s / images):.0f}x slower)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
