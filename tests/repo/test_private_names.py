"""No product module uses another project module's private (`_name`) names: a helper another module needs is public.

Checked statically with `ast`: `from pkg.mod import _name`, `mod._name` where `mod` (or `pkg.mod`) was bound by
an import to a project module, and a private module (`pkg._util`) imported from outside the package `pkg`. Only the project's own modules count: a third party's private name (argparse's
`_SubParsersAction`) is that project's business, not a seam of this one.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ("model_adapters", "metrics", "triad_dataset", "ark_dataset", "spaces_app", "triad_cli")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(root: Path, dotted: str) -> bool:
    base = root.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module an ImportFrom names, relative imports resolved against `module`."""
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def _dotted(node: ast.expr) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"]; None for anything but names and attributes."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else [*base, node.attr]
    return None


def _outside_owner(module: str, target: str) -> bool:
    """Whether `module` imports the private module `target` (e.g. pkg._util) from outside the package owning it."""
    parts = target.split(".")
    private = [i for i, part in enumerate(parts) if _private(part)]
    if not private:
        return False
    owner = ".".join(parts[: private[0]])
    return module != owner and not module.startswith(owner + ".")


def _imports(root: Path, module: str, is_package: bool, tree: ast.AST) -> tuple[list[str], dict[str, str]]:
    """(`line: from M import _name` findings, local name -> the project module an import bound it to)."""
    found, bound = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(module, is_package, node)
            if not _is_module(root, source):
                continue
            if _outside_owner(module, source):
                found.append(f"{node.lineno}: from {source} import ...")
            for alias in node.names:
                target = f"{source}.{alias.name}"
                if _is_module(root, target):  # a submodule: private to the package that owns it
                    bound[alias.asname or alias.name] = target
                    if _outside_owner(module, target):
                        found.append(f"{node.lineno}: from {source} import {alias.name}")
                elif _private(alias.name):
                    found.append(f"{node.lineno}: from {source} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _is_module(root, alias.name) and _outside_owner(module, alias.name):
                    found.append(f"{node.lineno}: import {alias.name}")
                bound[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
    return found, bound


def _attributes(root: Path, module: str, tree: ast.AST, bound: dict[str, str]) -> list[str]:
    """`line: M._name` for each private attribute of another project module reached through a bound name."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        chain = _dotted(node.value)
        if chain is None or chain[0] not in bound:
            continue
        target = ".".join([bound[chain[0]], *chain[1:]])
        if target != module and _is_module(root, target):
            found.append(f"{node.lineno}: {target}.{node.attr}")
    return found


def private_uses(root: Path, packages: tuple[str, ...]) -> list[str]:
    """`file:line: what` for each use of another project module's private name in `packages` under `root`."""
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            module = _module_name(root, path)
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            imports, bound = _imports(root, module, path.name == "__init__.py", tree)
            where = path.relative_to(root).as_posix()
            found += [f"{where}:{use}" for use in [*imports, *_attributes(root, module, tree, bound)]]
    return found


def test_the_packages_use_no_private_name_of_another_module() -> None:
    assert private_uses(ROOT, CHECKED) == []


def test_private_uses_are_found_in_a_toy_tree(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/low.py": "_x = 1\ny = 2\n\ndef _f():\n    return _x\n",
        "pkg/sub/__init__.py": "from .. import low\n",
        "pkg/sub/a.py": """
            import argparse
            import pkg.low
            import pkg.low as lo
            from pkg import low
            from pkg.low import _f, y
            from ..low import _x as renamed

            def g():
                from pkg.low import _x
                return pkg.low._x, lo._f, low._x, low.y, argparse._SubParsersAction, pkg.low.__name__
            """,
        "pkg/sub/b.py": "import json\n\nx = json._default_encoder\n",
        "pkg/sub/_util.py": "",
        "pkg/sub/c.py": "from pkg.sub._util import *\nfrom . import _util\n",
        "pkg/d.py": "import pkg.sub._util\nfrom pkg.sub._util import *\nfrom pkg.sub import _util\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    assert sorted(private_uses(tmp_path, ("pkg",))) == sorted(
        [
            "pkg/sub/a.py:6: from pkg.low import _f",
            "pkg/sub/a.py:7: from pkg.low import _x",
            "pkg/sub/a.py:10: from pkg.low import _x",
            "pkg/sub/a.py:11: pkg.low._x",
            "pkg/sub/a.py:11: pkg.low._f",
            "pkg/sub/a.py:11: pkg.low._x",
            "pkg/d.py:1: import pkg.sub._util",
            "pkg/d.py:2: from pkg.sub._util import ...",
            "pkg/d.py:3: from pkg.sub import _util",
        ]
    )
