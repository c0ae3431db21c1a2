"""The same encoder through the CLI (`--encoder path/file.py:build`) and Python (`evaluate(obj)`, imported as a
package module): one identity, one embedding cache key, so the second run encodes nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import model_adapters
from model_adapters.models.resolve import from_python
from tests.doubles.folders import write_tiny_triad
from triad_cli.main import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def package(tmp_path, monkeypatch):
    """examples/my_encoder.py as `pkg/my_encoder.py`, importable as `pkg.my_encoder` from the current folder."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    source = (ROOT / "examples" / "my_encoder.py").read_text(encoding="utf-8")
    (tmp_path / "pkg" / "my_encoder.py").write_text(source, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("pkg", "pkg.my_encoder"):
        sys.modules.pop(name, None)


def test_a_file_spec_and_the_imported_object_have_one_cache_key(package):
    from pkg.my_encoder import build

    by_file = from_python("pkg/my_encoder.py:build", name="bow").identity
    by_object = from_python(build(), name="bow").identity
    assert by_file.encoder_class == by_object.encoder_class == "my_encoder.BagOfWordsAndColour"
    assert by_file.source != by_object.source and by_file.cache_key() == by_object.cache_key()
    assert from_python(build(), name="other").identity.cache_key() != by_object.cache_key()  # the name counts


def test_the_cli_run_and_the_python_run_share_vectors(package, capsys):
    data = str(write_tiny_triad(package / "triad"))
    cache = package / "cache"
    args = ["run", "--encoder", "pkg/my_encoder.py:build", "--name", "bow", "--data", data, "--config"]
    args += ["constraints_cars", "--out", str(package / "cli"), "--cache-dir", str(cache), "--quiet", "--no-validate"]
    assert main(args) == 0
    cli = json.loads((package / "cli" / "results.json").read_text(encoding="utf-8"))
    assert cli["run"]["cache_hits"] == 0

    from pkg.my_encoder import build

    py = model_adapters.evaluate(
        build(), data=data, configs="constraints_cars", name="bow", out=str(package / "py"), cache_dir=str(cache),
        quiet=True, validate=False,
    )  # fmt: skip
    assert py["run"]["cache_dir"] == cli["run"]["cache_dir"]
    assert py["run"]["encoded"] == 0 and py["run"]["cache_hits"] == py["run"]["distinct_items"] > 0
    assert py["configs"]["constraints_cars"]["metrics"] == cli["configs"]["constraints_cars"]["metrics"]
