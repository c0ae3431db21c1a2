#!/usr/bin/env python3
"""Paper-size abstraction build: full WordNet 3.0 noun graph + ~16,000 stand-in images (paper A.1 sizes).

Stages, each timed (wall clock) with the process's peak RSS after it (a high-water mark, so every stage so far
stayed below it); each is compared with a named alternative measured in the same run:

1. load the noun graph from the committed compact copy   vs  parsing /usr/share/wordnet/data.noun
2. depths of all 82,115 synsets by frontier BFS (numpy)  vs  a per-synset Python walk up to the root
3. write a stand-in ImageNet-21K folder (16,000 classes, one 256x240 JPEG each, plus 40 unreadable, 40 too-small
   and 40 duplicate files placed first in other classes so the skips are exercised) - setup, no alternative
4. read the folder (decode each JPEG at 1/8 scale)          vs  the same reader decoding at full size
5. build_abstraction(n_queries=1000, pool_size=1000)        vs  the targets (5 min, 4 GiB)
6. write the Hub folder (triad_dataset.folder.io) and run the validator on it - no alternative

    python3 benchmarks/bench_build_abstraction.py [--classes 16000] [--queries 1000] [--keep DIR]

Target: each paper-size subset in under 5 minutes and 4 GiB on 2 cores.
"""

from __future__ import annotations

import argparse
import io
import random
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from triad_dataset.contract import names
from triad_dataset.sources import imagefolder
from triad_dataset.sources.imagefolder import read_image_folder
from triad_dataset.sources.wordnet import NounGraph, _bfs, load_wordnet, parse_dict_dir
from triad_dataset.tracks.abstraction import build_abstraction

GIB = 1024**3


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


@dataclass
class Stage:
    name: str
    wall: float
    cpu: float
    rss: int
    alternative: str = ""
    alt_wall: float | None = None


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """(result, wall seconds, CPU seconds of this process) - CPU time matters on a shared machine."""
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - start, time.process_time() - cpu


def naive_depths(g: NounGraph) -> np.ndarray:
    """Alternative: for each synset, a Python BFS up the hypernyms until the first root."""
    out = np.zeros(len(g), dtype=np.int32)
    for i in range(len(g)):
        frontier, d = [i], 0
        while True:
            if any(g.parent_ptr[x] == g.parent_ptr[x + 1] for x in frontier):
                break
            frontier = list({int(p) for x in frontier for p in g.parents(x)})
            d += 1
        out[i] = d
    return out


def stand_in_classes(g: NounGraph, count: int, seed: int = 0) -> list[int]:
    """A seeded sample of non-instance synsets below physical_entity (where ImageNet-21K's classes live)."""
    below = g.descendant_distances(g.index_of("n00001930"))
    pool = sorted(i for i in below if not g.parent_instance[g.parent_ptr[i] : g.parent_ptr[i + 1]].any())
    return sorted(random.Random(seed).sample(pool, count))


def jpeg(k: int, size: tuple[int, int] = (256, 240)) -> bytes:
    """A stand-in photo: the 16 bits of `k` as a 4x4 grid of dark/light cells (distinct bytes for every k)."""
    img = Image.new("RGB", size, (k % 251, 90, 160))
    cw, ch = size[0] // 4, size[1] // 4
    for bit in range(16):
        if (k >> bit) & 1:
            x, y = (bit % 4) * cw, (bit // 4) * ch
            img.paste((250, 250, 240), (x + 4, y + 4, x + cw - 4, y + ch - 4))
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=80)
    return buf.getvalue()


def write_stand_in_folder(g: NounGraph, classes: list[int], root: Path) -> int:
    rng = random.Random(1)
    first = {}
    for k, node in enumerate(classes):
        wnid = g.wnids[node]
        d = root / wnid
        d.mkdir(parents=True)
        data = jpeg(k)
        first[node] = data
        (d / f"{wnid}_1.JPEG").write_bytes(data)
    bad = rng.sample(classes, 120)
    for k, node in enumerate(bad):  # files sorted before the good one: '0' < '1'
        wnid = g.wnids[node]
        if k < 40:
            (root / wnid / f"{wnid}_0.JPEG").write_bytes(b"\xff\xd8 broken download")
        elif k < 80:
            (root / wnid / f"{wnid}_0.JPEG").write_bytes(jpeg(k, (160, 200)))
        else:  # a byte-identical copy of a class sorted earlier, whose own image is kept first
            earlier = classes[classes.index(node) - 1]
            (root / wnid / f"{wnid}_0.JPEG").write_bytes(first[earlier])
    return sum(1 for _ in root.rglob("*.JPEG"))


def full_decode_probe(data: bytes) -> tuple[int, int]:
    """Alternative to imagefolder._probe: decode at full size."""
    with Image.open(io.BytesIO(data)) as img:
        img.load()
        return img.size


def read_with_full_decode(root: Path, known: Any) -> Any:
    original = imagefolder._probe
    imagefolder._probe = full_decode_probe
    try:
        return read_image_folder(root, known_wnids=known, progress=False)
    finally:
        imagefolder._probe = original


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", type=int, default=16000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--keep", help="write the stand-in folder here and keep it")
    parser.add_argument("--no-folder", action="store_true", help="skip writing and validating the Hub folder")
    args = parser.parse_args(argv)
    stages: list[Stage] = []

    g, wall, cpu = timed(load_wordnet)
    rss = peak_rss()
    alt = None
    if Path("/usr/share/wordnet/data.noun").is_file():
        alt = timed(lambda: parse_dict_dir("/usr/share/wordnet"))[1]
    stages.append(Stage("load WordNet 3.0 noun graph (compact copy)", wall, cpu, rss, "parse dict data.noun", alt))

    roots = np.flatnonzero(np.diff(g.parent_ptr) == 0)
    fast, wall, cpu = timed(lambda: _bfs(g.child_ptr, g.child_idx, roots, len(g)))
    slow, alt, _ = timed(lambda: naive_depths(g))
    if not np.array_equal(fast, slow):
        print("depth mismatch between the two methods", file=sys.stderr)
        return 1
    stages.append(Stage("depth of 82,115 synsets (frontier BFS)", wall, cpu, peak_rss(), "per-synset Python walk", alt))

    classes = stand_in_classes(g, args.classes)
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_abstraction_"))
    try:
        if args.keep and tmp.exists():
            shutil.rmtree(tmp)
        files, wall, cpu = timed(lambda: write_stand_in_folder(g, classes, tmp))
        stages.append(
            Stage(f"write stand-in folder ({len(classes):,} classes, {files:,} files)", wall, cpu, peak_rss())
        )
        images, wall, cpu = timed(lambda: read_image_folder(tmp, known_wnids=g.index, progress=False))
        alt = timed(lambda: read_with_full_decode(tmp, g.index))[1]
        stages.append(
            Stage(
                f"read image folder ({images.audit['retained']:,} kept)",
                wall,
                cpu,
                peak_rss(),
                "same reader, full-size decode",
                alt,
            )
        )
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    result, wall, cpu = timed(lambda: build_abstraction(g, images, n_queries=args.queries, seed=0, progress=False))
    stages.append(
        Stage(
            f"build_abstraction ({args.queries:,} queries x 4 configs, 1,000-candidate pools)",
            wall,
            cpu,
            peak_rss(),
            "target",
            300.0,
        )
    )

    if not args.no_folder:
        from triad_dataset.contract.features import features_for
        from triad_dataset.folder.io import write_folder
        from triad_dataset.folder.validate import validate_folder

        out = Path(tempfile.mkdtemp(prefix="bench_abstraction_out_")) / "triad"
        try:
            audit = {"benchmark": "triad", "pool_size": 1000, **result.audit}
            _, wall, cpu = timed(
                lambda: write_folder(
                    out,
                    result.tables,
                    card="# benchmark\n",
                    audit=audit,
                    features={c: features_for(c) for c in result.tables},
                )
            )
            size = sum(f.stat().st_size for f in out.rglob("*.parquet"))
            stages.append(Stage(f"write Hub folder ({size / 2**20:.0f} MiB of parquet)", wall, cpu, peak_rss()))
            problems, wall, cpu = timed(lambda: validate_folder(out))
            stages.append(Stage(f"triad validate ({len(problems)} violations)", wall, cpu, peak_rss()))
            if problems:
                print("\n".join(problems[:20]), file=sys.stderr)
                return 1
        finally:
            shutil.rmtree(out.parent, ignore_errors=True)

    print("\n| stage | wall s | CPU s | peak RSS so far (MiB) | alternative | alt. wall s | alt. / ours |")
    print("|---|---:|---:|---:|---|---:|---:|")
    for st in stages:
        alt_s = f"{st.alt_wall:.2f}" if st.alt_wall else ""
        ratio = f"{st.alt_wall / st.wall:.1f}x" if st.alt_wall else ""
        print(
            f"| {st.name} | {st.wall:.2f} | {st.cpu:.2f} | {st.rss / 2**20:.0f} | {st.alternative} | {alt_s} | {ratio} |"
        )
    a = result.audit["abstraction"]
    i2c, c2i = (a["configs"][c] for c in names.ABSTRACTION_CONFIGS)
    skipped = {k: images.audit[k] for k in ("unreadable", "too_small", "duplicates")}
    print(
        f"\nimages kept {images.audit['retained']:,}, skipped {skipped}; concepts {a['concepts']:,} "
        f"(removed shallow {a['removed_shallow']}, blacklist in pool {a['blacklist']['in_concept_pool']})"
    )
    print(
        f"I2C: {i2c['mean_positives']:.2f} positives, {i2c['mean_siblings']:.2f} siblings per query "
        f"(paper 1.77 / 9.05); C2I: {c2i['mean_positives']:.2f} / {c2i['mean_siblings']:.2f} (paper 5 / 150.87); "
        f"C2I depths {c2i['depth_range'][0]}-{c2i['depth_range'][1]} (paper 5-16)"
    )
    ok = stages[-1].wall < 300 and peak_rss() < 4 * GIB
    print(
        f"target (< 300 s and < 4 GiB per subset): {'met' if ok else 'NOT met'}; "
        f"whole process peak RSS {peak_rss() / GIB:.2f} GiB"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
