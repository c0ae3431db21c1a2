"""The `datasets.Features` of every TRIAD config (docs/protocol.md §1), keyed by the names in `triad_dataset/contract/names.py`.

Query configs share one schema (task metadata columns are null where they do not apply); abstraction and Self
queries also carry `wnid`. Corpus configs share `item_id`, `image`, `text`, `attributes` and add their domain fields.
`attributes` (the hidden labels that define relevance, never shown to a model) is a JSON object serialized as a
string with sorted keys, so every corpus has one fixed schema whatever its attribute names.

>>> sorted(features_for("state_cars"))[:4]
['candidate_ids', 'candidate_roles', 'candidate_trap', 'conditions']
>>> "wnid" in features_for("abstraction_i2c"), "wnid" in features_for("constraints_fashion")
(True, False)
>>> features_for("fashion_items")["image"]
Image(mode=None, decode=True)
"""

from __future__ import annotations

from datasets import Features, Image, List, Value

from triad_dataset.contract import names

_STR = Value("string")
_INT = Value("int64")

# docs/protocol.md §1 "Query row": identity, model-visible inputs, the candidate index column and its aligned labels.
QUERY_COLUMNS: dict[str, object] = {
    "query_id": _STR,
    "task": _STR,
    "query_text": _STR,
    "query_image": Image(),
    "query_image_id": _STR,
    "instruction": _STR,
    "candidate_ids": List(_STR),
    "candidate_roles": List(_STR),
    "candidate_trap": List(Value("bool")),
    "positive_ids": List(_STR),
    # task metadata, null where not applicable
    "positive_hops": List(_INT),
    "depth": _INT,
    "profile": _STR,
    "conditions": List({"attribute": _STR, "polarity": _STR, "value": _STR, "old_value": _STR}),
    "turns": List(_STR),
    "session_type": _STR,
    "num_turns": _INT,
    "source_query_id": _STR,
}
# Abstraction (and Self, built from the same graph) queries name their WordNet id (docs/protocol.md §1).
WNID_CONFIGS: tuple[str, ...] = names.ABSTRACTION_CONFIGS + names.SELF_CONFIGS

# docs/protocol.md §1 "Corpus row".
CORPUS_COLUMNS: dict[str, object] = {"item_id": _STR, "image": Image(), "text": _STR, "attributes": _STR}
CORPUS_DOMAIN_COLUMNS: dict[str, dict[str, object]] = {
    names.CONCEPTS_CORPUS: {
        "wnid": _STR,
        "name": _STR,
        "definition": _STR,
        "lemmas": List(_STR),
        "depth": _INT,
        "lexname": _STR,
    },
    names.INSTANCES_CORPUS: {"wnid": _STR, "leaf_name": _STR},
    # product corpora: the product id (shared by the images of one product) and the visible fields (docs/protocol.md §3),
    # stored as the strings a model sees ("2012", "Summer").
    **{
        names.DOMAIN_CORPUS[d]: {"product_id": _STR, **{f: _STR for f in names.VISIBLE_PRODUCT_FIELDS[d]}}
        for d in names.DOMAINS
    },
}
# Columns whose values may be given as Python dicts and are stored as JSON strings.
JSON_COLUMNS: tuple[str, ...] = ("attributes",)


def features_for(config: str) -> Features:
    """The Features of one TRIAD config; raises ValueError for an unknown name (listing the known ones)."""
    if config in names.TASK_CONFIGS:
        columns = dict(QUERY_COLUMNS)
        if config in WNID_CONFIGS:
            columns["wnid"] = _STR
        return Features(columns)
    if config in CORPUS_DOMAIN_COLUMNS:
        return Features({**CORPUS_COLUMNS, **CORPUS_DOMAIN_COLUMNS[config]})
    raise ValueError(f"unknown TRIAD config {config!r}; known: {', '.join(names.ALL_CONFIGS)}")


def all_features() -> dict[str, Features]:
    """Features of every TRIAD config, in `names.ALL_CONFIGS` order."""
    return {config: features_for(config) for config in names.ALL_CONFIGS}
