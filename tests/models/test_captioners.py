"""ARK's text-space track: the OCR captioner, the caption cache, `triad caption`, caption-then-embed in the runner,
`triad rewrite`, and the tiny random captioner / rewriter."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from model_adapters.captioners import registry
from model_adapters.captioners.caption import TABLE, CaptionConfig, run_caption
from model_adapters.planning import textspace
from model_adapters.planning.plan import load_rewrites
from model_adapters.runner import RunConfig, run
from tests.doubles.folders import tiny_ark_tables, write_tiny_ark
from triad_cli.main import main
from triad_dataset.contract.errors import TriadError
from triad_dataset.folder.io import read_rows

WORDS = {"calendar-g000": "APRIL", "calendar-g002": "ZEBRA", "calendar-q1": "1987"}


def _text_png(word: str) -> bytes:
    from PIL import Image, ImageDraw

    from ark_dataset.render import font

    img = Image.new("RGB", (220, 64), "white")
    ImageDraw.Draw(img).text((12, 12), word, fill="black", font=font(32))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _tables(bad: bool = False) -> dict:
    """calendar only: gallery items 0 and 2 and query 1 are images of one word each; items 1 and 3 are text."""
    tables = tiny_ark_tables(subtypes=("calendar",), n_queries=2, gallery=4)
    for item in tables["calendar_gallery"]:
        if item["item_id"] in WORDS:
            item["image"] = _text_png(WORDS[item["item_id"]])
    tables["calendar"][1]["query_image"] = _text_png(WORDS["calendar-q1"])
    if bad:
        tables["calendar_gallery"][2]["image"] = b"\x89PNG\r\n\x1a\n truncated"
    return tables


@pytest.fixture(scope="module")
def words_dir(tmp_path_factory):
    return str(write_tiny_ark(tmp_path_factory.mktemp("data") / "ark", tables=_tables()))


class SizeCaptioner:
    """A test captioner: "<width>x<height>" of each image (decoding like the real ones); counts its images."""

    def __init__(self) -> None:
        self.seen = 0

    def caption(self, images):
        from model_adapters.families.common import decode_image

        self.seen += len(images)
        return ["{}x{}".format(*decode_image(b).size) for b in images]


def _table(out) -> dict:
    return {(r["config"], r["item_id"]): r for r in pq.read_table(Path(out) / TABLE).to_pylist()}


def test_ocr_text_is_nfkc_normalized_and_a_bad_form_is_refused():
    from types import SimpleNamespace

    from model_adapters.captioners import ocr

    lines = [
        "00\uff11\uff1100",
        " ",
        "A \u22651 B",
        "",
        " Y ",
    ]  # full-width "1"s as PP-OCR returns them; gate symbol kept
    assert ocr.OcrCaptioner.text_of(SimpleNamespace(normalize="NFKC", joiner=" "), lines) == "001100 A \u22651 B Y"
    assert (
        ocr.OcrCaptioner.text_of(SimpleNamespace(normalize="", joiner="|"), lines) == "00\uff11\uff1100|A \u22651 B|Y"
    )
    assert registry.OCR_OPTIONS["normalize"] == "NFKC"
    with pytest.raises(TriadError, match="normalize='NFKX'"):
        ocr.OcrCaptioner({"normalize": "NFKX"})


@pytest.mark.slow
def test_ocr_captions_are_cached_and_a_changed_setting_recaptions(words_dir, tmp_path, monkeypatch):
    cfg = dict(data=words_dir, cache_dir=str(tmp_path / "cache"), quiet=True)
    meta = run_caption(CaptionConfig("ocr", out=str(tmp_path / "a"), **cfg))
    rows = _table(tmp_path / "a")
    assert {
        item: rows[("calendar_gallery" if "-g" in item else "calendar", item)]["caption"] for item in WORDS
    } == WORDS
    assert rows[("calendar", "calendar-q1")]["role"] == "query" and len(rows) == 3
    assert (
        meta["captioned"] == 3 and meta["cache_hits"] == 0 and meta["captioner"]["options"]["Det.limit_type"] == "max"
    )

    from model_adapters.captioners import ocr

    monkeypatch.setattr(ocr.OcrCaptioner, "caption", lambda *_: pytest.fail("a cached re-run ran OCR"))
    again = run_caption(CaptionConfig("ocr", out=str(tmp_path / "b"), **cfg))
    assert again["captioned"] == 0 and again["cache_hits"] == 3 and _table(tmp_path / "b") == rows
    monkeypatch.undo()
    changed = run_caption(CaptionConfig("ocr", out=str(tmp_path / "c"), settings=["Global.text_score=0.9"], **cfg))
    assert changed["captioned"] == 3 and changed["captioner_key"] != meta["captioner_key"]


def test_bad_image_is_named_not_fatal_unless_asked(tmp_path):
    data = str(write_tiny_ark(tmp_path / "ark", tables=_tables(bad=True)))
    meta = run_caption(
        CaptionConfig("ocr", data, str(tmp_path / "out"), no_cache=True, quiet=True, captioner_obj=SizeCaptioner())
    )
    rows = _table(tmp_path / "out")
    assert meta["bad_images"] == [rows[("calendar_gallery", "calendar-g002")]["error"]]
    assert "calendar_gallery gallery calendar-g002: image does not decode" in meta["bad_images"][0]
    assert rows[("calendar_gallery", "calendar-g000")]["caption"] == "220x64"
    assert meta["captioner"]["object"].endswith("SizeCaptioner")  # never labelled as the registry's OCR alone
    with pytest.raises(TriadError, match="calendar-g002"):
        run_caption(
            CaptionConfig(
                "ocr",
                data,
                str(tmp_path / "out2"),
                no_cache=True,
                quiet=True,
                captioner_obj=SizeCaptioner(),
                fail_on_bad_images=True,
            )
        )
    assert not (tmp_path / "out2" / TABLE).exists()


def test_cache_resumes_and_replaces_a_corrupted_shard(words_dir, tmp_path):
    cfg = dict(data=words_dir, cache_dir=str(tmp_path / "cache"), quiet=True, batch_size=1)
    first = SizeCaptioner()
    run_caption(CaptionConfig("ocr", out=str(tmp_path / "a"), captioner_obj=first, **cfg))
    shards = sorted((tmp_path / "cache").glob("*/shards/*.json"))
    assert first.seen == 3 and len(shards) == 3
    shards[0].write_bytes(shards[0].read_bytes() + b" ")
    second = SizeCaptioner()
    meta = run_caption(CaptionConfig("ocr", out=str(tmp_path / "b"), captioner_obj=second, **cfg))
    assert second.seen == 1 and meta["captioned"] == 1 and meta["cache_hits"] == 2
    assert _table(tmp_path / "b") == _table(tmp_path / "a")


class RecordingEncoder:
    dim = 4

    def __init__(self) -> None:
        self.texts: list[str] = []

    def _encode(self, batch):
        self.texts.extend(b.text for b in batch)
        assert all(b.image is None for b in batch)
        return np.stack(
            [
                np.frombuffer(__import__("hashlib").sha256(b.text.encode()).digest()[:16], np.uint32) / 2**32 - 0.5
                for b in batch
            ]
        ).astype(np.float32)

    encode_queries = encode_candidates = _encode


def test_caption_then_embed(words_dir, tmp_path):
    run_caption(
        CaptionConfig(
            "ocr", words_dir, str(tmp_path / "caps"), no_cache=True, quiet=True, captioner_obj=SizeCaptioner()
        )
    )
    enc = RecordingEncoder()
    res = run(
        RunConfig(
            model=None,
            name="recording",
            revision="test",
            sees_images=False,
            data=words_dir,
            out=str(tmp_path / "run"),
            cache_dir=str(tmp_path / "emb"),
            quiet=True,
            validate=False,
            encoder=enc,
            captions=str(tmp_path / "caps"),
        )
    )
    gallery = {r["item_id"]: r for r in read_rows(words_dir, "calendar_gallery")}
    queries = {r["query_id"]: r for r in read_rows(words_dir, "calendar")}
    expected = {
        gallery["calendar-g000"]["text"] + "\n220x64",
        gallery["calendar-g002"]["text"] + "\n220x64",
        gallery["calendar-g001"]["text"],
        gallery["calendar-g003"]["text"],
        queries["calendar-q0"]["query_text"],
        queries["calendar-q1"]["query_text"] + "\n220x64",
    }
    assert set(enc.texts) == expected
    assert res["captioner"]["identity"]["object"].endswith("SizeCaptioner")
    saved = json.loads((tmp_path / "run" / "results.json").read_text())
    assert saved["captioner"]["key"] == res["captioner"]["key"]
    # the run identity (embedding cache folder) differs from the raw text-only run's
    run(
        RunConfig(
            model=None,
            name="recording",
            revision="test",
            sees_images=False,
            data=words_dir,
            out=str(tmp_path / "raw"),
            cache_dir=str(tmp_path / "emb"),
            quiet=True,
            validate=False,
            encoder=RecordingEncoder(),
        )
    )
    assert len([p for p in (tmp_path / "emb").iterdir() if p.name != "_runs"]) == 2  # _runs: run-state records


class TextReranker:
    """A text-only reranker (like bge-reranker-v2-m3): records the texts it is given."""

    sees_images = False

    def __init__(self) -> None:
        self.texts: list[str] = []

    def score_pairs(self, queries, candidates):
        assert all(item.image is None for item in [*queries, *candidates])
        self.texts.extend(c.text for c in candidates)
        return np.array([float(len(c.text)) for c in candidates])


def test_a_text_reranker_reads_captions_after_an_image_first_stage(words_dir, tmp_path):
    run_caption(
        CaptionConfig(
            "ocr", words_dir, str(tmp_path / "caps"), no_cache=True, quiet=True, captioner_obj=SizeCaptioner()
        )
    )
    reranker = TextReranker()
    res = run(
        RunConfig(
            model="tiny-random-clip",
            data=words_dir,
            out=str(tmp_path / "o"),
            no_cache=True,
            quiet=True,
            validate=False,
            captions=str(tmp_path / "caps"),
            reranker=reranker,
        )
    )
    gallery = {r["item_id"]: r for r in read_rows(words_dir, "calendar_gallery")}
    assert gallery["calendar-g000"]["text"] + "\n220x64" in reranker.texts  # the caption joined to the text
    assert gallery["calendar-g001"]["text"] in reranker.texts
    assert res["captioner"]["key"] and res["reranker"]["sees_images"] is False


def test_captions_are_refused_where_they_do_not_apply(words_dir, tmp_path):
    run_caption(
        CaptionConfig(
            "ocr",
            words_dir,
            str(tmp_path / "caps"),
            subtypes="calendar",
            no_cache=True,
            quiet=True,
            captioner_obj=SizeCaptioner(),
        )
    )
    with pytest.raises(TriadError, match="sees images itself"):
        run(
            RunConfig(
                model="tiny-random-clip",
                data=words_dir,
                out=str(tmp_path / "o"),
                no_cache=True,
                quiet=True,
                validate=False,
                captions=str(tmp_path / "caps"),
            )
        )
    caps = textspace.load_captions(str(tmp_path / "caps"))
    with pytest.raises(TriadError, match="no caption for calendar_gallery item 'x'"):
        textspace.apply_caption(
            caps, "calendar_gallery", {"item_id": "x", "modality": "image"}, textspace.ModelInput("t")
        )
    with pytest.raises(TriadError, match="not a captions folder"):
        textspace.load_captions(str(tmp_path))


@pytest.mark.slow
def test_tiny_random_captioner_and_rewriter_through_the_cli(words_dir, tmp_path, capsys):
    assert (
        main(
            [
                "caption",
                "--captioner",
                "tiny-random-captioner",
                "--data",
                words_dir,
                "--out",
                str(tmp_path / "caps"),
                "--no-cache",
                "--quiet",
            ]
        )
        == 0
    )
    meta = json.loads((tmp_path / "caps" / "captioner.json").read_text())
    assert meta["random_init"] is True and meta["captioned"] == 3
    assert all(isinstance(r["caption"], str) for r in _table(tmp_path / "caps").values())
    out = tmp_path / "rewrites.jsonl"
    assert (
        main(["rewrite", "--rewriter", "tiny-random-rewriter", "--data", words_dir, "--out", str(out), "--quiet"]) == 0
    )
    assert set(load_rewrites(str(out))) == {"calendar-q0", "calendar-q1"}
    assert json.loads(out.with_name(out.name + ".meta.json").read_text())["random_init"] is True
    assert main(["caption", "--captioner", "nope", "--data", words_dir, "--out", str(tmp_path / "x")]) == 2
    assert "unknown captioner 'nope'" in capsys.readouterr().err


def test_registry_settings_change_the_identity():
    ocr = registry.get_entry("ocr")
    changed = registry.with_options(ocr, ["Global.text_score=0.9"])
    assert registry.identity(changed)["options"]["Global.text_score"] == 0.9
    assert registry.identity(changed) != registry.identity(ocr)
    with pytest.raises(TriadError, match="KEY=VALUE"):
        registry.with_options(ocr, ["oops"])
    with pytest.raises(TriadError, match="unknown rewriter"):
        registry.get_entry("ocr", registry.REWRITER)


def test_compaction_keeps_a_concurrent_runs_shards(tmp_path, monkeypatch):
    from model_adapters.captioners import cache as cache_mod
    from model_adapters.generation import records

    monkeypatch.setattr(records, "COMPACT_ABOVE", 2)
    ident = {"name": "x"}
    mine = cache_mod.CaptionCache(tmp_path, ident)
    for i in range(3):
        mine.put({f"k{i}": f"c{i}"})
    other = cache_mod.CaptionCache(tmp_path, ident)
    other.put({"late": "written after `mine` loaded"})
    mine.compact()
    fresh = cache_mod.CaptionCache(tmp_path, ident)
    assert fresh.load() == 4 and fresh.captions["late"] == "written after `mine` loaded"
    assert len(list((tmp_path / mine.key / "shards").iterdir())) == 2
