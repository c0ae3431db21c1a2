"""The reproduction check: a `triad run --model tiny-random-clip` output submitted unchanged is verified by
`triad space verify`; the same run with one sampled query's top two candidates swapped fails, naming that pair; an
oracle built from the public labels is never verified (claiming the model it fails, claiming nothing it is flagged).
Blends and the measured false-pass figures: tests/space/test_space_blends.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from spaces_app import status, verify, views
from spaces_app.db import Database
from spaces_app.gold import GoldStore
from spaces_app.submit import RateLimit, submit_files
from tests.doubles import space_runs as testing
from triad_dataset.contract import names as n

POOL = 30
SEED = 20240917


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from model_adapters.runner import RunConfig, run

    root = tmp_path_factory.mktemp("space_verify")
    # seed 22: the tiny CLIP ranks a positive and a negative first and second, apart by more than the tolerance, on
    # a few queries (what the swap test needs; see _seed_with_a_swappable_query)
    tables = testing.triad_tables(10, POOL, seed=22, configs=n.MAIN_CONFIGS)
    testing.write_triad_gold(root / "triad", tables, POOL, with_corpora=True)
    run(
        RunConfig(
            model="tiny-random-clip",
            data=str(root / "triad"),
            out=str(root / "run"),
            validate=False,
            quiet=True,
            cache_dir=str(root / "cache"),
        )
    )
    return {"root": root, "tables": tables, "golds": GoldStore({"triad": root / "triad"}), "run": root / "run"}


def files(run: Path) -> list[Path]:
    return sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"]


def submit(db: Database, tiny: dict, run: Path, name: str, submitter: str = "hf:alice"):
    return submit_files(
        db, tiny["golds"], files(run), model_name=name, submitter=submitter, rate_limit=RateLimit(1000, 3600)
    )


def cli_verify(db: Database, tiny: dict, *extra: str) -> int:
    from triad_cli.main import main

    return main(["space", "verify", "--db", str(db.path), "--data", str(tiny["root"] / "triad"), *extra])


def copy_run(tiny: dict, name: str) -> Path:
    out = tiny["root"] / name
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(tiny["run"], out)
    return out


@pytest.mark.slow
def test_an_unchanged_run_is_verified_and_one_swapped_pair_fails(
    tiny: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = Database(tmp_path / "space.sqlite")
    seed = _seed_with_a_swappable_query(tiny)
    monkeypatch.setattr(verify.secrets, "randbits", lambda bits: seed)  # the server's draw, fixed for the test
    honest = submit(db, tiny, tiny["run"], "tiny-random-clip")
    assert honest.accepted and "Reproduction check: pending" in honest.message, honest.message
    assert db.submissions()[0]["status"] == verify.PENDING
    assert cli_verify(db, tiny, "--pending") == 0
    row = db.submissions()[0]
    result = row["verify"]["result"]
    assert row["status"] == verify.VERIFIED and result["disagreeing"] == 0
    assert result["queries"] == 6 * verify.QUERIES and result["pairs"] > 1000
    assert row["verify"]["sample_seed"] == seed  # revealed once checked
    assert "sample" not in views.submission_record(row)["verification"]  # the sample itself never is
    table = views.score_table(
        db.submissions(),
        n.MAIN_CONFIGS,
        sort_by="I2C",
        status=status.annotate(db.submissions(), n.MAIN_CONFIGS, None, tiny["golds"].get("triad").fingerprint),
    )
    # verified by the full check: every query of the leaderboard's own run, not the sample
    assert table[views.STATUS_COL][0].startswith("verified (the leaderboard's own run: all 60 queries within")
    assert row["verify"]["full"]["queries"] == 60 and row["verify"]["full"]["outside_tie_range"] == 0
    assert table[views.RANK_COL][0] == "1"

    # the same draw samples the same queries and ranks; swap the top two of a sampled query whose scores differ
    sample = verify.draw_sample("triad", _parsed(tiny["run"], tiny), tiny["golds"].get("triad"), seed)
    swappable = _swappable(tiny["run"], sample, tiny["tables"])
    assert swappable is not None
    config, qid, first, second = swappable
    swapped = copy_run(tiny, "swapped")
    path = swapped / "rankings" / f"{config}.parquet"
    table = pq.read_table(path).to_pylist()
    for r in table:
        if r["query_id"] == qid:
            r["candidate_ids"][0], r["candidate_ids"][1] = r["candidate_ids"][1], r["candidate_ids"][0]
    pq.write_table(pq.read_table(path).from_pylist(table, schema=pq.read_schema(path)), path)
    out = submit(db, tiny, swapped, "tiny-random-clip")
    assert out.accepted, out.message
    assert cli_verify(db, tiny, "--id", str(out.submission_id)) == 1  # exit 1: a check failed
    row = next(s for s in db.submissions(include_hidden=True) if s["id"] == out.submission_id)
    result = row["verify"]["result"]
    assert row["status"] == verify.FAILED and result["disagreeing"] == 1
    assert result["pairs_listed"][0] | {"scores": None} == {
        "config": config,
        "query_id": qid,
        "above": second,
        "below": first,
        "ranks": [1, 2],
        "scores": None,
    }
    notes = status.annotate(db.submissions(), n.MAIN_CONFIGS, None, tiny["golds"].get("triad").fingerprint)
    assert notes[out.submission_id]["text"].startswith("FAILED reproduction (1 of ")
    shown = views.score_table(
        [s for s in db.submissions() if notes[s["id"]]["status"] != verify.FAILED], n.MAIN_CONFIGS, status=notes
    )
    assert out.submission_id not in shown[views.ID_COL].tolist()  # failed rows leave the default view


def _parsed(run: Path, tiny: dict):
    from spaces_app import ranking_files, uploads

    read = uploads.read_uploads(files(run), uploads.Limits())
    return ranking_files.parse_uploads(read, uploads.Limits(), tiny["golds"].known_configs(), tiny["golds"].bounds())


def _seed_with_a_swappable_query(tiny: dict) -> int:
    """The first server draw from SEED whose sample holds a query `_swappable` finds (which queries qualify depends
    on the tiny model's scores)."""
    parsed, gold = _parsed(tiny["run"], tiny), tiny["golds"].get("triad")
    for seed in range(SEED, SEED + 100):
        if _swappable(tiny["run"], verify.draw_sample("triad", parsed, gold, seed), tiny["tables"]) is not None:
            return seed
    raise AssertionError("no draw samples a query with a clear top two")


def _swappable(run: Path, sample: dict, tables: dict) -> tuple[str, str, str, str] | None:
    """A sampled query whose submitted top two scores differ by more than the tolerance and whose swap changes its
    AP (one of the two is a positive: otherwise the swapped run scores exactly as the honest one, a duplicate)."""
    for config, queries in sample["queries"].items():
        rows = {r["query_id"]: r for r in pq.read_table(run / "rankings" / f"{config}.parquet").to_pylist()}
        positives = {r["query_id"]: set(r["positive_ids"]) for r in tables[config]}
        for q in queries:
            r = rows[q["query_id"]]
            labels = [c in positives[q["query_id"]] for c in r["candidate_ids"][:2]]
            if r["scores"][0] - r["scores"][1] > 2 * verify.TOLERANCE and labels[0] != labels[1]:
                return config, q["query_id"], r["candidate_ids"][0], r["candidate_ids"][1]
    return None


def _oracle(tiny: dict, name: str) -> Path:
    """The tiny run with every query's positives moved to the top (the model's order kept otherwise)."""
    out = copy_run(tiny, name)
    for config in n.MAIN_CONFIGS:
        positives = {r["query_id"]: set(r["positive_ids"]) for r in tiny["tables"][config]}
        path = out / "rankings" / f"{config}.parquet"
        rows = pq.read_table(path).to_pylist()
        for r in rows:
            ids = r["candidate_ids"]
            r["candidate_ids"] = [c for c in ids if c in positives[r["query_id"]]] + [
                c for c in ids if c not in positives[r["query_id"]]
            ]
        pq.write_table(pq.read_table(path).from_pylist(rows, schema=pq.read_schema(path)), path)
    return out


def test_an_oracle_is_never_verified_and_is_flagged(tiny: dict, tmp_path: Path) -> None:
    db = Database(tmp_path / "space.sqlite")
    oracle = _oracle(tiny, "oracle")
    claimed = submit(db, tiny, oracle, "tiny-random-clip")  # claiming the model that "produced" it
    assert claimed.accepted and "mAP: I2C 1.000" in claimed.message, claimed.message
    assert cli_verify(db, tiny, "--pending") == 1
    assert db.submissions(include_hidden=True)[0]["status"] == verify.FAILED
    # the same oracle claiming nothing checkable: unverified, and flagged by the default bound (1.0)
    results = json.loads((oracle / "results.json").read_text())
    results["model"] = {"name": "my-oracle", "source_kind": "python"}
    (oracle / "results.json").write_text(json.dumps(results))
    other = Database(tmp_path / "other.sqlite")  # the same rankings are one row per board: a board of its own
    own = submit(other, tiny, oracle, "my-oracle")
    assert own.accepted, own.message
    notes = status.annotate(other.submissions(), n.MAIN_CONFIGS, None, tiny["golds"].get("triad").fingerprint)
    note = notes[own.submission_id]
    assert note["status"] == verify.UNVERIFIED and note["text"].startswith("unverified: own encoder")
    assert "FLAGGED: I2C 1.000 ≥ 1" in note["text"] and note["order"] == 1.5  # after every unflagged row


@pytest.mark.slow
def test_ark_runs_are_checked_against_items_they_leave_out(tmp_path: Path) -> None:
    """ARK rankings list the top 100 of a whole gallery: an honest tiny run is verified; an oracle that lists the
    positive first and leaves out what the model prefers fails on the unlisted items the sample keeps."""
    from ark_dataset import names as ark_names
    from model_adapters.runner import RunConfig, run

    subtypes = ark_names.SUBTYPES[:1]
    ark = testing.ark_tables(6, 300, seed=23, subtypes=subtypes)
    testing.write_ark_gold(tmp_path / "ark", ark)
    run(
        RunConfig(
            model="tiny-random-clip",
            data=str(tmp_path / "ark"),
            out=str(tmp_path / "run"),
            validate=False,
            quiet=True,
            cache_dir=str(tmp_path / "cache"),
        )
    )
    golds = GoldStore({"ark": tmp_path / "ark"})
    db = Database(tmp_path / "space.sqlite")
    honest = submit_files(db, golds, files(tmp_path / "run"), model_name="tiny-random-clip", submitter="local")
    assert honest.accepted, honest.message
    path = tmp_path / "run" / "rankings" / f"{subtypes[0]}.parquet"
    rows = pq.read_table(path).to_pylist()
    positives = {r["query_id"]: r["positive_id"] for r in ark[subtypes[0]]}
    gallery = [g["item_id"] for g in ark[subtypes[0] + ark_names.GALLERY_SUFFIX]]
    for r in rows:  # the positive first, then the 99 items the model likes least: everything it prefers is left out
        listed = set(r["candidate_ids"])
        r["candidate_ids"] = [positives[r["query_id"]]] + [
            c for c in reversed(gallery) if c not in listed and c != positives[r["query_id"]]
        ][:99]
        r["scores"] = sorted(r["scores"], reverse=True)[:100]
        r["positive_rank"] = 1
    oracle = tmp_path / "oracle"
    shutil.copytree(tmp_path / "run", oracle)
    pq.write_table(pq.read_table(path).from_pylist(rows, schema=pq.read_schema(path)), oracle / "rankings" / path.name)
    cheat = submit_files(db, golds, files(oracle), model_name="tiny-random-clip", submitter="local")
    assert cheat.accepted and "R@1: " in cheat.message, cheat.message
    from triad_cli.main import main

    assert main(["space", "verify", "--db", str(db.path), "--ark-data", str(tmp_path / "ark"), "--pending"]) == 1
    by_id = {s["id"]: s for s in db.submissions(include_hidden=True)}
    assert by_id[honest.submission_id]["status"] == verify.VERIFIED
    assert by_id[cheat.submission_id]["status"] == verify.FAILED


def test_a_model_that_scores_everything_alike_leaves_the_row_unverified(tiny: dict, tmp_path: Path) -> None:
    """No sampled pair further apart than the tolerance: there is no order to check (docs/space.md: ARK minilm)."""
    db = Database(tmp_path / "space.sqlite")
    assert submit(db, tiny, tiny["run"], "tiny-random-clip").accepted

    class Alike:
        def encode_queries(self, batch):
            return np.ones((len(batch), 4), dtype=np.float32)

        encode_candidates = encode_queries

    task = db.verification_tasks()[0]
    outcome, record = verify.check(
        task, {"triad": tiny["root"] / "triad"}, loader=lambda *a: (Alike(), {"sees_images": True})
    )
    assert outcome == verify.UNVERIFIED and record["result"]["pairs"] == 0
    assert record["reason"].startswith("the model scores the sampled candidates alike")


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        (
            {"reproducible": False, "api": {"model_version": "doubao-embedding-vision-251215"}},
            "API model doubao-embedding-vision-251215: not reproducible without provider access",
        ),
        (
            {"generation": {"generator": "g"}},
            "reasoning embedder: its generations are sampled, so re-encoding cannot reproduce the run",
        ),
        (
            {"model": {"source_kind": "hub", "source": "org/m", "revision": "a" * 40, "input_pipeline": "unverified"}},
            "--recipe generic runs are not reproduced",
        ),
    ],
)
def test_runs_that_cannot_be_re_encoded_say_why(extra, reason):
    results = {"model": {"source_kind": "registry", "name": "minilm", "revision": "r"}, **extra}
    assert verify.model_spec(results) == (None, None, reason)


def test_a_hub_run_with_a_chosen_recipe_is_re_run_with_it(monkeypatch):
    seen = {}

    def fake_from_name(spec, revision=None, recipe=None):
        seen.update(spec=spec, revision=revision, recipe=recipe)
        raise verify.TriadError("stop here")

    import model_adapters.models.resolve as resolve

    monkeypatch.setattr(resolve, "from_name", fake_from_name)
    with pytest.raises(verify.Unavailable, match="stop here"):
        verify.load_model("org/m", "a" * 40, "cpu", recipe="embed-rl")
    assert seen == {"spec": "org/m", "revision": "a" * 40, "recipe": "embed-rl"}
