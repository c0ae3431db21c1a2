"""Test doubles kept out of the product code paths: tiny random models, fixture-model writers and their entries.

Like mteb's `mteb/mocks/`, this package ships so that the reference drivers (benchmarks/reference/), the Space's
offline check and CPU CI can build the same tiny models the tests use. No product loader branches on a tiny model:
the tiny entries come in through the `triad.models` entry-point group (`entries`), and the `tiny` model and
captioner families are this package's modules.

    tiny              tiny CLIP / SigLIP / Qwen2-VL / Qwen3-VL built in memory, their folder writers, the tiny family
    tiny_text         tiny text checkpoints (Qwen3, XLM-R, Llama-3.1, MetaCLIP 2) written as model folders
    tiny_reasoning    tiny UME-R1 Gen and Embed-RL + T-CoT: generation configs, checkpoint writer, loader
    tiny_captioners   the tiny captioner and rewriter
    entries           the `tiny-random-*` registry entries (the entry point)
"""

from model_adapters.mocks import tiny_reasoning as _tiny_reasoning  # noqa: F401  (serves the tiny generation configs)
