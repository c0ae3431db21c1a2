"""Gives `vectors.plan_vectors` the run's encoder, a `RunEncoder`, and opens its embedding cache.

`model_adapters.models.selection` resolves the run's models from its settings. An API model gets its response
store and `--offline`. A reasoning embedder is encoded through its generation stage, which exists before any model
loads: a run whose vectors are cached counts its fallbacks from the stored generations without loading anything.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from model_adapters.generation.stage import GENERATION_DIR, GenerationStage, ReasoningAdapter, is_reasoning
from model_adapters.models.identity import TORCH, pillow_notice
from model_adapters.models.recipes import API, DUAL_TOWER
from model_adapters.models.resolve import ResolvedModel
from model_adapters.planning import textspace
from model_adapters.run.config import RunConfig, default_api_cache
from model_adapters.vectors import distributed
from model_adapters.vectors.cache import EmbeddingCache
from triad_dataset.contract.errors import TriadError


def log(ctx: distributed.Context, cfg: RunConfig, msg: str) -> None:
    """Print a progress note on stderr, on rank 0 only and not with --quiet."""
    if ctx.is_main and not cfg.quiet:
        print(msg, file=sys.stderr)


def open_cache(model: ResolvedModel, cfg: RunConfig, ctx: distributed.Context) -> EmbeddingCache | None:
    """Load the model's embedding cache. None with --no-cache or for a model that declares no revision."""
    notice = pillow_notice(model.identity.versions)
    if notice is not None:
        log(ctx, cfg, notice)
    if cfg.no_cache:
        return None
    if not model.identity.cacheable:
        log(
            ctx,
            cfg,
            f"note: {model.identity.label} declares no revision: its vectors are not cached (give it "
            "a revision, --revision / revision=..., to cache them)",
        )
        return None
    # a run over one captioner's captions keeps its vectors apart from another's, in ARK's text space
    cache = EmbeddingCache(cfg.cache_root, {**model.identity.cache_fields(), **textspace.identity_part(cfg.captions)})
    cache.load()
    return cache


def graph_folder(model: ResolvedModel, cfg: RunConfig) -> tuple[str, Any]:
    """Return where the model's ONNX graph lives, and the handle of a temporary folder or None.

    The graph lives in the cache folder's `onnx/<cache key>/`, or with --no-cache in a temporary folder that is
    removed when its handle goes.
    """
    from model_adapters.families import onnx_text

    if cfg.no_cache:
        import tempfile

        tmp = tempfile.TemporaryDirectory(prefix="triad-onnx-")
        return tmp.name, tmp
    return os.path.join(cfg.cache_root, onnx_text.ONNX, model.identity.cache_key()), None


def cached_text_limit(model: ResolvedModel, cfg: RunConfig) -> Any:
    """The text limit of an ONNX text model from its cached feed (no torch or transformers), else None."""
    if model.identity.backend == TORCH or model.identity.family == DUAL_TOWER or cfg.no_cache:
        return None
    from model_adapters.families import onnx_feed

    return onnx_feed.text_limit(graph_folder(model, cfg)[0])


def load_reranker(model: ResolvedModel, cfg: RunConfig, ctx: distributed.Context) -> Any:
    """Load the reranker. With `--rerank-backend onnx` it runs behind ONNX Runtime, exported once per identity."""
    if model.identity.backend == TORCH:
        return model.load(ctx.device, cfg.dtype)
    from model_adapters.families import onnx_rerank, onnx_text

    onnx_text.check_device(ctx.device, model.identity.label, "--rerank-backend")
    base = model.load(ctx.device, cfg.dtype)
    folder, tmp = graph_folder(model, cfg)
    wrapped = onnx_rerank.wrap(base, folder, model.identity.label, log=ctx.is_main and not cfg.quiet)
    wrapped.folder = tmp  # a temporary folder lives as long as the reranker
    return wrapped


def _generation_spec(model: ResolvedModel) -> Any:
    """Return a reasoning embedder's generation spec: its object's, else the one in its entry's options."""
    if model.obj is not None:
        return model.obj.generation
    if model.entry is None:
        raise RuntimeError("ResolvedModel has neither an entry nor an object")
    return model.entry.options["generation"]


class RunEncoder:
    """The run's encoder, loaded at most once, with its generation stage and API response store."""

    def __init__(self, model: ResolvedModel, cfg: RunConfig, ctx: distributed.Context) -> None:
        self.model, self.cfg, self.ctx = model, cfg, ctx
        self.stage: GenerationStage | None = None
        self.responses: EmbeddingCache | None = None
        self._raw: Any = None
        self._encoder: Any = None
        self._tmp: Any = None  # with --no-cache --backend onnx, the temporary folder of the exported graph
        if model.identity.generation is not None:
            self.stage = GenerationStage(_generation_spec(model), self.generation_root, label=model.identity.label)

    @property
    def generation_root(self) -> str | None:
        """Where the generation stage keeps its generations, None with --no-cache."""
        return None if self.cfg.no_cache else os.path.join(self.cfg.cache_root, GENERATION_DIR)

    def load_model(self) -> Any:
        """Load the model object itself once, an API model with its response store and `--offline`."""
        if self._raw is None:
            runtime: dict[str, Any] = {}
            if self.model.identity.family == API and self.model.obj is None:
                from model_adapters.families.api import response_identity

                self.responses = EmbeddingCache(
                    self.cfg.api_cache or default_api_cache(), response_identity(self.model.entry)
                )
                self.responses.load()
                runtime = {"responses": self.responses, "offline": self.cfg.offline}
            onnx = self.model.identity.backend != TORCH
            if onnx:
                from model_adapters.families.onnx_text import check_device

                if self.ctx.requested_device is None:  # ONNX runs on the CPU: no need to import torch to ask
                    self.ctx.requested_device = "cpu"
                check_device(self.ctx.device, self.model.identity.label)
                self._raw = self._cached_onnx()
            if self._raw is None:
                self._raw = self.model.load(self.ctx.device, self.cfg.dtype or self.model.identity.dtype, **runtime)
                if onnx:
                    self._raw = self._onnx(self._raw)
        return self._raw

    def _cached_onnx(self) -> Any:
        """The torch-free ONNX text encoder when its graph and feed are cached (`families.onnx_feed`), else None."""
        if self.model.identity.family == DUAL_TOWER or self.cfg.no_cache:
            return None
        from model_adapters.families import onnx_text

        return onnx_text.load_cached(graph_folder(self.model, self.cfg)[0])

    def _onnx(self, base: Any) -> Any:
        """Wrap the torch encoder `base` with ONNX Runtime as its forward, exporting the graph once per identity."""
        from model_adapters.families import onnx_text, onnx_towers

        identity = self.model.identity
        folder, self._tmp = graph_folder(self.model, self.cfg)
        wrap = onnx_towers.wrap if identity.family == DUAL_TOWER else onnx_text.wrap
        return wrap(base, folder, identity.label, log=self.ctx.is_main and not self.cfg.quiet)

    def encoder(self) -> Any:
        """Return the `Encoder` that the encode loop calls, a reasoning embedder behind its `ReasoningAdapter`."""
        if self._encoder is None:
            raw = self.load_model()
            if self.stage is not None and not is_reasoning(raw):
                raise TriadError(
                    f"model {self.model.identity.label}: its identity names a generation stage but the "
                    "loaded object has no generate/encode/generation (protocol.ReasoningEncoder)"
                )
            self._encoder = ReasoningAdapter(raw, self.stage) if self.stage is not None else raw
        return self._encoder

    def check_encoder(self) -> tuple[Any, Callable[[str, str], bool] | None]:
        """Return what the cache check re-encodes with, and which items it may check.

        A reasoning embedder re-encodes from its stored generations only, and items without one are left out. It
        never generates again: a new generation would be another input, not drift.
        """
        if self.stage is None:
            return self.load_model(), None
        return ReasoningAdapter(self.load_model(), self.stage, generate=False), self.stage.stored

    def process_counters(self) -> dict[str, Any]:
        """Return this process's API call counters and fresh generations, which rank 0 gathers."""
        obj = self.model.obj
        api = obj.api_stats() if obj is not None and callable(getattr(obj, "api_stats", None)) else None
        return {
            "api": api,
            "generated": self.stage.fresh if self.stage is not None else {},
            "stage": vars(self.stage.stats) if self.stage is not None else None,
        }

    def absorb(self, others: list[dict[str, Any]]) -> None:
        """On rank 0: add the other processes' fresh generations and stage counts, then compact the stage's cache."""
        if self.stage is None:
            return
        for counters in others:
            self.stage.add(counters["generated"])
        self.stage.cache.compact()
        for counters in others:
            self.stage.stats.add(counters.get("stage") or {})
