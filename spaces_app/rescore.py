"""Recompute stored rows' summaries and diagnostics from what each row keeps of its rankings.

A row keeps, per query, its first `explore_store.TOP_STORED` ids and the rank of every positive (its explorer
file). That fixes every number the scoring computes from positive ranks and the top 10: mAP, MRR, recall, nDCG,
entry and trap rates, the breakdowns by depth, profile, session and turns, the dialogue cost, the paper's C.3, Fig. 9
and D.3 tables, ARK's R@k and nDCG. The rankings are rebuilt with the kept ids and positives in place, the other
candidates in pool order, and scored by the same `submit.score_triad_positions` / `metrics.scoring.score_ark` a
submission goes through. What the kept part cannot fix is kept as stored: the C.4 shared-pool change (it counts
negatives below the kept top) and the per-hop I2C numbers where two positives of different hops lie below it.
A rescore never changes the scores a row is ranked by: a row whose kept rankings do not give its stored mAP is left.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pyarrow.parquet as pq

from spaces_app import explore_store, status, submit
from spaces_app.db import Database
from spaces_app.gold import Gold, GoldStore
from triad_dataset.contract.errors import TriadError

SAME_SCORE: Final = 1e-9  # a recomputed headline score may differ from the stored one by float noise only
SHARED_POOL: Final = "shared_pool"  # paper C.4 in the PAPER_DIAGNOSTICS node: needs the negatives below the top


@dataclass(frozen=True)
class Kept:
    """What a row keeps of one query's ranking: its top ids and every positive's 1-based rank."""

    top_ids: Sequence[str]
    positive_ranks: Sequence[int]


def kept_rankings(db_path: Path, submission_id: int) -> dict[str, dict[str, Kept]]:
    """config -> query id -> `Kept` from the row's explorer file; empty when the row has none."""
    path = explore_store.file_of(db_path, submission_id)
    if not path.is_file():
        return {}
    table = pq.read_table(path)
    out: dict[str, dict[str, Kept]] = {}
    for config, qid, ids, ranks in zip(
        *(table.column(name).to_pylist() for name in ("config", "query_id", "top_ids", "positive_ranks")), strict=True
    ):
        out.setdefault(config, {})[qid] = Kept(ids, ranks)
    return out


def kept_order(pool: Sequence[str], labels: np.ndarray, width: int, kept: Kept) -> tuple[np.ndarray, bool]:
    """One query's pool positions best first rebuilt from what was kept, and whether the positives below the kept
    top had to be placed in pool order (their identities are not kept when there are several).

    Args:
        pool: the query's candidate ids (gold order).
        labels: 1 for each positive slot of the pool (``width`` slots, padding after the pool).
        width: the config's widest pool; the padding slots follow in place.
        kept: the row's top ids and positive ranks for this query.
    """
    n = len(pool)
    index = {cid: p for p, cid in enumerate(pool)}
    order = np.full(width, -1, dtype=np.int64)
    order[n:] = np.arange(n, width)
    top = [index[cid] for cid in kept.top_ids]
    order[: len(top)] = top
    placed = set(top)
    below = [int(r) - 1 for r in kept.positive_ranks if int(r) - 1 >= len(top)]
    rest = [p for p in range(n) if labels[p] and p not in placed]
    if len(rest) != len(below) or any(r >= n for r in below):
        raise ValueError("the kept positive ranks do not match the gold's positives")
    order[below] = rest
    placed.update(rest)
    free = np.flatnonzero(order[:n] < 0)
    order[free] = [p for p in range(n) if p not in placed]
    return order, len(rest) > 1


def _triad(gold: Gold, kept: Mapping[str, Mapping[str, Kept]]) -> tuple[dict[str, Any], set[str]]:
    """The scoring output of the rebuilt TRIAD rankings, and the configs whose per-hop numbers they cannot fix."""
    orders, unsure = {}, set()
    for config, by_query in kept.items():
        g = gold.columnar(config)
        rows = gold.rows[config]
        order = np.empty(g.mask.shape, dtype=np.int64)
        for q, row in enumerate(rows):
            order[q], guessed = kept_order(
                row["candidate_ids"], g.labels[q], g.mask.shape[1], by_query[row["query_id"]]
            )
            if guessed and len(set(g.hops[q][order[q][len(by_query[row["query_id"]].top_ids) :]]) - {0}) > 1:
                unsure.add(config)
        orders[config] = order
    return submit.score_triad_positions(gold, orders), unsure


def _ark(gold: Gold, kept: Mapping[str, Mapping[str, Kept]]) -> dict[str, Any]:
    from metrics import scoring

    ranks = {s: {q: int(k.positive_ranks[0]) for q, k in by_query.items()} for s, by_query in kept.items()}
    return scoring.score_ark({s: gold.rows[s] for s in ranks}, ranks)


def rescored_summary(sub: Mapping[str, Any], gold: Gold, kept: Mapping[str, Mapping[str, Kept]]) -> dict[str, Any]:
    """The row's summary recomputed from its kept rankings, keeping as stored what they cannot fix.

    Args:
        sub: the stored row (`Database.submissions`).
        gold: the gold it was scored on.
        kept: `kept_rankings` of the row.
    """
    from metrics.scoring import PAPER_DIAGNOSTICS

    bench = str(sub["benchmark"])
    scored, unsure = _triad(gold, kept) if bench == "triad" else (_ark(gold, kept), set())
    rows, _, fresh = submit.rows_for_db(bench, scored, sorted(kept))
    stored_scores = sub.get("submitted_scores") or sub["scores"]
    for r in rows:
        before = stored_scores.get(r.config)
        if before is not None and abs(before.value - r.value) > SAME_SCORE:
            raise ValueError(f"{r.config}: its kept rankings give {r.value:.6f}, the row stores {before.value:.6f}")
    stored = dict(sub["summary"])
    for config in unsure:  # per-hop numbers need the identity of each positive below the kept top
        fresh[config] = {**fresh[config], "diagnostics": (stored.get(config) or {}).get("diagnostics", {})}
    if PAPER_DIAGNOSTICS in fresh:
        shared = (stored.get(PAPER_DIAGNOSTICS) or {}).get(SHARED_POOL)
        node = {k: v for k, v in fresh[PAPER_DIAGNOSTICS].items() if k != SHARED_POOL}
        fresh[PAPER_DIAGNOSTICS] = node if shared is None else {**node, SHARED_POOL: shared}
    return {**stored, **fresh}


def rescore(db: Database, golds: GoldStore, say: Callable[[str], None]) -> int:
    """Recompute every stored row's summary; one line per row through ``say``; returns how many rows changed."""
    changed = 0
    for line, summary, sid in _each_row(db, golds):
        if summary is not None:
            db.set_summary(sid, summary)
            changed += 1
        say(line)
    return changed


def _each_row(db: Database, golds: GoldStore) -> Iterator[tuple[str, dict[str, Any] | None, int]]:
    served = golds.available()
    for sub in db.submissions(include_hidden=True):
        sid, bench = int(sub["id"]), str(sub["benchmark"])
        head = f"row {sid} ({str(sub['model_name'])[:60]}, {bench.upper()}):"
        if bench not in served:
            yield f"{head} left as stored: no {bench.upper()} gold folder given", None, sid
            continue
        gold = golds.get(bench)
        if not status.current(sub, gold.content, gold.fingerprint):
            yield f"{head} left as stored: scored on another gold than the one given", None, sid
            continue
        kept = kept_rankings(db.path, sid)
        if not kept:
            yield f"{head} left as stored: it keeps no rankings (no explorer file)", None, sid
            continue
        try:
            summary = rescored_summary(sub, gold, kept)
        except (IndexError, KeyError, ValueError) as exc:
            yield f"{head} left as stored: its kept rankings do not fit the gold ({exc})", None, sid
            continue
        if _same(summary, sub["summary"]):
            yield f"{head} unchanged", None, sid
        else:
            yield f"{head} summary recomputed from its kept rankings ({len(kept)} configs)", summary, sid


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def open_db(path: Path) -> Database:
    """The leaderboard database at ``path`` for rescoring; a missing or unreadable file is one-line refused."""
    if not path.is_file():
        raise TriadError(f"{path}: no leaderboard database there; give the file with --db")
    return Database(path, create=False)
