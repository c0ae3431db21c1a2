"""`triad build full`: build TRIAD from the user's copies of its public sources.

Each track is built when its sources are given (at least one track is required):

* abstraction: `--imagenet DIR` (ImageNet-21K-style `<wnid>/<image files>`) and optionally `--wordnet DIR` (a
  WordNet 3.0 dict directory with `data.noun`, e.g. /usr/share/wordnet; default: the committed WordNet 3.0 noun
  graph). Unreadable, too small or duplicate images are skipped and counted in the audit.
* fashion: `--fashion-styles styles.csv --fashion-images DIR` (Fashion Product Images: `DIR/<id>.jpg`), plus
  `--fashion-annotations CSV` (`id, pattern, sleeve_length, length`) for the visual attributes; or a complete
  `--fashion-table CSV` in the documented attribute-table format (docs/dataset.md).
* cars: `--cars-annotations CSV --cars-images DIR` (Stanford Cars images listed as
  `image, class_name, colour, view, setting[, body_type][, product_id]`; make, model, year and body type come from
  the class name); or a complete `--cars-table CSV` in the attribute-table format.
* `--schema FILE`: another attribute schema (roles, values, budgets; schema.py `load_schema_file`) for the domains it
  names, e.g. the authors' own 28-field Fashion schema; the folder records the schema it was built with.

Paper sizes are the defaults: 1,000 queries per main subset and per Self direction, 500 Same queries, 1,000-candidate
pools. The folder is validated before it is moved into place.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from triad_dataset.contract import names as n
from triad_dataset.contract.errors import TriadError
from triad_dataset.contract.records import BuildResult

FASHION, CARS = n.DOMAINS


@dataclass(frozen=True)
class FullSources:
    """Paths of the user's source downloads (None where a track is not built)."""

    imagenet: Path | None = None
    wordnet: Path | None = None
    fashion_styles: Path | None = None
    fashion_images: Path | None = None
    fashion_annotations: Path | None = None
    fashion_table: Path | None = None
    cars_annotations: Path | None = None
    cars_images: Path | None = None
    cars_table: Path | None = None
    schema: Path | None = None  # attribute schema JSON (schema.py); None = the default schemas

    def tracks(self) -> list[str]:
        """Which tracks these sources can build (TriadError for a half-given domain)."""
        tracks = ["abstraction"] if self.imagenet is not None else []
        if self.wordnet is not None and self.imagenet is None:
            raise TriadError("--wordnet needs --imagenet (the abstraction track needs instance images)")
        if self.fashion_table is not None or self.fashion_styles is not None:
            if self.fashion_styles is not None and self.fashion_images is None:
                raise TriadError("--fashion-styles needs --fashion-images (the folder of <id>.jpg files)")
            tracks.append(FASHION)
        elif self.fashion_images is not None or self.fashion_annotations is not None:
            raise TriadError("--fashion-images/--fashion-annotations need --fashion-styles")
        if self.cars_table is not None or self.cars_annotations is not None:
            if self.cars_annotations is not None and self.cars_images is None:
                raise TriadError("--cars-annotations needs --cars-images (the Stanford Cars image folder)")
            tracks.append(CARS)
        elif self.cars_images is not None:
            raise TriadError("--cars-images needs --cars-annotations")
        if not tracks:
            raise TriadError("nothing to build: give --imagenet, the fashion sources and/or the cars sources")
        return tracks


def _given(path: Path | None) -> Path:
    """A source path that `FullSources.tracks` has already required for the track being built."""
    if path is None:  # not reached after FullSources.tracks
        raise TriadError("a source path this track needs is missing")
    return path


def read_catalog(domain: str, sources: FullSources, *, skip_unsupported: bool = False) -> Any:
    """The domain's catalog from a complete attribute table or from the public source's own metadata."""
    from triad_dataset.contract.schema import load_schema_file
    from triad_dataset.sources import catalog

    schema = load_schema_file(sources.schema).get(domain) if sources.schema is not None else None
    if domain == FASHION:
        if sources.fashion_table is not None:
            return catalog.read_attribute_table(
                sources.fashion_table, FASHION, images_dir=sources.fashion_images, schema=schema
            )
        return catalog.read_fashion_styles(
            _given(sources.fashion_styles),
            _given(sources.fashion_images),
            schema=schema,
            annotations=sources.fashion_annotations,
            skip_unsupported=skip_unsupported,
        )
    if sources.cars_table is not None:
        return catalog.read_attribute_table(sources.cars_table, CARS, images_dir=sources.cars_images, schema=schema)
    return catalog.read_stanford_cars(_given(sources.cars_annotations), _given(sources.cars_images), schema=schema)


def _abstraction(sources: FullSources, n_queries: int, pool_size: int, seed: int) -> BuildResult:
    from triad_dataset.sources.imagefolder import read_image_folder
    from triad_dataset.sources.wordnet import load_wordnet
    from triad_dataset.tracks.abstraction import build_abstraction

    graph = load_wordnet(sources.wordnet)
    images = read_image_folder(_given(sources.imagenet), known_wnids=graph.wnids)
    return build_abstraction(graph, images, n_queries=n_queries, pool_size=pool_size, seed=seed)


def build_full(
    out_dir: str | os.PathLike,
    sources: FullSources,
    *,
    n_queries: int = 1000,
    same_queries: int = n.SAME_QUERIES,
    pool_size: int = n.POOL_SIZE,
    seed: int = 0,
    overwrite: bool = False,
    skip_unsupported: bool = False,
    quiet: bool = False,
) -> Path:
    """Build every track the sources allow, validate, write `out_dir` and print the audit table."""
    from triad_dataset.editions.domain import build_domain
    from triad_dataset.editions.mini import write_validated
    from triad_dataset.folder.audit import format_audit
    from triad_dataset.folder.io import check_output_dir

    tracks = sources.tracks()
    if sources.schema is not None:  # a bad schema file fails before anything is read or written
        from triad_dataset.contract.schema import load_schema_file

        load_schema_file(sources.schema)
    check_output_dir(out_dir, overwrite)
    steps: list[tuple[str, Callable[[], BuildResult]]] = []
    if "abstraction" in tracks:
        steps.append(("abstraction", lambda: _abstraction(sources, n_queries, pool_size, seed)))
    for domain in (d for d in n.DOMAINS if d in tracks):

        def build(d: str = domain) -> BuildResult:
            return build_domain(
                d,
                read_catalog(d, sources, skip_unsupported=skip_unsupported),
                n_queries=n_queries,
                same_queries=same_queries,
                pool_size=pool_size,
                seed=seed,
            )

        steps.append((domain, build))
    result, timings = BuildResult(), {}
    for name, step in tqdm(steps, desc="full build", unit="track", disable=quiet):
        start = time.perf_counter()
        result = result.merge(step())
        timings[name] = time.perf_counter() - start
    extra = {"sources": {k: str(v) for k, v in vars(sources).items() if v is not None}, "pool_size": pool_size}
    start = time.perf_counter()
    path, audit = write_validated(out_dir, result, edition="full", seed=seed, overwrite=overwrite, extra=extra)
    timings["write + validate"] = time.perf_counter() - start
    if not quiet:
        print(format_audit(audit))
        print("\nstage seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in timings.items()))
        print(f"wrote {path} (0 validation violations)")
    return path
