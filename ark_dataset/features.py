"""`datasets.Features` of every ARK config (docs/protocol.md §5; CONTRACTS §1).

>>> sorted(features_for("metro"))[:3]
['cognitive_demand', 'domain', 'hard_negative_ids']
>>> list(features_for("metro_gallery"))
['item_id', 'text', 'image', 'modality']
"""

from __future__ import annotations

import datasets

from ark_dataset.names import GALLERY_SUFFIX, SUBTYPES

QUERY_COLUMNS: tuple[str, ...] = (
    "query_id",
    "domain",
    "subtype",
    "query_text",
    "query_image",
    "positive_id",
    "hard_negative_ids",
    "cognitive_demand",
    "reasoning_skills",
)
GALLERY_COLUMNS: tuple[str, ...] = ("item_id", "text", "image", "modality")


def query_features() -> datasets.Features:
    """Columns of a `<subtype>` queries config."""
    string = datasets.Value("string")
    return datasets.Features(
        {
            "query_id": string,
            "domain": string,
            "subtype": string,
            "query_text": string,
            "query_image": datasets.Image(),
            "positive_id": string,
            "hard_negative_ids": datasets.List(string),
            "cognitive_demand": string,
            "reasoning_skills": datasets.List(string),
        }
    )


def gallery_features() -> datasets.Features:
    """Columns of a `<subtype>_gallery` config."""
    string = datasets.Value("string")
    return datasets.Features({"item_id": string, "text": string, "image": datasets.Image(), "modality": string})


def split_config(config: str) -> tuple[str, bool]:
    """`"metro_gallery"` -> `("metro", True)`; `"metro"` -> `("metro", False)`; unknown names raise ValueError."""
    is_gallery = config.endswith(GALLERY_SUFFIX)
    subtype = config[: -len(GALLERY_SUFFIX)] if is_gallery else config
    if subtype not in SUBTYPES:
        raise ValueError(
            f"unknown ARK config {config!r}; subtypes are {', '.join(SUBTYPES)} (gallery: <subtype>{GALLERY_SUFFIX})"
        )
    return subtype, is_gallery


def features_for(config: str) -> datasets.Features:
    """Features of an ARK queries config (`<subtype>`) or gallery config (`<subtype>_gallery`)."""
    _, is_gallery = split_config(config)
    return gallery_features() if is_gallery else query_features()
