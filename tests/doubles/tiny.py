"""Tiny randomly initialised CLIP, SigLIP, Qwen2-VL and Qwen3-VL models for tests, and the `tiny` family's loaders.

They are built in memory from small configs with locally built tokenizers and image processors (no download);
the `save_*` writers write them as model folders. Their numbers are noise: their entries
(`tests.doubles.entries`) are flagged `random_init=True` and the runner labels their results as such.

The tokenizer is byte-level (every byte is a token, no merges), so distinct texts always get distinct token ids.
"""

from __future__ import annotations

import functools
from typing import Any, Final, cast

from model_adapters.families.dual_tower import DualTowerEncoder
from model_adapters.families.qwen_vl_inputs import QwenVLProcessor
from model_adapters.families.reranker import Qwen3VLReranker, reranker_options
from model_adapters.families.vlm import (
    IMAGE_PAD,
    VISION_END,
    VISION_START,
    Qwen3VLEmbedder,
    VLM2VecEncoder,
    qwen3_vl_options,
)
from model_adapters.planning.truncation import TextLimit

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
            single=f"{BOS} $A {EOS}", special_tokens=[(BOS, vocab[BOS]), (EOS, vocab[EOS])]
        )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=BOS, eos_token=EOS, pad_token=PAD, additional_special_tokens=list(CHAT_SPECIALS)
    )
    fast.add_tokens(list(ANSWER_WORDS))
    return fast


def seeded(seed: int, make: Any) -> Any:
    """`make()` in eval mode, its weights drawn under `seed` without moving the global torch RNG."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return make().eval()


def tower(**fields: Any) -> dict[str, Any]:
    """A tiny transformer tower's config fields (2 layers of width 32, 4 heads) with `fields` added."""
    return dict(hidden_size=HIDDEN, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, **fields)


@functools.cache
def tiny_clip(seed: int = 0) -> tuple[Any, Any, Any]:
    from transformers import CLIPConfig, CLIPModel
    from transformers.models.clip import CLIPImageProcessorPil as CLIPImageProcessor

    tok = build_tokenizer(add_bos_eos=True)
    config = CLIPConfig(
        text_config=tower(
            vocab_size=len(tok),
            max_position_embeddings=256,
            eos_token_id=tok.eos_token_id,
            bos_token_id=tok.bos_token_id,
            pad_token_id=tok.pad_token_id,
        ),
        vision_config=tower(image_size=IMAGE_SIZE, patch_size=8),
        projection_dim=PROJECTION,
    )
    processor = CLIPImageProcessor(
        size={"shortest_edge": IMAGE_SIZE}, crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}
    )
    return seeded(seed, lambda: redrawn(CLIPModel(config))), tok, processor


def eos_appended(tok: Any) -> Any:
    """The byte-level tokenizer made T5-like, as SigLIP 1's: EOS after every text, EOS also the padding."""
    from tokenizers import processors

    eos = tok.eos_token_id
    tok.backend_tokenizer.post_processor = processors.TemplateProcessing(
        single=f"$A {EOS}", special_tokens=[(EOS, eos)]
    )
    tok.pad_token = EOS
    return tok


@functools.cache
def tiny_siglip(seed: int = 0) -> tuple[Any, Any, Any]:
    """(SiglipModel, tokenizer, SiglipImageProcessor): SigLIP 1's classes, tiny, with weights of std 0.2; the
    tokenizer ends every text with EOS and pads with it, as SigLIP 1's T5 tokenizer."""
    from transformers import SiglipConfig, SiglipModel
    from transformers.models.siglip import SiglipImageProcessorPil as SiglipImageProcessor

    tok = eos_appended(build_tokenizer(add_bos_eos=False))
    config = SiglipConfig(
        text_config=tower(
            vocab_size=len(tok),
            max_position_embeddings=64,
            pad_token_id=tok.pad_token_id,
            eos_token_id=tok.eos_token_id,
        ),
        vision_config=tower(image_size=IMAGE_SIZE, patch_size=8),
    )
    processor = SiglipImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    return seeded(seed, lambda: redrawn(SiglipModel(config))), tok, processor


GEMMA_SPECIALS: Final = ("<pad>", "<eos>", "<bos>", "<unk>", "<mask>")  # ids 0-4, as in Gemma's vocabulary


def gemma_vocab() -> dict[str, int]:
    """A tiny Gemma-style vocabulary: the specials at Gemma's ids, "▁", the printable ASCII characters and the 256
    byte-fallback tokens."""
    import string

    chars = ["▁"] + [c for c in string.printable if not c.isspace()]
    return {t: i for i, t in enumerate([*GEMMA_SPECIALS, *chars, *(f"<0x{b:02X}>" for b in range(256))])}


def _siglip2_configs(tok: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    ids = {f"{t}_token_id": getattr(tok, f"{t}_token_id") for t in ("pad", "eos", "bos")}
    return tower(vocab_size=len(tok), max_position_embeddings=64, **ids), tower(patch_size=8)


@functools.cache
def tiny_siglip2(seed: int = 0) -> tuple[Any, Any, Any]:
    """(SiglipModel, GemmaTokenizer, SiglipImageProcessor): a SigLIP 2 FixRes checkpoint's classes (model_type
    siglip, Gemma's tokenizer without BOS and with EOS, as transformers' SigLIP 2 conversion sets it), tiny, with
    weights of std 0.2."""
    from transformers import GemmaTokenizer, SiglipConfig, SiglipModel
    from transformers.models.siglip import SiglipImageProcessorPil

    tok = GemmaTokenizer(vocab=gemma_vocab(), merges=[], add_bos_token=False, add_eos_token=True)
    text, vision = _siglip2_configs(tok)
    config = SiglipConfig(text_config=text, vision_config=dict(vision, image_size=IMAGE_SIZE))
    processor = SiglipImageProcessorPil(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    return seeded(seed, lambda: redrawn(SiglipModel(config))), tok, processor


@functools.cache
def tiny_siglip2_naflex(seed: int = 0) -> tuple[Any, Any, Any]:
    """(Siglip2Model, Siglip2Tokenizer, Siglip2ImageProcessor): a SigLIP 2 NaFlex checkpoint's classes (model_type
    siglip2, images as up to 16 patches of 8 px at their own aspect ratio), tiny, with weights of std 0.2."""
    from transformers import Siglip2Config, Siglip2Model
    from transformers.models.siglip2 import Siglip2ImageProcessorPil, Siglip2Tokenizer

    tok = Siglip2Tokenizer(vocab=gemma_vocab(), merges=[], add_bos_token=False, add_eos_token=True)
    text, vision = _siglip2_configs(tok)
    config = Siglip2Config(text_config=text, vision_config=dict(vision, num_patches=16))
    processor = Siglip2ImageProcessorPil(patch_size=8, max_num_patches=16)
    return seeded(seed, lambda: redrawn(Siglip2Model(config))), tok, processor


def save_tiny_siglip2(folder: str, *, naflex: bool = False, seed: int = 0) -> str:
    """Write the tiny SigLIP 2 (FixRes, or NaFlex) as a model folder (weights, tokenizer, image processor)."""
    for part in (tiny_siglip2_naflex if naflex else tiny_siglip2)(seed):
        part.save_pretrained(folder)
    return folder


QWEN_SPECIALS: Final = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
)  # Qwen3-VL's vision/chat specials
QWEN_MERGES: Final = (("y", "e"), ("ye", "s"), ("n", "o"))  # "yes" and "no" are single tokens, as in Qwen's vocab


def qwen_tokenizer() -> Any:
    """A byte-level BPE tokenizer with Qwen3-VL's special tokens (eos <|im_end|>, pad <|endoftext|>) and the real
    Qwen3-VL chat template (tests/doubles/data/qwen3_vl_chat_template.json)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    for merged in ("ye", "yes", "no"):
        vocab[merged] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=list(QWEN_MERGES)))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=list(QWEN_SPECIALS[1:]),
    )
    fast.chat_template = qwen3_vl_chat_template()
    return fast


def qwen3_vl_chat_template() -> str:
    import json
    import os

    path = os.path.join(os.path.dirname(__file__), "data", "qwen3_vl_chat_template.json")
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)["chat_template"]


def qwen3_vl_image_processor() -> Any:
    """Configured like Qwen3-VL's preprocessor_config.json (patch 16, merge 2, temporal 2, mean/std 0.5)."""
    from transformers.models.qwen2_vl import Qwen2VLImageProcessorPil

    return Qwen2VLImageProcessorPil(
        patch_size=16,
        merge_size=2,
        temporal_patch_size=2,
        image_mean=[0.5] * 3,
        image_std=[0.5] * 3,
        size={"shortest_edge": 65536, "longest_edge": 16777216},
    )


def _qwen3_vl_config(tok: Any) -> Any:
    from transformers import Qwen3VLConfig

    ids = tok.convert_tokens_to_ids
    return Qwen3VLConfig(
        text_config=dict(
            vocab_size=len(tok),
            hidden_size=HIDDEN,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=8,
            max_position_embeddings=4096,
            pad_token_id=tok.pad_token_id,
            rope_parameters={
                "rope_type": "default",
                "rope_theta": 5000000.0,
                "mrope_section": [2, 1, 1],
                "mrope_interleaved": True,
            },
        ),
        vision_config=dict(
            depth=2,
            hidden_size=HIDDEN,
            intermediate_size=64,
            num_heads=4,
            out_hidden_size=HIDDEN,
            patch_size=16,
            spatial_merge_size=2,
            temporal_patch_size=2,
            num_position_embeddings=64,
            deepstack_visual_indexes=[0],
        ),
        image_token_id=ids("<|image_pad|>"),
        video_token_id=ids("<|video_pad|>"),
        vision_start_token_id=ids("<|vision_start|>"),
        vision_end_token_id=ids("<|vision_end|>"),
    )


@functools.cache
def tiny_qwen3_vl(seed: int = 0) -> tuple[Any, Any, Any]:
    """(Qwen3VLForConditionalGeneration, tokenizer, image processor): the architecture class of the real
    Qwen3-VL-Embedding and Qwen3-VL-Reranker checkpoints, tiny and random."""
    from transformers import Qwen3VLForConditionalGeneration

    tok = qwen_tokenizer()
    config = _sharpened(_qwen3_vl_config(tok))
    return seeded(seed, lambda: Qwen3VLForConditionalGeneration(config)), tok, qwen3_vl_image_processor()


def save_tiny_qwen3_vl(folder: str, seed: int = 0) -> str:
    """Write the tiny Qwen3-VL as a model folder (weights, tokenizer, image processor, chat_template.json)."""
    import json
    import os

    model, tok, proc = tiny_qwen3_vl(seed)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    proc.save_pretrained(folder)
    with open(os.path.join(folder, "chat_template.json"), "w", encoding="utf-8") as handle:
        json.dump({"chat_template": qwen3_vl_chat_template()}, handle)
    return folder


# The real Qwen2-VL checkpoints' attention-window fields (their config.json: sliding_window 32768,
# use_sliding_window false). transformers 5 sets the window to None when use_sliding_window is false; 4.x reads it
# as written, so the tiny config carries the real value for the drivers that run authors' code under 4.x.
QWEN2_VL_SLIDING_WINDOW: Final = 32768


def _qwen2_vl_config(tok: Any) -> Any:
    from transformers import PretrainedConfig, Qwen2VLConfig

    ids = tok.convert_tokens_to_ids
    config = Qwen2VLConfig(
        text_config=dict(
            vocab_size=len(tok),
            hidden_size=HIDDEN,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            pad_token_id=tok.pad_token_id,
            rope_parameters={"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [2, 1, 1]},
        ),
        vision_config=dict(
            depth=1,
            embed_dim=HIDDEN,
            hidden_size=HIDDEN,
            num_heads=4,
            mlp_ratio=2,
            patch_size=14,
            spatial_merge_size=2,
            temporal_patch_size=2,
        ),
        image_token_id=ids("<|image_pad|>"),
        video_token_id=ids("<|video_pad|>"),
        vision_start_token_id=ids("<|vision_start|>"),
        vision_end_token_id=ids("<|vision_end|>"),
    )
    text_config = cast(PretrainedConfig, config.text_config)  # typed dict | config | None; a config once built
    text_config.use_sliding_window = False
    text_config.sliding_window = QWEN2_VL_SLIDING_WINDOW  # after __init__, which drops it; layers stay full
    return config


@functools.cache
def tiny_qwen2_vl(seed: int = 0) -> tuple[Any, Any, Any]:
    """(Qwen2VLForConditionalGeneration, tokenizer, image processor): VLM2Vec-V2's backbone class, tiny and random
    with weights of std 0.2 (image processor patch 14, merge 2, VLM2Vec's default 28²·4 … 28²·1280 pixels)."""
    from transformers import Qwen2VLForConditionalGeneration
    from transformers.models.qwen2_vl import Qwen2VLImageProcessorPil

    tok = qwen_tokenizer()
    config = _sharpened(_qwen2_vl_config(tok))
    proc = Qwen2VLImageProcessorPil(
        patch_size=14,
        merge_size=2,
        temporal_patch_size=2,
        size={"shortest_edge": 28 * 28 * 4, "longest_edge": 28 * 28 * 1280},
    )
    return seeded(seed, lambda: Qwen2VLForConditionalGeneration(config)), tok, proc


def save_tiny_qwen2_vl(folder: str, seed: int = 0) -> str:
    """Write the tiny Qwen2-VL as a model folder (weights in the legacy Qwen2-VL key layout, tokenizer, processor)."""
    model, tok, proc = tiny_qwen2_vl(seed)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    proc.save_pretrained(folder)
    return folder


# --- tiny checkpoints of the Qwen-VL chat recipes (model_adapters/families/qwen_chat.py), saved as folders ---------
# Qwen2-VL-*-Instruct's preprocessor_config.json bounds (min_pixels 3136, max_pixels 12845056).
QWEN2_VL_INSTRUCT_SIZE: Final = {"shortest_edge": 56 * 56, "longest_edge": 28 * 28 * 16384}
VLM2VEC_SIZE: Final = {"shortest_edge": 28 * 28 * 4, "longest_edge": 28 * 28 * 1280}


def qwen2_vl_chat_template() -> str:
    """Qwen2-VL-Instruct's chat template (default system "You are a helpful assistant.").

    Read from tests/doubles/data/qwen2_vl_chat_template.json.
    """
    import json
    import os

    path = os.path.join(os.path.dirname(__file__), "data", "qwen2_vl_chat_template.json")
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)["chat_template"]


# Weights drawn with std 0.2 instead of transformers' 0.02: with 0.02 a tiny model's attention is near uniform, so
# a wrong position rule (multimodal RoPE index vs sequential positions) would move its vectors by less than the
# equivalence tests can tell apart; with 0.2 a wrong rule shows.
CHAT_INIT_RANGE: Final = 0.2


def _sharpened(config: Any) -> Any:
    for part in (config, config.text_config, config.vision_config):
        part.initializer_range = CHAT_INIT_RANGE
    return config


def redrawn(model: Any, std: float = CHAT_INIT_RANGE, *, every_matrix: bool = True) -> Any:
    """`model` with its weight matrices drawn again from N(0, std²), in place.

    For architectures whose own initialisation ignores `initializer_range` (CLIP-style towers scale each matrix by
    its width). The two selections draw in different orders; each fixture names the one its writer used.

    Args:
        model: the model to redraw.
        std: the standard deviation of the new draws.
        every_matrix: True redraws every parameter of two or more dimensions (the CLIP and SigLIP writers); False
            only the weights of linear, convolution and embedding modules (the MetaCLIP 2 writer). Norms and
            biases keep the model's own initialisation either way.
    """
    import torch

    with torch.no_grad():
        if every_matrix:
            for param in model.parameters():
                if param.dim() >= 2:
                    param.normal_(0.0, std)
            return model
        kinds = (torch.nn.Linear, torch.nn.Conv2d, torch.nn.Conv3d, torch.nn.Embedding)
        for module in model.modules():
            if isinstance(module, kinds):
                module.weight.normal_(0.0, std)
    return model


def _qwen_tokenizer_with(tokens: tuple[str, ...], chat_template: str) -> Any:
    tok = qwen_tokenizer()
    if tokens:
        tok.add_tokens(list(tokens))  # as the authors' `tokenizer.add_tokens([...])`
    tok.chat_template = chat_template
    return tok


def build_tiny_qwen2_vl(
    seed: int = 0, *, tokens: tuple[str, ...] = (), spare_rows: int = 0, size: dict[str, int] | None = None
) -> tuple[Any, Any, Any]:
    """A tiny random Qwen2VLForConditionalGeneration with extra tokens (e.g. UME-R1's <disc_emb>, <gen_emb>), the
    Qwen2-VL-Instruct chat template, `spare_rows` embedding rows beyond the tokenizer (as Qwen's 152064 rows beyond
    its 151657 tokens, where LamRA's eval adds <emb>) and an image processor with `size` bounds."""
    from transformers import Qwen2VLForConditionalGeneration
    from transformers.models.qwen2_vl import Qwen2VLImageProcessorPil

    tok = _qwen_tokenizer_with(tokens, qwen2_vl_chat_template())
    config = _sharpened(_qwen2_vl_config(tok))
    config.text_config.vocab_size = len(tok) + spare_rows
    proc = Qwen2VLImageProcessorPil(
        patch_size=14, merge_size=2, temporal_patch_size=2, size=dict(size or QWEN2_VL_INSTRUCT_SIZE)
    )
    return seeded(seed, lambda: Qwen2VLForConditionalGeneration(config)), tok, proc


def build_tiny_qwen3_vl(
    seed: int = 0, *, tokens: tuple[str, ...] = (), emb_token: str | None = None
) -> tuple[Any, Any, Any]:
    """A tiny random Qwen3VLForConditionalGeneration with extra tokens; `emb_token` is recorded as
    config.emb_token_ids, as Embed-RL's merge script (merge_qwen3vl.py) records <emb>."""
    from transformers import Qwen3VLForConditionalGeneration

    tok = _qwen_tokenizer_with(tokens, qwen3_vl_chat_template())
    config = _sharpened(_qwen3_vl_config(tok))
    if emb_token is not None:
        config.emb_token_ids = [tok.convert_tokens_to_ids(emb_token)]
    return seeded(seed, lambda: Qwen3VLForConditionalGeneration(config)), tok, qwen3_vl_image_processor()


def _save(folder: str, model: Any, tok: Any, proc: Any) -> str:
    import json
    import os

    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    proc.save_pretrained(folder)
    with open(os.path.join(folder, "chat_template.json"), "w", encoding="utf-8") as handle:
        json.dump({"chat_template": tok.chat_template}, handle)
    return folder


# The tiny checkpoint of each chat recipe's architecture class and special tokens (tests/fixtures/<recipe>/NOTE.md).
TINY_CHAT_CHECKPOINTS: Final = {
    "embed-rl": lambda seed: build_tiny_qwen3_vl(seed, tokens=("<emb>",), emb_token="<emb>"),
    "ume-r1": lambda seed: build_tiny_qwen2_vl(seed, tokens=("<disc_emb>", "<gen_emb>")),
    "lamra": lambda seed: build_tiny_qwen2_vl(seed, spare_rows=8),
    "rzenembed": lambda seed: build_tiny_qwen2_vl(seed),
    "ops-mm": lambda seed: build_tiny_qwen2_vl(seed),
}


def save_tiny_chat_checkpoint(kind: str, folder: str, seed: int = 0) -> str:
    """Write the tiny checkpoint of `kind` (a key of TINY_CHAT_CHECKPOINTS) as a model folder."""
    if kind not in TINY_CHAT_CHECKPOINTS:
        raise ValueError(f"unknown tiny chat checkpoint {kind!r}; valid: {', '.join(TINY_CHAT_CHECKPOINTS)}")
    return _save(folder, *TINY_CHAT_CHECKPOINTS[kind](seed))


def seed_of(revision: str | None) -> int:
    """A tiny model's seed from its revision ("seed3" -> 3; anything else -> 0).

    >>> seed_of("seed3"), seed_of("main")
    (3, 0)
    """
    text = str(revision or "")
    return int(text[4:]) if text.startswith("seed") and text[4:].isdigit() else 0


def _seed(entry: Any) -> int:
    return seed_of(entry.revision)


# Text limit of the tiny dual towers (an entry's "max_length" option overrides it, e.g. in tests).
DEFAULT_MAX_LENGTH: Final = {"clip": 256, "siglip": 64}


def _max_length(entry: Any, arch: str) -> int:
    return int(entry.options.get("max_length", DEFAULT_MAX_LENGTH[arch]))


def text_limit(entry: Any, path: str) -> TextLimit | None:
    """The tiny dual towers' text limit with their tokenizer (built locally, no model); None for the VLMs."""
    arch = entry.options.get("arch")
    if arch not in DEFAULT_MAX_LENGTH:
        return None  # the tiny VLM and reranker do not truncate
    tokenizer = (
        build_tokenizer(add_bos_eos=True) if arch == "clip" else eos_appended(build_tokenizer(add_bos_eos=False))
    )
    return TextLimit(_max_length(entry, arch), tokenizer)


def _placed(model: Any, device: str, dtype: str) -> Any:
    """The cached model itself on CPU/float32; a converted copy elsewhere (the cache stays float32 on CPU)."""
    import copy

    from model_adapters.families.common import torch_dtype

    if device == "cpu" and dtype == "float32":
        return model
    return copy.deepcopy(model).to(device=device, dtype=torch_dtype(dtype))


def load(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> Any:
    arch = entry.options.get("arch")
    if arch == "clip":
        model, tok, proc = tiny_clip(_seed(entry))
        return DualTowerEncoder(
            _placed(model, device, dtype), tok, proc, device=device, max_length=_max_length(entry, arch)
        )
    if arch == "siglip":
        model, tok, proc = tiny_siglip(_seed(entry))
        return DualTowerEncoder(
            _placed(model, device, dtype),
            tok,
            proc,
            device=device,
            padding="max_length",
            padding_side="right",
            max_length=_max_length(entry, arch),
        )
    if arch == "vlm":
        model, tok, proc = tiny_qwen3_vl(_seed(entry))
        processor = QwenVLProcessor(tok, proc, qwen3_vl_chat_template())
        return Qwen3VLEmbedder(
            _placed(model.model, device, dtype), processor, device=device, **qwen3_vl_options(entry.options)
        )
    if arch == "vlm2vec":
        model, tok, proc = tiny_qwen2_vl(_seed(entry))
        return VLM2VecEncoder(_placed(model.model, device, dtype), QwenVLProcessor(tok, proc, ""), device=device)
    raise ValueError(f"{entry.name}: tiny arch {arch!r} is not an embedder (clip, siglip, vlm, vlm2vec)")


def load_reranker(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> Qwen3VLReranker:
    lm, tok, proc = tiny_qwen3_vl(_seed(entry))
    processor = QwenVLProcessor(tok, proc, qwen3_vl_chat_template())
    lm = _placed(lm, device, dtype)
    return Qwen3VLReranker(lm.model, lm.lm_head.weight, processor, device=device, **reranker_options(entry.options))
