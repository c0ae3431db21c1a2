"""TRIAD mAP: multi-positive mean average precision over fixed per-query candidate pools (TRIAD paper B.1).

An `evaluate` metric module. It only forwards to `metrics.core.api.triad_scores`, the one implementation used by the
TRIAD runner and leaderboard as well.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import datasets
import evaluate

try:  # indented, so that evaluate never tells a user to `pip install metrics` (another package)
    from metrics.core.api import triad_scores
except ImportError as exc:  # the Space folder of `python -m metrics.space_folder` carries its own copy of the code
    raise ImportError(
        "triad_map needs the code of the triad-benchmark project: load the folder that "
        "`python -m metrics.space_folder triad_map --out DIR` writes (it carries that code), or install the project"
    ) from exc

_CITATION = """\
@article{triad2026,
  title   = {TRIAD: Multimodal Retrieval across Abstraction, Constraints, and State},
  year    = {2026},
  note    = {arXiv:2611.12364}
}
"""

_DESCRIPTION = """\
TRIAD mAP scores rankings of a fixed candidate pool per query. AP_q = (1/|P_q|) sum_k Precision@k * rel_k over the
full ranking, where the divisor is the complete labeled positive count |P_q|; mAP is the mean over queries
(TRIAD paper, Appendix B.1). It also reports top1_hit and MRR, and optionally the typed-negative entry rate@k per
candidate role and the conflict-trap rates used by TRIAD's diagnostics.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `float`): one score per candidate, per query (higher is better). Pools may
        differ in length between queries.
    references (`list` of `list` of `int`): 1 if the candidate is a positive, else 0, aligned with predictions.
        Every query needs at least one positive.
    candidate_roles (`list` of `list` of `str`, optional): TRIAD role per candidate (positive, sibling,
        p_violation, n_violation, pn_violation, implicit_violation, visual, random, conflict_trap); adds
        `entry_rate@k`: {role: candidates of that role ranked <= k / candidates of that role}, pooled over queries.
    candidate_trap (`list` of `list` of `bool`, optional): conflict-trap flag per candidate; adds `trap_rate@k`
        (pooled) and `trap_query_share@k` (share of queries having a trap that rank one within the first k).
    k (`int`, defaults to 10): cut-off of the entry and trap rates.
    ties (`str`, defaults to "stable"): "stable" breaks exact score ties by candidate position; "expected" gives the
        exact expectation over uniformly random orderings inside tied groups (TRIAD paper eq. 2).
    return_per_query (`bool`, defaults to False): adds `per_query_ap`, a list with one AP per query.
    metrics (`list` of `str`, optional): extra metrics by name, e.g. ["ndcg@10", "recall@5"].
Returns:
    map (`float`), top1_hit (`float`), mrr (`float`), plus the optional keys above.
Examples:
    >>> import evaluate
    >>> triad_map = evaluate.load("triad_map")
    >>> triad_map.compute(predictions=[[0.9, 0.2, 0.4], [0.1, 0.8, 0.3]], references=[[1, 0, 1], [0, 0, 1]])
    {'map': 0.75, 'top1_hit': 0.5, 'mrr': 0.75}
    >>> out = triad_map.compute(
    ...     predictions=[[0.9, 0.7, 0.4, 0.1]], references=[[0, 1, 0, 1]],
    ...     candidate_roles=[["conflict_trap", "positive", "sibling", "positive"]],
    ...     candidate_trap=[[True, False, False, False]], k=2, return_per_query=True)
    >>> out["map"], out["entry_rate@2"], out["trap_query_share@2"], out["per_query_ap"]
    (0.5, {'sibling': 0.0, 'conflict_trap': 1.0}, 1.0, [0.5])
    >>> triad_map.compute(predictions=[[0.5, 0.5]], references=[[0, 1]], ties="expected")["map"]
    0.75
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class TriadMap(evaluate.Metric):  # type: ignore[misc]  # evaluate ships no type hints
    """TRIAD multi-positive mAP with top1_hit, MRR, typed-negative entry rates and conflict-trap rates."""

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
            reference_urls=["https://arxiv.org/abs/2611.12364"],
        )

    def _compute(
        self,
        predictions: Sequence[Sequence[float]],
        references: Sequence[Sequence[int]],
        candidate_roles: Sequence[Sequence[str]] | None = None,
        candidate_trap: Sequence[Sequence[bool]] | None = None,
        k: int = 10,
        ties: str = "stable",
        return_per_query: bool = False,
        metrics: Sequence[str] = (),
    ) -> dict[str, Any]:
        return triad_scores(
            predictions,
            references,
            candidate_roles=candidate_roles,
            candidate_trap=candidate_trap,
            k=k,
            ties=ties,
            return_per_query=return_per_query,
            metrics=metrics,
        )
