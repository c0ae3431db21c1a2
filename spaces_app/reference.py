"""The leaderboard's own run of a model (its reference run) and the full check of a submission against it.

A sample of queries proves nothing against an attacker who doctors what a sample misses, so a checkable submission
is verified only against the leaderboard's own run of the model it names: one run per model identity and gold
(`RefSpec`), every query of every config, whole pools and galleries, through `triad run`'s code
(`spaces_app.reference_run`). What comparisons need is kept (`Reference`): per query the model's own value (TRIAD
AP, ARK positive rank) and its tie range; per config the score the board shows. `full_check` then requires

* every query's submitted AP inside the model's tie range (`reproduction.tie_range`), and
* per subset (TRIAD) or subtype (ARK), the favourable-end test at `ALPHA` (`reproduction.favourable_p`): each
  subset is tested on its own, so raising one subset while lowering the others cannot cancel out.

With m subsets an honest run fails some test with probability at most m x `ALPHA` (docs/space.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final

import numpy as np

from ark_dataset import names as ark_names
from spaces_app import reproduction
from spaces_app.legend import header
from triad_dataset.contract import names as triad_names

ALPHA: Final = reproduction.ALPHA  # per subset
MAX_LISTED: Final = 20  # queries outside their range kept in a result
FULL: Final = "full"  # the `kind` of a full check's result


@dataclass(frozen=True)
class RefSpec:
    """One model identity on one gold: what a reference run runs and what it is looked up by.

    ``revision`` is what the server loads: the registry's pinned revision for a registry entry, the Hub commit
    for a Hub id; ``recipe`` the input recipe a Hub id's run named ("" for a registry entry)."""

    benchmark: str
    gold_content: str
    spec: str
    revision: str
    variant: str = "full"
    recipe: str = ""

    @property
    def key(self) -> str:
        """A short stable key of the identity (24 hex)."""
        blob = json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:24]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RefSpec:
        return cls(**{k: str(data.get(k) or ("full" if k == "variant" else "")) for k in cls.__dataclass_fields__})


def registry_revision(spec: str) -> str | None:
    """The revision the registry pins for entry ``spec`` (None: not a registry entry here)."""
    try:
        from model_adapters.models.registry import find_entry
    except ImportError:
        return None
    found = find_entry(spec)
    return str(found[0].revision or "") if found is not None else None


def spec_for(benchmark: str, gold_content: str, verify_record: Mapping[str, Any]) -> RefSpec | None:
    """The reference run a checkable row is compared with (None: the row names nothing the server can run)."""
    spec = str(verify_record.get("spec") or "")
    if not spec or not gold_content:
        return None
    hub = "/" in spec
    revision = str(verify_record.get("revision") or "") if hub else registry_revision(spec)
    if revision is None:
        return None
    recipe = str(verify_record.get("recipe") or "") if hub else ""
    variant = str(verify_record.get("variant") or "full")
    return RefSpec(benchmark, gold_content, spec, revision, variant, recipe)


@dataclass
class Reference:
    """What a reference run keeps: per config the board's score, per query (own, low, high), and how it was made.

    ``scores[config]``: {"metric", "value", "lo", "hi", "n_queries"}; ``queries[config][query id]``: the model's
    own value (TRIAD AP, ARK positive rank) and the lowest and highest AP its tie range allows; ``meta``: the model
    identity loaded, the run's seconds, items and ``alike`` (per config, queries whose whole pool the model scores
    within the tolerance)."""

    spec: RefSpec
    scores: dict[str, dict[str, Any]]
    queries: dict[str, dict[str, tuple[float, float, float]]]
    meta: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The reference as JSON (per config, query ids and three lists of numbers)."""
        return {
            "spec": asdict(self.spec),
            "scores": self.scores,
            "queries": {
                c: {"ids": list(q), "values": [list(v) for v in zip(*q.values(), strict=True)] if q else [[], [], []]}
                for c, q in self.queries.items()
            },
            "meta": self.meta,
            "summary": self.summary,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Reference:
        queries = {
            c: dict(zip(q["ids"], zip(*q["values"], strict=True), strict=True)) for c, q in data["queries"].items()
        }
        return cls(
            RefSpec.from_json(data["spec"]),
            dict(data["scores"]),
            queries,
            dict(data.get("meta") or {}),
            dict(data.get("summary") or {}),
        )


def config_order(benchmark: str, configs: Sequence[str]) -> list[str]:
    """``configs`` in the board's order (TRIAD: main subsets, then reference tasks; ARK: subtypes)."""
    order = triad_names.TASK_CONFIGS if benchmark == "triad" else ark_names.SUBTYPES
    rank = {c: i for i, c in enumerate(order)}
    return sorted(configs, key=lambda c: (rank.get(c, len(rank)), c))


def as_ap(benchmark: str, value: float) -> float:
    """A stored per-query value as AP: TRIAD stores AP, ARK the positive's rank (AP = 1 / rank)."""
    if benchmark == "triad":
        return float(value)
    return 1.0 / float(value) if value > 0 else 0.0


def _subset(
    benchmark: str, config: str, own: Mapping[str, tuple[float, float, float]], submitted: Mapping[str, float]
) -> list[reproduction.QueryJudgement]:
    """Each query of one config: its submitted AP against the model's own and its tie range."""
    out = []
    for qid, (value, low, high) in own.items():
        if qid not in submitted:
            raise KeyError(f"{config}: the submission has no score for query {qid[:60]!r}")
        ap = as_ap(benchmark, submitted[qid])
        out.append(reproduction.QueryJudgement(config, qid, ap, as_ap(benchmark, value), float(low), float(high)))
    return out


def full_check(
    reference: Reference, submitted: Mapping[str, Mapping[str, float]], alpha: float = ALPHA
) -> tuple[str, dict[str, Any]]:
    """(verified | failed | unverified, result) of a submission's per-query values against the reference run.

    ``submitted[config][query id]``: the value the server scored (TRIAD AP, ARK positive rank), for the configs
    the submission and the reference share. Failed when a query's AP lies outside the model's tie range or a
    subset's APs sit above the model's own more than noise would (p < ``alpha``, each subset on its own); the
    result names the first failing subset and query."""
    benchmark = reference.spec.benchmark
    configs = config_order(benchmark, [c for c in reference.queries if c in submitted])
    judged: dict[str, list[reproduction.QueryJudgement]] = {
        c: _subset(benchmark, c, reference.queries[c], submitted[c]) for c in configs
    }
    every = [j for c in configs for j in judged[c]]
    outside = [j for j in every if not j.in_range]
    step = reproduction.GRID / 2
    subsets: dict[str, dict[str, Any]] = {}
    for c in configs:
        diffs = [j.submitted - j.own for j in judged[c]]
        subsets[c] = {
            "queries": len(diffs),
            "outside": sum(not j.in_range for j in judged[c]),
            "above": sum(d > step for d in diffs),
            "below": sum(d < -step for d in diffs),
            "p": float(f"{reproduction.favourable_p(diffs):.3g}"),
        }
    result: dict[str, Any] = {
        "kind": FULL,
        "reference": reference.spec.key,
        "queries": len(every),
        "outside_tie_range": len(outside),
        "outside_listed": [{"config": j.config, "query_id": j.query_id, "ap": round(j.submitted, 4)} for j in outside],
        "subsets": subsets,
        "alpha": alpha,
        "first_failure": _first_failure(outside, judged, subsets, alpha),
        "ap": {
            k: round(float(np.mean([getattr(j, k) for j in every])), 6) if every else None for k in ("submitted", "own")
        },
        "private": {  # the model's own APs: shown to the admin only, never mirrored
            "outside": [
                {"config": j.config, "query_id": j.query_id, "own": round(j.own, 4), "range": [j.low, j.high]}
                for j in outside[:MAX_LISTED]
            ]
        },
    }
    result["outside_listed"] = result["outside_listed"][:MAX_LISTED]
    if result["first_failure"] is not None:
        return "failed", result
    alike = reference.meta.get("alike") or {}
    if every and all(int(alike.get(c, 0)) >= len(judged[c]) for c in configs):
        return "unverified", {
            **result,
            "reason": "the model scores every candidate alike (within the tolerance): its order cannot be checked",
        }
    return "verified", result


def _first_failure(
    outside: Sequence[reproduction.QueryJudgement],
    judged: Mapping[str, Sequence[reproduction.QueryJudgement]],
    subsets: Mapping[str, Mapping[str, Any]],
    alpha: float,
) -> dict[str, str] | None:
    """Which test failed first, in which subset and query: a query outside its tie range (the first in board
    order), else the first subset at the favourable end, named by its query that gained most."""
    if outside:
        return {"test": "tie range", "config": outside[0].config, "query_id": outside[0].query_id}
    for c, entry in subsets.items():
        if entry["p"] < alpha:
            top = max(judged[c], key=lambda j: j.submitted - j.own)
            return {"test": "favourable end", "config": c, "query_id": top.query_id}
    return None


def describe_failure(result: Mapping[str, Any]) -> str:
    """The public clause of a failed full check: which test, which subset, which query (no model scores).

    >>> describe_failure({"first_failure": {"test": "tie range", "config": "state_cars", "query_id": "q7"},
    ...                   "outside_tie_range": 3, "queries": 720, "outside_listed": [{"ap": 1.0}]})
    "full check: State Cars, query q7: AP 1.00, outside what the model's own scores allow; 2 more of 720 queries"
    """
    first = result.get("first_failure") or {}
    label = header(str(first.get("config")))
    qid = str(first.get("query_id", ""))[:40]
    if first.get("test") == "tie range":
        listed = result.get("outside_listed") or [{}]
        ap = listed[0].get("ap")
        more = int(result.get("outside_tie_range", 1)) - 1
        text = f"full check: {label}, query {qid}: AP {ap:.2f}, outside what the model's own scores allow"
        return text + (f"; {more} more of {result.get('queries', 0)} queries" if more else "")
    entry = (result.get("subsets") or {}).get(first.get("config"), {})
    return (
        f"full check: {label}: AP above the model's own on {entry.get('above', 0)} of "
        f"{entry.get('above', 0) + entry.get('below', 0)} queries that differ, not noise (query {qid} gains most)"
    )


def public_result(result: Mapping[str, Any], status: str) -> dict[str, Any]:
    """What a visitor sees of a full check: a failed one says which test failed and where only."""
    if status == "failed":
        return {"kind": FULL, "first_failure": result.get("first_failure")}
    return {k: v for k, v in result.items() if k != "private"}
