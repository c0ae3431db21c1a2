# ruff: noqa: E401, E402, E702, B905  (driver for the authors' code in a scratch venv; imports must follow the path setup)
"""Make the official Qwen3-VL-Embedding code (and other authors' Qwen-VL code) importable here (no torchvision):
1. transformers' torchvision check is evaluated (False) BEFORE a stub `torchvision` is put in sys.modules, so
   transformers never sees it; qwen_vl_utils imports torchvision at top level but uses it only for videos.
2. Qwen3VLProcessor cannot be built without torchvision (video processor). from_pretrained is replaced by a
   constructor that builds the real Qwen3VLProcessor from AutoTokenizer + AutoImageProcessor + chat_template.json
   with video_processor=None (class check skipped for that one argument). Everything else (apply_chat_template,
   __call__, token expansion, truncation, padding) is the unmodified transformers Qwen3VLProcessor code.
   Qwen2VLProcessor (Qwen2-VL checkpoints: UME-R1) is built the same way; AutoProcessor picks the class by the
   folder's config.json model_type."""

import json
import os
import sys
import types

from transformers.utils import import_utils

assert not import_utils.is_torchvision_available()
tv = types.ModuleType("torchvision")
tv.__version__ = "0.0.0-stub"
tv.io = types.ModuleType("torchvision.io")
tv.transforms = types.ModuleType("torchvision.transforms")
tv.transforms.InterpolationMode = type("InterpolationMode", (), {"BICUBIC": 3})
sys.modules.update({"torchvision": tv, "torchvision.io": tv.io, "torchvision.transforms": tv.transforms})
import qwen_vl_utils.vision_process  # noqa

for k in ("torchvision", "torchvision.io", "torchvision.transforms"):
    del sys.modules[k]
from transformers.models.qwen2_vl.processing_qwen2_vl import Qwen2VLProcessor
from transformers.models.qwen3_vl.processing_qwen3_vl import Qwen3VLProcessor
from transformers.processing_utils import ProcessorMixin

_check = ProcessorMixin.check_argument_for_proper_class


def _check_skip_video(self, name, arg):
    if name == "video_processor" and arg is None:
        return None
    return _check(self, name, arg)


ProcessorMixin.check_argument_for_proper_class = _check_skip_video


def _from_pretrained(cls, path, **kwargs):
    from transformers import AutoImageProcessor, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path, **{k: v for k, v in kwargs.items() if k == "padding_side"})
    # min_pixels / max_pixels given to the processor reach its image processor, as in ProcessorMixin.from_pretrained
    ip = AutoImageProcessor.from_pretrained(
        path, **{k: v for k, v in kwargs.items() if k in ("min_pixels", "max_pixels")}
    )
    template = json.load(open(os.path.join(path, "chat_template.json")))["chat_template"]
    return cls(image_processor=ip, tokenizer=tok, video_processor=None, chat_template=template)


Qwen3VLProcessor.from_pretrained = classmethod(_from_pretrained)
Qwen2VLProcessor.from_pretrained = classmethod(_from_pretrained)
import transformers as _t


def _auto(path, **kw):
    model_type = json.load(open(os.path.join(path, "config.json"))).get("model_type")
    return (Qwen2VLProcessor if model_type == "qwen2_vl" else Qwen3VLProcessor).from_pretrained(path, **kw)


_t.AutoProcessor.from_pretrained = _auto
