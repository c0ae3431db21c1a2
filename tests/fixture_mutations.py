"""The bounds of the reference tests and the rule mutations that must break them.

A reference test compares our adapter with a fixture made by the authors' code on tiny weights of std 0.2
(tests/fixtures/<name>/NOTE.md). Float32 on one CPU gives 1 - cos <= MAX_ONE_MINUS_COS per vector and
|Δscore| <= MAX_SCORE_DIFF per pair; a mutation test runs the same adapter with one position, mask or pooling rule
changed for the duration of a `with` block and requires the comparison to fail:

- `shifted_positions`: every attended token after the first one position back (an off-by-one between the first
  token and the rest; a uniform shift of every position is invisible to rotary embeddings by construction);
- `dropped_mask`: the attention mask replaced by ones, so padding is attended;
- `pooled`: every hidden state replaced by the attended tokens' mean (or by the last attended token's state), so
  whatever position the recipe reads, it reads another pooling.

Each wraps one module's `forward` (the one that receives the mask and positions, or produces the hidden states the
recipe pools) and restores it on exit.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

MAX_ONE_MINUS_COS = 1e-6
MAX_SCORE_DIFF = 1e-6


def one_minus_cos(got: Any, expected: Any) -> np.ndarray:
    """1 - cos per row, in float64; a row that is zero on both sides counts as equal, on one side as 1."""
    a, b = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    both_zero = (np.linalg.norm(a, axis=1) == 0) & (np.linalg.norm(b, axis=1) == 0)
    cos = np.where(norms > 0, (a * b).sum(1) / np.where(norms > 0, norms, 1), 0.0)
    return np.where(both_zero, 0.0, 1 - cos)


def score_diff(got: Any, expected: Any) -> np.ndarray:
    """|Δscore| per pair, in float64."""
    return np.abs(np.asarray(got, dtype=np.float64) - np.asarray(expected, dtype=np.float64))


def _keywords(signature: inspect.Signature, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    bound = signature.bind(*args, **kwargs)
    out: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        if signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
            out.update(value)
        else:
            out[name] = value
    return out


@contextmanager
def patched_forward(
    module: Any,
    inputs: Callable[[dict[str, Any]], None] | None = None,
    output: Callable[[Any, dict[str, Any]], None] | None = None,
) -> Iterator[None]:
    """`module.forward` with its keyword arguments changed by `inputs` and its output by `output`."""
    own = vars(module).get("forward")
    forward = module.forward
    signature = inspect.signature(forward)

    def patched(*args: Any, **kwargs: Any) -> Any:
        keywords = _keywords(signature, args, kwargs)
        if inputs is not None:
            inputs(keywords)
        result = forward(**keywords)
        if output is not None:
            output(result, keywords)
        return result

    module.forward = patched
    try:
        yield
    finally:
        if own is None:
            del module.forward
        else:
            module.forward = own


def _mask(keywords: dict[str, Any]) -> Any:
    import torch

    mask = keywords.get("attention_mask")
    if mask is not None:
        return mask
    tokens = keywords.get("input_ids")
    shape = tokens.shape if tokens is not None else keywords["inputs_embeds"].shape[:2]
    return torch.ones(shape, dtype=torch.long)


def sequential(keywords: dict[str, Any]) -> Any:
    """The positions a decoder uses when given none: 0 .. L-1 in every row."""
    import torch

    batch, length = _mask(keywords).shape
    return torch.arange(length).expand(batch, length)


def after_padding(padding_idx: int) -> Callable[[dict[str, Any]], Any]:
    """The positions XLM-R derives from the ids when given none: padding_idx + 1, ... over the non-pad tokens."""

    def positions(keywords: dict[str, Any]) -> Any:
        real = keywords["input_ids"].ne(padding_idx).long()
        return real.cumsum(dim=1) * real + padding_idx

    return positions


def shifted_positions(module: Any, default: Callable[[dict[str, Any]], Any] | None = None) -> Any:
    """`module` (it receives `position_ids` and a 2-D mask) with every attended token after the first one position
    back; `default` gives the positions it would use when it is given none."""

    def change(keywords: dict[str, Any]) -> None:
        mask = _mask(keywords)
        positions = keywords.get("position_ids")
        if positions is None:
            if default is None:
                raise ValueError(f"{type(module).__name__} got no position_ids and no default was given")
            positions = default(keywords)
        later = ((mask.cumsum(dim=-1) >= 2) & mask.bool()).long().to(positions.device)
        keywords["position_ids"] = positions - later

    return patched_forward(module, inputs=change)


def dropped_mask(module: Any) -> Any:
    """`module` with its attention mask replaced by ones (padding attended)."""

    def change(keywords: dict[str, Any]) -> None:
        import torch

        keywords["attention_mask"] = torch.ones_like(_mask(keywords))

    return patched_forward(module, inputs=change)


def pooled(module: Any, how: str = "mean", field: str = "last_hidden_state") -> Any:
    """`module` whose output `field` is the attended tokens' mean ("mean") or the last attended token's state
    ("last") at every position (`field` "pooler_output": that one vector instead of the model's pooling)."""

    def change(result: Any, keywords: dict[str, Any]) -> None:
        import torch

        states = result.last_hidden_state
        mask = _mask(keywords).to(states.device)
        if how == "mean":
            weights = mask.to(states.dtype).unsqueeze(-1)
            vector = (states * weights).sum(dim=1) / weights.sum(dim=1)
        else:
            last = mask.shape[1] - 1 - mask.flip(dims=[1]).argmax(dim=1)
            vector = states[torch.arange(states.shape[0], device=states.device), last]
        if field == "pooler_output":
            result.pooler_output = vector
        else:
            result.last_hidden_state = vector.unsqueeze(1).expand_as(states).contiguous()

    return patched_forward(module, output=change)


RULES = ("positions", "mask", "pooling")


def default_positions(config: Any) -> Callable[[dict[str, Any]], Any]:
    """How a text model numbers its tokens when given no position ids: XLM-R from after its padding id, others
    0 .. L-1."""
    if config.model_type == "xlm-roberta":
        return after_padding(int(config.pad_token_id))
    return sequential


def mutation(
    rule: str,
    *,
    decoder: Any,
    states: Any,
    default: Callable[[dict[str, Any]], Any] | None = None,
    how: str = "mean",
    field: str = "last_hidden_state",
) -> Any:
    """The context that changes `rule` (one of RULES): positions or mask on `decoder`, pooling on `states`."""
    if rule == "positions":
        return shifted_positions(decoder, default)
    if rule == "mask":
        return dropped_mask(decoder)
    if rule == "pooling":
        return pooled(states, how, field)
    raise ValueError(f"unknown rule {rule!r}; valid: {', '.join(RULES)}")
