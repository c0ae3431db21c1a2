"""The Space's leaderboard state: its database, the gold it serves, its limits, and the reads the views make.

One `Leaderboard` per app; the tab handlers (spaces_app/handlers.py) and the API endpoints (spaces_app/api.py) are
functions of it.
"""

from __future__ import annotations

import threading
import time
import types
from collections.abc import Callable, Sequence
from typing import Any

import gradio as gr

from spaces_app import chance, identity, legend, mirror, status, verify
from spaces_app.db import Database
from spaces_app.gold import GoldStore
from spaces_app.identity import Guards
from spaces_app.settings import Settings
from spaces_app.uploads import Limits
from spaces_app.worker import VerifyQueue

DRAIN_S = 120.0  # on SIGTERM, how long in-flight submissions may take to finish before the server exits


class Leaderboard:
    """Reads for the views; one instance per app."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.db = Database(settings.db_path)
        self.golds = GoldStore({"triad": settings.triad_dir, "ark": settings.ark_dir})
        self.limits = Limits.from_env()
        self.guards = Guards.from_env()
        self.plausibility = status.Plausibility.from_env()
        self.secret = self.db.secret()
        self._lock = threading.Lock()
        self._cache: dict[tuple, list[dict[str, Any]]] = {}
        self.queue: VerifyQueue | None = None  # the reproduction checks on this server's CPU (started by launch)
        self.mirror: mirror.Mirror | None = None  # uploads every change (started by launch when configured)
        self.draining = threading.Event()  # SIGTERM: finish what runs, take nothing new
        self._inflight = 0
        self._idle = threading.Condition()
        self._chance: dict[tuple, dict[str, float]] = {}
        for bench in self.golds.available():  # read the gold once at start-up
            self.golds.get(bench)

    def bind(self, handler: Callable[..., Any]) -> Callable[..., Any]:
        """``handler(lb, ...)`` bound to this state: Gradio sees its name, its hints and its signature without lb."""
        return types.MethodType(handler, self)

    def fingerprint(self, bench: str) -> str | None:
        return self.golds.get(bench).fingerprint if bench in self.golds.available() else None

    def chance(self, bench: str, axis: str | None = None) -> dict[str, float]:
        """Chance level per config (TRIAD mAP, ARK R@1; per ARK domain / reasoning skill with ``axis``) of the gold
        now served, computed once per gold fingerprint (spaces_app/chance.py)."""
        fp = self.fingerprint(bench)
        if fp is None:
            return {}
        key = (bench, axis, fp)
        with self._lock:
            hit = self._chance.get(key)
        if hit is None:
            gold = self.golds.get(bench)
            if bench == "triad":
                hit = chance.triad_chance(gold)
            else:
                hit = chance.ark_chance_by(gold, axis) if axis else chance.ark_chance(gold)
            with self._lock:
                self._chance[key] = hit
        return hit

    def card(self) -> str:
        """The served TRIAD gold folder's dataset card (README.md without its YAML header); "" when it has none."""
        path = self.golds.available().get("triad")
        try:
            return legend.card_markdown((path / "README.md").read_text(encoding="utf-8")) if path else ""
        except OSError:
            return ""

    def content(self, bench: str) -> str | None:
        return self.golds.get(bench).content if bench in self.golds.available() else None

    def all_subs(self, bench: str, *, include_hidden: bool = False) -> list[dict[str, Any]]:
        """Every visible submission of a benchmark, whatever gold it was scored on; cached until the database
        revision changes."""
        if bench not in self.golds.available():
            return []
        key = (bench, include_hidden, self.db.revision())
        with self._lock:
            hit = self._cache.get(key)
        if hit is None:
            hit = self.db.submissions(bench, include_hidden=include_hidden)
            with self._lock:
                self._cache = {k: val for k, val in self._cache.items() if k[2] == key[2]}
                self._cache[key] = hit
        return hit

    def annotations(self, bench: str, configs: Sequence[str]) -> dict[int, dict[str, Any]]:
        return status.annotate(
            self.all_subs(bench),
            configs,
            self.content(bench),
            self.fingerprint(bench),
            self.plausibility,
            self.chance(bench),
        )

    def board(self, bench: str, configs: Sequence[str], *, every_row: bool = False) -> list[dict[str, Any]]:
        """The rows a table lists: failed rows only with ``every_row``; older-gold rows listed (marked)."""
        notes = self.annotations(bench, configs)
        return [s for s in self.all_subs(bench) if every_row or notes[int(s["id"])]["status"] != verify.FAILED]

    def subs(self, bench: str, *, verified_only: bool = False) -> list[dict[str, Any]]:
        """Rows scored on the gold served now, failed ones left out (what comparisons and ranks are made of)."""
        content, fp = self.content(bench), self.fingerprint(bench)
        out = [s for s in self.all_subs(bench) if status.current(s, content, fp) and s.get("status") != verify.FAILED]
        return [s for s in out if s.get("status") == verify.VERIFIED] if verified_only else out

    def by_id(self, sid: Any, bench: str = "triad") -> dict[str, Any] | None:
        try:
            sid = int(sid)
        except (TypeError, ValueError):
            return None
        return next((s for s in self.all_subs(bench) if s["id"] == sid), None)

    def choices(self, bench: str) -> list[tuple[str, int]]:
        return [(f"{s['id']}: {s['model_name']}", int(s["id"])) for s in self.subs(bench)]

    def requestable(self) -> list[str]:
        """Registry models the leaderboard may be asked to run itself (not the test models, not API models)."""
        try:
            from model_adapters.models.catalog import status as entry_status
            from model_adapters.models.registry import entry_names, get_entry
        except ImportError:
            return []
        entries = [get_entry(name) for name in entry_names()]
        return [e.name for e in entries if not e.random_init and entry_status(e) not in ("API", "refused")]

    def status_line(self) -> str:
        """Gold fingerprints and counts for the About tab (no server paths: this goes to every visitor)."""
        parts = []
        for bench in ("triad", "ark"):
            fp = self.fingerprint(bench)
            parts.append(
                f"{bench.upper()} gold: "
                + (f"dataset {fp[:12]}, {len(self.subs(bench))} visible submissions" if fp else "not served")
            )
        return "\n".join(parts + [mirror.status()])

    def who(self, request: gr.Request | None, profile: Any = None) -> str:
        """The identity key of a request: the Hub user when logged in, the local owner for this machine on a board
        without login, else the (hashed) client address."""
        username = getattr(profile, "username", None) if profile is not None else None
        return identity.request_key(
            request, self.secret, self.guards.trusted_proxies, username, local_owner=not self.settings.oauth
        )

    def admin_locked(self, who: str) -> bool:
        limit, window = self.guards.admin_failures
        return self.db.count_attempts(who, time.time() - window, action="admin", failed_only=True) >= limit

    # --- in-flight submissions, for a graceful SIGTERM ----------------------------------------------------------
    def enter(self) -> bool:
        with self._idle:
            if self.draining.is_set():
                return False
            self._inflight += 1
            return True

    def leave(self) -> None:
        with self._idle:
            self._inflight -= 1
            self._idle.notify_all()

    def drain(self, timeout: float = DRAIN_S) -> int:
        """Refuse new submissions and wait until those in flight are answered; returns how many were left."""
        self.draining.set()
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._inflight and time.monotonic() < deadline:
                self._idle.wait(max(0.0, deadline - time.monotonic()))
            return self._inflight
