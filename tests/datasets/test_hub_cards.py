"""Cards the Hub reads as it expects them: a `license: other` card names its licence file (`license_link`) and the
folder holds it; `size_categories` is counted from the rows written; the leaderboard bundle's Space card carries
`tags: [leaderboard]` and valid Space metadata; the metric modules' cards are valid Space cards too."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from datasets import Features, Value

from ark_dataset.importer import import_release
from metrics.install_evaluate import MODULES, module_path
from spaces_app.bundle import write_bundle
from tests.datasets.test_ark_importer import write_release
from triad_dataset.editions.pool_scaling import scale_folder
from triad_dataset.folder import io as folder
from triad_dataset.folder.card import WORDNET_LICENSE, licence_text, render_card
from triad_dataset.folder.publish import upload_plan

HUB_COLORS = {"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"}  # the Space config reference


def _front(path: Path) -> dict:
    return folder.split_front_matter(path.read_text(encoding="utf-8"))[0]


def _rows(directory: Path) -> int:
    return sum(pq.ParquetFile(f).metadata.num_rows for f in (directory / "data").rglob("*.parquet"))


def test_the_mini_card_links_the_licence_file_it_ships_and_counts_its_rows(mini_triad_dir: Path) -> None:
    front = _front(mini_triad_dir / "README.md")
    assert (front["license"], front["license_name"], front["license_link"]) == (
        "other",
        "apache-2.0-and-wordnet",
        "LICENSE.md",
    )
    licence = (mini_triad_dir / front["license_link"]).read_text(encoding="utf-8")
    assert WORDNET_LICENSE.read_text(encoding="utf-8").strip() in licence and "Apache-2.0" in licence
    rows = _rows(mini_triad_dir)
    assert rows > 10_000 and front["size_categories"] == ["10K<n<100K"]  # one config alone has more than 10K rows
    assert [p for p, _ in upload_plan(mini_triad_dir)][:2] == ["LICENSE.md", "README.md"]


def test_the_full_card_names_the_sources_terms_in_its_licence_file() -> None:
    front = yaml.safe_load(render_card("full", {"summary": {}}).split("---\n")[1])
    assert (front["license"], front["license_name"], front["license_link"]) == ("other", "source-terms", "LICENSE.md")
    assert "size_categories" not in front  # counted from the rows when the folder is written
    text = licence_text("full")
    assert "ImageNet terms of access" in text and "Stanford Cars" in text and "## WordNet License" in text


@pytest.mark.parametrize(
    ("rows", "category"), [(999, "n<1K"), (1000, "1K<n<10K"), (14_502, "10K<n<100K"), (2_000_000, "1M<n<10M")]
)
def test_size_categories_come_from_the_rows_written(tmp_path: Path, rows: int, category: str) -> None:
    assert folder.size_category(rows) == category
    features = {"toy": Features({"x": Value("int64")})}
    card = "---\nlicense: other\nsize_categories:\n- n<1K\n---\n# Toy\n"  # a card's own guess is replaced
    out = folder.write_folder(
        tmp_path / "toy", {"toy": [{"x": i} for i in range(min(rows, 1500))]}, features=features, card=card,
        audit={"benchmark": "triad"},
    )  # fmt: skip
    assert _front(out / "README.md")["size_categories"] == [folder.size_category(min(rows, 1500))]
    assert not (out / "LICENSE.md").exists()  # written only when a builder gives one


def test_a_pool_scaled_folder_keeps_its_sources_licence(mini_triad_dir: Path, tmp_path: Path) -> None:
    out = scale_folder(mini_triad_dir, tmp_path / "scaled", 1100)
    front = _front(out / "README.md")
    assert front["license_link"] == "LICENSE.md" and front["license_name"] == "apache-2.0-and-wordnet"
    assert (out / "LICENSE.md").read_text() == (mini_triad_dir / "LICENSE.md").read_text()
    assert front["size_categories"] == [folder.size_category(_rows(out))]


def test_an_imported_ark_release_links_its_licence(tmp_path: Path) -> None:
    src = write_release(tmp_path / "release")
    out = import_release(src, tmp_path / "ark")
    front = _front(out / "README.md")
    assert (front["license"], front["license_link"]) == ("other", "LICENSE.md")
    assert "came with no licence file" in (out / "LICENSE.md").read_text()
    assert front["size_categories"] == ["n<1K"] and _rows(out) == 5  # 2 queries + 3 gallery items
    (src / "LICENSE").write_text("CC BY-NC 4.0, the ARK authors\n", encoding="utf-8")
    again = import_release(src, tmp_path / "ark2")
    assert "## The release's licence (LICENSE)\n\n```\nCC BY-NC 4.0, the ARK authors\n```" in (
        again / "LICENSE.md"
    ).read_text(encoding="utf-8")


def _check_space_card(front: dict, app_files: set[str]) -> None:
    from huggingface_hub import SpaceCardData

    SpaceCardData(**front)  # the Hub's own card class accepts it
    assert front["sdk"] == "gradio" and isinstance(front["sdk_version"], str) and front["app_file"] in app_files
    assert front["colorFrom"] in HUB_COLORS and front["colorTo"] in HUB_COLORS and front["title"] and front["emoji"]
    assert len(front.get("short_description", "")) <= 60  # the Hub refuses a longer one


def test_the_bundle_card_is_a_leaderboard_space_card(tmp_path: Path) -> None:
    files = write_bundle(tmp_path / "space")
    front = _front(tmp_path / "space" / "README.md")
    _check_space_card(front, set(files))
    assert "leaderboard" in front["tags"] and front["app_file"] == "app.py" and front["license"] == "apache-2.0"


@pytest.mark.parametrize("name", MODULES)
def test_the_metric_cards_are_space_cards(name: str) -> None:
    front = _front(Path(module_path(name)) / "README.md")
    _check_space_card(front, {p.name for p in Path(module_path(name)).iterdir()})
    assert {"evaluate", "metric"} <= set(front["tags"])
