#!/usr/bin/env python3
"""Derive the compact WordNet 3.0 noun graph committed as triad_dataset/data/wordnet30_nouns.json.gz.

Reads ``data.noun`` from a WordNet 3.0 dict directory (default: Debian's wordnet-base, /usr/share/wordnet), checks
that it is WordNet 3.0 (82,115 noun synsets, pinned offsets), keeps only what the abstraction track needs (offset,
lexicographer file, lemmas, definition, hypernym and instance-hypernym edges) and writes gzip'd JSON with
deterministic bytes. Also copies the WordNet licence notice next to it.

    python3 scripts/derive_wordnet.py [--dict /usr/share/wordnet] [--out triad_dataset/data]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

from triad_dataset.sources.wordnet import COMPACT_PATH, parse_dict_dir, read_compact, write_compact


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dict", default="/usr/share/wordnet", help="WordNet 3.0 dict directory")
    parser.add_argument("--out", default=str(COMPACT_PATH.parent), help="output directory")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    graph = parse_dict_dir(args.dict)
    out = Path(args.out) / COMPACT_PATH.name
    write_compact(graph, out)
    again = read_compact(out)
    if again.wnids != graph.wnids or again.definitions != graph.definitions or (again.depth != graph.depth).any():
        print(f"{out}: round trip differs from {args.dict}", file=sys.stderr)
        return 1
    digest = hashlib.sha256(out.read_bytes()).hexdigest()[:16]
    print(
        f"{out}: {len(graph):,} noun synsets, {len(graph.parent_idx):,} hypernym edges "
        f"({int(graph.parent_instance.sum()):,} instance), max depth {int(graph.depth.max())}, "
        f"{out.stat().st_size / 1e6:.2f} MB, sha256 {digest}…, {time.perf_counter() - start:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
