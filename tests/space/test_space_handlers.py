"""The Space's tab handlers and endpoints called as plain functions of a `Leaderboard`, without Blocks."""

from __future__ import annotations

import inspect
import typing
from pathlib import Path
from types import SimpleNamespace

import gradio as gr
import pytest

from spaces_app import endpoints, handlers
from spaces_app.board import Leaderboard
from spaces_app.settings import Settings
from tests.doubles import space_runs as testing
from triad_dataset.contract import names as n

POOL = 8
TOKEN = "handler-token"
REQUEST = SimpleNamespace(client=SimpleNamespace(host="127.0.0.1"), headers={})


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("space_handlers")
    tables = testing.triad_tables(4, POOL, seed=21, configs=list(n.MAIN_CONFIGS))
    testing.write_triad_gold(root / "triad", tables, POOL)
    run = testing.write_run(root / "run", tables, testing.random_rankings(tables, seed=22))
    return {"root": root, "run": run}


def board(world: dict, tmp_path: Path, *, oauth: bool = False) -> Leaderboard:
    root = world["root"]
    return Leaderboard(
        Settings(root / "triad", root / "no-ark", tmp_path / "s.sqlite", TOKEN, 0, "127.0.0.1", oauth=oauth)
    )


def files(run: Path) -> list[str]:
    return [str(p) for p in [*sorted((run / "rankings").glob("*.parquet")), run / "results.json"]]


def test_bound_handlers_keep_the_name_hints_and_signature_gradio_reads(world: dict, tmp_path: Path) -> None:
    lb = board(world, tmp_path)
    table = lb.bind(handlers.triad_table)
    assert table.__name__ == "triad_table"
    assert list(inspect.signature(table).parameters) == ["search", "family", "sort_by", "every_row"]
    submit = lb.bind(endpoints.WithLogin.submit)
    assert submit.__name__ == "submit"
    hints = typing.get_type_hints(submit)  # what Gradio's special_args reads to inject the request and profile
    assert hints["request"] is gr.Request and hints["profile"] == (gr.OAuthProfile | None)
    assert "profile" not in inspect.signature(lb.bind(endpoints.Anonymous.submit)).parameters


def test_a_submission_through_the_functions(world: dict, tmp_path: Path) -> None:
    lb = board(world, tmp_path)
    assert endpoints.leaderboard(lb) == [] and handlers.triad_table(lb).empty
    answer = endpoints.Anonymous.submit(lb, files(world["run"]), "handler model", "", "other", "", REQUEST)
    assert answer.startswith("Accepted"), answer
    rows = endpoints.leaderboard(lb)
    assert [(r["Model"], r["Submitter"]) for r in rows] == [("handler model", "local")]
    sid = rows[0]["id"]
    assert handlers.triad_table(lb)["Model"].tolist() == ["handler model"]
    assert endpoints.submission(lb, sid)["id"] == sid
    meta, per_subset = handlers.detail(lb, sid)
    assert not meta.empty and len(per_subset) == len(n.MAIN_CONFIGS)
    assert handlers.compare(lb, sid, sid)[2] == "Pick two different submissions."
    assert handlers.compare(lb, sid, None)[2] == "Pick two submissions."
    with pytest.raises(gr.Error) as refused:
        endpoints.submission(lb, 999)
    assert refused.value.message == "no visible submission with id 999"


def test_refusals_of_the_endpoints(world: dict, tmp_path: Path) -> None:
    lb = board(world, tmp_path, oauth=True)
    assert endpoints.WithLogin.submit(lb, files(world["run"]), "m", "", "other", "", REQUEST, None) == (
        "Rejected: log in with Hugging Face (the button at the top) to submit. Nothing was stored."
    )
    message, table = endpoints.WithLogin.admin(lb, "wrong", 1, "hide", REQUEST, None)
    assert (message, table.empty) == ("Wrong admin token.", True)
    with pytest.raises(gr.Error) as refused:
        endpoints.WithLogin.verify_tasks(lb, "wrong", None, REQUEST, None)
    assert refused.value.message == "wrong admin token"
    with pytest.raises(gr.Error) as refused:
        endpoints.WithLogin.verify_report(lb, TOKEN, 1, "maybe", "{}", REQUEST, None)
    assert refused.value.message == "outcome must be 'verified', 'failed' or 'unverified'"
    with pytest.raises(gr.Error) as refused:
        endpoints.leaderboard(lb, "other")
    assert refused.value.message == "benchmark must be 'triad' or 'ark'"
