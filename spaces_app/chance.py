"""Chance level of every leaderboard column, computed from the gold the server holds.

TRIAD: the exact expected mAP of a uniformly random ranking of each query's pool (`random_map`, the function
`triad run`'s table and `triad audit` use: TRIAD eq. 2 with one tie group), averaged over the config's queries. ARK: a random ranking of
a subtype's gallery puts the one positive first with probability 1 / gallery size.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from triad_dataset.folder.audit import random_ap, random_map


@lru_cache(maxsize=4096)
def _random_ap(n_candidates: int, n_positives: int) -> float:
    """One query's chance AP (`random_ap`), cached; `random_map` averages it over a config's queries."""
    return random_ap(n_candidates, n_positives)


def triad_chance(gold: Any) -> dict[str, float]:
    """config -> mean over its queries of the random-ranking AP (queries without a positive count as 0, as in AP)."""
    return {
        config: random_map((len(r["candidate_ids"]), len(r["positive_ids"] or [])) for r in rows)
        for config, rows in gold.rows.items()
        if rows
    }


def ark_chance(gold: Any) -> dict[str, float]:
    """subtype -> chance Recall@1 = 1 / gallery size."""
    return {s: 1.0 / len(gold.galleries[s]) for s in gold.rows if gold.galleries.get(s)}


def ark_chance_by(gold: Any, axis: str) -> dict[str, float]:
    """Chance R@1 per knowledge domain (the macro average of its subtypes', as `metrics.scoring.score_ark` averages
    a domain) or per reasoning skill (pooled over the queries carrying the skill, as scored)."""
    from ark_dataset import names as ark_names

    per_subtype = ark_chance(gold)
    groups: dict[str, list[float]] = {}
    if axis == "domain":
        for s, value in per_subtype.items():
            groups.setdefault(ark_names.SUBTYPE_DOMAIN[s], []).append(value)
    elif axis == "reasoning_skill":
        for s, value in per_subtype.items():
            for row in gold.rows[s]:
                for skill in row.get("reasoning_skills") or []:
                    groups.setdefault(str(skill), []).append(value)
    else:
        raise ValueError(f"axis must be 'domain' or 'reasoning_skill', not {axis!r}")
    return {g: sum(v) / len(v) for g, v in groups.items()}
