"""scripts/import_graph.py finds cycles and upward imports (module-level, deferred and relative imports alike).

The project-wide check (no cycle, no upward import) runs on the real tree below.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("import_graph", ROOT / "scripts" / "import_graph.py")
import_graph = importlib.util.module_from_spec(_spec)
sys.modules["import_graph"] = import_graph  # dataclasses look their module up there
_spec.loader.exec_module(import_graph)


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def test_cycles_and_upward_imports_on_a_toy_package(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg import low  # a package re-exporting a submodule is no cycle\n",
            "pkg/low/__init__.py": "",
            "pkg/low/names.py": "X = 1\n",
            "pkg/low/a.py": "from . import b\n",
            "pkg/low/b.py": "def f():\n    from pkg.low.a import g  # deferred import: still an edge\n",
            "pkg/low/c.py": "import json\nfrom ..high import cli\n",
            "pkg/high/__init__.py": "",
            "pkg/high/cli.py": "from pkg.low.names import X\nimport pkg.low.c\n",
        },
    )
    edges = import_graph.import_edges(tmp_path, ["pkg"])
    assert import_graph.cycles(edges) == [["pkg.high.cli", "pkg.low.c"], ["pkg.low.a", "pkg.low.b"]]
    layers = [("pkg.low",), ("pkg.high",)]
    assert [(e.source, e.target, e.where()) for e in import_graph.upward(edges, layers)] == [
        ("pkg.low.c", "pkg.high.cli", "pkg/low/c.py:2")
    ]
    assert import_graph.layer_of("pkg.high.cli", [("pkg",), ("pkg.high",)]) == 1  # longest prefix wins
    assert import_graph.layer_of("other", layers) is None


def test_clean_tree_exits_zero(tmp_path: Path, capsys) -> None:
    _tree(tmp_path, {"pkg/__init__.py": "", "pkg/low.py": "", "pkg/high.py": "from pkg import low\n"})
    assert (
        import_graph.main(["--root", str(tmp_path), "--package", "pkg", "--layer", "pkg.low", "--layer", "pkg.high"])
        == 0
    )
    assert "1 imports between 2 modules; 0 cycles, 0 upward imports" in capsys.readouterr().err


def test_the_project_has_no_import_cycle_and_no_upward_import(capsys) -> None:
    """The layers, lowest first: triad_dataset's stages (contract; sources and folder; tracks; editions; its
    commands), ark_dataset (then its commands), metrics, model_adapters' stages (protocol; planning; families;
    vectors; generation; models; ranks; results; the run's parts: run.config, run.memo, run.encoder,
    run.results_json, run.console; run.runner; captioners; then the package's `api`, `runner` and `testing`; then
    its commands),
    spaces_app (then its commands), and the `triad` dispatcher triad_cli on top (scripts/import_graph.py
    DEFAULT_LAYERS); and between the top-level packages in that order, no import runs upward either."""
    assert import_graph.main(["--root", str(ROOT)]) == 0, capsys.readouterr().err
    assert capsys.readouterr().err.endswith("0 cycles, 0 upward imports, 0 between packages\n")


def test_a_package_importing_a_later_package_is_reported(tmp_path: Path) -> None:
    """`triad_dataset/commands.py` importing `ark_dataset` was the one upward arrow between packages;
    the package-level check names such an import whatever the finer layers say, except the dispatcher's alias."""
    _tree(
        tmp_path,
        {
            "low/__init__.py": "",
            "low/cli.py": "from high.main import main\n",
            "low/commands.py": "def f():\n    from high import x\n",
            "high/__init__.py": "",
            "high/x.py": "",
            "high/main.py": "from low import commands\n",
        },
    )
    edges = import_graph.import_edges(tmp_path, ["low", "high"])
    found = import_graph.upward_packages(edges, ("low", "high"), frozenset({"low.cli"}))
    assert [(e.source, e.target, e.where()) for e in found] == [("low.commands", "high.x", "low/commands.py:2")]


def test_the_triad_command_and_its_alias_register_every_part() -> None:
    """`triad` (triad_cli.main) registers every part: ARK's build kinds come from ark_dataset.commands, validate /
    publish from triad_cli.folders."""
    import argparse

    from triad_cli.main import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert {"build", "validate", "audit", "publish", "run", "caption", "space"} <= set(commands)
    kinds = next(a for a in commands["build"]._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert set(kinds) == {"mini", "full", "scaled", "ark", "ark-mini"}
    assert kinds["ark-mini"].get_default("handler").__module__ == "ark_dataset.commands"
    assert commands["validate"].get_default("handler").__module__ == "triad_cli.folders"


def test_triad_sources_and_folder_do_not_import_each_other() -> None:
    """The two stages that share a layer stay independent: where data comes from vs the built folder's files."""
    stages = ("triad_dataset.sources", "triad_dataset.folder")
    crossing = [
        (e.source, e.target, e.where())
        for e in import_graph.import_edges(ROOT, ["triad_dataset"])
        if {
            import_graph.layer_of(e.source, [(s,) for s in stages]),
            import_graph.layer_of(e.target, [(s,) for s in stages]),
        }
        == {0, 1}
    ]
    assert crossing == []


def test_no_triad_dataset_folder_holds_more_than_12_modules() -> None:
    """A folder of triad_dataset/ is one screen of names (`__init__.py` not counted)."""
    sizes = {
        str(d.relative_to(ROOT)): len([p for p in d.glob("*.py") if p.name != "__init__.py"])
        for d in [ROOT / "triad_dataset", *(ROOT / "triad_dataset").rglob("*")]
        if d.is_dir() and d.name != "__pycache__"
    }
    assert {d: n for d, n in sizes.items() if n > 12} == {}
    assert sizes["triad_dataset"] == 1  # commands.py


def test_a_space_submission_is_read_then_checked_one_way() -> None:
    """The Space's submission path imports one way: uploads, then ranking files, then the checks against the gold
    (which use the gold's pool index), then the flow in submit; none of them imports a later one."""
    order = (
        "spaces_app.refusal",
        "spaces_app.uploads",
        "spaces_app.ranking_files",
        "spaces_app.pools",
        "spaces_app.validation",
        "spaces_app.submit",
    )
    rank = {m: i for i, m in enumerate(order)}
    backwards = [
        (e.source, e.target, e.where())
        for e in import_graph.import_edges(ROOT, ["spaces_app"])
        if e.source in rank and e.target in rank and rank[e.target] > rank[e.source]
    ]
    assert backwards == []
