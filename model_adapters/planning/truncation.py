"""Report text truncation: how many encoder inputs are longer than the model's text limit (and therefore cut).

Encoders with a text limit (dual-tower CLIP / SigLIP / jina: the entry's `max_length`; sentence-transformers:
`max_seq_length`) cut longer text at the end, like their official interfaces; the end of a state query is its
final turn. The runner does not change that (it would change what the models compute) but counts the inputs that
are cut, per config and role, by tokenizing the exact text the encoder tokenizes with the encoder's own tokenizer,
without truncation, at plan time. No weights are loaded, so a cached re-run reports the same counts.

    {config: {"queries": distinct query inputs cut, "candidates": distinct candidate inputs cut, "limit": L}}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from model_adapters.planning.inputs import ascii_lower, join_instruction
from model_adapters.protocol import ModelInput

TOKENIZE_CHUNK: Final = 1024
K = TypeVar("K")  # an input's key: an item key, or a position in the plan's item table


@dataclass(frozen=True)
class TextLimit:
    """An encoder's text limit in tokens and the tokenizer it counts with (special tokens included)."""

    limit: int
    tokenizer: Any
    lowercase: bool = False

    def model_text(self, item: ModelInput) -> str:
        """The text the encoder tokenizes for one input ("" when it has none: nothing to cut)."""
        text = join_instruction(item.instruction, item.text)
        return ascii_lower(text) if self.lowercase else text

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Untruncated token counts (special tokens included), as the encoder's tokenizer call would see them."""
        counts: list[int] = []
        for start in range(0, len(texts), TOKENIZE_CHUNK):
            chunk = list(texts[start : start + TOKENIZE_CHUNK])
            ids = self.tokenizer(chunk, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
            counts.extend(len(row) for row in ids)
        return counts

    def over_limit(self, items: Mapping[K, ModelInput]) -> set[K]:
        """Keys of the inputs whose tokenized text exceeds the limit (and is therefore truncated)."""
        keyed = [(key, self.model_text(item)) for key, item in items.items()]
        keyed = [(key, text) for key, text in keyed if text]
        counts = self.token_counts([text for _, text in keyed])
        return {key for (key, _), n in zip(keyed, counts, strict=True) if n > self.limit}


def count_truncated(plan: Any, text_limit: TextLimit) -> dict[str, dict[str, int]]:
    """Per config: distinct query and candidate inputs whose text exceeds the limit, and the limit."""
    import numpy as np

    items = plan.items
    over_keys = text_limit.over_limit({i: items.text_input(i) for i in range(len(items))})
    over = np.zeros(len(items), dtype=bool)
    over[list(over_keys)] = True
    out: dict[str, dict[str, int]] = {}
    for cp in plan.configs:
        out[cp.config] = {
            "queries": int(over[np.unique(cp.query_items)].sum()),
            "candidates": int(over[cp.candidate_items()].sum()),
            "limit": text_limit.limit,
        }
    return out


def warning_lines(truncated: Mapping[str, Mapping[str, int]] | None, model: str) -> list[str]:
    """One line per config with truncated inputs, e.g. "warning: 59 state_fashion queries exceed clip-vit-b32's
    77-token text limit and were truncated (the end of the text was cut)"."""
    lines: list[str] = []
    for config, counts in (truncated or {}).items():
        parts = [f"{counts[role]} {config} {role}" for role in ("queries", "candidates") if counts.get(role)]
        if parts:
            lines.append(
                f"warning: {' and '.join(parts)} exceed {model}'s {counts['limit']}-token text limit "
                "and were truncated (the end of the text was cut)"
            )
    return lines
