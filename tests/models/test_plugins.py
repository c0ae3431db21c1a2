"""The `triad.models` entry points deliver model entries, model families, captioners and captioner families.

A family delivered by an entry point loads the entries that name it, even when its own module builds them while the
entry points are being read; an option the family does not define is refused once they are all read.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from model_adapters.captioners import registry as captioners
from model_adapters.models import family_table, registry
from model_adapters.models.resolve import from_name
from triad_dataset.contract.errors import TriadError

PLUGIN = """
from dataclasses import dataclass

from model_adapters.captioners.registry import GeneratorEntry, GeneratorFamily
from model_adapters.families.dual_tower import DualTowerOptions
from model_adapters.models.family_table import Family
from model_adapters.models.recipes import Recipe
from model_adapters.models.registry import ModelEntry


@dataclass
class Loaded:
    entry: object
    path: str
    device: str
    dtype: str


def load(entry, path, *, device, dtype, **runtime):
    return Loaded(entry, path, device, dtype)


FAMILY = Family("plugin-towers", DualTowerOptions, load=load)
RECIPE = Recipe("plugin-towers", FAMILY.name, options={"max_length": 16}, dtype="bfloat16")
ROWS = [
    FAMILY,
    ModelEntry("plugin-model", RECIPE, "someone/plugin-model", own_options=OWN_OPTIONS),
    GeneratorFamily("plugin-ocr", __name__),
    GeneratorEntry("plugin-captioner", "captioner", "plugin-ocr", "package:nothing"),
]
"""


def _install(tmp_path: Path, monkeypatch, own_options: str = '{"max_length": 8}', rows: str = "ROWS") -> None:
    site = tmp_path / "site"
    dist = site / "fake_triad_rows-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-triad-rows\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[triad.models]\nrows = fake_triad_rows:{rows}\n")
    (site / "fake_triad_rows.py").write_text(f"OWN_OPTIONS = {own_options}\n{PLUGIN}")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "fake_triad_rows", raising=False)


def test_an_entry_point_delivers_a_family_and_the_entries_it_loads(tmp_path, monkeypatch):
    _install(tmp_path, monkeypatch)
    assert family_table.family_of("plugin-towers", "test").options is not None
    resolved = from_name("plugin-model", revision="r1")
    identity = resolved.identity
    assert (identity.family, identity.recipe, identity.dtype, identity.options) == (
        "plugin-towers",
        "plugin-towers",
        "bfloat16",
        {"max_length": 8},
    )
    assert identity.source_kind == "entry_point" and identity.input_pipeline == "unverified"
    loaded = resolved.load("cpu")
    assert (loaded.path, loaded.device, loaded.dtype) == ("someone/plugin-model", "cpu", "bfloat16")
    assert resolved.load("cpu") is loaded  # loaded once


def test_an_entry_point_delivers_a_captioner_and_its_family(tmp_path, monkeypatch):
    _install(tmp_path, monkeypatch)
    entry = captioners.get_entry("plugin-captioner")
    assert (entry.family, entry.hub_id) == ("plugin-ocr", "package:nothing")
    loaded = captioners.load(entry, device="cpu", dtype="float16")
    assert (loaded.entry, loaded.path, loaded.dtype) == (entry, "package:nothing", "float16")
    with pytest.raises(TriadError, match="unknown captioner 'nothing'; valid: .*plugin-captioner"):
        captioners.get_entry("nothing")


def test_an_option_the_delivered_family_lacks_is_refused_once_read(tmp_path, monkeypatch):
    _install(tmp_path, monkeypatch, own_options='{"max_lenght": 8}')
    with pytest.raises(TypeError, match="^model plugin-model: unknown plugin-towers option\\(s\\) max_lenght$"):
        registry.plugin_entries()


def test_a_row_of_another_type_is_one_line(tmp_path, monkeypatch):
    _install(tmp_path, monkeypatch, rows="OWN_OPTIONS")
    with pytest.raises(TriadError) as err:
        registry.entry_names()
    assert str(err.value) == (
        "entry point rows = fake_triad_rows:OWN_OPTIONS (triad.models): gives dict, expected one of ModelEntry, "
        "Family, GeneratorEntry, GeneratorFamily"
    )
