"""The torch-free ONNX feed (`families.onnx_feed`): the token ids of `SentenceTransformer.preprocess` for every ONNX
text recipe, no torch weights held, and a cached ONNX re-run that never imports torch."""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest

from model_adapters.families import onnx_feed, onnx_text
from model_adapters.models.registry import get_entry, load_encoder, text_limit
from model_adapters.protocol import ModelInput
from tests import reference_inputs
from tests.doubles import tiny_text

ROOT = Path(__file__).resolve().parents[2]
TEXTS = [
    "",
    " leading and trailing spaces ",
    "Ünïcödé café — naïve façade, 日本語のテキスト, emoji 🚗",
    "UPPER lower MiXeD 12,345.67 e-mail@example.com",
    "tab\tand\nnewline",
    reference_inputs.LONG_TEXT * 8,  # past every tested token limit
    *reference_inputs.TEXT_DOCS,
]
QUERIES = [ModelInput(t, None, None) for t in TEXTS] + [
    ModelInput(t, None, i) for t, i in reference_inputs.TEXT_QUERIES
]
DOCS = [ModelInput(t, None, "an instruction" if i % 3 == 0 else None) for i, t in enumerate(TEXTS)]


def _minilm():
    return load_encoder(get_entry("minilm"), dtype="float32")


def _minilm_with_prompts():
    """minilm with a query and a passage prompt (the prompt rules: encode_query / encode_document's prompts)."""
    encoder = _minilm()
    encoder.model.prompts = {"query": "query: ", "passage": "passage: "}
    encoder.document_prompt = "passage: "
    return encoder


def _minilm_with_template():
    """minilm with a query template (an instruction field: queries with an instruction lose the query prompt)."""
    encoder = _minilm_with_prompts()
    encoder.query_template = "Instruct: {instruction}\nQuery: {text}"
    return encoder


def _bge_m3(folder: str):
    encoder = load_encoder(get_entry("bge-m3"), model_path=tiny_text.save_bge_m3(folder), dtype="float32")
    encoder.model.max_seq_length = reference_inputs.TEXT_TRUNCATION_MAX_LENGTH  # its tokenizer is per character
    return encoder


# every ONNX text recipe (onnx_text.TEXT_RECIPES), the sentence-transformers one with and without prompts
ENCODERS = {
    "sentence-transformers": lambda tmp: _minilm(),
    "sentence-transformers, prompts": lambda tmp: _minilm_with_prompts(),
    "sentence-transformers, query template": lambda tmp: _minilm_with_template(),
    "bge-m3": lambda tmp: _bge_m3(str(tmp / "bge-m3")),
}


@pytest.fixture(scope="module")
def minilm_graph(tmp_path_factory) -> Path:
    """minilm's graph, exported once: prompts and templates change the feed, not the graph."""
    folder = tmp_path_factory.mktemp("minilm-graph")
    onnx_text.wrap(_minilm(), str(folder), "minilm", log=False)
    return folder / onnx_text.FILE


def graph_folder(tmp_path: Path, name: str, minilm_graph: Path) -> str:
    """A folder holding only minilm's graph for a minilm variant (its feed files written by `wrap`), else empty."""
    folder = tmp_path / "graph"
    folder.mkdir()
    if name.startswith("sentence-transformers"):
        shutil.copy(minilm_graph, folder / onnx_text.FILE)
    return str(folder)


def test_every_onnx_text_recipe_is_covered():
    assert {name.split(",")[0] for name in ENCODERS} == set(onnx_text.TEXT_RECIPES)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ENCODERS))
def test_the_lean_feed_gives_the_torch_paths_token_ids(name, tmp_path, minilm_graph):
    base = ENCODERS[name](tmp_path)
    lean = onnx_text.wrap(base, graph_folder(tmp_path, name, minilm_graph), name, log=False)
    assert isinstance(lean, onnx_feed.LeanEncoder)
    for role, batch in (("query", QUERIES), ("candidate", DOCS)):
        want, got = base.prepare(batch, role), lean.prepare(batch, role)
        assert [p[0] for p in got.parts] == [p[0] for p in want.parts]
        for (_, g, _), (_, w, _) in zip(got.parts, want.parts, strict=True):
            assert lean.spec.inputs and set(lean.spec.inputs) <= set(w)
            for n in lean.spec.inputs:
                assert g[n].dtype == np.int64 and np.array_equal(g[n], w[n].numpy()), (role, n)
        assert lean.input_lengths(batch, role) == base.input_lengths(batch, role)
    for encode in ("encode_queries", "encode_candidates"):
        batch = QUERIES if encode == "encode_queries" else DOCS
        got, want = getattr(lean, encode)(batch), getattr(base, encode)(batch)
        cos = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
        assert cos.min() >= onnx_text.MIN_COSINE


@pytest.mark.slow
def test_the_stored_tokenizer_counts_truncated_inputs_as_the_models_own(tmp_path, minilm_graph):
    folder = graph_folder(tmp_path, "sentence-transformers", minilm_graph)
    onnx_text.wrap(_minilm(), folder, "minilm", log=False)
    got, want = onnx_feed.text_limit(folder), text_limit(get_entry("minilm"))
    assert got is not None and got.limit == want.limit == 256
    assert got.token_counts(TEXTS) == want.token_counts(TEXTS) and max(got.token_counts(TEXTS)) > 256


@pytest.mark.slow
def test_the_onnx_encoder_does_not_hold_the_torch_weights(tmp_path, minilm_graph):
    base = _minilm()
    weights = weakref.ref(base.model)
    lean = onnx_text.wrap(base, graph_folder(tmp_path, "sentence-transformers", minilm_graph), "minilm", log=False)
    del base
    gc.collect()
    assert weights() is None and lean.encode_candidates(DOCS[:2]).shape == (2, 384)


@pytest.mark.slow
def test_a_cached_onnx_rerun_imports_no_torch(mini_triad_dir, tmp_path):
    """`triad run --backend onnx` with its graph, tokenizer and feed cached but no vectors: the same rankings, and
    torch, sentence-transformers and transformers never imported (checked at the end of the process)."""
    from model_adapters.run.config import RunConfig
    from model_adapters.runner import run

    fields = {"model": "minilm", "data": str(mini_triad_dir), "configs": "state_cars", "backend": "onnx"}
    run(RunConfig(out=str(tmp_path / "first"), cache_dir=str(tmp_path / "cache"), validate=False, **fields))
    for entry in (tmp_path / "cache").iterdir():  # keep the graph folder only: every vector is encoded again
        if entry.name != onnx_text.ONNX:
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    code = (
        "import json, sys\n"
        "from model_adapters.run.config import RunConfig\n"
        "from model_adapters.runner import run\n"
        f"r = run(RunConfig(out={str(tmp_path / 'again')!r}, cache_dir={str(tmp_path / 'cache')!r}, "
        f"validate=False, quiet=True, **{fields!r}))\n"
        "print(json.dumps({'encoded': r['run']['encoded'], "
        "'imported': sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules)}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["imported"] == [] and got["encoded"] > 0
    first, again = ((tmp_path / d / "rankings" / "state_cars.parquet").read_bytes() for d in ("first", "again"))
    assert first == again
