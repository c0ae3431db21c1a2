"""A leaderboard that explains itself — track headers and legends, the chance level from the gold, links,
Compare's one decision rule, texts that say what the code does, and the plots' data (spaces_app/legend.py,
chance.py, significance.py, plots.py)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from ark_dataset import names as ark_names
from spaces_app import chance, legend, plots, significance, views
from spaces_app.db import Database
from spaces_app.gold import GoldStore, load_gold
from spaces_app.submit import RateLimit, submit_files
from tests.doubles import space_runs as testing
from triad_dataset.contract import names as n
from triad_dataset.folder.audit import summarize_config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("space_explained")
    tables = testing.triad_tables(24, 40, seed=5)
    testing.write_triad_gold(root / "triad", tables, 40)
    ark = testing.ark_tables(12, 25, seed=6, subtypes=ark_names.SUBTYPES[:4])
    testing.write_ark_gold(root / "ark", ark)
    db, golds = Database(root / "db.sqlite"), GoldStore({"triad": root / "triad", "ark": root / "ark"})
    for i, skill in enumerate((0.0, 0.3, 2.0)):
        run = testing.write_run(root / f"run{i}", tables, testing.skilled_rankings(tables, skill, seed=30 + i))
        out = submit_files(
            db,
            golds,
            sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"],
            model_name=f"m{i}",
            submitter="t",
            rate_limit=RateLimit(99, 60),
        )
        assert out.accepted, out.message
    for i in range(2):
        run = testing.write_run(root / f"ark{i}", ark, testing.ark_random_rankings(ark, seed=40 + i), benchmark="ark")
        out = submit_files(
            db,
            golds,
            sorted((run / "rankings").glob("*.parquet")),
            model_name=f"a{i}",
            submitter="t",
            rate_limit=RateLimit(99, 60),
        )
        assert out.accepted, out.message
    return {"root": root, "tables": tables, "ark": ark, "db": db, "golds": golds}


# --- chance level -------------------------------------------------------------------------------------------------
def _enumerated_random_ap(n_candidates: int, n_positives: int) -> float:
    """The mean AP over every ordering of a pool (an independent check of the closed form)."""
    aps = []
    for positions in itertools.combinations(range(1, n_candidates + 1), n_positives):
        aps.append(np.mean([(k + 1) / rank for k, rank in enumerate(positions)]))
    return float(np.mean(aps))


@pytest.mark.parametrize(("size", "positives"), [(1, 1), (5, 1), (6, 2), (9, 4), (12, 12)])
def test_the_chance_formula_is_the_mean_ap_over_every_ordering(size: int, positives: int) -> None:
    assert chance._random_ap(size, positives) == pytest.approx(_enumerated_random_ap(size, positives), abs=1e-12)


def test_chance_of_the_served_gold_equals_the_build_audit(world: dict) -> None:
    gold = load_gold(world["root"] / "triad")
    got = chance.triad_chance(gold)
    assert set(got) == set(n.TASK_CONFIGS)
    for config, rows in world["tables"].items():
        assert round(got[config], 6) == summarize_config(config, rows)["random_map"]  # `triad audit`'s figure


def test_ark_chance_is_one_over_the_gallery(world: dict) -> None:
    gold = load_gold(world["root"] / "ark")
    assert chance.ark_chance(gold) == {s: 1 / 25 for s in ark_names.SUBTYPES[:4]}
    by_domain = chance.ark_chance_by(gold, "domain")
    assert by_domain == {ark_names.SUBTYPE_DOMAIN[s]: pytest.approx(1 / 25) for s in ark_names.SUBTYPES[:4]}
    skills = {sk for s in ark_names.SUBTYPES[:4] for r in world["ark"][s] for sk in r["reasoning_skills"]}
    assert set(chance.ark_chance_by(gold, "reasoning_skill")) == skills
    with pytest.raises(ValueError, match="axis"):
        chance.ark_chance_by(gold, "subtype")


# --- legend, links, texts --------------------------------------------------------------------------------------------
def test_every_column_header_names_its_track() -> None:
    tracks = {
        "abstraction": "Abstraction",
        "constraints": "Constraints",
        "state": "State",
        "self": "Self",
        "same": "Same",
    }
    for config in n.MAIN_CONFIGS + n.REFERENCE_CONFIGS:
        head = legend.header(config)
        assert head.startswith(tracks[config.split("_")[0]]), head
        assert legend.COLUMNS[config].tooltip and "\n" not in legend.COLUMNS[config].tooltip
    assert [legend.header(c) for c in n.MAIN_CONFIGS] == [
        "Abstraction I2C",
        "Abstraction C2I",
        "Constraints Fashion",
        "Constraints Cars",
        "State Fashion",
        "State Cars",
    ]
    md = legend.legend_markdown(n.MAIN_CONFIGS, {n.MAIN_CONFIGS[0]: 0.00823})
    assert "| **Abstraction I2C** | I2C |" in md and "| 0.0082 |" in md and md.count("| – |") == 5


def test_links_never_invent_an_address() -> None:
    plain = legend.links_markdown({})
    assert f"]({legend.TRIAD_PAPER_URL})" in plain and plain.count("](") == 1  # only the TRIAD paper is known
    assert "TRIAD_SPACE_REPO_URL" in plain
    on_space = legend.links_markdown({"SPACE_ID": "org/triad-board"})
    assert "](https://huggingface.co/spaces/org/triad-board/tree/main)" in on_space
    configured = legend.links_markdown(
        {
            legend.REPO_URL_ENV: "https://example.org/code",
            legend.DATASET_URL_ENV: "https://huggingface.co/datasets/org/triad",
        }
    )
    assert "](https://example.org/code)" in configured and "](https://huggingface.co/datasets/org/triad)" in configured
    hostile = legend.links_markdown({legend.REPO_URL_ENV: "javascript:alert(1)", "SPACE_ID": "x)<img src=x>"})
    assert "javascript" not in hostile and "<img" not in hostile


def test_texts_say_what_the_code_does() -> None:
    from model_adapters.ranks.rank_plan import ARK_TOP
    from spaces_app import app
    from spaces_app.validation import ARK_MIN_DEPTH

    assert app.ARK_TOP == ARK_TOP
    note = legend.ARK_TAB_NOTE.format(top=app.ARK_TOP, depth=ARK_MIN_DEPTH)
    assert f"top {ARK_TOP} " in note and f"at least the top {ARK_MIN_DEPTH} ids" in note
    assert "--benchmark ark" not in app.ABOUT and "audit.json" in app.ABOUT  # ARK is detected from the folder
    assert f"at least the top {ARK_MIN_DEPTH}" in app.ABOUT
    docs = (ROOT / "docs" / "space.md").read_text(encoding="utf-8")
    assert f"top {ARK_TOP}" in docs and f"at least the top {ARK_MIN_DEPTH}" in docs and "--benchmark ark" not in docs
    assert "Significant?" in docs and "spaces_app/significance.py" in docs


def test_the_card_loses_its_yaml_header() -> None:
    assert legend.card_markdown("---\nconfigs: []\n---\n# TRIAD\ntext") == "# TRIAD\ntext"
    assert legend.card_markdown("# no header") == "# no header"


# --- Compare: one decision rule ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("p", "lo", "hi", "effect", "expected"),
    [
        (0.001, 0.02, 0.09, 0.4, "yes: A better"),
        (0.001, -0.09, -0.02, -0.4, "yes: B better"),
        (0.3, -0.01, 0.05, 0.1, "no"),
        (0.008, -0.097, 0.002, -0.2, "no: Wilcoxon p_Holm < 0.05, but the 95% interval includes 0"),  # the case
        (0.2, 0.01, 0.05, 0.1, "no: the 95% interval excludes 0, but Wilcoxon p_Holm ≥ 0.05"),
        (0.01, 0.01, 0.05, -0.3, "no: Wilcoxon and the interval point opposite ways"),
        (
            0.01,
            0.0,
            0.05,
            0.3,
            "no: Wilcoxon p_Holm < 0.05, but the 95% interval includes 0",
        ),  # touching 0 is not excluding
        (0.01, None, None, 0.3, "no: not enough data"),
    ],
)
def test_the_decision_rule(p, lo, hi, effect, expected) -> None:
    assert significance.verdict(p, lo, hi, effect) == expected


def test_compare_never_says_yes_beside_an_interval_containing_zero(world: dict) -> None:
    db = world["db"]
    subs = db.submissions("triad")
    verdicts = []
    for a, b in itertools.permutations(subs, 2):
        table = views.paired_comparison(a, b, db.query_scores)
        for row in table.to_dict(orient="records"):
            v = row[significance.COLUMN]
            verdicts.append(v)
            if significance.is_significant(v):
                assert row["95% CI low"] > 0 or row["95% CI high"] < 0, row
                assert float(row["Holm p"]) < significance.ALPHA
                assert (v == "yes: A better") == (row["ΔmAP (A−B)"] > 0)
            elif float(row["Holm p"]) < significance.ALPHA or row["95% CI low"] > 0 or row["95% CI high"] < 0:
                assert v.startswith("no: "), row  # a disagreement is named, not a bare "no"
    assert any(significance.is_significant(v) for v in verdicts)  # the strong model beats the random one


# --- plots: each draws the table shown under it -------------------------------------------------------------------------
def _points(ax) -> list[tuple[float, float]]:
    return [tuple(p) for line in ax.lines if line.get_marker() in ("o", "D") for p in line.get_xydata()]


def test_forest_plot_draws_the_comparison_table(world: dict) -> None:
    db = world["db"]
    a, b = db.submissions("triad")[:2]
    table = views.paired_comparison(a, b, db.query_scores)
    ax = plots.delta_forest(table).axes[0]
    ys = list(range(len(table)))[::-1]
    assert sorted(_points(ax)) == sorted(zip(table["ΔmAP (A−B)"], ys, strict=True))
    assert [t.get_text() for t in ax.get_yticklabels()] == list(table["Subset"])
    assert [t.get_text() for t in ax.texts] == list(table[significance.COLUMN])  # the verdict beside each row
    filled = [line.get_markerfacecolor() != "white" for line in ax.lines if line.get_marker() == "o"]
    assert filled == [significance.is_significant(v) for v in table[significance.COLUMN]]
    assert plots.delta_forest(table.iloc[0:0]).axes[0].texts[0].get_text().startswith("pick two")


def test_depth_and_profile_plots_draw_their_tables(world: dict) -> None:
    sub = world["db"].submissions("triad")[2]
    depth = views.depth_table(sub)
    ax = plots.depth_plot(sub, chance=0.05).axes[0]
    line = next(line for line in ax.lines if line.get_marker() == "o")
    assert line.get_xdata().tolist() == [int(d) for d in depth["Depth"]]
    assert line.get_ydata().tolist() == depth["mAP"].tolist()
    assert any(list(line.get_ydata()) == [0.05, 0.05] for line in ax.lines)  # the chance level
    long = plots.profile_long(sub)
    for c in n.CONSTRAINTS_CONFIGS:
        by = sub["summary"][c]["diagnostics"]["map_by_profile"]
        part = long[long["Subset"] == legend.header(c)]
        assert part["mAP"].tolist() == [round(by[p]["map"], 3) for p in n.PROFILES if p in by]
        assert part["95% CI low"].tolist() == [round(by[p]["interval"][0], 3) for p in n.PROFILES if p in by]
    ax = plots.profile_plot(sub).axes[0]
    lines = [line for line in ax.lines if line.get_marker() == "o"]
    assert [line.get_label() for line in lines] == [legend.header(c) for c in n.CONSTRAINTS_CONFIGS]
    assert (
        lines[0].get_ydata().tolist() == long[long["Subset"] == legend.header(n.CONSTRAINTS_CONFIGS[0])]["mAP"].tolist()
    )


def test_dialogue_cost_plot_draws_its_table(world: dict) -> None:
    sub = world["db"].submissions("triad")[0]
    table = views.dialogue_cost_table(sub)
    ax = plots.dialogue_cost_plot(sub).axes[0]
    drawn = np.concatenate(
        [
            c.get_offsets()
            for c in ax.collections
            if c.get_offsets().shape[0]
            and c.get_offsets().shape[1] == 2
            and c.get_label() in ("domain", "session × turns")
        ]
    )
    assert sorted(drawn[:, 0].tolist()) == sorted(table["Δ AP"].tolist())
    assert len(ax.get_yticklabels()) == len(table)


def test_ark_bars_draw_their_table(world: dict) -> None:
    subs = world["db"].submissions("ark")
    for axis in ("domain", "reasoning_skill"):
        long = plots.ark_long(subs, axis)
        group = "Domain" if axis == "domain" else "Reasoning skill"
        assert len(long) == sum(len(s["summary"][f"by_{axis}"]) for s in subs)
        for s in subs:
            node = s["summary"][f"by_{axis}"]
            part = long[long["id"] == s["id"]]
            assert part["R@1"].tolist() == [
                round(node[g]["metrics"]["recall@1"], 3) for g in plots.ARK_ORDER[axis] if g in node
            ]
            assert len(part[group]) == len(node)
        ax = plots.ark_bars(subs, axis, {g: 0.04 for g in plots.ARK_ORDER[axis]}).axes[0]
        heights = sorted(round(p.get_height(), 3) for p in ax.patches)
        assert heights == sorted(long["R@1"].tolist())
    assert plots.ark_bars([], "domain").axes[0].texts[0].get_text() == "no ARK submissions yet"
