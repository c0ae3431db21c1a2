"""UME-R1 Gen and Embed-RL + T-CoT as registry models (`triad run --model ...`), on tiny random checkpoints and the
small hand-made TRIAD folder (`tests.doubles.folders.write_tiny_triad`; the mini edition's 21,056 distinct inputs
would take hours of CPU generation — docs/runner.md).

What must hold: a run completes; a second run does no generation (0 generator calls, counted on the model
itself) and gives byte-identical rankings; a changed prompt or decoding setting generates again under another key;
TWN is refused with its reason; a real entry that cannot read its generation config offline says so in one line.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from model_adapters.families import embed_rl_tcot, ume_r1_gen
from model_adapters.models import registry
from model_adapters.models.resolve import from_name
from model_adapters.runner import RunConfig, run
from tests.doubles.folders import tiny_triad_tables, write_tiny_triad
from triad_cli.main import main
from triad_dataset.contract.errors import TriadError

UME = "tiny-random-ume-r1-gen"
TCOT = "tiny-random-embed-rl-tcot"


@pytest.fixture(scope="module")
def triad_dir(tmp_path_factory) -> str:
    return str(write_tiny_triad(tmp_path_factory.mktemp("data") / "triad"))


@pytest.fixture(scope="module")
def small_triad_dir(tmp_path_factory) -> str:
    """Fewer inputs for the T-CoT runs: every input's T-CoT prompt is ~3,000 byte-level tokens on the tiny reasoner."""
    tables = tiny_triad_tables(n_queries=2, pool_size=6, n_items=8)
    return str(write_tiny_triad(tmp_path_factory.mktemp("small") / "triad", tables=tables, pool_size=6))


class Calls:
    """Counts `generate` calls on the model class itself (independent of the stage's own figures)."""

    def __init__(self, monkeypatch, cls) -> None:
        self.n = 0
        original = cls.generate

        def counted(obj, batch, role):
            self.n += 1
            return original(obj, batch, role)

        monkeypatch.setattr(cls, "generate", counted)


def _run(model: str, data: str, out: Path, cache: Path) -> dict:
    return run(RunConfig(model=model, data=data, out=str(out), cache_dir=str(cache), quiet=True, validate=False))


def _rankings(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((folder / "rankings").glob("*.parquet"))}


@pytest.fixture(scope="module")
def ume_first(triad_dir, tmp_path_factory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("ume")
    return root, _run(UME, triad_dir, root / "r1", root / "cache")


@pytest.fixture(scope="module")
def tcot_first(small_triad_dir, tmp_path_factory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("tcot")
    return root, _run(TCOT, small_triad_dir, root / "r1", root / "cache")


def _queries(result: dict) -> int:
    return sum(v["queries"] for v in result["run"]["per_config"].values())


@pytest.mark.slow
def test_ume_r1_gen_run_completes_then_reruns_without_generating(ume_first, triad_dir, monkeypatch):
    root, r1 = ume_first
    gen = r1["generation"]
    assert r1["complete"] is True and r1["model"]["recipe"] == "ume-r1-gen"
    assert r1["model"]["generation"]["key"] == gen["key"] and gen["roles"] == ["query"]
    assert "generation" not in r1["model"]["options"]  # recorded once, prompts by their sha256
    assert gen["generated"] == gen["inputs"] == _queries(r1)  # distinct queries; candidates are Disc mode
    assert gen["decoding"]["max_new_tokens"] == 12 and gen["seed"] == 0
    assert gen["fallback_inputs"] == sum(gen["fallbacks"].values()) > 0
    assert set(gen["fallbacks"]) <= {
        ume_r1_gen.NO_MARKER,
        ume_r1_gen.MARKER_LAST,
        ume_r1_gen.MARKER_SECOND_LAST,
        ume_r1_gen.NOTHING_GENERATED,
    }
    calls = Calls(monkeypatch, ume_r1_gen.UmeR1Gen)
    r2 = _run(UME, triad_dir, root / "r2", root / "cache")
    assert calls.n == 0 and r2["generation"]["generator_calls"] == 0 and r2["generation"]["generated"] == 0
    assert r2["run"]["encoded"] == 0 and r2["generation"]["fallbacks"] == gen["fallbacks"]
    assert _rankings(root / "r1") == _rankings(root / "r2")
    stored = json.loads((root / "r2" / "results.json").read_text())
    assert stored["generation"]["prompt_sha256"] == gen["prompt_sha256"]


@pytest.mark.slow
def test_embed_rl_tcot_run_completes_then_reruns_without_generating(tcot_first, small_triad_dir, monkeypatch):
    root, r1 = tcot_first
    gen = r1["generation"]
    assert r1["complete"] is True and r1["model"]["recipe"] == "embed-rl-tcot"
    assert gen["roles"] == ["query", "candidate"] and gen["generated"] == gen["inputs"] == r1["run"]["distinct_items"]
    assert gen["generator"] == "tiny:qwen3-vl" and gen["decoding"]["temperature"] == 1.0
    assert set(gen["prompt_sha256"]) >= set(embed_rl_tcot.PROMPT_NAMES)
    calls = Calls(monkeypatch, embed_rl_tcot.EmbedRLTCoT)
    r2 = _run(TCOT, small_triad_dir, root / "r2", root / "cache")
    assert calls.n == 0 and r2["generation"]["generator_calls"] == 0 and r2["run"]["encoded"] == 0
    assert _rankings(root / "r1") == _rankings(root / "r2")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "change"),
    [
        (UME, {"gen_prompt": "Think briefly, then write <gen_emb>."}),
        (UME, {"decoding": {"max_new_tokens": 6}}),
        (TCOT, {"decoding": {"do_sample": True, "temperature": 0.7, "max_new_tokens": 8}}),
    ],
)
def test_a_changed_prompt_or_decoding_setting_generates_again(request, monkeypatch, model, change):
    first = "ume_first" if model == UME else "tcot_first"
    root, r1 = request.getfixturevalue(first)
    data = request.getfixturevalue("triad_dir" if model == UME else "small_triad_dir")
    entry = registry.get_entry(model)
    name = f"{model}-changed"
    monkeypatch.setitem(
        registry.REGISTRY, name, dataclasses.replace(entry, name=name, own_options={**entry.own_options, **change})
    )
    r2 = _run(name, data, root / "changed", root / "cache")
    assert r2["generation"]["key"] != r1["generation"]["key"]
    assert r2["generation"]["generated"] == r1["generation"]["generated"] > 0
    assert r2["generation"]["generator_calls"] > 0 and r2["run"]["cache_hits"] == 0


def test_twn_is_refused_with_its_reason(capsys):
    with pytest.raises(TriadError, match="recipe twn cannot be run as its authors run it: Think When Needed"):
        from_name("twn")
    code = main(["run", "--model", "twn", "--data", ".", "--out", "x", "--no-validate"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(err) == 1 and "no public code or weights" in err[0] and "2605.14448" in err[0]


def test_a_real_entry_offline_without_its_files_says_so_in_one_line():
    with pytest.raises(TriadError, match=r"^model zhibinlan/UME-R1-7B: not a local folder, and not in the local"):
        from_name("ume-r1-7b-gen")


def test_reasoning_entries_and_their_specs():
    ume, tcot = from_name(UME), from_name(TCOT)
    assert ume.identity.generation["roles"] == ["query"] and tcot.identity.generation["roles"] == ["query", "candidate"]
    # the real entries keep the authors' settings (only the tiny ones generate a few tokens)
    assert registry.get_entry("ume-r1-7b-gen").options["decoding"] == {"max_new_tokens": 8192}
    assert registry.get_entry("embed-rl-4b-tcot").options["decoding"] == {
        "do_sample": True,
        "temperature": 1.0,
        "max_new_tokens": 4096,
    }
    assert registry.get_entry("embed-rl-4b-tcot").options["generator"] == "Qwen/Qwen3-VL-8B-Instruct"
    # T-CoTs do not depend on the embedder: Embed-RL-2B and -4B share one generation identity (and cache)
    two = dataclasses.replace(registry.get_entry(TCOT), name="x", hub_id="tiny:embed-rl", revision="seed5")
    from model_adapters.families import reasoning
    from model_adapters.models.resolve import _repo_files

    assert reasoning.resolved(two, two.hub_id, _repo_files).options["generation"] == tcot.entry.options["generation"]
