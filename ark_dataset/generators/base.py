"""What every mini-edition generator returns, and the shared step that turns it into ARK rows."""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ark_dataset.names import MINI_SUBTYPE_MODULES, SUBTYPE_DOMAIN
from ark_dataset.render import image_value


def subtype_of(module_name: str) -> str:
    """The subtype a generator module produces, looked up in names.MINI_SUBTYPE_MODULES by the module's name."""
    short = module_name.rsplit(".", 1)[-1]
    for subtype, module in MINI_SUBTYPE_MODULES.items():
        if module == short:
            return subtype
    raise ValueError(f"{module_name} is not listed in ark_dataset.names.MINI_SUBTYPE_MODULES")


@dataclass(frozen=True)
class Labels:
    """Reasoning-axis labels of a query (ARK §3.2): cognitive demand and one or more reasoning skills."""

    cognitive_demand: str
    reasoning_skills: tuple[str, ...]


@dataclass
class GenQuery:
    """One generated query: its facts, the index of its positive item, and (item index, intended violation) pairs."""

    facts: Any
    text: str | None
    positive: int
    negatives: Sequence[tuple[int, Hashable]]
    labels: Labels
    image: bytes | None = None


@dataclass
class GenItem:
    """One generated gallery item: its facts and a renderer producing (text, PNG bytes)."""

    facts: Any
    render: Callable[[], tuple[str | None, bytes | None]]


@dataclass
class Generated:
    """A generator's output before ids are assigned."""

    subtype: str
    queries: list[GenQuery]
    items: list[GenItem]


@dataclass
class SubtypeBuild:
    """Rows of `<subtype>` and `<subtype>_gallery` plus the facts behind every id (for program checks)."""

    subtype: str
    queries: list[dict[str, Any]]
    gallery: list[dict[str, Any]]
    query_facts: dict[str, Any] = field(default_factory=dict)
    item_facts: dict[str, Any] = field(default_factory=dict)
    intended: dict[str, dict[str, Hashable]] = field(default_factory=dict)  # query id -> negative id -> violation


def modality(text: str | None, image: bytes | None) -> str:
    """`text`, `image` or `text_image` (names.MODALITIES) from which parts are present."""
    if text and image:
        return "text_image"
    return "image" if image else "text"


def assemble(generated: Generated, seed: int) -> SubtypeBuild:
    """Shuffle the gallery (so ids say nothing about positives), assign opaque ids and render every item."""
    subtype = generated.subtype
    order = list(range(len(generated.items)))
    random.Random(f"{subtype}-ids-{seed}").shuffle(order)
    item_id = {index: f"{subtype}-g{rank:04d}" for rank, index in enumerate(order)}
    build = SubtypeBuild(subtype, [], [])
    for index in order:
        item = generated.items[index]
        text, image = item.render()
        iid = item_id[index]
        build.gallery.append(
            {
                "item_id": iid,
                "text": text,
                "image": image_value(image, f"{iid}.png") if image is not None else None,
                "modality": modality(text, image),
            }
        )
        build.item_facts[iid] = item.facts
    for number, query in enumerate(generated.queries):
        qid = f"{subtype}-q{number:04d}"
        build.queries.append(
            {
                "query_id": qid,
                "domain": SUBTYPE_DOMAIN[subtype],
                "subtype": subtype,
                "query_text": query.text,
                "query_image": image_value(query.image, f"{qid}.png") if query.image is not None else None,
                "positive_id": item_id[query.positive],
                "hard_negative_ids": [item_id[i] for i, _ in query.negatives],
                "cognitive_demand": query.labels.cognitive_demand,
                "reasoning_skills": list(query.labels.reasoning_skills),
            }
        )
        build.query_facts[qid] = query.facts
        build.intended[qid] = {item_id[i]: violation for i, violation in query.negatives}
    return build


class Gallery:
    """Items keyed by a canonical fact key, so the same facts are never added twice."""

    def __init__(self) -> None:
        self.items: list[GenItem] = []
        self.index: dict[Hashable, int] = {}

    def add(self, key: Hashable, item: GenItem) -> int:
        if key not in self.index:
            self.index[key] = len(self.items)
            self.items.append(item)
        return self.index[key]

    def __contains__(self, key: Hashable) -> bool:
        return key in self.index

    def __len__(self) -> int:
        return len(self.items)
