"""The test doubles stay out of the product: the tests declare them, and every `--help` lists real models only.

The tiny random models live in `tests/doubles/`. The tests add their families and entries through the public
`triad.models` entry-point group (`tests.doubles.declare`), and the entries keep the identity they had as built-in
entries. No module of the product packages imports, names or defines a double, no product module branches on a
tiny source, and a misspelt option in a recipe row fails when the row is built.
"""

from __future__ import annotations

import ast
import configparser
import re
from pathlib import Path

import pytest

from model_adapters.families.qwen_chat import ChatOptions
from model_adapters.models import family_table, plugins, recipes, registry
from model_adapters.models.resolve import from_name
from tests.doubles import tiny
from triad_cli.main import main

ROOT = Path(__file__).resolve().parents[2]
TINY_NAMES = (
    "tiny-random-clip",
    "tiny-random-siglip",
    "tiny-random-vlm",
    "tiny-random-vlm2vec",
    "tiny-random-ume-r1-gen",
    "tiny-random-embed-rl-tcot",
)
# A string naming a module of the tests, as an entry's `"module:function"` loader or a captioner family's module.
TEST_MODULE = re.compile(r"tests(\.\w+)+(:\w+)?")


def product_packages() -> list[str]:
    """The packages the wheel ships: setup.cfg's `[options.packages.find] include`."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return [name.rstrip("*") for name in config["options.packages.find"]["include"].split()]


def product_files() -> list[Path]:
    return [path for package in product_packages() for path in sorted((ROOT / package).rglob("*.py"))]


def imported_names(tree: ast.AST) -> list[str]:
    """The absolute module names a module's import statements name, at any nesting level."""
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return out


def test_the_product_packages_are_the_six():
    assert sorted(product_packages()) == sorted(
        ["triad_dataset", "ark_dataset", "metrics", "model_adapters", "spaces_app", "triad_cli"]
    )


def test_no_product_module_imports_or_names_a_test_double():
    packages = set(product_packages())
    found = []
    for path in product_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name in imported_names(tree):
            parts = name.split(".")
            if parts[0] in ("tests", "conftest") or parts[0] in packages and {"mocks", "testing"} & set(parts[1:]):
                found.append((str(path.relative_to(ROOT)), name))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and TEST_MODULE.fullmatch(node.value):
                found.append((str(path.relative_to(ROOT)), node.value))
    assert found == []


def test_no_product_module_defines_a_test_double():
    files = product_files()
    assert [str(p) for p in files if {"mocks", "doubles"} & set(p.parts) or p.name == "testing.py"] == []
    named = [
        (str(path.relative_to(ROOT)), node.value)
        for path in files
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.search(r"tiny-random|tiny:", node.value)
    ]
    assert named == []


def test_setup_cfg_registers_no_model_rows():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    assert sorted(config["options.entry_points"]) == ["console_scripts"]


def test_run_help_lists_real_models_only(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    shown = capsys.readouterr().out
    assert "minilm" in shown
    assert "tiny-random" not in shown


@pytest.mark.parametrize(("command", "real"), [("caption", "qwen3-vl-8b-instruct"), ("rewrite", "qwen3-8b")])
def test_caption_and_rewrite_help_list_real_models_only(capsys, command, real):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    shown = capsys.readouterr().out
    assert real in shown
    assert "tiny" not in shown


def test_tiny_entries_come_through_the_entry_point_as_registry_models():
    assert not any(name.startswith("tiny-random") for name in registry.REGISTRY)
    installed = registry.plugin_entries()
    assert set(TINY_NAMES) <= set(installed)
    assert installed["tiny-random-reranker"][0].kind == "reranker"
    identity = from_name("tiny-random-clip").identity
    assert (identity.source_kind, identity.source, identity.family) == ("registry", "tiny:clip", "tiny")
    assert from_name("tiny-random-clip").random_init


def test_the_tiny_family_comes_through_the_entry_point():
    assert "tiny" not in family_table.FAMILY_TABLE
    row = family_table.family_of("tiny", "test")
    assert (row.load, row.reads_weights) == (tiny.load, False)
    delivered = [r for r in plugins.rows() if getattr(r.value, "name", None) in ("tiny", "tiny-random-clip")]
    assert {r.where for r in delivered} == {"entry point tiny-random = tests.doubles.entries:rows (triad.models)"}
    assert all(r.own for r in delivered)  # declared by triad-benchmark-tests, a companion distribution


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
