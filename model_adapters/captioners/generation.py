"""VLM captioners and LLM rewriters through transformers generation (greedy), and their tiny random test versions.

Inputs are built by the model's own processor / tokenizer chat template (`apply_chat_template`): one user turn with
the image first and the prompt after it (captioner), or the prompt with the query filled in (rewriter). Generation
is greedy (`do_sample=False`), left padded, and only the new tokens are decoded (special tokens skipped, stripped).
The tiny models are a Qwen2-VL / Qwen2 built from small configs with a byte-level tokenizer and a plain ChatML
template (model_adapters.families.tiny): they exercise the same code, and their outputs are noise.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Final

from model_adapters.families._common import decode_image, hub_kwargs, torch_dtype
from model_adapters.families.generating import decode, generate_new_ids

# ChatML (the Qwen chat format) for the tiny models, which have no template of their own.
CHATML_TEMPLATE: Final = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>{% else %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _generate(model: Any, tokenizer: Any, inputs: Any, max_new_tokens: int) -> list[str]:
    rows = generate_new_ids(
        model, inputs, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id
    )
    return decode(tokenizer, rows, skip_special_tokens=True, strip=True)


class VlmCaptioner:
    """A `Captioner`: one greedy caption per image from an image-text-to-text model and its processor."""

    def __init__(self, model: Any, processor: Any, prompt: str, max_new_tokens: int) -> None:
        self.model = model.eval()
        self.processor = processor
        self.processor.tokenizer.padding_side = "left"
        self.prompt = prompt
        self.max_new_tokens = max_new_tokens

    def caption(self, images: Sequence[bytes]) -> list[str]:
        pictures = [decode_image(b) for b in images]  # ValueError names nothing; the caller names the item
        turn = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": self.prompt}]}]
        texts = [self.processor.apply_chat_template(turn, add_generation_prompt=True, tokenize=False)] * len(images)
        inputs = self.processor(text=texts, images=pictures, return_tensors="pt", padding=True)
        return _generate(self.model, self.processor.tokenizer, inputs, self.max_new_tokens)


class LlmRewriter:
    """A `Rewriter`: one greedy rewrite per query from a causal LM and its tokenizer's chat template."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        prompt: str,
        max_new_tokens: int,
        template_options: dict[str, Any] | None = None,
    ) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.tokenizer.padding_side = "left"
        self.prompt = prompt
        self.max_new_tokens = max_new_tokens
        self.template_options = dict(template_options or {})

    def rewrite(self, queries: Sequence[str]) -> list[str]:
        texts = [
            self.tokenizer.apply_chat_template(
                [{"role": "user", "content": self.prompt.format(query=q)}],
                add_generation_prompt=True,
                tokenize=False,
                **self.template_options,
            )
            for q in queries
        ]
        inputs = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        return _generate(self.model, self.tokenizer, inputs, self.max_new_tokens)


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
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from model_adapters.families import tiny

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
    return tiny._seeded(seed, lambda: Qwen2ForCausalLM(config)), tok


def _seed(entry: Any) -> int:
    revision = str(entry.revision)
    return int(revision[4:]) if revision.startswith("seed") else 0


def load(entry: Any, path: str, *, device: str = "cpu") -> Any:
    from model_adapters.captioners.registry import CAPTIONER, TINY

    if entry.family == TINY:
        from model_adapters.families import tiny

        if entry.kind == CAPTIONER:
            model, tok, image_processor = tiny.tiny_qwen2_vl(_seed(entry))  # a tiny Qwen2VLForConditionalGeneration
            processor = TinyVlmProcessor(tok, image_processor).bind(model)
            return VlmCaptioner(model.to(device), processor, entry.prompt, entry.max_new_tokens)
        model, tok = tiny_llm(_seed(entry))
        return LlmRewriter(model.to(device), tok, entry.prompt, entry.max_new_tokens)
    import transformers

    kwargs = hub_kwargs(path, entry.revision)
    dtype = torch_dtype(entry.dtype)
    if entry.kind == CAPTIONER:
        processor = transformers.AutoProcessor.from_pretrained(path, **kwargs)
        model = transformers.AutoModelForImageTextToText.from_pretrained(path, dtype=dtype, **kwargs).to(device)
        return VlmCaptioner(model, processor, entry.prompt, entry.max_new_tokens)
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, **kwargs)
    model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=dtype, **kwargs).to(device)
    return LlmRewriter(model, tokenizer, entry.prompt, entry.max_new_tokens, template_options=entry.options)
