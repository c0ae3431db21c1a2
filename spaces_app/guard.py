"""Gradio's upload route, guarded: per-client request and byte budgets, a size cap per request, and only the file
types a run folder holds (``.parquet``, ``.json``, ``.zip``); anything else is deleted as soon as Gradio has
written it and the client gets a 4xx answer naming the rule."""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from spaces_app.identity import UPLOAD_SUFFIXES, Guards, Window, address_key, client_address

MULTIPART_SLACK = 64 * 1024  # form boundaries and part headers around the file bytes


def upload_dir() -> Path:
    """Where Gradio keeps uploaded files (GRADIO_TEMP_DIR, else <tmp>/gradio)."""
    import os

    return Path(os.environ.get("GRADIO_TEMP_DIR") or Path(tempfile.gettempdir()) / "gradio").resolve()


def remove_upload(path: str | Path) -> None:
    """Delete one uploaded file (and its now empty hash folder), only inside Gradio's upload folder."""
    p = Path(path).resolve()
    root = upload_dir()
    if root not in p.parents:
        return
    p.unlink(missing_ok=True)
    parent = p.parent
    if parent != root and parent.parent == root and not any(parent.iterdir()):
        shutil.rmtree(parent, ignore_errors=True)


class UploadGuard:
    """Pure ASGI middleware: every request but ``POST .../upload`` passes through untouched (no buffering of the
    queue's event streams)."""

    def __init__(self, app: Any, *, guards: Guards, secret: bytes, max_request_bytes: int) -> None:
        self.app = app
        self.guards, self.secret, self.max_request_bytes = guards, secret, max_request_bytes
        self.requests = Window(*guards.uploads)
        self.bytes = Window(*guards.upload_bytes)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST" \
                or not str(scope.get("path", "")).rstrip("/").endswith("/upload"):
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(Request(scope))
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        start: dict = {}
        chunks: list[bytes] = []

        async def capture(message: dict) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, capture)  # Gradio's upload, including its background copy into the cache
        body = b"".join(chunks)
        bad = self._bad_types(body) if start.get("status") == 200 else None
        if bad is not None:
            await bad(scope, receive, send)
            return
        await send(start)
        await send({"type": "http.response.body", "body": body})

    def _refusal(self, request: Request) -> Response | None:
        length = request.headers.get("content-length")
        if length is None or not length.isdigit():
            return PlainTextResponse("uploads must state their Content-Length", status_code=411)
        if int(length) > self.max_request_bytes + MULTIPART_SLACK:
            return PlainTextResponse(f"upload too large: at most {self.max_request_bytes} bytes per request",
                                     status_code=413)
        host = request.client.host if request.client else None
        key = address_key(client_address(host, request.headers, self.guards.trusted_proxies), self.secret)
        if not self.requests.take(key):
            return PlainTextResponse(f"too many uploads: at most {self.guards.uploads[0]} per "
                                     f"{self.guards.uploads[1]:.0f} s; try again later", status_code=429)
        if not self.bytes.take(key, int(length)):
            return PlainTextResponse(f"too many bytes uploaded: at most {self.guards.upload_bytes[0] // 2**20} MB per "
                                     f"{self.guards.upload_bytes[1]:.0f} s; try again later", status_code=429)
        return None

    def _bad_types(self, body: bytes) -> Response | None:
        """Delete every file of an upload that holds a file of another type; the answer names it."""
        try:
            paths = [str(p) for p in json.loads(body)]
        except (ValueError, TypeError):
            return None
        bad = [p for p in paths if not p.lower().endswith(UPLOAD_SUFFIXES)]
        if not bad:
            return None
        for p in paths:
            remove_upload(p)
        asyncio.get_running_loop().call_later(2.0, lambda: [remove_upload(p) for p in paths])  # a late copy
        return PlainTextResponse(f"{Path(bad[0]).name}: only {', '.join(UPLOAD_SUFFIXES)} files are accepted",
                                 status_code=415)
