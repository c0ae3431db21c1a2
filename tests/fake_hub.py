"""A stand-in for the Hugging Face Hub's dataset-repo API on 127.0.0.1, enough for huggingface_hub's own client:
`HfApi.upload_file` / `delete_file` (preupload, then an ndjson commit of regular files), `list_repo_files` (the
tree listing) and `hf_hub_download` (HEAD and GET of `resolve`). Point the client at it with HF_ENDPOINT."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlparse


class FakeHub:
    """Dataset repos held in memory: repo id -> path -> bytes; started with `start`, stopped with `stop`."""

    def __init__(self) -> None:
        self.repos: dict[str, dict[str, bytes]] = {}
        self.commits = 0
        self.requests: list[str] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FakeHub:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def sha(self) -> str:
        return hashlib.sha1(str(self.commits).encode()).hexdigest()

    def answer_post(self, path: str, body: bytes) -> tuple[int, bytes, dict[str, str]]:
        """/api/datasets/{org}/{name}/preupload/{rev} and /api/datasets/{org}/{name}/commit/{rev}."""
        parts = urlparse(path).path.strip("/").split("/")
        repo, action = "/".join(parts[2:4]), parts[4]
        if action == "preupload":
            files = json.loads(body)["files"]
            listed = [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]
            return 200, json.dumps({"files": listed}).encode(), {}
        with self.lock:
            store = dict(self.repos.get(repo, {}))
            for line in body.splitlines():
                item = json.loads(line)
                if item["key"] == "file":
                    store[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
                elif item["key"] == "deletedFile" and store.pop(item["value"]["path"], None) is None:
                    missing = json.dumps({"error": "A file with this name doesn't exist"}).encode()
                    return 404, missing, {"X-Error-Code": "EntryNotFound"}
            self.repos[repo] = store
            self.commits += 1
            sha = self.sha()
        return 200, json.dumps({"commitUrl": f"{self.url}/datasets/{repo}/commit/{sha}", "commitOid": sha}).encode(), {}

    def answer_get(self, path: str) -> tuple[int, bytes, dict[str, str]]:
        """The tree listing (/api/datasets/{org}/{name}/tree/{rev}) and a file (/datasets/{org}/{name}/resolve/...)."""
        parts = unquote(urlparse(path).path).strip("/").split("/")
        with self.lock:
            if parts[:2] == ["api", "datasets"] and len(parts) > 4 and parts[4] == "tree":
                store = self.repos.get("/".join(parts[2:4]), {})
                listing = [
                    {"type": "file", "path": p, "size": len(d), "oid": hashlib.sha1(d).hexdigest()}
                    for p, d in sorted(store.items())
                ]
                return 200, json.dumps(listing).encode(), {}
            if parts[0] == "datasets" and len(parts) > 5 and parts[3] == "resolve":
                data = self.repos.get("/".join(parts[1:3]), {}).get("/".join(parts[5:]))
                if data is None:
                    return 404, b"{}", {"X-Error-Code": "EntryNotFound"}
                etag = f'"{hashlib.sha1(data).hexdigest()}"'
                return (
                    200,
                    data,
                    {"Content-Type": "application/octet-stream", "ETag": etag, "X-Repo-Commit": self.sha()},
                )
        return 404, b"{}", {"X-Error-Code": "RepoNotFound"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, answer: tuple[int, bytes, dict[str, str]], head: bool = False) -> None:
                code, body, headers = answer
                self.send_response(code)
                for k, v in {"Content-Type": "application/json", "Content-Length": str(len(body)), **headers}.items():
                    self.send_header(k, v)
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def do_POST(self) -> None:  # noqa: N802
                hub.requests.append(f"POST {self.path}")
                self._send(hub.answer_post(self.path, self.rfile.read(int(self.headers.get("Content-Length") or 0))))

            def do_GET(self) -> None:  # noqa: N802
                hub.requests.append(f"GET {self.path}")
                self._send(hub.answer_get(self.path))

            def do_HEAD(self) -> None:  # noqa: N802
                hub.requests.append(f"HEAD {self.path}")
                self._send(hub.answer_get(self.path), head=True)

        return Handler
