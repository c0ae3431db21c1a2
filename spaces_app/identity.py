"""Who is asking, and how often: the submitter identity, the rate limits and the upload guard.

Identity (never forgeable by a header alone): the logged-in Hugging Face user when the Space runs with OAuth
(``hf_oauth: true`` in its card; Gradio's ``gr.LoginButton``), else the connection's address. ``X-Forwarded-For``
is read only when ``TRIAD_SPACE_TRUSTED_PROXIES=N`` says N reverse proxies stand in front of the server, and then
the address N entries from the right is taken — the one the nearest trusted proxy saw connecting (the usual
reverse-proxy convention); any entry a client adds on the left is ignored. Addresses are stored and compared only
as keyed hashes (``ip:<16 hex>``) and never shown.

A local board (no login configured) has one local owner, ``local``: the command line (`triad space --submit`), the
demo's seeding and a browser on this machine (a loopback peer with no proxy in front) are the same person, so none
of them is refused a name or a resubmission because another of them made it first.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from triad_dataset.contract.errors import TriadError

USER_PREFIX, ADDRESS_PREFIX = "hf:", "ip:"
LOCAL = "local"  # the operator's own submissions on a board without login (CLI, demo, a browser on this machine)
_LOCAL_ALIASES = ("local", "cli", "demo")  # "cli" / "demo": how earlier versions stored the operator's submissions
_LOOPBACK = ("127.", "::1", "localhost")
UPLOAD_SUFFIXES = (".parquet", ".json", ".zip")  # what a `triad run` folder holds (CONTRACTS §3)


def _rate(var: str, default: str) -> tuple[int, float]:
    raw = (os.environ.get(var) or default).strip()
    m = re.fullmatch(r"(\d+)\s*/\s*(\d+(?:\.\d+)?)", raw)
    if m is None:
        raise TriadError(f"{var}={raw!r}: expected N/SECONDS, e.g. {default}")
    return int(m.group(1)), float(m.group(2))


@dataclass(frozen=True)
class Guards:
    """Limits on anonymous traffic (env: TRIAD_SPACE_TRUSTED_PROXIES, TRIAD_SPACE_UPLOAD_LIMIT "N/SECONDS",
    TRIAD_SPACE_UPLOAD_MB "MB/SECONDS", TRIAD_SPACE_ADMIN_LIMIT "N/SECONDS" of wrong tokens)."""

    trusted_proxies: int = 0
    uploads: tuple[int, float] = (200, 3600.0)  # upload requests per client
    upload_bytes: tuple[int, float] = (1024 * 2**20, 3600.0)  # bytes uploaded per client
    admin_failures: tuple[int, float] = (5, 900.0)  # wrong admin tokens per client before it is locked out

    @classmethod
    def from_env(cls) -> Guards:
        raw = (os.environ.get("TRIAD_SPACE_TRUSTED_PROXIES") or "0").strip()
        if not raw.isdigit():
            raise TriadError(f"TRIAD_SPACE_TRUSTED_PROXIES={raw!r}: expected a number of proxies (0, 1, 2, ...)")
        mb, window = _rate("TRIAD_SPACE_UPLOAD_MB", "1024/3600")
        return cls(
            int(raw),
            _rate("TRIAD_SPACE_UPLOAD_LIMIT", "200/3600"),
            (mb * 2**20, window),
            _rate("TRIAD_SPACE_ADMIN_LIMIT", "5/900"),
        )


def client_address(peer: str | None, headers: Mapping[str, str], trusted_proxies: int) -> str:
    """The client's address: the TCP peer, or with N trusted proxies the N-th ``X-Forwarded-For`` entry from the
    right (falling back to the peer when the header is shorter than the proxy chain).

    >>> client_address("10.0.0.2", {"x-forwarded-for": "6.6.6.6, 1.2.3.4"}, 0)
    '10.0.0.2'
    >>> client_address("10.0.0.2", {"x-forwarded-for": "6.6.6.6, 1.2.3.4"}, 1)
    '1.2.3.4'
    """
    peer = peer or "unknown"
    if trusted_proxies <= 0:
        return peer
    hops = [h.strip() for h in (headers.get("x-forwarded-for") or "").split(",") if h.strip()]
    return hops[-trusted_proxies] if len(hops) >= trusted_proxies else peer


def address_key(address: str, secret: bytes) -> str:
    return ADDRESS_PREFIX + hmac.new(secret, address.encode(), hashlib.sha256).hexdigest()[:16]


def user_key(username: str) -> str:
    return USER_PREFIX + username


def shown(submitter: str) -> str:
    """What the tables show for a stored submitter: the Hub user name, else 'anonymous' (addresses never)."""
    for prefix in (USER_PREFIX, "user:"):  # "user:" is how schema-1 databases stored Hub users
        if submitter.startswith(prefix):
            return submitter[len(prefix) :]
    if submitter.startswith(ADDRESS_PREFIX) or not submitter:
        return "anonymous"
    return submitter  # set by the operator on the command line ("local"; earlier "cli", "demo")


def name_owner(submitter: str) -> str | None:
    """Who a submission's name belongs to: the Hub user, or the local owner; an anonymous remote client (a hashed
    address) owns no name, so it can never block a name for anyone else.

    >>> name_owner("hf:alice"), name_owner("cli"), name_owner("demo"), name_owner("ip:0123456789abcdef")
    ('hf:alice', 'local', 'local', None)
    """
    if submitter.startswith(USER_PREFIX):
        return submitter
    if submitter in _LOCAL_ALIASES:
        return LOCAL
    return None


def is_local(peer: str | None, trusted_proxies: int) -> bool:
    """A request from this machine: a loopback TCP peer with no reverse proxy in front (behind a proxy the peer is
    the proxy, so nobody is local)."""
    return trusted_proxies <= 0 and bool(peer) and str(peer).startswith(_LOOPBACK)


def request_key(
    request: Any, secret: bytes, trusted_proxies: int, username: str | None = None, *, local_owner: bool = False
) -> str:
    """The rate-limit / ownership key of a Gradio or Starlette request; ``local_owner`` (a board without login):
    a request from this machine is the local owner."""
    if username:
        return user_key(username)
    if request is None:
        return "anonymous"
    client = getattr(request, "client", None)
    peer = getattr(client, "host", None)
    if local_owner and is_local(peer, trusted_proxies):
        return LOCAL
    headers = getattr(request, "headers", None) or {}
    return address_key(client_address(peer, headers, trusted_proxies), secret)


class Window:
    """Events per key in a sliding time window, in memory (one server process); thread-safe."""

    def __init__(self, limit: int, window_s: float) -> None:
        self.limit, self.window_s = limit, window_s
        self._events: dict[str, deque[tuple[float, int]]] = {}
        self._lock = threading.Lock()

    def take(self, key: str, amount: int = 1, now: float | None = None) -> bool:
        """Count ``amount`` for ``key`` if that stays within the limit; False (nothing counted) otherwise."""
        now = time.monotonic() if now is None else now
        with self._lock:
            q = self._events.setdefault(key, deque())
            while q and q[0][0] <= now - self.window_s:
                q.popleft()
            if sum(a for _, a in q) + amount > self.limit:
                return False
            q.append((now, amount))
            if len(self._events) > 10_000:  # forget idle keys so the table stays small
                self._events = {k: v for k, v in self._events.items() if v and v[-1][0] > now - self.window_s}
            return True
