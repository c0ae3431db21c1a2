"""How one value is shown on the Space's pages: numbers rounded as the paper does, ARK group labels, bare figures.

Shared by the tables (spaces_app/views.py) and the plots (spaces_app/plots.py). No Gradio here.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DECIMALS = 3  # paper Table 2 reports mAP to three decimals
# Short column labels for the ARK tables (display only; the data keys come from ark_dataset/names.py).
ARK_DOMAIN_LABELS = {
    "visual_cognition": "Visual Cognition",
    "natural_science": "Natural Science",
    "formal_science": "Formal Science",
    "humanities_social_science": "Humanities & Social",
    "engineering_technology": "Engineering & Tech",
}


def rounded(x: float | None) -> float | None:
    """``x`` to `DECIMALS` places; None for a missing or non-finite value.

    >>> rounded(0.12345), rounded(float("nan")), rounded(None)
    (0.123, None, None)
    """
    return None if x is None or not math.isfinite(x) else round(float(x), DECIMALS)


def ark_label(key: str) -> str:
    """The column label of an ARK domain, reasoning skill or subtype key.

    >>> ark_label("natural_science"), ark_label("spatial_reasoning")
    ('Natural Science', 'spatial reasoning')
    """
    return ARK_DOMAIN_LABELS.get(key, key.replace("_", " "))


def figure(width: float, height: float) -> tuple[Figure, Axes]:
    """A matplotlib Figure with one Axes, outside pyplot's global registry (nothing to close, thread-safe)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    return fig, fig.subplots()
