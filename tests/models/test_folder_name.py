"""A local model folder is named by its model card (README.md) where the card names it, else by the folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_adapters.models.folder_name import card_name, folder_name


def _card(folder: Path, text: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "README.md").write_text(text, encoding="utf-8")
    return str(folder)


@pytest.mark.parametrize(
    ("card", "name"),
    [
        ("---\nlicense: mit\nmodel_name: my-embedder\n---\n# Something else\n", "my-embedder"),
        ("---\nmodel-index:\n- name: acme/retriever-v2\n  results: []\n---\ntext\n", "acme/retriever-v2"),
        ("---\nlicense: apache-2.0\n---\n\n\n# all-MiniLM-L6-v2\nThis is a model.\n", "all-MiniLM-L6-v2"),
        ("# SentenceTransformer based on sentence-transformers/all-MiniLM-L6-v2\n", None),  # a description
        ("---\nmodel_name: /home/me/checkpoints/x\n---\n", None),  # a path, not a name
        ("---\n: not yaml: [\n---\n# tiny-bert\n", "tiny-bert"),
        ("no title at all\n## second level\n", None),
    ],
)
def test_the_card_names_the_model(tmp_path, card, name):
    assert card_name(_card(tmp_path / "model", card)) == name


def test_without_a_card_name_the_folder_names_it(tmp_path):
    assert folder_name(_card(tmp_path / "model", "nothing here\n")) == "model"
    (tmp_path / "bare").mkdir()
    assert folder_name(str(tmp_path / "bare") + "/") == "bare"


def test_a_card_name_that_is_taken_falls_back_to_the_folder(tmp_path):
    folder = _card(tmp_path / "model", "# minilm\n")
    assert folder_name(folder) == "minilm"
    assert folder_name(folder, taken=lambda name: name == "minilm") == "model"


def test_a_local_minilm_folder_is_named_all_minilm_not_model(tmp_path):
    """The folder of the issue: a local copy of MiniLM in a folder called `model`, as `--model ./model` names it."""
    import shutil

    from model_adapters.models import registry
    from model_adapters.models.resolve import from_name

    source = Path(registry.resolve_path(registry.get_entry("minilm")))
    (tmp_path / "model").mkdir()
    for name in ("README.md", "config.json", "modules.json", "config_sentence_transformers.json"):
        shutil.copy(source / name, tmp_path / "model" / name)
    identity = from_name(str(tmp_path / "model")).identity
    assert (identity.name, identity.source, identity.source_kind) == (
        "all-MiniLM-L6-v2",
        str(tmp_path / "model"),
        "local",
    )
    assert from_name(str(tmp_path / "model"), name="mine").identity.name == "mine"  # --name still decides
