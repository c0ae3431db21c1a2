"""Sends JSON over HTTP for the API-only models: the embedder in `families.api`, the rewriter in `captioners.api`.

- The key comes from the environment variable the provider names and goes into the Authorization header only. No
  identity, cache, result or message ever holds it: `redact` is applied to every message built from a response.
- Concurrency is bounded by `Transport.concurrency` requests in flight. A 429, any 5xx, a timeout or a dropped
  connection is retried with exponential backoff, or after the server's Retry-After, capped. Any other 4xx is not.
- Memory is bounded: a response body larger than `Transport.max_response_bytes` is refused, by its Content-Length
  first, then by the bytes actually read. An error body is read up to 64 KiB.
- Every failure is one `TriadError` line: the model, the URL, what went wrong, the input it was for.

It uses plain `urllib`, with no dependency. Loopback URLs bypass any proxy set in the environment.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
import urllib.error
import urllib.parse
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Final

from triad_dataset.contract.errors import TriadError

ERROR_BODY_BYTES: Final = 64 << 10
RETRY_STATUS: Final = frozenset({408, 429})  # plus every 5xx
LOOPBACK: Final = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class Transport:
    """How requests are sent: none of this changes a response, so none of it is part of an identity."""

    timeout_s: float = 120.0
    max_retries: int = 5  # attempts = 1 + max_retries
    initial_backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    max_response_bytes: int = 4 << 20
    concurrency: int = 8


@dataclass(frozen=True)
class Provider:
    """An API provider: its base URL, the endpoint's path, the variable holding the key, and the transport settings.

    `base_url_env` names the variable that overrides the base URL, for a gateway or another region.
    """

    name: str
    base_url: str
    path: str
    key_env: str
    base_url_env: str
    transport: Transport = field(default_factory=Transport)

    def endpoint(self) -> str:
        """The base URL requests go to (recorded in the identity: another endpoint is another cache)."""
        return (os.environ.get(self.base_url_env) or self.base_url).rstrip("/")


PROVIDERS: Final[dict[str, Provider]] = {
    # Volcengine Ark (ByteDance): POST {base}/embeddings/multimodal (volcengine-python-sdk, resources/multimodal_embeddings.py)
    "volcengine-ark": Provider(
        "volcengine-ark",
        "https://ark.cn-beijing.volces.com/api/v3",
        "/embeddings/multimodal",
        "ARK_API_KEY",
        "ARK_BASE_URL",
    ),
    # OpenAI and OpenAI-compatible servers (vLLM, gateways): POST {base}/chat/completions
    "openai": Provider("openai", "https://api.openai.com/v1", "/chat/completions", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
}


def provider(name: str) -> Provider:
    found = PROVIDERS.get(name)
    if found is None:
        raise TriadError(f"unknown API provider {name!r}; valid: {', '.join(PROVIDERS)}")
    return found


@dataclass
class CallStats:
    requests: int = 0  # HTTP attempts
    retries: int = 0
    status: Counter[str] = field(default_factory=Counter)  # outcome of every attempt ("200", "429", "timeout", ...)

    def to_json(self) -> dict[str, Any]:
        return {"requests": self.requests, "retries": self.retries, "status": dict(sorted(self.status.items()))}


class _Retry(Exception):  # noqa: N818
    def __init__(self, reason: str, outcome: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.reason, self.outcome, self.wait = reason, outcome, wait


class JsonClient:
    """POST JSON payloads to one URL with the key from the environment; `label` names the model in messages."""

    def __init__(self, url: str, key: str | None, transport: Transport, label: str) -> None:
        self.url, self.transport, self.label = url, transport, label
        self._key = key
        self.stats = CallStats()
        self._lock = threading.Lock()
        from urllib.request import ProxyHandler, build_opener  # imports ssl: only once an API model runs

        host = urllib.parse.urlsplit(url).hostname or ""
        handlers = [ProxyHandler({})] if host in LOOPBACK else []
        self._opener = build_opener(*handlers)

    def redact(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    def fail(self, what: str, reason: str) -> TriadError:
        return TriadError(self.redact(f"model {self.label}: POST {self.url}: {reason} ({what})"))

    def _count(self, outcome: str, retry: bool = False) -> None:
        with self._lock:
            self.stats.requests += 1
            self.stats.retries += int(retry)
            self.stats.status[outcome] += 1

    def _attempt(self, body: bytes) -> Any:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        from urllib.request import Request

        request = Request(self.url, data=body, headers=headers, method="POST")
        limit = self.transport.max_response_bytes
        try:
            with self._opener.open(request, timeout=self.transport.timeout_s) as response:
                length = response.headers.get("Content-Length")
                if length and length.isdigit() and int(length) > limit:
                    self._count("too large")
                    raise ValueError(f"response of {int(length):,} bytes refused (limit {limit:,})")
                data = response.read(limit + 1)
        except urllib.error.HTTPError as exc:
            detail = _error_detail(exc.read(ERROR_BODY_BYTES))
            if exc.code in RETRY_STATUS or exc.code >= 500:
                raise _Retry(
                    f"HTTP {exc.code}{detail}", str(exc.code), _retry_after(exc.headers.get("Retry-After"))
                ) from exc
            self._count(str(exc.code))
            raise ValueError(f"HTTP {exc.code}{detail}") from exc
        except TimeoutError as exc:
            raise _Retry("timed out", "timeout") from exc
        except (urllib.error.URLError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise _Retry(f"connection failed ({reason})", "connection") from exc
        if len(data) > limit:
            self._count("too large")
            raise ValueError(f"response larger than {limit:,} bytes refused")
        self._count("200")
        try:
            return json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"malformed response: not JSON ({_preview(data)})") from exc

    def post(self, payload: dict[str, Any], what: str) -> Any:
        """The parsed JSON response to one payload, retried as the transport says; failures are one line."""
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        attempts = 1 + self.transport.max_retries
        for attempt in range(attempts):
            try:
                return self._attempt(body)
            except _Retry as exc:
                self._count(exc.outcome, retry=attempt + 1 < attempts)
                if attempt + 1 == attempts:
                    hint = "; lower the request rate or try later" if exc.reason.startswith("HTTP 429") else ""
                    raise self.fail(what, f"{exc.reason} on all {attempts} attempts{hint}") from exc
                backoff = min(self.transport.max_backoff_s, self.transport.initial_backoff_s * 2**attempt)
                jittered = backoff * (0.5 + random.random() / 2)
                time.sleep(jittered if exc.wait is None else min(exc.wait, self.transport.max_backoff_s))
            except ValueError as exc:
                raise self.fail(what, str(exc)) from exc
        raise AssertionError("unreachable")

    def post_all(
        self, payloads: Sequence[dict[str, Any]], whats: Sequence[str], parse: Callable[[Any, str], Any]
    ) -> list[Any]:
        """Return `parse(response, what)` of each payload's response, in payload order.

        `Transport.concurrency` requests run at a time. A payload that failed gives its `TriadError` in its place, and
        the caller keeps the others.
        """

        def one(i: int) -> Any:
            try:
                return parse(self.post(payloads[i], whats[i]), whats[i])
            except TriadError as exc:
                return TriadError(self.redact(str(exc)))

        workers = max(1, min(self.transport.concurrency, len(payloads)))
        if workers == 1:
            return [one(i) for i in range(len(payloads))]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="triad-api") as pool:
            return list(pool.map(one, range(len(payloads))))


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to the backoff


def _preview(data: bytes, n: int = 120) -> str:
    text = data[:n].decode("utf-8", "replace").replace("\n", " ")
    return repr(text + ("…" if len(data) > n else ""))


def _error_detail(data: bytes) -> str:
    """': <the API's error message>' from an error body (OpenAI / Ark shape {"error": {"message"}}), else its start."""
    try:
        obj = json.loads(data)
        message = obj.get("error", {}).get("message") if isinstance(obj.get("error"), dict) else obj.get("message")
        if isinstance(message, str) and message:
            return f": {message[:300]}"
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        pass
    return f": {_preview(data)}" if data else ""


def api_key(p: Provider) -> str | None:
    """The key from the provider's environment variable (None when unset or empty)."""
    return os.environ.get(p.key_env) or None


def connect(p: Provider, base_url: str, label: str, missing: str) -> JsonClient:
    """Return a client of the provider's endpoint under `base_url`, with the key from its environment variable.

    Without a key, one line says what needs requesting, `missing`, and which variable to set.
    """
    key = api_key(p)
    if key is None:
        raise TriadError(
            f"{label}: {missing}; set {p.key_env} (the {p.name} API key) to request them, or give "
            "--api-cache the folder that holds them"
        )
    return JsonClient(base_url + p.path, key, p.transport, label.split(" ", 1)[-1])


class LazyClient:
    """Connects to a provider's endpoint on the first request, so that a run served from its cache needs no key.

    Args:
        p: the provider.
        base_url: the endpoint the requests go to.
        label: how messages name the model, e.g. "model seed1.6-embedding".
    """

    def __init__(self, p: Provider, base_url: str, label: str) -> None:
        self.provider, self.base_url, self.label = p, base_url, label
        self.client: JsonClient | None = None

    def get(self, missing: str) -> JsonClient:
        """Return the client, connected now if it is not yet. `missing` says what needs requesting without a key."""
        if self.client is None:
            self.client = connect(self.provider, self.base_url, self.label, missing)
        return self.client

    def stats(self) -> dict[str, Any]:
        """Return the calls made so far as `CallStats.to_json` writes them, zeros before the first request."""
        if self.client is None:
            return {"requests": 0, "retries": 0, "status": {}}
        return self.client.stats.to_json()


def raise_failures(results: Sequence[Any], what: str) -> None:
    """Raise the first `TriadError` among `post_all`'s results (saying how many more of the batch failed)."""
    failed = [r for r in results if isinstance(r, TriadError)]
    if failed:
        more = f" (and {len(failed) - 1} more {what} of this batch failed)" if len(failed) > 1 else ""
        raise TriadError(f"{failed[0]}{more}")
