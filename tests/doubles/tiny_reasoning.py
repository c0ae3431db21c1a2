"""Tiny reasoning embedders: UME-R1 Gen and Embed-RL + T-CoT on tiny random checkpoints, built in memory.

`load` is the loader of the tiny reasoning entries (`tests.doubles.entries`): the reasoning family's own
`load` with the tiny checkpoints and the tiny T-CoT generator. Importing this module serves the tiny generation
configs (`tiny_generation_config`) for `tiny:` sources to the reasoning family's generation spec.
"""

from __future__ import annotations

import json
import os
from typing import Any, Final

from model_adapters.families import embed_rl_tcot, reasoning, ume_r1_gen
from model_adapters.families import qwen_vl_inputs as qvi
from model_adapters.families.common import torch_dtype
from model_adapters.families.qwen_chat import IMAGE_PAD, VIDEO_PAD, VISION_END, VISION_START
from model_adapters.protocol import GenerationSpec
from tests.doubles import tiny

SOURCE_PREFIX: Final = "tiny:"


def _tiny_tokenizer(tokens: tuple[str, ...]) -> Any:
    tok = tiny.qwen_tokenizer()
    if tokens:
        tok.add_tokens(list(tokens))
    return tok


def tiny_generation_config(kind: str) -> dict[str, Any]:
    """The generation_config.json of a tiny checkpoint of recipe `kind` (ume-r1-gen or embed-rl-tcot).

    It samples over the whole vocabulary, ends at <|im_end|> or <|endoftext|> and never emits a vision token (a
    random model would; a real one does not). The tiny UME-R1's adds a +3 logit bias on <gen_emb>
    (`sequence_bias`), so that some generations contain the marker and some do not.
    """
    tok = _tiny_tokenizer(("<disc_emb>", "<gen_emb>") if kind == reasoning.UME_R1_GEN else ())
    ids = tok.convert_tokens_to_ids
    config: dict[str, Any] = {
        "do_sample": True,
        "temperature": 1.0,
        "top_k": 0,
        "top_p": 1.0,
        "eos_token_id": [ids("<|im_end|>"), ids("<|endoftext|>")],
        "pad_token_id": ids("<|endoftext|>"),
        "suppress_tokens": sorted(ids(t) for t in (VISION_START, VISION_END, IMAGE_PAD, VIDEO_PAD, "<|vision_pad|>")),
    }
    if kind == reasoning.UME_R1_GEN:
        config["sequence_bias"] = [[[ids(ume_r1_gen.GEN_TOKEN)], 3.0]]
    return config


def save_tiny_ume_r1_gen(folder: str, seed: int = 0) -> str:
    """Write the tiny UME-R1 checkpoint with `tiny_generation_config` as its generation_config.json."""
    tiny.save_tiny_chat_checkpoint("ume-r1", folder, seed)
    with open(os.path.join(folder, reasoning.GENERATION_CONFIG), "w", encoding="utf-8") as handle:
        json.dump(tiny_generation_config(reasoning.UME_R1_GEN), handle, indent=2)
    return folder


def _tiny_reasoner_images() -> Any:
    """The tiny reasoner's image processor: Qwen3-VL's, bounded to 4..64 vision tokens."""
    from transformers.models.qwen2_vl import Qwen2VLImageProcessorPil

    return Qwen2VLImageProcessorPil(
        patch_size=16,
        merge_size=2,
        temporal_patch_size=2,
        image_mean=[0.5] * 3,
        image_std=[0.5] * 3,
        size={"shortest_edge": 4 * 32 * 32, "longest_edge": 64 * 32 * 32},
    )


def _checkpoint(entry: Any, path: str, device: str, dtype: str, model_class: str) -> tuple[Any, Any]:
    """(model, processor) of the recipe's tiny checkpoint; `model_class` "lm" keeps the LM head."""
    kind = "ume-r1" if entry.options.get("reasoning") == reasoning.UME_R1_GEN else "embed-rl"
    model, tok, image_processor = tiny.TINY_CHAT_CHECKPOINTS[kind](tiny.seed_of(entry.revision))
    model = model.to(device=device, dtype=torch_dtype(dtype))
    processor = qvi.QwenVLProcessor(tok, image_processor, tok.chat_template)
    return (model if model_class == "lm" else model.model), processor


def _generator(entry: Any, spec: GenerationSpec, device: str) -> embed_rl_tcot.TCoTGenerator:
    """The tiny Qwen3-VL T-CoT generator of the spec's revision."""
    from transformers import GenerationConfig

    model, tok, _ = tiny.build_tiny_qwen3_vl(tiny.seed_of(spec.revision))
    processor = qvi.QwenVLProcessor(tok, _tiny_reasoner_images(), tiny.qwen3_vl_chat_template())
    config = GenerationConfig.from_dict(dict(spec.decoding))
    return embed_rl_tcot.TCoTGenerator(model.to(device), processor, config, spec.seed)


def load(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> Any:
    """The tiny entry's `protocol.ReasoningEncoder` (its generation spec resolved by `reasoning.resolved`)."""
    return reasoning.load(entry, path, device=device, dtype=dtype, checkpoint=_checkpoint, generator=_generator)


reasoning.register_generation_configs(SOURCE_PREFIX, tiny_generation_config)
