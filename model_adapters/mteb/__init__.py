"""TRIAD and ARK as mteb tasks, mteb models in `triad run`, and results in mteb's format (the `mteb` extra).

Nothing outside this package imports it: `import model_adapters.mteb` is the user asking for mteb.

>>> import mteb  # doctest: +SKIP
>>> from model_adapters.mteb import triad_tasks  # doctest: +SKIP
>>> mteb.evaluate(model, tasks=triad_tasks("demo_output/triad"))  # doctest: +SKIP
"""

from __future__ import annotations

from model_adapters.mteb.encoder import as_mteb_encoder
from model_adapters.mteb.tasks import ark_tasks, triad_tasks

__all__ = ["ark_tasks", "as_mteb_encoder", "triad_tasks"]
