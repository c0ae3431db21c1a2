"""ARK retrieval metrics: Recall@1/5/10 and nDCG@5/10/20 (binary gains), one positive per query (ARK paper §4).

An `evaluate` metric module. It only forwards to `metrics.core.api.ark_scores`, the one implementation shared with
the ARK runner and leaderboard.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import datasets
import evaluate

try:  # indented, so that evaluate never tells a user to `pip install metrics` (another package)
    from metrics.core.api import ark_scores
except ImportError as exc:  # the Space folder of `python -m metrics.space_folder` carries its own copy of the code
    raise ImportError(
        "ark_retrieval needs the code of the triad-benchmark project: load the folder that "
        "`python -m metrics.space_folder ark_retrieval --out DIR` writes (it carries that code), or install the project"
    ) from exc

_CITATION = """\
@article{ark2026,
  title   = {ARK: A Dual-Axis Multimodal Retrieval Benchmark along Reasoning and Knowledge},
  year    = {2026},
  note    = {the ARK paper; see the project README for the full reference}
}
"""

_DESCRIPTION = """\
ARK retrieval metrics over a candidate gallery with exactly one positive per query: Recall@1 (the primary metric),
Recall@5, Recall@10 and nDCG@5/10/20 with binary gains (nDCG@k = 1/log2(rank + 1) when the positive ranks within
the first k). Optional per-subtype values with their macro-average, and per-group values (e.g. cognitive demand or
reasoning skill; a query may belong to several groups).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `float`): one score per candidate, per query (higher is better); any number
        of candidates, which may differ between queries.
    references (`list` of `list` of `int`): 1 for the single positive candidate, 0 otherwise.
    subtypes (`list` of `str`, optional): the ARK subtype of every query (e.g. "metro"); adds `per_subtype`
        ({subtype: metrics and n_queries}) and `macro` (unweighted mean over the subtypes present).
    groups (`list` of `str` or `list` of `list` of `str`, optional): group label(s) per query; adds `per_group`.
    ties (`str`, defaults to "stable"): "stable" breaks exact score ties by candidate position; "expected" averages
        over uniformly random orderings inside tied groups.
    return_per_query (`bool`, defaults to False): adds `per_query` ({metric: list of per-query values}).
Returns:
    recall@1, recall@5, recall@10, ndcg@5, ndcg@10, ndcg@20 (`float`), plus the optional keys above.
Examples:
    >>> import evaluate
    >>> ark = evaluate.load("ark_retrieval")
    >>> out = ark.compute(predictions=[[0.9, 0.2, 0.4], [0.1, 0.8, 0.3]], references=[[0, 0, 1], [0, 1, 0]],
    ...                   subtypes=["metro", "comic"], groups=[["logical", "spatial"], ["logical"]])
    >>> out["recall@1"], round(out["ndcg@5"], 6), out["macro"]["recall@1"], out["per_group"]["logical"]["n_queries"]
    (0.5, 0.815465, 0.5, 2)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ArkRetrieval(evaluate.Metric):  # type: ignore[misc]  # evaluate ships no type hints
    """ARK Recall@k and nDCG@k with per-subtype macro-averages and group breakdowns."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("float64")),
                    "references": datasets.Sequence(datasets.Value("float64")),
                }
            ),
        )

    def _compute(
        self,
        predictions: Sequence[Sequence[float]],
        references: Sequence[Sequence[int]],
        subtypes: Sequence[str] | None = None,
        groups: Sequence[str | Sequence[str]] | None = None,
        ties: str = "stable",
        return_per_query: bool = False,
    ) -> dict[str, Any]:
        return ark_scores(
            predictions, references, subtypes=subtypes, groups=groups, ties=ties, return_per_query=return_per_query
        )
