"""A local folder of ReasonIR-8B or bge-reranker-v2-m3 is detected or refused by its files, never given a look-alike.

ReasonIR's folder shows its own class (`architectures: ReasonIRModel`, model_type llama, text only): it gets the
`reasonir` recipe, as the Hub id would, and feeds an instructed query exactly as the `reasonir-8b` entry. A
bge-reranker-v2-m3 folder shows only what every XLM-R cross-encoder shows (`XLMRobertaForSequenceClassification`,
one label, no sentence-transformers files): nothing in it tells it from another such reranker, so it is refused in
one line naming the recipes, and `--recipe bge-reranker-v2-m3` then scores exactly as the entry.
"""

from __future__ import annotations

import numpy as np
import pytest

from model_adapters.models.registry import get_entry, load_encoder, load_reranker
from model_adapters.models.resolve import from_name
from model_adapters.protocol import ModelInput
from tests import reference_inputs
from tests.doubles import tiny_text
from triad_dataset.contract.errors import TriadError


@pytest.mark.slow
def test_a_local_reasonir_folder_gets_the_reasonir_recipe_and_feeds_queries_as_the_entry(tmp_path):
    folder = tiny_text.save_reasonir(str(tmp_path / "reasonir"))
    resolved = from_name(folder)
    assert resolved.identity.recipe == "reasonir" and resolved.identity.input_pipeline == "verified"
    detected = resolved.load("cpu", "float32")
    entry = load_encoder(get_entry("reasonir-8b"), model_path=folder, dtype="float32")
    queries = [ModelInput("sparrow", None, reference_inputs.C2I), ModelInput(reference_inputs.CANDIDATE, None, None)]
    docs = [ModelInput(reference_inputs.CANDIDATE, None, None)]
    assert [detected.instructions.of_query(q) for q in queries] == [entry.instructions.of_query(q) for q in queries]
    assert np.array_equal(detected.encode_queries(queries), entry.encode_queries(queries))
    assert np.array_equal(detected.encode_candidates(docs), entry.encode_candidates(docs))


@pytest.mark.slow
def test_a_local_bge_reranker_folder_is_refused_then_runs_as_the_entry_by_recipe(tmp_path):
    folder = tiny_text.save_bge_reranker(str(tmp_path / "reranker"))
    with pytest.raises(TriadError, match=r"no verified reranker recipe matches this checkpoint .*bge-reranker-v2-m3"):
        from_name(folder, kind="reranker")
    resolved = from_name(folder, kind="reranker", recipe="bge-reranker-v2-m3")
    assert resolved.identity.recipe == "bge-reranker-v2-m3"
    chosen = resolved.load("cpu", "float32")
    entry = load_reranker(get_entry("bge-reranker-v2-m3", kind="reranker"), model_path=folder, dtype="float32")
    queries = [ModelInput("sparrow", None, reference_inputs.C2I)] * 2
    docs = [ModelInput(reference_inputs.CANDIDATE, None, None), ModelInput("a small perching bird", None, None)]
    assert [
        chosen.pair_ids(reference_inputs.joined(q.text, q.instruction), d.text)
        for q, d in zip(queries, docs, strict=True)
    ] == [
        entry.pair_ids(reference_inputs.joined(q.text, q.instruction), d.text)
        for q, d in zip(queries, docs, strict=True)
    ]
    assert np.array_equal(chosen.score_pairs(queries, docs), entry.score_pairs(queries, docs))
