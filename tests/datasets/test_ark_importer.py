"""ARK release importer: JSON Lines + image files -> Hub-style folder; malformed input -> one TriadError, no output."""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image

from ark_dataset.importer import import_release, normalize_label, parse_mapping
from ark_dataset.validate import validate_folder
from triad_dataset.contract.errors import TriadError
from triad_dataset.folder.io import read_audit, read_rows


def png_bytes(colour: str, size=(6, 4)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def jpeg_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), "orange").save(buffer, format="JPEG")
    return buffer.getvalue()


def metro_queries() -> list[dict]:
    return [
        {
            "query_id": "q1",
            "query_text": "Two stops east of the interchange",
            "positive_id": "m1",
            "hard_negative_ids": ["m2"],
            "cognitive_demand": "Reasoning-Intensive",
            "reasoning_skills": ["Spatial Reasoning", "Fine-Grained Visual Reasoning"],
            "domain": "Humanities & Social Science",
        },
        {
            "query_id": "q2",
            "query_image": "images/q2.png",
            "positive_id": ["m3"],
            "cognitive_demand": "both",
            "reasoning_skills": "knowledge",
            "subtype": "Metro",
        },
    ]


def metro_gallery() -> list[dict]:
    return [
        {"item_id": "m1", "image": "images/m1.png"},
        {"item_id": "m2", "image": "images/m2.jpg", "text": "Line 2 map", "modality": "text_image"},
        {"item_id": "m3", "text": "a station list"},
    ]


def write_release(root, queries=None, gallery=None, folder="Metro"):
    sub = root / folder
    (sub / "images").mkdir(parents=True, exist_ok=True)
    (sub / "images" / "m1.png").write_bytes(png_bytes("red"))
    (sub / "images" / "m2.jpg").write_bytes(jpeg_bytes())
    (sub / "images" / "q2.png").write_bytes(png_bytes("green"))
    for name, rows in (("queries.jsonl", queries or metro_queries()), ("gallery.jsonl", gallery or metro_gallery())):
        (sub / name).write_text("".join(json.dumps(r) + "\n" if not isinstance(r, str) else r + "\n" for r in rows))
    return root


def test_import_release(tmp_path):
    src = write_release(tmp_path / "release")
    out = import_release(src, tmp_path / "ark")
    assert validate_folder(out) == []
    queries, gallery = read_rows(out, "metro"), read_rows(out, "metro_gallery")
    assert [q["query_id"] for q in queries] == ["q1", "q2"]
    assert queries[0]["domain"] == "humanities_social_science" and queries[0]["subtype"] == "metro"
    assert queries[0]["cognitive_demand"] == "reasoning_intensive"
    assert queries[0]["reasoning_skills"] == ["spatial", "fine_grained_visual"]
    assert queries[0]["query_image"] is None and queries[1]["query_text"] is None
    assert queries[1]["query_image"] == {"bytes": png_bytes("green"), "path": "q2.png"}
    assert queries[1]["positive_id"] == "m3" and queries[1]["hard_negative_ids"] == []
    assert queries[1]["reasoning_skills"] == ["knowledge"]
    assert [g["modality"] for g in gallery] == ["image", "text_image", "text"]
    assert gallery[1]["image"] == {"bytes": jpeg_bytes(), "path": "m2.jpg"}  # original bytes kept
    audit = read_audit(out)
    assert audit["benchmark"] == "ark" and audit["subtypes"] == {"metro": {"queries": 2, "gallery": 3}}
    assert "Imported from the release files in `release`" in (out / "README.md").read_text()


def test_image_paths_relative_to_the_release_root(tmp_path):
    src = write_release(tmp_path / "release", gallery=_item(image="Metro/images/m2.jpg"))
    out = import_release(src, tmp_path / "ark")
    assert read_rows(out, "metro_gallery")[0]["image"] == {"bytes": jpeg_bytes(), "path": "m2.jpg"}


def test_field_mapping(tmp_path):
    queries = [
        {
            "id": q["query_id"],
            "question": q.get("query_text"),
            "img": q.get("query_image"),
            "answer": q["positive_id"],
            "cognitive_demand": q["cognitive_demand"],
            "reasoning_skills": q["reasoning_skills"],
        }
        for q in metro_queries()
    ]
    src = write_release(tmp_path / "release", queries=queries)
    with pytest.raises(TriadError) as error:
        import_release(src, tmp_path / "ark")
    assert (
        "queries.jsonl:1: metro: missing or non-string query_id (unrecognised fields: answer, id, img, question; "
        "rename them with --map FIELD=SOURCE)"
    ) in str(error.value)
    mapping = parse_mapping(["query_id=id", "query=question", "query_image=img", "positive=answer"])
    assert mapping == {"query_id": "id", "query_text": "question", "query_image": "img", "positive_id": "answer"}
    out = import_release(src, tmp_path / "ark", mapping=mapping)
    assert [(q["query_id"], q["positive_id"]) for q in read_rows(out, "metro")] == [("q1", "m1"), ("q2", "m3")]
    assert read_audit(out)["mapping"] == mapping


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        (["query"], "--map 'query': expected FIELD=SOURCE_FIELD"),
        (["colour=c"], "--map 'colour=c': unknown field 'colour'"),
    ],
)
def test_parse_mapping_errors(pairs, message):
    with pytest.raises(TriadError, match=message):
        parse_mapping(pairs)


def test_byte_order_mark_and_spelled_out_domain(tmp_path):
    src = write_release(tmp_path / "release", _query(domain="Humanities and Social Science"))
    path = src / "Metro" / "queries.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert validate_folder(import_release(src, tmp_path / "ark")) == []


def test_normalize_label():
    assert normalize_label("Spatial-3D") == "spatial_3d"
    assert normalize_label("Both") == "both"


def _query(**changes):
    rows = metro_queries()
    rows[0].update(changes)
    return rows


def _item(**changes):
    rows = metro_gallery()
    rows[0].update(changes)
    return rows


Q, G = "Metro/queries.jsonl", "Metro/gallery.jsonl"
MALFORMED = [
    ("invalid json", {"queries": metro_queries() + ["{bad"]}, f"{Q}:3: invalid JSON"),
    ("not an object", {"queries": metro_queries() + ["[1, 2]"]}, f"{Q}:3: expected a JSON object, got list"),
    ("missing query id", {"queries": _query(query_id=None)}, f"{Q}:1: metro: missing or non-string query_id"),
    (
        "two positives",
        {"queries": _query(positive_id=["m1", "m2"])},
        f"{Q}:1: metro / q1: 2 positives given, each query has exactly one",
    ),
    (
        "zero positives",
        {"queries": _query(positive_id=[])},
        f"{Q}:1: metro / q1: 0 positives given, each query has exactly one",
    ),
    (
        "no positive",
        {"queries": _query(positive_id=None)},
        f"{Q}:1: metro / q1: missing positive_id (each query has exactly one positive)",
    ),
    (
        "unknown demand",
        {"queries": _query(cognitive_demand="hard")},
        f"{Q}:1: metro / q1: unknown cognitive_demand 'hard'",
    ),
    (
        "unknown skill",
        {"queries": _query(reasoning_skills=["vibes"])},
        f"{Q}:1: metro / q1: unknown reasoning skill 'vibes'",
    ),
    (
        "wrong domain",
        {"queries": _query(domain="Natural Science")},
        f"{Q}:1: metro / q1: domain 'Natural Science' does not match the folder ('humanities_social_science')",
    ),
    (
        "negatives not a list",
        {"queries": _query(hard_negative_ids="m2")},
        f"{Q}:1: metro / q1: hard_negative_ids must be a list of item ids",
    ),
    ("empty query", {"queries": _query(query_text=None)}, f"{Q}:1: metro / q1: query has neither text nor image"),
    (
        "undecodable image",
        {"gallery": _item(image="images/broken.png")},
        f"{G}:1: metro_gallery / m1: image 'images/broken.png' does not decode",
    ),
    (
        "missing image",
        {"gallery": _item(image="images/none.png")},
        f"{G}:1: metro_gallery / m1: cannot read image 'images/none.png'",
    ),
    (
        "image outside the folder",
        {"gallery": _item(image="../../secret.png")},
        f"{G}:1: metro_gallery / m1: image path '../../secret.png' leaves the release folder",
    ),
    (
        "modality contradicts",
        {"gallery": _item(modality="text")},
        f"{G}:1: metro_gallery / m1: modality 'text' but the item has image",
    ),
    (
        "positive not in gallery",
        {"queries": _query(positive_id="nope")},
        "metro / q1: positive 'nope' is not in metro_gallery",
    ),
    (
        "negative is positive",
        {"queries": _query(hard_negative_ids=["m1"])},
        "metro / q1: hard negative 'm1' is the positive",
    ),
    (
        "duplicate item",
        {"gallery": metro_gallery() + [{"item_id": "m3", "text": "again"}]},
        "metro_gallery / m3: duplicate item_id (2 rows)",
    ),
    ("duplicate query", {"queries": metro_queries() + [metro_queries()[1]]}, "metro / q2: duplicate query_id (2 rows)"),
]


@pytest.mark.parametrize(("files", "message"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_release(tmp_path, files, message):
    src = write_release(tmp_path / "release", files.get("queries"), files.get("gallery"))
    (src / "Metro" / "images" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 10)
    (tmp_path / "out").mkdir()
    with pytest.raises(TriadError) as error:
        import_release(src, tmp_path / "out" / "ark")
    assert f"{src}/{message}" in str(error.value) or message in str(error.value)
    assert list((tmp_path / "out").iterdir()) == []  # nothing written, no temp folder left


def test_problems_are_collected_in_one_error(tmp_path):
    src = write_release(tmp_path / "release", _query(cognitive_demand="x", reasoning_skills=["y"]))
    with pytest.raises(TriadError) as error:
        import_release(src, tmp_path / "ark")
    text = str(error.value)
    assert "2 problem(s)" in text and "unknown cognitive_demand 'x'" in text and "unknown reasoning skill 'y'" in text


def test_folder_problems(tmp_path):
    src = write_release(tmp_path / "release")
    write_release(src, folder="Weather")
    (src / "calendar").mkdir()
    (src / "calendar" / "queries.jsonl").write_text("")
    with pytest.raises(TriadError) as error:
        import_release(src, tmp_path / "ark")
    assert f"{src}/Weather: unknown subtype folder 'Weather'" in str(error.value)
    assert f"{src}/calendar: missing gallery.jsonl" in str(error.value)
    with pytest.raises(TriadError, match="release folder not found"):
        import_release(tmp_path / "nowhere", tmp_path / "ark")
    (tmp_path / "empty").mkdir()
    with pytest.raises(TriadError, match="no <subtype>/queries.jsonl files"):
        import_release(tmp_path / "empty", tmp_path / "ark")


def test_existing_output(tmp_path):
    src = write_release(tmp_path / "release")
    out = import_release(src, tmp_path / "ark")
    with pytest.raises(TriadError, match="output folder exists"):
        import_release(src, out)
    assert import_release(src, out, overwrite=True) == out
    assert validate_folder(out) == []
