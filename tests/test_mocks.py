"""The test doubles stay out of the product: tiny models come through the entry point, help lists real models only.

The tiny random models live in `tests/doubles/`; their entries are added through the `triad.models`
entry-point group and keep the identity they had as built-in entries, no product loader branches on a tiny source,
and a misspelt option in a recipe row fails when the row is built.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from model_adapters.families.qwen_chat import ChatOptions
from model_adapters.models import recipes, registry
from model_adapters.models.resolve import from_name
from triad_cli.main import main

ROOT = Path(__file__).resolve().parents[1]
TINY_NAMES = (
    "tiny-random-clip",
    "tiny-random-siglip",
    "tiny-random-vlm",
    "tiny-random-vlm2vec",
    "tiny-random-ume-r1-gen",
    "tiny-random-embed-rl-tcot",
)


def test_run_help_lists_real_models_only(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    shown = capsys.readouterr().out
    assert "minilm" in shown
    assert "tiny-random" not in shown


def test_tiny_entries_come_through_the_entry_point_as_registry_models():
    assert not any(name.startswith("tiny-random") for name in registry.REGISTRY)
    installed = registry.plugin_entries()
    assert set(TINY_NAMES) <= set(installed)
    assert installed["tiny-random-reranker"][0].kind == "reranker"
    identity = from_name("tiny-random-clip").identity
    assert (identity.source_kind, identity.source, identity.family) == ("registry", "tiny:clip", "tiny")
    assert from_name("tiny-random-clip").random_init


def test_no_product_module_branches_on_a_tiny_source():
    product = list((ROOT / "model_adapters").rglob("*.py"))
    branching = [str(p) for p in product if re.search(r"""startswith\(\s*["']tiny:""", p.read_text())]
    assert branching == []


def test_a_misspelt_recipe_option_fails_when_the_row_is_built():
    with pytest.raises(TypeError, match="unknown dual_tower option"):
        recipes.Recipe("x", recipes.DUAL_TOWER, options={"max_lenght": 77})
    with pytest.raises(TypeError, match="unknown option"):
        ChatOptions.table(backbone="qwen2_vl", poling="last_attended")
    with pytest.raises(TypeError, match="unknown sentence_transformer option"):
        registry.ModelEntry("x", recipes.get_recipe("bge-m3"), "org/x", own_options={"max_seq_lenght": 8})
