"""The leaderboard database: one SQLite file in WAL mode, created on first use, no migrations.

Tables
- ``submissions``: one row per accepted submission (model metadata, submitter, time, the fingerprint of the gold
  data it was scored against, the digest of its rankings, the hidden flag and the full server-side score summary).
- ``scores``: one row per (submission, config) with the primary number and its bootstrap interval.
- ``query_scores``: per-query values (TRIAD AP, ARK reciprocal rank) kept for the paired statistics.
- ``attempts``: every submission attempt (accepted or not) for the per-submitter rate limit.
- ``meta``: the schema version (a file with another version is refused rather than silently reinterpreted) and a
  revision counter that every change to the submissions bumps (the app caches its views on it).

Every write runs in one ``BEGIN IMMEDIATE`` transaction on its own connection, so concurrent submissions from
Gradio's worker threads serialize on the write lock and none is lost; readers never block thanks to WAL.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA_VERSION = "2"
ATTEMPTS_KEEP_S = 7 * 86400.0  # attempts older than this are pruned (every rate-limit window is shorter)
BUSY_TIMEOUT_S = 60.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    benchmark TEXT NOT NULL CHECK (benchmark IN ('triad', 'ark')),
    model_name TEXT NOT NULL,
    model_link TEXT NOT NULL,
    family TEXT NOT NULL,
    params INTEGER,
    submitter TEXT NOT NULL,
    created_at REAL NOT NULL,
    dataset_fingerprint TEXT NOT NULL,
    file_digest TEXT NOT NULL,
    hidden INTEGER NOT NULL DEFAULT 0 CHECK (hidden IN (0, 1)),
    summary_json TEXT NOT NULL,
    mismatches_json TEXT NOT NULL,
    run_json TEXT NOT NULL DEFAULT '{}',
    UNIQUE (benchmark, file_digest)
);
CREATE TABLE IF NOT EXISTS scores (
    submission_id INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    config TEXT NOT NULL,
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    lo REAL,
    hi REAL,
    n_queries INTEGER NOT NULL,
    PRIMARY KEY (submission_id, config)
);
CREATE TABLE IF NOT EXISTS query_scores (
    submission_id INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    config TEXT NOT NULL,
    query_id TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (submission_id, config, query_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS attempts (
    submitter TEXT NOT NULL,
    at REAL NOT NULL,
    accepted INTEGER NOT NULL,
    action TEXT NOT NULL DEFAULT 'submit'
);
CREATE INDEX IF NOT EXISTS attempts_by_submitter ON attempts (submitter, at);
"""
# schema 1 -> 2: what each accepted run says about itself (model identity, results.json check) and attempt kinds
_MIGRATE_1_TO_2 = """
ALTER TABLE submissions ADD COLUMN run_json TEXT NOT NULL DEFAULT '{}';
ALTER TABLE attempts ADD COLUMN action TEXT NOT NULL DEFAULT 'submit';
UPDATE meta SET value = '2' WHERE key = 'schema_version';
"""


class DuplicateSubmission(Exception):
    """The same rankings were already stored (``existing_id`` is the stored submission)."""

    def __init__(self, existing_id: int, model_name: str) -> None:
        super().__init__(f"duplicate of submission id {existing_id} ({model_name})")
        self.existing_id = existing_id
        self.model_name = model_name


@dataclass(frozen=True)
class ScoreRow:
    """The primary number of one config of one submission."""

    config: str
    metric: str
    value: float
    lo: float | None
    hi: float | None
    n_queries: int


@dataclass(frozen=True)
class NewSubmission:
    """Everything stored for an accepted submission."""

    benchmark: str
    model_name: str
    model_link: str
    family: str
    params: int | None
    submitter: str
    dataset_fingerprint: str
    file_digest: str
    summary: Mapping[str, Any]
    mismatches: Sequence[str]
    scores: Sequence[ScoreRow]
    query_scores: Mapping[str, Mapping[str, float]]  # config -> query_id -> value
    created_at: float | None = None
    run: Mapping[str, Any] | None = None  # model identity from results.json and how results.json compared


class Database:
    """A handle on the leaderboard file; cheap to create, opens one connection per operation."""

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        """``create=False``: a missing file is only created by the first write (reads see an empty board), so a
        refused command-line submission leaves no database behind."""
        self.path = Path(path)
        self._ready = False
        if create or self.path.exists():
            self._init()

    def _init(self) -> None:
        if self._ready:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            existing = conn.execute("SELECT name FROM sqlite_master WHERE name = 'meta'").fetchone()
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() if existing else None
            if row is not None and row[0] == "1":
                conn.executescript(_MIGRATE_1_TO_2)
                row = ("2",)
            conn.executescript(_SCHEMA)
            if row is None:
                conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
            elif row[0] != SCHEMA_VERSION:
                raise ValueError(f"{self.path}: schema version {row[0]!r}, this code expects {SCHEMA_VERSION!r}")
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('revision', '0')")
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('id_secret', ?)", (secrets.token_hex(32),))
        self._ready = True

    def _absent(self) -> bool:
        """True while a lazily created database does not exist yet (reads then answer for an empty board)."""
        if not self._ready and self.path.exists():
            self._init()
        return not self._ready

    def secret(self) -> bytes:
        """A random per-database key for hashing client addresses (they are never stored in clear)."""
        self._init()
        with self._connect() as conn:
            return bytes.fromhex(conn.execute("SELECT value FROM meta WHERE key = 'id_secret'").fetchone()[0])

    # --- connections -------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            conn.row_factory = sqlite3.Row
            yield conn
        finally:
            conn.close()

    @contextlib.contextmanager
    def _write(self, *, bump: bool = True) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction; a change to the submissions bumps the revision readers cache on."""
        self._init()
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                if bump:
                    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'revision'")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def revision(self) -> int:
        """A counter that changes with every insert, hide/unhide and delete (for caching the views)."""
        if self._absent():
            return 0
        with self._connect() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'revision'").fetchone()
            return int(row[0]) if row else 0

    # --- writes ------------------------------------------------------------------------------------------
    def insert(self, sub: NewSubmission) -> int:
        """Store a submission with its scores in one transaction; raises DuplicateSubmission."""
        with self._write() as conn:
            dup = conn.execute(
                "SELECT id, model_name FROM submissions WHERE benchmark = ? AND file_digest = ?",
                (sub.benchmark, sub.file_digest),
            ).fetchone()
            if dup is not None:
                raise DuplicateSubmission(int(dup["id"]), str(dup["model_name"]))
            cur = conn.execute(
                "INSERT INTO submissions (benchmark, model_name, model_link, family, params, submitter, created_at,"
                " dataset_fingerprint, file_digest, summary_json, mismatches_json, run_json)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    sub.benchmark, sub.model_name, sub.model_link, sub.family, sub.params, sub.submitter,
                    sub.created_at if sub.created_at is not None else time.time(),
                    sub.dataset_fingerprint, sub.file_digest,
                    json.dumps(sub.summary, sort_keys=True, allow_nan=False), json.dumps(list(sub.mismatches)),
                    json.dumps(dict(sub.run or {}), sort_keys=True, allow_nan=False),
                ),
            )
            sid = int(cur.lastrowid)
            conn.executemany(
                "INSERT INTO scores (submission_id, config, metric, value, lo, hi, n_queries) VALUES (?,?,?,?,?,?,?)",
                [(sid, s.config, s.metric, s.value, s.lo, s.hi, s.n_queries) for s in sub.scores],
            )
            conn.executemany(
                "INSERT INTO query_scores (submission_id, config, query_id, value) VALUES (?, ?, ?, ?)",
                [(sid, c, q, float(v)) for c, per_q in sub.query_scores.items() for q, v in per_q.items()],
            )
            return sid

    def record_attempt(self, submitter: str, accepted: bool, at: float | None = None, *, action: str = "submit") -> int:
        """Log one attempt (``action``: submit, admin, ...); prunes attempts older than a week. Returns its row id."""
        now = time.time() if at is None else at
        with self._write(bump=False) as conn:
            conn.execute("DELETE FROM attempts WHERE at < ?", (now - ATTEMPTS_KEEP_S,))
            cur = conn.execute(
                "INSERT INTO attempts (submitter, at, accepted, action) VALUES (?, ?, ?, ?)",
                (submitter, now, int(accepted), action),
            )
            return int(cur.lastrowid)

    def mark_accepted(self, attempt_id: int) -> None:
        with self._write(bump=False) as conn:
            conn.execute("UPDATE attempts SET accepted = 1 WHERE rowid = ?", (attempt_id,))

    def find_digest(self, benchmark: str, digest: str) -> tuple[int, str] | None:
        """(id, model name) of a stored submission with these rankings, else None."""
        if self._absent():
            return None
        with self._connect() as conn:
            row = conn.execute("SELECT id, model_name FROM submissions WHERE benchmark = ? AND file_digest = ?",
                               (benchmark, digest)).fetchone()
        return (int(row[0]), str(row[1])) if row else None

    def names(self) -> list[tuple[int, str, str]]:
        """(id, model name, submitter) of every stored submission, hidden ones included, oldest first."""
        if self._absent():
            return []
        with self._connect() as conn:
            return [(int(r[0]), str(r[1]), str(r[2]))
                    for r in conn.execute("SELECT id, model_name, submitter FROM submissions ORDER BY id")]

    def set_hidden(self, submission_id: int, hidden: bool) -> bool:
        """Hide or show a submission; False when it does not exist."""
        with self._write() as conn:
            cur = conn.execute("UPDATE submissions SET hidden = ? WHERE id = ?", (int(hidden), submission_id))
            return cur.rowcount == 1

    def delete(self, submission_id: int) -> bool:
        """Delete a submission and its scores; False when it does not exist."""
        with self._write() as conn:
            cur = conn.execute("DELETE FROM submissions WHERE id = ?", (submission_id,))
            return cur.rowcount == 1

    # --- reads -------------------------------------------------------------------------------------------
    def count_attempts(self, submitter: str, since: float, *, action: str = "submit",
                       failed_only: bool = False) -> int:
        if self._absent():
            return 0
        with self._connect() as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM attempts WHERE submitter = ? AND at >= ? AND action = ?"
                + (" AND accepted = 0" if failed_only else ""), (submitter, since, action),
            ).fetchone()
            return int(row[0])

    def submissions(
        self, benchmark: str | None = None, *, include_hidden: bool = False, fingerprint: str | None = None
    ) -> list[dict[str, Any]]:
        """Submissions (newest last) with their ``scores`` as {config: ScoreRow} and parsed ``summary``."""
        if self._absent():
            return []
        where, args = ["1=1"], []
        if benchmark is not None:
            where.append("benchmark = ?")
            args.append(benchmark)
        if not include_hidden:
            where.append("hidden = 0")
        if fingerprint is not None:
            where.append("dataset_fingerprint = ?")
            args.append(fingerprint)
        with self._connect() as conn:
            conn.execute("BEGIN")  # one snapshot for both queries
            subs = conn.execute(
                f"SELECT * FROM submissions WHERE {' AND '.join(where)} ORDER BY id", args  # noqa: S608 - fixed clauses
            ).fetchall()
            ids = [int(r["id"]) for r in subs]
            score_rows = conn.execute(
                "SELECT * FROM scores WHERE submission_id IN (SELECT id FROM submissions WHERE "
                + " AND ".join(where) + ")", args,
            ).fetchall() if ids else []
            conn.execute("COMMIT")
        by_id: dict[int, dict[str, ScoreRow]] = {i: {} for i in ids}
        for r in score_rows:
            by_id[int(r["submission_id"])][r["config"]] = ScoreRow(
                r["config"], r["metric"], float(r["value"]), r["lo"], r["hi"], int(r["n_queries"])
            )
        out = []
        for r in subs:
            d = {k: r[k] for k in r.keys() if k not in ("summary_json", "mismatches_json", "run_json")}
            d["summary"] = json.loads(r["summary_json"])
            d["mismatches"] = json.loads(r["mismatches_json"])
            d["run"] = json.loads(r["run_json"])
            d["scores"] = by_id[int(r["id"])]
            out.append(d)
        return out

    def query_scores(self, submission_id: int, config: str) -> dict[str, float]:
        if self._absent():
            return {}
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT query_id, value FROM query_scores WHERE submission_id = ? AND config = ?",
                (submission_id, config),
            ).fetchall()
        return {r[0]: float(r[1]) for r in rows}

    def counts(self) -> dict[str, int]:
        """Row counts per table (used by tests and the admin view)."""
        if self._absent():
            return dict.fromkeys(("submissions", "scores", "query_scores", "attempts"), 0)
        with self._connect() as conn:
            return {
                t: int(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0])  # noqa: S608 - fixed table names
                for t in ("submissions", "scores", "query_scores", "attempts")
            }

    def integrity_ok(self) -> bool:
        """SQLite's own integrity check plus the foreign keys."""
        with self._connect() as conn:
            ok = conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            return ok and not conn.execute("PRAGMA foreign_key_check").fetchall()
