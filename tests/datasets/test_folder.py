"""Dataset folders: layout, determinism, atomic writes, overwrite rules, readers (docs/CONTRACTS.md §1)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from tests.toy_triad import TOY_POOL, toy_tables, write_toy
from triad_dataset.contract import names as n
from triad_dataset.contract.errors import TriadError
from triad_dataset.folder import io as folder


def test_layout_card_and_audit(tmp_path: Path) -> None:
    out = write_toy(tmp_path / "triad")
    assert sorted(p.name for p in (out / "data").iterdir()) == sorted(n.ALL_CONFIGS)
    meta, body = folder.split_front_matter((out / "README.md").read_text(encoding="utf-8"))
    assert body == "# Toy TRIAD\n"
    assert [c["config_name"] for c in meta["configs"]] == list(n.ALL_CONFIGS)
    for entry in meta["configs"]:
        (shard,) = (out / "data" / entry["config_name"]).iterdir()
        digest = hashlib.sha256(shard.read_bytes()).hexdigest()
        assert shard.name == f"test-{digest[:12]}-00000-of-00001.parquet"
        assert entry["data_files"] == [
            {"split": "test", "path": f"data/{entry['config_name']}/test-{digest[:12]}-*.parquet"}
        ]
    assert json.loads((out / "audit.json").read_text()) == {
        "benchmark": "triad",
        "edition": "toy",
        "pool_size": TOY_POOL,
    }
    assert folder.list_configs(out) == list(n.ALL_CONFIGS)


def test_read_back_rows(tmp_path: Path) -> None:
    out = write_toy(tmp_path / "triad")
    tables = toy_tables()
    cars = n.DOMAIN_CORPUS["cars"]
    rows = folder.read_rows(out, cars)
    assert [r["item_id"] for r in rows] == [r["item_id"] for r in tables[cars]]
    assert rows[0]["image"] == tables[cars][0]["image"]  # bytes and path kept, nothing decoded
    assert json.loads(rows[0]["attributes"]) == {"color": "blue", "pattern": "solid"}
    state = n.STATE_CONFIGS[1]
    (row,) = folder.read_rows(out, state)
    assert "wnid" not in row  # only abstraction and Self queries carry a WordNet id
    assert row["candidate_trap"] == [False] * 5 + [True]
    assert row["positive_hops"] is None and row["depth"] is None  # missing optional columns are null
    assert row["conditions"] == [{"attribute": "color", "polarity": "P", "value": "red", "old_value": "blue"}]
    table = folder.read_table(out, state, columns=["query_id", "candidate_ids"])
    assert table.column_names == ["query_id", "candidate_ids"]


def test_identical_inputs_give_identical_bytes(tmp_path: Path) -> None:
    a, b = write_toy(tmp_path / "a"), write_toy(tmp_path / "b")
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files_a == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for rel in files_a:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
    assert folder.fingerprint(a) == folder.fingerprint(b)


def test_fingerprint_is_sha256_of_sorted_paths_and_bytes(tmp_path: Path) -> None:
    out = write_toy(tmp_path / "triad")
    digest = hashlib.sha256()
    for path in sorted(out.rglob("*.parquet"), key=lambda p: p.relative_to(out).as_posix()):
        digest.update(path.relative_to(out).as_posix().encode() + b"\0" + path.read_bytes())
    assert folder.fingerprint(out) == digest.hexdigest()


def test_changed_rows_change_shard_name_and_fingerprint(tmp_path: Path) -> None:
    first = write_toy(tmp_path / "triad")
    before = folder.fingerprint(first)
    tables = toy_tables()
    tables[n.CONCEPTS_CORPUS][0]["definition"] = "changed"
    write_toy(tmp_path / "triad", tables, overwrite=True)
    assert folder.fingerprint(first) != before
    names = {p.name for p in (first / "data" / n.CONCEPTS_CORPUS).iterdir()}
    assert len(names) == 1 and folder.read_rows(first, n.CONCEPTS_CORPUS)[0]["definition"] == "changed"


def test_existing_output_without_overwrite_is_an_error(tmp_path: Path) -> None:
    out = write_toy(tmp_path / "triad")
    with pytest.raises(TriadError, match=r"triad: output folder exists \(pass --overwrite to replace it\)"):
        write_toy(out)


def test_overwrite_refuses_a_folder_that_is_not_a_dataset(tmp_path: Path) -> None:
    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    with pytest.raises(TriadError, match="refusing to overwrite"):
        write_toy(precious, overwrite=True)
    assert (precious / "notes.txt").read_text() == "keep me"


def test_failure_mid_write_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = folder.write_shard

    def failing(directory, config, rows, features):
        calls.append(config)
        if len(calls) == 3:
            raise RuntimeError("disk full (injected)")
        return real(directory, config, rows, features)

    monkeypatch.setattr(folder, "write_shard", failing)
    with pytest.raises(RuntimeError, match="injected"):
        write_toy(tmp_path / "triad")
    assert list(tmp_path.iterdir()) == []  # neither the folder nor a temp dir


def test_failure_during_overwrite_keeps_the_old_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = write_toy(tmp_path / "triad")
    before = folder.fingerprint(out)
    monkeypatch.setattr(folder, "card_with_configs", lambda *a, **k: (_ for _ in ()).throw(OSError("injected")))
    with pytest.raises(OSError, match="injected"):
        write_toy(out, overwrite=True)
    assert folder.fingerprint(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["triad"]


def test_unknown_column_and_bad_values_name_the_config_and_row(tmp_path: Path) -> None:
    tables = toy_tables()
    tables[n.STATE_CONFIGS[0]][0]["surprise"] = 1
    with pytest.raises(
        ValueError, match=r"state_fashion / fashion-q0: columns not in the config's features: \['surprise'\]"
    ):
        write_toy(tmp_path / "a", tables)
    tables = toy_tables()
    tables[n.DOMAIN_CORPUS["cars"]][0]["year"] = ["not", "a", "string"]
    with pytest.raises(
        ValueError, match=r"cars_items / cars-00: column year does not match the config's features \(string\)"
    ):
        write_toy(tmp_path / "b", tables)
    assert list(tmp_path.iterdir()) == []


def test_audit_must_name_its_benchmark(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="audit\\['benchmark'\\]"):
        write_toy(tmp_path / "a", audit={"pool_size": 6})


def test_image_values_are_embedded(tmp_path: Path) -> None:
    from PIL import Image

    picture = tmp_path / "pic.png"
    Image.new("RGB", (3, 3), (1, 2, 3)).save(picture)
    assert folder.encode_image(str(picture)) == {"bytes": picture.read_bytes(), "path": "pic.png"}
    assert folder.encode_image({"bytes": None, "path": str(picture)})["bytes"] == picture.read_bytes()
    decoded = Image.open(__import__("io").BytesIO(folder.encode_image(Image.new("RGB", (3, 3)))["bytes"]))
    assert decoded.size == (3, 3)
    with pytest.raises(TriadError, match="missing.png: cannot read image file"):
        folder.encode_image(str(tmp_path / "missing.png"))


def test_readers_name_missing_things(tmp_path: Path) -> None:
    with pytest.raises(TriadError, match="not a dataset folder"):
        folder.read_rows(tmp_path / "nowhere", "x")
    out = write_toy(tmp_path / "triad")
    with pytest.raises(TriadError, match="no parquet data for config 'nope'"):
        folder.read_table(out, "nope")
    (out / "audit.json").unlink()
    with pytest.raises(TriadError, match="audit.json: missing"):
        folder.read_audit(out)


def test_card_front_matter_is_merged(tmp_path: Path) -> None:
    from tests.toy_triad import toy_audit
    from triad_dataset.contract.features import all_features

    card = "---\nlicense: other\npretty_name: Toy\nconfigs: stale\n---\n# Body\n"
    tables = {n.CONCEPTS_CORPUS: toy_tables()[n.CONCEPTS_CORPUS]}
    out = folder.write_folder(tmp_path / "c", tables, features=all_features(), card=card, audit=toy_audit())
    meta = yaml.safe_load((out / "README.md").read_text().split("---")[1])
    assert meta["license"] == "other" and meta["pretty_name"] == "Toy"
    assert meta["configs"][0]["config_name"] == n.CONCEPTS_CORPUS
    (split,) = meta["dataset_info"]["splits"]
    assert (
        split["name"] == "test" and split["num_examples"] == len(tables[n.CONCEPTS_CORPUS]) and split["num_bytes"] > 0
    )
