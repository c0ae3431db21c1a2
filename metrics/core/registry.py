"""Metric names resolved through one dict, like ranx: ``"ndcg@10"`` -> the nDCG kernel with k=10.

The dict keys build the error message, so an unknown name lists every valid one.

>>> from metrics.core.ranking import rank_scores
>>> r = rank_scores([[0.3, 0.2, 0.1]], [[0, 0, 1]])
>>> {name: values.tolist() for name, values in compute(r, ["map", "ndcg@2", "recall@3"]).items()}
{'map': [0.3333333333333333], 'ndcg@2': [0.0], 'recall@3': [1.0]}
>>> resolve("ndgc@10")
Traceback (most recent call last):
...
ValueError: unknown metric 'ndgc@10'; valid: map, top1_hit, mrr, recall@<k>, precision@<k>, ndcg@<k>, hit@<k>
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial

import numpy as np

from metrics.core import ark, kernels
from metrics.core.ranking import Ranked


@dataclass(frozen=True)
class MetricSpec:
    """A registered metric family: its per-query kernel and whether the name carries a cut-off ``@k``."""

    kernel: Callable[..., np.ndarray]
    takes_k: bool


# TRIAD / generic score-matrix metrics (paper B.1); every kernel takes a `Ranked` value.
METRICS: dict[str, MetricSpec] = {
    "map": MetricSpec(kernels.average_precision, False),
    "top1_hit": MetricSpec(kernels.top1_hit, False),
    "mrr": MetricSpec(kernels.reciprocal_rank, False),
    "recall": MetricSpec(kernels.recall_at_k, True),
    "precision": MetricSpec(kernels.precision_at_k, True),
    "ndcg": MetricSpec(kernels.ndcg_at_k, True),
    "hit": MetricSpec(kernels.hit_at_k, True),
}
# ARK metrics from the rank of the single positive; every kernel takes an int array of 1-based ranks.
ARK_METRICS: dict[str, MetricSpec] = {
    "recall": MetricSpec(ark.recall_at_rank, True),
    "ndcg": MetricSpec(ark.ndcg_at_rank, True),
    "mrr": MetricSpec(ark.mrr_at_rank, False),
}


def _valid_names(registry: Mapping[str, MetricSpec]) -> str:
    return ", ".join(f"{key}@<k>" if spec.takes_k else key for key, spec in registry.items())


def resolve(name: str, registry: Mapping[str, MetricSpec] = METRICS) -> Callable[..., np.ndarray]:
    """The per-query kernel for a metric name such as ``"map"`` or ``"ndcg@10"`` (k bound)."""
    if not isinstance(name, str):
        raise ValueError(f"metric names are strings, got {name!r}; valid: {_valid_names(registry)}")
    family, sep, k_text = name.partition("@")
    spec = registry.get(family)
    if spec is None or bool(sep) != spec.takes_k:
        raise ValueError(f"unknown metric {name!r}; valid: {_valid_names(registry)}")
    if not spec.takes_k:
        return spec.kernel
    if not k_text.isdigit() or int(k_text) < 1:
        raise ValueError(f"metric {name!r}: the cut-off after '@' must be a positive integer")
    return partial(spec.kernel, k=int(k_text))


def compute(ranked: Ranked, names: Iterable[str]) -> dict[str, np.ndarray]:
    """Per-query values of every named metric over one `Ranked` value."""
    return {name: resolve(name)(ranked) for name in names}


def compute_ark(ranks: np.ndarray, names: Iterable[str]) -> dict[str, np.ndarray]:
    """Per-query values of every named ARK metric from validated 1-based positive ranks.

    >>> {k: v.tolist() for k, v in compute_ark(np.array([2]), ["recall@1", "ndcg@5", "mrr"]).items()}
    {'recall@1': [0.0], 'ndcg@5': [0.6309297535714575], 'mrr': [0.5]}
    """
    return {name: resolve(name, ARK_METRICS)(ranks) for name in names}
