"""`triad results RUN --format mteb`: files mteb's `TaskResult` and `ModelMeta` load, named and keyed as the mteb
tasks of `model_adapters.mteb` name and key their results. Skipped where the `mteb` extra is not installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("mteb", reason="the mteb extra is not installed (pip install -e '.[mteb]')")

import mteb  # noqa: E402
from mteb.models.model_meta import ModelMeta  # noqa: E402
from mteb.results import TaskResult  # noqa: E402

from model_adapters.mteb import as_mteb_encoder, triad_tasks  # noqa: E402
from model_adapters.mteb.results import mteb_name  # noqa: E402
from tests.mteb.test_mteb_tasks import _example_encoder, _ours  # noqa: E402
from tests.toy_triad import write_toy  # noqa: E402
from triad_cli.main import main  # noqa: E402
from triad_dataset.contract.errors import TriadError  # noqa: E402

CONFIGS = ["constraints_fashion", "state_cars"]


def test_written_results_load_in_mteb_and_match_its_own_run(tmp_path, capsys):
    toy = write_toy(tmp_path / "triad")
    ours = _ours(tmp_path, toy, CONFIGS, encoder=_example_encoder(), name="bag-of-words", revision="v1")
    assert main(["results", str(tmp_path / "run"), "--format", "mteb"]) == 0
    files = [Path(line) for line in capsys.readouterr().out.split()]
    folder = tmp_path / "run" / "mteb" / "triad-local__bag-of-words" / "v1"
    assert sorted(f.name for f in files) == sorted(
        ["TRIAD-constraints_fashion.json", "TRIAD-state_cars.json", "model_meta.json", "triad_provenance.json"]
    )
    assert all(f.parent == folder for f in files)
    assert (
        ModelMeta.model_validate(json.loads((folder / "model_meta.json").read_text())).name
        == "triad-local/bag-of-words"
    )
    tasks = triad_tasks(str(toy), CONFIGS)
    live = mteb.evaluate(
        as_mteb_encoder(_example_encoder(), name="x/y"), tasks=tasks, cache=None, show_progress_bar=False
    )
    for task, result in zip(tasks, live.task_results, strict=True):
        written = TaskResult.from_disk(folder / f"{task.metadata.name}.json")
        config = task.metadata.name.removeprefix("TRIAD-")
        assert written.get_score() == ours[config]["metrics"]["map"]
        assert written.dataset_revision == task.metadata.revision
        (entry,) = written.scores["test"]
        (mine,) = result.scores["test"]
        assert set(entry) - {"mteb_version"} <= set(mine) - {"triad_expected_ap"}
        assert entry["triad_map"] == pytest.approx(mine["triad_map"], abs=1e-12)


def test_a_limited_run_is_refused(tmp_path):
    from model_adapters.mteb.results import write_mteb_results

    (tmp_path / "results.json").write_text(json.dumps({"complete": False}))
    with pytest.raises(TriadError, match="--limit run"):
        write_mteb_results(tmp_path)


def test_mteb_names_need_an_org():
    assert mteb_name({"name": "minilm"}) == "triad-local/minilm"
    assert mteb_name({"name": "mine", "hub_id": "org/model"}) == "org/model"
