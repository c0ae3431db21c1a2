"""Every TRIAD task config as metadata, with no data folder: what it asks, its inputs, its main score, the paper
edition's counts and the chance level computed from them. ARK's subtypes use the same `TaskMetadata`
(`ark_dataset.tasks`).

>>> TASKS["abstraction_c2i"].paper_name, TASKS["abstraction_c2i"].main_score, round(TASKS["abstraction_c2i"].chance, 4)
('C2I', 'map', 0.0115)
>>> TASKS["state_cars"].chance is None  # the paper's text gives no positive count for it
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from triad_dataset.contract import names as n
from triad_dataset.contract.chance import random_map, shapes_with_mean

TRIAD_PAPER: Final = "TRIAD: Multimodal Retrieval across Abstraction, Constraints, and State (arXiv:2611.12364)"
TRIAD_URL: Final = "https://arxiv.org/abs/2611.12364"
IMAGE, TEXT = "image", "text"
MAP, RECALL_AT_1 = "map", "recall@1"  # the main scores (results.json metric keys)
# TRIAD B.1: "random-ranking mAP on the six main subsets ranges from 0.008 to 0.011" (stated, not computed)
MAIN_CHANCE_RANGE: Final = (0.008, 0.011)


@dataclass(frozen=True)
class TaskMetadata:
    """One task: a TRIAD config or an ARK subtype, as the paper defines it.

    Args:
        name: the config name (`load_dataset(folder, name)`).
        benchmark: "triad" or "ark".
        paper_name: the paper's label (I2C, C-Fashion, Daily-Life, ...).
        group: the TRIAD track or the ARK knowledge domain.
        description: what a query asks and what counts as a positive.
        query_modalities: what a query gives a model ("image", "text"); None where the paper does not say.
        candidate_modalities: the same for the candidates.
        main_score: the primary metric key of results.json ("map", "recall@1").
        queries: queries in the paper edition; None where the paper's text gives no count.
        pool_size: candidates per query (TRIAD) or the subtype's gallery (ARK) in the paper edition.
        positive_total: labeled positives over all queries of the paper edition (its mean times its queries).
        source: where in the paper the counts are stated.
        reference: the paper.
    """

    name: str
    benchmark: str
    paper_name: str
    group: str
    description: str
    query_modalities: tuple[str, ...] | None
    candidate_modalities: tuple[str, ...] | None
    main_score: str
    queries: int | None
    pool_size: int | None
    positive_total: int | None
    source: str
    reference: str

    @property
    def chance(self) -> float | None:
        """The main score of a uniformly random ranking of the paper edition; None where a count is missing.

        mAP: the mean exact random AP over the edition's query shapes (`random_map`). Recall@1 with one positive
        per query: 1 / gallery size.
        """
        if self.queries is None or self.pool_size is None or self.positive_total is None:
            return None
        if self.main_score == RECALL_AT_1:  # ARK §3.1: one positive, ranked first by chance once in a gallery
            return 1.0 / self.pool_size
        return random_map(shapes_with_mean(self.queries, self.pool_size, self.positive_total))

    @property
    def mean_positives(self) -> float | None:
        """Labeled positives per query in the paper edition."""
        return None if self.queries is None or self.positive_total is None else self.positive_total / self.queries


def _triad(
    name: str,
    group: str,
    description: str,
    inputs: tuple[tuple[str, ...], tuple[str, ...]],
    queries: int,
    positives: float | None,
    source: str,
) -> TaskMetadata:
    """A TRIAD task of the paper edition: `queries` queries over pools of 1,000 with `positives` per query."""
    total = None if positives is None else round(positives * queries)
    return TaskMetadata(
        name, "triad", n.DISPLAY_NAMES[name], group, description, inputs[0], inputs[1], MAP, queries,
        n.POOL_SIZE, total, source, TRIAD_PAPER,
    )  # fmt: skip


_I2C, _C2I = n.ABSTRACTION_CONFIGS
_SELF_I2C, _SELF_C2I = n.SELF_CONFIGS
_IMAGE_TEXT, _TEXT_ONLY = (IMAGE, TEXT), (TEXT,)
_MAIN = 1000  # TRIAD §3.2: each main subset has 1,000 queries with 1,000 candidates
_CONSTRAINTS = (
    "Constraints ({d}): a reference product (image + visible fields) and a request with 1-3 conditions; positives "
    "satisfy every condition and keep the preserved attributes; negatives are typed by the requirement they violate."
)
_STATE = (
    "State ({d}): the paired constraints query told as a 2-3 turn dialogue; conflict sessions revise a value and "
    "conflict traps satisfy the superseded one; positives satisfy the final active conditions."
)
_SAME = 'Same reference ({d}): "find this exact item"; positives are the other images of the same product.'
TASK_LIST: Final = (
    # A.1: I2C has 1.77 positives per query on average, C2I exactly 5
    _triad(
        _I2C,
        "abstraction",
        "Instance-to-Concept: an instance image and its leaf-class name retrieve its WordNet "
        "ancestors one or two levels up; sibling concepts are hard negatives.",
        (_IMAGE_TEXT, _TEXT_ONLY),
        _MAIN,
        1.77,
        "TRIAD §3.2, A.1",
    ),
    _triad(
        _C2I,
        "abstraction",
        "Concept-to-Instance: a concept's name and definition retrieve images of classes one "
        "or two levels below it; sibling-descendant images are hard negatives.",
        (_TEXT_ONLY, _IMAGE_TEXT),
        _MAIN,
        5.0,
        "TRIAD §3.2, A.1",
    ),
    # Table 7's mean positives of the product subsets are not in the paper's text: no count, no computed chance
    *(
        _triad(c, "constraints", _CONSTRAINTS.format(d=d), (_IMAGE_TEXT, _IMAGE_TEXT), _MAIN, None, "TRIAD §3.2")
        for c, d in zip(n.CONSTRAINTS_CONFIGS, n.DOMAINS, strict=True)
    ),
    *(
        _triad(c, "state", _STATE.format(d=d), (_IMAGE_TEXT, _IMAGE_TEXT), _MAIN, None, "TRIAD §3.2")
        for c, d in zip(n.STATE_CONFIGS, n.DOMAINS, strict=True)
    ),
    # C.1, Table 10: Self has 1,000 queries per direction and one positive each
    _triad(
        _SELF_I2C,
        "self",
        "Self reference: an instance image and its leaf-class name retrieve its own leaf concept, "
        "given by its definition only.",
        (_IMAGE_TEXT, _TEXT_ONLY),
        _MAIN,
        1.0,
        "TRIAD A.1, C.1 Table 10",
    ),
    _triad(
        _SELF_C2I,
        "self",
        "Self reference: a leaf concept's definition (no name) retrieves that class's image.",
        (_TEXT_ONLY, _IMAGE_TEXT),
        _MAIN,
        1.0,
        "TRIAD A.1, C.1 Table 10",
    ),
    # A.2: Same has 500 queries per domain with 2.042 (Fashion) and 5.156 (Cars) positives on average
    *(
        _triad(c, "same", _SAME.format(d=d), (_IMAGE_TEXT, _IMAGE_TEXT), n.SAME_QUERIES, p, "TRIAD A.2")
        for c, d, p in zip(n.SAME_CONFIGS, n.DOMAINS, (2.042, 5.156), strict=True)
    ),
)
TASKS: Final = {t.name: t for t in TASK_LIST}
