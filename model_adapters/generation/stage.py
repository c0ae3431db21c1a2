"""The generation stage: text a reasoning embedder generates for an input, generated once and cached under its own
identity, then handed to the embedding (TRIAD §5.4, B.2.1; ARK does not use one).

Identity (`spec_identity`): generator + revision + every prompt + every decoding setting + seed + the generating roles
+ the spec's version; its key (`vectors.cache.model_key`) names the cache folder, and each input's record is keyed
within it by `planning.inputs.input_key` (sha256 over role, text, image bytes and instruction). So:

- a cached generation is reused, never regenerated — not to "check" it either: the papers keep sampling on (UME-R1
  keeps the checkpoint's sampling settings, B.2.1; Embed-RL's T-CoT script samples at temperature 1.0), and a new
  sample would be a different input to the embedding;
- any change to the prompt, a decoding setting, the seed or the generator is another identity: it generates anew;
- the embedding cache key includes the generation key (`ModelIdentity.generation`), so vectors embedded from one
  generation are never served for another.

`ReasoningAdapter` turns a `protocol.ReasoningEncoder` into the plain `Encoder` the runner's encode loop calls:
`encode_queries(batch)` = generate what is not stored (one `generate` call per batch of misses), store it, then
`encode(batch, generations, role)`. With `generate=False` (the runner's cache check) it never generates.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from model_adapters.generation.records import RecordCache, RecordFormat
from model_adapters.planning.inputs import CANDIDATE, QUERY, input_key
from model_adapters.protocol import Generation, GenerationSpec, ModelInput
from model_adapters.vectors.cache import model_key
from triad_dataset.contract.errors import TriadError

GENERATION_DIR: Final = "_generations"  # the generation cache's folder under the embedding cache root
ROLES: Final = (QUERY, CANDIDATE)


def _valid_record(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("text"), str)
        and (
            value.get("token_ids") is None
            or (isinstance(value["token_ids"], list) and all(isinstance(t, int) for t in value["token_ids"]))
        )
        and (value.get("fallback") is None or isinstance(value["fallback"], str))
    )


GENERATIONS: Final = RecordFormat("generator_key", "generations", "generation cache", "generator", valid=_valid_record)


def is_reasoning(obj: Any) -> bool:
    """Whether `obj` is a reasoning embedder (`protocol.ReasoningEncoder`: generate, encode, generation)."""
    return (
        callable(getattr(obj, "generate", None))
        and callable(getattr(obj, "encode", None))
        and getattr(obj, "generation", None) is not None
    )


def _spec(value: Any, where: str) -> GenerationSpec:
    if isinstance(value, GenerationSpec):
        return value
    if isinstance(value, Mapping):
        try:
            return GenerationSpec(**{**value, "roles": tuple(value.get("roles", ROLES))})
        except TypeError as exc:
            raise TriadError(f"{where}: `generation` {exc} (model_adapters.protocol.GenerationSpec)") from exc
    raise TriadError(
        f"{where}: `generation` is {type(value).__name__}; it must be a "
        "model_adapters.protocol.GenerationSpec (or a dict of its fields)"
    )


def spec_identity(value: Any, where: str) -> dict[str, Any]:
    """The generation identity (JSON) of a `GenerationSpec` (or a dict of its fields): what the key hashes."""
    spec = _spec(value, where)
    problems = []
    if not isinstance(spec.generator, str) or not spec.generator:
        problems.append("generator must name the generating model")
    if (
        not isinstance(spec.prompts, Mapping)
        or not spec.prompts
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in spec.prompts.items())
    ):
        problems.append("prompts must be a non-empty {name: prompt text} mapping")
    if not isinstance(spec.decoding, Mapping):
        problems.append("decoding must be a mapping of every decoding setting")
    if not spec.roles or any(r not in ROLES for r in spec.roles):
        problems.append(f"roles must be some of {', '.join(ROLES)}")
    if spec.seed is not None and (isinstance(spec.seed, bool) or not isinstance(spec.seed, int)):
        problems.append("seed must be an int or None")
    if problems:
        raise TriadError(f"{where}: invalid generation spec: {'; '.join(problems)}")
    return {
        "generator": spec.generator,
        "revision": spec.revision,
        "prompts": dict(sorted(spec.prompts.items())),
        "decoding": dict(sorted(dict(spec.decoding).items())),
        "seed": spec.seed,
        "roles": [r for r in ROLES if r in spec.roles],
        "version": str(spec.version),
    }


def summary_of(identity: Mapping[str, Any]) -> dict[str, Any]:
    """What outputs record about a generation identity: its key, and each prompt by its sha256 (the texts stay in
    the generation cache's meta.json)."""
    out = {k: v for k, v in identity.items() if k != "prompts"}
    out["prompt_sha256"] = {
        name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in identity["prompts"].items()
    }
    return {"key": model_key(identity), **out}


def _record(g: Generation) -> dict[str, Any]:
    return {
        "text": g.text,
        "token_ids": None if g.token_ids is None else [int(t) for t in g.token_ids],
        "fallback": g.fallback,
    }


def _generation(record: Mapping[str, Any]) -> Generation:
    ids = record.get("token_ids")
    return Generation(record["text"], None if ids is None else tuple(ids), record.get("fallback"))


def _as_generation(value: Any, where: str) -> Generation:
    if isinstance(value, Generation):
        g = value
    elif isinstance(value, str):
        g = Generation(value)
    else:
        raise TriadError(
            f"{where}: generate returned {type(value).__name__}; expected a str or "
            "model_adapters.protocol.Generation per input"
        )
    if not isinstance(g.text, str) or not _valid_record(_record(g)):
        raise TriadError(
            f"{where}: generate returned an invalid Generation (text must be a str, token_ids ints, "
            "fallback a str or None)"
        )
    return g


@dataclass
class StageStats:
    """What one process's generation stage did: generator calls, records generated, inputs served from storage."""

    generator_calls: int = 0
    generated: int = 0
    reused: int = 0  # inputs served from stored generations (this run's batches, the cache check included)

    def add(self, other: Mapping[str, int]) -> None:
        """Add another process's counts (`vars()` of its `StageStats`)."""
        for name, value in other.items():
            setattr(self, name, getattr(self, name) + value)


class GenerationStage:
    """Generations of one `GenerationSpec` (or a dict of its fields), stored under `root/<key>/` (None: in memory
    only). Needs no model: a run whose generations are all stored never loads the generator."""

    def __init__(self, spec: Any, root: str | None, *, label: str) -> None:
        self.label = label
        self.identity = spec_identity(spec, f"model {label}")
        self.key = model_key(self.identity)
        self.roles = tuple(self.identity["roles"])
        self.cache = RecordCache(root, self.identity, GENERATIONS)
        self.cache.load()
        self.stats = StageStats()
        self.fresh: dict[str, dict[str, Any]] = {}  # records generated by this process (gathered by rank 0)

    def generations(
        self,
        batch: Sequence[ModelInput],
        role: str,
        generate: Callable[[Sequence[ModelInput], str], Sequence[Any]] | None,
    ) -> list[Generation] | None:
        """Each input's generation (None for a role that does not generate); only what is not stored is generated,
        by one `generate(inputs, role)` call (`generate=None`: a reuse-only pass, which must find everything)."""
        if role not in self.roles:
            return None
        keys = [input_key(role, item) for item in batch]
        todo: dict[str, int] = {}
        for i, key in enumerate(keys):
            if key not in self.cache.records and key not in todo:
                todo[key] = i
        if todo:
            if generate is None:
                raise RuntimeError("a reuse-only pass of the generation stage met an input without a stored generation")
            where = f"model {self.label}: {role} batch of {len(todo)} inputs"
            out = list(generate([batch[i] for i in todo.values()], role))
            self.stats.generator_calls += 1
            if len(out) != len(todo):
                raise TriadError(
                    f"{where}: generate returned {len(out)} generations for {len(todo)} inputs (one per input expected)"
                )
            records = {key: _record(_as_generation(value, where)) for key, value in zip(todo, out, strict=True)}
            self.cache.put(records)
            self.fresh.update(records)
            self.stats.generated += len(records)
        self.stats.reused += len(keys) - len(todo)
        return [_generation(self.cache.records[key]) for key in keys]

    def stored(self, key: str, role: str) -> bool:
        """Whether the generation of the input with this key (`inputs.input_key`) is stored (always True for a role
        that does not generate)."""
        return role not in self.roles or key in self.cache.records

    def add(self, records: Mapping[str, Mapping[str, Any]]) -> None:
        """Records generated by another process (rank 0 gathers them; shards on disk are theirs)."""
        self.cache.records.update(records)

    def summary(self, keys_by_role: Mapping[str, Iterable[str]], cache_dir: str | None) -> dict[str, Any]:
        """results.json "generation": the identity (prompts by hash), this run's figures, and how many inputs fell
        back (their recorded reasons counted over every input of a generating role, cached or not)."""
        fallbacks: Counter[str] = Counter()
        inputs = without = 0
        for role in self.roles:
            for key in keys_by_role.get(role, ()):
                inputs += 1
                record = self.cache.records.get(key)
                if record is None:
                    without += 1
                elif record.get("fallback"):
                    fallbacks[record["fallback"]] += 1
        return {
            **summary_of(self.identity),
            "cache_dir": cache_dir,
            "inputs": inputs,
            "generated": self.stats.generated,
            "reused": self.stats.reused,
            "generator_calls": self.stats.generator_calls,
            "fallbacks": dict(sorted(fallbacks.items())),
            "fallback_inputs": sum(fallbacks.values()),
            "inputs_without_record": without,
        }


class ReasoningAdapter:
    """The `Encoder` the runner encodes with for a reasoning embedder: generate (cached), then encode.
    `generate=False`: re-embed from stored generations only (the cache check; nothing is ever regenerated)."""

    def __init__(self, encoder: Any, stage: GenerationStage, *, generate: bool = True) -> None:
        found = spec_identity(encoder.generation, f"model {stage.label}")
        if model_key(found) != stage.key:
            raise TriadError(
                f"model {stage.label}: the loaded encoder's generation spec (key {model_key(found)}) is "
                f"not the one its identity names (key {stage.key})"
            )
        self.encoder = encoder
        self.stage = stage
        self.dim = getattr(encoder, "dim", None)
        self._generate = encoder.generate if generate else None

    def encode_queries(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.encoder.encode(batch, self.stage.generations(batch, QUERY, self._generate), QUERY)

    def encode_candidates(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.encoder.encode(batch, self.stage.generations(batch, CANDIDATE, self._generate), CANDIDATE)
