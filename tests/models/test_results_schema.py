"""results.json as the runner writes it matches `model_adapters/results/results.schema.json` (CONTRACTS §3)."""

from __future__ import annotations

import json
import time

import jsonschema
import numpy as np
import pytest

from model_adapters.results import SCHEMA_PATH
from model_adapters.runner import RunConfig, run
from tests.doubles.folders import HashedEncoder, write_tiny_ark, write_tiny_triad


class ParityReranker:
    """Scores a pair by the parity of the candidate text's length."""

    def score_pairs(self, queries, candidates):
        return np.asarray([float(len(c.text) % 2) for c in candidates])


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _results(tmp_path, data, **kwargs) -> dict:
    out = tmp_path / "out"
    cfg = RunConfig(model=None, name="hashed", revision="test", data=str(data), out=str(out), quiet=True, **kwargs)
    run(cfg)
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("kind", ["triad", "ark"])
@pytest.mark.parametrize("reranked", [False, True])
def test_demo_style_results_match_the_schema(validator, tmp_path, kind, reranked):
    write = write_tiny_triad if kind == "triad" else write_tiny_ark
    data = write(tmp_path / kind)
    extra = {"reranker": ParityReranker(), "rerank_top": 3} if reranked else {}
    results = _results(tmp_path, data, encoder=HashedEncoder(), cache_dir=str(tmp_path / "cache"), **extra)
    errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(results)]
    assert errors == []
    assert ("two_stage" in results) == reranked


def test_the_schema_refuses_a_results_file_with_an_unknown_or_missing_field(validator, tmp_path):
    results = _results(tmp_path, write_tiny_triad(tmp_path / "triad"), encoder=HashedEncoder(), no_cache=True)
    assert validator.is_valid(results)
    assert not validator.is_valid({**results, "unknown": 1})
    assert not validator.is_valid({k: v for k, v in results.items() if k != "run"})
    assert not validator.is_valid({**results, "run": {**results["run"], "stray": 0}})


class BusyEncoder(HashedEncoder):
    """HashedEncoder that spends `seconds` of CPU time in its first call."""

    def __init__(self, seconds: float) -> None:
        self.left = seconds

    def encode_queries(self, batch):
        start = time.process_time()
        while self.left > 0 and time.process_time() - start < self.left:
            pass
        self.left = 0.0
        return super().encode_queries(batch)


def test_cpu_seconds_per_phase_beside_the_wall_seconds(tmp_path):
    results = _results(tmp_path, write_tiny_triad(tmp_path / "triad"), encoder=BusyEncoder(0.3), no_cache=True)
    wall, cpu = results["run"]["timings_s"], results["run"]["cpu_s"]
    assert list(cpu) == list(wall) == ["plan", "encode", "rank", "score", "write"]
    assert min(cpu.values()) >= 0
    assert cpu["encode"] >= 0.3  # the encoder's own CPU time is inside the encode phase
