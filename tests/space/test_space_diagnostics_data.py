"""The Diagnostics tab is built from one declaration (`spaces_app.diagnostics.DIAGNOSTICS`): its components, the
handler's outputs and the handler's values line up one to one, and a new declaration is a new panel."""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd
import pytest
from matplotlib.figure import Figure

from spaces_app import app, diagnostics, handlers
from spaces_app.board import Leaderboard
from spaces_app.settings import Settings
from spaces_app.submit import submit_run_dir
from tests.doubles import space_runs as testing
from triad_dataset.contract import names as n

EXTRA = diagnostics.Diagnostic(
    "Configs scored (a test panel)",
    diagnostics.TABLE,
    lambda sub, chance: pd.DataFrame({"Config": sorted(sub["scores"])}),
    elem_id="test-panel",
)


@pytest.fixture(scope="module")
def lb(tmp_path_factory: pytest.TempPathFactory) -> Leaderboard:
    root = tmp_path_factory.mktemp("diagnostics_data")
    tables = testing.triad_tables(6, 20, seed=3)
    testing.write_triad_gold(root / "triad", tables, 20)
    run = testing.write_run(root / "run", tables, testing.skilled_rankings(tables, 1.0, seed=4))
    db = root / "space.sqlite"
    assert submit_run_dir(db, {"triad": root / "triad"}, run, model_name="m", family="vlm").accepted
    return Leaderboard(Settings(root / "triad", root / "no-ark", db, None, 0, "127.0.0.1"))


def _panels(demo: gr.Blocks) -> list[Any]:
    """The outputs of the Diagnostics picker's event."""
    (event,) = [fn for fn in demo.fns.values() if fn.name == "diagnostics"]
    return list(event.outputs)


def _label(component: Any, declared: diagnostics.Diagnostic) -> str:
    return component.parent.label if declared.folded else component.label


def _check(declared: tuple[diagnostics.Diagnostic, ...], panels: list[Any], values: tuple[Any, ...], sub: Any) -> None:
    assert len(declared) == len(panels) == len(values)
    for d, component, value in zip(declared, panels, values, strict=True):
        assert isinstance(component, gr.Plot if d.kind == diagnostics.PLOT else gr.Dataframe), d.label
        assert _label(component, d) == d.label and (component.elem_id or "") == d.elem_id
        if d.kind == diagnostics.PLOT:
            assert value is None or isinstance(value, Figure), d.label
        else:
            assert isinstance(value, pd.DataFrame) and value.equals(d.value(sub, {})), d.label


def test_declaration_components_and_handler_line_up(lb: Leaderboard) -> None:
    declared = diagnostics.DIAGNOSTICS
    panels = _panels(app.layout(lb))
    sid = lb.all_subs("triad")[0]["id"]
    values = handlers.diagnostics(lb, sid)
    _check(declared, panels, values, lb.by_id(sid))
    assert any(isinstance(v, Figure) for v in values) and any(isinstance(v, pd.DataFrame) and len(v) for v in values)
    empty = handlers.diagnostics(lb, "no such id")  # nothing picked: every panel empty, still one value each
    assert len(empty) == len(declared) and all(v is None or v.empty for v in empty)
    assert [d.label for d in declared].count("Per-hop I2C (other-hop positives stay in place)") == 1


def test_adding_a_declaration_adds_a_panel(lb: Leaderboard, monkeypatch: pytest.MonkeyPatch) -> None:
    before = len(diagnostics.DIAGNOSTICS)  # one panel each (the test above)
    monkeypatch.setattr(diagnostics, "DIAGNOSTICS", (*diagnostics.DIAGNOSTICS, EXTRA))
    panels = _panels(app.layout(lb))
    assert len(panels) == before + 1 and panels[-1].label == EXTRA.label and panels[-1].elem_id == "test-panel"
    sub = lb.all_subs("triad")[0]
    values = handlers.diagnostics(lb, sub["id"])
    _check(diagnostics.DIAGNOSTICS, panels, values, lb.by_id(sub["id"]))
    assert values[-1]["Config"].tolist() == sorted(n.TASK_CONFIGS)
