"""A small Gradio widget for the metric modules' `app.py` (evaluate's own `launch_gradio_widget` needs gradio < 4).

Predictions, references and keyword arguments are typed as JSON; the widget forwards them to the module's
`compute` and shows the result (or the `ValueError` message of bad input) as JSON.
"""

from __future__ import annotations

import json
from typing import Any


def compute_from_json(module: Any, predictions: str, references: str, kwargs: str = "") -> dict[str, Any]:
    """Parse the three JSON fields and run `module.compute`; user errors come back as {"error": message}.

    >>> class Echo:
    ...     def compute(self, predictions, references, **kw):
    ...         return {"n": len(predictions), **kw}
    >>> compute_from_json(Echo(), "[[0.9, 0.1]]", "[[1, 0]]", '{"k": 5}')
    {'n': 1, 'k': 5}
    >>> compute_from_json(Echo(), "[[0.9", "[[1, 0]]")["error"].startswith("predictions: not valid JSON")
    True
    """
    parsed: dict[str, Any] = {}
    for name, text, default in (
        ("predictions", predictions, None),
        ("references", references, None),
        ("keyword arguments", kwargs, {}),
    ):
        if not (text or "").strip():
            if default is None:
                return {"error": f"{name}: required"}
            parsed[name] = default
            continue
        try:
            parsed[name] = json.loads(text)
        except json.JSONDecodeError as exc:
            return {"error": f"{name}: not valid JSON ({exc})"}
    if not isinstance(parsed["keyword arguments"], dict):
        return {"error": "keyword arguments: must be a JSON object"}
    try:
        return module.compute(
            predictions=parsed["predictions"], references=parsed["references"], **parsed["keyword arguments"]
        )
    except (TypeError, ValueError) as exc:
        return {"error": str(exc)}


def build_widget(module: Any, example: tuple[str, str, str]) -> Any:
    """The Gradio interface (not launched): three JSON text boxes in, the result as JSON out."""
    import gradio as gr

    def run(predictions: str, references: str, kwargs: str) -> dict[str, Any]:
        return compute_from_json(module, predictions, references, kwargs)

    return gr.Interface(
        fn=run,
        inputs=[
            gr.Textbox(label="predictions (JSON: one list of candidate scores per query)", lines=3),
            gr.Textbox(label="references (JSON: one list of 0/1 labels per query)", lines=3),
            gr.Textbox(label="keyword arguments (JSON object, optional)", lines=2),
        ],
        outputs=gr.JSON(label="result"),
        examples=[list(example)],
        title=module.name,
        description=(module.description or "").strip().split("\n\n")[0],
        flagging_mode="never",
    )
