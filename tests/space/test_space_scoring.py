"""Server rescoring gives exactly the metrics core's numbers; the views compute what they claim."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from ark_dataset import names as ark_names
from metrics import scoring
from metrics.core import stats
from spaces_app import cells, plots, views
from spaces_app.db import Database, ScoreRow
from spaces_app.gold import GoldStore
from spaces_app.submit import RateLimit, submit_files
from tests.doubles import space_runs as testing
from triad_dataset.contract import names as n


def independent_ap(ranked: list[str], positives: set[str]) -> float:
    """AP_q = (1/|P_q|) sum_k P@k rel_k over the full ranking (paper B.1), written out independently."""
    hits, total = 0, 0.0
    for k, c in enumerate(ranked, 1):
        if c in positives:
            hits += 1
            total += hits / k
    return total / len(positives)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("space_scoring")
    tables = testing.triad_tables(7, 15, seed=11)
    testing.write_triad_gold(root / "triad", tables, 15)
    ark = testing.ark_tables(6, 40, seed=12, subtypes=ark_names.SUBTYPES[4:7])
    testing.write_ark_gold(root / "ark", ark)
    db = Database(root / "db.sqlite")
    golds = GoldStore({"triad": root / "triad", "ark": root / "ark"})
    runs = {}
    for i in range(3):
        rankings = testing.random_rankings(tables, seed=20 + i)
        run = testing.write_run(root / f"run{i}", tables, rankings)
        files = sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"]
        out = submit_files(
            db, golds, files, model_name=f"m{i}", family=["a", "b", "a"][i], submitter="t", rate_limit=RateLimit(99, 60)
        )
        assert out.accepted, out.message
        runs[out.submission_id] = rankings
    ark_rankings = testing.ark_random_rankings(ark, seed=3)
    # put a few positives first so R@1 is not all zero
    for s, per_q in ark_rankings.items():
        for r in ark[s][::2]:
            ids = per_q[r["query_id"]]
            ids.remove(r["positive_id"])
            ids.insert(0, r["positive_id"])
    ark_run = testing.write_run(root / "ark_run", ark, ark_rankings, benchmark="ark")
    out = submit_files(
        db,
        golds,
        sorted((ark_run / "rankings").glob("*.parquet")),
        model_name="ark",
        submitter="t",
        rate_limit=RateLimit(99, 60),
    )
    assert out.accepted, out.message
    return {
        "tables": tables,
        "ark": ark,
        "db": db,
        "runs": runs,
        "ark_rankings": ark_rankings,
        "ark_id": out.submission_id,
    }


def test_stored_map_equals_independent_ap_and_metrics_core(world: dict) -> None:
    db, tables = world["db"], world["tables"]
    for sub in db.submissions("triad"):
        rankings = world["runs"][sub["id"]]
        core = scoring.score_triad({c: tables[c] for c in rankings}, rankings)
        assert set(sub["scores"]) == set(n.TASK_CONFIGS)
        for c in n.TASK_CONFIGS:
            expected = {
                r["query_id"]: independent_ap(rankings[c][r["query_id"]], set(r["positive_ids"])) for r in tables[c]
            }
            stored: ScoreRow = sub["scores"][c]
            assert stored.metric == "map" and stored.n_queries == len(tables[c])
            assert math.isclose(stored.value, np.mean(list(expected.values())), rel_tol=0, abs_tol=1e-12)
            assert stored.value == core[c]["metrics"]["map"]  # the very same path, bit for bit
            assert [stored.lo, stored.hi] == core[c]["intervals"]["map"]
            assert (stored.lo, stored.hi) == stats.bootstrap_ci(list(core[c]["per_query_ap"].values()), seed=0)
            per_query = db.query_scores(sub["id"], c)
            assert per_query.keys() == expected.keys()
            for q, ap in expected.items():
                assert math.isclose(per_query[q], ap, abs_tol=1e-12)
        # diagnostics kept (without per-query maps) for the views
        assert sub["summary"][scoring.DIALOGUE_COST] == {k: v for k, v in core[scoring.DIALOGUE_COST].items()}
        assert "per_query_ap" not in sub["summary"][n.MAIN_CONFIGS[0]]


def test_ark_recall_equals_positive_ranks(world: dict) -> None:
    sub = world["db"].submissions("ark")[0]
    per_subtype = {}
    for s, per_q in world["ark_rankings"].items():
        ranks = [per_q[r["query_id"]].index(r["positive_id"]) + 1 for r in world["ark"][s]]
        per_subtype[s] = float(np.mean([rk == 1 for rk in ranks]))
        assert sub["scores"][s].value == per_subtype[s]
        assert world["db"].query_scores(sub["id"], s) == {
            r["query_id"]: float(rk) for r, rk in zip(world["ark"][s], ranks, strict=True)
        }
    assert views.ark_macro(sub) == pytest.approx(np.mean(list(per_subtype.values())), abs=1e-12)
    table = views.ark_table([sub], "subtype")
    assert table.loc[0, views.ARK_MACRO] == round(np.mean(list(per_subtype.values())), 3)
    by_domain = views.ark_table([sub], "domain")
    domain = ark_names.SUBTYPE_DOMAIN[ark_names.SUBTYPES[4]]
    subs_in = [s for s in ark_names.DOMAIN_SUBTYPES[domain] if s in per_subtype]
    assert by_domain.loc[0, cells.ARK_DOMAIN_LABELS[domain]] == round(np.mean([per_subtype[s] for s in subs_in]), 3)


def test_paired_comparison_matches_stats(world: dict) -> None:
    db = world["db"]
    a, b = db.submissions("triad")[:2]
    table = views.paired_comparison(a, b, db.query_scores)
    assert list(table["Subset"]) == [n.DISPLAY_NAMES[c] for c in n.MAIN_CONFIGS]
    pvals = []
    for row, c in zip(table.to_dict(orient="records"), n.MAIN_CONFIGS, strict=True):
        qa, qb = db.query_scores(a["id"], c), db.query_scores(b["id"], c)
        x = np.array([qa[q] for q in sorted(qa)])
        y = np.array([qb[q] for q in sorted(qa)])
        lo, hi = stats.paired_bootstrap_ci(x, y, seed=0)
        assert row["ΔmAP (A−B)"] == round(x.mean() - y.mean(), 3)
        assert (row["95% CI low"], row["95% CI high"]) == (round(lo, 3), round(hi, 3))
        p = stats.wilcoxon(x, y)
        pvals.append(p)
        assert row["Wilcoxon p"] == f"{p:.3g}"
        assert row["rank-biserial"] == round(stats.rank_biserial(x, y), 3)
    assert list(table["Holm p"]) == [f"{p:.3g}" for p in stats.holm(pvals)]


def _sub(i: int, values: dict[str, float]) -> dict:
    return {
        "id": i,
        "model_name": f"m{i}",
        "family": "f",
        "params": None,
        "created_at": 0.0,
        "scores": {c: ScoreRow(c, "map", v, None, None, 1) for c, v in values.items()},
    }


def test_rank_ranges_use_average_ranks_for_ties() -> None:
    c1, c2 = n.MAIN_CONFIGS[:2]
    subs = [_sub(1, {c1: 0.5, c2: 0.1}), _sub(2, {c1: 0.5, c2: 0.3}), _sub(3, {c1: 0.2, c2: 0.2})]
    ranks = views.subset_ranks(subs, [c1, c2])
    assert ranks[n.DISPLAY_NAMES[c1]].tolist() == [1.5, 1.5, 3.0]
    assert ranks[n.DISPLAY_NAMES[c2]].tolist() == [3.0, 1.0, 2.0]
    fig = plots.rank_range_figure(subs, [c1, c2])
    segments = fig.axes[0].collections[0].get_segments()
    assert [(s[0][1], s[1][1]) for s in segments] == [(1.5, 3.0), (1.0, 1.5), (2.0, 3.0)]


def test_table_has_no_aggregate_and_sorts_and_filters() -> None:
    c1, c2 = n.MAIN_CONFIGS[:2]
    subs = [_sub(1, {c1: 0.1234, c2: 0.9}), _sub(2, {c1: 0.5, c2: 0.2}), _sub(3, {c1: 0.3})]
    subs[2]["family"] = "g"
    subs[1]["model_name"] = "<b>Bold</b>"
    table = views.score_table(subs, [c1, c2], sort_by=n.DISPLAY_NAMES[c2])
    assert list(table.columns) == [
        "id",
        "Model",
        n.DISPLAY_NAMES[c1],  # the subsets right after the name, family and size after them
        n.DISPLAY_NAMES[c2],
        "Family",
        "Params",
        "Submitter",
        "results.json",
    ]
    assert table["id"].tolist() == [1, 2, 3]  # missing values last
    shown = views.for_display(table)
    assert shown[n.DISPLAY_NAMES[c1]].tolist() == ["0.123", "0.500", "0.300"]
    assert shown[n.DISPLAY_NAMES[c2]].tolist() == ["0.900", "0.200", "–"]
    assert shown["Model"].tolist()[1] == "<b>Bold</b>"  # verbatim text; the UI shows it as text
    assert [s["id"] for s in views.filter_subs(subs, "g")] == [3]
    assert [s["id"] for s in views.filter_subs(subs, views.ALL_FAMILIES, "bold")] == [2]


def test_reranked_run_is_accepted(tmp_path: Path) -> None:
    """A reranked run orders the head by rerank_scores, the tail by first-stage scores (runner's format)."""
    root = tmp_path
    tables = testing.triad_tables(3, 10, seed=5, configs=n.MAIN_CONFIGS)
    testing.write_triad_gold(root / "triad", tables, 10)
    rankings = testing.random_rankings(tables, seed=1)
    run = testing.write_run(root / "run", tables, rankings)
    for f in (run / "rankings").glob("*.parquet"):
        import pyarrow.parquet as pq

        t = pq.read_table(f)
        first = [[0.1, 0.9, 0.5] + s[3:] for s in t.column("scores").to_pylist()]  # head not sorted by first stage
        t = t.set_column(2, "scores", pa.array(first, pa.list_(pa.float64())))
        t = t.append_column("rerank_scores", pa.array([[3.0, 2.0, 1.0]] * t.num_rows, pa.list_(pa.float64())))
        pq.write_table(t, f)
    db = Database(root / "db.sqlite")
    files = sorted((run / "rankings").glob("*.parquet"))
    out = submit_files(
        db, GoldStore({"triad": root / "triad"}), files, model_name="rr", submitter="t", rate_limit=RateLimit(9, 9)
    )
    assert out.accepted, out.message


def test_rank_agreement_is_kendall_tau_b() -> None:
    from scipy.stats import kendalltau

    c1, c2, c3 = n.MAIN_CONFIGS[:3]
    a, b, c = [0.1, 0.2, 0.3, 0.4], [0.1, 0.3, 0.2, 0.2], [0.5, 0.5, 0.5, 0.5]
    subs = [_sub(i, {c1: a[i], c2: b[i], c3: c[i]}) for i in range(4)]
    table = views.rank_agreement(subs, [c1, c2, c3]).set_index("Subset")
    d1, d2, d3 = (n.DISPLAY_NAMES[x] for x in (c1, c2, c3))
    assert table.loc[d1, d2] == pytest.approx(kendalltau(a, b, variant="b").statistic, abs=1e-12)
    assert table.loc[d1, d1] == 1.0
    assert math.isnan(table.loc[d1, d3])  # every model ties on that subset: undefined, left empty


def test_diagnostic_tables_follow_the_summary(world: dict) -> None:
    sub = world["db"].submissions("triad")[0]
    c2i = sub["summary"][n.ABSTRACTION_CONFIGS[1]]["diagnostics"]["map_by_depth"]
    depth = views.depth_table(sub)
    assert depth["Depth"].tolist() == sorted(c2i, key=lambda d: (len(d), d))
    assert depth["mAP"].tolist() == [round(c2i[d]["map"], 3) for d in depth["Depth"]]
    hops = views.hop_table(sub)
    per_hop = sub["summary"][n.ABSTRACTION_CONFIGS[0]]["diagnostics"]["per_hop"]
    assert hops["Hop"].tolist() == list(per_hop) and hops["Queries"].tolist() == [
        per_hop[h]["n_queries"] for h in per_hop
    ]
    traps = views.trap_table(sub)
    assert traps["Subset"].tolist() == [n.DISPLAY_NAMES[c] for c in n.STATE_CONFIGS]
    cost = views.dialogue_cost_table(sub)
    overall = cost[cost["Session"] == "all"]
    assert overall["Domain"].tolist() == list(n.DOMAINS)
    for domain, value in zip(overall["Domain"], overall["Δ AP"], strict=True):
        assert value == round(sub["summary"][scoring.DIALOGUE_COST][domain]["mean"], 3)
    heat = views.entry_rate_matrix(sub)
    i2c = sub["summary"][n.ABSTRACTION_CONFIGS[0]]["metrics"]["entry_rate@10"]
    for role, rate in i2c.items():
        assert heat.loc[role, n.DISPLAY_NAMES[n.ABSTRACTION_CONFIGS[0]]] == rate
    profiles = views.profile_table(sub)
    assert set(profiles["Profile"]) <= set(n.PROFILES)
