"""Model adapters and the evaluation runner (`triad run`).

At the top: what a user imports (`evaluate`, the `protocol`, the `runner`) and the CLI `commands`; below them one
subpackage per stage of a run: `models/` (which model) -> `planning/` (what to encode) -> `generation/` (text a
reasoning embedder generates first, cached under its own identity) -> `vectors/` (encode, cache) -> `ranks/` (rank,
score, write); `families/` implement the protocol (`families/api.py`: API-only models), `captioners/` the caption /
rewrite passes (`captioners/api.py`: API rewriters). Installed packages add models and families through the
`triad.models` entry-point group (`models/plugins.py`).

- `model_adapters.evaluate(encoder, data=..., configs=..., name=..., revision=...)`: evaluate your own model.
- `model_adapters.protocol`: the `Encoder` / `Reranker` / `ReasoningEncoder` protocols, `ModelInput`, `GenerationSpec`.
- `model_adapters.models.registry`: one declarative `ModelEntry` per model; `get_entry`, `load_encoder`, `load_reranker`;
  installed packages add entries through the `triad.models` entry-point group.
- `model_adapters.models.identity`: `ModelIdentity`, what every output and the cache name a model by.
- `model_adapters.models.resolve`: registry name / Hub id / folder / Python encoder -> a `ResolvedModel`.
- `model_adapters.planning.inputs`: docs/protocol.md §3 model inputs from rows, the query-side input variants, input keys.
- `model_adapters.vectors.cache`: the on-disk embedding cache.
- `model_adapters.ranks.ranking`: batched pool / gallery ranking and the rerank splice.
- `model_adapters.runner`: `run(RunConfig) -> dict`, the public path to `model_adapters/run/`. See docs/runner.md.
"""

from __future__ import annotations

from typing import Any

__all__ = ["evaluate"]


def __getattr__(name: str) -> Any:  # lazy: importing the package stays light
    if name == "evaluate":
        from model_adapters.api import evaluate

        return evaluate
    raise AttributeError(f"module 'model_adapters' has no attribute {name!r}")
