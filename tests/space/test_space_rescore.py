"""`triad space rescore`: a stored row's summary recomputed from what it keeps of its rankings (an old row gains a
diagnostic it was stored without), one line per row, idempotent, and a database it cannot open refused in one line."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ark_dataset import names as ark_names
from metrics.scoring import DIALOGUE_COST, PAPER_DIAGNOSTICS
from spaces_app import diagnostics
from spaces_app.db import Database
from spaces_app.rescore import SHARED_POOL, Kept, kept_order
from spaces_app.submit import submit_run_dir
from tests.doubles import space_runs as testing
from triad_cli.main import main

OLD_ROW_LACKS = (PAPER_DIAGNOSTICS, DIALOGUE_COST)  # what a row stored before these diagnostics existed lacks


@pytest.fixture
def board(tmp_path: Path) -> dict[str, Any]:
    tables = testing.triad_tables(8, 30, seed=7)
    testing.write_triad_gold(tmp_path / "triad", tables, 30)
    ark = testing.ark_tables(4, 20, seed=8, subtypes=ark_names.SUBTYPES[:2])
    testing.write_ark_gold(tmp_path / "ark", ark)
    db, gold = tmp_path / "space.sqlite", {"triad": tmp_path / "triad", "ark": tmp_path / "ark"}
    runs = [
        testing.write_run(tmp_path / "run", tables, testing.skilled_rankings(tables, 1.5, seed=1)),
        testing.write_run(tmp_path / "ark-run", ark, testing.ark_skilled_rankings(ark, 1.0, seed=2), benchmark="ark"),
    ]
    for i, run in enumerate(runs):
        assert submit_run_dir(db, gold, run, model_name=f"model {i}", family="vlm").accepted
    args = ["space", "rescore", "--db", str(db), "--data", str(gold["triad"]), "--ark-data", str(gold["ark"])]
    return {"db": db, "args": args}


def _numbers(node: Any, prefix: str = "") -> dict[str, float]:
    if isinstance(node, dict):
        out: dict[str, float] = {}
        for k, v in node.items():
            out.update(_numbers(v, f"{prefix}/{k}"))
        return out
    return {prefix: float(node)} if isinstance(node, int | float) and not isinstance(node, bool) else {}


def _rescore(board: dict[str, Any], capsys: pytest.CaptureFixture) -> list[str]:
    capsys.readouterr()
    assert main(board["args"]) == 0
    return capsys.readouterr().out.splitlines()


def test_an_old_row_gains_the_diagnostics_it_lacked(board: dict[str, Any], capsys: pytest.CaptureFixture) -> None:
    db = Database(board["db"])
    triad, ark = db.submissions()
    original = triad["summary"]
    shared = {"fashion": {"delta": 0.123456, "n_pairs": 3, "by_session": {}}}  # not what the ranking gives
    old = {k: v for k, v in original.items() if k not in OLD_ROW_LACKS}
    old[PAPER_DIAGNOSTICS] = {SHARED_POOL: shared}  # what the kept top cannot recompute stays as stored
    db.set_summary(int(triad["id"]), old)
    ark_old = {k: v for k, v in ark["summary"].items() if k != "by_reasoning_skill"}
    db.set_summary(int(ark["id"]), ark_old)
    cost = next(d for d in diagnostics.DIAGNOSTICS if d.label == "Dialogue cost: table")
    assert cost.value(db.submissions()[0], {}).empty  # the old row shows an empty panel

    lines = _rescore(board, capsys)
    assert lines == [
        f"row {triad['id']} (model 0, TRIAD): summary recomputed from its kept rankings (10 configs)",
        f"row {ark['id']} (model 1, ARK): summary recomputed from its kept rankings (2 configs)",
        "rescored: 2 row(s) changed",
    ]
    now_triad, now_ark = Database(board["db"]).submissions()
    assert now_triad["summary"][PAPER_DIAGNOSTICS][SHARED_POOL] == shared
    expected = {**original, PAPER_DIAGNOSTICS: {**original[PAPER_DIAGNOSTICS], SHARED_POOL: shared}}
    got, want = _numbers(now_triad["summary"]), _numbers(expected)
    assert got.keys() == want.keys() and got == pytest.approx(want, abs=1e-12)
    assert _numbers(now_ark["summary"]) == pytest.approx(_numbers(ark["summary"]), abs=1e-12)
    assert len(cost.value(now_triad, {})) == len(cost.value(triad, {})) > 0  # the panel is filled
    assert {c: s.value for c, s in now_triad["scores"].items()} == {c: s.value for c, s in triad["scores"].items()}


def test_rescore_is_idempotent(board: dict[str, Any], capsys: pytest.CaptureFixture) -> None:
    _rescore(board, capsys)
    before = [json.dumps(s["summary"], sort_keys=True) for s in Database(board["db"]).submissions()]
    lines = _rescore(board, capsys)
    assert [line.split(": ", 1)[1] for line in lines[:-1]] == ["unchanged", "unchanged"]
    assert lines[-1] == "rescored: 0 row(s) changed"
    assert [json.dumps(s["summary"], sort_keys=True) for s in Database(board["db"]).submissions()] == before


def test_a_database_it_cannot_open_is_one_line_and_exit_2(
    board: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not an SQLite file" * 100)
    for path, said in (
        (bad, "not a readable leaderboard database (file is not a database)"),
        (tmp_path / "absent.sqlite", "no leaderboard database there; give the file with --db"),
    ):
        capsys.readouterr()
        assert main(["space", "rescore", "--db", str(path)]) == 2
        err = capsys.readouterr().err
        assert said in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert not (tmp_path / "absent.sqlite").exists()
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(bad).execute("SELECT 1 FROM meta")  # the file is left as it was


def test_kept_order_puts_the_kept_top_and_positives_in_place() -> None:
    pool = ["a", "b", "c", "d", "e", "f"]
    labels = np.array([0, 1, 0, 1, 0, 0, 0])  # b and d are positives; one padding slot
    order, guessed = kept_order(pool, labels, 7, Kept(["c", "b"], [2, 5]))
    assert order.tolist() == [2, 1, 0, 4, 3, 5, 6]  # c, b kept; d at rank 5; a, e, f in pool order; padding last
    assert not guessed  # one positive below the top: its identity is known
    _, guessed = kept_order(pool, labels, 7, Kept(["c"], [3, 4]))
    assert guessed
    with pytest.raises(ValueError, match="positive ranks"):
        kept_order(pool, labels, 7, Kept(["c", "b"], [2]))
