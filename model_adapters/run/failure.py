"""The one line for an exception raised inside your own encoder: its file and line, the batch, and the input.

The encoding loop marks the exception with the batch it was encoding (`vectors.encoding.FAILED_BATCH`). The input
is found by encoding halves of that batch again until one input fails alone; a batch that only fails whole is
named by its first and last inputs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from model_adapters.models.resolve import ResolvedModel
from model_adapters.models.user_code import where
from model_adapters.planning import inputs
from model_adapters.planning.plan import Plan
from model_adapters.vectors.encoding import FAILED_BATCH

DEBUG_HINT = "--debug shows the traceback"


def encoder_failed(exc: BaseException, model: ResolvedModel, plan: Plan) -> str:
    """The line that replaces the traceback of `exc`, raised by `model`'s own encoder while encoding `plan`."""
    obj = model.obj
    message = str(exc).strip().splitlines()
    head = (
        f"{where(exc, _own_file(obj))}: your encoder {model.identity.name} raised {type(exc).__name__}"
        f"{': ' + message[0] if message else ''}"
    )
    failed = getattr(exc, FAILED_BATCH, None)
    if failed is None:
        return f"{head} (while re-encoding cached items to check them); {DEBUG_HINT}"
    role, number, keys = failed
    labels = [plan.items[k].label for k in keys]
    culprit = _fails_alone(_encode_fn(obj, role), [plan.items[k].model_input for k in keys])
    batch = f"{role} batch {number} ({len(keys)} inputs)"
    if culprit is not None:
        return f"{head}, on {batch}: input {labels[culprit]} fails alone; {DEBUG_HINT}"
    span = labels[0] if len(labels) == 1 else f"{labels[0]} ... {labels[-1]}"
    return f"{head}, on {batch}: inputs {span}, none of which fails alone; {DEBUG_HINT}"


def _own_file(obj: Any) -> str | None:
    """The file that defines the encoder's methods (its traceback frames there are the ones to name)."""
    method = getattr(type(obj), "encode_queries", None) or getattr(type(obj), "forward", None)
    code = getattr(method, "__code__", None)
    return os.path.abspath(code.co_filename) if code is not None else None


def _encode_fn(obj: Any, role: str) -> Callable[[list[Any]], Any] | None:
    fn = getattr(obj, "encode_queries" if role == inputs.QUERY else "encode_candidates", None)
    return fn if callable(fn) else None


def _fails_alone(encode: Callable[[list[Any]], Any] | None, batch: Sequence[Any]) -> int | None:
    """The position of an input of `batch` that `encode` fails on by itself, found by halving; None if none."""
    if encode is None or not batch:
        return None
    todo = list(range(len(batch)))
    while len(todo) > 1:
        half = todo[: len(todo) // 2]
        todo = half if _fails(encode, [batch[i] for i in half]) else todo[len(todo) // 2 :]
    return todo[0] if _fails(encode, [batch[todo[0]]]) else None


def _fails(encode: Callable[[list[Any]], Any], batch: list[Any]) -> bool:
    try:
        encode(batch)
    except Exception:
        return True
    return False
