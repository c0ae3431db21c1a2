"""What the leaderboard says about each row besides its numbers: the reproduction status, the implausibility and
tie flags, and the order rows are listed in (verified rows first).

Statuses (spaces_app/verify.py, spaces_app/reference.py): **verified** (every query agrees with the leaderboard's
own run of the named model; the row then shows that run's numbers), **unverified** (self-reported: an own encoder,
a model the server cannot run), **pending** (the full check waits for the leaderboard's own run; unranked),
**failed** (the model disagrees; hidden from the default view), and **older gold** for rows scored on an earlier
version of the gold data (kept visible, marked, resubmittable). A failed row's public text says which test failed
and where, never the model's own scores (`disclosure.public_failures`; the admin sees `failures`).
Flags are computed when the table is drawn, against the verified rows present then (`Plausibility`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from spaces_app import disclosure, verify
from triad_dataset.contract import names as triad_names
from triad_dataset.contract.errors import TriadError

OLDER_GOLD: Final = "older gold"
# pending rows are listed apart from, below, the self-reported ones until their check has run
ORDER: Final = {verify.VERIFIED: 0, verify.UNVERIFIED: 1, verify.PENDING: 2, OLDER_GOLD: 3, verify.FAILED: 4}
# the short marker beside the model name; the Status column holds the whole reason
SHORT: Final = {
    verify.VERIFIED: "✓ verified",
    verify.UNVERIFIED: "unverified",
    verify.PENDING: "pending",
    OLDER_GOLD: "older gold",
    verify.FAILED: "✗ failed",
}
# unflagged rows of these groups are ranked among their own group, the word after the number says which
RANKED_APART: Final = {ORDER[verify.UNVERIFIED]: " (self)", ORDER[verify.PENDING]: " (pending)"}
ALL_TIED: Final = "scores all tied"
UNRANKED: Final = "unranked"


@dataclass(frozen=True)
class Plausibility:
    """A subset score is flagged when it reaches ``bound`` (default 1.0: perfect), exceeds the best verified row
    on that subset by more than ``margin`` (default 0.2; a verified row: when its mAP on the sampled queries exceeds
    the model's own re-computed one by more than that), or, while no row of that subset is verified, reaches
    ``unverified_bound`` of the way from chance to perfect (default 0.9: (score - chance) / (1 - chance) ≥ 0.9).
    Env: TRIAD_SPACE_MAP_BOUND, TRIAD_SPACE_MAP_MARGIN, TRIAD_SPACE_MAP_UNVERIFIED_BOUND."""

    bound: float = 1.0
    margin: float = 0.2
    unverified_bound: float = 0.9

    @classmethod
    def from_env(cls) -> Plausibility:
        out = []
        for var, default in (
            ("TRIAD_SPACE_MAP_BOUND", cls.bound),
            ("TRIAD_SPACE_MAP_MARGIN", cls.margin),
            ("TRIAD_SPACE_MAP_UNVERIFIED_BOUND", cls.unverified_bound),
        ):
            raw = os.environ.get(var, "").strip()
            try:
                out.append(float(raw) if raw else default)
            except ValueError:
                raise TriadError(f"{var}={raw!r}: expected a number, e.g. {default}") from None
        return cls(*out)


def current(sub: Mapping[str, Any], gold_content: str | None, gold_bytes: str | None) -> bool:
    """Scored on the gold served now (same content, or the same files)."""
    return (
        bool(gold_content)
        and sub.get("gold_content") == gold_content
        or bool(gold_bytes)
        and sub.get("dataset_fingerprint") == gold_bytes
    )


def row_status(sub: Mapping[str, Any], is_current: bool = True) -> str:
    if not is_current:
        return OLDER_GOLD
    status = str(sub.get("status") or verify.UNVERIFIED)
    return status if status in verify.STATUSES else verify.UNVERIFIED


def best_verified(subs: Sequence[Mapping[str, Any]], configs: Sequence[str]) -> dict[str, float]:
    """The best verified value per config among ``subs``."""
    best: dict[str, float] = {}
    for s in subs:
        if s.get("status") != verify.VERIFIED:
            continue
        for c in configs:
            sc = s["scores"].get(c)
            if sc is not None:
                best[c] = max(best.get(c, float("-inf")), sc.value)
    return best


def flags(
    sub: Mapping[str, Any],
    best: Mapping[str, float],
    rule: Plausibility,
    configs: Sequence[str],
    chance: Mapping[str, float] | None = None,
) -> list[str]:
    """Why a row's numbers are implausible, and its ties (empty: nothing to say); ``chance``: the chance level per
    config (0 where not given), for the bound that applies while a subset has no verified row."""
    out = []
    label = triad_names.DISPLAY_NAMES
    for c in configs:
        sc = sub["scores"].get(c)
        if sc is None:
            continue
        low = min(max(float((chance or {}).get(c, 0.0)), 0.0), 0.999)
        if sc.value >= rule.bound:
            out.append(f"{label.get(c, c)} {sc.value:.3f} ≥ {rule.bound:g}")
        elif c in best and sub.get("status") != verify.VERIFIED and sc.value > best[c] + rule.margin:
            out.append(f"{label.get(c, c)} {sc.value:.3f} > best verified {best[c]:.3f} + {rule.margin:g}")
        elif c not in best and (sc.value - low) / (1 - low) >= rule.unverified_bound:
            out.append(
                f"{label.get(c, c)} {sc.value:.3f}: {rule.unverified_bound:g} of the way from chance "
                f"{low:.3f} to 1 with no verified row"
            )
    record = sub.get("verify") or {}
    ap = (record.get("full") or record.get("result") or {}).get("ap") or {}
    if (
        sub.get("status") == verify.VERIFIED
        and ap.get("submitted") is not None
        and ap.get("own") is not None
        and ap["submitted"] > ap["own"] + rule.margin
    ):  # verified rows: against the model's own re-computed AP
        out.append(f"sampled mAP {ap['submitted']:.3f} > the model's own {ap['own']:.3f} + {rule.margin:g}")
    tied = (sub.get("summary") or {}).get("all_tied") or {}
    if tied.get("queries"):
        counts, totals = tied["queries"], tied.get("of") or {}
        out.append(
            f"{ALL_TIED} in {sum(counts.values())} of {sum(totals.values())} queries (their order is the list's)"
        )
    return out


def tie_range(sub: Mapping[str, Any], configs: Sequence[str] = triad_names.MAIN_CONFIGS) -> float | None:
    """The largest positives-first minus positives-last mAP over the configs (None: no ties)."""
    ties = (sub.get("summary") or {}).get("tie_sensitivity") or {}
    widths = [
        t["positives_first"] - t["positives_last"]
        for c, t in ties.items()
        if c in configs and isinstance(t, Mapping) and t.get("tied_queries")
    ]
    return max(widths) if widths else None


def failures(result: Mapping[str, Any]) -> list[str]:
    """Why a check failed, one clause per test it failed (`verify.judge`)."""
    out = []
    if result.get("disagreeing"):
        out.append(f"{result['disagreeing']} of {result.get('pairs', 0)} pairs disagree")
    outside = result.get("outside_listed") or []
    if outside:
        q = outside[0]
        low, high = q["range"]
        own = f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}"
        more = result.get("outside_tie_range", 1) - 1
        out.append(
            f"query {str(q['query_id'])[:40]}: AP {q['ap']:.2f}, the model's own {own}"
            + (f"; {more} more of {result.get('queries', 0)} queries outside the model's range" if more else "")
        )
    fav = result.get("favourable") or {}
    if fav.get("p") is not None and fav.get("alpha") is not None and fav["p"] < fav["alpha"]:
        out.append(
            f"AP above the model's own on {fav.get('above', 0)} of {fav.get('above', 0) + fav.get('below', 0)}"
            f" queries that differ, p = {fav['p']:.2g}: not noise"
        )
    return out or ["the re-encoded model disagrees"]


def _verified_text(v: Mapping[str, Any], named: str) -> str:
    """The evidence of a verified row: the leaderboard's own run (or, for rows checked before, the sample)."""
    full, result = v.get("full") or {}, v.get("result") or {}
    if v.get("evaluated_by"):
        return f"evaluated by the leaderboard (its own run of {str(v.get('spec'))[:60]}, every query)"
    if full:
        return (
            f"verified{named} (the leaderboard's own run: all {full.get('queries', 0)} queries within the model's "
            "tie range, no subset at the favourable end)"
        )
    evidence = "AP within the model's tie range on all" if "ap" in result else f"{result.get('pairs', 0)} pairs agree"
    return f"verified{named} ({result.get('queries', 0)} queries, {evidence})"


def text(sub: Mapping[str, Any], status: str, row_flags: Sequence[str]) -> str:
    """The status cell: the status with its evidence or reason, then the input-pipeline note and the flags."""
    v = sub.get("verify") or {}
    result = v.get("full") or v.get("result") or {}
    spec = str(v.get("spec") or "")
    named = "" if not spec or spec.casefold() == str(sub.get("model_name", "")).casefold() else f" as {spec}"
    if status == verify.VERIFIED:
        out = _verified_text(v, named)
    elif status == verify.FAILED:
        said = disclosure.public_failures(result) if result else [str((v.get("failed") or {}).get("text") or "")]
        out = f"FAILED reproduction{named} ({'; '.join(c for c in said if c) or 'the re-encoded model disagrees'})"
    elif status == verify.PENDING:
        look = v.get("result") or v.get("first_look") or {}
        first = f"; a sampled first look at {look.get('queries', 0)} queries found nothing" if look else ""
        out = f"unverified: reproduction check{named} pending (pending full check{first})"
    elif status == OLDER_GOLD:
        out = f"older gold ({str(sub.get('dataset_fingerprint', ''))[:8]}): resubmit to score on the current one"
    else:
        out = f"unverified: {v.get('reason') or 'self-reported'}"
    if v.get("input_pipeline") == "unverified":
        out += " · unverified input pipeline"
    if row_flags:
        out += " · FLAGGED: " + "; ".join(row_flags)
    return out


def marker(status: str, row_flags: Sequence[str]) -> str:
    """The short marker of a row: its status, then "scores tied" or "flagged" when a flag is raised."""
    if not row_flags:
        return SHORT[status]
    tied_only = all(f.startswith(ALL_TIED) for f in row_flags)
    return f"{SHORT[status]}, {'scores tied' if tied_only else 'flagged'}"


def annotate(
    subs: Sequence[Mapping[str, Any]],
    configs: Sequence[str],
    gold_content: str | None,
    gold_bytes: str | None,
    rule: Plausibility | None = None,
    chance: Mapping[str, float] | None = None,
) -> dict[int, dict[str, Any]]:
    """Per submission id: {"status", "order", "text", "marker", "flags", "ties"} for the tables (``chance``: per
    config)."""
    rule = rule or Plausibility.from_env()
    live = [s for s in subs if current(s, gold_content, gold_bytes)]
    best = best_verified(live, configs)
    out = {}
    for s in subs:
        status = row_status(s, current(s, gold_content, gold_bytes))
        found = flags(s, best, rule, configs, chance) if status != OLDER_GOLD else []
        out[int(s["id"])] = {
            "status": status,
            "order": ORDER[status] + (0.5 if found else 0),
            "flags": found,
            "text": text(s, status, found),
            "marker": marker(status, found),
            "ties": tie_range(s, configs),
        }
    return out
