"""The tiny random test models' families and entries: the rows of the test doubles' `triad.models` entry point.

`declare.py` declares `rows` under `triad.models`, so `triad run --model tiny-random-clip` works in the test session
and the processes it starts, while `triad run --help` lists the real models only. The rows are the ones a third-party
plug-in would deliver: the tiny model family (`tiny`), the tiny captioner family (`tiny_captioners`), the
`tiny-random-*` model entries and the tiny captioner and rewriter. Each model entry holds a real recipe moved onto the
tiny family: the tiny family and the tiny reasoning loader (`tiny_reasoning`) build the models in memory. Their
numbers are never results.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from model_adapters.captioners.registry import (
    CAPTION_PROMPT,
    CAPTIONER,
    REWRITE_PROMPT,
    REWRITER,
    GeneratorEntry,
    GeneratorFamily,
)
from model_adapters.models.family_table import TORCH_IMAGES, Family
from model_adapters.models.recipes import EMBED_RL_TCOT_OPTIONS, UME_R1_GEN_OPTIONS, Recipe, get_recipe
from model_adapters.models.registry import ModelEntry
from tests.doubles import tiny, tiny_reasoning

TINY: Final = "tiny"  # the tiny model family and the tiny captioner family


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


def families() -> tuple[Family, GeneratorFamily]:
    """The tiny model family, whose models are built in memory (`tiny`), and the tiny captioner family."""
    return (
        Family(
            TINY,
            None,
            load=tiny.load,
            load_reranker=tiny.load_reranker,
            text_limit=tiny.text_limit,
            reads_weights=False,
            modules=(*TORCH_IMAGES, "tokenizers"),
        ),
        GeneratorFamily(TINY, "tests.doubles.tiny_captioners"),
    )


def generators() -> tuple[GeneratorEntry, ...]:
    """The tiny captioner and rewriter: random Qwen2-VL and Qwen2 LM generating 8 tokens."""
    return (
        GeneratorEntry(
            "tiny-random-captioner",
            CAPTIONER,
            TINY,
            "tiny:qwen2-vl",
            revision="seed0",
            prompt=CAPTION_PROMPT,
            max_new_tokens=8,
            random_init=True,
            description="random tiny Qwen2-VL generating 8 tokens (tests; captions are noise)",
        ),
        GeneratorEntry(
            "tiny-random-rewriter",
            REWRITER,
            TINY,
            "tiny:qwen2",
            revision="seed0",
            prompt=REWRITE_PROMPT,
            max_new_tokens=8,
            random_init=True,
            description="random tiny Qwen2 LM generating 8 tokens (tests; rewrites are noise)",
        ),
    )


def entries() -> tuple[ModelEntry, ...]:
    """The `tiny-random-*` model entries."""
    return (
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


def rows() -> list[Any]:
    """Every row of the entry point: the families first, then the model entries, the captioner and the rewriter.

    Built when the entry points are read, so that the entries' family is known by then.
    """
    return [*families(), *entries(), *generators()]
