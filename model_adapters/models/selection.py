"""Resolves the embedder and the reranker that a run's settings name, with the backend that runs each.

`resolve_model` and `resolve_reranker` read a `ModelSettings`, such as `model_adapters.run.config.RunConfig`, and
hand the name or the object to `model_adapters.models.resolve`. `with_backend` puts a non-default backend into the
identity, so ONNX vectors are cached apart from torch's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from model_adapters.models.identity import TORCH, library_versions
from model_adapters.models.objects import MTEB_PREFIX, from_mteb, from_object
from model_adapters.models.resolve import ResolvedModel, from_name, from_python
from triad_dataset.contract.errors import TriadError


class ModelSettings(Protocol):
    """The settings of a run that choose its models (`model_adapters.run.config.RunConfig` has them all)."""

    model: str | None
    encoder: Any
    model_path: str | None
    name: str | None
    revision: str | None
    dtype: str | None
    recipe: str | None
    sees_images: bool | None
    backend: str
    rerank: str | None
    reranker: Any
    rerank_model_path: str | None
    rerank_recipe: str | None
    rerank_backend: str


def resolve_model(settings: ModelSettings) -> ResolvedModel:
    """Resolve the run's embedder: a registry name, Hub id or folder, or your own encoder, never both."""
    if settings.encoder is not None:
        if settings.model is not None:
            raise TriadError(
                f"give either a model (--model {settings.model}) or your own encoder, not both: an encoder "
                "never borrows another model's name, settings or cache"
            )
        adopted = from_object(settings.encoder, name=settings.name, revision=settings.revision)
        resolved = adopted or from_python(
            settings.encoder, name=settings.name, revision=settings.revision, sees_images=settings.sees_images
        )
        return with_backend(resolved, settings.backend)
    if not settings.model:
        raise TriadError("no model: give --model NAME|ORG/NAME|FOLDER or --encoder module:factory")
    if settings.sees_images is not None:
        raise TriadError(
            "--sees-images / --text-only apply to your own encoder (--encoder); a model's family decides what it sees"
        )
    if settings.model.startswith(MTEB_PREFIX):
        return with_backend(
            from_mteb(settings.model, model_path=settings.model_path, name=settings.name), settings.backend
        )
    resolved = from_name(
        settings.model,
        model_path=settings.model_path,
        name=settings.name,
        revision=settings.revision,
        dtype=settings.dtype,
        recipe=settings.recipe,
    )
    return with_backend(resolved, settings.backend)


def resolve_reranker(settings: ModelSettings) -> ResolvedModel | None:
    """Resolve the run's reranker, `--rerank NAME` or your own, or return None when the run is not reranked."""
    if settings.reranker is not None:
        if settings.rerank:
            raise TriadError(f"give either --rerank {settings.rerank} or your own reranker, not both")
        return with_backend(from_python(settings.reranker, kind="reranker"), settings.rerank_backend)
    if not settings.rerank:
        if settings.rerank_backend != TORCH:
            raise TriadError(f"--rerank-backend {settings.rerank_backend}: the run has no reranker (--rerank NAME)")
        return None
    resolved = from_name(
        settings.rerank,
        kind="reranker",
        model_path=settings.rerank_model_path,
        dtype=settings.dtype,
        recipe=settings.rerank_recipe,
    )
    return with_backend(resolved, settings.rerank_backend)


def with_backend(model: ResolvedModel, backend: str) -> ResolvedModel:
    """Put `backend` into the model's identity, and so into its cache key. Torch leaves the identity as it is.

    A model the backend cannot run is refused in one line (`families.onnx_text.refusal`, for a reranker
    `families.onnx_rerank.refusal`).
    """
    if backend == TORCH:
        return model
    from model_adapters.families import onnx_rerank, onnx_text

    identity = model.identity
    reranker = identity.kind == "reranker"
    if backend != onnx_text.ONNX:
        flag = "--rerank-backend" if reranker else "--backend"
        raise TriadError(f"{flag} {backend}: unknown backend; valid: {TORCH}, {onnx_text.ONNX}")
    if reranker:
        why = onnx_rerank.refusal(identity.recipe, identity.dtype, identity.label)
    else:
        why = onnx_text.refusal(identity.recipe, identity.dtype, identity.label)
    if why is not None:
        raise TriadError(why)
    model.identity = replace(
        identity, backend=backend, versions={**identity.versions, **library_versions(onnx_text.LIBRARIES)}
    )
    return model
