"""What of a reproduction check a visitor (and the mirror) may see.

The sample a row is checked on stays secret until the check has run; a failed row says which test failed and
where (subset, query), never the seed or the model's own scores, which would tell an attacker how to tune the next
try. What the run claims about itself (model, revision, variant) is public: it came from its results.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from spaces_app import reference
from spaces_app.legend import header
from spaces_app.verify import FAILED, PENDING

CLAIMS: Final = ("spec", "revision", "variant", "recipe", "reference", "input_pipeline", "evaluated_by", "reason")


def _label(config: Any) -> str:
    return header(str(config))


def public_failures(result: Mapping[str, Any]) -> list[str]:
    """Why a check failed as a visitor reads it: which test, which subset and query; no score of the model."""
    if result.get("kind") == reference.FULL:
        return [reference.describe_failure(result)]
    first = result.get("first_failure") or {}
    where = f"{_label(first.get('config'))}, query {str(first.get('query_id', ''))[:40]}" if first else ""
    out = []
    if result.get("disagreeing"):
        pairs = result["pairs_listed"][0] if result.get("pairs_listed") else {}
        at = f"{_label(pairs.get('config'))}, query {str(pairs.get('query_id', ''))[:40]}" if pairs else where
        out.append(f"{result['disagreeing']} of {result.get('pairs', 0)} pairs disagree" + (f" ({at})" if at else ""))
    outside = result.get("outside_listed") or []
    if outside:
        more = result.get("outside_tie_range", 1) - 1
        out.append(
            f"{_label(outside[0]['config'])}, query {str(outside[0]['query_id'])[:40]}: AP {outside[0]['ap']:.2f}, "
            "outside what the model's own scores allow"
            + (f"; {more} more of {result.get('queries', 0)} queries" if more else "")
        )
    fav, alpha = result.get("favourable") or {}, (result.get("favourable") or {}).get("alpha")
    tests = [("", fav)] + [(_label(c) + ": ", e) for c, e in (result.get("favourable_by_config") or {}).items()]
    for label, entry in tests:
        if alpha is not None and entry.get("p") is not None and entry["p"] < alpha:
            above, below = entry.get("above", 0), entry.get("below", 0)
            said = f"{label}AP above the model's own on {above} of {above + below} queries that differ: not noise"
            gains = f" (most: {where})" if where and first.get("test") == "favourable end" else ""
            out.append(said + gains)
            break
    return out or ["the re-encoded model disagrees"]


def where_failed(result: Mapping[str, Any]) -> dict[str, Any]:
    """Which test a check failed first, and where (subset, query), without the model's scores."""
    if result.get("first_failure"):
        return dict(result["first_failure"])
    pairs, outside = result.get("pairs_listed") or [], result.get("outside_listed") or []
    if pairs:
        return {"test": "pairs", "config": pairs[0]["config"], "query_id": pairs[0]["query_id"]}
    if outside:
        return {"test": "tie range", "config": outside[0]["config"], "query_id": outside[0]["query_id"]}
    by_config: dict[str, Any] = result.get("favourable_by_config") or {}
    worst = min(by_config, key=lambda c: by_config[c]["p"], default=None)
    return {"test": "favourable end", "config": worst}


def public(verify: Mapping[str, Any], status: str) -> dict[str, Any]:
    """What a visitor (and the mirror) may see of a check: what the run claims, why it is not checkable, and

    * failed: which test failed and where, and the status cell's words (`public_failures`);
    * verified: the evidence, the full check's and the sample's (its seed revealed);
    * pending: whether a sampled first look passed (the sample itself stays secret)."""
    shown: dict[str, Any] = {k: verify[k] for k in CLAIMS if k in verify}
    full, result = verify.get("full"), verify.get("result")
    if status == FAILED:
        found = full or result
        if found:
            shown["failed"] = {**where_failed(found), "text": "; ".join(public_failures(found))}
        elif verify.get("failed"):
            shown["failed"] = verify["failed"]
    elif status == PENDING:
        if result or verify.get("first_look"):
            shown["first_look"] = {"queries": (result or verify["first_look"]).get("queries", 0), "passed": True}
    else:
        if full:
            shown["full"] = reference.public_result(full, status)
        if result:
            shown["result"] = result
        if "sample_seed" in verify:
            shown["sample_seed"] = verify["sample_seed"]
    return {"status": status, **shown}
