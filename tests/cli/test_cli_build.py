"""`triad build|validate|audit` through the CLI entry point: wiring, exit codes, bad input, atomic output.

The mini edition itself is built once per session by the `mini_triad_dir` fixture (tests/conftest.py); the wiring
tests here replace the builders with the hand-made toy folder so they run in seconds.
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import triad_cli.main as cli
from tests.toy_triad import TOY_POOL, toy_tables, write_toy
from triad_dataset.contract import names as n
from triad_dataset.contract.records import BuildResult
from triad_dataset.editions import mini
from triad_dataset.folder.io import list_configs, read_audit
from triad_dataset.folder.validate import validate_folder


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()  # drop what earlier setup printed
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def toy_builders(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Make `build_mini` assemble the toy tables (pool size 6) instead of running the real builders."""
    state: dict[str, Any] = {"tables": toy_tables(), "calls": []}

    def steps(seed: int):
        def step() -> BuildResult:
            state["calls"].append(seed)
            return BuildResult(state["tables"], {"toy": {"gate_violations": 0}})

        return [("toy", step)]

    monkeypatch.setattr(mini, "_steps", steps)
    monkeypatch.setattr(n, "POOL_SIZE", TOY_POOL)
    return state


# --- build mini (wiring) ----------------------------------------------------------------------------------------


def test_build_mini_writes_validates_and_prints_the_audit(tmp_path: Path, capsys, toy_builders) -> None:
    out = tmp_path / "triad"
    code, stdout, _ = run(capsys, "build", "mini", "--out", str(out), "--seed", "3")
    assert code == 0 and toy_builders["calls"] == [3]
    assert list_configs(out) == list(n.ALL_CONFIGS)
    audit = read_audit(out)
    assert (audit["benchmark"], audit["edition"], audit["pool_size"], audit["seed"]) == ("triad", "mini", TOY_POOL, 3)
    assert audit["summary"][n.STATE_CONFIGS[0]]["traps"] == {
        "flags": 1,
        "conflict_queries": 1,
        "conflict_queries_with_trap": 1,
    }
    assert "gate violations: 0 in 1 checked subsets" in stdout
    assert f"wrote {out} (0 validation violations)" in stdout
    card = (out / "README.md").read_text()
    assert "synthetic placeholders" in card and "arXiv:2611.12364" in card


def test_build_mini_refuses_an_existing_folder_before_building(tmp_path: Path, capsys, toy_builders) -> None:
    out = tmp_path / "triad"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    code, _, err = run(capsys, "build", "mini", "--out", str(out))
    assert code == 2 and toy_builders["calls"] == []
    assert err == f"triad build: error: {out}: output folder exists (pass --overwrite to replace it)\n"
    code, _, err = run(capsys, "build", "mini", "--out", str(out), "--overwrite")
    assert code == 2 and "refusing to overwrite" in err and (out / "keep.txt").exists()


def test_build_mini_overwrite_replaces_a_dataset_folder(tmp_path: Path, capsys, toy_builders) -> None:
    out = write_toy(tmp_path / "triad", audit={"benchmark": "triad", "pool_size": TOY_POOL, "old": True})
    code, _, _ = run(capsys, "build", "mini", "--out", str(out), "--overwrite")
    assert code == 0 and "old" not in read_audit(out) and read_audit(out)["edition"] == "mini"


def test_an_invalid_build_writes_nothing(tmp_path: Path, capsys, toy_builders) -> None:
    toy_builders["tables"][n.SAME_CONFIGS[1]][0]["candidate_ids"][5] = "cars-00"  # the query's own image
    out = tmp_path / "triad"
    code, _, err = run(capsys, "build", "mini", "--out", str(out))
    assert code == 2
    assert "the built folder has 1 violations, nothing written" in err
    assert "same_cars / cars-s0: the query's own image 'cars-00' is in its pool" in err
    assert list(tmp_path.iterdir()) == []


def test_a_failing_builder_leaves_nothing(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom() -> BuildResult:
        raise RuntimeError("builder crashed (injected)")

    monkeypatch.setattr(mini, "_steps", lambda seed: [("boom", boom)])
    with pytest.raises(RuntimeError, match="injected"):
        cli.main(["build", "mini", "--out", str(tmp_path / "triad")])
    assert list(tmp_path.iterdir()) == []


# --- validate / audit -------------------------------------------------------------------------------------------


def test_validate_exit_codes(tmp_path: Path, capsys) -> None:
    good = write_toy(tmp_path / "good")
    assert run(capsys, "validate", str(good)) == (0, f"{good}: valid\n", "")
    tables = toy_tables()
    tables[n.CONSTRAINTS_CONFIGS[0]][0]["candidate_ids"][5] = "fashion-05"
    tables[n.STATE_CONFIGS[0]][0]["candidate_ids"][5] = "fashion-05"
    bad = write_toy(tmp_path / "bad", tables)
    code, out, err = run(capsys, "validate", str(bad))
    assert code == 1
    assert out.splitlines() == [
        f"{c} / fashion-q0: duplicate candidates 'fashion-05'" for c in (n.CONSTRAINTS_CONFIGS[0], n.STATE_CONFIGS[0])
    ]
    assert err == f"{bad}: 2 violations\n"
    code, _, err = run(capsys, "validate", str(tmp_path / "missing"))
    assert code == 2 and "not a dataset folder" in err and "Traceback" not in err


def test_audit_command_recomputes_a_missing_summary(tmp_path: Path, capsys) -> None:
    out = write_toy(tmp_path / "triad")
    code, stdout, _ = run(capsys, "audit", str(out))
    assert code == 0
    lines = stdout.splitlines()
    i2c = next(line for line in lines if line.startswith("I2C "))
    assert i2c.split()[:3] == ["I2C", "1", "2.00"]
    assert "gate violations: 0 in 0 checked subsets" in stdout


# --- other build kinds dispatch -----------------------------------------------------------------------------------


def test_build_scaled_dispatch_and_size_parsing(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    import triad_dataset.editions.pool_scaling as scaling

    calls = []

    def fake(src, out, size, *, seed, overwrite):
        calls.append((Path(src), Path(out), size, seed, overwrite))
        return write_toy(Path(out))

    monkeypatch.setattr(scaling, "scale_folder", fake)
    src = tmp_path / "src"
    code, stdout, _ = run(capsys, "build", "scaled", "--src", str(src), "--out", str(tmp_path / "a"), "--size", "full")
    assert code == 0 and calls[-1] == (src, tmp_path / "a", None, 2027, False)
    assert stdout.endswith("(0 validation violations)\n")
    run(
        capsys,
        "build",
        "scaled",
        "--src",
        str(src),
        "--out",
        str(tmp_path / "b"),
        "--size",
        "3000",
        "--seed",
        "5",
        "--overwrite",
    )
    assert calls[-1] == (src, tmp_path / "b", 3000, 5, True)
    code, _, err = run(capsys, "build", "scaled", "--src", str(src), "--out", str(tmp_path / "c"), "--size", "big")
    assert code == 2 and "--size 'big': expected a positive integer or 'full'" in err

    def too_big(src, out, size, *, seed, overwrite):
        raise ValueError("cars-0000: only 1399 eligible candidates, pool size 1500 requested")

    monkeypatch.setattr(scaling, "scale_folder", too_big)
    code, _, err = run(capsys, "build", "scaled", "--src", str(src), "--out", str(tmp_path / "d"), "--size", "1500")
    assert (code, err) == (
        2,
        f"triad build: error: {src}: cars-0000: only 1399 eligible candidates, pool size 1500 requested\n",
    )


def test_build_ark_kinds_dispatch(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    import ark_dataset.importer as importer
    import ark_dataset.mini as ark_mini
    import ark_dataset.validate as validate  # an ARK build is checked by ARK's validator (ark_dataset/commands.py)

    calls = []
    monkeypatch.setattr(
        ark_mini, "build_ark_mini", lambda out, *, seed, overwrite: calls.append(("mini", seed, overwrite)) or Path(out)
    )
    monkeypatch.setattr(
        importer,
        "import_release",
        lambda src, out, *, mapping, overwrite: calls.append(("release", Path(src), mapping, overwrite)) or Path(out),
    )
    monkeypatch.setattr(validate, "validate_folder", lambda path: ["daily_life / q1: broken"])
    code, _, err = run(capsys, "build", "ark-mini", "--out", str(tmp_path / "ark"), "--seed", "4")
    assert code == 1 and calls[-1] == ("mini", 4, False) and err == "daily_life / q1: broken\n"
    run(capsys, "build", "ark", "--from", str(tmp_path), "--out", str(tmp_path / "ark"), "--map", "query=question")
    assert calls[-1] == ("release", tmp_path, {"query_text": "question"}, False)


# --- full build from (tiny) sources -------------------------------------------------------------------------------


def test_build_full_needs_sources(tmp_path: Path, capsys) -> None:
    code, _, err = run(capsys, "build", "full", "--out", str(tmp_path / "x"))
    assert code == 2 and "nothing to build" in err
    code, _, err = run(capsys, "build", "full", "--out", str(tmp_path / "x"), "--cars-annotations", "a.csv")
    assert code == 2 and "--cars-annotations needs --cars-images" in err
    assert list(tmp_path.iterdir()) == []


def _write_image_folder(root: Path, wnids: list[str]) -> None:
    for wnid in wnids:
        digest = hashlib.sha256(wnid.encode()).digest()
        (root / wnid).mkdir(parents=True)
        Image.new("RGB", (224, 224), tuple(digest[:3])).save(root / wnid / f"{wnid}_1.png")


def _write_cars_table(path: Path, n_items: int) -> None:
    from triad_dataset.contract.schema import schema_for
    from triad_dataset.sources.synthetic import synthetic_catalog

    catalog = synthetic_catalog("cars", n_items=n_items, seed=1)
    fields = ["item_id", "product_id", "image", *schema_for("cars").names]
    (path.parent / "img").mkdir(parents=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for position, item in enumerate(catalog.items):
            (path.parent / "img" / f"{item.item_id}.png").write_bytes(catalog.image_bytes(position))
            writer.writerow(
                {
                    "item_id": item.item_id,
                    "product_id": item.product_id,
                    "image": f"img/{item.item_id}.png",
                    **item.attributes,
                }
            )


def _write_fashion_styles(root: Path, n_items: int) -> None:
    """Kaggle Fashion Product Images layout (styles.csv + images/<id>.jpg) plus a visual-annotation CSV."""
    from triad_dataset.sources.catalog import STYLES_COLUMNS
    from triad_dataset.sources.synthetic import synthetic_catalog

    catalog = synthetic_catalog("fashion", n_items=n_items, seed=2)
    (root / "images").mkdir(parents=True)
    with (root / "styles.csv").open("w", newline="") as styles, (root / "ann.csv").open("w", newline="") as ann:
        s = csv.writer(styles)
        a = csv.writer(ann)
        s.writerow(STYLES_COLUMNS)
        a.writerow(["id", "pattern", "sleeve_length", "length"])
        for position, item in enumerate(catalog.items):
            at = item.attributes
            ident = str(10000 + position)
            s.writerow(
                [
                    ident,
                    at["gender"],
                    "Apparel",
                    "Topwear",
                    at["category"],
                    at["colour"],
                    at["season"],
                    f"{at['year']}.0",
                    at["usage"],
                    f"{at['brand']} {item.product_id}",
                ]
            )
            a.writerow([ident, at["pattern"], at["sleeve_length"], at["length"]])
            (root / "images" / f"{ident}.jpg").write_bytes(catalog.image_bytes(position))


@pytest.mark.slow
def test_build_full_from_public_source_layouts(tmp_path: Path, capsys) -> None:
    from triad_dataset.sources.placeholders import subtree_classes
    from triad_dataset.sources.wordnet import load_wordnet

    graph = load_wordnet()
    wnids = sorted(graph.wnids[i] for i in subtree_classes(graph, ["n02512053"]))  # fish.n.01
    _write_image_folder(tmp_path / "imagenet", wnids)
    (tmp_path / "imagenet" / wnids[0] / "broken.jpg").write_bytes(b"not an image")
    _write_cars_table(tmp_path / "cars" / "cars.csv", 300)
    _write_fashion_styles(tmp_path / "fashion", 300)
    out = tmp_path / "triad"
    code, stdout, err = run(
        capsys,
        "build",
        "full",
        "--out",
        str(out),
        "--imagenet",
        str(tmp_path / "imagenet"),
        "--cars-table",
        str(tmp_path / "cars" / "cars.csv"),
        "--fashion-styles",
        str(tmp_path / "fashion" / "styles.csv"),
        "--fashion-images",
        str(tmp_path / "fashion" / "images"),
        "--fashion-annotations",
        str(tmp_path / "fashion" / "ann.csv"),
        "--queries",
        "8",
        "--same-queries",
        "6",
        "--pool-size",
        "40",
    )
    assert code == 0, err
    assert list_configs(out) == list(n.ALL_CONFIGS)
    assert validate_folder(out) == []
    audit = read_audit(out)
    assert audit["edition"] == "full" and audit["pool_size"] == 40
    assert {c: audit["summary"][c]["queries"] for c in n.TASK_CONFIGS if c in audit["summary"]} == {
        **{c: 8 for c in n.MAIN_CONFIGS + n.SELF_CONFIGS},
        **{c: 6 for c in n.SAME_CONFIGS},
    }
    assert "skipped inputs:" in stdout and "unreadable = 1" in stdout  # the broken file is skipped and counted
    assert "Fashion Product Images" in (out / "README.md").read_text()  # full card names the sources' licences
    assert json.loads((out / "audit.json").read_text())["sources"]["imagenet"] == str(tmp_path / "imagenet")


# --- the real mini edition (built once per session) -----------------------------------------------------------


@pytest.mark.slow
def test_mini_edition_is_valid_and_complete(mini_triad_dir: Path, capsys) -> None:
    assert run(capsys, "validate", str(mini_triad_dir)) == (0, f"{mini_triad_dir}: valid\n", "")
    audit = read_audit(mini_triad_dir)
    assert audit["edition"] == "mini" and audit["pool_size"] == n.POOL_SIZE
    for config in n.TASK_CONFIGS:
        figures = audit["summary"][config]
        assert figures["queries"] >= 100, config
        assert figures["pool_size"] == {"min": n.POOL_SIZE, "max": n.POOL_SIZE}, config
    from triad_dataset.folder.io import read_table

    sizes = {c: read_table(mini_triad_dir, c, columns=["item_id"]).num_rows for c in n.CORPUS_CONFIGS}
    # the mini edition: >= 1,500 fashion items, >= 1,000 cars, enough concepts and images for 1,000-candidate pools
    assert sizes[n.DOMAIN_CORPUS["fashion"]] >= 1500 and sizes[n.DOMAIN_CORPUS["cars"]] >= 1000
    assert sizes[n.CONCEPTS_CORPUS] > n.POOL_SIZE and sizes[n.INSTANCES_CORPUS] > n.POOL_SIZE
    code, stdout, _ = run(capsys, "audit", str(mini_triad_dir))
    assert code == 0 and "gate violations: 0 in" in stdout


# --- the dataset card ---------------------------------------------------------------------------------------------


def test_card_documents_configs_sources_and_citation() -> None:
    import yaml

    from triad_dataset.folder.card import PAPER_TITLE, render_card

    audit = {"pool_size": 1000, "summary": {n.STATE_CONFIGS[1]: {"queries": 1000}}}
    full = render_card("full", audit, list(n.ALL_CONFIGS), {n.DOMAIN_CORPUS["cars"]: 8007})
    front = yaml.safe_load(full.split("---\n")[1])
    assert front["license"] == "other" and front["pretty_name"] == "TRIAD (full edition)"
    for source in ("WordNet 3.0", "ImageNet-21K", "Fashion Product Images", "Param Aggarwal", "Stanford Cars"):
        assert source in full, source
    assert f"*{PAPER_TITLE}* (arXiv:2611.12364)" in full and "eprint        = {2611.12364}" in full
    rows = [line for line in full.splitlines() if line.startswith("| `")]
    assert [r.split("`")[1] for r in rows][: len(n.ALL_CONFIGS)] == list(n.ALL_CONFIGS)
    assert f"| `{n.STATE_CONFIGS[1]}` | 1000 |" in full and f"| `{n.DOMAIN_CORPUS['cars']}` | 8007 |" in full
    assert "a fixed pool of 1,000 candidates" in full and "synthetic placeholders" not in full
    mini_card = render_card("mini", {"pool_size": 1000})
    assert "synthetic placeholders" in mini_card and "ImageNet-21K** images" not in mini_card
    with pytest.raises(ValueError, match="unknown edition 'huge'"):
        render_card("huge", {})
