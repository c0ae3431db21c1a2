"""The tiny random test models as registry entries, added through the `triad.models` entry-point group.

setup.cfg names `ENTRIES` under `[options.entry_points] triad.models`, so `triad run --model tiny-random-clip` works
wherever this package is installed, while `triad run --help` lists the real models only. Each entry holds a real
recipe moved onto the tiny family: the tiny family (`tests.doubles.tiny`) and the tiny reasoning loader
(`tests.doubles.tiny_reasoning`) build the models in memory. Their numbers are never results.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from model_adapters.models.recipes import EMBED_RL_TCOT_OPTIONS, TINY, UME_R1_GEN_OPTIONS, Recipe, get_recipe
from model_adapters.models.registry import ModelEntry
from tests.doubles import tiny_reasoning


def _tiny(recipe: str, *, kind: str = "embedder", instruction: bool = False) -> Recipe:
    """The recipe named `recipe` on the tiny family: its adapter class and reference, not its options or dtype."""
    return replace(
        get_recipe(recipe, kind=kind),
        family=TINY,
        options={},
        config_options={},
        has_instruction_field=instruction,
        dtype=None,
    )


ENTRIES: Final[tuple[ModelEntry, ...]] = (
    ModelEntry(
        "tiny-random-clip",
        _tiny("clip"),
        "tiny:clip",
        revision="seed0",
        max_batch=16,
        random_init=True,
        own_options={"arch": "clip"},
        description="random tiny CLIP (tests; not a result)",
    ),
    ModelEntry(
        "tiny-random-siglip",
        _tiny("siglip"),
        "tiny:siglip",
        revision="seed0",
        max_batch=16,
        random_init=True,
        own_options={"arch": "siglip"},
        description="random tiny SigLIP (tests; not a result)",
    ),
    ModelEntry(
        "tiny-random-vlm",
        _tiny("qwen3-vl-embedding", instruction=True),
        "tiny:vlm",
        revision="seed0",
        max_batch=8,
        random_init=True,
        own_options={"arch": "vlm"},
        description="random tiny Qwen3-VL embedder, Qwen3-VL-Embedding pipeline (tests; not a result)",
    ),
    ModelEntry(
        "tiny-random-vlm2vec",
        _tiny("vlm2vec-v2"),
        "tiny:vlm2vec",
        revision="seed0",
        max_batch=8,
        random_init=True,
        own_options={"arch": "vlm2vec"},
        description="random tiny Qwen2-VL, VLM2Vec-V2's encoding path (tests; not a result)",
    ),
    ModelEntry(
        "tiny-random-ume-r1-gen",
        _tiny("ume-r1-gen"),
        "tiny:ume-r1",
        revision="seed0",
        max_batch=8,
        random_init=True,
        own_options={**UME_R1_GEN_OPTIONS, "decoding": {"max_new_tokens": 12}},
        loader=tiny_reasoning.load,
        description="random tiny Qwen2-VL with <disc_emb>/<gen_emb>, UME-R1 Gen recipe, 12 new tokens "
        "(tests; not a result)",
    ),
    ModelEntry(
        "tiny-random-embed-rl-tcot",
        _tiny("embed-rl-tcot"),
        "tiny:embed-rl",
        revision="seed0",
        max_batch=8,
        random_init=True,
        own_options={
            **EMBED_RL_TCOT_OPTIONS,
            "generator": "tiny:qwen3-vl",
            "generator_revision": "seed1",
            "decoding": {"do_sample": True, "temperature": 1.0, "max_new_tokens": 8},
        },
        loader=tiny_reasoning.load,
        description="random tiny Qwen3-VL with <emb>, Embed-RL + T-CoT recipe, T-CoT from a random tiny "
        "Qwen3-VL generating 8 tokens (tests; not a result)",
    ),
    ModelEntry(
        "tiny-random-reranker",
        _tiny("qwen3-vl-reranker", kind="reranker", instruction=True),
        "tiny:reranker",
        revision="seed0",
        max_batch=8,
        random_init=True,
        own_options={"arch": "reranker"},
        description="random tiny Qwen3-VL, Qwen3-VL-Reranker pipeline (tests; not a result)",
    ),
)
