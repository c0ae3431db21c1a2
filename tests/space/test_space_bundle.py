"""`triad space bundle --out DIR` writes a ready-to-push Space folder (starting it is checked by
scripts/check_artifacts.py, outside the repository)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from spaces_app import bundle, commands
from triad_dataset.contract.errors import TriadError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="triad")
    commands.register(parser.add_subparsers(dest="command"))
    return parser


def test_bundle_has_card_requirements_app_and_code_but_no_gold(tmp_path: Path) -> None:
    files = bundle.write_bundle(tmp_path / "space")
    top = {f for f in files if "/" not in f}
    assert top == {"README.md", "requirements.txt", "app.py"}
    assert {f.split("/")[0] for f in files} - top == set(bundle.PACKAGES)
    assert not any("__pycache__" in f or f.endswith("conftest.py") for f in files)
    card = (tmp_path / "space" / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n") and "\napp_file: app.py\n" in card and "sdk: gradio" in card
    assert "written by `triad space bundle`" in card
    assert (tmp_path / "space" / "requirements.txt").read_text() == Path(
        bundle.PROJECT_ROOT / "spaces_app" / "requirements.txt"
    ).read_text()


def test_bundle_copies_gold_only_when_asked_and_refuses_bad_folders(tmp_path: Path) -> None:
    gold = tmp_path / "gold_in"
    (gold / "data").mkdir(parents=True)
    (gold / "audit.json").write_text(json.dumps({"benchmark": "triad"}))
    (gold / "data" / "x.parquet").write_bytes(b"PAR1")
    files = bundle.write_bundle(tmp_path / "space", gold_triad=gold)
    assert {"gold/triad/audit.json", "gold/triad/data/x.parquet"} <= set(files)
    with pytest.raises(TriadError, match="space: already exists"):
        bundle.write_bundle(tmp_path / "space")
    with pytest.raises(TriadError, match="--gold-ark .*missing: not a dataset folder"):
        bundle.write_bundle(tmp_path / "other", gold_ark=tmp_path / "missing")
    assert not (tmp_path / "other").exists()
    assert bundle.write_bundle(tmp_path / "space", overwrite=True) and not (tmp_path / "space" / "gold").exists()


def test_cli_bundle_subcommand_and_plain_space_still_parse(tmp_path: Path) -> None:
    args = _parser().parse_args(["space", "bundle", "--out", str(tmp_path / "s")])
    assert args.handler(args) == 0 and (tmp_path / "s" / "app.py").is_file()
    plain = _parser().parse_args(["space", "--data", "x"])
    assert plain.handler is commands._handle and plain.data == "x"
