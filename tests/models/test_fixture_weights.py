"""Every reference fixture is made on tiny weights whose attention is far from uniform.

With transformers' default init (std 0.02) a tiny model's attention is near uniform, so a wrong position or mask
rule moves its vectors by less than a reference test can tell (tests/fixture_mutations.py). Each fixture writer
(`tests/doubles/`, named by the fixture's NOTE.md) draws its linear, convolution and embedding weights with
std 0.2 (`tiny.CHAT_INIT_RANGE`) and keeps its norm layers' weights at 1. `WRITERS` maps every folder of
tests/fixtures/ to the models its writer builds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.doubles import tiny, tiny_text

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _chat(kind: str) -> Callable[[], Any]:
    return lambda: tiny.TINY_CHAT_CHECKPOINTS[kind](0)[0]


# fixture -> the models its writer builds (seed 0 unless its NOTE.md says otherwise)
WRITERS: dict[str, tuple[Callable[[], Any], ...]] = {
    "bge-m3": (lambda: tiny_text.tiny_xlmr()[0],),
    "bge-reranker-v2-m3": (lambda: tiny_text.tiny_xlmr_reranker()[0],),
    "bge-vl": (lambda: tiny.tiny_clip(0)[0],),
    "diver-retriever": (lambda: tiny_text.tiny_qwen3()[0],),
    "dual_tower": (
        lambda: tiny.tiny_clip(0)[0],
        lambda: tiny.tiny_siglip(0)[0],
        lambda: tiny.tiny_siglip2(0)[0],
        lambda: tiny.tiny_siglip2_naflex(0)[0],
    ),
    "embed_rl": (_chat("embed-rl"),),
    "embed_rl_tcot": (_chat("embed-rl"), lambda: tiny.build_tiny_qwen3_vl(1)[0]),  # the T-CoT generator, seed 1
    "lamra_ret": (_chat("lamra"),),
    "metaclip-2": (lambda: tiny_text.tiny_metaclip_2()[0],),
    "ops_mm_embedding_v1": (_chat("ops-mm"),),
    "qwen3-embedding": (lambda: tiny_text.tiny_qwen3()[0],),
    "qwen3_vl_embedding": (lambda: tiny.tiny_qwen3_vl(0)[0],),
    "qwen3_vl_reranker": (lambda: tiny.tiny_qwen3_vl(0)[0],),
    "reasonir": (lambda: tiny_text.tiny_llama()[0],),
    "rzenembed": (_chat("rzenembed"),),
    "ume_r1_disc": (_chat("ume-r1"),),
    "ume_r1_gen": (_chat("ume-r1"),),
    "ume_r1_tail": (_chat("ume-r1"),),
    "vlm2vec": (lambda: tiny.tiny_qwen2_vl(0)[0],),
    "vlm2vec_v1": (lambda: tiny.tiny_qwen2_vl(0)[0],),
}
STD = (0.15, 0.25)  # around tiny.CHAT_INIT_RANGE; a matrix of 32 draws estimates its std within about 12 %
NORM_WEIGHT = (0.9, 1.1)


def weight_scale(model: Any) -> tuple[dict[str, float], dict[str, float]]:
    """(std of every linear, convolution and embedding weight; mean of every norm layer's weight) by name."""
    import torch

    kinds = (torch.nn.Linear, torch.nn.Conv2d, torch.nn.Conv3d, torch.nn.Embedding)
    stds, norms = {}, {}
    for name, module in model.named_modules():
        weight = getattr(module, "weight", None)
        if weight is None:
            continue
        if isinstance(module, kinds):
            stds[name] = float(weight.detach().double().std())
        elif "norm" in type(module).__name__.lower():
            norms[name] = float(weight.detach().double().mean())
    return stds, norms


def test_every_fixture_has_its_writer_here():
    assert set(WRITERS) == {path.name for path in FIXTURES.iterdir() if path.is_dir()}


CASES = [
    pytest.param(
        name,
        index,
        id=f"{name}-{index}",
    )
    for name, builders in sorted(WRITERS.items())
    for index in range(len(builders))
]


@pytest.mark.parametrize(("name", "index"), CASES)
def test_fixture_weights_have_std_0_2_and_norms_at_1(name, index):
    stds, norms = weight_scale(WRITERS[name][index]())
    assert stds and norms, name
    off = {k: round(v, 3) for k, v in stds.items() if not STD[0] <= v <= STD[1]}
    assert not off, (name, off)
    assert all(NORM_WEIGHT[0] <= v <= NORM_WEIGHT[1] for v in norms.values()), (name, norms)
