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
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA_VERSION = "1"
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
    accepted INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_by_submitter ON attempts (submitter, at);
"""


class DuplicateSubmission(Exception):
    """The same rankings were already stored (``existing_id`` is the stored submission)."""

    def __init__(self, existing_id: int, model_name: str) -> None:
        super().__init__(f"duplicate of submission #{existing_id} ({model_name})")
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


class Database:
    """A handle on the leaderboard file; cheap to create, opens one connection per operation."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None:
                conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
            elif row[0] != SCHEMA_VERSION:
                raise ValueError(f"{self.path}: schema version {row[0]!r}, this code expects {SCHEMA_VERSION!r}")
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('revision', '0')")

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
                " dataset_fingerprint, file_digest, summary_json, mismatches_json)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    sub.benchmark, sub.model_name, sub.model_link, sub.family, sub.params, sub.submitter,
                    sub.created_at if sub.created_at is not None else time.time(),
                    sub.dataset_fingerprint, sub.file_digest,
                    json.dumps(sub.summary, sort_keys=True, allow_nan=False), json.dumps(list(sub.mismatches)),
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

    def record_attempt(self, submitter: str, accepted: bool, at: float | None = None) -> None:
        with self._write(bump=False) as conn:
            conn.execute(
                "INSERT INTO attempts (submitter, at, accepted) VALUES (?, ?, ?)",
                (submitter, time.time() if at is None else at, int(accepted)),
            )

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
    def count_attempts(self, submitter: str, since: float) -> int:
        with self._connect() as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM attempts WHERE submitter = ? AND at >= ?", (submitter, since)
            ).fetchone()
            return int(row[0])

    def submissions(
        self, benchmark: str | None = None, *, include_hidden: bool = False, fingerprint: str | None = None
    ) -> list[dict[str, Any]]:
        """Submissions (newest last) with their ``scores`` as {config: ScoreRow} and parsed ``summary``."""
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
            d = {k: r[k] for k in r.keys() if k not in ("summary_json", "mismatches_json")}
            d["summary"] = json.loads(r["summary_json"])
            d["mismatches"] = json.loads(r["mismatches_json"])
            d["scores"] = by_id[int(r["id"])]
            out.append(d)
        return out

    def query_scores(self, submission_id: int, config: str) -> dict[str, float]:
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT query_id, value FROM query_scores WHERE submission_id = ? AND config = ?",
                (submission_id, config),
            ).fetchall()
        return {r[0]: float(r[1]) for r in rows}

    def counts(self) -> dict[str, int]:
        """Row counts per table (used by tests and the admin view)."""
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
