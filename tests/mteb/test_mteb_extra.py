"""The `mteb` extra never brings torchvision (its import breaks transformers here): the installed requirement
closure of the extra, read from setup.cfg and each installed distribution's metadata, does not contain it."""

from __future__ import annotations

import configparser
import importlib.util
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]


def _extra(name: str) -> list[Requirement]:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    lines = cfg["options.extras_require"][name].splitlines()
    return [Requirement(line) for line in (raw.strip() for raw in lines) if line and not line.startswith("#")]


def _applies(req: Requirement, extras: set[str]) -> bool:
    return req.marker is None or any(req.marker.evaluate({"extra": e}) for e in {"", *extras})


def _closure(roots: list[Requirement]) -> dict[str, str]:
    """Every distribution required (installed or not) -> the one that requires it, through installed metadata."""
    seen: dict[str, str] = {}
    todo = [(r, set(), "setup.cfg") for r in roots]
    while todo:
        req, parent_extras, via = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen or not _applies(req, parent_extras):
            continue
        seen[name] = via
        try:
            requires = metadata.requires(req.name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [(Requirement(r), set(req.extras), req.name) for r in requires]
    return seen


def test_the_mteb_extra_closure_has_no_torchvision():
    if importlib.util.find_spec("mteb") is None:
        pytest.skip("the mteb extra is not installed")
    closure = _closure(_extra("mteb"))
    assert "mteb" in closure and "torch" in closure  # the walk did reach mteb's own requirements
    assert "torchvision" not in closure, f"torchvision comes in through {closure['torchvision']}"
    assert importlib.util.find_spec("torchvision") is None
    assert "torchvision" in _closure([Requirement("mteb[image]")])  # the walk sees it where an extra asks for it
