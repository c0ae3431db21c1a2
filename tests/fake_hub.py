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

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None, head: bool = False) -> None:
                self.send_response(code)
                for k, v in {
                    "Content-Type": "application/json",
                    "Content-Length": str(len(body)),
                    **(headers or {}),
                }.items():
                    self.send_header(k, v)
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def _json(self, obj: Any, code: int = 200) -> None:
                self._send(code, json.dumps(obj).encode())

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def do_POST(self) -> None:  # noqa: N802
                parts = urlparse(self.path).path.strip("/").split("/")
                hub.requests.append(f"POST {self.path}")
                # /api/datasets/{org}/{name}/preupload/{rev} | /api/datasets/{org}/{name}/commit/{rev}
                repo, action = "/".join(parts[2:4]), parts[4]
                body = self._body()
                if action == "preupload":
                    files = json.loads(body)["files"]
                    self._json(
                        {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]}
                    )
                    return
                with hub.lock:
                    store = hub.repos.setdefault(repo, {})
                    for line in body.splitlines():
                        item = json.loads(line)
                        if item["key"] == "file":
                            store[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
                        elif item["key"] == "deletedFile":
                            if item["value"]["path"] not in store:
                                body = json.dumps({"error": "A file with this name doesn't exist"}).encode()
                                self._send(404, body, {"X-Error-Code": "EntryNotFound"})
                                return
                            del store[item["value"]["path"]]
                    hub.commits += 1
                    sha = hub.sha()
                self._json({"commitUrl": f"{hub.url}/datasets/{repo}/commit/{sha}", "commitOid": sha})

            def do_GET(self) -> None:  # noqa: N802
                self._get(head=False)

            def do_HEAD(self) -> None:  # noqa: N802
                self._get(head=True)

            def _get(self, head: bool) -> None:
                path = unquote(urlparse(self.path).path).strip("/")
                hub.requests.append(f"{'HEAD' if head else 'GET'} {self.path}")
                parts = path.split("/")
                if parts[:2] == ["api", "datasets"] and len(parts) > 4 and parts[4] == "tree":
                    store = hub.repos.get("/".join(parts[2:4]), {})
                    listing = [
                        {"type": "file", "path": p, "size": len(d), "oid": hashlib.sha1(d).hexdigest()}
                        for p, d in sorted(store.items())
                    ]
                    self._json(listing)
                    return
                if parts[0] == "datasets" and len(parts) > 5 and parts[3] == "resolve":
                    store = hub.repos.get("/".join(parts[1:3]), {})
                    name = "/".join(parts[5:])
                    if name not in store:
                        self._send(404, b"{}", {"X-Error-Code": "EntryNotFound"}, head)
                        return
                    data = store[name]
                    headers = {
                        "Content-Type": "application/octet-stream",
                        "ETag": f'"{hashlib.sha1(data).hexdigest()}"',
                        "X-Repo-Commit": hub.sha(),
                    }
                    self._send(200, data, headers, head)
                    return
                self._send(404, b"{}", {"X-Error-Code": "RepoNotFound"}, head)

        return Handler
