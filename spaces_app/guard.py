"""Gradio's upload route, guarded: per-client request and byte budgets, a size cap per request (and the body held
to its declared length), room on the disk checked before a byte is written, and only the file types a run folder
holds (``.parquet``, ``.json``, ``.zip``); anything else is deleted as soon as Gradio has written it and the client
gets a 4xx answer naming the rule. Gradio's other file-writing route (``/process_recording``, for video
recordings the app never takes) is closed, and its monitoring routes answer only to the admin token.

Uploaded files: a submission works on its own hard-linked copy (`claim_uploads`) and never removes the shared
upload, which another submission of identical bytes (Gradio keeps one file per content) may be claiming at the same
moment; `sweep` deletes shared uploads and leftovers by age, on the documented schedule."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from spaces_app.identity import UPLOAD_SUFFIXES, Guards, Window, address_key, client_address

MULTIPART_SLACK = 64 * 1024  # form boundaries and part headers around the file bytes
DISK_RESERVE = 256 * 2**20  # bytes left free on the upload disk (SQLite and the OS need room too)
UPLOAD_MAX_AGE_S = 600.0  # uploads never submitted are deleted after 10 minutes (docs/space.md)
TEMP_MAX_AGE_S = 120.0  # Gradio's temporary part files and empty files: a live upload writes to its file
SWEEP_EVERY_S = 60.0
CLAIMS = ".claims"  # per-submission copies of its uploads
ADMIN_HEADER = "x-admin-token"
CLOSED_ROUTES = ("/process_recording", "/gradio_api/process_recording")
ADMIN_ROUTES = ("/monitoring", "/gradio_api/monitoring")


def upload_dir() -> Path:
    """Where Gradio keeps uploaded files (GRADIO_TEMP_DIR, else <tmp>/gradio)."""
    import os

    return Path(os.environ.get("GRADIO_TEMP_DIR") or Path(tempfile.gettempdir()) / "gradio").resolve()


def remove_upload(path: str | Path) -> None:
    """Delete one uploaded file (and its hash folder once empty), only inside Gradio's upload folder; never raises
    (another submission of the same bytes may have removed either already)."""
    try:
        p = Path(path).resolve()
        root = upload_dir()
        if root not in p.parents:
            return
        p.unlink(missing_ok=True)
        if p.parent != root and p.parent.parent == root:
            p.parent.rmdir()  # only when empty
    except OSError:
        pass


def _remove_all(paths: list[str]) -> None:
    for p in paths:
        remove_upload(p)


class UploadGone(Exception):
    """An uploaded file is no longer on the server (consumed by another submission of the same bytes, or swept)."""


@contextlib.contextmanager
def claim_uploads(paths: Sequence[str | Path]) -> Iterator[list[str]]:
    """The uploads as this submission's own files: hard links (or copies) in a private folder, deleted on exit
    whatever happens. The shared upload stays for `sweep` to remove by age (a concurrent submission of the same
    bytes may be claiming that path). Paths outside Gradio's upload folder (the command line's run folders) are used
    as they are."""
    root = upload_dir()
    private = root / CLAIMS / uuid.uuid4().hex
    out: list[str] = []
    try:
        for i, path in enumerate(paths):
            p = Path(path).resolve()
            if root not in p.parents:
                out.append(str(path))
                continue
            target = private / str(i) / p.name
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                try:
                    os.link(p, target)
                except OSError:
                    shutil.copyfile(p, target)
            except FileNotFoundError:
                raise UploadGone(p.name) from None
            out.append(str(target))
        yield out
    finally:
        shutil.rmtree(private, ignore_errors=True)


def sweep(
    root: Path | None = None,
    now: float | None = None,
    *,
    max_age: float = UPLOAD_MAX_AGE_S,
    temp_age: float = TEMP_MAX_AGE_S,
) -> int:
    """Delete uploads older than ``max_age`` and Gradio's temporary or empty files older than ``temp_age``; returns
    how many files went. Safe to run while uploads and submissions are in progress (younger files are kept)."""
    root = root or upload_dir()
    now = time.time() if now is None else now
    removed = 0
    if not root.is_dir():
        return 0
    for path in sorted(root.rglob("*"), key=lambda p: -len(p.parts)):  # files before their folders
        try:
            info = path.lstat()
            age = now - info.st_mtime
            if path.is_dir():
                if path != root and path.name != CLAIMS and age > temp_age and not any(path.iterdir()):
                    path.rmdir()
                continue
            temporary = path.parent == root or info.st_size == 0
            limit = 6 * max_age if CLAIMS in path.relative_to(root).parts else temp_age if temporary else max_age
            if age > limit:
                path.unlink()
                removed += 1
        except OSError:
            continue
    return removed


class Sweeper(threading.Thread):
    """`sweep` every `SWEEP_EVERY_S` seconds until stopped."""

    def __init__(self, every: float = SWEEP_EVERY_S) -> None:
        super().__init__(name="upload-sweeper", daemon=True)
        self.every, self.stopped = every, threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.every):
            sweep()

    def stop(self) -> None:
        self.stopped.set()


def disk_free(path: Path) -> int:
    """Free bytes on the disk holding ``path`` (a function, so tests can stand in for a full disk)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return shutil.disk_usage(path).free


class UploadGuard:
    """Pure ASGI middleware: every request but ``POST .../upload`` passes through untouched (no buffering of the
    queue's event streams)."""

    def __init__(
        self, app: Any, *, guards: Guards, secret: bytes, max_request_bytes: int, admin_token: str | None = None
    ) -> None:
        self.app = app
        self.guards, self.secret, self.max_request_bytes = guards, secret, max_request_bytes
        self.admin_token = admin_token
        self.requests = Window(*guards.uploads)
        self.bytes = Window(*guards.upload_bytes)
        self._reserved = 0  # bytes of uploads in flight (their room on the disk is taken already)
        self._lock = threading.Lock()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        path = str(scope.get("path", "")).rstrip("/")
        if scope.get("type") == "http" and path.startswith(CLOSED_ROUTES):
            await PlainTextResponse("not available on this server", status_code=404)(scope, receive, send)
            return
        if scope.get("type") == "http" and path.startswith(ADMIN_ROUTES) and not self._admin(scope):
            await PlainTextResponse("monitoring needs the admin token", status_code=403)(scope, receive, send)
            return
        if scope.get("type") != "http" or scope.get("method") != "POST" or not path.endswith("/upload"):
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(Request(scope))
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        length = int(Request(scope).headers["content-length"])
        with self._lock:
            full = disk_free(upload_dir()) - self._reserved - length < DISK_RESERVE
            if not full:
                self._reserved += length
        if full:
            await PlainTextResponse(
                "the server's storage is full; nothing was written, try again later", status_code=507
            )(scope, receive, send)
            return
        try:
            await self._upload(scope, _bounded(receive, length + MULTIPART_SLACK), send)
        finally:
            with self._lock:
                self._reserved -= length

    def _admin(self, scope: dict) -> bool:
        given = Request(scope).headers.get(ADMIN_HEADER) or ""
        return bool(self.admin_token) and hmac.compare_digest(given.encode(), str(self.admin_token).encode())

    async def _upload(self, scope: dict, receive: Any, send: Any) -> None:
        start: dict = {}
        chunks: list[bytes] = []

        async def capture(message: dict) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        try:
            await self.app(scope, receive, capture)  # Gradio's upload, including its background copy into the cache
        except OSError:  # the disk filled while writing: Gradio's part file is removed by `sweep`
            await PlainTextResponse("the server's storage is full; nothing was kept, try again later", status_code=507)(
                scope, receive, send
            )
            return
        body = b"".join(chunks)
        bad = self._bad_types(body) if start.get("status") == 200 else None
        if bad is not None:
            await bad(scope, receive, send)
            return
        await send(start)
        await send({"type": "http.response.body", "body": body})

    def _refusal(self, request: Request) -> Response | None:
        """Refusals decided from the headers alone (length, size, the client's budgets)."""
        length = request.headers.get("content-length")
        if length is None or not length.isdigit():
            return PlainTextResponse("uploads must state their Content-Length", status_code=411)
        if int(length) > self.max_request_bytes + MULTIPART_SLACK:
            return PlainTextResponse(
                f"upload too large: at most {self.max_request_bytes} bytes per request", status_code=413
            )
        host = request.client.host if request.client else None
        key = address_key(client_address(host, request.headers, self.guards.trusted_proxies), self.secret)
        if not self.requests.take(key):
            return PlainTextResponse(
                f"too many uploads: at most {self.guards.uploads[0]} per "
                f"{self.guards.uploads[1]:.0f} s; try again later",
                status_code=429,
            )
        if not self.bytes.take(key, int(length)):
            return PlainTextResponse(
                f"too many bytes uploaded: at most {self.guards.upload_bytes[0] // 2**20} MB per "
                f"{self.guards.upload_bytes[1]:.0f} s; try again later",
                status_code=429,
            )
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
        asyncio.get_running_loop().call_later(2.0, _remove_all, paths)  # a late copy
        return PlainTextResponse(
            f"{Path(bad[0]).name}: only {', '.join(UPLOAD_SUFFIXES)} files are accepted", status_code=415
        )


def _bounded(receive: Any, limit: int) -> Any:
    """``receive`` that ends the request (as a disconnect) once its body exceeds ``limit`` bytes: a client cannot
    send more than the Content-Length it declared (plus the multipart slack)."""
    seen = [0]

    async def wrapped() -> dict:
        message = await receive()
        if message.get("type") == "http.request":
            seen[0] += len(message.get("body", b""))
            if seen[0] > limit:
                return {"type": "http.disconnect"}
        return message

    return wrapped
