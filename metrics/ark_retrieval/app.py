"""Space / local entry point: a widget for ARK retrieval (`python metrics/ark_retrieval/app.py`)."""

from pathlib import Path

import evaluate

from metrics.widget import build_widget

module = evaluate.load(str(Path(__file__).resolve().parent))
EXAMPLE = (
    "[[0.9, 0.2, 0.4], [0.1, 0.8, 0.3]]",
    "[[0, 0, 1], [0, 1, 0]]",
    '{"subtypes": ["metro", "comic"], "groups": [["logical", "spatial"], ["logical"]]}',
)
demo = build_widget(module, EXAMPLE)

if __name__ == "__main__":  # importing this file (e.g. a test collector) starts nothing
    demo.launch()
