"""The array-native scoring entry (`score_triad_arrays` over `metrics.columnar` gold) equals `score_triad` on rows."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from metrics import columnar, scoring
from triad_dataset.contract import names as n


def _rows(config: str, n_queries: int, pool: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_queries):
        ids = [f"c{i}" for i in rng.permutation(3 * pool)[:pool]]
        k = int(rng.integers(1, 4))
        roles = [n.POSITIVE] * k + [str(r) for r in rng.choice(list(n.NEGATIVE_ROLES), pool - k)]
        row = {
            "query_id": f"q{q}",
            "candidate_ids": ids,
            "positive_ids": ids[:k],
            "candidate_roles": roles,
            "candidate_trap": [bool(x) for x in rng.random(pool) < 0.05],
        }
        if config in n.STATE_CONFIGS:
            row.update(session_type=n.SESSION_TYPES[q % 2], num_turns=2 + q % 3)
        if config in n.CONSTRAINTS_CONFIGS:
            row.update(profile=list(n.PROFILES)[q % len(n.PROFILES)], conditions=None)
        if config == "abstraction_i2c":
            row.update(positive_hops=[1 + (i % 2) for i in range(k)], depth=5)
        rows.append(row)
    return rows


@pytest.mark.parametrize("dense", [True, False])
def test_arrays_entry_equals_rows_entry(dense, monkeypatch):
    if not dense:
        monkeypatch.setattr(columnar, "DENSE_LOOKUP", 0)  # the sort-based id lookup
    configs = ("abstraction_i2c", "constraints_cars", "state_cars")
    gold_rows = {c: _rows(c, 30, 50, i) for i, c in enumerate(configs)}
    rng = np.random.default_rng(9)
    rankings = {
        c: {r["query_id"]: [r["candidate_ids"][j] for j in rng.permutation(50)] for r in rows}
        for c, rows in gold_rows.items()
    }
    expected = scoring.score_triad(gold_rows, rankings, seed=3)
    gold, orders = {}, {}
    for c, rows in gold_rows.items():
        gold[c] = columnar.gold_from_table(c, pa.Table.from_pylist(rows))
        qids = list(reversed(list(rankings[c])))  # submission order need not be gold order
        orders[c] = columnar.order_from_ids(gold[c], pa.array(qids), pa.array([rankings[c][q] for q in qids]))
    assert scoring.score_triad_arrays(gold, orders, seed=3) == expected


def test_order_from_ids_names_the_bad_query():
    rows = _rows("constraints_cars", 3, 5, 0)
    gold = columnar.gold_from_table("constraints_cars", pa.Table.from_pylist(rows))
    good = [r["candidate_ids"] for r in rows]
    qids = pa.array([r["query_id"] for r in rows])
    bad = [list(p) for p in good]
    bad[1][0] = "nope"
    with pytest.raises(ValueError, match=r"query_id 'q1'.*'nope' is not a candidate"):
        columnar.order_from_ids(gold, qids, pa.array(bad))
    bad = [list(p) for p in good]
    bad[2][0] = bad[2][1]
    with pytest.raises(ValueError, match=r"query_id 'q2'.*not a permutation"):
        columnar.order_from_ids(gold, qids, pa.array(bad))
    with pytest.raises(ValueError, match=r"query_id 'q2'.*no ranking"):
        columnar.order_from_ids(gold, qids[:2], pa.array(good[:2]))
    with pytest.raises(ValueError, match=r"query_id 'x'.*not a gold query"):
        columnar.order_from_ids(gold, pa.array(["q0", "q1", "x"]), pa.array(good))
