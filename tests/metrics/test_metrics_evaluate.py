"""The evaluate modules forward to metrics.core, and load by path and (after install) by bare name, offline."""

from __future__ import annotations

import doctest
import importlib
import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from unittest.mock import patch

import numpy as np
import pytest

from metrics.core.api import ark_scores, triad_scores
from metrics.install_evaluate import MODULES, module_path
from triad_dataset.contract import names as n

ROOT = Path(__file__).resolve().parents[2]


def _evaluate():
    """evaluate, imported by the tests that need it (it imports torch and transformers): collection stays light."""
    return pytest.importorskip("evaluate")


@pytest.fixture(scope="module")
def triad_map():
    return _evaluate().load(module_path("triad_map"))


@pytest.fixture(scope="module")
def ark_retrieval():
    return _evaluate().load(module_path("ark_retrieval"))


def _random_pools(seed: int, n_q: int = 12):
    rng = np.random.default_rng(seed)
    preds, refs, roles, traps = [], [], [], []
    for _ in range(n_q):
        size = int(rng.integers(3, 30))  # ragged pools
        y = (rng.random(size) < 0.2).astype(int)
        y[rng.integers(0, size)] = 1
        preds.append(np.round(rng.random(size), 2).tolist())  # rounded: ties happen
        refs.append(y.tolist())
        roles.append([n.POSITIVE if v else str(rng.choice(n.NEGATIVE_ROLES)) for v in y])
        traps.append((rng.random(size) < 0.1).tolist())
    return preds, refs, roles, traps


@pytest.mark.parametrize("ties", ["stable", "expected"])
def test_triad_map_forwards_to_core(triad_map, ties: str) -> None:
    preds, refs, roles, traps = _random_pools(1)
    kwargs = dict(candidate_roles=roles, candidate_trap=traps, k=5, ties=ties, return_per_query=True)
    got = triad_map.compute(predictions=preds, references=refs, **kwargs)
    assert got == triad_scores(preds, refs, **kwargs)
    assert set(got) >= {"map", "top1_hit", "mrr", "entry_rate@5", "trap_rate@5", "trap_query_share@5", "per_query_ap"}


def test_ark_retrieval_forwards_to_core(ark_retrieval) -> None:
    preds, refs, _, _ = _random_pools(2, n_q=6)
    refs = [[1 if i == int(np.argmax(r)) else 0 for i in range(len(r))] for r in refs]  # one positive each
    subtypes = ["metro", "metro", "comic", "art", "art", "art"]
    groups = [["logical"], ["spatial", "logical"], "knowledge", [], ["logical"], "spatial"]
    got = ark_retrieval.compute(predictions=preds, references=refs, subtypes=subtypes, groups=groups)
    assert got == ark_scores(preds, refs, subtypes=subtypes, groups=groups)
    assert got["macro"]["n_subtypes"] == 3 and got["per_group"]["logical"]["n_queries"] == 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(predictions=[[0.1, 0.2], [0.3]], references=[[1, 0], [1, 0]]), "query 1: 1 scores but 2 labels"),
        (dict(predictions=[[0.1, 0.2], [0.3, 0.4]], references=[[1, 0], [0, 0]]), "query 1: has no positive"),
        (dict(predictions=[[0.1, float("nan")]], references=[[1, 0]]), "query 0: score at candidate 1 is nan"),
        (dict(predictions=[[0.1, 0.2]], references=[[1, 3]]), "query 0: label at candidate 1 is 3"),
        (
            dict(predictions=[[0.1, 0.2]], references=[[1, 0]], candidate_roles=[[n.POSITIVE, "decoy"]]),
            "query 0: unknown candidate role 'decoy'",
        ),
        (
            dict(predictions=[[0.1, 0.2]], references=[[1, 0]], candidate_roles=[[n.POSITIVE]]),
            "query 0: candidate_roles has 1 entries for 2 candidates",
        ),
        (dict(predictions=[[0.1, 0.2]], references=[[1, 0]], ties="random"), "ties='random'"),
    ],
)
def test_triad_map_bad_input(triad_map, kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        triad_map.compute(**kwargs)


def test_query_count_mismatch_is_rejected(triad_map) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - the evaluate library words this refusal, not this project
        triad_map.compute(predictions=[[0.1, 0.2], [0.3, 0.4]], references=[[1, 0]])


def test_ark_retrieval_needs_one_positive(ark_retrieval) -> None:
    with pytest.raises(ValueError, match="query 0: has 2 positives"):
        ark_retrieval.compute(predictions=[[0.1, 0.2]], references=[[1, 1]])
    with pytest.raises(ValueError, match="query 0: unknown ARK subtype 'poetry'"):
        ark_retrieval.compute(predictions=[[0.1, 0.2]], references=[[1, 0]], subtypes=["poetry"])


_BARE_NAME_SCRIPT = textwrap.dedent(
    """
    import socket

    def _no_network(*args, **kwargs):
        raise RuntimeError("network access attempted")

    socket.socket.connect = _no_network
    socket.create_connection = _no_network
    import evaluate
    from metrics.install_evaluate import install

    try:
        evaluate.load("triad-benchmark/triad_map")
    except FileNotFoundError:
        print("not found before install")
    install()
    m = evaluate.load("triad-benchmark/triad_map")
    print(m.compute(predictions=[[0.1, 0.9]], references=[[1, 0]]))
    print(evaluate.load("triad-benchmark/ark_retrieval").name)
    try:
        evaluate.load("triad_map")
    except FileNotFoundError:
        print("no bare name: that is Hugging Face's namespace")
    """
)


@pytest.mark.slow
def test_community_name_loads_offline_after_install(tmp_path: Path) -> None:
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_EVALUATE_OFFLINE": "1",  # evaluate 0.4.6 reads its own flag, not HF_HUB_OFFLINE
        "HF_HOME": str(tmp_path / "hf_home"),
        "HF_MODULES_CACHE": str(tmp_path / "modules"),
        "HF_EVALUATE_CACHE": str(tmp_path / "evaluate_cache"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", _BARE_NAME_SCRIPT], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "not found before install",
        "{'map': 0.5, 'top1_hit': 0.0, 'mrr': 0.5}",
        "ark_retrieval",
        "no bare name: that is Hugging Face's namespace",
    ]
    installed = tmp_path / "modules" / "evaluate_modules" / "metrics"
    assert list(installed.glob("triad-benchmark--triad_map/*/triad_map.py"))
    assert not list(installed.glob("evaluate-metric--*"))


def _module_script(name: str):
    """The module script as evaluate imports it (from its modules cache), like evaluate's common module test."""
    factory = _evaluate().loading.evaluation_module_factory(module_path(name), module_type="metric")
    return importlib.import_module(factory.module_path)


@pytest.mark.parametrize("name", MODULES)
def test_compute_takes_no_var_keyword(name: str) -> None:
    metric_class = _evaluate().loading.import_main_class(_module_script(name).__name__)
    parameters = inspect.signature(metric_class._compute).parameters.values()
    assert [p.name for p in parameters if p.kind == p.VAR_KEYWORD] == []


@pytest.mark.parametrize("name", MODULES)
def test_examples_have_more_than_one_statement(name: str) -> None:
    tests = doctest.DocTestFinder().find(_module_script(name))
    assert sum(len(t.examples) for t in tests) > 1


@pytest.mark.parametrize("name", MODULES)
def test_examples_pass_like_evaluate_common_module_test(name: str) -> None:
    """evaluate's `tests/test_metric_common.py::LocalModuleTest.test_load`, step by step: the bare names in the
    examples resolve to the local folders through a patched `evaluate.load`, doctest runs with evaluate's settings
    (no option flags, ellipsis marker "[...]") and stops at the first failure."""
    module = _module_script(name)
    real_load = _evaluate().load

    def load_local(path: str, *args, **kwargs):
        return real_load(module_path(path) if path in MODULES else path, *args, **kwargs)

    marker = doctest.ELLIPSIS_MARKER
    doctest.ELLIPSIS_MARKER = "[...]"
    try:
        with patch("evaluate.load", side_effect=load_local):
            results = doctest.testmod(module, verbose=False, raise_on_error=True)
    finally:
        doctest.ELLIPSIS_MARKER = marker
    assert results.failed == 0 and results.attempted > 1


_DOCTEST_ELSEWHERE = (
    "-m",
    "pytest",
    "-q",
    "-p",
    "no:cacheprovider",
    "--doctest-modules",
    *(str(ROOT / "metrics" / name / f"{name}.py") for name in MODULES),
)


@pytest.mark.slow
def test_module_examples_run_from_any_directory_with_empty_modules_cache(tmp_path: Path) -> None:
    """`make test` runs the examples (bare names) from another working directory and an empty modules cache."""
    env = {
        **os.environ,
        "HF_EVALUATE_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "HF_MODULES_CACHE": str(tmp_path / "modules"),
        "HF_EVALUATE_CACHE": str(tmp_path / "evaluate_cache"),
    }
    done = subprocess.run(
        [sys.executable, *_DOCTEST_ELSEWHERE, "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "2 passed" in done.stdout
    assert not list((tmp_path / "modules").glob("evaluate_modules/metrics/evaluate-metric--*"))  # no canonical copy
