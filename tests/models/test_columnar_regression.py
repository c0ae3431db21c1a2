"""The columnar runner gives the rankings and metrics of the code before it ("for a fixed encoder,
rankings and results identical to those of the code just before this change").

`tests/data/toy_rankings_before_columnar.json` was written by the runner at commit c849dac (row-dict plan) on the
tiny TRIAD and ARK folders with `tests.doubles.folders.HashedEncoder`; the same comparison on the whole mini
edition is in docs/runner.md (every rankings parquet identical row by row, scores included).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from model_adapters.runner import RunConfig, run
from tests.doubles.folders import HashedEncoder, write_tiny_ark, write_tiny_triad

GOLDEN = Path(__file__).parents[1] / "data" / "toy_rankings_before_columnar.json"


@pytest.mark.parametrize("kind", ["triad", "ark"])
def test_rankings_and_metrics_match_the_row_dict_runner(kind, tmp_path):
    golden = json.loads(GOLDEN.read_text())
    data = str((write_tiny_triad if kind == "triad" else write_tiny_ark)(tmp_path / kind))
    res = run(
        RunConfig(
            model=None,
            name="hashed",
            revision="test",
            data=data,
            out=str(tmp_path / "out"),
            encoder=HashedEncoder(),
            no_cache=True,
            quiet=True,
            validate=False,
        )
    )
    assert res["configs"]
    for config, result in res["configs"].items():
        rows = pq.read_table(tmp_path / "out" / "rankings" / f"{config}.parquet").to_pylist()
        assert {r["query_id"]: r["candidate_ids"] for r in rows} == golden[config]["rankings"]
        assert {r["query_id"]: r.get("positive_rank") for r in rows} == golden[config]["positive_rank"]
        assert result["metrics"] == golden[config]["metrics"]


def test_a_rerun_reuses_validation_and_scores_and_writes_the_same_results(tmp_path, monkeypatch):
    from model_adapters.run import runner

    data = str(write_tiny_triad(tmp_path / "triad"))
    cache = tmp_path / "cache"

    def once(out: str) -> dict:
        run(
            RunConfig(
                model=None,
                name="hashed",
                revision="test",
                data=data,
                out=str(tmp_path / out),
                encoder=HashedEncoder(),
                cache_dir=str(cache),
                quiet=True,
            )
        )
        return json.loads((tmp_path / out / "results.json").read_text())

    first = once("a")

    def fail(*args, **kwargs):
        raise AssertionError("recomputed on an unchanged folder with identical rankings")

    monkeypatch.setattr(runner, "validate_folder", fail)
    monkeypatch.setattr(runner, "score", fail)
    second = once("b")
    records = sorted(p.name.split("-")[0] for p in (cache / "_runs").iterdir())
    assert records == ["scores", "validated"]  # a given encoder object: truncation is always counted afresh
    assert second["configs"] == first["configs"] and second["summary"] == first["summary"]
    assert second["run"]["cache_hits"] == second["run"]["distinct_items"]
