# ruff: noqa: E401, E402, E702  (driver support for the authors' code in a scratch venv)
"""Make ZoengHN/Embed-RL's MMEB evaluation code (`git archive 87b52f73 eval`) importable in a scratch venv, with the
substitutions of tests/fixtures/embed_rl/NOTE.md (the same as run_embed_rl_official.py makes inline):

1. `src/model/vlm_backbone/qwen3_vl/qwen2_vision_process.py`, which processor.py loads, is not in the repository:
   qwen-vl-utils 0.0.14 `vision_process` with the constants of the repository's other copy,
   train/contrastive_learning/dataset/qwen2_vision_process.py (MIN_PIXELS 128*32^2, MAX_PIXELS 768*32^2, factor 32);
   `src.utils.basic_utils.print_master` and `src.arguments` (also absent) are stubs;
2. transformers 5.24's Qwen3VLModel requires `mm_token_type_ids` with images; `MMEBModel.encode_input` passes only
   ids, mask, pixels and grids, so they are added from the ids (what the processor returns).

`load(checkout)` returns (the processor module `src.model.processor`, `src.model.model.MMEBModel`)."""

import dataclasses
import importlib.machinery
import importlib.util
import os
import sys
import types


def load(checkout: str):
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:0] = [here, os.path.join(checkout, "eval", "mmeb_eval", "vlm2vec")]
    import qwen3_vl_official_env  # noqa: F401  (torchvision stub; Qwen3VLProcessor without video processor)
    import qwen_vl_utils.vision_process as qvp

    basic = types.ModuleType("src.utils.basic_utils")
    basic.print_master = print
    sys.modules["src.utils.basic_utils"] = basic
    args = types.ModuleType("src.arguments")
    args.ModelArguments = dataclasses.make_dataclass(
        "ModelArguments", [("model_name", str, None), ("checkpoint_path", str, None)]
    )
    args.TrainingArguments = dataclasses.make_dataclass("TrainingArguments", [])
    sys.modules["src.arguments"] = args
    shim = types.ModuleType("qwen2_vision_process_custom")
    shim.__dict__.update(vars(qvp))
    shim.__dict__.update(
        IMAGE_FACTOR=32,
        MIN_PIXELS=128 * 32 * 32,
        MAX_PIXELS=768 * 32 * 32,
        VIDEO_MIN_PIXELS=128 * 32 * 32,
        VIDEO_MAX_PIXELS=300 * 32 * 32,
        VIDEO_TOTAL_PIXELS=300 * 32 * 32 * 8,
        FPS=2.0,
        FPS_MIN_FRAMES=8,
        FPS_MAX_FRAMES=8,
    )

    class _ShimLoader(importlib.machinery.SourceFileLoader):
        def create_module(self, spec):
            return shim

        def exec_module(self, module):
            pass

    spec_from_file = importlib.util.spec_from_file_location

    def _spec(name, path, *a, **k):
        if str(path).endswith(os.path.join("qwen3_vl", "qwen2_vision_process.py")) and not os.path.exists(path):
            return importlib.machinery.ModuleSpec(name, _ShimLoader(name, str(path)))
        return spec_from_file(name, path, *a, **k)

    importlib.util.spec_from_file_location = _spec
    try:
        import src.model.processor as processor_module
    finally:
        importlib.util.spec_from_file_location = spec_from_file
    from src.model.model import MMEBModel
    from transformers.models.qwen3_vl import modeling_qwen3_vl as M

    forward = M.Qwen3VLModel.forward

    def _with_token_types(self, input_ids=None, *a, mm_token_type_ids=None, **kw):
        if mm_token_type_ids is None and input_ids is not None:  # substitution: what the processor returns
            mm_token_type_ids = (input_ids == self.config.image_token_id).long()
        return forward(self, input_ids, *a, mm_token_type_ids=mm_token_type_ids, **kw)

    M.Qwen3VLModel.forward = _with_token_types
    return processor_module, MMEBModel
