"""Model names on the Space: every case variant of a registry name is reserved, and a name needs a letter or digit."""

from __future__ import annotations

from pathlib import Path

import pytest

from spaces_app import names
from spaces_app.db import Database
from tests.space.test_space_trust import db, edited, submit, world
from tests.space_refusals import rejected

__all__ = ["db", "world"]  # the fixtures, shared with tests/space/test_space_trust.py

REGISTRY_CASES: list[tuple[str, str]] = [
    ("MINILM", "minilm"),
    ("SigLIP2", "siglip2"),
    ("SIGLIP2", "siglip2"),
    ("QWEN3-VL-EMBEDDING-8B", "qwen3-vl-embedding-8b"),
    ("qwen3-vl-embedding-8B", "qwen3-vl-embedding-8b"),
]


def other_model(world: dict) -> Path:
    """A run whose results.json names a model that is not in the registry."""
    return edited(world, world["runs"][0], "names-other", results=lambda r: {**r, "model": {"name": "x"}})


@pytest.mark.parametrize(("variant", "entry"), REGISTRY_CASES)
def test_case_variants_of_a_registry_name_are_reserved(db: Database, world: dict, variant: str, entry: str) -> None:
    assert names.registry_model(variant) == entry == names.registry_model(entry)
    assert names.name_key(variant) == names.name_key(entry)
    run = other_model(world)
    rejected(db, submit(db, world, run, entry), f"stands for the registry model '{entry}'")
    rejected(db, submit(db, world, run, variant), f"stands for the registry model '{entry}'")


def test_case_variants_keep_capital_look_alikes() -> None:
    assert names.name_key("\u0392ert-base") == names.name_key("\u03b2ert-base") == names.name_key("BERT-base")
    assert names.name_key("Il") == names.name_key("ll") == names.name_key("ii")


@pytest.mark.parametrize("name", [".", "--", "-.-", "!!", "\u2014"])
def test_a_name_without_a_letter_or_digit_is_refused(db: Database, world: dict, name: str) -> None:
    out = submit(db, world, world["runs"][0], name)
    assert out.message == "Rejected: model name has no letter or digit. Nothing was stored.", out.message
    rejected(db, out)
    with pytest.raises(names.BadName, match="^model name has no letter or digit$"):
        names.clean_name(name)


def test_an_ordinary_new_name_is_accepted(db: Database, world: dict) -> None:
    assert names.registry_model("MyModel-v2") is None
    assert submit(db, world, world["runs"][0], "MyModel-v2").accepted


def test_a_run_of_the_registry_model_may_use_its_name_in_any_case(db: Database, world: dict) -> None:
    def claim(r: dict) -> dict:
        return {
            **r,
            "model": {
                "name": "siglip2",
                "source_kind": "registry",
                "revision": "c" * 40,
                "hub_id": "google/siglip2-so400m-patch14-384",
            },
        }

    run = edited(world, world["runs"][1], "names-siglip2", results=claim)
    assert submit(db, world, run, "siglip2").accepted
    again = edited(world, world["runs"][2], "names-siglip2-again", results=claim)
    assert submit(db, world, again, "SigLIP2").accepted
