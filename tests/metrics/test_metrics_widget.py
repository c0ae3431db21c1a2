"""The metric widgets (`metrics/*/app.py` via `metrics/widget.py`) forward JSON input to the module's compute."""

from __future__ import annotations

from pathlib import Path

import pytest

from metrics.widget import build_widget, compute_from_json

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def triad_map():
    evaluate = pytest.importorskip("evaluate")  # imported here: it imports torch and transformers
    return evaluate.load(str(ROOT / "metrics" / "triad_map"))


def test_widget_returns_the_module_result(triad_map) -> None:
    out = compute_from_json(triad_map, "[[0.9, 0.2, 0.4]]", "[[1, 1, 0]]", '{"ties": "stable"}')
    assert out == triad_map.compute(predictions=[[0.9, 0.2, 0.4]], references=[[1, 1, 0]])
    assert out["map"] == pytest.approx((1 + 2 / 3) / 2, abs=1e-12)


def test_widget_reports_bad_input_as_a_message(triad_map) -> None:
    assert compute_from_json(triad_map, "[[0.9, 0.2]]", "[[0, 0]]") == {
        "error": "query 0: has no positive candidate (AP is undefined)"
    }
    assert compute_from_json(triad_map, "[[0.9]]", "", "") == {"error": "references: required"}
    assert compute_from_json(triad_map, "[[0.9]]", "[[1]]", "[1]") == {
        "error": "keyword arguments: must be a JSON object"
    }


def test_widget_builds_with_the_installed_gradio(triad_map) -> None:
    import gradio as gr

    demo = build_widget(triad_map, ("[[0.9, 0.1]]", "[[1, 0]]", ""))
    assert isinstance(demo, gr.Interface) and demo.title == triad_map.name
