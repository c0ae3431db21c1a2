"""Tiny random text checkpoints written as model folders: Qwen3, XLM-R, Llama-3.1, a cross-encoder, MetaCLIP 2.

Each has the architecture class of a real checkpoint (Qwen3-Embedding, BGE-M3, ReasonIR's Llama-3.1, the BGE
reranker's XLM-R cross-encoder, a MetaCLIP 2 dual tower) and the files its authors' loaders read
(sentence-transformers modules.json and prompts, FlagEmbedding's M3 heads). The authors' code and our adapter load
the same folder, which proves a recipe equal to that code (tests/fixtures/<recipe>/NOTE.md). Their numbers are noise;
their weights have std 0.2 (`tiny.CHAT_INIT_RANGE`), so that a wrong position or mask rule shows in the vectors.

Tokenizers are built locally with the real tokenizer family's class and specials:

- Qwen3-Embedding's: byte-level BPE with no merges, `<|endoftext|>` appended to every text, left padding;
- Llama-3.1's: `PreTrainedTokenizerFast` with Llama-3's pre-tokenizer regex, byte-level BPE with a few merges,
  `<|begin_of_text|>` prepended and used for padding;
- XLM-R's: `XLMRobertaTokenizer`, a Unigram model over characters, `<s> … </s>`, pairs `<s> A </s></s> B </s>`,
  pad id 1.

Folders are also readable by transformers 4.5x (the authors' pinned versions): the tokenizer class is named as the
real checkpoints name it and the configs carry the 4.x keys (`rope_theta`, `torch_dtype`) beside the 5.x ones.
"""

from __future__ import annotations

import json
import os
from typing import Any, Final

from tests.doubles.tiny import CHAT_INIT_RANGE, redrawn, seeded

HIDDEN: Final = 32
SEED: Final = 0
QWEN3_EMBEDDING_QUERY_PROMPT: Final = (
    "Instruct: Given a web search query, retrieve relevant passages that answer the "
    "query\nQuery:"
)  # the README's default task in the Instruct slot
QWEN3_EMBEDDING_MAX_LENGTH: Final = 8192  # QwenLM/Qwen3-Embedding README / evaluation/run_mteb.sh max_length
BGE_M3_MAX_LENGTH: Final = 8192  # BGE-M3 model card encode(max_length=8192) and its sentence_bert_config.json
RERANKER_MAX_POSITIONS: Final = 514  # XLM-R: 512 tokens + the padding offset
LLAMA_3_1_MAX_POSITIONS: Final = 131072  # Llama-3.1-8B config.json (ReasonIR-8B's base, training/train.sh)


def _byte_bpe(specials: list[str]) -> tuple[Any, dict[str, int]]:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {tok: i for i, tok in enumerate(specials + alphabet)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok, vocab


def _write_json(path: str, obj: Any) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(obj, handle, indent=2, ensure_ascii=False)


def _patch_json(path: str, **values: Any) -> None:
    with open(path, encoding="utf-8") as handle:
        obj = json.load(handle)
    obj.update(values)
    _write_json(path, obj)


def weights_sum(model: Any) -> float:
    """Sum of all parameters (float64): a fixture records it so a test knows it has the same random weights."""
    return float(sum(p.detach().double().sum() for p in model.parameters()))


# --- Qwen3 (Qwen3-Embedding, Diver-Retriever) -------------------------------------------------------------------
QWEN_TEXT_SPECIALS: Final = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


def qwen3_embedding_tokenizer() -> Any:
    """Byte-level tokenizer with Qwen's specials; `<|endoftext|>` appended to every text (the token the last-token
    pooling reads); pad `<|endoftext|>`; left padding (QwenLM/Qwen3-Embedding: `padding_side='left'`)."""
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    tok, vocab = _byte_bpe(list(QWEN_TEXT_SPECIALS))
    eos = QWEN_TEXT_SPECIALS[0]
    tok.post_processor = processors.TemplateProcessing(
        single=f"$A {eos}", pair=f"$A {eos} $B {eos}", special_tokens=[(eos, vocab[eos])]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token=eos,
        additional_special_tokens=list(QWEN_TEXT_SPECIALS[1:]),
        padding_side="left",
    )


def tiny_qwen3(seed: int = SEED) -> tuple[Any, Any]:
    """(Qwen3Model, tokenizer): the class `AutoModel` gives for Qwen3-Embedding-4B/8B and Diver-Retriever-4B."""
    from transformers import Qwen3Config, Qwen3Model

    tok = qwen3_embedding_tokenizer()
    config = Qwen3Config(
        vocab_size=len(tok),
        hidden_size=HIDDEN,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        max_position_embeddings=QWEN3_EMBEDDING_MAX_LENGTH + 8,  # no pad id: as the real config
        eos_token_id=tok.convert_tokens_to_ids("<|im_end|>"),
        sliding_window=None,  # the real Qwen3-Embedding config.json: no window, use_sliding_window false
        use_sliding_window=False,
        initializer_range=CHAT_INIT_RANGE,
    )
    return seeded(seed, lambda: Qwen3Model(config)), tok


def _st_files(folder: str, *, dim: int, pooling: str, max_seq_length: int, prompts: dict[str, str] | None) -> None:
    """sentence-transformers' files: modules.json (Transformer, Pooling, Normalize), the pooling config,
    sentence_bert_config.json and config_sentence_transformers.json (the model's prompts)."""
    os.makedirs(os.path.join(folder, "1_Pooling"), exist_ok=True)
    _write_json(
        os.path.join(folder, "modules.json"),
        [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
        ],
    )
    modes = {
        f"pooling_mode_{m}": m == pooling
        for m in ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens", "lasttoken")
    }
    _write_json(
        os.path.join(folder, "1_Pooling", "config.json"),
        {"word_embedding_dimension": dim, **modes, "include_prompt": True},
    )
    _write_json(
        os.path.join(folder, "sentence_bert_config.json"), {"max_seq_length": max_seq_length, "do_lower_case": False}
    )
    _write_json(
        os.path.join(folder, "config_sentence_transformers.json"),
        {"prompts": prompts or {}, "default_prompt_name": None, "similarity_fn_name": "cosine"},
    )


def _save_hf(folder: str, model: Any, tok: Any, tokenizer_class: str, **config_4x: Any) -> None:
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    path = os.path.join(folder, "tokenizer_config.json")
    with open(path, encoding="utf-8") as handle:
        extra = json.load(handle).pop("extra_special_tokens", None)
    _patch_json(path, tokenizer_class=tokenizer_class)
    if extra is not None:  # 4.x reads the list as `additional_special_tokens` (5.x reads both)
        with open(path, encoding="utf-8") as handle:
            conf = json.load(handle)
        conf.pop("extra_special_tokens")
        conf["additional_special_tokens"] = extra
        _write_json(path, conf)
    _patch_json(os.path.join(folder, "config.json"), torch_dtype="float32", **config_4x)


def save_qwen3_embedding(folder: str, seed: int = SEED) -> str:
    """The tiny Qwen3 as a Qwen3-Embedding folder: weights, tokenizer (left padding), sentence-transformers files
    (last-token pooling, Normalize, prompts {"query": QWEN3_EMBEDDING_QUERY_PROMPT, "document": ""})."""
    model, tok = tiny_qwen3(seed)
    _save_hf(folder, model, tok, "Qwen2TokenizerFast", rope_theta=model.config.rope_parameters["rope_theta"])
    _st_files(
        folder,
        dim=HIDDEN,
        pooling="lasttoken",
        max_seq_length=QWEN3_EMBEDDING_MAX_LENGTH,
        prompts={"query": QWEN3_EMBEDDING_QUERY_PROMPT, "document": ""},
    )
    return folder


# --- Llama-3.1 (ReasonIR-8B) ---------------------------------------------------------------------------------------
# Llama-3's pre-tokenizer split (its tokenizer.json `Split` pattern), then byte-level without its own regex.
LLAMA3_SPLIT: Final = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
    r"\s*[\r\n]+|\s+(?!\S)|\s+"
)
LLAMA3_SPECIALS: Final = ("<|begin_of_text|>", "<|end_of_text|>")
# A few merges (byte-level symbols: Ġ space, Ċ newline) so that tokens span bytes and the GritLM-style prefixes
# ("<|user|>\n", "<|embed|>\n") end in a merged token, as they do with the real vocabulary.
LLAMA3_MERGES: Final = (
    ("<", "|"),
    ("|", ">"),
    ("|>", "Ċ"),
    ("Ċ", "Ċ"),
    ("Ġ", "t"),
    ("h", "e"),
    ("Ġt", "he"),
    ("e", "m"),
    ("em", "b"),
    ("emb", "e"),
    ("embe", "d"),
    ("u", "s"),
    ("us", "e"),
    ("use", "r"),
    ("Ġ", "a"),
    ("i", "n"),
    ("Ġ", "s"),
    ("e", "r"),
    ("o", "n"),
    ("Ġ", "b"),
)


def llama3_tokenizer() -> Any:
    """Llama-3.1's tokenizer layout over a small vocabulary: its pre-tokenizer split, byte-level BPE
    (`ignore_merges`, as Llama-3's tokenizer.json) over the 256 byte symbols and LLAMA3_MERGES, the specials after
    the ordinary tokens, `<|begin_of_text|>` prepended to every text. Pad token: `<|begin_of_text|>`, what GritLM's
    training (ReasonIR's trainer, training/train.sh) sets when Llama-3.1's tokenizer has none; ReasonIR's `encode`
    pads every call, so its tokenizer must have one (which could not be read; the pad id reaches no vector: padded
    positions are masked in the attention and left out of the mean)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    merged = [a + b for a, b in LLAMA3_MERGES]
    vocab = {tok: i for i, tok in enumerate(alphabet + merged + list(LLAMA3_SPECIALS))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=list(LLAMA3_MERGES), ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    bos = LLAMA3_SPECIALS[0]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, vocab[bos])]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=bos,
        eos_token=LLAMA3_SPECIALS[1],
        pad_token=bos,
        padding_side="right",
        model_input_names=["input_ids", "attention_mask"],
    )  # as Llama-3's config


def _llama3_1_rope() -> dict[str, Any]:
    """Llama-3.1-8B's RoPE: theta 500000 with the "llama3" frequency scaling (factor 8, 8192 original positions)."""
    return {
        "rope_type": "llama3",
        "rope_theta": 500000.0,
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }


def tiny_llama(seed: int = SEED) -> tuple[Any, Any]:
    """(LlamaModel, tokenizer): the backbone class of ReasonIR-8B (its ReasonIRModel subclasses LlamaModel)."""
    from transformers import LlamaConfig, LlamaModel

    tok = llama3_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=HIDDEN,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        rms_norm_eps=1e-5,
        max_position_embeddings=LLAMA_3_1_MAX_POSITIONS,
        rope_parameters=_llama3_1_rope(),
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        initializer_range=CHAT_INIT_RANGE,
    )
    return seeded(seed, lambda: LlamaModel(config)), tok


def save_reasonir(folder: str, seed: int = SEED) -> str:
    """The tiny Llama as a ReasonIR-8B folder: weights, tokenizer, and a config.json whose `architectures` names
    `ReasonIRModel` (the class the checkpoint was saved from: facebookresearch/ReasonIR training/modeling_llama.py),
    with the 4.x keys `rope_theta` / `rope_scaling` beside 5.x's `rope_parameters`. No remote code is written: the
    authors' driver adds their modelling file to a scratch copy (tests/fixtures/reasonir/NOTE.md)."""
    model, tok = tiny_llama(seed)
    rope = _llama3_1_rope()
    _save_hf(
        folder,
        model,
        tok,
        "PreTrainedTokenizerFast",
        rope_theta=rope["rope_theta"],
        rope_scaling={k: v for k, v in rope.items() if k != "rope_theta"},
        architectures=["ReasonIRModel"],
    )
    return folder


# --- XLM-RoBERTa (BGE-M3, bge-reranker-v2-m3) and the MetaCLIP 2 text tower's tokenizer --------------------------
XLMR_SPECIALS: Final = ("<s>", "<pad>", "</s>", "<unk>")  # ids 0-3, as XLM-R's fairseq dictionary


def xlmr_tokenizer() -> Any:
    """XLM-R's tokenizer class (a Unigram model behind Metaspace, `<s> A </s>`, pairs `<s> A </s></s> B </s>`,
    pad id 1) over a small vocabulary: printable ASCII characters, `▁` and `▁a` … `▁z`; anything else is `<unk>`."""
    import string

    from transformers import XLMRobertaTokenizer

    pieces = ["▁", *(c for c in string.printable if not c.isspace()), *(f"▁{c}" for c in string.ascii_lowercase)]
    vocab = [(t, 0.0) for t in XLMR_SPECIALS] + [(p, -1.0 - len(p) / 2) for p in pieces] + [("<mask>", 0.0)]
    return XLMRobertaTokenizer(vocab=vocab)


def _xlmr_config(tok: Any, max_positions: int, **extra: Any) -> Any:
    from transformers import XLMRobertaConfig

    return XLMRobertaConfig(
        vocab_size=len(tok),
        hidden_size=HIDDEN,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=max_positions,
        type_vocab_size=1,
        pad_token_id=tok.pad_token_id,
        bos_token_id=0,
        eos_token_id=2,
        initializer_range=CHAT_INIT_RANGE,
        **extra,
    )


def tiny_xlmr(seed: int = SEED) -> tuple[Any, Any]:
    """(XLMRobertaModel, tokenizer): BGE-M3's class (8192 tokens + 2 positions)."""
    from transformers import XLMRobertaModel

    tok = xlmr_tokenizer()
    config = _xlmr_config(tok, BGE_M3_MAX_LENGTH + 2)
    return seeded(seed, lambda: XLMRobertaModel(config)), tok


def save_bge_m3(folder: str, seed: int = SEED) -> str:
    """The tiny XLM-R as a BGE-M3 folder: weights, tokenizer, sentence-transformers files (CLS pooling, Normalize,
    no prompts), and FlagEmbedding's `colbert_linear.pt` / `sparse_linear.pt` heads (random; unused by dense)."""
    import torch

    model, tok = tiny_xlmr(seed)
    _save_hf(folder, model, tok, "XLMRobertaTokenizer")
    _st_files(folder, dim=HIDDEN, pooling="cls_token", max_seq_length=BGE_M3_MAX_LENGTH, prompts=None)
    heads = seeded(seed + 1, lambda: torch.nn.ModuleList([torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.Linear(HIDDEN, 1)]))
    torch.save(heads[0].state_dict(), os.path.join(folder, "colbert_linear.pt"))
    torch.save(heads[1].state_dict(), os.path.join(folder, "sparse_linear.pt"))
    return folder


def tiny_xlmr_reranker(seed: int = SEED) -> tuple[Any, Any]:
    """(XLMRobertaForSequenceClassification with one label, tokenizer): bge-reranker-v2-m3's class."""
    from transformers import XLMRobertaForSequenceClassification

    tok = xlmr_tokenizer()
    config = _xlmr_config(tok, RERANKER_MAX_POSITIONS, num_labels=1)
    return seeded(seed, lambda: XLMRobertaForSequenceClassification(config)), tok


def save_bge_reranker(folder: str, seed: int = SEED) -> str:
    model, tok = tiny_xlmr_reranker(seed)
    _save_hf(folder, model, tok, "XLMRobertaTokenizer")
    return folder


# --- MetaCLIP 2 -----------------------------------------------------------------------------------------------
def tiny_metaclip_2(seed: int = SEED) -> tuple[Any, Any, Any]:
    """(MetaClip2Model, tokenizer, image processor): the class of facebook/metaclip-2-worldwide-*; text tower
    pooled at the first `</s>` (eos id 2, as the real configs), 77 positions."""
    from transformers import MetaClip2Config, MetaClip2Model
    from transformers.models.clip import CLIPImageProcessorPil

    tok = xlmr_tokenizer()
    config = MetaClip2Config(
        text_config=dict(
            vocab_size=len(tok),
            hidden_size=HIDDEN,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            max_position_embeddings=77,
            bos_token_id=0,
            eos_token_id=2,
            pad_token_id=tok.pad_token_id,
        ),
        vision_config=dict(
            hidden_size=HIDDEN,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            image_size=32,
            patch_size=8,
        ),
        projection_dim=16,
    )
    processor = CLIPImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    return seeded(seed, lambda: redrawn(MetaClip2Model(config), every_matrix=False)), tok, processor


def save_metaclip_2(folder: str, seed: int = SEED) -> str:
    model, tok, processor = tiny_metaclip_2(seed)
    _save_hf(folder, model, tok, "XLMRobertaTokenizer")
    processor.save_pretrained(folder)
    return folder
