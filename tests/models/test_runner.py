"""The runner on tiny hand-made TRIAD / ARK folders with a deterministic fake encoder (exact expectations) and
the tiny random models (end to end)."""

from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest

from metrics import scoring
from model_adapters.planning import inputs
from model_adapters.runner import RunConfig, run
from tests.doubles.folders import png, tiny_ark_tables, tiny_triad_tables, write_tiny_ark, write_tiny_triad
from triad_dataset.contract.errors import TriadError
from triad_dataset.folder.io import read_rows


class HashEncoder:
    """Vectors from sha256 of the input (text, image, instruction); counts the inputs it receives."""

    dim = 8

    def __init__(self, *, nan: bool = False, dim: int | None = None, oom_above: int | None = None) -> None:
        self.inputs: list = []
        self.nan, self.out_dim, self.oom_above = nan, dim or self.dim, oom_above
        self.batch_sizes: list[int] = []

    @staticmethod
    def vector(item, dim: int = 8) -> np.ndarray:
        digest = hashlib.sha256(repr((item.text, item.image, item.instruction)).encode()).digest()
        return (np.frombuffer(digest[: 4 * dim], dtype=np.uint32) / 2**32 - 0.5).astype(np.float32)

    def _encode(self, batch):
        if self.oom_above is not None and len(batch) > self.oom_above:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        self.batch_sizes.append(len(batch))
        self.inputs.extend(batch)
        out = np.stack([self.vector(b, self.out_dim) for b in batch])
        if self.nan:
            out[0, 0] = np.nan
        return out

    encode_queries = _encode
    encode_candidates = _encode


class ConstantEncoder(HashEncoder):
    """Every candidate gets the same vector: all scores tie, so the ranking must be the pool order."""

    def encode_candidates(self, batch):
        self.inputs.extend(batch)
        return np.ones((len(batch), self.dim), dtype=np.float32)


@pytest.fixture(scope="module")
def triad_dir(tmp_path_factory):
    return str(write_tiny_triad(tmp_path_factory.mktemp("data") / "triad"))


@pytest.fixture(scope="module")
def ark_dir(tmp_path_factory):
    return str(write_tiny_ark(tmp_path_factory.mktemp("data") / "ark"))


def _cfg(data, tmp_path, **kw):
    base = dict(
        model="tiny-random-clip",
        data=data,
        out=str(tmp_path / "out"),
        cache_dir=str(tmp_path / "cache"),
        quiet=True,
        validate=False,
        cache_check=0,
    )  # the cache check: tests/models/test_own_model.py
    if kw.get("encoder") is not None:  # our own encoder: its own name (and a revision, so it is cached)
        base.update(model=None, name="hash-encoder", revision="test")
    base.update(kw)
    return RunConfig(**base)


def _rankings(out, config, folder="rankings"):
    return pq.read_table(f"{out}/{folder}/{config}.parquet").to_pylist()


def _expected_distinct(data, configs, variant="full"):
    from triad_dataset.contract.names import CANDIDATE_CORPUS

    seen = set()
    for c in configs:
        corpus = {r["item_id"]: r for r in read_rows(data, CANDIDATE_CORPUS[c])}
        for row in read_rows(data, c):
            q = inputs.query_input(row, variant)
            seen.add(("q", q.text, q.image, q.instruction))
            for cid in row["candidate_ids"]:
                it = corpus[cid]
                seen.add(("c", it["text"], (it["image"] or {}).get("bytes")))
    return len(seen)


# --- encode once, rank exactly ------------------------------------------------------------------------------
def test_encoder_inputs_equal_distinct_items_and_rankings_are_exact(triad_dir, tmp_path):
    enc = HashEncoder()
    res = run(_cfg(triad_dir, tmp_path, encoder=enc))
    configs = ["abstraction_i2c", "constraints_cars", "state_cars"]
    assert list(res["configs"]) == configs
    distinct = _expected_distinct(triad_dir, configs)
    assert len(enc.inputs) == distinct == res["run"]["distinct_items"] == res["run"]["encoded"]
    assert res["run"]["pool_slots"] > distinct  # candidates are shared across pools and configs
    # independent ranking: python sort of per-pair cosines, ties by pool position
    from triad_dataset.contract.names import CANDIDATE_CORPUS

    for config in configs:
        corpus = {r["item_id"]: r for r in read_rows(triad_dir, CANDIDATE_CORPUS[config])}
        got = {r["query_id"]: r for r in _rankings(tmp_path / "out", config)}
        for row in read_rows(triad_dir, config):
            q = HashEncoder.vector(inputs.query_input(row))
            q = q / np.linalg.norm(q)
            scores = []
            for pos, cid in enumerate(row["candidate_ids"]):
                c = HashEncoder.vector(inputs.candidate_input(corpus[cid]))
                scores.append((-(float(q @ (c / np.linalg.norm(c)))), pos, cid))
            expected = [cid for _, _, cid in sorted(scores)]
            assert got[row["query_id"]]["candidate_ids"] == expected
            np.testing.assert_allclose(got[row["query_id"]]["scores"], [-s for s, _, _ in sorted(scores)], atol=1e-6)


def test_ties_keep_pool_order(triad_dir, tmp_path):
    run(_cfg(triad_dir, tmp_path, encoder=ConstantEncoder(), configs="constraints_cars", no_cache=True))
    gold = {r["query_id"]: r["candidate_ids"] for r in read_rows(triad_dir, "constraints_cars")}
    for r in _rankings(tmp_path / "out", "constraints_cars"):
        assert r["candidate_ids"] == gold[r["query_id"]]


def test_results_are_the_scoring_of_the_saved_rankings(triad_dir, tmp_path):
    res = run(_cfg(triad_dir, tmp_path, encoder=HashEncoder()))
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["benchmark"] == "triad" and saved["variant"] == "full"
    assert saved["dataset"]["fingerprint"] and saved["model"]["name"] == "hash-encoder"
    assert saved["model"]["source_kind"] == "python" and saved["model"]["encoder_class"].endswith(".HashEncoder")
    assert saved["complete"] is True and "warning" not in saved
    gold = {c: read_rows(triad_dir, c) for c in saved["configs"]}
    ranked = {c: {r["query_id"]: r["candidate_ids"] for r in _rankings(tmp_path / "out", c)} for c in gold}
    rescored = scoring.score_triad(gold, ranked, seed=0)
    for c in gold:
        assert saved["configs"][c]["metrics"]["map"] == pytest.approx(rescored[c]["metrics"]["map"], abs=1e-12)
        assert saved["configs"][c]["intervals"]["map"] == pytest.approx(rescored[c]["intervals"]["map"])
    assert "dialogue_cost" in saved["summary"] and res["summary"]["map"].keys() == gold.keys()


# --- cache --------------------------------------------------------------------------------------------------
def test_second_run_encodes_nothing_and_a_change_reencodes_only_it(triad_dir, tmp_path):
    run(_cfg(triad_dir, tmp_path, encoder=HashEncoder()))
    enc = HashEncoder()
    res = run(_cfg(triad_dir, tmp_path, encoder=enc))
    assert enc.inputs == [] and res["run"]["cache_hits"] == res["run"]["distinct_items"]
    tables = tiny_triad_tables()
    tables["cars_items"][5]["text"] = "Product info: brand: Audi, year: 2099"
    changed = str(write_tiny_triad(tmp_path / "changed", tables=tables))
    enc = HashEncoder()
    res = run(_cfg(changed, tmp_path, encoder=enc))
    assert [m.text for m in enc.inputs] == ["Product info: brand: Audi, year: 2099"]
    assert res["run"]["encoded"] == 1


def test_interrupted_run_resumes_and_writes_no_results(triad_dir, tmp_path):
    class Interrupt(HashEncoder):
        stop = True

        def _encode(self, batch):
            if self.stop and len(self.batch_sizes) == 2:
                raise KeyboardInterrupt
            return super()._encode(batch)

        encode_queries = _encode
        encode_candidates = _encode

    with pytest.raises(KeyboardInterrupt):
        run(_cfg(triad_dir, tmp_path, encoder=Interrupt(), batch_size=4))
    assert not (tmp_path / "out" / "results.json").exists()
    enc = Interrupt()  # the same encoder class (part of its cache identity), this time not interrupted
    enc.stop = False
    res = run(_cfg(triad_dir, tmp_path, encoder=enc, batch_size=4))
    assert len(enc.inputs) == res["run"]["distinct_items"] - 8 == res["run"]["encoded"]


# --- variants -----------------------------------------------------------------------------------------------
def test_text_only_variant_changes_queries_only(triad_dir, tmp_path):
    enc = HashEncoder()
    run(_cfg(triad_dir, tmp_path, encoder=enc, configs="state_cars", variant="text_only", no_cache=True))
    queries = [m for m in enc.inputs if m.text.startswith("User conversation")]
    dialogues = {inputs.strip_reference(r["query_text"]) for r in read_rows(triad_dir, "state_cars")}
    assert len(dialogues) == 3  # q0 and q3 differ only in the reference: without it they are one input
    assert {m.text for m in queries} == dialogues and all(m.image is None for m in queries)
    assert sum(m.image is not None for m in enc.inputs) == len(enc.inputs) - 3  # candidates keep their images
    with pytest.raises(TriadError, match="state configs only"):
        run(_cfg(triad_dir, tmp_path, encoder=HashEncoder(), configs="constraints_cars", variant="last_turn_only"))


def test_text_only_family_never_sees_images(triad_dir, tmp_path):
    enc = HashEncoder()
    res = run(_cfg(triad_dir, tmp_path, encoder=enc, sees_images=False))
    assert enc.inputs and all(m.image is None for m in enc.inputs)
    texts = {(m.text, m.instruction) for m in enc.inputs}
    assert len(enc.inputs) == len(texts) == res["run"]["distinct_items"]
    with pytest.raises(TriadError, match="ignores images"):
        run(_cfg(triad_dir, tmp_path, encoder=enc, sees_images=False, variant="image_only"))


# --- bad input ----------------------------------------------------------------------------------------------
def test_unknown_names_list_valid_ones(triad_dir, tmp_path):
    with pytest.raises(TriadError, match="valid: all, abstraction_i2c, constraints_cars, state_cars"):
        run(_cfg(triad_dir, tmp_path, configs="constraints_shoes"))
    with pytest.raises(TriadError, match="not in this folder"):
        run(_cfg(triad_dir, tmp_path, configs="same_cars"))
    with pytest.raises(TriadError, match="unknown embedder 'nope'; valid: .*minilm"):
        run(_cfg(triad_dir, tmp_path, model="nope"))
    with pytest.raises(TriadError, match="unknown input variant"):
        run(_cfg(triad_dir, tmp_path, variant="nope"))
    with pytest.raises(TriadError, match="--batch-size must be at least 1, got 0"):
        run(_cfg(triad_dir, tmp_path, batch_size=0))


def test_invalid_folder_is_reported_by_validation(tmp_path):
    tables = tiny_triad_tables()
    row = tables["constraints_cars"][0]
    row["candidate_ids"] = row["candidate_ids"][:-1] + [row["candidate_ids"][0]]  # duplicate candidate
    bad = str(write_tiny_triad(tmp_path / "bad", tables=tables))
    with pytest.raises(
        TriadError, match=r"(?s)fails `triad validate` \(1 problems\).*constraints_cars / q0: duplicate candidates"
    ):
        run(_cfg(bad, tmp_path, encoder=HashEncoder(), validate=True))
    assert not (tmp_path / "out" / "results.json").exists()


def test_valid_folder_passes_validation(triad_dir, tmp_path):
    res = run(_cfg(triad_dir, tmp_path, encoder=HashEncoder(), validate=True, configs="constraints_cars"))
    assert res["configs"]["constraints_cars"]["n_queries"] == 4


def test_undecodable_image_is_named_or_skipped(tmp_path):
    tables = tiny_triad_tables()
    tables["cars_items"][7]["image"] = b"\x89PNG\r\n\x1a\n not really a png"
    bad = str(write_tiny_triad(tmp_path / "badimg", tables=tables))
    with pytest.raises(TriadError, match="cars_items item car007: image does not decode"):
        run(_cfg(bad, tmp_path, model="tiny-random-clip", configs="constraints_cars"))
    res = run(_cfg(bad, tmp_path, model="tiny-random-clip", configs="constraints_cars", skip_bad_images=True))
    assert res["run"]["images_skipped"] == ["cars_items item car007"]


def test_nan_and_wrong_dimension_vectors_are_refused(triad_dir, tmp_path):
    with pytest.raises(TriadError, match="NaN/inf vectors"):
        run(_cfg(triad_dir, tmp_path, encoder=HashEncoder(nan=True), no_cache=True))
    with pytest.raises(TriadError, match="4-dimensional vectors, expected 8"):
        run(_cfg(triad_dir, tmp_path, encoder=HashEncoder(dim=4), no_cache=True))
    assert not (tmp_path / "out" / "results.json").exists()


def test_out_of_memory_halves_the_batch(triad_dir, tmp_path, capsys):
    enc = HashEncoder(oom_above=4)
    res = run(_cfg(triad_dir, tmp_path, encoder=enc, batch_size=16, no_cache=True, quiet=False))
    assert max(enc.batch_sizes) == 4 and res["run"]["batch_halvings"] == 2
    assert "out of memory on a batch of 16: retrying with batch size 8" in capsys.readouterr().err


def test_cli_user_error_has_no_traceback(triad_dir, tmp_path, capsys):
    from triad_cli.main import main

    code = main(["run", "--model", "nope", "--data", triad_dir, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "unknown embedder 'nope'" in err and "Traceback" not in err


# --- rerank -------------------------------------------------------------------------------------------------
class LengthReranker:
    """Scores a pair by the parity of the candidate text's length: a known order, with ties on purpose."""

    def score_pairs(self, queries, candidates):
        return np.asarray([float(len(c.text) % 2) for c in candidates])


def test_rerank_splices_top_k_above_unchanged_tail(triad_dir, tmp_path):
    run(
        _cfg(
            triad_dir,
            tmp_path,
            encoder=HashEncoder(),
            configs="constraints_cars",
            reranker=LengthReranker(),
            rerank_top=5,
        )
    )
    first = _rankings(tmp_path / "out", "constraints_cars", "rankings_first_stage")
    final = _rankings(tmp_path / "out", "constraints_cars")
    corpus = {r["item_id"]: r["text"] for r in read_rows(triad_dir, "cars_items")}
    for f, g in zip(first, final, strict=True):
        head = f["candidate_ids"][:5]
        score = {c: len(corpus[c]) % 2 for c in head}
        expected = sorted(head, key=lambda c: (-score[c], head.index(c)))  # ties keep first-stage order
        assert g["candidate_ids"] == expected + f["candidate_ids"][5:]
        assert g["rerank_scores"] == [float(score[c]) for c in expected]
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert set(res["two_stage"]["constraints_cars"]) >= {"first_stage", "reranked", "coverage@5", "oracle@5"}


class RecordingReranker(LengthReranker):
    """LengthReranker that keeps every pair it is given."""

    def __init__(self) -> None:
        self.pairs: list = []

    def score_pairs(self, queries, candidates):
        self.pairs.extend(zip(queries, candidates, strict=True))
        return super().score_pairs(queries, candidates)


def test_reranker_after_text_only_first_stage_still_sees_images(triad_dir, tmp_path):
    # minilm's plan drops images (text-only encoder); the multimodal reranker must still get the paper's inputs
    rr = RecordingReranker()
    run(
        _cfg(
            triad_dir,
            tmp_path,
            encoder=HashEncoder(),
            sees_images=False,
            configs="constraints_cars",
            reranker=rr,
            rerank_top=5,
            no_cache=True,
        )
    )
    corpus = {r["item_id"]: r for r in read_rows(triad_dir, "cars_items")}
    rows = {r["query_id"]: r for r in read_rows(triad_dir, "constraints_cars")}
    first = _rankings(tmp_path / "out", "constraints_cars", "rankings_first_stage")
    expected = []
    for f in first:
        row = rows[f["query_id"]]
        expected += [(inputs.query_input(row), inputs.candidate_input(corpus[c])) for c in f["candidate_ids"][:5]]
    assert rr.pairs == expected
    assert all(q.image is not None and c.image is not None for q, c in rr.pairs)


def test_ark_reranker_after_text_only_first_stage_still_sees_images(ark_dir, tmp_path):
    rr = RecordingReranker()
    run(
        _cfg(
            ark_dir,
            tmp_path,
            encoder=HashEncoder(),
            sees_images=False,
            configs="metro",
            reranker=rr,
            rerank_top=5,
            no_cache=True,
        )
    )
    gallery = {r["item_id"]: r for r in read_rows(ark_dir, "metro_gallery")}
    rows = {r["query_id"]: r for r in read_rows(ark_dir, "metro")}
    first = _rankings(tmp_path / "out", "metro", "rankings_first_stage")
    expected = [
        (inputs.query_input(rows[f["query_id"]]), inputs.candidate_input(gallery[c]))
        for f in first
        for c in f["candidate_ids"][:5]
    ]
    assert rr.pairs == expected and any(c.image is not None for _, c in rr.pairs)


# --- ARK ----------------------------------------------------------------------------------------------------
def test_ark_gallery_ranking_and_positive_rank(ark_dir, tmp_path):
    enc = HashEncoder()
    res = run(_cfg(ark_dir, tmp_path, encoder=enc))
    assert res["benchmark"] == "ark" and set(res["configs"]) == {"calendar", "metro"}
    assert "macro" in res["summary"] and "by_reasoning_skill" in res["summary"]
    assert len(enc.inputs) == res["run"]["distinct_items"] == 2 * (30 + 5)
    for subtype in ("calendar", "metro"):
        gallery = read_rows(ark_dir, f"{subtype}_gallery")
        got = {r["query_id"]: r for r in _rankings(tmp_path / "out", subtype)}
        for row in read_rows(ark_dir, subtype):
            q = HashEncoder.vector(inputs.query_input(row))
            q = q / np.linalg.norm(q)
            scored = []
            for pos, it in enumerate(gallery):
                c = HashEncoder.vector(inputs.candidate_input(it))
                scored.append((-float(q @ (c / np.linalg.norm(c))), pos, it["item_id"]))
            order = [cid for _, _, cid in sorted(scored)]
            r = got[row["query_id"]]
            assert r["candidate_ids"] == order[:100] and len(r["candidate_ids"]) == 30
            assert r["positive_rank"] == order.index(row["positive_id"]) + 1
            assert res["configs"][subtype]["positive_rank"][row["query_id"]] == r["positive_rank"]


def test_ark_rewrites_and_rerank(ark_dir, tmp_path):
    rewrites = tmp_path / "rw.jsonl"
    rewrites.write_text('{"query_id": "metro-q1", "query_text": "a rewritten question"}\n')
    enc = HashEncoder()
    res = run(_cfg(ark_dir, tmp_path, encoder=enc, rewrites=str(rewrites), reranker=LengthReranker(), configs="metro"))
    texts = [m.text for m in enc.inputs]
    assert "a rewritten question" in texts and "find metro thing number 1" not in texts
    assert res["rerank_top"] == 50
    for first, final in zip(
        _rankings(tmp_path / "out", "metro", "rankings_first_stage"), _rankings(tmp_path / "out", "metro"), strict=True
    ):
        assert sorted(first["candidate_ids"]) == sorted(final["candidate_ids"])
        assert (
            final["candidate_ids"].index(
                next(r["positive_id"] for r in read_rows(ark_dir, "metro") if r["query_id"] == final["query_id"])
            )
            + 1
            == final["positive_rank"]
        )
    rewrites.write_text('{"query_id": "metro-q1"}\n')
    with pytest.raises(TriadError, match=r"rw.jsonl:1: expected"):
        run(_cfg(ark_dir, tmp_path, encoder=HashEncoder(), rewrites=str(rewrites)))


# --- real tiny models end to end ----------------------------------------------------------------------------
@pytest.mark.parametrize("model", ["tiny-random-siglip", "tiny-random-vlm"])
def test_tiny_models_end_to_end(model, triad_dir, tmp_path):
    res = run(_cfg(triad_dir, tmp_path, model=model, configs="abstraction_i2c,constraints_cars", limit=2))
    assert res["run"]["limit"] == 2 and all(v["n_queries"] == 2 for v in res["configs"].values())
    assert all(0.0 <= v["metrics"]["map"] <= 1.0 for v in res["configs"].values())


def test_tiny_reranker_end_to_end(ark_dir, tmp_path):
    res = run(
        _cfg(
            ark_dir,
            tmp_path,
            model="tiny-random-clip",
            rerank="tiny-random-reranker",
            rerank_top=3,
            configs="calendar",
            limit=2,
        )
    )
    assert res["reranker"]["name"] == "tiny-random-reranker" and res["rerank_top"] == 3


def test_new_run_replaces_old_outputs(triad_dir, tmp_path):
    run(_cfg(triad_dir, tmp_path, encoder=HashEncoder(), configs="state_cars"))
    run(_cfg(triad_dir, tmp_path, encoder=HashEncoder(), configs="constraints_cars"))
    assert sorted(p.name for p in (tmp_path / "out" / "rankings").iterdir()) == ["constraints_cars.parquet"]
    assert not any(p.name.startswith(".") for p in (tmp_path / "out").iterdir())
    shutil.rmtree(tmp_path / "out")


def test_png_helper_is_deterministic():
    assert png((1, 2, 3)) == png((1, 2, 3)) and tiny_ark_tables()["metro"][0]["subtype"] == "metro"


def test_both_pool_scoring_paths_agree():
    from model_adapters.ranks.ranking import normalize, pool_scores

    rng = np.random.default_rng(0)
    items = normalize(rng.standard_normal((300, 8)))
    queries = normalize(rng.standard_normal((5, 8)))
    pools = np.stack([rng.choice(300, size=4, replace=False) for _ in range(5)])
    pools[0, 3] = -1  # a ragged pool
    gathered = pool_scores(queries, items, pools)  # 300 items > 64 x 4: gather path
    full = pool_scores(queries, items, np.concatenate([pools, np.full((5, 1), -1)], axis=1)[:, :5])
    brute = np.array([[items[j] @ queries[q] if j >= 0 else -np.inf for j in pools[q]] for q in range(5)])
    np.testing.assert_allclose(gathered, brute, atol=1e-6)
    np.testing.assert_allclose(full[:, :4], brute, atol=1e-6)


# --- text truncation is reported ----------------------------------------------------------------------------
SMALL_LIMIT = 38  # cuts every tiny query and the longer car texts ("Audi", "Fiat"), not the shorter ones


def _image_bytes(value):
    return value.get("bytes") if isinstance(value, dict) else value


def _over(tokenizer, text, limit):
    return bool(text) and len(tokenizer(text)["input_ids"]) > limit


def _independent_truncation(data, configs, limit, tokenizer):
    """Distinct query / candidate inputs whose text (instruction prepended) has more tokens than `limit`."""
    from triad_dataset.contract.names import CANDIDATE_CORPUS

    out = {}
    for config in configs:
        rows = read_rows(data, config)
        corpus = {r["item_id"]: r for r in read_rows(data, CANDIDATE_CORPUS[config])}
        queries = {
            (
                f"{r['instruction']} {r['query_text']}" if r.get("instruction") else r["query_text"],
                _image_bytes(r.get("query_image")),
            )
            for r in rows
        }
        candidates = {(corpus[c]["text"], _image_bytes(corpus[c]["image"])) for r in rows for c in r["candidate_ids"]}
        out[config] = {
            "queries": sum(_over(tokenizer, t, limit) for t, _ in queries),
            "candidates": sum(_over(tokenizer, t, limit) for t, _ in candidates),
            "limit": limit,
        }
    return out


@pytest.fixture
def small_limit_clip(monkeypatch):
    """tiny-random-clip with a 38-token text limit (a registry entry copy; its own cache identity)."""
    import dataclasses

    from model_adapters.models import registry

    entry = registry.get_entry("tiny-random-clip")
    small = dataclasses.replace(entry, own_options={**entry.own_options, "max_length": SMALL_LIMIT})
    monkeypatch.setitem(registry.REGISTRY, entry.name, small)
    return small


def test_truncated_inputs_are_counted_reported_and_same_when_cached(
    triad_dir, tmp_path, small_limit_clip, monkeypatch, capsys
):
    from tests.doubles.tiny import build_tokenizer

    configs = ["abstraction_i2c", "constraints_cars", "state_cars"]
    expected = _independent_truncation(triad_dir, configs, SMALL_LIMIT, build_tokenizer(add_bos_eos=True))
    assert all(expected[c]["queries"] > 0 for c in configs)  # the limit really cuts something
    assert 0 < expected["state_cars"]["candidates"] < 20  # ... and not everything
    res = run(_cfg(triad_dir, tmp_path, quiet=False))
    assert res["run"]["truncated_inputs"] == expected
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["run"]["truncated_inputs"] == expected
    printed = capsys.readouterr().out.splitlines()
    state = expected["state_cars"]
    line = (
        f"warning: {state['queries']} state_cars queries and {state['candidates']} state_cars candidates exceed "
        f"tiny-random-clip's {SMALL_LIMIT}-token text limit and were truncated (the end of the text was cut)"
    )
    assert line in printed
    assert sum(p.startswith("warning: ") and "text limit" in p for p in printed) == len(configs)

    def no_weights(*args, **kwargs):
        raise AssertionError("a cached re-run must not load the model")

    monkeypatch.setattr("model_adapters.models.resolve.load_encoder", no_weights)
    again = run(_cfg(triad_dir, tmp_path, quiet=False))
    assert again["run"]["encoded"] == 0 and again["run"]["truncated_inputs"] == expected
    assert line in capsys.readouterr().out.splitlines()


def test_truncation_follows_the_entry_limit_and_families_without_one(triad_dir, tmp_path):
    from tests.doubles.tiny import build_tokenizer

    res = run(_cfg(triad_dir, tmp_path, model="tiny-random-siglip", configs="state_cars"))
    assert res["run"]["truncated_inputs"] == _independent_truncation(
        triad_dir, ["state_cars"], 64, build_tokenizer(add_bos_eos=False)
    )
    assert res["run"]["truncated_inputs"]["state_cars"]["queries"] == 4
    vlm = run(_cfg(triad_dir, tmp_path, model="tiny-random-vlm", configs="state_cars", limit=1))
    assert vlm["run"]["truncated_inputs"] == {}  # the VLM families do not truncate
    fake = run(_cfg(triad_dir, tmp_path, encoder=HashEncoder(), configs="state_cars", no_cache=True))
    assert fake["run"]["truncated_inputs"] == {}  # a given encoder without `text_limit` is not second-guessed


@pytest.mark.parametrize("model", ["tiny-random-clip", "tiny-random-siglip", "minilm"])
def test_counted_limit_is_the_encoders_own(model):
    """The plan-time limit (tokenizer only, no weights) is the one the loaded encoder truncates at."""
    from model_adapters.models.registry import get_entry, load_encoder, text_limit

    entry = get_entry(model)
    counted, own = text_limit(entry), load_encoder(entry).text_limit()
    assert counted.limit == own.limit and counted.lowercase == own.lowercase
    text = "Reference product info: brand: Audi. User conversation: [Round 1] User: make it red " * 4
    assert counted.token_counts([text]) == own.token_counts([text]) and counted.token_counts([text])[0] > 64


def test_results_say_how_the_inputs_were_batched(triad_dir, tmp_path):
    """run.encoding: the order, the batch sizes, the preparer threads and the padding, as encoded."""
    enc = run(_cfg(triad_dir, tmp_path, configs="constraints_cars", no_cache=True))["run"]["encoding"]
    assert enc["order"] == "token count" and enc["prepared_ahead"] >= 1 and enc["batch_halvings"] == 0
    assert enc["batch_size"] == {"start": 16, "final": 16, "largest": 16, "grew": False}  # CPU: no growing
    assert 0 < enc["tokens"] <= enc["padded_tokens"]
    own = run(_cfg(triad_dir, tmp_path, encoder=HashEncoder(), configs="constraints_cars", no_cache=True))
    assert own["run"]["encoding"]["order"] == "text length" and own["run"]["encoding"]["prepared_ahead"] == 0
