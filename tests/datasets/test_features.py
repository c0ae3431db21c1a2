"""Features of every TRIAD config follow docs/protocol.md §1 exactly."""

from __future__ import annotations

import pytest
from datasets import Image, List, Value

from triad_dataset.contract import names as n
from triad_dataset.contract.features import all_features, features_for

QUERY_COLUMNS = [
    "query_id",
    "task",
    "query_text",
    "query_image",
    "query_image_id",
    "instruction",
    "candidate_ids",
    "candidate_roles",
    "candidate_trap",
    "positive_ids",
    "positive_hops",
    "depth",
    "profile",
    "conditions",
    "turns",
    "session_type",
    "num_turns",
    "source_query_id",
]


def test_every_config_has_features_in_names_order() -> None:
    assert list(all_features()) == list(n.ALL_CONFIGS)


@pytest.mark.parametrize("config", n.TASK_CONFIGS)
def test_query_columns(config: str) -> None:
    expected = QUERY_COLUMNS + (["wnid"] if config in n.ABSTRACTION_CONFIGS + n.SELF_CONFIGS else [])
    features = features_for(config)
    assert list(features) == expected
    assert isinstance(features["query_image"], Image)
    assert features["candidate_ids"] == List(Value("string"))
    assert features["candidate_trap"] == List(Value("bool"))
    assert features["conditions"] == List(
        {
            "attribute": Value("string"),
            "polarity": Value("string"),
            "value": Value("string"),
            "old_value": Value("string"),
        }
    )


def test_corpus_columns() -> None:
    base = ["item_id", "image", "text", "attributes"]
    assert list(features_for(n.CONCEPTS_CORPUS)) == base + ["wnid", "name", "definition", "lemmas", "depth", "lexname"]
    assert list(features_for(n.INSTANCES_CORPUS)) == base + ["wnid", "leaf_name"]
    assert list(features_for(n.DOMAIN_CORPUS["fashion"])) == base + ["product_id", "gender", "brand", "year", "season"]
    assert list(features_for(n.DOMAIN_CORPUS["cars"])) == base + ["product_id", "brand", "year"]
    assert features_for(n.DOMAIN_CORPUS["cars"])["attributes"] == Value("string")  # JSON text
    assert isinstance(features_for(n.INSTANCES_CORPUS)["image"], Image)


def test_unknown_config_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown TRIAD config 'nope'; known: abstraction_i2c, abstraction_c2i"):
        features_for("nope")
