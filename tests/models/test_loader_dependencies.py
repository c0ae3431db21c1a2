"""Every entry loads after the README's setup: each family's declared loader modules cover what its modules import,
every runnable registry entry finds them installed, and a missing one is named in one line."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

from model_adapters.models import catalog, dependencies
from model_adapters.models.family_table import FAMILY_TABLE, plugin_families
from model_adapters.models.registry import REGISTRY, get_entry, load_encoder
from triad_dataset.contract.errors import TriadError

ROOT = Path(__file__).resolve().parents[2]
FIRST_PARTY = {"model_adapters", "triad_dataset", "ark_dataset", "metrics", "spaces_app", "triad_cli"}
# The modules whose third-party imports the family's loader reaches (the `tiny` family: the test models' writer,
# delivered by the test doubles' entry point).
FAMILIES = {**FAMILY_TABLE, **plugin_families()}
LOADER_MODULE = {name: f"model_adapters.families.{name}" for name in FAMILY_TABLE} | {"tiny": "tests.doubles.tiny"}


def third_party_imports(module: str, seen: set[str]) -> set[str]:
    """The top-level third-party modules `module` imports, following its imports of this project's modules."""
    path = ROOT / (module.replace(".", "/") + ".py")
    if module in seen or not path.is_file():
        return set()
    seen.add(module)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            top = name.split(".")[0]
            if top in FIRST_PARTY:
                found |= third_party_imports(name, seen)
            elif top not in sys.stdlib_module_names and top != "__future__":
                found.add(top)
    return found


# Imported only on a path the family's loader does not take: the ONNX backends (`--backend onnx`, their own check).
OPTIONAL = {"onnx", "onnxruntime"}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_family_declares_what_its_modules_import(family):
    imported = third_party_imports(LOADER_MODULE[family], set()) - OPTIONAL
    assert imported <= set(FAMILIES[family].modules), imported - set(FAMILIES[family].modules)


def test_every_runnable_entry_finds_its_loader_modules_installed():
    """The installed environment (`make setup`: the package with its extras) has every module each verified or API
    entry's loader imports, peft for the VLM2Vec LoRA adapters included."""
    runnable = [e for e in REGISTRY.values() if catalog.status(e) in ("verified", "API") and not e.random_init]
    assert len(runnable) >= 30
    missing = {e.name: dependencies.missing_modules(e) for e in runnable}
    assert {name: m for name, m in missing.items() if m} == {}
    assert "peft" in dependencies.loader_modules(get_entry("vlm2vec-v1-2b"))
    assert all(catalog.loadable(e) == "yes" for e in runnable)


def test_a_missing_package_is_named_in_one_line(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "peft" else real(name, *a))
    entry = get_entry("vlm2vec-v2")
    assert catalog.loadable(entry) == "no: pip install peft"
    with pytest.raises(TriadError, match=r"^model vlm2vec-v2: its loading code needs peft, not installed here "):
        load_encoder(entry)
    assert catalog.loadable(get_entry("twn")) == "-"  # refused: nothing to load
