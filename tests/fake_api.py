"""A fake API server on 127.0.0.1 for the API-model tests: Volcengine Ark's multimodal embeddings endpoint and an
OpenAI-compatible chat completions endpoint, with scripted failures. Use it as a context manager (the test that
starts it stops it):

    with FakeApi() as api:        # api.base("ark") -> "http://127.0.0.1:PORT/api/v3"
        api.mode = "429-once"     # ok | 429-once | 429 | 500-once | 500 | not-json | no-embedding | wrong-size |
                                  # oversized | wrong-model | no-content | 400
        ...
        api.requests              # every request: (path, payload, authorization header)

Vectors are deterministic: sha256 of the request's `input` parts, stretched to `dimensions` values in [-1, 1).
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

ARK_PATH = "/api/v3/embeddings/multimodal"
CHAT_PATH = "/v1/chat/completions"
ARK_MODEL = "doubao-embedding-vision-251215"
CHAT_REPORTED = "gpt-5.2-2025-12-11"


def fake_vector(parts: Any, dim: int) -> list[float]:
    """The fake embedding of a request's input parts (what the server returns)."""
    seed = int.from_bytes(hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).digest()[:8], "little")
    return np.random.default_rng(seed).uniform(-1, 1, dim).astype(np.float32).tolist()


class FakeApi:
    def __init__(self) -> None:
        self.mode = "ok"
        self.requests: list[tuple[str, dict[str, Any], str | None]] = []
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def base(self, which: str) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}" + ("/api/v3" if which == "ark" else "/v1")

    def __enter__(self) -> FakeApi:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with api._lock:
                    api.requests.append((self.path, body, self.headers.get("Authorization")))
                    first = json.dumps(body, sort_keys=True) not in api._seen
                    api._seen.add(json.dumps(body, sort_keys=True))
                api._answer(self, body, first)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=10)
            self._server = None

    def _send(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        payload: Any,
        *,
        raw: bytes | None = None,
        length: bool = True,
    ) -> None:
        data = raw if raw is not None else json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        if status in (429, 500, 503):
            handler.send_header("Retry-After", "0")
        if length:
            handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        try:
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client stopped reading (an oversized body): as it should
            handler.close_connection = True

    def _answer(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], first: bool) -> None:
        mode = self.mode
        if mode == "429" or (mode == "429-once" and first):
            return self._send(handler, 429, {"error": {"code": "RateLimitExceeded", "message": "too many requests"}})
        if mode == "500" or (mode == "500-once" and first):
            return self._send(handler, 500, {"error": {"code": "InternalServiceError", "message": "server busy"}})
        if mode == "400":
            return self._send(handler, 400, {"error": {"code": "InvalidParameter", "message": "image too small"}})
        if mode == "not-json":
            return self._send(handler, 200, None, raw=b"<html>gateway error</html>")
        if mode == "oversized":  # no Content-Length: the client must stop reading at its bound
            handler.close_connection = True
            return self._send(handler, 200, None, raw=b" " * (5 << 20), length=False)
        if handler.path == CHAT_PATH:
            return self._chat(handler, body, mode)
        dim = int(body.get("dimensions") or 2048)
        vec = fake_vector(body["input"], dim - 1 if mode == "wrong-size" else dim)
        data: dict[str, Any] = {} if mode == "no-embedding" else {"embedding": vec, "object": "embedding"}
        model = "doubao-embedding-vision-250615" if mode == "wrong-model" else body["model"]
        self._send(
            handler,
            200,
            {
                "id": "0217",
                "model": model,
                "created": 1768000000,
                "object": "list",
                "data": data,
                "usage": {"prompt_tokens": 20, "total_tokens": 20},
            },
        )
        return None

    def _chat(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], mode: str) -> None:
        prompt = body["messages"][-1]["content"]
        query = prompt.rsplit("Query: ", 1)[-1]
        message = {"role": "assistant", "content": None if mode == "no-content" else f"explicit: {query}"}
        self._send(
            handler,
            200,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": CHAT_REPORTED,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            },
        )
