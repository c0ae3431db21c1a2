"""Every ARK subtype as metadata, with no data folder: what it asks, its inputs, Recall@1 and the paper's counts.

The ARK paper's per-subtype counts (its Table 1) are not in its text; only Comic's are stated (B.4: 87 queries over
a 3,468-cartoon gallery), so only Comic has a computed chance level. The release totals are `RELEASE_QUERIES` and
`RELEASE_GALLERY`.

>>> TASKS["comic"].paper_name, TASKS["comic"].group, round(TASKS["comic"].chance, 6)
('Comic', 'humanities_social_science', 0.000288)
>>> TASKS["metro"].chance is None
True
"""

from __future__ import annotations

from typing import Final

from ark_dataset.names import SUBTYPE_DOMAIN, SUBTYPES
from triad_dataset.contract.tasks import IMAGE, RECALL_AT_1, TEXT, TaskMetadata

ARK_PAPER: Final = "ARK: A Dual-Axis Multimodal Retrieval Benchmark along Reasoning and Knowledge"
RELEASE_QUERIES: Final = 1750  # ARK §3.1: 1,750 queries and 36,858 gallery candidates in total
RELEASE_GALLERY: Final = 36858
_T, _I, _IT = (TEXT,), (IMAGE,), (IMAGE, TEXT)

# (paper name, description, query modalities or None where the paper does not say) per subtype, in the order of
# `names.SUBTYPES`; ARK App. B. Every gallery holds images (the pictures, maps, charts, figures and renderings App. B
# describes).
_DESCRIBED: Final[tuple[tuple[str, str, tuple[str, ...] | None], ...]] = (
    ("Daily-Life", "Everyday scenes and apparel (COCO, Fashion200K) described by observable attributes; "
     "a perceptual baseline.", _T),
    ("Fine-Grained", "Ultra-high-resolution images (DIV8K) found by small or easily overlooked "
     "objects and details, often with spatial constraints.", _T),
    ("Spatial-Cogmap", "A few perspective views of a scene retrieve its bird's-eye cognitive map; "
     "hard negatives swap adjacent objects.", _I),
    ("Spatial-3D", "Synthetic 3D geometry (Spatial-DISE): rotation, folding, projection; the "
     "multiple-choice distractors are the hard negatives.", None),
    ("Biology", "A species description or common name retrieves the organism's photograph (INQUIRE); "
     "look-alike taxa are hard negatives.", _T),
    ("Physics", "A description of a mechanism, condition or outcome retrieves its schematic or "
     "phenomenon illustration.", _T),
    ("Chemistry", "A reaction setup in structure diagrams and symbols retrieves its product (EMMA); "
     "plausible alternative outcomes are hard negatives.", _IT),
    ("Mathematics", "Theorems and relations as geometric constructions and symbolic diagrams "
     "(MR2-Bench); look-alikes break a key constraint.", None),
    ("Code-Drawing", "A TikZ snippet retrieves its rendered figure (ReMI); one-line code "
     "perturbations give the hard negatives.", _T),
    ("Economics", "A statement about economic concepts and trends retrieves the chart that supports it "
     "(World Bank data).", _T),
    ("Comic", "A historical event and a viewpoint retrieve the editorial cartoon that conveys them "
     "(The Bulletin, 1886-1952).", _T),
    ("Art", "Indirect art-historical cues retrieve the painting (SemArt); stylistic neighbours that break "
     "a cue are hard negatives.", _T),
    ("Calendar", "Reasoning over traditional Chinese calendar pages: solar terms, lunar and Gregorian "
     "dates, zodiac.", _T),
    ("Metro", "Route connectivity, transfers and relative station positions retrieve the metro map.", _T),
    ("Computer-Science", "A methodological claim or conclusion retrieves the paper figure that "
     "supports it.", _T),
    ("Mechanical", "A part's name or function retrieves its image; category-consistent look-alikes "
     "are hard negatives.", _T),
    ("Electronics", "Circuit diagrams, truth tables and Karnaugh maps (ElectroVizQA); hard negatives "
     "perturb the logic, not the layout.", None),
)  # fmt: skip
_SUBTYPES: Final = dict(zip(SUBTYPES, _DESCRIBED, strict=True))
# (queries, gallery) by paper name; ARK B.4: "We select 3,468 cartoons to form the gallery and manually annotate 87
# instances to create the query set."
_COUNTS: Final = {"Comic": (87, 3468)}


def _task(subtype: str) -> TaskMetadata:
    paper_name, description, query = _SUBTYPES[subtype]
    queries, gallery = _COUNTS.get(paper_name, (None, None))
    return TaskMetadata(
        name=subtype,
        benchmark="ark",
        paper_name=paper_name,
        group=SUBTYPE_DOMAIN[subtype],
        description=description,
        query_modalities=query,
        candidate_modalities=_I,
        main_score=RECALL_AT_1,
        queries=queries,
        pool_size=gallery,
        positive_total=queries,  # one positive per query (ARK §3.1)
        source="ARK App. B" if paper_name in _COUNTS else "ARK App. B (counts: Table 1, not in the text)",
        reference=ARK_PAPER,
    )


TASK_LIST: Final = tuple(_task(s) for s in SUBTYPES)
TASKS: Final = {t.name: t for t in TASK_LIST}
