"""Text generation with transformers, shared by the captioners / rewriters (`captioners.generation`, greedy) and the
reasoning embedders (`families.reasoning`: UME-R1 Gen and Embed-RL's T-CoT generator, sampled).

`generate_new_ids` runs `model.generate` once over a left-padded batch and returns each row's new token ids,
cut after the row's first end-of-sequence token (what a batch of one would have generated: generation stops
there; later positions of a batched row are padding). Sampling is seeded per call from `seed` and the batch's
own inputs (`batch_seed`), inside a forked RNG, so a batch generates the same ids in every run and process.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def batch_seed(seed: int, parts: Iterable[bytes]) -> int:
    """A 63-bit seed from the run's seed and the bytes of a batch's inputs (equal batches, equal seeds; other
    batches draw other random streams).

    >>> batch_seed(0, [b"a"]) == batch_seed(0, [b"a"]) != batch_seed(1, [b"a"])
    True
    """
    h = hashlib.sha256(str(seed).encode())
    for part in parts:
        h.update(hashlib.sha256(part).digest())
    return int.from_bytes(h.digest()[:8], "big") >> 1


def end_ids(config: Any) -> set[int]:
    """The end-of-sequence ids of a generation config (an int, a list of them, or None)."""
    value = getattr(config, "eos_token_id", None)
    if value is None:
        return set()
    return {int(value)} if isinstance(value, int) else {int(v) for v in value}


def cut_at_end(row: Sequence[int], ends: set[int]) -> list[int]:
    """The ids up to and including the first end-of-sequence id (all of them when there is none).

    >>> cut_at_end([5, 6, 2, 0, 0], {2, 0})
    [5, 6, 2]
    """
    out = []
    for token in row:
        out.append(int(token))
        if token in ends:
            break
    return out


def generate_new_ids(
    model: Any, inputs: Mapping[str, Any], *, seed: int | None = None, generation_config: Any = None, **decoding: Any
) -> list[list[int]]:
    """Each row's generated ids (`inputs`: a left-padded batch; `generation_config` and `decoding` as
    `model.generate` takes them); sampling seeded with `seed` inside a forked RNG (None: the global RNG)."""
    import torch

    device = next(model.parameters()).device
    inputs = {k: v.to(device) for k, v in dict(inputs).items()}
    if "pixel_values" in inputs:
        inputs["pixel_values"] = inputs["pixel_values"].to(next(model.parameters()).dtype)
    cuda = [device] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=cuda), torch.inference_mode():
        if seed is not None:
            torch.manual_seed(seed)
        out = model.generate(**inputs, generation_config=generation_config, **decoding)
    config = generation_config if generation_config is not None else model.generation_config
    ends = end_ids(config) | (
        {int(decoding["eos_token_id"])} if isinstance(decoding.get("eos_token_id"), int) else set()
    )
    new = out[:, inputs["input_ids"].shape[1] :].tolist()
    return [cut_at_end(row, ends) for row in new]


def decode(
    tokenizer: Any, rows: Sequence[Sequence[int]], *, skip_special_tokens: bool = True, strip: bool = False
) -> list[str]:
    """The generated ids as text."""
    texts = tokenizer.batch_decode([list(r) for r in rows], skip_special_tokens=skip_special_tokens)
    return [t.strip() for t in texts] if strip else list(texts)
