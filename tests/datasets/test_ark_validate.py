"""ARK validator: a valid hand-made folder passes, and each check fires (exact message) on a folder that breaks it."""

from __future__ import annotations

import copy
import io
import json

import pytest
from PIL import Image

from ark_dataset.features import features_for
from ark_dataset.validate import validate_folder, validate_tables
from triad_dataset.folder.io import write_folder


def png(colour: str) -> dict:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), colour).save(buffer, format="PNG")
    return {"bytes": buffer.getvalue(), "path": None}


def valid_tables() -> dict[str, list[dict]]:
    gallery = [
        {"item_id": "m1", "text": None, "image": png("red"), "modality": "image"},
        {"item_id": "m2", "text": "line 2 map", "image": png("blue"), "modality": "text_image"},
        {"item_id": "m3", "text": "a text item", "image": None, "modality": "text"},
    ]
    queries = [
        {
            "query_id": "q1",
            "domain": "humanities_social_science",
            "subtype": "metro",
            "query_text": "from A to B",
            "query_image": None,
            "positive_id": "m1",
            "hard_negative_ids": ["m2", "m3"],
            "cognitive_demand": "reasoning_intensive",
            "reasoning_skills": ["spatial", "fine_grained_visual"],
        },
        {
            "query_id": "q2",
            "domain": "humanities_social_science",
            "subtype": "metro",
            "query_text": None,
            "query_image": png("green"),
            "positive_id": "m3",
            "hard_negative_ids": [],
            "cognitive_demand": "both",
            "reasoning_skills": ["knowledge"],
        },
    ]
    return {"metro": queries, "metro_gallery": gallery}


def write(path, tables, audit=None):
    return write_folder(
        path,
        tables,
        features={c: features_for(c) for c in tables},
        card="# test\n",
        audit=audit or {"benchmark": "ark"},
        overwrite=True,
    )


def test_valid_folder_passes(tmp_path):
    assert validate_tables(valid_tables()) == []
    assert validate_folder(write(tmp_path / "ark", valid_tables())) == []


def _set(config, index, field, value):
    def mutate(tables):
        tables[config][index][field] = value

    return mutate


def _append(config, index):
    def mutate(tables):
        tables[config].append(copy.deepcopy(tables[config][index]))

    return mutate


BREAKS = [
    (
        "positive missing",
        _set("metro", 0, "positive_id", None),
        ["metro / q1: no positive_id (each query has exactly one positive)"],
    ),
    (
        "positive not in gallery",
        _set("metro", 0, "positive_id", "m9"),
        ["metro / q1: positive 'm9' is not in metro_gallery"],
    ),
    (
        "negative not in gallery",
        _set("metro", 0, "hard_negative_ids", ["m2", "zz"]),
        ["metro / q1: hard negative 'zz' is not in metro_gallery"],
    ),
    (
        "negative is the positive",
        _set("metro", 0, "hard_negative_ids", ["m1"]),
        ["metro / q1: hard negative 'm1' is the positive"],
    ),
    (
        "negative repeated",
        _set("metro", 0, "hard_negative_ids", ["m2", "m2"]),
        ["metro / q1: hard negative 'm2' listed 2 times"],
    ),
    (
        "unknown demand",
        _set("metro", 1, "cognitive_demand", "hard"),
        [
            "metro / q2: unknown cognitive_demand 'hard' (allowed: perception_only, knowledge_intensive, "
            "reasoning_intensive, both)"
        ],
    ),
    (
        "unknown skill",
        _set("metro", 1, "reasoning_skills", ["knowledge", "Spatial"]),
        [
            "metro / q2: unknown reasoning skill 'Spatial' (allowed: knowledge, spatial, logical, symbolic, "
            "fine_grained_visual, conceptual_abstraction)"
        ],
    ),
    (
        "no skills",
        _set("metro", 1, "reasoning_skills", []),
        [
            "metro / q2: no reasoning_skills (allowed: knowledge, spatial, logical, symbolic, fine_grained_visual, "
            "conceptual_abstraction)"
        ],
    ),
    (
        "wrong domain",
        _set("metro", 0, "domain", "formal_science"),
        ["metro / q1: domain 'formal_science', expected 'humanities_social_science'"],
    ),
    ("wrong subtype", _set("metro", 0, "subtype", "art"), ["metro / q1: subtype 'art' in config 'metro'"]),
    ("empty query", _set("metro", 1, "query_image", None), ["metro / q2: query has neither text nor image"]),
    ("duplicate query id", _append("metro", 0), ["metro / q1: duplicate query_id (2 rows)"]),
    ("duplicate item id", _append("metro_gallery", 2), ["metro_gallery / m3: duplicate item_id (2 rows)"]),
    (
        "unknown modality",
        _set("metro_gallery", 0, "modality", "video"),
        ["metro_gallery / m1: unknown modality 'video' (allowed: text, image, text_image)"],
    ),
    (
        "modality contradicts content",
        _set("metro_gallery", 1, "modality", "image"),
        ["metro_gallery / m2: modality 'image' but the item has text and image"],
    ),
    ("empty item", _set("metro_gallery", 2, "text", None), ["metro_gallery / m3: item has neither text nor image"]),
]


@pytest.mark.parametrize(("mutate", "expected"), [b[1:] for b in BREAKS], ids=[b[0] for b in BREAKS])
def test_each_check(tmp_path, mutate, expected):
    tables = valid_tables()
    mutate(tables)
    assert validate_tables(tables) == expected
    assert validate_folder(write(tmp_path / "ark", tables)) == expected


def test_config_pairing(tmp_path):
    tables = valid_tables()
    tables["art_gallery"] = tables.pop("metro_gallery")
    assert validate_folder(write(tmp_path / "ark", tables)) == [
        "metro: no metro_gallery config for these queries",
        "art_gallery: gallery without a art queries config",
    ]


def test_folder_of_another_benchmark(tmp_path):
    folder = write(tmp_path / "ark", valid_tables(), audit={"benchmark": "triad", "pool_size": 1000})
    assert validate_folder(folder) == [f"{folder}: audit.json says benchmark 'triad', expected 'ark'"]


def test_unknown_config_in_folder(tmp_path):
    from datasets import Features, Value

    folder = write(tmp_path / "ark", valid_tables())
    write_folder(
        tmp_path / "other",
        {"weather": [{"x": "1"}]},
        features={"weather": Features({"x": Value("string")})},
        card="# x\n",
        audit={"benchmark": "ark"},
    )
    (folder / "data" / "weather").mkdir()
    for shard in (tmp_path / "other" / "data" / "weather").iterdir():
        (folder / "data" / "weather" / shard.name).write_bytes(shard.read_bytes())
    card = (folder / "README.md").read_text()
    (folder / "README.md").write_text(
        card.replace(
            "configs:\n",
            "configs:\n- config_name: weather\n  data_files:\n  - split: test\n    path: data/weather/*.parquet\n",
            1,
        )
    )
    problems = validate_folder(folder)
    assert len(problems) == 1 and problems[0].startswith("weather: unknown ARK config 'weather'")
    assert json.loads((folder / "audit.json").read_text())["benchmark"] == "ark"
