"""`model_adapters.evaluate`: evaluate your own model from Python, no registry name needed (mteb's `evaluate`).

from model_adapters import evaluate
results = evaluate(MyEncoder(), data="demo_output/triad", configs="state_cars", name="my-encoder",
                   revision="v1", out="runs/my-encoder")
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from typing import Any


def evaluate(
    model: Any,
    *,
    data: str,
    configs: str | Sequence[str] = "all",
    name: str | None = None,
    revision: str | None = None,
    out: str | None = None,
    sees_images: bool | None = None,
    reranker: Any = None,
    **options: Any,
) -> dict[str, Any]:
    """Run `model` over `data` and return the results dict (also written to `out`/results.json).

    `model`: an object satisfying `model_adapters.protocol.Encoder` (`dim`, `encode_queries`, `encode_candidates`),
    a "module:factory" string, a registry name / Hub id / local folder, "mteb:NAME", a SentenceTransformer, a
    transformers CLIPModel / SiglipModel, or an mteb encoder / ModelMeta (`model_adapters.models.objects`). `name` is what the results are shown
    under; `revision` versions your encoder (its vectors are cached only with one). `reranker`: an object with
    `score_pairs` or a registry name / Hub id / folder. Other keywords are `RunConfig` fields (limit, batch_size,
    cache_dir, no_cache, variant, device, quiet, ...). `out` defaults to a new temporary folder.
    """
    from model_adapters.run.config import RunConfig
    from model_adapters.run.runner import run

    own = not isinstance(model, str) or (":" in model and not model.startswith("mteb:"))
    own_reranker = reranker is not None and (not isinstance(reranker, str) or ":" in reranker)
    cfg = RunConfig(
        model=None if own else model,
        encoder=model if own else None,
        data=data,
        configs=configs,
        out=out or tempfile.mkdtemp(prefix="triad-run-"),
        name=name,
        revision=revision,
        sees_images=sees_images,
        reranker=reranker if own_reranker else None,
        rerank=None if own_reranker else reranker,
        **options,
    )
    return run(cfg)
