"""Tiny randomly-initialised CLIP / SigLIP / Qwen2-VL models for tests, built in memory from small configs with
locally built tokenizers and image processors (no download, no files). Their numbers are noise: the registry
flags them `random_init=True` and the runner labels their results as such.

The tokenizer is byte-level (every byte is a token, no merges), so distinct texts always get distinct token ids.
"""

from __future__ import annotations

import functools
from typing import Any, Final

from model_adapters.families.dual_tower import DualTowerEncoder
from model_adapters.families.reranker import YesNoReranker
from model_adapters.families.vlm import IMAGE_PAD, VISION_END, VISION_START, VLMEncoder
from model_adapters.truncation import TextLimit

BOS: Final = "<|startoftext|>"
EOS: Final = "<|endoftext|>"
PAD: Final = "<|pad|>"
CHAT_SPECIALS: Final = ("<|im_start|>", "<|im_end|>", VISION_START, VISION_END, IMAGE_PAD, "<|video_pad|>")
ANSWER_WORDS: Final = ("yes", "no")  # single tokens so the reranker can read their logits
HIDDEN: Final = 32
PROJECTION: Final = 16
IMAGE_SIZE: Final = 32


def build_tokenizer(*, add_bos_eos: bool) -> Any:
    """A byte-level BPE tokenizer with an empty merge list, plus the specials the tiny models need."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    specials = [PAD, BOS, *CHAT_SPECIALS, EOS]  # EOS id must not be 2 (CLIP treats 2 as the legacy argmax case)
    vocab = {tok: i for i, tok in enumerate(specials + alphabet)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    if add_bos_eos:
        tok.post_processor = processors.TemplateProcessing(
            single=f"{BOS} $A {EOS}", special_tokens=[(BOS, vocab[BOS]), (EOS, vocab[EOS])])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=BOS, eos_token=EOS, pad_token=PAD,
                                   additional_special_tokens=list(CHAT_SPECIALS))
    fast.add_tokens(list(ANSWER_WORDS))
    return fast


def _seeded(seed: int, make: Any) -> Any:
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return make().eval()


@functools.cache
def tiny_clip(seed: int = 0) -> tuple[Any, Any, Any]:
    from transformers import CLIPConfig, CLIPModel
    from transformers.models.clip import CLIPImageProcessorPil as CLIPImageProcessor

    tok = build_tokenizer(add_bos_eos=True)
    config = CLIPConfig(
        text_config=dict(vocab_size=len(tok), hidden_size=HIDDEN, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, max_position_embeddings=256, eos_token_id=tok.eos_token_id,
                         bos_token_id=tok.bos_token_id, pad_token_id=tok.pad_token_id),
        vision_config=dict(hidden_size=HIDDEN, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                           image_size=IMAGE_SIZE, patch_size=8),
        projection_dim=PROJECTION)
    processor = CLIPImageProcessor(size={"shortest_edge": IMAGE_SIZE},
                                   crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    return _seeded(seed, lambda: CLIPModel(config)), tok, processor


@functools.cache
def tiny_siglip(seed: int = 0) -> tuple[Any, Any, Any]:
    from transformers import SiglipConfig, SiglipModel
    from transformers.models.siglip import SiglipImageProcessorPil as SiglipImageProcessor

    tok = build_tokenizer(add_bos_eos=False)
    config = SiglipConfig(
        text_config=dict(vocab_size=len(tok), hidden_size=HIDDEN, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, max_position_embeddings=64, pad_token_id=tok.pad_token_id),
        vision_config=dict(hidden_size=HIDDEN, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                           image_size=IMAGE_SIZE, patch_size=8))
    processor = SiglipImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    return _seeded(seed, lambda: SiglipModel(config)), tok, processor


def _qwen2vl_config(tok: Any) -> Any:
    from transformers import Qwen2VLConfig

    return Qwen2VLConfig(
        text_config=dict(vocab_size=len(tok), hidden_size=HIDDEN, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, bos_token_id=None, eos_token_id=None,
                         pad_token_id=tok.pad_token_id,
                         rope_scaling={"type": "mrope", "mrope_section": [2, 1, 1]}),
        vision_config=dict(depth=1, embed_dim=HIDDEN, hidden_size=HIDDEN, num_heads=4, mlp_ratio=2, patch_size=14,
                           spatial_merge_size=2, temporal_patch_size=2),
        image_token_id=tok.convert_tokens_to_ids(IMAGE_PAD), video_token_id=tok.convert_tokens_to_ids("<|video_pad|>"),
        vision_start_token_id=tok.convert_tokens_to_ids(VISION_START))


def _qwen2vl_processor() -> Any:
    from transformers.models.qwen2_vl import Qwen2VLImageProcessorPil

    return Qwen2VLImageProcessorPil(min_pixels=28 * 28 * 4, max_pixels=28 * 28 * 16)


@functools.cache
def tiny_vlm(seed: int = 0) -> tuple[Any, Any, Any]:
    from transformers import Qwen2VLModel

    tok = build_tokenizer(add_bos_eos=False)
    config = _qwen2vl_config(tok)
    return _seeded(seed, lambda: Qwen2VLModel(config)), tok, _qwen2vl_processor()


@functools.cache
def tiny_reranker(seed: int = 0) -> tuple[Any, Any, Any]:
    from transformers import Qwen2VLForConditionalGeneration

    tok = build_tokenizer(add_bos_eos=False)
    config = _qwen2vl_config(tok)
    return _seeded(seed, lambda: Qwen2VLForConditionalGeneration(config)), tok, _qwen2vl_processor()


def _seed(entry: Any) -> int:
    revision = str(entry.revision)
    return int(revision[4:]) if revision.startswith("seed") else 0


# Text limit of the tiny dual towers (an entry's "max_length" option overrides it, e.g. in tests).
DEFAULT_MAX_LENGTH: Final = {"clip": 256, "siglip": 64}


def _max_length(entry: Any, arch: str) -> int:
    return int(entry.options.get("max_length", DEFAULT_MAX_LENGTH[arch]))


def text_limit(entry: Any, path: str) -> TextLimit | None:
    """The tiny dual towers' text limit with their tokenizer (built locally, no model); None for the VLMs."""
    arch = entry.options.get("arch")
    if arch not in DEFAULT_MAX_LENGTH:
        return None  # the tiny VLM and reranker do not truncate
    return TextLimit(_max_length(entry, arch), build_tokenizer(add_bos_eos=arch == "clip"))


def load(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> Any:
    arch = entry.options.get("arch")
    if arch == "clip":
        model, tok, proc = tiny_clip(_seed(entry))
        return DualTowerEncoder(model, tok, proc, device=device, max_length=_max_length(entry, arch))
    if arch == "siglip":
        model, tok, proc = tiny_siglip(_seed(entry))
        return DualTowerEncoder(model, tok, proc, device=device, padding="max_length",
                                max_length=_max_length(entry, arch))
    if arch == "vlm":
        model, tok, proc = tiny_vlm(_seed(entry))
        return VLMEncoder(model, tok, proc, device=device)
    raise ValueError(f"{entry.name}: tiny arch {arch!r} is not an embedder (clip, siglip, vlm)")


def load_reranker(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> YesNoReranker:
    model, tok, proc = tiny_reranker(_seed(entry))
    return YesNoReranker(model, tok, proc, device=device)
