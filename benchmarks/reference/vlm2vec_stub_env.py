# ruff: noqa: E401, E402, E702, B905  (driver for the authors' code in a scratch venv; imports must follow the path setup)
"""Stubs for modules the VLM2Vec import chain pulls in but the Qwen2-VL image path never calls (torchvision,
timm, decord: video readers and the InternVideo2/ColPali baselines). Put in sys.modules after transformers has
recorded that torchvision is absent."""

import sys
import types

from transformers.utils import import_utils

assert not import_utils.is_torchvision_available()


class _Any(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        full = f"{self.__name__}.{name}"
        mod = sys.modules.get(full) or _Any(full)
        sys.modules[full] = mod
        return mod

    def __call__(self, *a, **k):
        return self

    def __mro_entries__(self, bases):
        return (object,)


# imageio: imported by the video eval datasets (VLM2Vec V1 driver imports the eval collator's package)
STUBBED = ("torchvision", "timm", "decord", "flash_attn", "skimage", "cv2", "hnswlib", "wandb", "ray", "imageio")


class _Finder:
    def find_module(self, fullname, path=None):
        return self if fullname.split(".")[0] in STUBBED else None

    def find_spec(self, fullname, path=None, target=None):
        import importlib.machinery

        if fullname.split(".")[0] in STUBBED:
            return importlib.machinery.ModuleSpec(fullname, self)
        return None

    def create_module(self, spec):
        m = _Any(spec.name)
        m.__path__ = []
        return m

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Finder())
