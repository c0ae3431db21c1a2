"""Write a metric module's folder as a self-contained Hugging Face Space: the project code it imports travels with it.

    python -m metrics.space_folder triad_map --out DIR      # then push DIR as the Space ORG/triad_map

The folder holds the module script, its card (`README.md`, the Space YAML), `app.py` (the widget), a
`requirements.txt` of packages on PyPI (the module folder's own), and one file per project module the script imports, named after its
dotted path (`metrics_core_api.py`). Their imports of each other become relative, and the script imports each one
on a line of its own (`from .metrics_core_api import ...`), the form `evaluate` copies beside a script it loads. So
`evaluate.load(DIR)` and `evaluate.load("ORG/triad_map")` work where `triad-benchmark` is not installed, and
`python app.py` runs the Space from the folder alone.

>>> flat_name("metrics.core.api")
'metrics_core_api'
"""

from __future__ import annotations

import argparse
import ast
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from metrics.install_evaluate import MODULES, module_path

ROOT: Final = Path(__file__).resolve().parents[1]
PROJECT: Final = ("metrics", "triad_dataset", "ark_dataset")  # what a metric module may import of the project
WIDGET: Final = "metrics.widget"


def flat_name(module: str) -> str:
    """The file stem a project module gets in the folder."""
    return module.replace(".", "_")


def _source(module: str) -> Path:
    """The file of a project module (a package's `__init__.py`)."""
    path = ROOT.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _is_module(name: str) -> bool:
    return name.split(".")[0] in PROJECT and _source(name).is_file()


def _imports(tree: ast.AST) -> Iterator[ast.ImportFrom]:
    """Every `from X import ...` of a project module in a file, at any depth (function bodies included)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in PROJECT for a in node.names):
            raise ValueError(f"line {node.lineno}: `import {node.names[0].name}` of the project; use `from ... import`")
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in PROJECT:
            yield node


def _targets(node: ast.ImportFrom) -> list[str]:
    """The project modules one import statement reads: the module itself, or submodules named in it."""
    base = node.module or ""
    subs = [f"{base}.{a.name}" for a in node.names if _is_module(f"{base}.{a.name}")]
    return subs if subs else [base]


def closure(modules: list[str]) -> list[str]:
    """The project modules the given ones import, themselves included, in a stable order."""
    seen: dict[str, None] = {}
    todo = list(modules)
    while todo:
        module = todo.pop(0)
        if module in seen:
            continue
        if not _is_module(module):
            raise ValueError(f"{module}: not a module of {', '.join(PROJECT)}")
        seen[module] = None
        todo += [t for node in _imports(ast.parse(_source(module).read_text(encoding="utf-8"))) for t in _targets(node)]
    return list(seen)


def _relative(node: ast.ImportFrom, prefix: str) -> str:
    """The statement rewritten to the flat files: `from .X_Y import a` or `from . import X_Y as b`."""
    base = node.module or ""
    parts = []
    plain = [a for a in node.names if not _is_module(f"{base}.{a.name}")]
    if plain:
        names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in plain)
        parts.append(f"from {prefix}{flat_name(base)} import {names}")
    for a in node.names:
        if _is_module(f"{base}.{a.name}"):
            flat = flat_name(f"{base}.{a.name}")
            parts.append(f"from {prefix} import {flat}" if prefix else f"import {flat}")
            parts[-1] += f" as {a.asname or a.name}"
    return "; ".join(parts)


def rewrite(text: str, prefix: str = ".") -> str:
    r"""`text` with every import of a project module pointing at the flat files.

    Args:
        text: a Python file's source.
        prefix: "." for a module loaded inside a package (the script and its files), "" for a script run directly.

    >>> print(rewrite("from metrics.core import kernels\nfrom metrics.core.ranking import Ranked"))
    from . import metrics_core_kernels as kernels
    from .metrics_core_ranking import Ranked
    """
    lines = text.splitlines(keepends=True)
    for node in sorted(_imports(ast.parse(text)), key=lambda n: n.lineno, reverse=True):
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
        if node.col_offset != len(indent) or lines[last][node.end_col_offset or 0 :].split("#")[0].strip():
            raise ValueError(f"line {node.lineno}: an import shares its line with other code; give it its own")
        lines[first : last + 1] = [indent + _relative(node, prefix) + "\n"]
    return "".join(lines)


def _script(name: str, vendored: list[str]) -> str:
    """The module script, rewritten, with the line per vendored file that makes `evaluate` copy it."""
    text = rewrite((Path(module_path(name)) / f"{name}.py").read_text(encoding="utf-8"))
    # no comment on these lines: evaluate reads text after an import as the URL of a file to fetch
    copied = "".join(f"from .{flat_name(m)} import __name__ as _{flat_name(m)}\n" for m in vendored)
    return (
        text.rstrip()
        + "\n\n\n# The project code above, one file each beside this script (evaluate copies them).\n"
        + copied
    )


def write_space(name: str, out_dir: str | Path, *, overwrite: bool = False) -> list[str]:
    """Write the Space folder of metric module `name` into `out_dir` (a temporary folder, then renamed).

    Returns its files. An existing `out_dir` is replaced only with `overwrite`.
    """
    out = Path(out_dir)
    if out.exists() and not overwrite:
        raise FileExistsError(f"{out}: already exists (pass --overwrite to replace it)")
    source = Path(module_path(name))
    script_imports = [t for n in _imports(ast.parse((source / f"{name}.py").read_text("utf-8"))) for t in _targets(n)]
    vendored = closure(script_imports)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        (tmp / f"{name}.py").write_text(_script(name, vendored), encoding="utf-8")
        for module in vendored:
            (tmp / f"{flat_name(module)}.py").write_text(rewrite(_source(module).read_text("utf-8")), encoding="utf-8")
        (tmp / f"{flat_name(WIDGET)}.py").write_text(_source(WIDGET).read_text("utf-8"), encoding="utf-8")
        (tmp / "app.py").write_text(rewrite((source / "app.py").read_text("utf-8"), prefix=""), encoding="utf-8")
        for card_or_requirements in ("README.md", "requirements.txt"):  # public packages only: nothing to rewrite
            shutil.copyfile(source / card_or_requirements, tmp / card_or_requirements)
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return sorted(p.name for p in out.iterdir())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", choices=MODULES, help="the metric module")
    parser.add_argument("--out", required=True, help="the Space folder to write")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out folder")
    args = parser.parse_args(argv)
    try:
        files = write_space(args.module, args.out, overwrite=args.overwrite)
    except FileExistsError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    print(
        f"{args.out}: {len(files)} files; push it as the Space ORG/{args.module}, then evaluate.load('ORG/{args.module}')"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
