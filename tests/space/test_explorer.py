"""The query explorer and `triad report`: roles shown are the dataset's, ranks are the submitted ranking's, the
violated requirement is named by the positive rule, and the report's numbers are results.json's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spaces_app import explorer as ex
from spaces_app.gold import load_gold
from spaces_app.report import MAX_WORST, build_report, read_run, score, write_report
from tests.doubles.space_runs import ark_random_rankings, random_rankings, write_run
from triad_dataset.contract import names as n
from triad_dataset.contract.errors import TriadError
from triad_dataset.contract.rule import Condition, RuleChecker
from triad_dataset.contract.schema import schema_for
from triad_dataset.folder import io as folder

CARS_REFERENCE = {
    "brand": "Toyota",
    "year": "2000",
    "body_type": "Minivan",
    "colour": "silver",
    "view": "side",
    "setting": "street",
    "model": "Sienna",
}


def test_rule_names_each_failed_requirement():
    """Derived by hand from paper A.2 and the Cars schema: colour and setting are conditions, year is ordered
    ("newer" than 2000), the view is a constraint attribute the query does not name (so it must stay), and the
    model is modifiable with budget 0 unless the make or body type changes."""
    conditions = [
        Condition("colour", "P", "black"),
        Condition("setting", "N", "nature"),
        Condition("year", "P", "newer"),
    ]
    checker = RuleChecker(schema_for("cars"), CARS_REFERENCE, conditions)
    item = {**CARS_REFERENCE, "colour": "red", "setting": "nature", "year": "1999", "view": "rear", "model": "Camry"}
    assert checker.explain(item) == [
        "colour red, asked black",
        "setting nature, asked not nature",
        "year 1999, asked newer than 2000",
        "view rear, must stay side",
        "changes model; at most 0 of these may change",
    ]
    assert checker.explain({**CARS_REFERENCE, "colour": "black", "year": "2001"}) == []


@pytest.fixture(scope="module")
def triad_run(mini_triad_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    gold = load_gold(mini_triad_dir)
    rankings = random_rankings(gold.rows, seed=3)
    return write_run(tmp_path_factory.mktemp("run") / "random", gold.rows, rankings, fingerprint=gold.fingerprint)


@pytest.mark.slow
def test_view_shows_the_datasets_roles_and_the_submitted_ranks(mini_triad_dir: Path, triad_run: Path):
    gold = load_gold(mini_triad_dir)
    corpus = ex.Corpus(mini_triad_dir)
    run = read_run(triad_run)
    scored = score(run, gold)
    for config in n.TASK_CONFIGS:
        for row in gold.rows[config][:3]:
            ranking = run.rankings[config][row["query_id"]]
            view = ex.triad_view(corpus, config, row, ranking)
            roles = dict(zip(row["candidate_ids"], row["candidate_roles"], strict=True))
            assert [s.item_id for s in view.shown] == list(ranking.candidate_ids[: ex.TOP_K])
            assert [s.rank for s in view.shown] == list(range(1, ex.TOP_K + 1))
            assert [s.role for s in view.shown] == [roles[s.item_id] for s in view.shown]
            expected = [i + 1 for i, c in enumerate(ranking.candidate_ids) if c in set(row["positive_ids"])]
            assert view.positive_ranks == expected
            assert view.value == pytest.approx(scored[config]["per_query_ap"][row["query_id"]], abs=1e-12)


@pytest.mark.slow
def test_typed_negatives_name_the_requirement_they_fail(mini_triad_dir: Path):
    """Every typed negative of a constraints query, whatever its rank, says which requirement it fails, and the
    requirements named agree with its role (a p_violation fails a requested value, an n_violation an excluded one)."""
    gold = load_gold(mini_triad_dir)
    corpus = ex.Corpus(mini_triad_dir)
    row = next(r for r in gold.rows["constraints_cars"] if n.PN_VIOLATION in r["candidate_roles"])
    view = ex.triad_view(corpus, "constraints_cars", row, ex.QueryRanking(row["candidate_ids"]), k=n.POOL_SIZE)
    typed = [s for s in view.shown if s.role in (n.P_VIOLATION, n.N_VIOLATION, n.PN_VIOLATION, n.IMPLICIT_VIOLATION)]
    assert typed
    for shown in typed:
        reasons = shown.why.split(": ", 1)[1].split("; ")
        asked = [r for r in reasons if ", asked not " not in r and ", asked " in r]
        excluded = [r for r in reasons if ", asked not " in r]
        kept = [r for r in reasons if "must stay" in r or r.startswith("changes ")]
        assert bool(asked) == (shown.role in (n.P_VIOLATION, n.PN_VIOLATION)), shown
        assert bool(excluded) == (shown.role in (n.N_VIOLATION, n.PN_VIOLATION)), shown
        assert bool(kept) == (shown.role == n.IMPLICIT_VIOLATION), shown


@pytest.mark.slow
def test_state_view_has_every_turn(mini_triad_dir: Path, triad_run: Path):
    gold = load_gold(mini_triad_dir)
    row = next(r for r in gold.rows["state_fashion"] if len(r["turns"]) == 3)
    view = ex.triad_view(
        ex.Corpus(mini_triad_dir), "state_fashion", row, read_run(triad_run).rankings["state_fashion"][row["query_id"]]
    )
    assert view.turns == list(row["turns"]) and view.facts["session_type"] == row["session_type"]
    assert view.conditions and view.image == ex.ImageKey(n.DOMAIN_CORPUS["fashion"], row["query_image_id"])


@pytest.mark.slow
def test_report_numbers_are_results_json(mini_triad_dir: Path, triad_run: Path, tmp_path: Path):
    out = write_report([triad_run], tmp_path / "r.html", data=mini_triad_dir, worst_n=2, thumbs_root=tmp_path / "th")
    text = out.read_text(encoding="utf-8")
    results = read_run(triad_run).results
    shown = dict(re.findall(r'<td class="num" data-config="([a-z_0-9]+)">([0-9.]+)</td>', text))
    assert set(shown) == set(n.TASK_CONFIGS)
    for config, value in shown.items():
        assert value == f"{results['configs'][config]['metrics']['map']:.4f}"
    assert 'class="bad"' not in text
    assert not re.search(r'(src|href)="(?!data:|#)', text)  # nothing to fetch: opens offline
    assert text.count('class="qv"') == 2 * len(n.TASK_CONFIGS)


@pytest.mark.slow
def test_report_refuses_another_folders_run(mini_triad_dir: Path, triad_run: Path, tmp_path: Path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "rankings").mkdir()
    for f in (triad_run / "rankings").iterdir():
        (other / "rankings" / f.name).write_bytes(f.read_bytes())
    (other / "results.json").write_text(
        (triad_run / "results.json").read_text().replace(load_gold(mini_triad_dir).fingerprint, "0" * 64)
    )
    with pytest.raises(TriadError, match="ranked dataset 000000000000"):
        build_report([other], data=mini_triad_dir)
    with pytest.raises(TriadError, match="no results.json"):
        build_report([tmp_path], data=mini_triad_dir)


def test_report_refuses_more_than_its_bound_before_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    from triad_cli.main import main

    out = tmp_path / "r.html"
    assert main(["report", str(tmp_path / "absent"), "--out", str(out), "--worst", str(MAX_WORST + 1)]) == 2
    assert capsys.readouterr().err == (
        f"triad report: error: --worst {MAX_WORST + 1}: a report shows at most {MAX_WORST} queries per subset\n"
    )
    assert not out.exists()
    with pytest.raises(TriadError, match="no results.json"):  # the bound itself is allowed
        build_report([tmp_path / "absent"], worst_n=MAX_WORST)


@pytest.mark.slow
def test_ark_view_and_report(tmp_path: Path):
    from ark_dataset.mini import build_ark_mini

    ark = build_ark_mini(tmp_path / "ark")
    gold = load_gold(ark)
    tables = {
        **gold.rows,
        **{s + "_gallery": folder.read_rows(ark, s + "_gallery", columns=["item_id"]) for s in gold.rows},
    }
    run = write_run(
        tmp_path / "run", tables, ark_random_rankings(tables, seed=1), benchmark="ark", fingerprint=gold.fingerprint
    )
    loaded = read_run(run)
    subtype = next(iter(gold.rows))
    row = gold.rows[subtype][0]
    view = ex.ark_view(ex.Corpus(ark), subtype, row, loaded.rankings[subtype][row["query_id"]])
    assert view.positive_ranks == [loaded.rankings[subtype][row["query_id"]].positive_rank]
    assert view.facts["subtype"] == subtype and view.facts["knowledge domain"] == row["domain"]
    text = build_report([run], data=ark, worst_n=1, thumbs_root=tmp_path / "th")
    shown = dict(re.findall(r'<td class="num" data-config="([a-z_0-9]+)">([0-9.]+)</td>', text))
    assert shown[subtype] == f"{loaded.results['configs'][subtype]['metrics']['recall@1']:.4f}"


@pytest.mark.slow
def test_space_explorer_renders_a_stored_submission(mini_triad_dir: Path, triad_run: Path, tmp_path: Path):
    """Through the Space's own submit path: the stored top ids and positive ranks give the same view as the whole
    ranking; a hidden or unknown submission is not explorable; deleting the row removes its file."""
    from spaces_app import explore_store, explorer_tab, moderation
    from spaces_app.board import Leaderboard
    from spaces_app.settings import Settings
    from spaces_app.submit import submit_run_dir

    db = tmp_path / "space.sqlite"
    outcome = submit_run_dir(db, {"triad": mini_triad_dir}, triad_run, model_name="random-a")
    sid = outcome.submission_id
    assert sid is not None, outcome
    lb = Leaderboard(Settings(mini_triad_dir, tmp_path / "no-ark", db, None, 0, "127.0.0.1"))
    config = "constraints_cars"
    tops, ranks = explore_store.load(db, sid, config)
    gold = lb.golds.get("triad")
    run = read_run(triad_run)
    corpus = ex.Corpus(mini_triad_dir)
    for row in gold.rows[config][:5]:
        qid = row["query_id"]
        whole = ex.triad_view(corpus, config, row, run.rankings[config][qid])
        stored = ex.triad_view(corpus, config, row, tops[qid], positive_ranks=ranks[qid])
        assert [s.item_id for s in stored.shown] == [s.item_id for s in whole.shown]
        assert [s.role for s in stored.shown] == [s.role for s in whole.shown]
        assert stored.positive_ranks == whole.positive_ranks and stored.value == whole.value
    page = explorer_tab.render(lb, "triad", sid, "", config, explorer_tab.MODES[0])
    worst_qid = ex.worst(lb.db.query_scores(sid, config), 1)[0]
    assert f'data-query="{worst_qid}"' in page and page.count('class="cand') == ex.TOP_K
    assert "pick a submission shown on the board" in explorer_tab.render(lb, "triad", sid + 1, "", config, "random")
    moderation.apply(lb.db, "token", "token", sid, "delete")
    assert lb.db.submissions("triad") == []
    assert explore_store.load(db, sid, config) == ({}, {})


@pytest.mark.slow
def test_constraints_view_names_its_reference_product(mini_triad_dir: Path):
    """The reference product shown is the query's `query_image_id` row: its id, text and the attribute values the
    positive rule compares against (the same values `RuleChecker` is built from)."""
    gold = load_gold(mini_triad_dir)
    corpus = ex.Corpus(mini_triad_dir)
    row = gold.rows["constraints_cars"][0]
    view = ex.triad_view(corpus, "constraints_cars", row, ex.QueryRanking(row["candidate_ids"]))
    item = folder.read_rows(mini_triad_dir, n.CANDIDATE_CORPUS["constraints_cars"], columns=["item_id", "text"])
    text = next(r["text"] for r in item if r["item_id"] == row["query_image_id"])
    parts = view.reference.split(" · ")
    assert parts[:2] == [row["query_image_id"], text]
    values = dict(pair.split(" ", 1) for pair in parts[2].split(", "))
    assert set(values) <= set(corpus.schema("cars").names) and values.get("brand")
    same = ex.triad_view(corpus, "same_cars", gold.rows["same_cars"][0], ex.QueryRanking([]))
    assert same.reference == ""
