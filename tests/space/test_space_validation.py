"""Every rejection of the Space's submission path, each with a crafted file; nothing is stored on rejection."""

from __future__ import annotations

import io
import json
import pickle
import stat
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ark_dataset import names as ark_names
from spaces_app.db import Database
from spaces_app.gold import GoldStore
from spaces_app.ranking_files import ParsedRanking
from spaces_app.refusal import SubmissionError
from spaces_app.submit import RateLimit, check_meta, parse_params, submit_files
from spaces_app.uploads import Limits
from spaces_app.validation import check_query_ids, explain_ranking
from tests.doubles import space_runs as testing
from tests.space_refusals import rejected
from triad_dataset.contract import names as n

I2C, C2I = n.ABSTRACTION_CONFIGS
POOL = 8


def check_triad_rankings(config: str, ranking: ParsedRanking, pools: Mapping[str, Sequence[str]]) -> None:
    """The per-query reference check of TRIAD rankings: every gold query once, each ranking a permutation of exactly
    that query's pool (the server's array check is `spaces_app.validation.pool_positions`)."""
    check_query_ids(config, ranking.query_ids, pools)
    for i, qid in enumerate(ranking.query_ids):
        explain_ranking(config, qid, ranking.ranked(i), pools[qid])


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("space_validation")
    tables = testing.triad_tables(4, POOL, seed=3, configs=n.MAIN_CONFIGS)
    testing.write_triad_gold(root / "triad", tables, POOL)
    ark = testing.ark_tables(3, 25, seed=4, subtypes=ark_names.SUBTYPES[:2])
    testing.write_ark_gold(root / "ark", ark)
    rankings = testing.random_rankings(tables, seed=5)
    run = testing.write_run(root / "run", tables, rankings)
    ark_run = testing.write_run(root / "ark_run", ark, testing.ark_random_rankings(ark, seed=6), benchmark="ark")
    return {
        "root": root,
        "tables": tables,
        "ark": ark,
        "rankings": rankings,
        "run": run,
        "ark_run": ark_run,
        "golds": GoldStore({"triad": root / "triad", "ark": root / "ark"}),
    }


@pytest.fixture
def db(tmp_path: Path) -> Database:
    return Database(tmp_path / "space.sqlite")


def run_files(run: Path) -> list[Path]:
    return sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"]


def with_replaced(tmp: Path, run: Path, config: str, table: pa.Table | bytes) -> list[Path]:
    """The run's files with one config's parquet replaced by a crafted one."""
    out = tmp / "crafted" / "rankings"
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for f in run_files(run):
        if f.stem == config and f.suffix == ".parquet":
            target = out / f.name
            target.write_bytes(table if isinstance(table, bytes) else testing.parquet_bytes(table))
            files.append(target)
        else:
            files.append(f)
    return files


def submit(db: Database, world: dict, files: list[Path], name: str = "model", **kw) -> str:
    outcome = submit_files(
        db,
        world["golds"],
        files,
        model_name=name,
        submitter=kw.pop("submitter", "tester"),
        rate_limit=kw.pop("rate_limit", RateLimit(1000, 3600)),
        **kw,
    )
    return outcome.message


def ranking(world: dict, config: str) -> dict[str, list[str]]:
    return {q: list(ids) for q, ids in world["rankings"][config].items()}


# --- rankings against the gold ------------------------------------------------------------------------------
def test_valid_run_is_accepted(db: Database, world: dict) -> None:
    msg = submit(db, world, run_files(world["run"]))
    assert msg.startswith("Accepted: submission id 1 (TRIAD, 6 configs)"), msg
    assert "results.json: " in msg and " numbers match the server's" in msg
    assert db.counts()["submissions"] == 1


def test_unknown_config(db: Database, world: dict, tmp_path: Path) -> None:
    bad = tmp_path / "rankings" / "state_trains.parquet"
    bad.parent.mkdir()
    bad.write_bytes(testing.parquet_bytes(testing.ranking_table(ranking(world, I2C))))
    rejected(db, submit(db, world, [*run_files(world["run"]), bad]), "unknown config 'state_trains'")


def test_missing_query(db: Database, world: dict, tmp_path: Path) -> None:
    r = ranking(world, I2C)
    dropped = sorted(r)[0]
    del r[dropped]
    msg = submit(db, world, with_replaced(tmp_path, world["run"], I2C, testing.ranking_table(r)))
    rejected(db, msg, f"config {I2C}: 1 of 4 queries missing", repr(dropped))


def test_duplicate_query(db: Database, world: dict, tmp_path: Path) -> None:
    r = ranking(world, I2C)
    table = testing.ranking_table(r)
    table = pa.concat_tables([table, table.slice(0, 1)])
    qid = table.column("query_id")[0].as_py()
    rejected(
        db,
        submit(db, world, with_replaced(tmp_path, world["run"], I2C, table)),
        "5 rows, more than the limit of 4 (each of the config's queries once)",
    )
    swapped = pa.concat_tables([table.slice(0, 1), table.slice(0, 3)])  # as many rows as queries, one repeated
    rejected(
        db,
        submit(db, world, with_replaced(tmp_path, world["run"], I2C, swapped)),
        f"config {I2C}: query {qid!r} appears more than once",
    )


def test_unknown_query(db: Database, world: dict, tmp_path: Path) -> None:
    r = ranking(world, C2I)
    first = sorted(r)[0]
    r["zzz-not-a-query"] = r.pop(first)
    rejected(
        db,
        submit(db, world, with_replaced(tmp_path, world["run"], C2I, testing.ranking_table(r))),
        f"config {C2I}: unknown query id 'zzz-not-a-query'",
    )


def test_candidate_not_in_pool(db: Database, world: dict, tmp_path: Path) -> None:
    r = ranking(world, n.STATE_CONFIGS[0])
    qid = sorted(r)[1]
    r[qid][3] = "fashion_items-999999"
    rejected(
        db,
        submit(db, world, with_replaced(tmp_path, world["run"], n.STATE_CONFIGS[0], testing.ranking_table(r))),
        f"config {n.STATE_CONFIGS[0]}, query {qid!r}: candidate 'fashion_items-999999' is not in this query's pool",
    )


def test_duplicate_candidate(db: Database, world: dict, tmp_path: Path) -> None:
    r = ranking(world, n.CONSTRAINTS_CONFIGS[1])
    qid = sorted(r)[0]
    dup = r[qid][0]
    r[qid][5] = dup
    rejected(
        db,
        submit(db, world, with_replaced(tmp_path, world["run"], n.CONSTRAINTS_CONFIGS[1], testing.ranking_table(r))),
        f"config {n.CONSTRAINTS_CONFIGS[1]}, query {qid!r}: candidate {dup!r} ranked twice",
    )


def test_missing_candidate(db: Database, world: dict, tmp_path: Path) -> None:
    r = ranking(world, I2C)
    qid = sorted(r)[2]
    gone = r[qid].pop()
    rejected(
        db,
        submit(db, world, with_replaced(tmp_path, world["run"], I2C, testing.ranking_table(r))),
        f"config {I2C}, query {qid!r}: 1 of the {POOL} pool candidates missing",
        repr(gone),
    )


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_score(db: Database, world: dict, tmp_path: Path, value: float) -> None:
    r = ranking(world, I2C)
    table = testing.ranking_table(r)
    scores = table.column("scores").to_pylist()
    scores[1][4] = value
    table = table.set_column(2, "scores", pa.array(scores, pa.list_(pa.float64())))
    qid = table.column("query_id")[1].as_py()
    rejected(
        db,
        submit(db, world, with_replaced(tmp_path, world["run"], I2C, table)),
        f"query {qid!r} has a non-finite score",
    )


def test_scores_not_aligned(db: Database, world: dict, tmp_path: Path) -> None:
    table = testing.ranking_table(ranking(world, I2C))
    scores = table.column("scores").to_pylist()
    scores[0] = scores[0][:-1]
    table = table.set_column(2, "scores", pa.array(scores, pa.list_(pa.float64())))
    qid = table.column("query_id")[0].as_py()
    rejected(
        db,
        submit(db, world, with_replaced(tmp_path, world["run"], I2C, table)),
        f"query {qid!r} has {POOL} candidate ids but {POOL - 1} scores",
    )


def test_scores_not_best_first(db: Database, world: dict, tmp_path: Path) -> None:
    table = testing.ranking_table(ranking(world, I2C))
    scores = table.column("scores").to_pylist()
    scores[0][2] = 5.0
    table = table.set_column(2, "scores", pa.array(scores, pa.list_(pa.float64())))
    rejected(
        db,
        submit(db, world, with_replaced(tmp_path, world["run"], I2C, table)),
        "is not sorted best first (score rises at rank 3)",
    )


def test_missing_column_and_wrong_type(db: Database, world: dict, tmp_path: Path) -> None:
    table = testing.ranking_table(ranking(world, I2C)).drop_columns(["scores"])
    rejected(db, submit(db, world, with_replaced(tmp_path, world["run"], I2C, table)), "missing column 'scores'")
    table = testing.ranking_table(ranking(world, I2C))
    table = table.set_column(0, "query_id", pa.array(range(table.num_rows), pa.int64()))
    rejected(
        db,
        submit(db, world, with_replaced(tmp_path / "b", world["run"], I2C, table)),
        "column 'query_id' has type int64",
    )


def test_null_values(db: Database, world: dict, tmp_path: Path) -> None:
    table = testing.ranking_table(ranking(world, I2C))
    ids = table.column("candidate_ids").to_pylist()
    ids[0][0] = None
    table = table.set_column(1, "candidate_ids", pa.array(ids, pa.list_(pa.string())))
    rejected(db, submit(db, world, with_replaced(tmp_path, world["run"], I2C, table)), "null candidate id")


def test_pickle_is_never_loaded(db: Database, world: dict, tmp_path: Path) -> None:
    """A pickle named .parquet is refused by its magic bytes; a .pkl is refused by its type; nothing is unpickled."""

    class Boom:
        def __reduce__(self):  # would run on unpickling
            return (Path(tmp_path / "pwned").write_text, ("x",))

    blob = pickle.dumps(Boom())
    rejected(
        db,
        submit(db, world, with_replaced(tmp_path, world["run"], I2C, blob)),
        f"{I2C}.parquet (config {I2C}): not a parquet file (missing PAR1 magic bytes)",
    )
    pkl = tmp_path / "model.pkl"
    pkl.write_bytes(blob)
    rejected(
        db,
        submit(db, world, [*run_files(world["run"]), pkl]),
        "model.pkl: only parquet ranking files and JSON are accepted",
    )
    assert not (tmp_path / "pwned").exists()


def test_corrupt_parquet(db: Database, world: dict, tmp_path: Path) -> None:
    good = testing.parquet_bytes(testing.ranking_table(ranking(world, I2C)))
    bad = good[:4] + b"\x00" * (len(good) - 8) + good[-4:]
    rejected(db, submit(db, world, with_replaced(tmp_path, world["run"], I2C, bad)), "unreadable parquet")


def test_missing_main_subset(db: Database, world: dict) -> None:
    files = [f for f in run_files(world["run"]) if f.stem != n.STATE_CONFIGS[1]]
    rejected(db, submit(db, world, files), f"missing main subset(s): {n.STATE_CONFIGS[1]} (C-Cars)")


def test_no_files_and_no_rankings(db: Database, world: dict) -> None:
    rejected(db, submit(db, world, []), "no files uploaded")
    rejected(db, submit(db, world, [world["run"] / "results.json"]), "no ranking files")


# --- results.json -------------------------------------------------------------------------------------------
def test_results_json_invalid(db: Database, world: dict, tmp_path: Path) -> None:
    bad = tmp_path / "results.json"
    bad.write_text("{not json")
    files = [f for f in run_files(world["run"]) if f.suffix == ".parquet"] + [bad]
    rejected(db, submit(db, world, files), "results.json: not valid JSON")
    bad.write_text('{"benchmark": "triad", "configs": {"x": NaN}}')
    rejected(db, submit(db, world, files), "results.json: non-finite number NaN in JSON")
    bad.write_text("[1, 2]")
    rejected(db, submit(db, world, files), "results.json: expected a JSON object, got list")
    bad.write_text('{"benchmark": "ark"}')
    rejected(db, submit(db, world, files), "results.json says benchmark 'ark' but the rankings are 'triad' configs")


def test_two_results_files(db: Database, world: dict, tmp_path: Path) -> None:
    other = tmp_path / "x" / "results.json"
    other.parent.mkdir()
    other.write_text("{}")
    rejected(db, submit(db, world, [*run_files(world["run"]), other]), "2 copies of results.json")


def test_mismatch_is_reported_and_server_numbers_stored(db: Database, world: dict, tmp_path: Path) -> None:
    results = json.loads((world["run"] / "results.json").read_text())
    true_map = results["configs"][I2C]["metrics"]["map"]
    results["configs"][I2C]["metrics"]["map"] = 0.999
    tampered = tmp_path / "results.json"
    tampered.write_text(json.dumps(results))
    files = [f for f in run_files(world["run"]) if f.suffix == ".parquet"] + [tampered]
    outcome = submit_files(db, world["golds"], files, model_name="m", submitter="t", rate_limit=RateLimit(99, 60))
    assert outcome.accepted
    assert outcome.mismatches == (f"{I2C} map: results.json 0.999, server {true_map:.6g}",)
    assert "1 number(s) in your results.json differ from the server's" in outcome.message
    stored = db.submissions("triad")[0]
    assert stored["scores"][I2C].value == true_map
    assert stored["mismatches"] == list(outcome.mismatches)


# --- archives -------------------------------------------------------------------------------------------------
def _zip(path: Path, members: dict[str, bytes], *, symlink: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return path


def _run_members(run: Path, prefix: str = "run/") -> dict[str, bytes]:
    return {prefix + str(f.relative_to(run)): f.read_bytes() for f in run_files(run)}


def test_zip_of_run_folder_is_accepted_and_duplicate_detected(db: Database, world: dict, tmp_path: Path) -> None:
    archive = _zip(tmp_path / "run.zip", _run_members(world["run"]))
    msg = submit(db, world, [archive])
    assert msg.startswith("Accepted: submission id 1"), msg
    again = submit(db, world, run_files(world["run"]), name="same rankings, loose files")
    assert again == "Rejected: these rankings were already submitted as submission id 1 (model). Nothing was stored."
    assert db.counts()["submissions"] == 1


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("../rankings/x.parquet", "path traversal with '..'"),
        ("run/../../etc/results.json", "path traversal with '..'"),
        ("/abs/results.json", "absolute path or backslash"),
        ("run\\results.json", "absolute path or backslash"),
    ],
)
def test_zip_unsafe_paths(db: Database, world: dict, tmp_path: Path, name: str, fragment: str) -> None:
    archive = _zip(tmp_path / "evil.zip", {**_run_members(world["run"]), name: b"{}"})
    rejected(db, submit(db, world, [archive]), "evil.zip: unsafe path", fragment)


def test_zip_symlink(db: Database, world: dict, tmp_path: Path) -> None:
    archive = _zip(tmp_path / "link.zip", _run_members(world["run"]), symlink="run/results2.json")
    rejected(db, submit(db, world, [archive]), "'run/results2.json' is a symbolic link")


def test_zip_bomb(db: Database, world: dict, tmp_path: Path) -> None:
    archive = _zip(tmp_path / "bomb.zip", {**_run_members(world["run"]), "run/notes.json": b"0" * 5_000_000})
    rejected(db, submit(db, world, [archive]), "'run/notes.json' expands", "refusing a possible zip bomb")


def test_nested_zip(db: Database, world: dict, tmp_path: Path) -> None:
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zf:
        zf.writestr("a.json", "{}")
    archive = _zip(tmp_path / "nest.zip", {**_run_members(world["run"]), "run/inner.zip": inner.getvalue()})
    rejected(db, submit(db, world, [archive]), "nested archives are refused")


def test_not_a_zip(db: Database, world: dict, tmp_path: Path) -> None:
    fake = tmp_path / "run.zip"
    fake.write_bytes(b"PK\x03\x04 this is not really a zip")
    rejected(db, submit(db, world, [fake]), "run.zip: not a readable zip file")


def test_size_and_count_limits(db: Database, world: dict) -> None:
    files = run_files(world["run"])
    tiny = Limits(max_file_bytes=200)
    rejected(db, submit(db, world, files, limits=tiny), "over the per-file limit of 200 bytes")
    rejected(db, submit(db, world, files, limits=Limits(max_files=3)), "7 files uploaded, more than the limit of 3")
    rejected(db, submit(db, world, files, limits=Limits(max_total_bytes=3000)), "the files add up to more than 3000")
    rejected(db, submit(db, world, files, limits=Limits(max_rows=2)), "4 rows, more than the limit of 2")


# --- ARK ------------------------------------------------------------------------------------------------------
def test_ark_run_accepted(db: Database, world: dict) -> None:
    msg = submit(db, world, run_files(world["ark_run"]))
    assert msg.startswith("Accepted: submission id 1 (ARK, 2 configs)"), msg


def _ark_table(world: dict, subtype: str, edit) -> pa.Table:
    rows = world["ark"][subtype]
    order = testing.ark_random_rankings(world["ark"], seed=6)[subtype]
    table = testing.ranking_table(order, top=testing.ARK_TOP, positives={r["query_id"]: r["positive_id"] for r in rows})
    return edit(table)


def test_ark_rejections(db: Database, world: dict, tmp_path: Path) -> None:
    s = ark_names.SUBTYPES[0]

    def set_rank(t: pa.Table) -> pa.Table:
        ranks = t.column("positive_rank").to_pylist()
        ranks[0] = ranks[0] % 25 + 1  # any other rank inside the listed 25 ids
        return t.set_column(3, "positive_rank", pa.array(ranks, pa.int64()))

    def foreign_id(t: pa.Table) -> pa.Table:
        ids = t.column("candidate_ids").to_pylist()
        ids[1][-1] = "not-in-gallery"
        return t.set_column(1, "candidate_ids", pa.array(ids, pa.list_(pa.string())))

    qid = world["ark"][s][0]["query_id"]
    msg = submit(db, world, with_replaced(tmp_path / "a", world["ark_run"], s, _ark_table(world, s, set_rank)))
    rejected(db, msg, f"config {s}, query {qid!r}: positive_rank", "but the positive is listed at rank")
    msg = submit(db, world, with_replaced(tmp_path / "b", world["ark_run"], s, _ark_table(world, s, foreign_id)))
    rejected(db, msg, f"'not-in-gallery' is not in the {s} gallery")
    files = [f for f in run_files(world["ark_run"]) if f.stem != ark_names.SUBTYPES[1]]
    rejected(db, submit(db, world, files), f"missing ARK subtype(s): {ark_names.SUBTYPES[1]}")
    mixed = [*run_files(world["run"])[:1], *run_files(world["ark_run"])[:1]]
    rejected(db, submit(db, world, mixed), "rankings mix TRIAD configs")


# --- metadata and rate limit ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"model_name": "  "}, "model name is required"),
        ({"model_name": "x" * 81}, "model name is 81 characters long; the limit is 80"),
        ({"model_name": "\u2800\u200b\u3164"}, "model name is blank once invisible characters are removed"),
        ({"model_link": "javascript:alert(1)"}, "model link must be an http:// or https:// URL"),
        ({"model_link": 'https://x.org/"onmouseover=alert(1)'}, "model link must be an http:// or https:// URL"),
        ({"params": "lots"}, "parameter count 'lots': use a number such as"),
    ],
)
def test_metadata_rejections(kwargs: dict, fragment: str) -> None:
    base = {"model_name": "m", "model_link": "", "family": "", "params": "", "submitter": "s"}
    with pytest.raises(SubmissionError, match=None) as info:
        check_meta(**{**base, **kwargs})
    assert fragment in str(info.value)


def test_html_name_is_kept_verbatim() -> None:
    meta = check_meta("<img src=x onerror=alert(1)>", "https://example.org/m", "", "1.5B", "")
    assert (meta.model_name, meta.family, meta.params, meta.submitter) == (
        "<img src=x onerror=alert(1)>",
        "other",
        1_500_000_000,
        "anonymous",
    )
    assert parse_params("350k") == 350_000


def test_rate_limit(db: Database, world: dict) -> None:
    limit = RateLimit(attempts=2, window_s=3600)
    for _ in range(2):
        rejected(db, submit(db, world, [], submitter="alice", rate_limit=limit), "no files uploaded")
    rejected(
        db,
        submit(db, world, run_files(world["run"]), submitter="alice", rate_limit=limit),
        "rate limit reached (2 submissions per 3600 s per submitter)",
    )
    assert submit(db, world, run_files(world["run"]), submitter="bob", rate_limit=limit).startswith("Accepted")


def test_digest_ignores_row_order_scores_and_encoding(world: dict) -> None:
    import pyarrow.parquet as pq

    from spaces_app.ranking_files import read_ranking
    from spaces_app.uploads import Upload

    table = testing.ranking_table(ranking(world, I2C))
    shuffled = table.take([3, 1, 0, 2]).set_column(
        2, "scores", pa.array([np.linspace(0.9, 0.2, POOL).tolist()] * 4, pa.list_(pa.float64()))
    )
    shuffled = shuffled.cast(
        pa.schema(
            [
                ("query_id", pa.large_string()),
                ("candidate_ids", pa.list_(pa.large_string())),
                ("scores", pa.list_(pa.float64())),
            ]
        )
    )
    sink = pa.BufferOutputStream()
    pq.write_table(shuffled, sink, compression="zstd", row_group_size=2)
    a = read_ranking(Upload("a.parquet", testing.parquet_bytes(table)), I2C, Limits(), ark=False)
    b = read_ranking(Upload("b.parquet", sink.getvalue().to_pybytes()), I2C, Limits(), ark=False)
    assert a.digest == b.digest
    r = ranking(world, I2C)
    q = sorted(r)[0]
    r[q][0], r[q][1] = r[q][1], r[q][0]  # one swapped pair is a different submission
    c = read_ranking(Upload("c.parquet", testing.parquet_bytes(testing.ranking_table(r))), I2C, Limits(), ark=False)
    assert c.digest != a.digest


def test_zip_with_first_stage_rankings(db: Database, world: dict, tmp_path: Path) -> None:
    members = _run_members(world["run"])
    first = {k.replace("run/rankings/", "run/rankings_first_stage/"): v for k, v in members.items() if "rankings/" in k}
    archive = _zip(tmp_path / "reranked.zip", {**members, **first})
    msg = submit(db, world, [archive])
    assert msg.startswith("Accepted"), msg
    assert f"ignored run/rankings_first_stage/{I2C}.parquet (first-stage rankings are not scored)" in msg
    stray = _zip(tmp_path / "stray.zip", {**members, "run/other/x.parquet": members[f"run/rankings/{I2C}.parquet"]})
    msg = submit(db, world, [stray])
    assert "run/other/x.parquet: a parquet file outside rankings/" in msg


# --- property: a ranking passes exactly when it is a permutation of the pool ------------------------------------
@settings(max_examples=150, deadline=None)
@given(data=st.data(), size=st.integers(1, 12))
def test_permutation_property(data: st.DataObject, size: int) -> None:
    pool = [f"c{i}" for i in range(size)]
    ranked = data.draw(st.permutations(pool))
    mutation = data.draw(st.sampled_from(["none", "drop", "duplicate", "foreign", "extra"]))
    if mutation == "drop":
        ranked = ranked[:-1]
    elif mutation == "duplicate" and size > 1:
        ranked = [*ranked[:-1], ranked[0]]
    elif mutation == "foreign":
        ranked = [*ranked[:-1], "zzz"]
    elif mutation == "extra":
        ranked = [*ranked, "zzz"]
    valid = sorted(ranked) == sorted(pool)
    parsed = ParsedRanking(["q"], [ranked])
    if valid:
        check_triad_rankings(I2C, parsed, {"q": pool})
    else:
        with pytest.raises(SubmissionError, match=f"config {I2C}, query 'q': "):
            check_triad_rankings(I2C, parsed, {"q": pool})
