"""Doctored rankings built from a real `minilm` run of the mini TRIAD edition are never verified; honest ones are.

The attacks are benchmarks/attacks.py's: positives moved first inside the tolerance (the blend verified before the
whole-pool check), the same with up to 3 or 10 beating negatives parked below the top 10, a wholesale oracle, an
oracle on 30 % of queries, positives moved up 3 places. Two ways: through the Space (submitted, re-encoded by the
Space's own queue, the status cell read back), and over many server draws of the project's own sampler with the
model's scores taken from the honest run (benchmarks/oracle_false_pass.py, whose figures docs/space.md quotes)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from benchmarks import attacks
from benchmarks import oracle_false_pass as mc
from spaces_app import status, verify, views
from spaces_app.db import Database
from spaces_app.gold import GoldStore
from spaces_app.submit import RateLimit, submit_files
from spaces_app.worker import VerifyQueue
from triad_dataset.contract import names as n

pytestmark = pytest.mark.slow  # a real minilm run of the mini edition, made once for the module

SEEDS = range(60)  # server draws per case (each judged in milliseconds: no model runs)


@pytest.fixture(scope="module")
def honest(mini_triad_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    from model_adapters.runner import RunConfig, run

    root = tmp_path_factory.mktemp("blends")
    run(
        RunConfig(
            model="minilm",
            data=str(mini_triad_dir),
            out=str(root / "run"),
            configs=list(n.MAIN_CONFIGS),
            validate=False,
            quiet=True,
            cache_dir=str(root / "cache"),
        )
    )
    rows = mc.read_run(root / "run", n.MAIN_CONFIGS)
    gold_rows = mc.read_gold(mini_triad_dir, n.MAIN_CONFIGS)
    positives = {c: {g["query_id"]: set(g["positive_ids"]) for g in gs} for c, gs in gold_rows.items()}
    return {
        "root": root,
        "data": mini_triad_dir,
        "rows": rows,
        "gold_rows": gold_rows,
        "positives": positives,
        "pools": mc.model_pools(rows, gold_rows),
    }


def doctored(honest: dict, attack: attacks.Attack, name: str) -> Path:
    """A copy of the honest run (its results.json kept) with its rankings re-ordered by ``attack``."""
    out = honest["root"] / name
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(honest["root"] / "run", out)
    for config, rows in attacks.apply(attack, honest["rows"], honest["positives"], seed=7).items():
        path = out / "rankings" / f"{config}.parquet"
        pq.write_table(pq.read_table(path).from_pylist(rows, schema=pq.read_schema(path)), path)
    return out


def _judged(honest: dict, attack: attacks.Attack) -> list[tuple[str, dict]]:
    rows = attacks.apply(attack, honest["rows"], honest["positives"], seed=3)
    return mc.passes(rows, honest["gold_rows"], honest["pools"], list(SEEDS))


@pytest.mark.parametrize("name", list(attacks.ATTACKS))
def test_no_attack_passes_any_server_draw(honest: dict, name: str) -> None:
    for state, result in _judged(honest, attacks.ATTACKS[name]):
        assert state == verify.FAILED, (name, result["favourable"], result["outside_tie_range"])
        assert status.failures(result) != ["the re-encoded model disagrees"]  # it says which test failed


@pytest.mark.parametrize("case", ["unchanged", "bf16-size noise"])
def test_honest_runs_pass_every_server_draw(honest: dict, case: str) -> None:
    attack = attacks.perturbed() if case == "bf16-size noise" else (lambda ids, s, p, rng: list(ids))
    judged = _judged(honest, attack)
    assert [state for state, _ in judged] == [verify.VERIFIED] * len(SEEDS)
    if case == "bf16-size noise":  # the noise did move positives, both ways
        assert sum(r["favourable"]["above"] > 0 and r["favourable"]["below"] > 0 for _, r in judged) > len(SEEDS) / 2


def test_the_space_verifies_honest_runs_and_fails_the_blends(honest: dict, tmp_path: Path) -> None:
    """Submitted through the Space and checked by its own queue (minilm re-encodes the sampled queries' pools)."""
    db = Database(tmp_path / "space.sqlite")
    golds = GoldStore({"triad": honest["data"]})
    runs = {
        "honest": (honest["root"] / "run", "minilm", "hf:alice"),
        "bf16": (doctored(honest, attacks.perturbed(), "bf16"), "minilm-bf16", "hf:bob"),
        "blend": (doctored(honest, attacks.within_tolerance, "blend"), "minilm", "hf:mallory"),
        "parked": (doctored(honest, attacks.parked(3), "parked"), "minilm-parked", "hf:mallory"),
    }
    ids = {}
    for key, (run, name, who) in runs.items():
        files = sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"]
        out = submit_files(db, golds, files, model_name=name, submitter=who, rate_limit=RateLimit(1000, 3600))
        assert out.accepted, (key, out.message)
        ids[key] = out.submission_id
    assert VerifyQueue(db, {"triad": honest["data"]}).run_once() == 4
    rows = {s["id"]: s for s in db.submissions(include_hidden=True)}
    notes = status.annotate(db.submissions(include_hidden=True), n.MAIN_CONFIGS, None, golds.get("triad").fingerprint)
    for key in ("honest", "bf16"):
        assert rows[ids[key]]["status"] == verify.VERIFIED, rows[ids[key]]["verify"]["result"]["favourable"]
        assert notes[ids[key]]["text"].startswith(("verified (", "verified as minilm (")), notes[ids[key]]["text"]
        assert f"({6 * verify.QUERIES} queries, AP within the model's tie range on all)" in notes[ids[key]]["text"]
    assert notes[ids["blend"]]["text"].startswith("FAILED reproduction (AP above the model's own on ")
    assert "the model's own" in notes[ids["parked"]]["text"] and rows[ids["parked"]]["status"] == verify.FAILED
    shown = views.score_table(
        [s for s in db.submissions() if notes[s["id"]]["status"] != verify.FAILED], n.MAIN_CONFIGS, status=notes
    )
    assert set(shown[views.ID_COL].tolist()) == {ids["honest"], ids["bf16"]}  # the blend named "minilm" is gone
