"""The recipe table: a checkpoint is fed only by a recipe its own files match unambiguously; anything
else is refused in one line that lists the recipes; `--recipe generic` runs the unverified pipeline and every
output says so; refused recipes give their reason; every verified recipe names a reference test that exists.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_adapters.models import detect, recipes
from model_adapters.models.registry import ENTRIES
from model_adapters.models.resolve import from_name
from tests.doubles import tiny
from tests.doubles.entries import TINY
from tests.doubles.folders import write_tiny_triad
from triad_cli.main import main
from triad_dataset.contract.errors import TriadError

ROOT = Path(__file__).resolve().parents[2]
SHA = "89abcdef0123456789abcdef0123456789abcdef"


@pytest.fixture(scope="module")
def triad_dir(tmp_path_factory):
    return str(write_tiny_triad(tmp_path_factory.mktemp("data") / "triad"))


@pytest.fixture(scope="module")
def qwen3_vl_folder(tmp_path_factory) -> str:
    """A Qwen3-VL checkpoint that is no model any recipe knows (the tiny random one, with its real chat template)."""
    return tiny.save_tiny_qwen3_vl(str(tmp_path_factory.mktemp("ckpt") / "some-qwen3-vl"), 0)


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["run", "--no-validate", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# --- the table ------------------------------------------------------------------------------------------------
def test_every_recipe_is_verified_refused_or_generic_and_its_reference_test_exists():
    for recipe in recipes.RECIPES:
        assert recipe.family in recipes.FAMILIES and recipe.kind in recipes.KINDS, recipe.name
        if recipe.name == recipes.GENERIC:
            assert recipe.reference is None and recipe.input_pipeline == recipes.UNVERIFIED
        elif recipe.refused:
            assert recipe.reference is None, f"{recipe.name}: refused recipes are not verified"
        else:
            assert recipe.reference is not None, f"{recipe.name}: a runnable recipe needs its authors' reference"
            assert (ROOT / recipe.reference.test).is_file(), recipe.reference.test
    assert len(recipes.RECIPES_BY_NAME) == len(recipes.RECIPES)  # names are unique


def test_every_registry_entry_is_fed_by_a_recipe_of_its_family():
    for entry in ENTRIES:
        recipe = recipes.get_recipe(entry.recipe.name, kind=entry.kind)
        assert entry.family in (recipe.family, TINY), entry.name
        if entry.family != TINY:
            assert {k: v for k, v in recipe.options.items()} == {k: entry.options[k] for k in recipe.options}


def test_every_recipe_and_entry_loads_through_its_family_row():
    from model_adapters.families import dual_tower, reranker
    from model_adapters.models.family_table import FAMILY_TABLE, plugin_families
    from model_adapters.models.registry import get_entry

    for recipe in recipes.RECIPES:
        row = recipe.family_row
        assert row.name == recipe.family and callable(row.load), recipe.name
        assert recipe.kind == "embedder" or callable(row.load_reranker), recipe.name
    assert get_entry("clip-vit-b32").family_row.text_limit is dual_tower.text_limit
    assert get_entry("bge-reranker-v2-m3", kind="reranker").family_row.load_reranker is reranker.load_reranker
    assert [n for n, f in {**FAMILY_TABLE, **plugin_families()}.items() if not f.reads_weights] == [TINY]
    with pytest.raises(TypeError) as err:
        recipes.Recipe("x", "dual_towr")
    assert str(err.value) == (
        "recipe x: unknown family 'dual_towr'; valid: dual_tower, sentence_transformer, vlm, qwen_chat, "
        "bidirectional_llama, reranker, api, reasoning, tiny"
    )


def test_no_two_recipes_claim_one_hub_id_and_signatures_do_not_overlap():
    ids = [(r.kind, h) for r in recipes.RECIPES for h in r.match.hub_ids]
    assert len(ids) == len(set(ids))


# --- detection ------------------------------------------------------------------------------------------------
def _folder(tmp_path: Path, config: dict | None, files: dict[str, str] | None = None) -> str:
    tmp_path.mkdir(parents=True, exist_ok=True)
    if config is not None:
        (tmp_path / "config.json").write_text(json.dumps(config))
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    return str(tmp_path)


def _reader(folder: str):
    return lambda name: str(Path(folder) / name) if (Path(folder) / name).is_file() else None


@pytest.mark.parametrize(
    ("config", "files", "kind", "recipe"),
    [
        ({"model_type": "bert"}, {"modules.json": "[]"}, "embedder", "sentence-transformers"),
        ({"model_type": "clip"}, None, "embedder", "clip"),
        (
            {"model_type": "siglip"},
            {"tokenizer_config.json": '{"tokenizer_class": "SiglipTokenizer"}'},
            "embedder",
            "siglip",
        ),
        # SigLIP 2 FixRes: SigLIP 1's model_type, Gemma's tokenizer; NaFlex: its own model_type
        (
            {"model_type": "siglip"},
            {"tokenizer_config.json": '{"tokenizer_class": "GemmaTokenizer"}'},
            "embedder",
            "siglip2",
        ),
        (
            {"model_type": "siglip2"},
            {"tokenizer_config.json": '{"tokenizer_class": "GemmaTokenizerFast"}'},
            "embedder",
            "siglip2",
        ),
        (
            {"model_type": "siglip2"},
            {"tokenizer_config.json": '{"tokenizer_class": "Siglip2Tokenizer"}'},
            "embedder",
            "siglip2",
        ),
        (
            {
                "model_type": "llama",
                "architectures": ["ReasonIRModel"],  # saved from ReasonIR's own class
                "auto_map": {"AutoModel": "modeling_reasonir_8b.ReasonIRModel"},
            },
            None,
            "embedder",
            "reasonir",
        ),
    ],
)
def test_signatures_choose_exactly_one_recipe(tmp_path, config, files, kind, recipe):
    chosen, _, _ = detect.detect(_reader(_folder(tmp_path / "m", config, files)), where="m", kind=kind)
    assert chosen.name == recipe


@pytest.mark.parametrize(
    ("config", "files"),
    [
        ({"model_type": "qwen3_vl", "architectures": ["Qwen3VLForConditionalGeneration"]}, None),
        ({"model_type": "qwen2_vl", "architectures": ["Qwen2VLForConditionalGeneration"]}, None),
        ({"model_type": "qwen2_vl", "vision_config": {}}, {"modules.json": "[]"}),  # a multimodal ST model
        ({"model_type": "bert", "architectures": ["BertModel"]}, None),
        ({"model_type": "llama", "architectures": ["LlamaModel"]}, None),  # a causal Llama is not ReasonIR
        ({"model_type": "siglip"}, None),  # SigLIP 1 or SigLIP 2 FixRes: no tokenizer to tell them apart
        ({"model_type": "siglip"}, {"tokenizer_config.json": '{"tokenizer_class": "T5Tokenizer"}'}),
    ],
)
def test_unknown_checkpoints_are_refused_with_what_was_found_and_the_recipes(tmp_path, config, files):
    with pytest.raises(TriadError) as err:
        detect.detect(_reader(_folder(tmp_path / "m", config, files)), where="m")
    message = str(err.value)
    assert message.startswith("m: no verified embedder recipe matches this checkpoint (found: config.json model_type")
    assert "recipes: sentence-transformers, clip, " in message and "--recipe generic runs the unverified" in message
    assert "\n" not in message


def test_a_hub_snapshot_is_matched_by_its_hub_id(tmp_path):
    snap = tmp_path / "hub" / "models--Qwen--Qwen3-VL-Embedding-2B" / "snapshots" / SHA
    _folder(snap, {"model_type": "qwen3_vl"})
    resolved = from_name(str(snap))
    ident = resolved.identity
    assert (ident.name, ident.recipe, ident.input_pipeline, ident.revision) == (
        "Qwen/Qwen3-VL-Embedding-2B",
        "qwen3-vl-embedding",
        recipes.VERIFIED,
        SHA,
    )
    assert resolved.entry.options["pipeline"] == "qwen3_vl" and resolved.entry.has_instruction_field


@pytest.mark.parametrize(
    ("hub_id", "config", "tokenizer", "recipe"),
    [
        ("google/siglip2-so400m-patch14-384", {"model_type": "siglip"}, "GemmaTokenizer", "siglip2"),  # FixRes
        ("google/siglip2-base-patch16-naflex", {"model_type": "siglip2"}, "GemmaTokenizer", "siglip2"),  # NaFlex
        ("google/siglip-so400m-patch14-384", {"model_type": "siglip"}, "SiglipTokenizer", "siglip"),  # SigLIP 1
    ],
)
def test_siglip_cache_snapshots_get_the_recipe_of_what_they_are(tmp_path, hub_id, config, tokenizer, recipe):
    """A Hugging Face cache snapshot of a SigLIP 2 checkpoint (FixRes ones say model_type siglip) is fed as SigLIP 2,
    one of SigLIP 1 as SigLIP 1; a google/siglip2-* Hub id alone chooses siglip2, with no files read."""
    snap = tmp_path / "hub" / f"models--{hub_id.replace('/', '--')}" / "snapshots" / SHA
    files = {"tokenizer_config.json": json.dumps({"tokenizer_class": tokenizer})}
    _folder(snap, {**config, "architectures": ["SiglipModel"]}, files)
    assert from_name(str(snap)).identity.recipe == recipe
    no_files = detect.candidates(detect.Checkpoint.of(lambda name: None, hub_id), "embedder")
    assert [r.name for r in no_files] == (["siglip2"] if recipe == "siglip2" else [])


def test_refused_recipes_give_their_reason_by_signature_by_hub_id_and_by_name(tmp_path):
    eva = _folder(tmp_path / "eva", {"model_type": "clip", "auto_map": {"AutoModel": "modeling_evaclip.EvaCLIPModel"}})
    with pytest.raises(TriadError, match=r"recipe eva-clip cannot be run as its authors run it: .*torchvision"):
        from_name(eva)
    bge_vl = _folder(tmp_path / "bge", {"model_type": "clip", "auto_map": {"AutoModel": recipes.BGE_VL_REMOTE_CLASS}})
    with pytest.raises(TriadError, match=r"bge-vl-clip-folder .*--model bge-vl-base \(or bge-vl-large\) --model-path"):
        from_name(bge_vl)
    other = _folder(tmp_path / "other", {"model_type": "clip", "auto_map": {"AutoModel": "modeling_x.XModel"}})
    with pytest.raises(TriadError, match=r"no verified embedder recipe matches .*remote code \(auto_map\)"):
        from_name(other)
    with pytest.raises(TriadError, match=r"^model jina-clip-v2: recipe jina-clip-v2 cannot be run as its authors "):
        from_name("jina-clip-v2")
    with pytest.raises(TriadError, match=r"recipe jina-reranker-m0 cannot be run .*remote code"):
        detect.detect(
            _reader(_folder(tmp_path / "j", {"model_type": "qwen2_vl"})),
            where="j",
            kind="reranker",
            hub_id="jinaai/jina-reranker-m0",
        )
    omni = _folder(
        tmp_path / "omni", {"model_type": "qwen2_5_omni_thinker", "vision_config": {}}, {"modules.json": "[]"}
    )  # a multimodal sentence-transformers model: never the text-only family
    with pytest.raises(TriadError, match=r"recipe qwen2.5-omni-embedder cannot be run .*E5-Omni-7B"):
        from_name(omni)
    with pytest.raises(TriadError, match=r"--recipe 'nope': no embedder recipe of that name; valid: "):
        from_name(eva, recipe="nope")


# --- an unknown Qwen-VL folder is refused; --recipe generic runs and says so -------------------------------------
@pytest.mark.parametrize("backbone", ["qwen3_vl", "qwen2_vl"])
def test_unknown_qwen_vl_folder_exits_2_listing_recipes(triad_dir, qwen3_vl_folder, tmp_path, capsys, backbone):
    folder = qwen3_vl_folder if backbone == "qwen3_vl" else tiny.save_tiny_qwen2_vl(str(tmp_path / "some-qwen2-vl"))
    capsys.readouterr()  # what writing the folder printed
    code, _, err = _run(
        capsys,
        "--model",
        folder,
        "--data",
        triad_dir,
        "--config",
        "constraints_cars",
        "--out",
        str(tmp_path / "o"),
        "--no-cache",
        "--quiet",
    )
    line = _one_line(err)
    assert code == 2 and "no verified embedder recipe matches this checkpoint" in line, line
    assert f"model_type '{backbone}'" in line and "--recipe generic" in line
    assert all(name in line for name in ("qwen3-vl-embedding", "embed-rl", "ume-r1-disc", "rzenembed", "lamra-ret"))
    assert "jina-clip-v2" not in line and "twn" not in line  # refused recipes are no choice
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_generic_recipe_runs_and_every_output_says_unverified(triad_dir, qwen3_vl_folder, tmp_path, capsys):
    code, out, _ = _run(
        capsys,
        "--model",
        qwen3_vl_folder,
        "--recipe",
        "generic",
        "--data",
        triad_dir,
        "--config",
        "constraints_cars",
        "--out",
        str(tmp_path / "o"),
        "--no-cache",
        "--limit",
        "3",
    )
    assert code == 0
    saved = json.loads((tmp_path / "o" / "results.json").read_text())
    assert (saved["model"]["recipe"], saved["model"]["input_pipeline"]) == ("generic", recipes.UNVERIFIED)
    assert saved["model"]["options"]["pipeline"] == "generic"
    assert recipes.UNVERIFIED_LABEL in saved["warning"]
    header = next(line for line in out.splitlines() if line.startswith("TRIAD · model "))
    assert recipes.UNVERIFIED_LABEL in header and f"WARNING: {saved['warning']}" in out
    # the verified recipe chosen by hand feeds the same folder as Qwen3-VL-Embedding's authors do
    code, out, _ = _run(
        capsys,
        "--model",
        qwen3_vl_folder,
        "--recipe",
        "qwen3-vl-embedding",
        "--data",
        triad_dir,
        "--config",
        "constraints_cars",
        "--out",
        str(tmp_path / "v"),
        "--no-cache",
        "--limit",
        "3",
        "--quiet",
    )
    verified = json.loads((tmp_path / "v" / "results.json").read_text())
    assert code == 0 and verified["model"]["input_pipeline"] == recipes.VERIFIED and "warning" not in verified
    assert verified["model"]["options"] == {"pipeline": "qwen3_vl"}
