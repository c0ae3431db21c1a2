"""Small helpers shared by the families, the captioners and the encode loop (torch is imported lazily by callers)."""

from __future__ import annotations

import io
import os
from typing import Any

import numpy as np

from triad_dataset.contract.errors import TriadError


def torch_dtype(name: str) -> Any:
    import torch

    table = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
    if name not in table:
        raise TriadError(f"unknown dtype {name!r}; valid: {', '.join(table)}")
    return table[name]


def decode_image(data: bytes) -> Any:
    """PIL RGB image from encoded bytes; raises ValueError (the runner names the item) when it does not decode."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            img.load()
            return img.convert("RGB")
    except Exception as exc:  # PIL raises many types (UnidentifiedImageError, OSError, SyntaxError...)
        raise ValueError(f"image does not decode ({type(exc).__name__}: {exc})") from exc


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalization; zero rows stay zero (the runner reports them)."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


def last_attended_positions(mask: Any) -> Any:
    """Index of each row's last attended token (any padding side)."""
    return mask.shape[1] - 1 - mask.flip(dims=[1]).argmax(dim=1)


def l2_normalize_rows(x: Any) -> Any:
    """`l2_normalize` for a torch tensor, on its device, in float32 (zero rows stay zero)."""
    import torch

    x = x.float()
    norms = x.norm(dim=1, keepdim=True)
    return x / torch.where(norms == 0, torch.ones_like(norms), norms)


def features(output: Any) -> Any:
    """A projection tensor from `get_text_features`/`get_image_features` (a tensor in transformers 4, an output
    object with `pooler_output` in transformers 5)."""
    import torch

    if isinstance(output, torch.Tensor):
        return output
    for name in ("pooler_output", "text_embeds", "image_embeds"):
        value = getattr(output, name, None)
        if value is not None:
            return value
    raise ValueError(f"cannot read projected features from {type(output).__name__}")


def hub_kwargs(path: str, revision: str, **extra: Any) -> dict[str, Any]:
    """from_pretrained keyword arguments: pin the revision for Hub ids, never for local directories."""
    kwargs = dict(extra)
    if not os.path.isdir(path) and revision:
        kwargs["revision"] = revision
    return kwargs


class PerThread:
    """A deep copy of `obj` for each thread that asks for it (the thread that made it gets `obj` itself): Hugging
    Face fast tokenizers raise "Already borrowed" when two threads use one at once (model_adapters.vectors.pipeline
    prepares batches on several threads)."""

    def __init__(self, obj: Any) -> None:
        import threading

        self._obj = obj
        self._owner = threading.get_ident()
        self._local = threading.local()

    def get(self) -> Any:
        import copy
        import threading

        if threading.get_ident() == self._owner:
            return self._obj
        mine = getattr(self._local, "obj", None)
        if mine is None:
            mine = self._local.obj = copy.deepcopy(self._obj)
        return mine


def pinned(tensors: dict[str, Any], device: str) -> dict[str, Any]:
    """Host tensors in pinned memory when they go to a CUDA device (so `to_device` copies without blocking)."""
    if not str(device).startswith("cuda"):
        return tensors
    return {k: v.pin_memory() if hasattr(v, "pin_memory") else v for k, v in tensors.items()}


def to_device(tensors: dict[str, Any], device: str) -> dict[str, Any]:
    """Move prepared tensors to `device` (non-blocking from pinned memory)."""
    return {k: v.to(device, non_blocking=True) if hasattr(v, "to") else v for k, v in tensors.items()}


def image_size(data: bytes) -> tuple[int, int]:
    """(width, height) of encoded image bytes from the header only (no decoding); (0, 0) when unreadable (the
    encode step reports the item)."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            return int(img.size[0]), int(img.size[1])
    except Exception:  # PIL raises many types; the decode in `prepare` names the item
        return 0, 0
