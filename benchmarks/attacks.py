"""Doctored rankings built from an honest run, as an attacker of the Space's reproduction check would build them.

Each attack takes one query of the honest run — its ranked candidate ids, the model's scores in that order, and
which ids are positives — and returns a new order of the same ids. The submitted score vector stays the honest
run's sorted one, so the file still reads best-first. `benchmarks/oracle_false_pass.py` measures how often each
passes the check; tests/space/test_space_blends.py checks that none is verified.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np

from spaces_app.verify import TOLERANCE

Attack = Callable[[list[str], np.ndarray, np.ndarray, np.random.Generator], list[str]]


def _order(ids: Sequence[str], key: np.ndarray) -> list[str]:
    return [ids[i] for i in np.argsort(-key, kind="stable")]


def within_tolerance(
    ids: list[str], scores: np.ndarray, positive: np.ndarray, rng: np.random.Generator, reach: float = 0.98 * TOLERANCE
) -> list[str]:
    """Every positive moved above each negative the model scores at most ``reach`` higher."""
    return _order(ids, scores + reach * positive)


def beaten(scores: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """Negatives the model scores above some positive by more than the tolerance."""
    if not positive.any():
        return np.zeros_like(positive)
    return ~positive & (scores - scores[positive].min() > TOLERANCE)


def parked(budget: int) -> Attack:
    """Where at most ``budget`` negatives outscore a positive by more than the tolerance: positives first, those
    negatives parked just below the always-checked top 10, the rest in the model's order; elsewhere
    `within_tolerance`."""

    def attack(ids: list[str], scores: np.ndarray, positive: np.ndarray, rng: np.random.Generator) -> list[str]:
        above = beaten(scores, positive)
        if above.sum() > budget:
            return within_tolerance(ids, scores, positive, rng)
        first = [i for i, p in zip(ids, positive, strict=True) if p]
        park = [i for i, a in zip(ids, above, strict=True) if a]
        rest = [i for i, p, a in zip(ids, positive, above, strict=True) if not p and not a]
        cut = max(10 - len(first), 0)
        return first + rest[:cut] + park + rest[cut:]

    return attack


def oracle(ids: list[str], scores: np.ndarray, positive: np.ndarray, rng: np.random.Generator) -> list[str]:
    """Positives first, the rest in the model's order."""
    return [i for i, p in zip(ids, positive, strict=True) if p] + [
        i for i, p in zip(ids, positive, strict=True) if not p
    ]


def oracle_share(share: float) -> Attack:
    """`oracle` on a random ``share`` of the queries, the model's order on the others."""

    def attack(ids: list[str], scores: np.ndarray, positive: np.ndarray, rng: np.random.Generator) -> list[str]:
        return oracle(ids, scores, positive, rng) if rng.random() < share else list(ids)

    return attack


def moved_up(places: int) -> Attack:
    """Every positive moved ``places`` ranks up (best-ranked first)."""

    def attack(ids: list[str], scores: np.ndarray, positive: np.ndarray, rng: np.random.Generator) -> list[str]:
        out = list(ids)
        flags = list(positive)
        for i in range(len(out)):
            if flags[i]:
                j = max(i - places, 0)
                while j < i and flags[j]:
                    j += 1
                out.insert(j, out.pop(i))
                flags.insert(j, flags.pop(i))
        return out

    return attack


ATTACKS: Final[dict[str, Attack]] = {
    "positives first within the tolerance": within_tolerance,
    "positives first, up to 3 beating negatives parked below the top 10": parked(3),
    "positives first, up to 10 beating negatives parked below the top 10": parked(10),
    "wholesale oracle": oracle,
    "oracle on 30% of queries": oracle_share(0.3),
    "positives moved up 3 places": moved_up(3),
}


def perturbed(reach: float = TOLERANCE / 4) -> Attack:
    """Not an attack: the honest order re-sorted after uniform noise of at most ``reach`` per score (two scores move
    apart by at most twice that, under the tolerance, so order changes only between near-ties, in random
    directions) — what an honest bf16 GPU run submits."""

    def honest(ids: list[str], scores: np.ndarray, positive: np.ndarray, rng: np.random.Generator) -> list[str]:
        return _order(ids, scores + rng.uniform(-reach, reach, size=scores.size))

    return honest


def lowered(ids: list[str], scores: np.ndarray, positive: np.ndarray, rng: np.random.Generator) -> list[str]:
    """Every positive moved below each negative the model scores at most 0.98 of the tolerance lower: the other
    side of a compensated blend."""
    return _order(ids, scores - 0.98 * TOLERANCE * positive)


def compensated(boosted: str, configs: Sequence[str]) -> dict[str, Attack]:
    """One subset's positives moved up within the tolerance (`within_tolerance`), every other subset's moved down
    within it (`lowered`): a test pooled over subsets sees the two cancel."""
    return {c: within_tolerance if c == boosted else lowered for c in configs}


def honest(ids: list[str], scores: np.ndarray, positive: np.ndarray, rng: np.random.Generator) -> list[str]:
    """Not an attack: the model's own order."""
    return list(ids)


def apply(
    attack: Attack | Mapping[str, Attack],
    rankings: Mapping[str, Sequence[Mapping[str, Any]]],
    positives: Mapping[str, Mapping[str, set[str]]],
    seed: int = 0,
    only: Mapping[str, set[str]] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """{config: [{"query_id", "candidate_ids", "scores"}]} with every query re-ordered by ``attack``.

    ``rankings``: an honest run's rows per config (ids best-first with their scores); ``positives``: per config,
    query id -> positive ids; ``attack``: one for every config, or one per config; ``only``: per config, the
    queries attacked (the others keep the model's order). The score vectors stay as they were."""
    rng = np.random.default_rng(seed)
    out: dict[str, list[dict[str, Any]]] = {}
    for config, rows in rankings.items():
        chosen = attack.get(config, honest) if isinstance(attack, Mapping) else attack
        done = []
        for r in rows:
            ids = list(r["candidate_ids"])
            scores = np.asarray(r["scores"], dtype=np.float64)
            pos = np.array([c in positives[config][r["query_id"]] for c in ids], dtype=bool)
            picked = only is None or r["query_id"] in only.get(config, set())
            order = chosen(ids, scores, pos, rng) if picked else list(ids)
            done.append({"query_id": r["query_id"], "candidate_ids": order, "scores": list(r["scores"])})
        out[config] = done
    return out
