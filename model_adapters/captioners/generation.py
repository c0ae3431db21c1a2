"""VLM captioners and LLM rewriters through transformers generation (greedy).

Inputs are built by the model's own processor / tokenizer chat template (`apply_chat_template`): one user turn with
the image first and the prompt after it (captioner), or the prompt with the query filled in (rewriter). Generation
is greedy (`do_sample=False`), left padded, and only the new tokens are decoded (special tokens skipped, stripped).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from model_adapters.families.common import decode_image, hub_kwargs, torch_dtype
from model_adapters.families.generating import decode, generate_new_ids


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


def load(entry: Any, path: str, *, device: str = "cpu") -> Any:
    """The entry's captioner (a `VlmCaptioner`) or rewriter (an `LlmRewriter`) from its Hub id or folder."""
    import transformers

    from model_adapters.captioners.registry import CAPTIONER

    kwargs = hub_kwargs(path, entry.revision)
    dtype = torch_dtype(entry.dtype)
    if entry.kind == CAPTIONER:
        processor = transformers.AutoProcessor.from_pretrained(path, **kwargs)
        model = transformers.AutoModelForImageTextToText.from_pretrained(path, dtype=dtype, **kwargs).to(device)  # type: ignore[arg-type]  # transformers' stubs hide `to`'s self behind a decorator
        return VlmCaptioner(model, processor, entry.prompt, entry.max_new_tokens)
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, **kwargs)
    model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=dtype, **kwargs).to(device)  # type: ignore[arg-type]  # transformers' stubs hide `to`'s self behind a decorator
    return LlmRewriter(model, tokenizer, entry.prompt, entry.max_new_tokens, template_options=entry.options)
