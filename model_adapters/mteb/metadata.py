"""mteb `TaskMetadata` built from the project's task metadata (`triad_dataset.contract.tasks`, `ark_dataset.tasks`).

Descriptions, modalities and references are read from those tables, never written again here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from triad_dataset.contract.tasks import TaskMetadata as OurTask

LANGUAGE: Final = ["eng-Latn"]
SPLIT: Final = "test"
TRIAD_MAIN: Final = "triad_map"  # the protocol's mAP, ties kept in pool order (docs/protocol.md §4)
ARK_MAIN: Final = "ark_recall_at_1"  # ARK §3.1: Recall@1, ties kept in gallery order
TRIAD_PREFIX: Final = "TRIAD-"
ARK_NAME: Final = "ARK"
_CODES: Final = {"text": "t", "image": "i"}


def category(query: Sequence[str] | None, candidate: Sequence[str] | None) -> str:
    """mteb's category code of a task from its query and candidate modalities (None: image and text).

    >>> category(("image", "text"), ("text",)), category(("text",), ("image", "text")), category(None, ("image",))
    ('it2t', 't2it', 'it2i')
    """
    sides = [
        "".join(_CODES[m] for m in sorted(side or ("image", "text"), key=("image", "text").index))
        for side in (query, candidate)
    ]
    return "2".join(sides)


def _modalities(code: str) -> list[str]:
    return [m for m, c in _CODES.items() if c in code]


def task_metadata(
    ours: OurTask, *, name: str, folder: str, revision: str, main_score: str, code: str, subsets: Sequence[str] = ()
) -> Any:
    """The mteb `TaskMetadata` of one task: its description, paper and inputs from `ours`, its data from `folder`.

    Args:
        ours: the project's metadata of the task (for ARK: of its first subtype, for the shared fields).
        name: the mteb task name.
        folder: the dataset folder (absolute path).
        revision: the folder's content fingerprint.
        main_score: the score key `task_specific_scores` returns as the main score.
        code: mteb's category code (`category`).
        subsets: the subsets (ARK's subtypes); empty for one default subset.
    """
    from mteb import TaskMetadata

    fields: dict[str, Any] = dict(
        name=name,
        description=ours.description if not subsets else _ark_description(),
        reference=_reference(ours),
        dataset={"path": folder, "revision": revision},
        type="Retrieval",
        category=code,
        modalities=_modalities(code),
        eval_splits=[SPLIT],
        eval_langs={s: LANGUAGE for s in subsets} if subsets else LANGUAGE,
        main_score=main_score,
        annotations_creators="derived",
        sample_creation="created",
        bibtex_citation="",
    )
    return TaskMetadata(**fields)


def _reference(ours: OurTask) -> str | None:
    from triad_dataset.contract.tasks import TRIAD_URL

    return TRIAD_URL if ours.benchmark == "triad" else None


def _ark_description() -> str:
    from ark_dataset.tasks import ARK_PAPER

    return f"{ARK_PAPER}: knowledge-intensive retrieval from each subtype's whole gallery, one positive per query."
