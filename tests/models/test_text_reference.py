"""ARK's text embedders (caption-then-embed, §4.1) against their authors' code on tiny random models.

Each fixture tests/fixtures/<recipe>/official.json was written by benchmarks/reference/run_text_official.py running
the authors' code (NOTE.md beside it: repository, commit, venv, command, substitutions) on the folder that
`tests.doubles.tiny_text` writes (weights of std 0.2); here the same folder is loaded through the recipe's
real loader (`load_encoder(entry, model_path=folder)`). Required: identical token ids, 1 - cos <= 1e-6 per vector
(|Δscore| <= 1e-6 for the cross-encoder), and each recipe's fixture must fail when a position, mask or pooling rule
is changed (tests/fixture_mutations.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from model_adapters.models.registry import get_entry, load_encoder
from model_adapters.protocol import ModelInput
from tests import reference_inputs
from tests.doubles import tiny_text
from tests.fixture_mutations import (
    MAX_ONE_MINUS_COS,
    MAX_SCORE_DIFF,
    RULES,
    default_positions,
    mutation,
    one_minus_cos,
    score_diff,
    sequential,
)

FIXTURES = Path(__file__).parents[1] / "fixtures"
# recipe -> (registry entry fed by it, the tiny folder's builder)
EMBEDDERS: dict[str, tuple[str, Callable[[str], str]]] = {
    "qwen3-embedding": ("qwen3-embedding-4b", tiny_text.save_qwen3_embedding),
    "diver-retriever": ("diver-retriever-4b", tiny_text.save_qwen3_embedding),
    "bge-m3": ("bge-m3", tiny_text.save_bge_m3),
}


def official(recipe: str) -> dict:
    return json.loads((FIXTURES / recipe / "official.json").read_text())


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> Callable[[Callable[[str], str]], str]:
    built: dict[Callable[[str], str], str] = {}

    def folder(builder: Callable[[str], str]) -> str:
        if builder not in built:
            built[builder] = builder(str(tmp_path_factory.mktemp(builder.__name__)))
        return built[builder]

    return folder


@contextmanager
def fed_ids(encoder, backbone=None) -> Iterator[list[list[int]]]:
    """The attended token ids of every row the backbone receives (default: the sentence-transformers model's)."""
    rows: list[list[int]] = []
    backbone = encoder.model[0].model if backbone is None else backbone
    forward = backbone.forward  # sentence-transformers calls the backbone's `forward` method itself

    def recording(*args, **kwargs):
        ids, mask = kwargs["input_ids"], kwargs["attention_mask"]
        rows.extend(
            [t for t, m in zip(r, k, strict=True) if m] for r, k in zip(ids.tolist(), mask.tolist(), strict=True)
        )
        return forward(*args, **kwargs)

    backbone.forward = recording
    try:
        yield rows
    finally:
        del backbone.forward


def assert_close(got: np.ndarray, expected: list[list[float]], what: str) -> None:
    gap = one_minus_cos(got, expected)
    assert gap.max() <= MAX_ONE_MINUS_COS, (what, gap)


@pytest.mark.slow
@pytest.mark.parametrize("recipe", sorted(EMBEDDERS))
def test_text_embedder_matches_its_authors_code(recipe, folders):
    ref = official(recipe)
    name, builder = EMBEDDERS[recipe]
    entry = get_entry(name)
    assert entry.recipe.name == recipe and not entry.sees_images
    enc = load_encoder(entry, model_path=folders(builder), dtype="float32")
    assert tiny_text.weights_sum(enc.model[0].model) == pytest.approx(ref["weights_sum"], rel=1e-9)
    queries = [ModelInput(t, None, i) for t, i in reference_inputs.TEXT_QUERIES]
    with fed_ids(enc) as fed:
        got = enc.encode_queries(queries)
    assert sorted(fed) == sorted(ref["query_ids"])  # two calls (with / without instruction), each longest first
    assert_close(got, ref["query_vectors"], "queries")
    with fed_ids(enc) as fed:
        got = enc.encode_candidates([ModelInput(t, None, None) for t in reference_inputs.TEXT_DOCS])
    assert sorted(fed) == sorted(ref["doc_ids"])  # sentence-transformers encodes longest first
    assert_close(got, ref["doc_vectors"], "documents")
    enc.model.max_seq_length = reference_inputs.TEXT_TRUNCATION_MAX_LENGTH
    with fed_ids(enc) as fed:
        got = np.concatenate(
            [enc.encode_queries([ModelInput(t, None, i)]) for t, i in reference_inputs.TEXT_TRUNCATION_INPUTS]
        )
    assert fed == ref["truncated_ids"]
    assert_close(got, ref["truncated_vectors"], "truncated")


@pytest.mark.slow
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("recipe", sorted(EMBEDDERS))
def test_text_embedder_fixture_fails_when_a_rule_changes(recipe, rule, folders):
    """Positions one off after the first token, the mask dropped, or the recipe's pooling (last token, CLS)
    replaced by the mean: the same encoder no longer matches its authors' code."""
    ref = official(recipe)
    name, builder = EMBEDDERS[recipe]
    enc = load_encoder(get_entry(name), model_path=folders(builder), dtype="float32")
    backbone = enc.model[0].model
    queries = [ModelInput(t, None, i) for t, i in reference_inputs.TEXT_QUERIES]
    docs = [ModelInput(t, None, None) for t in reference_inputs.TEXT_DOCS]
    with mutation(rule, decoder=backbone, states=backbone, default=default_positions(backbone.config)):
        got = np.concatenate([enc.encode_queries(queries), enc.encode_candidates(docs)])
    gap = one_minus_cos(got, ref["query_vectors"] + ref["doc_vectors"])
    assert gap.max() > MAX_ONE_MINUS_COS, gap


# --- the generic sentence-transformers recipe feeds a model as its own config_sentence_transformers.json says ------
def _with_prompts(folder: str, prompts: dict[str, str], target: Path) -> str:
    import shutil

    shutil.copytree(folder, target)
    conf = json.loads((target / "config_sentence_transformers.json").read_text())
    conf["prompts"] = prompts
    (target / "config_sentence_transformers.json").write_text(json.dumps(conf))
    return str(target)


@pytest.mark.slow
def test_generic_recipe_uses_the_models_own_query_and_document_prompts(folders, tmp_path):
    from model_adapters.models.resolve import from_name

    folder = _with_prompts(
        folders(tiny_text.save_qwen3_embedding), {"query": "query: ", "passage": "passage: "}, tmp_path / "e5-like"
    )
    resolved = from_name(folder)
    assert resolved.identity.recipe == "sentence-transformers" and not resolved.identity.sees_images
    enc = resolved.load("cpu", "float32")
    with fed_ids(enc) as fed:
        enc.encode_queries([ModelInput("sparrow", None, reference_inputs.C2I)])
        enc.encode_candidates([ModelInput("sparrow", None, None)])
    tok = enc.model.tokenizer
    assert fed == [tok(f"query: {reference_inputs.C2I} sparrow")["input_ids"], tok("passage: sparrow")["input_ids"]]


def test_generic_recipe_refuses_prompts_that_name_no_retrieval_side(folders, tmp_path):
    from model_adapters.models.resolve import from_name
    from triad_dataset.contract.errors import TriadError

    folder = _with_prompts(
        folders(tiny_text.save_qwen3_embedding), {"classification": "Classify: "}, tmp_path / "cls-only"
    )
    with pytest.raises(TriadError, match=r"declares prompts \['classification'\] but none for queries"):
        from_name(folder).load("cpu", "float32")


# --- a local copy of a known text embedder is detected by its files, as its Hub id would be ----------------------
def test_a_local_qwen3_embedding_folder_is_refused_naming_both_lookalikes(folders):
    from model_adapters.models.resolve import from_name
    from triad_dataset.contract.errors import TriadError

    with pytest.raises(TriadError, match=r"matches several embedder recipes \(qwen3-embedding, diver-retriever\)"):
        from_name(folders(tiny_text.save_qwen3_embedding))


@pytest.mark.parametrize(
    ("recipe", "name"), [("qwen3-embedding", "qwen3-embedding-4b"), ("diver-retriever", "diver-retriever-4b")]
)
def test_a_qwen3_embedding_folder_chosen_by_recipe_feeds_instructed_queries_as_the_entry(folders, recipe, name):
    from model_adapters.models.resolve import from_name

    folder = folders(tiny_text.save_qwen3_embedding)
    resolved = from_name(folder, recipe=recipe)
    assert resolved.identity.recipe == recipe and resolved.identity.input_pipeline == "verified"
    query = [ModelInput("sparrow", None, reference_inputs.C2I)]
    with fed_ids(detected := resolved.load("cpu", "float32")) as got:
        detected.encode_queries(query)
    with fed_ids(entry := load_encoder(get_entry(name), model_path=folder, dtype="float32")) as expected:
        entry.encode_queries(query)
    assert got == expected
    assert entry.model.tokenizer.decode(got[0]).startswith(f"Instruct: {reference_inputs.C2I}\nQuery:")


def test_a_local_bge_m3_folder_is_detected_as_bge_m3(folders):
    from model_adapters.models.resolve import from_name

    assert from_name(folders(tiny_text.save_bge_m3)).identity.recipe == "bge-m3"


def test_an_instruction_template_prompt_is_refused_by_the_generic_recipe(folders, tmp_path):
    from model_adapters.models.resolve import from_name
    from triad_dataset.contract.errors import TriadError

    folder = _with_prompts(
        folders(tiny_text.save_qwen3_embedding),
        {"query": "Instruct: Given a question, retrieve passages\nQuery: "},
        tmp_path / "e5-inst",
    )
    with pytest.raises(TriadError, match="is an instruction template"):
        from_name(folder)


# --- bge-reranker-v2-m3 ---------------------------------------------------------------------------------------------
def _cross_encoder(folders):
    from model_adapters.models.registry import load_reranker

    entry = get_entry("bge-reranker-v2-m3", kind="reranker")
    assert entry.recipe.name == "bge-reranker-v2-m3" and not entry.sees_images
    return load_reranker(entry, model_path=folders(tiny_text.save_bge_reranker), dtype="float32")


def _rerank_pairs() -> tuple[list[ModelInput], list[ModelInput]]:
    """Every query of TEXT_RERANK_QUERIES with every document of TEXT_RERANK_DOCS, as the fixture's pairs."""
    queries = [
        ModelInput(q, None, i)
        for q, i in reference_inputs.TEXT_RERANK_QUERIES
        for _ in reference_inputs.TEXT_RERANK_DOCS
    ]
    docs = [
        ModelInput(d, None, None)
        for _ in reference_inputs.TEXT_RERANK_QUERIES
        for d in reference_inputs.TEXT_RERANK_DOCS
    ]
    return queries, docs


@pytest.mark.slow
def test_text_cross_encoder_matches_flag_reranker(folders):
    ref = official("bge-reranker-v2-m3")
    reranker = _cross_encoder(folders)
    assert tiny_text.weights_sum(reranker.model) == pytest.approx(ref["weights_sum"], rel=1e-9)
    queries, docs = _rerank_pairs()
    assert [
        [reference_inputs.joined(q.text, q.instruction), d.text] for q, d in zip(queries, docs, strict=True)
    ] == ref["pairs"]
    assert [reranker.pair_ids(a, b) for a, b in ref["pairs"]] == ref["pair_ids"]
    scores = reranker.score_pairs(queries, docs)  # one padded batch
    assert score_diff(scores, ref["scores"]).max() <= MAX_SCORE_DIFF
    (q, i), d = reference_inputs.TEXT_RERANK_TRUNCATION_PAIR
    reranker.max_length = (
        reference_inputs.TEXT_RERANK_TRUNCATION_MAX_LENGTH
    )  # as compute_score(max_length=...) in the driver
    reranker.query_max_length = reranker.max_length * 3 // 4
    assert reranker.pair_ids(*ref["truncated_pair"]) == ref["truncated_ids"]
    score = reranker.score_pairs([ModelInput(q, None, i)], [ModelInput(d, None, None)])[0]
    assert score_diff([score], [ref["truncated_score"]]).max() <= MAX_SCORE_DIFF


@pytest.mark.slow
@pytest.mark.parametrize("rule", RULES)
def test_text_cross_encoder_fixture_fails_when_a_rule_changes(rule, folders):
    """Positions one off, the mask dropped, or the classifier fed the mean instead of the first token."""
    ref = official("bge-reranker-v2-m3")
    reranker = _cross_encoder(folders)
    model = reranker.model
    with mutation(rule, decoder=model, states=model.base_model, default=default_positions(model.config)):
        scores = reranker.score_pairs(*_rerank_pairs())
    diff = score_diff(scores, ref["scores"])
    assert diff.max() > MAX_SCORE_DIFF, diff


# --- ReasonIR-8B: transformers' LlamaModel with is_causal=False against the authors' ReasonIRModel.encode -----------
def _reasonir(folders):
    entry = get_entry("reasonir-8b")
    assert entry.recipe.name == "reasonir" and not entry.sees_images and entry.has_instruction_field
    return load_encoder(entry, model_path=folders(tiny_text.save_reasonir), dtype="float32")


def _reasonir_side(enc, ref: dict, what: str) -> np.ndarray:
    """Encode the fixture's `what` inputs (one right-padded batch); check ids, pooled positions and vectors."""
    items = [ModelInput(t, None, i) for t, i in ref[f"{what}_inputs"]]
    encode = enc.encode_candidates if what == "doc" else enc.encode_queries
    with fed_ids(enc, enc.model) as fed:
        got = encode(items)
    assert fed == ref[f"{what}_ids"], what
    prefixes = [enc.instructions.document if what == "doc" else enc.instructions.of_query(i) for i in items]
    assert prefixes == ref[f"{what}_instructions"], what  # the BRIGHT configs' strings, derived by their driver
    for item, prefix, pooled in zip(items, prefixes, ref[f"{what}_pooled"], strict=True):
        _, mask = enc.tokenize([item.text], [prefix])
        assert mask[0].tolist() == pooled, (what, item.text)  # the instruction positions are out of the mean
    assert_close(got, ref[f"{what}_vectors"], what)
    return got


@pytest.mark.slow
def test_reasonir_matches_its_authors_encode(folders):
    from triad_dataset.contract.errors import TriadError

    ref = official("reasonir")
    enc = _reasonir(folders)
    assert tiny_text.weights_sum(enc.model) == pytest.approx(ref["weights_sum"], rel=1e-9)
    assert enc.max_length == 32768 and enc.tokenizer.padding_side == "right"
    _reasonir_side(enc, ref, "query")
    _reasonir_side(enc, ref, "doc")
    assert_close(np.asarray(ref["doc_batch_vectors"]), ref["doc_vectors"], "their padded batch")
    enc.max_length = reference_inputs.TEXT_TRUNCATION_MAX_LENGTH
    _reasonir_side(enc, ref, "truncated")
    # Their mean over zero tokens is NaN; ours is a one-line refusal naming the input.
    assert ref["empty_query_vector_is_nan"] and ref["empty_query_with_instruction_is_nan"]
    for encode, item in (
        (enc.encode_candidates, ModelInput("", None, None)),
        (enc.encode_queries, ModelInput("", None, reference_inputs.C2I)),
    ):
        with pytest.raises(TriadError, match=r"^input '' \(instruction .*\): no token is left for ReasonIR's mean"):
            encode([ModelInput("sparrow", None, None), item])


@pytest.mark.slow
def test_reasonir_reference_catches_causal_attention_and_instruction_tokens_in_the_mean(folders, monkeypatch):
    from model_adapters.families import bidirectional_llama

    ref = official("reasonir")
    enc = _reasonir(folders)
    queries = [ModelInput(t, None, i) for t, i in ref["query_inputs"]]
    expected = np.asarray(ref["query_vectors"])

    def worst() -> float:
        return float(one_minus_cos(enc.encode_queries(queries), expected).max())

    assert worst() <= MAX_ONE_MINUS_COS
    enc.model.config.is_causal = True  # mutation 1: the Llama's own causal attention
    causal = worst()
    enc.model.config.is_causal = False
    monkeypatch.setattr(bidirectional_llama, "pooled_mask", lambda mask, lengths: mask.clone())  # mutation 2
    with_instruction = worst()
    assert causal > MAX_ONE_MINUS_COS and with_instruction > MAX_ONE_MINUS_COS, (causal, with_instruction)


@pytest.mark.slow
@pytest.mark.parametrize("rule", RULES)
def test_reasonir_fixture_fails_when_a_rule_changes(rule, folders):
    """Positions one off, the mask dropped, or the last token's state instead of the mean."""
    ref = official("reasonir")
    enc = _reasonir(folders)
    queries = [ModelInput(t, None, i) for t, i in ref["query_inputs"]]
    with mutation(rule, decoder=enc.model, states=enc.model, default=sequential, how="last"):
        got = enc.encode_queries(queries)
    gap = one_minus_cos(got, ref["query_vectors"])
    assert gap.max() > MAX_ONE_MINUS_COS, gap


@pytest.mark.slow
def test_the_tiny_reasonir_folder_is_detected_by_its_class_name(folders):
    from model_adapters.models.resolve import from_name

    resolved = from_name(folders(tiny_text.save_reasonir))  # config.json architectures ["ReasonIRModel"]
    assert resolved.identity.recipe == "reasonir" and resolved.identity.input_pipeline == "verified"
    assert resolved.identity.family == "bidirectional_llama" and not resolved.identity.sees_images
