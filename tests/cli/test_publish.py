"""`triad publish`: dry-run listing, validation first, and one clear error (never a traceback) without token/network."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from huggingface_hub import HfApi, constants

import triad_cli.main as cli
from tests.toy_triad import toy_tables, write_toy
from triad_dataset.contract import names as n
from triad_dataset.contract.errors import TriadError
from triad_dataset.folder.publish import publish, upload_plan


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write_toy(tmp_path / "triad")


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Online mode, no token anywhere (env or token file), and no real network call possible."""
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(tmp_path / "no-stored-tokens"))

    def no_network(*args, **kwargs):
        raise httpx.ConnectError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(HfApi, "create_repo", no_network)
    monkeypatch.setattr(HfApi, "upload_folder", no_network)


def test_upload_plan_lists_card_audit_and_shards(folder: Path) -> None:
    plan = upload_plan(folder)
    expected = ["README.md", "audit.json"] + sorted(
        p.relative_to(folder).as_posix() for p in (folder / "data").rglob("*.parquet")
    )
    assert [path for path, _ in plan] == expected
    assert dict(plan)["audit.json"] == (folder / "audit.json").stat().st_size
    assert len(plan) == 2 + len(n.ALL_CONFIGS)


def test_dry_run_needs_no_token(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert cli.main(["publish", str(folder), "--repo", "my-org/triad", "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"would upload {2 + len(n.ALL_CONFIGS)} files (") and lines[0].endswith(
        ") to datasets/my-org/triad:"
    )
    assert lines[1].split() == ["README.md", *_size_words(folder / "README.md")]
    assert len(lines) == 3 + len(n.ALL_CONFIGS)


def _size_words(path: Path) -> list[str]:
    size = path.stat().st_size
    return [str(size), "B"] if size < 1024 else [f"{size / 1024:.1f}", "KiB"]


def test_offline_mode_is_a_clear_error(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(TriadError, match="cannot publish while HF_HUB_OFFLINE is set"):
        publish(folder, "my-org/triad")


def test_no_token_is_a_clear_error(folder: Path, online: None, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert cli.main(["publish", str(folder), "--repo", "my-org/triad"]) == 2
    err = capsys.readouterr().err
    assert err == "triad publish: error: no Hugging Face token found: log in with `hf auth login` or set HF_TOKEN\n"


def test_no_network_is_a_clear_error(
    folder: Path, online: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_fake")
    capsys.readouterr()
    assert cli.main(["publish", str(folder), "--repo", "my-org/triad"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err == (
        f"triad publish: error: upload of {folder} to datasets/my-org/triad failed: cannot reach the Hub "
        "(ConnectError: [Errno -3] Temporary failure in name resolution); check the network connection\n"
    )


def test_successful_upload_sends_exactly_the_plan(folder: Path, online: None, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {}
    monkeypatch.setattr(HfApi, "create_repo", lambda self, repo_id, **kw: calls.setdefault("create", (repo_id, kw)))
    monkeypatch.setattr(
        HfApi,
        "upload_folder",
        lambda self, **kw: (
            calls.setdefault("upload", kw)
            and SimpleNamespace(commit_url="https://huggingface.co/datasets/my-org/triad/commit/abc")
        ),
    )
    report = publish(folder, "my-org/triad", token="hf_fake", private=True)
    assert (
        report == "uploaded 16 files to datasets/my-org/triad: https://huggingface.co/datasets/my-org/triad/commit/abc"
    )
    assert calls["create"] == ("my-org/triad", {"repo_type": "dataset", "private": True, "exist_ok": True})
    upload = calls["upload"]
    assert (upload["folder_path"], upload["repo_id"], upload["repo_type"]) == (str(folder), "my-org/triad", "dataset")
    assert upload["allow_patterns"] == [path for path, _ in upload_plan(folder)]


def test_bad_repo_and_invalid_folder_are_refused(tmp_path: Path, folder: Path) -> None:
    with pytest.raises(TriadError, match="--repo 'triad': expected ORG/NAME"):
        publish(folder, "triad", dry_run=True)
    tables = toy_tables()
    tables[n.SAME_CONFIGS[0]][0]["positive_ids"] = []
    broken = write_toy(tmp_path / "broken", tables)
    with pytest.raises(TriadError, match="refusing to publish a folder with 2 validation violations"):
        publish(broken, "my-org/triad", dry_run=True)
    (tmp_path / "empty").mkdir()
    with pytest.raises(TriadError, match="not a built dataset folder"):
        publish(tmp_path / "empty", "my-org/triad", dry_run=True)
