"""The OCR captioner: rapidocr (PP-OCR detection, orientation, recognition) on onnxruntime, CPU, offline.

A caption is the recognised text lines joined with `options["joiner"]` in rapidocr's reading order (top to
bottom, left to right), Unicode-normalized with `options["normalize"]` (NFKC: PP-OCR's recogniser, trained largely on
Chinese text, sometimes returns full-width digits such as "１" for "1"); an image without text gets "". Settings are
the entry's options (registry.OCR_OPTIONS).
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np

from model_adapters.families.common import decode_image
from triad_dataset.contract.errors import TriadError

if TYPE_CHECKING:
    from rapidocr.utils.output import RapidOCROutput

NormalForm = Literal["NFC", "NFKC", "NFD", "NFKD"]
NORMAL_FORMS = ("", "NFC", "NFKC", "NFD", "NFKD")  # "" keeps the recogniser's text as it is


class OcrCaptioner:
    def __init__(self, options: dict[str, Any]) -> None:
        from rapidocr import RapidOCR

        logging.getLogger("RapidOCR").setLevel(logging.WARNING)
        self.joiner = str(options.get("joiner", " "))
        normalize = str(options.get("normalize", ""))
        if normalize not in NORMAL_FORMS:
            raise TriadError(
                f"ocr captioner: normalize={normalize!r} is not one of {', '.join(map(repr, NORMAL_FORMS))}"
            )
        self.normalize = cast("NormalForm | None", normalize or None)  # one of NORMAL_FORMS, checked above
        params = {k: v for k, v in options.items() if "." in k}
        self.engine = RapidOCR(params=params)
        logging.getLogger("RapidOCR").setLevel(logging.WARNING)

    def caption_one(self, data: bytes) -> str:
        image = np.asarray(decode_image(data))[:, :, ::-1].copy()  # RGB -> BGR, rapidocr's (OpenCV) order
        # rapidocr types its call as any one stage's output; the full pipeline run here returns a RapidOCROutput
        result = cast("RapidOCROutput", self.engine(image))
        return self.text_of(result.txts or ())

    def text_of(self, lines: Sequence[str]) -> str:
        """The caption of one image from its recognised lines."""
        if self.normalize:
            lines = [unicodedata.normalize(self.normalize, t) for t in lines]
        return self.joiner.join(t.strip() for t in lines if t and t.strip())

    def caption(self, images: Sequence[bytes]) -> list[str]:
        return [self.caption_one(b) for b in images]


def load(entry: Any, path: str, *, device: str = "cpu") -> OcrCaptioner:
    return OcrCaptioner(dict(entry.options))
