"""The synthetic ARK mini edition: five generated subtypes written as one Hub-style folder.

`triad build ark-mini --out DIR` calls `build_ark_mini`. Each subtype has >= 100 queries and a gallery of >= 500
items, deterministic for a seed; the generators live in `ark_dataset/generators/`.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

from tqdm.auto import tqdm

from ark_dataset.card import mini_card
from ark_dataset.features import features_for
from ark_dataset.generators import calendar_pages, code_drawing, electronics, mathematics, spatial_cogmap
from ark_dataset.generators.base import SubtypeBuild, assemble
from ark_dataset.names import GALLERY_SUFFIX, MINI_SUBTYPES
from ark_dataset.validate import validate_tables
from triad_dataset.contract.errors import TriadError
from triad_dataset.contract.records import BuildResult

GENERATORS: dict[str, ModuleType] = {
    module.SUBTYPE: module for module in (spatial_cogmap, mathematics, code_drawing, calendar_pages, electronics)
}
MINI_QUERIES = 100
# (cognitive demand, reasoning skills) of each generated subtype, per ARK Appendix B (see each generator's LABELS).
MINI_LABELS: dict[str, tuple[str, tuple[str, ...]]] = {
    s: (m.LABELS.cognitive_demand, m.LABELS.reasoning_skills) for s, m in GENERATORS.items()
}


def build_subtype(subtype: str, *, seed: int = 0, n_queries: int = MINI_QUERIES) -> SubtypeBuild:
    """Rows of one generated subtype with the facts behind every query and item."""
    if subtype not in GENERATORS:
        raise ValueError(f"no mini generator for subtype {subtype!r}; generated: {', '.join(MINI_SUBTYPES)}")
    return assemble(GENERATORS[subtype].generate(seed, n_queries), seed)


def build_mini(*, seed: int = 0, subtypes: tuple[str, ...] = MINI_SUBTYPES) -> BuildResult:
    """Tables of the mini edition (`<subtype>` and `<subtype>_gallery` per generated subtype) plus the audit."""
    tables: dict[str, list[dict]] = {}
    figures: dict[str, dict[str, int]] = {}
    for subtype in tqdm(subtypes, desc="ARK mini", unit="subtype", leave=False):
        build = build_subtype(subtype, seed=seed)
        tables[subtype] = build.queries
        tables[subtype + GALLERY_SUFFIX] = build.gallery
        figures[subtype] = {
            "queries": len(build.queries),
            "gallery": len(build.gallery),
            "hard_negatives": sum(len(q["hard_negative_ids"]) for q in build.queries),
        }
    problems = validate_tables(tables)
    if problems:  # a generator bug, never a user error
        raise ValueError("mini edition failed validation:\n" + "\n".join(problems[:20]))
    audit = {"benchmark": "ark", "edition": "mini", "synthetic": True, "seed": seed, "subtypes": figures}
    return BuildResult(tables, audit)


def build_ark_mini(out_dir: str | os.PathLike, *, seed: int = 0, overwrite: bool = False) -> Path:
    """Generate the mini edition and write it to `out_dir` (atomically; TriadError if it exists and not overwrite)."""
    from triad_dataset.folder.io import write_folder

    if Path(out_dir).exists() and not overwrite:  # fail before the work, not after (write_folder checks again)
        raise TriadError(f"{out_dir}: output folder exists (pass --overwrite to replace it)")
    result = build_mini(seed=seed)
    counts = {s: (f["queries"], f["gallery"]) for s, f in result.audit["subtypes"].items()}
    return write_folder(
        out_dir,
        result.tables,
        features={c: features_for(c) for c in result.tables},
        card=mini_card(
            counts, seed=seed, descriptions={s: GENERATORS[s].DESCRIPTION for s in counts}, labels=MINI_LABELS
        ),
        audit=result.audit,
        overwrite=overwrite,
    )
