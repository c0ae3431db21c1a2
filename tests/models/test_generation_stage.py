"""The generation stage: a reasoning embedder's generations are cached under their own identity
(generator, revision, prompts, decoding, seed + each input's bytes), reused — never regenerated, not even by the
cache check — and part of the embedding cache key; results.json records them with the fallback counts.

The fake reasoning embedder samples: every `generate` call draws fresh random words, so any regeneration would
change the vectors (and the cache check would report drift). It counts its calls.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from model_adapters import evaluate
from model_adapters.generation import records as records_mod
from model_adapters.generation.records import RecordCache
from model_adapters.generation.stage import GENERATIONS, GenerationStage, spec_identity, summary_of
from model_adapters.models.identity import ModelIdentity
from model_adapters.planning.inputs import QUERY, input_key
from model_adapters.protocol import Generation, GenerationSpec, ModelInput
from tests.doubles.folders import HashedEncoder, write_tiny_triad
from triad_cli.main import main
from triad_dataset.contract.errors import TriadError

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<gen_emb>"


@pytest.fixture(scope="module")
def triad_dir(tmp_path_factory):
    return str(write_tiny_triad(tmp_path_factory.mktemp("data") / "triad"))


class SamplingReasoner:
    """Generates a random 'thought' per input (sampling), falls back when the thought lacks the marker; embeds the
    input's text + its thought with the hashed encoder."""

    dim = HashedEncoder.dim
    revision = "v1"

    def __init__(
        self,
        prompt: str = "Think step by step about: {text}",
        temperature: float = 1.0,
        roles: tuple[str, ...] = ("query", "candidate"),
    ) -> None:
        self.generation = GenerationSpec(
            "fake/reasoner-gen",
            "r1",
            {"query": prompt, "candidate": "Describe: {text}"},
            {"do_sample": True, "temperature": temperature, "max_new_tokens": 8},
            seed=3,
            roles=roles,
        )
        self.generate_calls = 0
        self.generated_roles: list[str] = []
        self.encode_calls = 0
        self._rng = random.Random()

    def generate(self, batch, role):
        self.generate_calls += 1
        self.generated_roles.append(role)
        out = []
        for _ in batch:
            words = [self._rng.choice(["red", "car", "fast", "old", MARKER]) for _w in range(3)]
            text = " ".join(words)
            out.append(
                Generation(
                    text,
                    token_ids=tuple(len(w) for w in words),
                    fallback=None if MARKER in words else f"no {MARKER} in the generated ids",
                )
            )
        return out

    def encode(self, batch, generations, role):
        self.encode_calls += 1
        gens = generations if generations is not None else [None] * len(batch)
        return np.stack(
            [
                HashedEncoder.vector(role, f"{b.text}|{g.text if g else ''}", b.image, b.instruction)
                for b, g in zip(batch, gens, strict=True)
            ]
        )


def _run(encoder, triad_dir, tmp_path, out: str, **kw):
    return evaluate(
        encoder,
        data=triad_dir,
        name="my-reasoner",
        out=str(tmp_path / out),
        cache_dir=str(tmp_path / "cache"),
        quiet=True,
        validate=False,
        **kw,
    )


def _rankings(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((folder / "rankings").glob("*.parquet"))}


def _generation_records(tmp_path: Path, result: dict) -> dict:
    cache = tmp_path / "cache" / "_generations" / result["generation"]["key"]
    out: dict = {}
    for shard in (cache / "shards").glob("*.json"):
        out.update(json.loads(shard.read_text())["generations"])
    return out


def test_second_run_generates_nothing_and_ranks_byte_identically(triad_dir, tmp_path):
    first = SamplingReasoner()
    r1 = _run(first, triad_dir, tmp_path, "r1")
    gen = r1["generation"]
    n_inputs = r1["run"]["distinct_items"]
    assert first.generate_calls > 0 and gen["generated"] == gen["inputs"] == n_inputs
    assert gen["generator_calls"] == first.generate_calls and gen["reused"] == 0
    # what results.json records: generator, revision, prompt hashes, decoding settings, seed, roles, the key
    assert gen["generator"] == "fake/reasoner-gen" and gen["revision"] == "r1" and gen["seed"] == 3
    assert gen["prompt_sha256"]["query"] == hashlib.sha256(b"Think step by step about: {text}").hexdigest()
    assert gen["decoding"] == {"do_sample": True, "max_new_tokens": 8, "temperature": 1.0}
    assert r1["model"]["generation"]["key"] == gen["key"]
    assert "figures" not in r1["run"]  # the per-process figures (fresh records) stay out of results.json
    # fallbacks counted from the stored records, by hand
    stored = _generation_records(tmp_path, r1)
    assert len(stored) == n_inputs
    by_hand = sum(1 for rec in stored.values() if MARKER not in rec["text"].split())
    assert gen["fallback_inputs"] == by_hand == sum(gen["fallbacks"].values())
    assert all(rec["token_ids"] == [len(w) for w in rec["text"].split()] for rec in stored.values())

    second = SamplingReasoner()
    r2 = _run(second, triad_dir, tmp_path, "r2")
    assert second.generate_calls == 0 and r2["generation"]["generated"] == 0  # 0 generator calls
    # the cache check re-embedded 8 items from their stored generations: no drift although generation samples
    assert r2["run"]["cache_check"]["items"] == 8 and r2["run"]["cache_check"]["changed"] is False
    assert r2["run"]["cache_check"]["min_cosine"] > 0.9999 and second.encode_calls > 0
    assert r2["run"]["encoded"] == 0 and r2["generation"]["fallback_inputs"] == by_hand
    assert _rankings(tmp_path / "r1") == _rankings(tmp_path / "r2")


def test_embedding_from_stored_text_when_the_embedding_cache_is_gone(triad_dir, tmp_path):
    r1 = _run(SamplingReasoner(), triad_dir, tmp_path, "r1")
    for folder in (tmp_path / "cache").iterdir():  # drop the embedding cache, keep the generations
        if folder.name not in ("_generations", "_runs"):
            for f in folder.rglob("*"):
                if f.is_file():
                    f.unlink()
    again = SamplingReasoner()
    r2 = _run(again, triad_dir, tmp_path, "r2")
    assert again.generate_calls == 0 and r2["run"]["encoded"] == r1["run"]["distinct_items"]
    assert r2["generation"]["reused"] == r1["run"]["distinct_items"]
    assert _rankings(tmp_path / "r1") == _rankings(tmp_path / "r2")


@pytest.mark.parametrize("change", [{"prompt": "Reason about: {text}"}, {"temperature": 0.7}])
def test_a_changed_prompt_or_decoding_setting_regenerates_and_reembeds(triad_dir, tmp_path, change):
    r1 = _run(SamplingReasoner(), triad_dir, tmp_path, "r1")
    changed = SamplingReasoner(**change)
    r2 = _run(changed, triad_dir, tmp_path, "r2")
    assert changed.generate_calls > 0 and r2["generation"]["generated"] == r1["run"]["distinct_items"]
    assert r2["generation"]["key"] != r1["generation"]["key"]
    assert r2["run"]["cache_hits"] == 0 and r2["run"]["cache_dir"] != r1["run"]["cache_dir"]


def test_only_the_roles_of_the_spec_generate(triad_dir, tmp_path):
    enc = SamplingReasoner(roles=("query",))
    result = _run(enc, triad_dir, tmp_path, "r1")
    queries = sum(v["queries"] for v in result["run"]["per_config"].values())
    assert set(enc.generated_roles) == {"query"}
    assert result["generation"]["roles"] == ["query"]
    assert 0 < result["generation"]["generated"] == result["generation"]["inputs"] <= queries


def test_generation_cache_is_keyed_by_spec_and_input_bytes(tmp_path):
    spec = GenerationSpec("g", "r", {"query": "p"}, {"do_sample": False}, roles=("query",))
    stage = GenerationStage(spec, str(tmp_path), label="x")
    calls = []

    def generate(batch, role):
        calls.append(len(batch))
        return [f"t:{b.text}" for b in batch]

    a, b = ModelInput("a", b"\x89PNG-1"), ModelInput("a", b"\x89PNG-2")
    out = stage.generations([a, b, a], QUERY, generate)
    assert calls == [2] and [g.text for g in out] == ["t:a", "t:a", "t:a"]  # same text, other image: generated
    assert stage.generations([a, b], QUERY, generate) and calls == [2]  # stored: not generated again
    assert stage.generations([a], "candidate", generate) is None  # a role that does not generate
    assert set(stage.cache.records) == {input_key(QUERY, a), input_key(QUERY, b)}
    # a fresh stage of the same spec reads them back; a reuse-only pass never generates
    fresh = GenerationStage(spec, str(tmp_path), label="x")
    assert [g.text for g in fresh.generations([b], QUERY, None)] == ["t:a"]
    with pytest.raises(RuntimeError, match="reuse-only"):
        fresh.generations([ModelInput("new")], QUERY, None)
    key = spec_identity(spec, "x")
    assert summary_of(key)["key"] == stage.key == fresh.key
    assert spec_identity(GenerationSpec("g", "r", {"query": "p"}, {"do_sample": True}, roles=("query",)), "x") != key


def test_corrupted_or_invalid_generation_shards_are_dropped_and_regenerated(tmp_path):
    spec = {"generator": "g", "revision": None, "prompts": {"query": "p"}, "decoding": {}, "roles": ["query"]}
    stage = GenerationStage(spec, str(tmp_path), label="x")
    stage.generations([ModelInput("a")], QUERY, lambda batch, role: ["first"])
    shard = next((tmp_path / stage.key / "shards").glob("*.json"))
    bad = json.dumps({"generator_key": stage.key, "generations": {"k": {"text": 3}}}).encode()
    (shard.parent / f"{hashlib.sha256(bad).hexdigest()}.json").write_bytes(bad)  # checksum right, value invalid
    shard.write_text(shard.read_text() + " ")  # checksum wrong
    again = GenerationStage(spec, str(tmp_path), label="x")
    assert len(again.cache.stats.corrupted_shards) == 2 and not again.cache.records
    assert [g.text for g in again.generations([ModelInput("a")], QUERY, lambda batch, role: ["second"])] == ["second"]
    other = spec_identity(dict(spec, prompts={"query": "other"}), "x")
    folder = tmp_path / RecordCache.key_of(other)
    folder.mkdir()
    (folder / "meta.json").write_bytes((tmp_path / stage.key / "meta.json").read_bytes())  # another spec's folder
    with pytest.raises(TriadError, match="generation cache written by another generator"):
        RecordCache(tmp_path, other, GENERATIONS)


def test_compaction_keeps_a_concurrent_writers_shards(tmp_path, monkeypatch):
    monkeypatch.setattr(records_mod, "COMPACT_ABOVE", 2)
    spec = spec_identity({"generator": "g", "revision": None, "prompts": {"q": "p"}, "decoding": {}}, "x")
    mine = RecordCache(tmp_path, spec, GENERATIONS)
    for i in range(3):
        mine.put({f"k{i}": {"text": f"t{i}"}})
    other = RecordCache(tmp_path, spec, GENERATIONS)
    other.put({"late": {"text": "written after `mine` started"}})
    mine.compact()
    fresh = RecordCache(tmp_path, spec, GENERATIONS)
    assert fresh.load() == 4 and fresh.records["late"]["text"] == "written after `mine` started"


def test_plain_encoders_keep_their_cache_keys():
    ident = ModelIdentity(name="m", source_kind="python", source="x:y", revision="v1")
    assert "generation" not in ident.to_json() and "generation" not in ident.cache_fields()


# --- your own reasoning embedder through the CLI, without registering it ------------------------------------------
def _docs_reasoner() -> str:
    """The reasoning embedder of docs/runner.md's "Reasoning embedders" section (the block starting
    `# my_reasoner.py`)."""
    text = (ROOT / "docs" / "runner.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(# my_reasoner\.py.*?)```", text, flags=re.S)
    assert len(blocks) == 1, "docs/runner.md must show exactly one `# my_reasoner.py` block"
    return blocks[0]


def test_the_documented_reasoning_embedder_runs_through_the_cli(triad_dir, tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    work.mkdir()
    (work / "my_reasoner.py").write_text(_docs_reasoner(), encoding="utf-8")
    monkeypatch.chdir(work)
    monkeypatch.syspath_prepend(str(work))
    try:
        args = [
            "run",
            "--encoder",
            "my_reasoner:build",
            "--name",
            "my-reasoner",
            "--data",
            triad_dir,
            "--cache-dir",
            str(tmp_path / "cache"),
            "--quiet",
            "--no-validate",
        ]
        assert main([*args, "--out", str(tmp_path / "a")]) == 0
        import my_reasoner

        assert my_reasoner.CALLS["generate"] > 0
        my_reasoner.CALLS["generate"] = 0
        assert main([*args, "--out", str(tmp_path / "b")]) == 0
        assert my_reasoner.CALLS["generate"] == 0
        results = json.loads((tmp_path / "b" / "results.json").read_text())
        assert results["generation"]["generated"] == 0 and results["model"]["generation"]["generator"]
        assert _rankings(tmp_path / "a") == _rankings(tmp_path / "b")
    finally:
        sys.modules.pop("my_reasoner", None)
    capsys.readouterr()


class _Bad(SamplingReasoner):
    def generate(self, batch, role):
        return ["only one"]


@pytest.mark.parametrize(
    ("encoder", "expected"),
    [
        (_Bad(), r"generate returned 1 generations for \d+ inputs"),
        (
            type("NoSpec", (), {"dim": 16, "generate": lambda s, b, r: [], "encode": lambda s, b, g, r: None})(),
            "has generate/encode but no `generation`",
        ),
    ],
)
def test_reasoning_embedder_errors_are_one_line(triad_dir, tmp_path, encoder, expected):
    with pytest.raises(TriadError, match=expected):
        _run(encoder, triad_dir, tmp_path, "r")


def test_an_invalid_generation_spec_is_one_line(triad_dir, tmp_path):
    enc = SamplingReasoner()
    enc.generation = {"generator": "", "revision": None, "prompts": {}, "decoding": {}}
    with pytest.raises(TriadError, match="invalid generation spec: generator must name.*prompts must be"):
        _run(enc, triad_dir, tmp_path, "r")


class TinyQwenReasoner:
    """Queries generate 6 greedy tokens with the tiny random Qwen2 LM (real transformers generation, its token ids
    kept); the embedding hashes the input with those ids. Falls back when token 220 was not generated."""

    dim = HashedEncoder.dim
    revision = "v1"

    def __init__(self) -> None:
        from tests.doubles.tiny_captioners import tiny_llm

        self.model, self.tok = tiny_llm(0)
        self.tok.padding_side = "left"
        self.generation = GenerationSpec(
            "tiny:qwen2",
            "seed0",
            {"query": "Think: {text}"},
            {"do_sample": False, "max_new_tokens": 6},
            roles=("query",),
        )
        self.generate_calls = 0

    def generate(self, batch, role):
        import torch

        self.generate_calls += 1
        prompts = [
            self.tok.apply_chat_template(
                [{"role": "user", "content": f"Think: {b.text}"}], add_generation_prompt=True, tokenize=False
            )
            for b in batch
        ]
        inputs = self.tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        with torch.inference_mode():
            out = self.model.generate(**inputs, max_new_tokens=6, do_sample=False, pad_token_id=self.tok.pad_token_id)
        new = out[:, inputs["input_ids"].shape[1] :].tolist()
        return [
            Generation(
                self.tok.decode(ids, skip_special_tokens=True),
                token_ids=tuple(ids),
                fallback=None if 220 in ids else "no token 220",
            )
            for ids in new
        ]

    def encode(self, batch, generations, role):
        gens = generations or [None] * len(batch)
        return np.stack(
            [
                HashedEncoder.vector(role, b.text + (str(g.token_ids) if g else ""), b.image, b.instruction)
                for b, g in zip(batch, gens, strict=True)
            ]
        )


def test_a_tiny_qwen_generator_behind_the_stage(triad_dir, tmp_path):
    enc = TinyQwenReasoner()
    r1 = _run(enc, triad_dir, tmp_path, "r1")
    stored = _generation_records(tmp_path, r1)
    assert enc.generate_calls > 0 and len(stored) == r1["generation"]["inputs"] > 0
    assert all(
        len(rec["token_ids"]) == 6 and enc.tok.decode(rec["token_ids"], skip_special_tokens=True) == rec["text"]
        for rec in stored.values()
    )
    assert r1["generation"]["fallback_inputs"] == sum(220 not in rec["token_ids"] for rec in stored.values())
    enc.generate_calls = 0
    r2 = _run(enc, triad_dir, tmp_path, "r2")
    assert enc.generate_calls == 0 and r2["generation"]["generated"] == 0
    assert _rankings(tmp_path / "r1") == _rankings(tmp_path / "r2")
