"""API-only models: Seed1.6-embedding (Volcengine Ark) as an embedder and GPT-5.2 (OpenAI-compatible chat
completions) as ARK's rewriter, end to end against a fake server on 127.0.0.1 (tests/fake_api.py; no other network):
the requests the provider's SDK would send, the response cache (a re-run requests nothing; `--offline` reads only the
cache and runs with the network unreachable), retries on 429 / 5xx, and one clear line for every failure. The API
key is never written anywhere.
"""

from __future__ import annotations

import base64
import json
import re
import socket
from pathlib import Path

import numpy as np
import pytest

from model_adapters.families import api as ark
from model_adapters.models.registry import get_entry
from model_adapters.protocol import ModelInput
from tests.doubles.folders import png, write_tiny_ark
from tests.fake_api import ARK_MODEL, ARK_PATH, CHAT_PATH, CHAT_REPORTED, FakeApi, fake_vector
from triad_cli.main import main
from triad_dataset.contract.errors import TriadError

KEY = "sk-test-SECRET-4f9c2"  # must never reach a file, a message or results.json


@pytest.fixture(scope="module")
def ark_dir(tmp_path_factory):
    return str(write_tiny_ark(tmp_path_factory.mktemp("data") / "ark"))


@pytest.fixture
def server(monkeypatch):
    with FakeApi() as fake:
        monkeypatch.setenv("ARK_BASE_URL", fake.base("ark"))
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base("chat"))
        monkeypatch.setenv("ARK_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        yield fake


def _run(capsys, ark_dir: str, tmp_path: Path, out: str, *extra: str) -> tuple[int, str]:
    code = main(
        [
            "run",
            "--model",
            "seed1.6-embedding",
            "--data",
            ark_dir,
            "--out",
            str(tmp_path / out),
            "--api-cache",
            str(tmp_path / "api"),
            "--cache-dir",
            str(tmp_path / "emb"),
            "--quiet",
            "--no-validate",
            *extra,
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


def _rankings(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((folder / "rankings").glob("*.parquet"))}


def _no_key_anywhere(*folders: Path, text: str = "") -> None:
    assert KEY not in text
    for folder in folders:
        for f in folder.rglob("*"):
            if f.is_file():
                assert KEY.encode() not in f.read_bytes(), f


# --- the request ----------------------------------------------------------------------------------------------
def test_requests_are_the_sdks_shape_and_the_vectors_come_back_in_order(server):
    entry = ark.resolved(get_entry("seed1.6-embedding"))
    enc = ark.ArkEmbedder(entry)
    image = png((10, 20, 30))
    batch = [ModelInput("a red car", image, "Find the product."), ModelInput("", image), ModelInput("text only")]
    vectors = enc.encode_queries(batch)
    bodies = sorted((body for _, body, _ in server.requests), key=lambda b: len(b["input"][0].get("text", "")))
    assert [p for p, _, _ in server.requests] == [ARK_PATH] * 3  # one request per input, sent concurrently
    assert all(auth == f"Bearer {KEY}" for _, _, auth in server.requests)
    data_url = "data:image/png;base64," + base64.b64encode(image).decode()
    image_part = {"type": "image_url", "image_url": {"url": data_url}}
    assert bodies == [
        {"model": ARK_MODEL, "encoding_format": "float", "dimensions": 2048, "input": [image_part]},
        {
            "model": ARK_MODEL,
            "encoding_format": "float",
            "dimensions": 2048,
            "input": [{"type": "text", "text": "text only"}],
        },
        {
            "model": ARK_MODEL,
            "encoding_format": "float",
            "dimensions": 2048,
            "input": [{"type": "text", "text": "Find the product. a red car"}, image_part],
        },  # paper B.3: prepended
    ]
    bodies = [ark.payload(entry.options, item) for item in batch]  # the batch's order
    expected = np.stack([np.asarray(fake_vector(b["input"], 2048), dtype=np.float32) for b in bodies])
    np.testing.assert_array_equal(vectors, expected)
    assert enc.api_stats()["requests"] == 3 and enc.api_stats()["reported_models"] == {ARK_MODEL: 3}


def test_an_input_the_api_cannot_take_is_one_line():
    options = {"model": ARK_MODEL, "encoding_format": "float", "dimensions": 2048}
    with pytest.raises(TriadError, match="neither text nor image"):
        ark.payload(options, ModelInput(""))
    with pytest.raises(TriadError, match="no format the API accepts"):
        ark.payload(options, ModelInput("x", b"not an image"))


# --- a run, its cache, --offline -------------------------------------------------------------------------------
def test_a_run_is_marked_not_reproducible_and_a_rerun_or_offline_run_requests_nothing(
    server, ark_dir, tmp_path, capsys, monkeypatch
):
    code, text = _run(capsys, ark_dir, tmp_path, "first")
    assert code == 0, text
    results = json.loads((tmp_path / "first" / "results.json").read_text())
    distinct = results["run"]["distinct_items"]
    assert len(server.requests) == distinct  # one request per distinct input
    assert results["reproducible"] is False
    assert results["model"]["revision"] == ARK_MODEL and results["model"]["options"]["model"] == ARK_MODEL
    api = results["api"]
    assert api["model_version"] == ARK_MODEL and api["provider"] == "volcengine-ark"
    assert api["endpoint"] == server.base("ark") and api["reported_models"] == {ARK_MODEL: distinct}
    assert api["responses_requested"] == distinct and api["requests"] == distinct and api["retries"] == 0

    # the embedding cache gone (--no-cache), the response cache still answers: no request
    code, text = _run(capsys, ark_dir, tmp_path, "again", "--no-cache")
    assert code == 0 and len(server.requests) == distinct, text
    assert _rankings(tmp_path / "first") == _rankings(tmp_path / "again")

    # --offline with the network unreachable: every connection attempt fails
    server.stop()

    def refuse(*args, **kwargs):
        raise OSError("network unreachable (test)")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    code, text = _run(capsys, ark_dir, tmp_path, "offline", "--no-cache", "--offline")
    assert code == 0, text
    offline = json.loads((tmp_path / "offline" / "results.json").read_text())
    assert offline["api"]["requests"] == 0 and offline["api"]["responses_cached"] == distinct
    assert offline["reproducible"] is False and offline["api"]["offline"] is True
    assert _rankings(tmp_path / "first") == _rankings(tmp_path / "offline")
    _no_key_anywhere(tmp_path, text=text)


def test_offline_with_an_incomplete_cache_is_one_line_saying_how_many(server, ark_dir, tmp_path, capsys):
    code, text = _run(capsys, ark_dir, tmp_path, "part", "--config", "calendar")
    assert code == 0, text
    before = len(server.requests)
    code, text = _run(capsys, ark_dir, tmp_path, "all", "--offline", "--no-cache")
    cached = json.loads((tmp_path / "part" / "results.json").read_text())["run"]["distinct_items"]
    line = _one_line(text)
    assert code == 2 and len(server.requests) == before, text
    assert "--offline" in line and "inputs to encode are not in its response cache" in line
    total = int(line.split(" of the ")[1].split()[0])  # every distinct input of both subtypes
    assert int(line.split("--offline, and ")[1].split()[0]) == total - cached > 0
    assert not (tmp_path / "all" / "results.json").exists()


def test_no_key_is_one_line_naming_the_variable(server, ark_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ARK_API_KEY")
    code, text = _run(capsys, ark_dir, tmp_path, "nokey")
    line = _one_line(text)
    assert code == 2 and "set ARK_API_KEY" in line and not server.requests


# --- failures: retried, or one clear line ----------------------------------------------------------------------
def test_rate_limiting_and_a_transient_500_are_retried(server, ark_dir, tmp_path, capsys):
    server.mode = "429-once"
    code, text = _run(capsys, ark_dir, tmp_path, "rl", "--config", "calendar")
    assert code == 0, text
    api = json.loads((tmp_path / "rl" / "results.json").read_text())["api"]
    n = api["responses_requested"]
    assert api["retries"] == n and api["status"] == {"200": n, "429": n} and len(server.requests) == 2 * n
    server.mode = "500-once"
    code, text = _run(capsys, ark_dir, tmp_path, "busy", "--config", "metro")
    api = json.loads((tmp_path / "busy" / "results.json").read_text())["api"]
    assert code == 0 and api["status"]["500"] == api["responses_requested"] > 0, text


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("429", r"HTTP 429: too many requests on all 6 attempts; lower the request rate or try later \(input"),
        ("500", r"HTTP 500: server busy on all 6 attempts \(input"),
        ("400", r"HTTP 400: image too small \(input"),  # not retried
        ("not-json", r"malformed response: not JSON \('<html>gateway error</html>'\) \(input"),
        ("no-embedding", r"malformed response: no data.embedding \(input"),
        ("wrong-size", r"returned a 2047-dimensional vector, expected 2048 \(dimensions\) \(input"),
        (
            "wrong-model",
            r"the response reports model 'doubao-embedding-vision-250615', not the requested "
            r"'doubao-embedding-vision-251215'",
        ),
        ("oversized", r"response larger than 4,194,304 bytes refused \(input"),
    ],
)
def test_each_failure_is_one_clear_line(server, ark_dir, tmp_path, capsys, mode, expected):
    server.mode = mode
    code, text = _run(capsys, ark_dir, tmp_path, "bad", "--config", "calendar")
    line = _one_line(text)
    assert code == 2, text
    assert line.startswith("triad run: error: model seed1.6-embedding: POST http://127.0.0.1:"), line
    assert re.search(expected, line), line
    assert not (tmp_path / "bad" / "results.json").exists()
    if mode == "400":
        assert len(server.requests) == len({json.dumps(b, sort_keys=True) for _, b, _ in server.requests})
    _no_key_anywhere(tmp_path, text=text)


# --- the rewriter -----------------------------------------------------------------------------------------------
def _rewrite(capsys, ark_dir: str, tmp_path: Path, out: str, *extra: str, rewriter: str = "gpt-5.2") -> tuple[int, str]:
    code = main(
        [
            "rewrite",
            "--rewriter",
            rewriter,
            "--data",
            ark_dir,
            "--out",
            str(tmp_path / out),
            "--api-cache",
            str(tmp_path / "api"),
            "--quiet",
            *extra,
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_api_rewriter_caches_responses_and_runs_offline(server, ark_dir, tmp_path, capsys, monkeypatch):
    code, text = _rewrite(capsys, ark_dir, tmp_path, "r.jsonl")
    assert code == 0, text
    rows = _lines(tmp_path / "r.jsonl")
    assert len(rows) == 10 and rows[0]["query_text"] == "explicit: find calendar thing number 0"
    body = server.requests[0][1]
    assert server.requests[0][0] == CHAT_PATH and set(body) == {"model", "messages"}  # the API's defaults
    assert body["model"] == "gpt-5.2" and body["messages"][0]["role"] == "user"
    assert body["messages"][0]["content"].startswith("Rewrite the following retrieval query")
    meta = json.loads((tmp_path / "r.jsonl.meta.json").read_text())
    assert meta["reproducible"] is False and meta["rewriter"]["revision"] == "gpt-5.2"
    assert meta["api"]["reported_models"] == {CHAT_REPORTED: 10} and meta["api"]["requests"] == 10

    # a run over these rewrites names their rewriter and is not reproducible either
    assert (
        main(
            [
                "run",
                "--model",
                "tiny-random-clip",
                "--data",
                ark_dir,
                "--rewrites",
                str(tmp_path / "r.jsonl"),
                "--out",
                str(tmp_path / "run"),
                "--no-cache",
                "--quiet",
                "--no-validate",
            ]
        )
        == 0
    )
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["reproducible"] is False and results["rewriter"]["identity"]["name"] == "gpt-5.2"
    capsys.readouterr()

    # a setting is a payload field and part of the key: --set temperature=0 requests again
    code, text = _rewrite(capsys, ark_dir, tmp_path, "t.jsonl", "--set", "temperature=0")
    assert code == 0 and len(server.requests) == 20 and server.requests[-1][1]["temperature"] == 0, text

    server.stop()
    monkeypatch.setattr(socket.socket, "connect", lambda *a, **k: (_ for _ in ()).throw(OSError("unreachable")))
    code, text = _rewrite(capsys, ark_dir, tmp_path, "o.jsonl", "--offline")
    assert code == 0 and _lines(tmp_path / "o.jsonl") == rows, text
    assert json.loads((tmp_path / "o.jsonl.meta.json").read_text())["api"]["requests"] == 0
    code, text = _rewrite(capsys, ark_dir, tmp_path, "x.jsonl", "--offline", "--set", "temperature=1")
    line = _one_line(text)
    assert code == 2 and "--offline, and 10 of the 10 queries are not in its response cache" in line
    _no_key_anywhere(tmp_path, text=text)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("429-once", None),
        (
            "500",
            r"model gpt-5.2: POST http://127.0.0.1:\d+/v1/chat/completions: HTTP 500: server busy on all 6 attempts",
        ),
        ("no-content", r"malformed response: no choices\[0\]\.message\.content text \(query 'find calendar thing"),
        ("not-json", r"malformed response: not JSON"),
    ],
)
def test_api_rewriter_failures(server, ark_dir, tmp_path, capsys, mode, expected):
    server.mode = mode
    code, text = _rewrite(capsys, ark_dir, tmp_path, "r.jsonl", "--subtype", "calendar", rewriter="api:gpt-5.2")
    if expected is None:
        assert code == 0 and len(_lines(tmp_path / "r.jsonl")) == 5 and len(server.requests) == 10, text
        return
    line = _one_line(text)
    assert code == 2 and re.search(expected, line), line
    assert not (tmp_path / "r.jsonl").exists()


def test_any_openai_compatible_model_by_name(server, ark_dir, tmp_path, capsys):
    code, text = _rewrite(capsys, ark_dir, tmp_path, "r.jsonl", "--subtype", "metro", rewriter="api:my-vllm-model")
    assert code == 0, text
    assert {body["model"] for _, body, _ in server.requests} == {"my-vllm-model"}
    assert json.loads((tmp_path / "r.jsonl.meta.json").read_text())["rewriter"]["name"] == "api:my-vllm-model"
