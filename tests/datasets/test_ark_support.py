"""Shared, cached builds of the ARK mini edition for the ARK test modules (one build per test session)."""

from __future__ import annotations

import functools

from ark_dataset.generators.base import SubtypeBuild
from ark_dataset.mini import build_subtype


@functools.cache
def mini_build(subtype: str) -> SubtypeBuild:
    """The seed-0 build of one generated subtype (callers must not mutate it)."""
    return build_subtype(subtype, seed=0)


def cached_build_subtype(subtype: str, *, seed: int = 0, **kwargs) -> SubtypeBuild:
    """Drop-in for `ark_dataset.mini.build_subtype` that reuses the seed-0 builds."""
    return mini_build(subtype) if seed == 0 and not kwargs else build_subtype(subtype, seed=seed, **kwargs)
