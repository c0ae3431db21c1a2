"""The tiny random captioner and rewriter: a Qwen2-VL and a Qwen2 LM built in memory, run by the real classes.

They are the loader of the `tiny` captioner family (`entries`): a byte-level tokenizer
and a plain ChatML template, the product's `VlmCaptioner` / `LlmRewriter` around them. Their outputs are noise.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Final

from model_adapters.captioners.generation import LlmRewriter, VlmCaptioner
from model_adapters.captioners.registry import CAPTIONER
from tests.doubles import tiny

# ChatML (the Qwen chat format) for the tiny models, which have no template of their own.
CHATML_TEMPLATE: Final = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>{% else %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


class TinyVlmProcessor:
    """The tiny captioner's processor: transformers' Qwen2VLProcessor needs torchvision (never installed here), so
    the ChatML template renders the turn and `families.vlm.QwenStyleInputs` (the tiny embedders' input builder)
    expands each image to its vision tokens, as the Qwen processors do."""

    def __init__(self, tokenizer: Any, image_processor: Any) -> None:
        from model_adapters.families.vlm import QwenStyleInputs

        self.tokenizer = tokenizer  # shared with the tiny model's other users: its own template is left as it is
        self._inputs = functools.partial(QwenStyleInputs, self.tokenizer, image_processor)

    def apply_chat_template(self, turn: Any, **kwargs: Any) -> str:
        from model_adapters.families.vlm import IMAGE_PAD, IMAGE_SLOT, VISION_END, VISION_START

        text = self.tokenizer.apply_chat_template(turn, chat_template=CHATML_TEMPLATE, **kwargs)
        return text.replace(VISION_START + IMAGE_PAD + VISION_END, IMAGE_SLOT)

    def bind(self, model: Any) -> TinyVlmProcessor:
        self.build = self._inputs(model, str(model.device))
        return self

    def __call__(self, *, text: Sequence[str], images: Sequence[Any], **_: Any) -> dict[str, Any]:
        import io

        blobs = []
        for picture in images:  # QwenStyleInputs decodes bytes itself
            buf = io.BytesIO()
            picture.save(buf, format="PNG")
            blobs.append(buf.getvalue())
        return self.build(list(text), blobs)


def tiny_llm(seed: int) -> tuple[Any, Any]:
    """(Qwen2ForCausalLM, tokenizer): a tiny random Qwen2 LM with the byte-level tokenizer and ChatML."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tok = tiny.build_tokenizer(add_bos_eos=False)
    tok.chat_template = CHATML_TEMPLATE
    config = Qwen2Config(
        vocab_size=len(tok),
        hidden_size=tiny.HIDDEN,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=None,
    )
    return tiny.seeded(seed, lambda: Qwen2ForCausalLM(config)), tok


def load(entry: Any, path: str, *, device: str = "cpu") -> Any:
    """The tiny entry's captioner (a tiny Qwen2-VL) or rewriter (a tiny Qwen2 LM) of its revision's seed."""
    if entry.kind == CAPTIONER:
        model, tok, image_processor = tiny.tiny_qwen2_vl(tiny.seed_of(entry.revision))
        processor = TinyVlmProcessor(tok, image_processor).bind(model)
        return VlmCaptioner(model.to(device), processor, entry.prompt, entry.max_new_tokens)
    model, tok = tiny_llm(tiny.seed_of(entry.revision))
    return LlmRewriter(model.to(device), tok, entry.prompt, entry.max_new_tokens)
