"""The metric modules as Hub Spaces: `python -m metrics.space_folder` writes a folder that loads, runs its widget and
loads as a community module (`evaluate.load("ORG/triad_map")`) with none of the project's packages importable; the
folder in the repository tells a user without the project what to load, never to `pip install metrics`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from metrics.install_evaluate import MODULES, module_path
from metrics.space_folder import closure, write_space

ROOT = Path(__file__).resolve().parents[2]
BLOCK = "import sys\nfor p in ('metrics', 'triad_dataset', 'ark_dataset', 'model_adapters', 'spaces_app'): sys.modules[p] = None\n"
EXAMPLES = {  # the cards' first example and its output
    "triad_map": (
        {"predictions": [[0.9, 0.2, 0.4], [0.1, 0.8, 0.3]], "references": [[1, 0, 1], [0, 0, 1]]},
        {"map": 0.75, "top1_hit": 0.5, "mrr": 0.75},
    ),
    "ark_retrieval": (
        {"predictions": [[0.9, 0.2, 0.4], [0.1, 0.8, 0.3]], "references": [[0, 0, 1], [0, 1, 0]]},
        {"recall@1": 0.5, "recall@5": 1.0, "recall@10": 1.0},
    ),
}


def _python(code: str, tmp_path: Path, cwd: Path) -> subprocess.CompletedProcess:
    """`code` run with the project's packages unimportable, an empty modules cache and no network."""
    env = {**os.environ, "HF_EVALUATE_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "m")}
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [sys.executable, "-c", BLOCK + code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def spaces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("metric_spaces")
    for name in MODULES:
        write_space(name, root / name)
    return root


def test_the_folder_carries_the_code_the_script_runs_and_public_requirements(spaces: Path) -> None:
    files = {p.name for p in (spaces / "triad_map").iterdir()}
    assert {"triad_map.py", "README.md", "app.py", "requirements.txt", "metrics_widget.py"} <= files
    assert {f"{m.replace('.', '_')}.py" for m in closure(["metrics.core.api"])} <= files
    assert {"metrics_core_api.py", "triad_dataset_contract_names.py", "ark_dataset_names.py"} <= files
    for name in MODULES:
        text = (spaces / name / f"{name}.py").read_text(encoding="utf-8")
        assert "from metrics" not in text and "from triad_dataset" not in text and "from ark_dataset" not in text
        lines = [x.split("#")[0].strip() for x in (spaces / name / "requirements.txt").read_text().splitlines()]
        assert [x for x in lines if x] == ["evaluate>=0.4.3", "datasets>=3.0", "numpy>=1.24", "scipy>=1.10"]


@pytest.mark.slow
def test_the_folders_load_by_path_and_from_the_hub_without_the_project(spaces: Path, tmp_path: Path) -> None:
    """By path, then as the community module `my-org/triad_map` through evaluate's own Hub factory, its one URL
    function pointed at the folder (the files the Space ORG/triad_map would hold); one interpreter for all three."""
    code = ["import json, os, evaluate, evaluate.loading"]
    for name in MODULES:
        kwargs, _ = EXAMPLES[name]
        code.append(f"print(json.dumps(evaluate.load({str(spaces / name)!r}).compute(**{kwargs!r})))")
    code += [
        f"evaluate.loading.hf_hub_url = lambda path, name, revision=None: os.path.join({str(spaces)!r}, "
        "path.split('/')[1], name)",
        "m = evaluate.load('my-org/triad_map')",
        "print(type(m).__module__)",
        "print(m.compute(predictions=[[0.9, 0.2, 0.4]], references=[[1, 1, 0]])['map'])",
    ]
    done = _python("\n".join(code), tmp_path, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    *by_path, module, community = done.stdout.splitlines()[-4:]
    for name, line in zip(MODULES, by_path, strict=True):
        out, expected = json.loads(line), EXAMPLES[name][1]
        assert {k: out[k] for k in expected} == expected
    assert module.startswith("evaluate_modules.metrics.my-org--triad_map.") and module.endswith(".triad_map")
    assert float(community) == pytest.approx((1 + 2 / 3) / 2)  # positives at ranks 1 and 3


@pytest.mark.slow
def test_the_space_app_builds_its_widget_from_the_folder_alone(spaces: Path, tmp_path: Path) -> None:
    code = "import runpy\nns = runpy.run_path('app.py')\nprint(type(ns['demo']).__name__, ns['module'].name)"
    done = _python(code, tmp_path, spaces / "ark_retrieval")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1] == "Interface ark_retrieval"


@pytest.mark.slow
def test_the_repository_folder_without_the_project_says_what_to_load(tmp_path: Path) -> None:
    shutil.copytree(module_path("triad_map"), tmp_path / "triad_map")
    done = _python(f"import evaluate\nevaluate.load({str(tmp_path / 'triad_map')!r})", tmp_path, tmp_path)
    assert done.returncode != 0 and "pip install" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "ImportError: triad_map needs the code of the triad-benchmark project: load the folder that "
        "`python -m metrics.space_folder triad_map --out DIR` writes (it carries that code), or install the project"
    )


def test_an_existing_folder_is_replaced_only_when_asked(spaces: Path) -> None:
    with pytest.raises(FileExistsError, match="already exists"):
        write_space("triad_map", spaces / "triad_map")
    assert "triad_map.py" in write_space("triad_map", spaces / "triad_map", overwrite=True)
