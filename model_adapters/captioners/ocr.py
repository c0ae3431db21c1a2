"""The OCR captioner: rapidocr (PP-OCR detection, orientation, recognition) on onnxruntime, CPU, offline.

A caption is the recognised text lines joined with `options["joiner"]` in rapidocr's reading order (top to
bottom, left to right); an image without text gets "". Settings are the entry's options (registry.OCR_OPTIONS).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from model_adapters.families._common import decode_image


class OcrCaptioner:
    def __init__(self, options: dict[str, Any]) -> None:
        from rapidocr import RapidOCR

        logging.getLogger("RapidOCR").setLevel(logging.WARNING)
        self.joiner = str(options.get("joiner", " "))
        params = {k: v for k, v in options.items() if "." in k}
        self.engine = RapidOCR(params=params)
        logging.getLogger("RapidOCR").setLevel(logging.WARNING)

    def caption_one(self, data: bytes) -> str:
        image = np.asarray(decode_image(data))[:, :, ::-1].copy()  # RGB -> BGR, rapidocr's (OpenCV) order
        result = self.engine(image)
        texts = [t.strip() for t in (result.txts or ()) if t and t.strip()]
        return self.joiner.join(texts)

    def caption(self, images: Sequence[bytes]) -> list[str]:
        return [self.caption_one(b) for b in images]


def load(entry: Any, path: str, *, device: str = "cpu") -> OcrCaptioner:
    return OcrCaptioner(dict(entry.options))
