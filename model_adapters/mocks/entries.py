"""The tiny random test models as registry entries, added through the `triad.models` entry-point group.

setup.cfg names `ENTRIES` under `[options.entry_points] triad.models`, so `triad run --model tiny-random-clip` works
wherever this package is installed, while `triad run --help` lists the real models only. Each entry names the recipe
whose adapter class it runs; the tiny family (`model_adapters.mocks.tiny`) and the tiny reasoning loader
(`model_adapters.mocks.tiny_reasoning`) build the models in memory. Their numbers are never results.
"""

from __future__ import annotations

from typing import Final

from model_adapters.mocks import tiny_reasoning
from model_adapters.models.recipes import EMBED_RL_TCOT_OPTIONS, TINY, UME_R1_GEN_OPTIONS
from model_adapters.models.registry import ModelEntry

ENTRIES: Final[tuple[ModelEntry, ...]] = (
    ModelEntry(
        "tiny-random-clip",
        TINY,
        "tiny:clip",
        revision="seed0",
        max_batch=16,
        random_init=True,
        options={"arch": "clip"},
        recipe="clip",
        description="random tiny CLIP (tests; not a result)",
    ),
    ModelEntry(
        "tiny-random-siglip",
        TINY,
        "tiny:siglip",
        revision="seed0",
        max_batch=16,
        random_init=True,
        options={"arch": "siglip"},
        recipe="siglip",
        description="random tiny SigLIP (tests; not a result)",
    ),
    ModelEntry(
        "tiny-random-vlm",
        TINY,
        "tiny:vlm",
        revision="seed0",
        has_instruction_field=True,
        max_batch=8,
        random_init=True,
        options={"arch": "vlm"},
        recipe="qwen3-vl-embedding",
        description="random tiny Qwen3-VL embedder, Qwen3-VL-Embedding pipeline (tests; not a result)",
    ),
    ModelEntry(
        "tiny-random-vlm2vec",
        TINY,
        "tiny:vlm2vec",
        revision="seed0",
        max_batch=8,
        random_init=True,
        options={"arch": "vlm2vec"},
        recipe="vlm2vec-v2",
        description="random tiny Qwen2-VL, VLM2Vec-V2's encoding path (tests; not a result)",
    ),
    ModelEntry(
        "tiny-random-ume-r1-gen",
        TINY,
        "tiny:ume-r1",
        revision="seed0",
        max_batch=8,
        random_init=True,
        options={**UME_R1_GEN_OPTIONS, "decoding": {"max_new_tokens": 12}},
        recipe="ume-r1-gen",
        loader=tiny_reasoning.load,
        description="random tiny Qwen2-VL with <disc_emb>/<gen_emb>, UME-R1 Gen recipe, 12 new tokens "
        "(tests; not a result)",
    ),
    ModelEntry(
        "tiny-random-embed-rl-tcot",
        TINY,
        "tiny:embed-rl",
        revision="seed0",
        max_batch=8,
        random_init=True,
        options={
            **EMBED_RL_TCOT_OPTIONS,
            "generator": "tiny:qwen3-vl",
            "generator_revision": "seed1",
            "decoding": {"do_sample": True, "temperature": 1.0, "max_new_tokens": 8},
        },
        recipe="embed-rl-tcot",
        loader=tiny_reasoning.load,
        description="random tiny Qwen3-VL with <emb>, Embed-RL + T-CoT recipe, T-CoT from a random tiny "
        "Qwen3-VL generating 8 tokens (tests; not a result)",
    ),
    ModelEntry(
        "tiny-random-reranker",
        TINY,
        "tiny:reranker",
        revision="seed0",
        has_instruction_field=True,
        max_batch=8,
        kind="reranker",
        random_init=True,
        options={"arch": "reranker"},
        recipe="qwen3-vl-reranker",
        description="random tiny Qwen3-VL, Qwen3-VL-Reranker pipeline (tests; not a result)",
    ),
)
