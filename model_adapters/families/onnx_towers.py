"""The ONNX Runtime backend (CPU) for the dual towers (`--backend onnx`: the CLIP, SigLIP, SigLIP 2, MetaCLIP 2 and
BGE-VL-CLIP recipes, on the model classes in CLASSES).

Each tower's projection (`get_text_features`, `get_image_features`) is traced once per model identity into its own
graph (`text.onnx`, `image.onnx`); tokenization, image decoding and resizing stay the torch encoder's own `prepare`,
and the 1:1 sum then L2 (paper B.2.1) is done here as `DualTowerEncoder.forward` does it. Both graphs are checked
against the torch forward on probe inputs right after the export (`onnx_text.check_cosines`). A tower class outside
CLASSES (e.g. SigLIP 2's NaFlex `Siglip2Model`, whose image tower also takes patch masks and spatial shapes) is
refused in one line (`check_class`).
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from model_adapters.atomic import replacing
from model_adapters.families import onnx_text
from model_adapters.families.common import features, l2_normalize
from model_adapters.families.dual_tower import DualTowerEncoder
from model_adapters.planning.truncation import TextLimit
from model_adapters.protocol import ModelInput
from triad_dataset.contract.errors import TriadError

TEXT: Final = "text.onnx"
IMAGE: Final = "image.onnx"
PIXELS: Final = "pixel_values"
# The transformers classes whose towers take only token ids (+ mask) and pixel values, each proven equal to torch on
# a tiny model of the class (tests/models/test_onnx_backend.py).
CLASSES: Final = ("CLIPModel", "SiglipModel", "MetaClip2Model")


def check_class(model: Any, label: str) -> None:
    """Refuse a dual tower whose model class has no proven ONNX path."""
    name = type(model).__name__
    if name not in CLASSES:
        raise TriadError(
            f"--backend onnx: model {label} loads {name}, whose towers have no ONNX path (the tower export covers "
            f"{', '.join(CLASSES)}); run it with --backend torch"
        )


def probe_image(width: int, height: int, seed: int) -> bytes:
    """A PNG with a smooth gradient (the export's probe inputs)."""
    from PIL import Image

    x, y = np.meshgrid(np.linspace(0, 1, width), np.linspace(0, 1, height))
    pixels = np.stack([x, y, (x + y + seed) % 1.0], -1) * 255
    buffer = io.BytesIO()
    Image.fromarray(pixels.astype("uint8")).save(buffer, format="PNG")
    return buffer.getvalue()


def probes() -> list[list[ModelInput]]:
    """Probe batches: texts with and without images, images alone, several batch sizes."""
    long_text = "a vintage sedan with leather seats " * 12
    return [
        [
            ModelInput("a red shoe", probe_image(40, 30, 0)),
            ModelInput(long_text, None),
            ModelInput("", probe_image(9, 50, 1)),
        ],
        [ModelInput("blue", probe_image(64, 64, 2))],
    ]


class OnnxTowers:
    """The torch dual-tower encoder's `prepare` and two ONNX Runtime sessions as its `forward`."""

    prepare_threads = None

    def __init__(self, base: DualTowerEncoder, text: Any, image: Any, *, exported: bool) -> None:
        self.base, self.text, self.image = base, text, image
        self.dim = base.dim
        self.exported = exported
        self.text_inputs = [i.name for i in text.get_inputs()]

    def text_limit(self) -> TextLimit:
        return self.base.text_limit()

    def input_lengths(self, batch: Sequence[ModelInput], role: str) -> list[int]:
        return self.base.input_lengths(batch, role)

    def prepare(self, batch: Sequence[ModelInput], role: str) -> dict[str, Any]:
        return self.base.prepare(batch, role)

    def forward(self, prepared: dict[str, Any], role: str) -> np.ndarray:
        """The towers' projections summed 1:1 per input, then L2 (`DualTowerEncoder.forward` on the sessions)."""
        total = np.zeros((prepared["size"], self.dim), dtype=np.float32)
        if prepared["text_rows"]:
            feeds = {n: prepared["text"][n].numpy() for n in self.text_inputs}
            total[prepared["text_rows"]] += self.text.run(None, feeds)[0]
        if prepared["image_rows"]:
            pixels = prepared["image"][PIXELS].float().numpy()
            total[prepared["image_rows"]] += self.image.run(None, {PIXELS: pixels})[0]
        return l2_normalize(total)

    def encode_queries(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.forward(self.prepare(batch, "query"), "query")

    def encode_candidates(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.forward(self.prepare(batch, "candidate"), "candidate")


def _tower(model: Any, method: str, names: list[str]) -> Any:
    """A torch module mapping its tensors (positionally, `names`) to one tower's projection, `model.method`.

    The method is taken from the model's class, so what is traced is the tower itself even where the instance's
    attribute has been wrapped (e.g. by code recording what the tower receives)."""
    import torch

    tower = getattr(type(model), method)

    class Tower(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *tensors: Any) -> Any:
            return features(tower(self.model, **dict(zip(names, tensors, strict=True))))

    return Tower().eval()


def export(base: DualTowerEncoder, folder: str, label: str) -> None:
    """Trace both towers into `folder` (temporary names, checked against torch, then moved into place)."""
    prepared = base.prepare(probes()[0], "candidate")
    names = list(prepared["text"])
    text_path, image_path = os.path.join(folder, TEXT), os.path.join(folder, IMAGE)
    # the image tower moves first: the text tower's file says both are in place
    with replacing(text_path) as text_tmp, replacing(image_path) as image_tmp:
        onnx_text.trace(_tower(base.model, "get_text_features", names), prepared["text"], names, str(text_tmp))
        onnx_text.trace(
            _tower(base.model, "get_image_features", [PIXELS]),
            {PIXELS: prepared["image"][PIXELS]},
            [PIXELS],
            str(image_tmp),
        )
        candidate = OnnxTowers(base, onnx_text.session(str(text_tmp)), onnx_text.session(str(image_tmp)), exported=True)
        for batch in probes():
            want = base.encode_candidates(batch)
            onnx_text.check_cosines(candidate.encode_candidates(batch), want, label)


def wrap(base: DualTowerEncoder, folder: str, label: str, *, log: bool = True) -> OnnxTowers:
    """The ONNX encoder of a loaded dual tower: its graphs read from `folder`, exported there first if absent."""
    check_class(base.model, label)
    exported = onnx_text.cached_graph(folder, [TEXT, IMAGE], label, lambda: export(base, folder, label), log=log)
    text, image = (onnx_text.session(os.path.join(folder, f)) for f in (TEXT, IMAGE))
    return OnnxTowers(base, text, image, exported=exported)
