"""Builds what `triad list models` shows: each registry model's name, type, status, backends and needs.

It also says whether a model's loader finds its packages installed here.

Type and status use the words of docs/models.md's systems table: `recipes.SYSTEM_TYPES`, and verified, refused or
API. The listing and that table can then be checked against each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from model_adapters.models import dependencies, recipes
from model_adapters.models.registry import ModelEntry

UNVERIFIED: Final = "unverified"  # a plug-in's entry whose recipe names no authors' code


@dataclass(frozen=True)
class ModelRow:
    """One line of `triad list models`."""

    name: str
    type: str  # one of recipes.SYSTEM_TYPES
    status: str  # "verified", "refused", "API" or "unverified"
    sees: str  # "text+image" or "text only"
    backends: str  # what can run its forward: "torch", "torch, onnx" for `--backend onnx`, "API", or "-" if refused
    needs: str  # what running it takes, or why it is refused
    loadable: str  # "yes", "no: pip install X" when its loader's packages are missing here, or "-" if refused


def system_type(entry: ModelEntry) -> str:
    """The entry's type in the words of the leaderboard's family column and docs/models.md."""
    if entry.kind == "reranker":
        return "reranker"
    by_family = {recipes.API: "API embedder", recipes.REASONING: "reasoning embedder", recipes.DUAL_TOWER: "dual-tower"}
    if entry.family in by_family:
        return by_family[entry.family]
    return "VLM embedder" if entry.sees_images else "text-only"


def status(entry: ModelEntry) -> str:
    """Say "refused" if its recipe says why, "API" if it needs a provider, "verified" if its recipe has a reference.

    Any other entry, a plug-in's, is "unverified".
    """
    if entry.recipe.refused:
        return "refused"
    if entry.family == recipes.API:
        return "API"
    return "verified" if entry.recipe.reference is not None else UNVERIFIED


def backends(entry: ModelEntry) -> str:
    """Say what can run the entry's forward: torch, and ONNX Runtime where its recipe has an ONNX path.

    That path is `--backend onnx`, for a reranker `--rerank-backend onnx`. An API model runs at its provider, and a
    refused one nowhere.
    """
    from model_adapters.families import onnx_rerank, onnx_text

    if status(entry) == "refused":
        return "-"
    if entry.family == recipes.API:
        return "API"
    onnx = onnx_rerank.RECIPES if entry.kind == "reranker" else onnx_text.RECIPES
    return "torch, onnx" if entry.recipe.name in onnx else "torch"


def needs(entry: ModelEntry) -> str:
    """Say what running the entry takes: its weights and where they come from, an API key, or why it is refused."""
    if entry.recipe.refused:
        return f"cannot be run as its authors run it (`triad run --model {entry.name}` says why; docs/models.md)"
    if entry.family == recipes.API:
        from model_adapters.families.api import provider

        key = provider(str(entry.options.get("provider"))).key_env
        return f"${key} (requests cached; --offline replays them)"
    if entry.hub_id.startswith("package:"):
        return f"the pip package {entry.revision} (installed with the project)"
    return f"Hub weights {entry.hub_id} (downloaded once; or --model-path DIR)"


def loadable(entry: ModelEntry) -> str:
    """Whether the entry's loader finds its packages in this environment ("-" for a refused entry)."""
    return "-" if status(entry) == "refused" else dependencies.loadable(entry)


def model_rows(entries: dict[str, ModelEntry]) -> list[ModelRow]:
    """One row per real model (randomly initialised test models left out), embedders first, in registry order."""
    real = [e for e in entries.values() if not e.random_init]
    ordered = [e for e in real if e.kind == "embedder"] + [e for e in real if e.kind != "embedder"]
    return [
        ModelRow(
            e.name,
            system_type(e),
            status(e),
            "text+image" if e.sees_images else "text only",
            backends(e),
            needs(e),
            loadable(e),
        )
        for e in ordered
    ]
