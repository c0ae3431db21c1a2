"""Space entry point: the standard evaluate metric widget for TRIAD mAP."""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(str(Path(__file__).resolve().parent))
launch_gradio_widget(module)
