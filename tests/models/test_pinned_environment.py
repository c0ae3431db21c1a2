"""The libraries that move vectors are pinned and recorded: Pillow in the cache key, a notice under another one."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from model_adapters.models import identity
from model_adapters.models.identity import ModelIdentity

ROOT = Path(__file__).resolve().parents[2]


def _pins() -> dict[str, str]:
    found = re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)$", (ROOT / "constraints.txt").read_text(), flags=re.M)
    return {name.lower(): version for name, version in found}


def test_constraints_pin_pillow_and_tokenizers_as_the_code_says():
    pins = _pins()
    assert pins["pillow"] == identity.PINNED_PILLOW
    assert "tokenizers" in pins
    assert {"pillow", "tokenizers"} <= set(identity.LIBRARIES)


def test_another_pillow_changes_the_cache_key_and_says_so_in_one_line(monkeypatch):
    real = metadata.version

    def pinned(name: str) -> str:
        return identity.PINNED_PILLOW if name == "pillow" else real(name)

    def other(name: str) -> str:
        return "13.0.0" if name == "pillow" else real(name)

    monkeypatch.setattr(metadata, "version", pinned)
    at_pin = ModelIdentity("m", "registry", "org/m", revision="a" * 40)
    monkeypatch.setattr(metadata, "version", other)
    moved = ModelIdentity("m", "registry", "org/m", revision="a" * 40)
    assert at_pin.versions["pillow"] == identity.PINNED_PILLOW and moved.versions["pillow"] == "13.0.0"
    assert at_pin.cache_key() != moved.cache_key()
    assert identity.pillow_notice(at_pin.versions) is None
    notice = identity.pillow_notice(moved.versions)
    assert notice is not None and "\n" not in notice
    assert "Pillow 13.0.0" in notice and identity.PINNED_PILLOW in notice
