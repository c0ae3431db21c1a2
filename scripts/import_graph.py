"""The project's import graph: import cycles and imports that run up the layers.

    python scripts/import_graph.py                       # today's default layer order (below)
    python scripts/import_graph.py --layer triad_dataset.contract --layer triad_dataset.sources,triad_dataset.folder \\
        --layer triad_dataset.tracks ...                  # lowest layer first; a layer is comma-separated prefixes

Every `import` / `from ... import` statement of every project module is read with `ast` — at module level and
inside functions and classes alike (a deferred import is still a dependency), including relative imports.
`from pkg import name` counts as an import of the module `pkg.name` when that module exists, else of `pkg`.
Importing `a.b.c` also runs `a/__init__.py` and `a/b/__init__.py`; those implicit edges are left out, so a package
whose `__init__` re-exports its submodules does not show up as a cycle with each of them.

A module belongs to the layer of its longest matching prefix; modules in no layer are not layer-checked. Output:
one line per cycle (a strongly connected component, with one import per edge as `file:line`) and one per upward
import; the exit status is 1 when there is any, so a test can call `main()` once the layout is settled.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES: tuple[str, ...] = ("triad_dataset", "ark_dataset", "metrics", "model_adapters", "spaces_app", "triad_cli")
# The project's order, lowest first: triad_dataset's pipeline stages (its subpackages: contract -> sources and
# folder -> tracks -> editions -> its commands), then the other parts, each with its own commands on top of it;
# the `triad` dispatcher (triad_cli) sits above every part. The prefixes of one tuple form one layer
# (`triad_dataset` itself: its __init__ and data/).
DEFAULT_LAYERS: tuple[tuple[str, ...], ...] = (
    ("triad_dataset", "triad_dataset.contract"),
    ("triad_dataset.sources", "triad_dataset.folder"),
    ("triad_dataset.tracks",),
    ("triad_dataset.editions",),
    ("triad_dataset.commands",),
    ("ark_dataset",),
    ("ark_dataset.commands",),
    ("metrics",),
    # model_adapters' stages of a run, lowest first; the package itself (re-exporting `evaluate`), `api` and
    # `runner` sit on top of them, then its commands.
    ("model_adapters.protocol", "model_adapters.atomic"),
    ("model_adapters.planning",),
    ("model_adapters.families",),
    # the mteb extra (tasks, encoders both ways, results files) uses planning, families and metrics only
    ("model_adapters.mteb",),
    ("model_adapters.vectors",),
    ("model_adapters.generation",),
    ("model_adapters.models",),
    ("model_adapters.ranks",),
    ("model_adapters.results",),
    # what a run is made of: its settings, memo, models and encoder, results.json and console output, then the Run
    (
        "model_adapters.run.config",
        "model_adapters.run.clock",
        "model_adapters.run.memo",
        "model_adapters.run.encoder",
        "model_adapters.run.results_json",
        "model_adapters.run.console",
    ),
    ("model_adapters.run", "model_adapters.run.runner"),
    ("model_adapters.captioners",),
    ("model_adapters", "model_adapters.api", "model_adapters.runner"),
    ("model_adapters.commands", "model_adapters.captioners.commands"),
    ("spaces_app",),
    ("spaces_app.commands",),
    ("triad_cli",),
)
# The top-level packages in the same order: a module of one may import only its own package and those before it.
PACKAGE_ORDER: tuple[str, ...] = PACKAGES


@dataclass(frozen=True)
class Edge:
    """`source` imports `target` at `path:line`."""

    source: str
    target: str
    path: str
    line: int

    def where(self) -> str:
        return f"{self.path}:{self.line}"


def module_names(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of the given packages (tests and scripts are not modules)."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(node: ast.AST, module: str, is_package: bool, known: Mapping[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = _resolve(module, is_package, node)
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
    else:
        return []
    out = []
    for name in names:
        while name and name not in known:  # `import a.b.c` of a project module, or an attribute of one
            name = name.rpartition(".")[0]
        if name:
            out.append(name)
    return out


def import_edges(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> list[Edge]:
    """Every import between project modules, at any nesting level."""
    known = module_names(root, packages)
    edges = []
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            for target in _targets(node, module, is_package, known):
                if target != module:
                    edges.append(Edge(module, target, str(path.relative_to(root)), node.lineno))
    return edges


def cycles(edges: Sequence[Edge]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative), each sorted."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return sorted(found)


def layer_of(module: str, layers: Sequence[Sequence[str]]) -> int | None:
    """Index of the layer whose prefix matches ``module`` longest (None when no layer matches)."""
    best: tuple[int, int] | None = None
    for position, prefixes in enumerate(layers):
        for prefix in prefixes:
            matches = module == prefix or module.startswith(prefix + ".")
            if matches and (best is None or len(prefix) > best[0]):
                best = (len(prefix), position)
    return None if best is None else best[1]


def upward(edges: Sequence[Edge], layers: Sequence[Sequence[str]]) -> list[Edge]:
    """Imports from a lower layer into a higher one."""
    out = []
    for e in edges:
        low, high = layer_of(e.source, layers), layer_of(e.target, layers)
        if low is not None and high is not None and high > low:
            out.append(e)
    return out


def upward_packages(
    edges: Sequence[Edge], order: Sequence[str] = PACKAGE_ORDER, exceptions: frozenset[str] = frozenset()
) -> list[Edge]:
    """Imports from a module of one top-level package into a package later in ``order`` (the arrows a reader of the
    folders sees), whatever the finer layers say; modules in ``exceptions`` are not checked."""
    rank = {p: i for i, p in enumerate(order)}
    out = []
    for e in edges:
        low, high = rank.get(e.source.split(".")[0]), rank.get(e.target.split(".")[0])
        if e.source not in exceptions and low is not None and high is not None and high > low:
            out.append(e)
    return out


def report(edges: Sequence[Edge], layers: Sequence[Sequence[str]], *, check_packages: bool = False) -> list[str]:
    """One line per cycle and per upward import (between layers; with ``check_packages``, also between the
    top-level packages of PACKAGE_ORDER)."""
    lines = []
    by_pair = {(e.source, e.target): e for e in sorted(edges, key=lambda e: (e.path, e.line), reverse=True)}
    for component in cycles(edges):
        members = set(component)
        inner = [by_pair[(s, t)] for (s, t) in sorted(by_pair) if s in members and t in members]
        detail = "; ".join(f"{e.source} -> {e.target} ({e.where()})" for e in inner)
        lines.append(f"cycle of {len(component)}: {', '.join(component)}: {detail}")
    for e in sorted(upward(edges, layers), key=lambda e: (e.path, e.line)):
        lines.append(
            f"upward: {e.where()}: {e.source} (layer {layer_of(e.source, layers)}) imports {e.target} "
            f"(layer {layer_of(e.target, layers)})"
        )
    if check_packages:
        for e in sorted(upward_packages(edges), key=lambda e: (e.path, e.line)):
            lines.append(
                f"upward package: {e.where()}: {e.source} imports {e.target} (package order: "
                f"{' < '.join(PACKAGE_ORDER)})"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=str(ROOT), help="repository root")
    parser.add_argument("--package", action="append", help="a top-level package to read (repeatable)")
    parser.add_argument(
        "--layer", action="append", help="comma-separated module prefixes of one layer, lowest layer first (repeatable)"
    )
    args = parser.parse_args(argv)
    layers = (
        [tuple(p.strip() for p in spec.split(",") if p.strip()) for spec in args.layer]
        if args.layer
        else list(DEFAULT_LAYERS)
    )
    edges = import_edges(Path(args.root), args.package or PACKAGES)
    check_packages = not (args.layer or args.package)  # the project's package order; a custom run checks its own
    lines = report(edges, layers, check_packages=check_packages)
    for line in lines:
        print(line)
    modules = {e.source for e in edges} | {e.target for e in edges}
    packages = f", {len(upward_packages(edges))} between packages" if check_packages else ""
    print(
        f"{len(edges)} imports between {len(modules)} modules; {len(cycles(edges))} cycles, "
        f"{len(upward(edges, layers))} upward imports{packages}",
        file=sys.stderr,
    )
    return 1 if lines else 0


if __name__ == "__main__":
    raise SystemExit(main())
