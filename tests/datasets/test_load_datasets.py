"""`datasets.load_dataset` reads our folders offline, with no custom code."""

from __future__ import annotations

import io
import os
from pathlib import Path

import datasets
import pytest
from PIL import Image

from tests.toy_triad import toy_tables, write_toy
from triad_dataset.contract import names as n
from triad_dataset.contract.features import features_for


def _load(path: str, config: str, cache: Path) -> datasets.Dataset:
    return datasets.load_dataset(path, config, split=n.SPLIT, cache_dir=str(cache))


def test_offline_switch_is_on() -> None:
    assert datasets.config.HF_HUB_OFFLINE


def test_every_toy_config_loads_with_its_features(tmp_path: Path) -> None:
    out = write_toy(tmp_path / "triad")
    tables = toy_tables()
    for config in n.ALL_CONFIGS:
        ds = _load(str(out), config, tmp_path / "cache")
        assert ds.features == features_for(config), config
        assert ds.num_rows == len(tables[config]), config
        key = "query_id" if config in n.TASK_CONFIGS else "item_id"
        assert ds[key] == [row[key] for row in tables[config]], config
    cars = _load(str(out), n.DOMAIN_CORPUS["cars"], tmp_path / "cache")
    assert isinstance(cars[0]["image"], Image.Image) and cars[0]["image"].size == (2, 2)
    state = _load(str(out), n.STATE_CONFIGS[1], tmp_path / "cache")[0]
    assert (
        state["query_image"].tobytes()
        == Image.open(io.BytesIO(tables[n.DOMAIN_CORPUS["cars"]][0]["image"]["bytes"])).tobytes()
    )
    assert state["candidate_roles"][-1] == n.CONFLICT_TRAP and state["num_turns"] == 2


def test_load_by_folder_name_from_its_parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_toy(tmp_path / "triad")
    monkeypatch.chdir(tmp_path)
    ds = _load("triad", n.STATE_CONFIGS[1], tmp_path / "cache")
    assert ds["query_id"] == ["cars-q0"]


def test_rebuilt_folder_never_serves_old_rows(tmp_path: Path) -> None:
    """datasets keys its cache of a local folder on data-file paths and mtimes; a rebuilt shard must get a new path.

    The rebuilt shard is given the old shard's mtime (as after `cp -p`, an archive extraction or a coarse clock),
    so only the content hash in its name can tell the cache that the rows changed.
    """
    out = write_toy(tmp_path / "triad")
    cache = tmp_path / "cache"
    config = n.CONSTRAINTS_CONFIGS[0]
    assert _load(str(out), config, cache)["query_text"][0].endswith("I want it in red.")
    (old_shard,) = (out / "data" / config).iterdir()
    mtime = old_shard.stat().st_mtime_ns
    tables = toy_tables()
    # same row count and byte size, so the card (which datasets also hashes) does not change either
    tables[config][0]["query_text"] = tables[config][0]["query_text"].replace("in red.", "in tan.")
    write_toy(out, tables, overwrite=True)
    (new_shard,) = (out / "data" / config).iterdir()
    os.utime(new_shard, ns=(mtime, mtime))
    reloaded = _load(str(out), config, cache)
    assert reloaded["query_text"][0].endswith("I want it in tan.")


@pytest.mark.slow
def test_every_mini_config_loads_offline(mini_triad_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from triad_dataset.folder.io import list_configs, read_table

    assert list_configs(mini_triad_dir) == list(n.ALL_CONFIGS)
    for config in n.ALL_CONFIGS:
        ds = _load(str(mini_triad_dir), config, tmp_path / "cache")
        assert ds.features == features_for(config), config
        assert ds.num_rows == read_table(mini_triad_dir, config, columns=[]).num_rows, config
        if config in n.TASK_CONFIGS:
            assert ds.num_rows >= 100, config  # every config has >= 100 queries
            assert len(ds[0]["candidate_ids"]) == n.POOL_SIZE, config
        picture = ds[0]["query_image" if config in n.TASK_CONFIGS else "image"]
        has_picture = config not in (n.CONCEPTS_CORPUS, *n.ABSTRACTION_CONFIGS[1:], n.SELF_CONFIGS[1])
        assert isinstance(picture, Image.Image) == has_picture, config  # pictures decode; text-only rows have none
    monkeypatch.chdir(mini_triad_dir.parent)  # by name from the folder's parent
    by_name = _load("triad", n.STATE_CONFIGS[1], tmp_path / "cache")
    assert by_name["query_id"] == _load(str(mini_triad_dir), n.STATE_CONFIGS[1], tmp_path / "cache")["query_id"]
