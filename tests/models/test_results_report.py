"""`triad results` as a reporting tool: every format, folders and globs, and `--compare` printing what the
leaderboard's Compare tab shows for the same two runs (one implementation: metrics/core/paired.py)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from spaces_app import views
from spaces_app.db import Database
from spaces_app.gold import GoldStore
from spaces_app.submit import RateLimit, submit_files
from tests.doubles import space_runs as testing
from triad_cli.main import main
from triad_dataset.contract import names as n


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_line_error(capsys, *args: str) -> str:
    code, _, err = _cli(capsys, *args)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("triad results: error: "), err
    return lines[0].removeprefix("triad results: error: ")


def _write(folder: Path, name: str, maps: dict, fingerprint: str = "f", complete: bool = True) -> str:
    configs = {
        c: {"n_queries": 4, "metrics": {"map": m}, "intervals": {"map": [m - 0.125, m + 0.125]}, "chance": 0.0625}
        for c, m in maps.items()
    }
    results = {"benchmark": "triad", "complete": complete, "model": {"name": name, "source": "s", "revision": "r"},
               "dataset": {"fingerprint": fingerprint}, "configs": configs}  # fmt: skip
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    return str(folder)


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[str, str]:
    a = _write(tmp_path / "runs" / "a-triad", "alpha", {"state_cars": 0.5, "abstraction_i2c": 0.25})
    b = _write(tmp_path / "runs" / "b-triad", "be|ta", {"state_cars": 0.75}, complete=False)
    return a, b


def test_markdown_is_a_table_to_paste(two_runs, capsys) -> None:
    code, out, _ = _cli(capsys, "results", *two_runs, "--format", "markdown")
    assert code == 0
    assert out.splitlines() == [
        "**TRIAD · mAP [95% CI] per subset**",
        "",
        r"| config | name | chance | alpha | be\|ta (partial) |",
        "|---|---|---|---|---|",
        "| state_cars | C-Cars | 0.0625 | 0.5000 [0.3750, 0.6250] | 0.7500 [0.6250, 0.8750] |",
        "| abstraction_i2c | I2C | 0.0625 | 0.2500 [0.1250, 0.3750] | — |",
    ]


def test_latex_is_a_booktabs_tabular_with_escaped_cells(two_runs, capsys) -> None:
    code, out, _ = _cli(capsys, "results", *two_runs, "--format", "latex")
    assert code == 0
    assert out.splitlines() == [
        r"% TRIAD $\cdot$ mAP [95\% CI] per subset",
        r"\begin{tabular}{llrrr}",
        r"\toprule",
        r"config & name & chance & alpha & be\textbar{}ta (partial) \\",
        r"\midrule",
        r"state\_cars & C-Cars & 0.0625 & 0.5000 [0.3750, 0.6250] & 0.7500 [0.6250, 0.8750] \\",
        r"abstraction\_i2c & I2C & 0.0625 & 0.2500 [0.1250, 0.3750] & --- \\",
        r"\bottomrule",
        r"\end{tabular}",
    ]


def test_csv_and_json_hold_unrounded_records_with_who_made_them(two_runs, capsys) -> None:
    code, out, _ = _cli(capsys, "results", *two_runs, "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["config"], r["run"], r["value"], r["ci_low"], r["complete"]) for r in rows] == [
        ("state_cars", "alpha", "0.5", "0.375", "True"),
        ("state_cars", "be|ta (partial)", "0.75", "0.625", "False"),
        ("abstraction_i2c", "alpha", "0.25", "0.125", "True"),
    ]
    assert {r["path"] for r in rows} == set(two_runs) and {r["metric"] for r in rows} == {"map"}
    code, out, _ = _cli(capsys, "results", *two_runs, "--format", "json")
    (table,) = json.loads(out)
    assert [r["model"] for r in table["runs"]] == ["alpha", "be|ta"] and table["runs"][0]["revision"] == "r"
    assert [(r["config"], r["value"]) for r in table["rows"]] == [
        ("state_cars", 0.5),
        ("state_cars", 0.75),
        ("abstraction_i2c", 0.25),
    ]


def test_a_folder_of_runs_and_a_quoted_glob_expand_to_their_run_folders(two_runs, tmp_path, capsys) -> None:
    _, expected, _ = _cli(capsys, "results", *two_runs)
    for arg in (str(tmp_path / "runs"), str(tmp_path / "runs" / "*-triad")):
        code, out, _ = _cli(capsys, "results", arg)
        assert code == 0 and out == expected
    (tmp_path / "empty").mkdir()
    assert _one_line_error(capsys, "results", str(tmp_path / "empty")) == (
        f"{tmp_path / 'empty'}: no run folder (a folder holding results.json) there; pass `triad run --out` folders"
    )
    assert _one_line_error(capsys, "results", str(tmp_path / "nothing-*")).startswith(
        f"{tmp_path / 'nothing-*'}: no run folder"
    )


def test_an_unknown_format_is_refused_by_the_parser(two_runs, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["results", *two_runs, "--format", "html"])
    assert exc.value.code == 2 and "invalid choice: 'html'" in capsys.readouterr().err


# --- --compare: the Compare tab's numbers and verdicts ----------------------------------------------------------
@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A TRIAD gold, two runs of different skill written as `triad run` writes them, both submitted to a Space."""
    root = tmp_path_factory.mktemp("results_compare")
    tables = testing.triad_tables(30, 40, seed=11, configs=n.MAIN_CONFIGS)
    testing.write_triad_gold(root / "triad", tables, 40)
    db, golds = Database(root / "db.sqlite"), GoldStore({"triad": root / "triad"})
    runs = []
    for i, skill in enumerate((1.2, 0.9)):
        run = testing.write_run(root / f"run{i}", tables, testing.skilled_rankings(tables, skill, seed=70 + i))
        out = submit_files(
            db,
            golds,
            sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"],
            model_name=f"m{i}",
            submitter="t",
            rate_limit=RateLimit(99, 60),
        )
        assert out.accepted, out.message
        runs.append(str(run))
    return {"db": db, "runs": runs}


def _compare_tab(db: Database) -> tuple[list[dict], list[dict]]:
    """The Space's Compare table for A = the first submission, B = the second: its values, and as the tab shows it."""
    sa, sb = sorted(db.submissions("triad"), key=lambda s: s["id"])
    table = views.paired_comparison(sa, sb, db.query_scores)
    return table.to_dict(orient="records"), views.for_display(table).to_dict(orient="records")


def test_compare_prints_the_compare_tabs_table_and_verdicts(board, capsys) -> None:
    values, tab = _compare_tab(board["db"])
    assert len(tab) == 6 and len({row["Significant?"] for row in tab}) > 1  # the runs differ on some subsets only
    code, out, _ = _cli(capsys, "results", *board["runs"], "--compare", "--format", "csv")
    assert code == 0
    printed = list(csv.DictReader(io.StringIO(out)))
    assert [r.pop("config") for r in printed] == list(n.MAIN_CONFIGS)
    assert printed == [{k: str(v) for k, v in row.items()} for row in values]
    code, out, _ = _cli(capsys, "results", *board["runs"], "--compare", "--format", "markdown")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "**TRIAD · paired comparison, A − B per subset: synthetic vs synthetic**"
    body = [line for line in lines if line.startswith("| ") and not line.startswith("| Subset")]
    assert body == ["| " + " | ".join(str(v) for v in row.values()) + " |" for row in tab]
    assert f"A = synthetic ({board['runs'][0]})" in lines and "metrics/core/paired.py" in out


def test_compare_refuses_what_it_cannot_pair_in_one_line(board, two_runs, tmp_path, capsys) -> None:
    a, b = board["runs"]
    assert _one_line_error(capsys, "results", a, "--compare") == f"--compare takes exactly two runs, got 1: {a}"
    assert _one_line_error(capsys, "results", *two_runs, "--compare") == (
        f"{two_runs[0]}: results.json has no per_query_ap for abstraction_i2c; re-run `triad run` to write it"
    )
    other = _write(tmp_path / "other", "o", {"state_cars": 0.5}, fingerprint="elsewhere")
    results = json.loads((Path(a) / "results.json").read_text())
    results["dataset"]["fingerprint"] = "here"
    moved = tmp_path / "here"
    moved.mkdir()
    (moved / "results.json").write_text(json.dumps(results))
    assert _one_line_error(capsys, "results", str(moved), other, "--compare") == (
        f"{other}: ranked another dataset folder than {moved} (fingerprints differ); compare runs of one folder"
    )
    ark = tmp_path / "ark"
    ark.mkdir()
    (ark / "results.json").write_text(json.dumps({"benchmark": "ark", "configs": {}}))
    assert _one_line_error(capsys, "results", a, str(ark), "--compare") == (
        f"{ark}: an ARK run; --compare pairs the per-query APs of two TRIAD runs"
    )


NOISE_ENCODER = """
import hashlib

import numpy as np


class Noise:
    dim, revision, name = 16, "v1", "noise"

    def _vectors(self, batch):
        seeds = [int(hashlib.sha256(repr((i.text, i.image)).encode()).hexdigest()[:8], 16) for i in batch]
        return np.stack([np.random.default_rng(s).normal(size=self.dim) for s in seeds])

    encode_queries = encode_candidates = _vectors


def build():
    return Noise()
"""


@pytest.mark.slow
def test_compare_of_two_real_runs_prints_what_the_compare_tab_shows(mini_triad_dir, tmp_path, capsys) -> None:
    """The README's encoder and a random one run through `triad run`, both stored through the Space's own submission
    path: `--compare --format markdown` prints the Compare tab's rows and verdicts."""
    from spaces_app.submit import submit_run_dir

    (tmp_path / "noise.py").write_text(NOISE_ENCODER, encoding="utf-8")
    readme_encoder = str(Path(__file__).resolve().parents[2] / "examples" / "my_encoder.py")
    runs = []
    for name, encoder in (("bag-of-words", readme_encoder), ("noise", str(tmp_path / "noise.py"))):
        out = tmp_path / name
        args = [
            "run",
            "--encoder",
            f"{encoder}:build",
            "--name",
            name,
            "--data",
            str(mini_triad_dir),
            "--out",
            str(out),
        ]
        assert main([*args, "--config", ",".join(n.MAIN_CONFIGS), "--quiet", "--cache-dir", str(tmp_path / "c")]) == 0
        outcome = submit_run_dir(tmp_path / "db.sqlite", {"triad": mini_triad_dir}, out, model_name=name)
        assert outcome.submission_id is not None, outcome.message
        runs.append(str(out))
    capsys.readouterr()
    _, tab = _compare_tab(Database(tmp_path / "db.sqlite"))
    assert len(tab) == 6 and any(row["Significant?"] == "yes: A better" for row in tab)
    code, out, _ = _cli(capsys, "results", *runs, "--compare", "--format", "markdown")
    body = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| Subset")]
    assert code == 0 and body == ["| " + " | ".join(str(v) for v in row.values()) + " |" for row in tab]
    assert out.splitlines()[0] == "**TRIAD · paired comparison, A − B per subset: bag-of-words vs noise**"
