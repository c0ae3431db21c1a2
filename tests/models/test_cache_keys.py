"""Embedding-cache keys stay byte-identical: users' caches keep hitting.

`tests/data/cache_keys.json` holds `ModelIdentity.cache_fields()` and `cache_key()` of every registry entry, every
installed tiny entry, a local folder, a local copy, Hub ids, an own encoder and an ONNX run. It was written once by
the code before the model description was rewritten, and is never regenerated: a change here means users' cached
vectors are no longer found. To change keys on purpose, bump `ADAPTER_VERSION` (every family model) or one recipe's
`feed_version` (that recipe's models), re-write this file and say so in docs/runner.md.

Library versions are replaced by fixed values and temporary paths by placeholders, so the keys do not depend on
the machine. A Hub id resolves offline through a Hugging Face cache written here, at a fixed commit.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from model_adapters.models import registry
from model_adapters.models.identity import ModelIdentity
from model_adapters.models.resolve import from_name, from_python
from triad_dataset.contract.errors import TriadError

PINNED = Path(__file__).parents[1] / "data" / "cache_keys.json"
SHA = "0123456789abcdef0123456789abcdef01234567"
VERSIONS = {
    "torch": "2.0.0",
    "transformers": "5.0.0",
    "sentence-transformers": "5.0.0",
    "numpy": "2.0.0",
    "pillow": "12.3.0",
    "tokenizers": "0.20.0",
    "triad-benchmark": "0.1.0",
}
# The generators of the reasoning entries: their generation_config.json names the generation cache.
GENERATORS = ("zhibinlan/UME-R1-2B", "zhibinlan/UME-R1-7B", "Qwen/Qwen3-VL-8B-Instruct")
GENERATION_CONFIG = {"do_sample": True, "temperature": 0.7, "top_p": 0.8, "eos_token_id": [151645, 151643]}
# Hub ids that are no registry name, with the config.json that detection reads.
HUB_CONFIGS = {
    "someone/tiny-clip": {"model_type": "clip", "text_config": {"max_position_embeddings": 77}},
    "someone/tiny-siglip2": {"model_type": "siglip2", "text_config": {"max_position_embeddings": 64}},
    "someone/qwen-vl": {"model_type": "qwen3_vl", "dtype": "bfloat16"},
}


class MyEncoder:
    """An own encoder whose class path does not depend on where this test file lives."""

    dim = 4
    revision = "v1"

    def encode_queries(self, batch: Any) -> Any:
        raise NotImplementedError

    encode_candidates = encode_queries


MyEncoder.__module__ = "my_package.encoders"


def _pinned_json(identity: ModelIdentity, placeholders: dict[str, str]) -> dict[str, Any]:
    """The identity's cache fields and key with fixed library versions and temporary paths replaced."""
    identity = dataclasses.replace(identity, versions=dict(VERSIONS))
    text = json.dumps(identity.cache_fields(), sort_keys=True)
    for path, name in placeholders.items():
        text = text.replace(path, name)
    fields = json.loads(text)
    if identity.source in placeholders:
        identity = dataclasses.replace(identity, source=placeholders[identity.source])
    return {"fields": fields, "key": identity.cache_key()}


def _write_repo(hub: Path, repo: str, files: dict[str, Any]) -> None:
    folder = hub / f"models--{repo.replace('/', '--')}"
    snapshot = folder / "snapshots" / SHA
    snapshot.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (snapshot / name).write_text(json.dumps(content))
    (folder / "refs").mkdir(exist_ok=True)
    (folder / "refs" / "main").write_text(SHA)


def _minilm_folder(tmp: Path) -> Path:
    """A local folder holding minilm's files (links to the installed package's copy)."""
    source = Path(registry.resolve_path(registry.get_entry("minilm")))
    folder = tmp / "my-minilm"
    for path in sorted(source.rglob("*")):
        target = folder / path.relative_to(source)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(path, target)
    return folder


def _entries() -> list[tuple[str, str]]:
    installed = [(n, e.kind) for n, (e, _) in registry.plugin_entries().items() if n.startswith("tiny-random-")]
    return [(n, e.kind) for n, e in registry.REGISTRY.items()] + installed


def _by_name(kind: str, name: str, placeholders: dict[str, str]) -> dict[str, Any]:
    try:
        return _pinned_json(from_name(name, kind=kind).identity, placeholders)
    except TriadError as exc:
        return {"refused": str(exc)}


def current_keys(tmp: Path) -> dict[str, Any]:
    """Every pinned identity as today's code computes it (the caller sets up an empty Hugging Face cache)."""
    from huggingface_hub import constants

    hub = Path(constants.HF_HUB_CACHE)
    out: dict[str, Any] = {"offline, nothing cached": {n: _by_name(k, n, {}) for n, k in _entries()}}
    repos = {e.hub_id for e in registry.REGISTRY.values() if "/" in e.hub_id}
    for repo in sorted(repos | set(GENERATORS)):
        if not repo.startswith("http"):
            _write_repo(hub, repo, {"config.json": {}, "generation_config.json": GENERATION_CONFIG})
    out[f"offline, every Hub id cached at {SHA}"] = {n: _by_name(k, n, {}) for n, k in _entries()}
    for repo, config in HUB_CONFIGS.items():
        _write_repo(hub, repo, {"config.json": config})
    folder = str(_minilm_folder(tmp))
    names = {folder: "<folder>"}
    out["other sources"] = {
        "hub: someone/tiny-clip": _pinned_json(from_name("someone/tiny-clip").identity, names),
        "hub: someone/tiny-siglip2, --recipe siglip2": _pinned_json(
            from_name("someone/tiny-siglip2", recipe="siglip2").identity, names
        ),
        "hub: someone/qwen-vl, --recipe qwen3-vl-embedding": _pinned_json(
            from_name("someone/qwen-vl", recipe="qwen3-vl-embedding").identity, names
        ),
        "hub: someone/qwen-vl, --recipe generic": _pinned_json(
            from_name("someone/qwen-vl", recipe="generic").identity, names
        ),
        "folder": _pinned_json(from_name(folder).identity, names),
        "folder, --dtype bfloat16": _pinned_json(from_name(folder, dtype="bfloat16").identity, names),
        "minilm --model-path folder": _pinned_json(from_name("minilm", model_path=folder).identity, names),
        "own encoder": _pinned_json(from_python(MyEncoder(), name="mine").identity, names),
        "minilm, onnx": _pinned_json(dataclasses.replace(from_name("minilm").identity, backend="onnx"), names),
    }
    return out


@pytest.fixture
def empty_hub_cache(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    for provider_env in ("ARK_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(provider_env, raising=False)
    return tmp_path


def test_cache_keys_are_the_pinned_ones(empty_hub_cache):
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))
    now = current_keys(empty_hub_cache)
    assert now.keys() == pinned.keys()
    for group, cases in pinned.items():
        assert now[group].keys() == cases.keys(), group
        for name, want in cases.items():
            assert now[group][name] == want, f"{group}: {name}"
