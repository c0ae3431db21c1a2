"""The captioner and rewriter interfaces (a `typing.Protocol` each, mteb style: no base class, no registration)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class Captioner(Protocol):
    """Turns decoded-able image bytes (PNG/JPEG) into one caption each, in input order. An image that does not
    decode raises ValueError (the caller names the item)."""

    def caption(self, images: Sequence[bytes]) -> list[str]: ...


@runtime_checkable
class Rewriter(Protocol):
    """Turns query texts into rewritten query texts, one each, in input order."""

    def rewrite(self, queries: Sequence[str]) -> list[str]: ...
