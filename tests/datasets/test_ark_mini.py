"""The ARK mini edition as a folder: builds, validates, has a real card, and loads with `datasets` offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ark_dataset.mini import MINI_SUBTYPES, build_ark_mini
from ark_dataset.names import GALLERY_SUFFIX, SUBTYPES
from ark_dataset.validate import validate_folder
from tests.datasets.test_ark_support import cached_build_subtype, mini_build
from triad_dataset.contract.errors import TriadError
from triad_dataset.folder.io import list_configs, read_audit, read_rows


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("mini") / "ark"
    with pytest.MonkeyPatch.context() as patch:  # reuse the session's seed-0 builds instead of regenerating
        patch.setattr("ark_dataset.mini.build_subtype", cached_build_subtype)
        return build_ark_mini(out)


def test_configs_and_validation(folder):
    assert list_configs(folder) == [c for s in MINI_SUBTYPES for c in (s, s + GALLERY_SUFFIX)]
    assert validate_folder(folder) == []
    for subtype in MINI_SUBTYPES:
        rows = read_rows(folder, subtype, columns=["query_id", "positive_id"])
        assert [(r["query_id"], r["positive_id"]) for r in rows] == [
            (q["query_id"], q["positive_id"]) for q in mini_build(subtype).queries
        ]
        assert len(rows) >= 100 and len(read_rows(folder, subtype + GALLERY_SUFFIX, columns=["item_id"])) >= 500


def test_audit(folder):
    audit = read_audit(folder)
    assert {k: audit[k] for k in ("benchmark", "edition", "synthetic", "seed")} == {
        "benchmark": "ark",
        "edition": "mini",
        "synthetic": True,
        "seed": 0,
    }
    assert audit["subtypes"]["calendar"] == {"queries": 100, "gallery": 500, "hard_negatives": 400}


def test_card(folder):
    card = (folder / "README.md").read_text()
    assert card.startswith("---\n") and "pretty_name: ARK mini (synthetic)" in card
    assert "**This folder is synthetic.**" in card
    assert "ARK: A Dual-Axis Multimodal Retrieval Benchmark along Reasoning and Knowledge" in card
    absent = [s for s in SUBTYPES if s not in MINI_SUBTYPES]
    assert "Absent from this edition: " + ", ".join(f"`{s}`" for s in absent) + "." in card
    for subtype in MINI_SUBTYPES:
        assert f"- `{subtype}`: " in card
    assert "(ARK B.5). Labels: `reasoning_intensive`; `logical`, `symbolic`." in card
    assert card.count("| absent |") == len(absent) == 12
    rows = sum(
        len(read_rows(folder, c, columns=["query_id" if c in MINI_SUBTYPES else "item_id"]))
        for c in list_configs(folder)
    )
    assert rows > 1000 and "size_categories:\n- 1K<n<10K\n" in card  # counted over queries and galleries


def test_existing_output_is_refused_before_building(folder, monkeypatch):
    monkeypatch.setattr("ark_dataset.mini.build_mini", lambda **_: pytest.fail("built before checking the output"))
    with pytest.raises(TriadError, match="output folder exists"):
        build_ark_mini(folder)


LOAD_SCRIPT = """
import json, sys
from datasets import load_dataset
queries = load_dataset("ark", "calendar", split="test")
gallery = load_dataset("ark", "calendar_gallery", split="test")
first = gallery[0]
print(json.dumps({"n_queries": len(queries), "n_gallery": len(gallery), "query_id": queries[0]["query_id"],
                  "skills": queries[0]["reasoning_skills"], "negatives": len(queries[0]["hard_negative_ids"]),
                  "image_size": list(first["image"].size), "item_id": first["item_id"],
                  "columns": queries.column_names}))
"""


def test_load_dataset_offline(folder, tmp_path):
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "HF_DATASETS_CACHE": str(tmp_path / "cache"),
    }
    result = subprocess.run(
        [sys.executable, "-c", LOAD_SCRIPT],
        cwd=folder.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    build = mini_build("calendar")
    assert loaded == {
        "n_queries": 100,
        "n_gallery": 500,
        "query_id": build.queries[0]["query_id"],
        "skills": ["knowledge", "logical"],
        "negatives": 4,
        "image_size": [280, 240],
        "item_id": build.gallery[0]["item_id"],
        "columns": [
            "query_id",
            "domain",
            "subtype",
            "query_text",
            "query_image",
            "positive_id",
            "hard_negative_ids",
            "cognitive_demand",
            "reasoning_skills",
        ],
    }
