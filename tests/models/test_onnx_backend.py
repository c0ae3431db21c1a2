"""`--backend onnx`: ONNX Runtime on the CPU gives the torch path's vectors, is exported once per model identity,
is keyed apart from torch (whose cache keys stay as they were), and is refused in one line where it does not apply.
Also `--dtype bfloat16` on the CPU: recorded, keyed, and close to float32 (docs/benchmarks.md has its cosine)."""

from __future__ import annotations

import numpy as np
import pytest

from model_adapters.families import onnx_feed, onnx_text
from model_adapters.models.identity import ModelIdentity
from model_adapters.models.registry import get_entry, load_encoder
from model_adapters.models.selection import resolve_model
from model_adapters.protocol import ModelInput
from model_adapters.run.config import RunConfig
from tests import reference_inputs
from tests.doubles import tiny, tiny_text
from triad_dataset.contract.errors import TriadError

QUERIES = [ModelInput(t, None, i) for t, i in reference_inputs.TEXT_QUERIES] + [
    ModelInput(reference_inputs.LONG_TEXT * 8, None, None)
]
TIE = 1e-6  # scores this close may trade places between backends (measured: 3e-7 at most, docs/benchmarks.md)
DOCS = [ModelInput(t, None, None) for t in reference_inputs.TEXT_DOCS] + [
    ModelInput(reference_inputs.CANDIDATE, None, None)
]


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = a.astype(np.float64), b.astype(np.float64)
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def assert_same_vectors(torch_enc, onnx_enc) -> None:
    """Queries (with and without an instruction, one past the token limit) and documents, in batches of 1 and all."""
    for encode in ("encode_queries", "encode_candidates"):
        batch = QUERIES if encode == "encode_queries" else DOCS
        want = getattr(torch_enc, encode)(batch)
        for got in (getattr(onnx_enc, encode)(batch), np.concatenate([getattr(onnx_enc, encode)([x]) for x in batch])):
            assert got.shape == want.shape and got.dtype == np.float32
            assert cosines(got, want).min() >= onnx_text.MIN_COSINE, (encode, cosines(got, want))


@pytest.fixture(scope="module")
def minilm():
    return load_encoder(get_entry("minilm"), dtype="float32")


@pytest.fixture(scope="module")
def bge_m3(tmp_path_factory):
    folder = tiny_text.save_bge_m3(str(tmp_path_factory.mktemp("bge-m3")))
    encoder = load_encoder(get_entry("bge-m3"), model_path=folder, dtype="float32")
    encoder.model.max_seq_length = (
        reference_inputs.TEXT_TRUNCATION_MAX_LENGTH
    )  # its tokenizer is per character: cut the long query
    return encoder


@pytest.mark.slow
def test_onnx_gives_minilms_torch_vectors_and_exports_once(minilm, tmp_path):
    first = onnx_text.wrap(minilm, str(tmp_path), "minilm", log=False)
    graph = tmp_path / onnx_text.FILE
    stamp = graph.stat().st_mtime_ns
    files = sorted(p.name for p in tmp_path.iterdir())  # the graph and its torch-free feed, no temporary left
    assert first.exported and files == sorted([onnx_text.FILE, onnx_feed.FEED, onnx_feed.TOKENIZER])
    assert_same_vectors(minilm, first)
    again = onnx_text.wrap(minilm, str(tmp_path), "minilm", log=False)
    assert not again.exported and graph.stat().st_mtime_ns == stamp


@pytest.mark.slow
def test_onnx_gives_the_tiny_bge_m3s_torch_vectors(bge_m3, tmp_path):
    assert_same_vectors(bge_m3, onnx_text.wrap(bge_m3, str(tmp_path), "bge-m3", log=False))


def _saved(builder, folder) -> str:
    """A tiny dual tower (`tests.doubles.tiny`) saved as a checkpoint folder: model, tokenizer, image processor."""
    for part in builder(0):
        part.save_pretrained(folder)
    return str(folder)


# Each dual-tower recipe with an ONNX path, on a tiny model of the class its public checkpoints load: the registry's
# tiny models, and the public entries (their recipe's text settings) loaded from a tiny checkpoint folder.
TOWERS = {
    "tiny-random-clip": None,
    "tiny-random-siglip": None,
    "siglip2": lambda folder: _saved(tiny.tiny_siglip2, folder),  # SiglipModel + Gemma's tokenizer: a FixRes folder
    "metaclip-2-worldwide-huge": lambda folder: tiny_text.save_metaclip_2(str(folder)),
    "bge-vl-base": lambda folder: _saved(tiny.tiny_clip, folder),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TOWERS))
def test_onnx_gives_the_tiny_dual_towers_torch_vectors_and_exports_once(name, tmp_path):
    from model_adapters.families import onnx_towers

    save = TOWERS[name]
    model_path = save(tmp_path / "checkpoint") if save else None
    torch_enc = load_encoder(get_entry(name), model_path=model_path, dtype="float32")
    assert type(torch_enc.model).__name__ in onnx_towers.CLASSES
    graphs = tmp_path / "graphs"
    onnx_enc = onnx_towers.wrap(torch_enc, str(graphs), name, log=False)
    assert onnx_enc.exported and sorted(p.name for p in graphs.iterdir()) == [onnx_towers.IMAGE, onnx_towers.TEXT]
    texts = [t for t, _ in reference_inputs.TEXT_QUERIES]
    batch = [
        ModelInput(texts[i % len(texts)], reference_inputs.image(k))
        for i, k in enumerate(reference_inputs.RESIZE_IMAGES)
    ]
    batch += [
        ModelInput(reference_inputs.LONG_TEXT, None),
        ModelInput("", reference_inputs.image("small")),
    ]  # text alone, image alone
    for encode in ("encode_queries", "encode_candidates"):
        got, want = getattr(onnx_enc, encode)(batch), getattr(torch_enc, encode)(batch)
        assert cosines(got, want).min() >= onnx_text.MIN_COSINE, (encode, cosines(got, want))
    assert not onnx_towers.wrap(torch_enc, str(graphs), name, log=False).exported


def test_a_dual_tower_class_without_an_onnx_path_is_refused_in_one_line(tmp_path):
    """SigLIP 2's NaFlex class: its image tower also takes patch masks and spatial shapes, which no graph here takes."""
    from transformers import Siglip2Config, Siglip2Model

    from model_adapters.families import onnx_towers

    small = {"hidden_size": 8, "intermediate_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2}
    model = Siglip2Model(Siglip2Config(text_config={**small, "vocab_size": 16}, vision_config=small))
    base = type("Base", (), {"model": model})()
    with pytest.raises(TriadError) as caught:
        onnx_towers.wrap(base, str(tmp_path), "siglip2-naflex", log=False)
    assert str(caught.value) == (
        "--backend onnx: model siglip2-naflex loads Siglip2Model, whose towers have no ONNX path (the tower export "
        "covers CLIPModel, SiglipModel, MetaClip2Model); run it with --backend torch"
    )
    assert not any(tmp_path.iterdir())  # refused before anything is exported


@pytest.mark.slow
def test_a_graph_of_another_model_fails_the_equality_check(bge_m3, tmp_path):
    other = load_encoder(
        get_entry("bge-m3"), model_path=tiny_text.save_bge_m3(str(tmp_path / "other"), seed=7), dtype="float32"
    )
    other.model.max_seq_length = reference_inputs.TEXT_TRUNCATION_MAX_LENGTH
    graph = onnx_text.wrap(other, str(tmp_path / "graph"), "other", log=False)
    with pytest.raises(TriadError, match=r"^--backend onnx: model bge-m3's exported graph gives other vectors"):
        onnx_text.check_equal(bge_m3.model, graph.session, "bge-m3")


@pytest.fixture(scope="module")
def bge_reranker(tmp_path_factory):
    from model_adapters.models.registry import load_reranker

    folder = tiny_text.save_bge_reranker(str(tmp_path_factory.mktemp("bge-reranker")))
    reranker = load_reranker(get_entry("bge-reranker-v2-m3", kind="reranker"), model_path=folder, dtype="float32")
    reranker.max_length = reference_inputs.TEXT_RERANK_TRUNCATION_MAX_LENGTH  # the tiny model's positions
    reranker.query_max_length = reranker.max_length * 3 // 4
    return reranker


@pytest.mark.slow
def test_onnx_gives_the_tiny_bge_rerankers_torch_scores_and_exports_once(bge_reranker, tmp_path):
    from model_adapters.families import onnx_rerank

    onnx = onnx_rerank.wrap(bge_reranker, str(tmp_path), "bge-reranker-v2-m3", log=False)
    assert onnx.exported and [p.name for p in tmp_path.iterdir()] == [onnx_rerank.FILE]
    pairs = [(q, d) for q in reference_inputs.TEXT_RERANK_QUERIES for d in reference_inputs.TEXT_RERANK_DOCS]
    pairs.append(reference_inputs.TEXT_RERANK_TRUNCATION_PAIR)  # past the query and the pair limits
    queries = [ModelInput(q, None, i) for (q, i), _ in pairs]
    docs = [ModelInput(d, None, None) for _, d in pairs]
    want = bge_reranker.score_pairs(queries, docs)
    one_by_one = np.concatenate([onnx.score_pairs([q], [d]) for q, d in zip(queries, docs, strict=True)])
    for got in (onnx.score_pairs(queries, docs), one_by_one):  # one padded batch, and no padding
        assert got.shape == want.shape and got.dtype == np.float64
        assert np.abs(got - want).max() <= 1e-6, np.abs(got - want).max()
    bge_reranker.normalize = False  # raw logits: the check the export makes
    try:
        assert np.abs(onnx.score_pairs(queries, docs) - bge_reranker.score_pairs(queries, docs)).max() <= 1e-5
    finally:
        bge_reranker.normalize = True
    assert not onnx_rerank.wrap(bge_reranker, str(tmp_path), "bge-reranker-v2-m3", log=False).exported


class Own:
    """Your own encoder (the Encoder protocol)."""

    dim = 2

    def encode_queries(self, batch):
        return np.ones((len(batch), 2), dtype=np.float32)

    encode_candidates = encode_queries


def _resolve(**kwargs):
    return resolve_model(RunConfig(data="D", out="O", **{"model": "minilm", **kwargs}))


def test_the_backend_is_in_the_identity_and_key_only_when_it_is_onnx():
    torch_run, onnx_run = _resolve(), _resolve(backend="onnx")
    assert "backend" not in torch_run.identity.to_json() and "backend" not in torch_run.identity.cache_fields()
    assert onnx_run.identity.to_json()["backend"] == "onnx"
    assert onnx_run.identity.versions["onnxruntime"] is not None
    assert onnx_run.identity.cache_key() != torch_run.identity.cache_key()
    assert onnx_run.identity.label.endswith(", onnx)")


def test_the_default_backend_keeps_the_cache_fields_byte_identical():
    """The fields (hence the key) a torch identity had before backends existed: written out by hand."""
    from model_adapters.models.registry import ADAPTER_VERSION
    from model_adapters.vectors.cache import model_key

    identity = ModelIdentity("m", "registry", "org/m", revision="r", family="sentence_transformer", versions={"t": "1"})
    expected = {
        "name": "m",
        "source_kind": "registry",
        "source": "org/m",
        "revision": "r",
        "family": "sentence_transformer",
        "sees_images": True,
        "dtype": None,
        "options": {},
        "encoder_class": None,
        "recipe": None,
        "input_pipeline": None,
        "kind": "embedder",
        "versions": {"t": "1"},
        "signature": None,
        "adapter_version": ADAPTER_VERSION,
    }
    assert identity.cache_fields() == expected
    assert identity.cache_key() == model_key(expected)


NO_PATH = (
    "--backend onnx: model {label} is fed by {fed_by}, which has no ONNX path (the ONNX backend covers the recipes "
    "sentence-transformers, bge-m3, clip, siglip, siglip2, metaclip-2, bge-vl-clip); run it with --backend torch"
)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"model": "tiny-random-vlm"}, NO_PATH.replace("{fed_by}", "the {recipe} recipe")),
        (
            {"model": None, "encoder": "own", "name": "mine", "revision": "v1"},
            NO_PATH.replace("{fed_by}", "its own code"),
        ),
        (
            {"dtype": "bfloat16"},
            "--backend onnx: runs float32 weights, and model {label} is set to bfloat16; give --dtype float32, or "
            "--backend torch for bfloat16",
        ),
    ],
)
def test_onnx_is_refused_in_one_line_where_it_does_not_apply(kwargs, message):
    if kwargs.get("encoder") == "own":
        kwargs = {**kwargs, "encoder": Own()}
    identity = _resolve(**kwargs).identity
    with pytest.raises(TriadError) as caught:
        _resolve(backend="onnx", **kwargs)
    assert str(caught.value) == message.format(label=identity.label, recipe=identity.recipe)


RERANK_NO_PATH = (
    "--rerank-backend onnx: reranker {label} is fed by the {recipe} recipe, which has no ONNX path (the ONNX "
    "reranker covers the recipes bge-reranker-v2-m3); run it with --rerank-backend torch"
)


def test_onnx_reranking_is_refused_in_one_line_where_it_does_not_apply():
    from model_adapters.models.selection import resolve_reranker

    def reranker(**kwargs):
        return resolve_reranker(RunConfig(data="D", out="O", model="minilm", **kwargs))

    identity = reranker(rerank="tiny-random-reranker").identity
    with pytest.raises(TriadError) as caught:
        reranker(rerank="tiny-random-reranker", rerank_backend="onnx")
    assert str(caught.value) == RERANK_NO_PATH.format(label=identity.label, recipe=identity.recipe)
    with pytest.raises(TriadError) as caught:
        reranker(rerank_backend="onnx")
    assert str(caught.value) == "--rerank-backend onnx: the run has no reranker (--rerank NAME)"
    onnx = reranker(rerank="bge-reranker-v2-m3", rerank_backend="onnx").identity
    torch_identity = reranker(rerank="bge-reranker-v2-m3").identity
    assert onnx.to_json()["backend"] == "onnx" and "backend" not in torch_identity.to_json()
    assert onnx.cache_key() != torch_identity.cache_key()


def test_onnx_runs_on_the_cpu_only():
    with pytest.raises(TriadError, match=r"^--backend onnx: model m would run on cuda:0, .* add --device cpu"):
        onnx_text.check_device("cuda:0", "m")
    onnx_text.check_device("cpu", "m")


def test_bfloat16_on_the_cpu_is_recorded_and_keyed_apart():
    fp32, bf16 = _resolve(), _resolve(dtype="bfloat16")
    assert (fp32.identity.to_json()["dtype"], bf16.identity.to_json()["dtype"]) == ("float32", "bfloat16")
    assert bf16.identity.cache_key() != fp32.identity.cache_key()


@pytest.mark.slow
def test_bfloat16_on_the_cpu_stays_close_to_float32(minilm):
    bf16 = load_encoder(get_entry("minilm"), dtype="bfloat16")
    got, want = bf16.encode_candidates(DOCS), minilm.encode_candidates(DOCS)
    assert got.dtype == np.float32 and cosines(got, want).min() >= 0.999


def mini_run(data, tmp_path, out: str, **fields) -> dict:
    """`triad run --model minilm` on the mini edition's state_cars into `tmp_path/out`, its cache in
    `tmp_path/cache`; `fields` are further RunConfig fields."""
    from model_adapters.runner import run

    cfg = RunConfig(
        model="minilm",
        data=str(data),
        out=str(tmp_path / out),
        configs="state_cars",
        cache_dir=str(tmp_path / "cache"),
        validate=False,
        **fields,
    )
    return run(cfg)


def state_cars_rankings(run_dir) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(run_dir / "rankings" / "state_cars.parquet").to_pylist()


def check_schema(results_file) -> None:
    """A results.json against model_adapters/results/results.schema.json."""
    import json
    from pathlib import Path

    import jsonschema

    from model_adapters import results

    schema = json.loads((Path(results.__file__).parent / "results.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(json.loads(results_file.read_text()))


@pytest.mark.slow
def test_a_minilm_run_on_onnx_ranks_as_torch_and_a_rerun_exports_nothing(mini_triad_dir, tmp_path, capsys):
    """One mini config (all of them: docs/benchmarks.md): the same candidates in the same order, except that
    candidates whose torch scores are within TIE of each other may trade places (float32 noise: different kernels
    sum in another order); mAP within 1e-6."""

    def triad_run(backend: str, out: str, quiet: bool = True) -> dict:
        return mini_run(mini_triad_dir, tmp_path, out, backend=backend, quiet=quiet)

    def ranked(out: str) -> list[dict]:
        return state_cars_rankings(tmp_path / out)

    def order(out: str) -> list[list[str]]:
        return [row["candidate_ids"] for row in ranked(out)]

    torch_run, onnx_run = triad_run("torch", "torch"), triad_run("onnx", "onnx")
    assert "backend" not in torch_run["model"] and onnx_run["model"]["backend"] == "onnx"
    check_schema(tmp_path / "onnx" / "results.json")
    for want, got in zip(ranked("torch"), ranked("onnx"), strict=True):
        score = dict(zip(want["candidate_ids"], want["scores"], strict=True))
        assert sorted(got["candidate_ids"]) == sorted(want["candidate_ids"])
        along = np.array([score[c] for c in got["candidate_ids"]])  # torch's scores in ONNX's order
        assert np.all(along[1:] <= along[:-1] + TIE), want["query_id"]
    got, want = (r["configs"]["state_cars"]["metrics"]["map"] for r in (onnx_run, torch_run))
    assert abs(got - want) <= 1e-6
    graphs = list((tmp_path / "cache" / "onnx").glob(f"*/{onnx_text.FILE}"))
    assert len(graphs) == 1
    stamp = graphs[0].stat().st_mtime_ns
    capsys.readouterr()
    again = triad_run("onnx", "again", quiet=False)
    assert "exporting" not in capsys.readouterr().err and graphs[0].stat().st_mtime_ns == stamp
    assert again["run"]["cache_hits"] == again["run"]["distinct_items"] and again["run"]["encoded"] == 0
    assert order("again") == order("onnx")


@pytest.mark.slow
def test_a_reranked_run_on_onnx_scores_as_torch_and_a_rerun_exports_nothing(mini_triad_dir, tmp_path, capsys):
    """minilm then the tiny bge-reranker-v2-m3 over each query's head: the reranked heads hold the same candidates,
    in torch's order but for near-ties within TIE; results.json names the reranker's backend; a re-run finds the
    graph in the cache."""
    from model_adapters.families import onnx_rerank

    folder = tiny_text.save_bge_reranker(str(tmp_path / "reranker"))

    def reranked(backend: str, out: str, quiet: bool = True) -> dict:
        return mini_run(
            mini_triad_dir,
            tmp_path,
            out,
            limit=4,
            rerank="bge-reranker-v2-m3",
            rerank_model_path=folder,
            rerank_top=6,
            rerank_backend=backend,
            quiet=quiet,
        )

    def ranked(out: str) -> list[dict]:
        return state_cars_rankings(tmp_path / out)

    torch_run, onnx_run = reranked("torch", "torch"), reranked("onnx", "onnx")
    assert "backend" not in torch_run["reranker"] and onnx_run["reranker"]["backend"] == "onnx"
    assert onnx_run["reranker"]["versions"]["onnxruntime"] is not None
    check_schema(tmp_path / "onnx" / "results.json")
    assert "backend" not in onnx_run["model"]  # the first stage still ran on torch
    for want, got in zip(ranked("torch"), ranked("onnx"), strict=True):
        score = dict(zip(want["candidate_ids"], want["scores"], strict=True))
        head = got["candidate_ids"][:6]
        assert sorted(head) == sorted(want["candidate_ids"][:6])
        assert got["candidate_ids"][6:] == want["candidate_ids"][6:]  # the first stage: torch in both runs
        along = np.array([score[c] for c in head])  # torch's reranker scores in ONNX's order
        assert np.all(along[1:] <= along[:-1] + TIE), want["query_id"]
        assert np.abs(np.array(got["scores"][:6]) - along).max() <= 1e-6
    graphs = list((tmp_path / "cache" / "onnx").glob(f"*/{onnx_rerank.FILE}"))
    assert len(graphs) == 1
    stamp = graphs[0].stat().st_mtime_ns
    capsys.readouterr()
    reranked("onnx", "again", quiet=False)
    assert "exporting" not in capsys.readouterr().err and graphs[0].stat().st_mtime_ns == stamp
    assert ranked("again") == ranked("onnx")
