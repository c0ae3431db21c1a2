"""Test doubles: tiny random models, fixture-model writers, small TRIAD and ARK folders and their entries.

They live with the tests, never in the product packages. The tiny model and captioner families and the
`tiny-random-*` entries reach the product through the public `triad.models` entry-point group, as a third party's
would: `declare` puts a small distribution declaring `entries:rows` on the path of the test session and of the
processes it starts (tests/conftest.py; the benchmark scripts that run tiny models call it too).

    tiny              tiny CLIP / SigLIP / Qwen2-VL / Qwen3-VL built in memory, their folder writers, the tiny family
    tiny_text         tiny text checkpoints (Qwen3, XLM-R, Llama-3.1, MetaCLIP 2) written as model folders
    tiny_reasoning    tiny UME-R1 Gen and Embed-RL + T-CoT: generation configs, checkpoint writer, loader
    tiny_captioners   the tiny captioner and rewriter
    entries           the tiny families and the `tiny-random-*` entries, the rows of the entry point
    declare           the small distribution that declares the entry point
    folders           tiny hand-made TRIAD and ARK folders and a hashing encoder, for the runner's tests
    space_runs        synthetic gold folders and run folders for the Space's tests
"""
