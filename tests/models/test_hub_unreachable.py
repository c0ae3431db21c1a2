"""An unreachable Hub is said in one line within seconds, never as a missing file."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import huggingface_hub
import pytest
from huggingface_hub.errors import LocalEntryNotFoundError

from model_adapters.models import resolve
from triad_dataset.contract.errors import TriadError

MESSAGE = "could not reach the Hugging Face Hub for BAAI/bge-m3; download it first or set HF_HUB_OFFLINE=1"


@pytest.fixture
def online_shell(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))


def _unreachable(*args: Any, **kwargs: Any) -> str:
    raise LocalEntryNotFoundError(
        "An error happened while trying to locate the file on the Hub and we cannot find "
        "the requested files in the local cache."
    )


def _resolve_error() -> tuple[str, float]:
    start = time.monotonic()
    with pytest.raises(TriadError) as caught:
        resolve.from_name("BAAI/bge-m3")
    return str(caught.value), time.monotonic() - start


def test_connection_error_during_download_is_said_in_one_line(
    online_shell: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resolve, "hub_reachable", lambda timeout=3.0: True)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", _unreachable)
    message, seconds = _resolve_error()
    assert message == MESSAGE
    assert "neither" not in message and "\n" not in message
    assert seconds < 5


def test_failed_probe_reads_only_the_cache(online_shell: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resolve, "hub_reachable", lambda timeout=3.0: False)
    calls: list[bool] = []

    def download(*args: Any, local_files_only: bool = False, **kwargs: Any) -> str:
        calls.append(local_files_only)
        return _unreachable()

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    message, seconds = _resolve_error()
    assert message == MESSAGE and seconds < 5
    assert calls and all(calls)


def test_probe_of_a_closed_port_is_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", "http://127.0.0.1:9")
    start = time.monotonic()
    assert resolve.hub_reachable(timeout=1.0) is False
    assert time.monotonic() - start < 3
