"""The leaderboard database: one SQLite file in WAL mode, created on first use, older files upgraded on open.

Tables
- ``submissions``: one row per accepted submission (model metadata, submitter, time, the fingerprints of the gold
  data it was scored against — its files' bytes and its content —, the digest of its rankings, the hidden flag, the
  full server-side score summary, the reproduction-check status and sample, the name's ownership key).
- ``names``: who owns a model name (by its `spaces_app.names.name_key`); the primary key closes the race of two
  submitters claiming one new name at once (the claim is made in the submission's own transaction).
- ``scores``: one row per (submission, config) with the primary number and its bootstrap interval.
- ``query_scores``: per-query values (TRIAD AP, ARK reciprocal rank) kept for the paired statistics.
- ``attempts``: every submission attempt (accepted or not) for the per-submitter rate limit; an attempt is counted
  and recorded in one transaction (`take_attempt`), and marked accepted in the transaction that stores its row.
- ``meta``: the schema version, the version of the name keys stored (`spaces_app.names.KEY_VERSION`) and a
  revision counter that every change to the submissions bumps (the app caches its views on it).
- the reference runs, their per-query values and the claims of checkers (`spaces_app.db_references`). A verified
  row is read with its reference run's scores (the leaderboard's numbers, `submissions`, `query_scores`).

Upgrades on open: a schema 1 or 2 file is migrated in place to schema 3 (`_MIGRATE_1_TO_2`, `_migrate_2_to_3`); a
file with any other schema version is refused rather than silently reinterpreted. The reference-run tables are added
to a file without them, and a row verified by a sample alone (before full checks existed) is pending again
(``meta.checks``). Name keys stored under an older
`name_key` (``meta.name_keys`` absent or older) are recomputed from the stored names (`_rekey_names`); where two old
keys now fall on one, the earliest claim keeps the name.

Every write runs in one ``BEGIN IMMEDIATE`` transaction on its own connection, so concurrent submissions from
Gradio's worker threads serialize on the write lock and none is lost; readers never block thanks to WAL.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from spaces_app import db_references
from spaces_app.db_mirror import MirrorRows
from spaces_app.db_references import ReferenceTables
from spaces_app.reference import RefSpec
from triad_dataset.contract.errors import TriadError

SCHEMA_VERSION = "3"
ROW, DELETED, REFERENCE = "row", "deleted", "reference"  # what `Database.changed` tells its listeners
CHECKS_VERSION: Final = "full"  # meta.checks: rows are verified only by a full check against a reference run
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
    status TEXT NOT NULL DEFAULT 'unverified' CHECK (status IN ('pending', 'verified', 'unverified', 'failed')),
    verify_json TEXT NOT NULL DEFAULT '{}',
    name_key TEXT NOT NULL DEFAULT '',
    gold_content TEXT NOT NULL DEFAULT '',
    score_digest TEXT NOT NULL DEFAULT '',
    UNIQUE (benchmark, gold_content, file_digest)
);
CREATE TABLE IF NOT EXISTS names (
    name_key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    created_at REAL NOT NULL
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
# schema 2 -> 3: reproduction status, name keys, the gold's content fingerprint (duplicates are per gold content, so
# a run scored on an older gold can be submitted again); SQLite's table rebuild (foreign keys off around it)
_V3_COLUMNS = (
    "id, benchmark, model_name, model_link, family, params, submitter, created_at, dataset_fingerprint, "
    "file_digest, hidden, summary_json, mismatches_json, run_json"
)
_MIGRATE_2_TO_3 = (
    _SCHEMA.split("CREATE TABLE IF NOT EXISTS submissions (")[1].split(");")[0],
    f"""
INSERT INTO submissions_v3 ({_V3_COLUMNS}, gold_content) SELECT {_V3_COLUMNS}, dataset_fingerprint FROM submissions;
DROP TABLE submissions;
ALTER TABLE submissions_v3 RENAME TO submissions;
UPDATE meta SET value = '3' WHERE key = 'schema_version';
""",
)


def _row_id(cur: sqlite3.Cursor) -> int:
    """The row id an INSERT just made."""
    if cur.lastrowid is None:
        raise sqlite3.DatabaseError("the INSERT made no row")
    return cur.lastrowid


def _key_or_none(name: str) -> str | None:
    """``name_key(name)``, or None for a stored name today's rules refuse (it claims nothing)."""
    from spaces_app.names import name_key
    from triad_dataset.contract.errors import TriadError

    try:
        return name_key(name)
    except (ValueError, TriadError):
        return None


def _rekey(conn: sqlite3.Connection) -> None:
    """Every submission's name key recomputed from its name, and each claim moved to the new keys of the names it
    covered; claims are replayed oldest first, so the first owner keeps a key that two old ones now share."""
    moved: dict[str, set[str]] = {}
    for sid, name, key in conn.execute("SELECT id, model_name, name_key FROM submissions WHERE name_key != ''"):
        new = _key_or_none(name) or key
        moved.setdefault(key, set()).add(new)
        if new != key:
            conn.execute("UPDATE submissions SET name_key = ? WHERE id = ?", (new, sid))
    claims = conn.execute("SELECT name_key, owner, created_at FROM names ORDER BY created_at, rowid").fetchall()
    conn.execute("DELETE FROM names")
    for key, owner, created in claims:
        for new in sorted(moved.get(key, {key})):
            conn.execute(
                "INSERT OR IGNORE INTO names (name_key, owner, created_at) VALUES (?, ?, ?)", (new, owner, created)
            )


def _reference_key(row: Mapping[str, Any]) -> str:
    """The reference run whose numbers a verified row shows ("" for any other row)."""
    if row["status"] != "verified":
        return ""
    key = json.loads(row["verify_json"]).get("reference")
    return key if isinstance(key, str) else ""


class StorageError(TriadError):
    """The database file cannot be opened: the storage failed, or the file is not a leaderboard database."""


class SchemaError(StorageError, ValueError):
    """A database file of a schema this code does not know (refused rather than reinterpreted)."""


def storage_problem(path: Path, exc: sqlite3.DatabaseError) -> str:
    """One line for a database that cannot be opened, saying what to do.

    >>> storage_problem(Path("s.sqlite"), sqlite3.DatabaseError("file is not a database"))
    's.sqlite: not a readable leaderboard database (file is not a database); move it away (or restore it from the mirror) and start again'
    """
    text = str(exc)
    if "full" in text.lower():
        return f"{path}: the storage is full ({text}); free some space and start again"
    if "not a database" in text or "malformed" in text:
        return (
            f"{path}: not a readable leaderboard database ({text}); move it away (or restore it from the mirror) "
            "and start again"
        )
    return f"{path}: the storage failed, full or unwritable ({text}); check the disk and start again"


# a row a visitor does not see by default: hidden by the admin, or a failed reproduction check
NOT_PUBLIC: Final = "(hidden = 1 OR status = 'failed')"


class DuplicateSubmission(Exception):
    """The same rankings were already stored (``existing_id`` is the stored submission; ``hidden``: not public)."""

    def __init__(self, existing_id: int, model_name: str, hidden: bool = False, same: str = "rankings") -> None:
        super().__init__(f"duplicate of submission id {existing_id} ({model_name})")
        self.existing_id = existing_id
        self.model_name = model_name
        self.hidden = hidden
        self.same = same  # "rankings" (the same main rankings) or "scores" (every per-query score equal)


class NameTaken(Exception):
    """The name's key is owned by another submitter (``owner``)."""

    def __init__(self, key: str, owner: str) -> None:
        super().__init__(f"name key {key!r} belongs to {owner}")
        self.key, self.owner = key, owner


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
    status: str = "unverified"  # reproduction check: pending | verified | unverified | failed
    verify: Mapping[str, Any] | None = None  # the check's sample (secret until checked), reason, result
    name_key: str = ""  # `spaces_app.names.name_key(model_name)`
    name_owner: str | None = None  # claim the name for this owner (None: claim nothing, only respect claims)
    gold_content: str = ""  # the gold's content fingerprint (default: dataset_fingerprint)
    score_digest: str = ""  # sha256 of every per-query score of the main configs (`spaces_app.submit`)
    attempt: int | None = None  # the attempt row marked accepted in the same transaction
    reference: RefSpec | None = None  # the reference run a pending row waits for (recorded as wanted)
    same_scores_allowed: bool = False  # the leaderboard's own row may score as a submitted one (later ones may not)


class Database(ReferenceTables, MirrorRows):
    """A handle on the leaderboard file; cheap to create, opens one connection per operation."""

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        """``create=False``: a missing file is only created by the first write (reads see an empty board), so a
        refused command-line submission leaves no database behind."""
        self.path = Path(path)
        self._ready = False
        self.listeners: list[Callable[[str, Any], None]] = []  # told of every change once it is committed
        if create or self.path.exists():
            self._init()

    def _init(self) -> None:
        if self._ready:
            return
        try:
            self._open()
        except sqlite3.DatabaseError as exc:
            raise StorageError(storage_problem(self.path, exc)) from None
        except OSError as exc:
            raise StorageError(f"{self.path}: the storage failed ({exc.strerror or type(exc).__name__})") from None
        self._ready = True

    def _open(self) -> None:
        """Create or upgrade the file (WAL mode, tables, migrations)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            existing = conn.execute("SELECT name FROM sqlite_master WHERE name = 'meta'").fetchone()
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() if existing else None
            if row is not None and row[0] == "1":
                conn.executescript(_MIGRATE_1_TO_2)
                row = ("2",)
            if row is not None and row[0] == "2":
                self._migrate_2_to_3(conn)
                row = ("3",)
            conn.executescript(_SCHEMA)
            conn.executescript(db_references.SCHEMA)
            if row is None:
                conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
            elif row[0] != SCHEMA_VERSION:
                raise SchemaError(f"{self.path}: schema version {row[0]!r}, this code expects {SCHEMA_VERSION!r}")
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('revision', '0')")
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('id_secret', ?)", (secrets.token_hex(32),))
            self._rekey_names(conn)
            self._full_checks_only(conn)

    @staticmethod
    def _full_checks_only(conn: sqlite3.Connection) -> None:
        """Rows verified by a sampled check alone are pending again (their full check decides), once per file."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'checks'").fetchone()
            if row is None or row[0] != CHECKS_VERSION:
                conn.execute(
                    "UPDATE submissions SET status = 'pending' WHERE status = 'verified' AND verify_json NOT LIKE "
                    "'%\"reference\"%'"
                )
                conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('checks', ?)", (CHECKS_VERSION,))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @staticmethod
    def _rekey_names(conn: sqlite3.Connection) -> None:
        """Recompute every stored name key with today's `name_key` unless ``meta.name_keys`` says they already are
        (one transaction; the earliest claim keeps a key that two old keys now share)."""
        from spaces_app.names import KEY_VERSION

        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'name_keys'").fetchone()
            if row is None or row[0] != KEY_VERSION:
                _rekey(conn)
                conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('name_keys', ?)", (KEY_VERSION,))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @staticmethod
    def _migrate_2_to_3(conn: sqlite3.Connection) -> None:
        from spaces_app.identity import name_owner

        conn.execute("PRAGMA foreign_keys=OFF")  # DROP TABLE would otherwise cascade into the scores
        table, copy = _MIGRATE_2_TO_3
        conn.executescript("BEGIN; CREATE TABLE submissions_v3 (" + table + ");" + copy + "COMMIT;")
        conn.executescript(_SCHEMA)
        for sid, name, submitter, created in conn.execute(
            "SELECT id, model_name, submitter, created_at FROM submissions ORDER BY id"
        ).fetchall():
            key = _key_or_none(name)
            if key is None:
                continue
            conn.execute("UPDATE submissions SET name_key = ? WHERE id = ?", (key, sid))
            owner = name_owner(submitter)
            if owner is not None:
                conn.execute(
                    "INSERT OR IGNORE INTO names (name_key, owner, created_at) VALUES (?, ?, ?)", (key, owner, created)
                )
        conn.execute("PRAGMA foreign_keys=ON")

    def _absent(self) -> bool:
        """True while a lazily created database does not exist yet (reads then answer for an empty board)."""
        if not self._ready and self.path.exists():
            self._init()
        return not self._ready

    def changed(self, kind: str, what: Any) -> None:
        """Tell the listeners (the mirror) that a row (`ROW`, `DELETED`: its id) or a reference run (`REFERENCE`:
        its key) changed; a listener that fails never fails the write."""
        for listener in list(self.listeners):
            try:
                listener(kind, what)
            except Exception as exc:  # the write is committed; a listener's failure is reported, not raised
                print(f"database listener: {type(exc).__name__}: {exc}", file=sys.stderr)

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
                with contextlib.suppress(sqlite3.OperationalError):  # SQLite rolls back on its own after SQLITE_FULL
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
        """Store a submission with its scores, its name claim and its attempt's acceptance in one transaction;
        raises DuplicateSubmission or NameTaken (and then nothing is stored)."""
        gold_content = sub.gold_content or sub.dataset_fingerprint
        with self._write() as conn:
            dup = conn.execute(
                f"SELECT id, model_name, {NOT_PUBLIC} AS hidden FROM submissions WHERE benchmark = ? AND "
                "gold_content = ? AND file_digest = ?",
                (sub.benchmark, gold_content, sub.file_digest),
            ).fetchone()
            if dup is not None:
                raise DuplicateSubmission(int(dup["id"]), str(dup["model_name"]), bool(dup["hidden"]))
            same = (
                conn.execute(
                    f"SELECT id, model_name, {NOT_PUBLIC} AS hidden FROM submissions WHERE benchmark = ? AND "
                    "gold_content = ? AND score_digest = ? AND score_digest != ''",
                    (sub.benchmark, gold_content, sub.score_digest),
                ).fetchone()
                if sub.score_digest and not sub.same_scores_allowed
                else None
            )
            if same is not None:
                raise DuplicateSubmission(int(same["id"]), str(same["model_name"]), bool(same["hidden"]), "scores")
            if sub.name_key:
                if sub.name_owner is not None:  # the primary key makes the first claim win, whoever commits first
                    conn.execute(
                        "INSERT INTO names (name_key, owner, created_at) VALUES (?, ?, ?) "
                        "ON CONFLICT (name_key) DO NOTHING",
                        (sub.name_key, sub.name_owner, time.time()),
                    )
                owner = conn.execute("SELECT owner FROM names WHERE name_key = ?", (sub.name_key,)).fetchone()
                if owner is not None and owner[0] != sub.name_owner:
                    raise NameTaken(sub.name_key, str(owner[0]))
            cur = conn.execute(
                "INSERT INTO submissions (benchmark, model_name, model_link, family, params, submitter, created_at,"
                " dataset_fingerprint, file_digest, summary_json, mismatches_json, run_json, status, verify_json,"
                " name_key, gold_content, score_digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    sub.benchmark,
                    sub.model_name,
                    sub.model_link,
                    sub.family,
                    sub.params,
                    sub.submitter,
                    sub.created_at if sub.created_at is not None else time.time(),
                    sub.dataset_fingerprint,
                    sub.file_digest,
                    json.dumps(sub.summary, sort_keys=True, allow_nan=False),
                    json.dumps(list(sub.mismatches)),
                    json.dumps(dict(sub.run or {}), sort_keys=True, allow_nan=False),
                    sub.status,
                    json.dumps(dict(sub.verify or {}), sort_keys=True, allow_nan=False),
                    sub.name_key,
                    gold_content,
                    sub.score_digest,
                ),
            )
            sid = _row_id(cur)
            conn.executemany(
                "INSERT INTO scores (submission_id, config, metric, value, lo, hi, n_queries) VALUES (?,?,?,?,?,?,?)",
                [(sid, s.config, s.metric, s.value, s.lo, s.hi, s.n_queries) for s in sub.scores],
            )
            conn.executemany(
                "INSERT INTO query_scores (submission_id, config, query_id, value) VALUES (?, ?, ?, ?)",
                [(sid, c, q, float(v)) for c, per_q in sub.query_scores.items() for q, v in per_q.items()],
            )
            if sub.attempt is not None:
                conn.execute("UPDATE attempts SET accepted = 1 WHERE rowid = ?", (sub.attempt,))
            if sub.reference is not None:
                self.want_reference(sub.reference, conn=conn)
        self.changed(ROW, sid)
        return sid

    def name_owner(self, key: str) -> str | None:
        """Who owns a name key (None: nobody yet)."""
        if self._absent() or not key:
            return None
        with self._connect() as conn:
            row = conn.execute("SELECT owner FROM names WHERE name_key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    def take_attempt(
        self, submitter: str, window_s: float, limit: int, *, action: str = "submit", at: float | None = None
    ) -> int | None:
        """Count the submitter's attempts in the window and record a new one, in one transaction: the attempt's
        row id, or None (nothing recorded) when ``limit`` attempts were made already. Parallel calls serialize on
        the write lock, so exactly ``limit`` of them get through."""
        now = time.time() if at is None else at
        with self._write(bump=False) as conn:
            count = conn.execute(
                "SELECT COUNT(*) FROM attempts WHERE submitter = ? AND at >= ? AND action = ?",
                (submitter, now - window_s, action),
            ).fetchone()[0]
            if int(count) >= limit:
                return None
            conn.execute("DELETE FROM attempts WHERE at < ?", (now - ATTEMPTS_KEEP_S,))
            cur = conn.execute(
                "INSERT INTO attempts (submitter, at, accepted, action) VALUES (?, ?, 0, ?)", (submitter, now, action)
            )
            return _row_id(cur)

    def record_attempt(self, submitter: str, accepted: bool, at: float | None = None, *, action: str = "submit") -> int:
        """Log one attempt (``action``: submit, admin, ...); prunes attempts older than a week. Returns its row id."""
        now = time.time() if at is None else at
        with self._write(bump=False) as conn:
            conn.execute("DELETE FROM attempts WHERE at < ?", (now - ATTEMPTS_KEEP_S,))
            cur = conn.execute(
                "INSERT INTO attempts (submitter, at, accepted, action) VALUES (?, ?, ?, ?)",
                (submitter, now, int(accepted), action),
            )
            return _row_id(cur)

    def find_digest(self, benchmark: str, digest: str, gold_content: str) -> tuple[int, str, bool] | None:
        """(id, model name, hidden) of a stored submission with these rankings on this gold content, else None."""
        if self._absent():
            return None
        with self._connect() as conn:
            row = conn.execute(
                f"SELECT id, model_name, {NOT_PUBLIC} AS hidden FROM submissions WHERE "
                "benchmark = ? AND gold_content = ? AND file_digest = ?",
                (benchmark, gold_content, digest),
            ).fetchone()
        return (int(row[0]), str(row[1]), bool(row[2])) if row else None

    def set_verification(self, submission_id: int, status: str, verify: Mapping[str, Any]) -> bool:
        """Record a reproduction check's outcome (spaces_app.verify) and drop the row's claim; False when the
        submission does not exist."""
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE submissions SET status = ?, verify_json = ? WHERE id = ?",
                (status, json.dumps(dict(verify), sort_keys=True, allow_nan=False), submission_id),
            )
            conn.execute("DELETE FROM claims WHERE item = ?", (db_references.row_item(submission_id),))
        self.changed(ROW, submission_id)
        return cur.rowcount == 1

    def verification_tasks(
        self, *, ids: Sequence[int] | None = None, pending_only: bool = True
    ) -> list[dict[str, Any]]:
        """Submissions to check (id, benchmark, params, run, verify, status): the pending ones, or those of
        ``ids``."""
        if self._absent():
            return []
        where, args = ("status = 'pending'", []) if pending_only and ids is None else ("1=1", [])
        if ids is not None:
            where += f" AND id IN ({','.join('?' * len(ids))})"
            args = list(ids)
        with self._connect() as conn:
            rows = conn.execute(
                f"SELECT id, benchmark, params, run_json, verify_json, status, model_name, gold_content "  # noqa: S608
                f"FROM submissions WHERE {where} ORDER BY id",
                args,
            ).fetchall()
        return [
            {
                "id": int(r[0]),
                "benchmark": r[1],
                "params": r[2],
                "run": json.loads(r[3]),
                "verify": json.loads(r[4]),
                "status": r[5],
                "model_name": r[6],
                "gold_content": r[7],
            }
            for r in rows
        ]

    def set_summary(self, submission_id: int, summary: Mapping[str, Any]) -> None:
        """Replace a row's stored summary (a rescore); its scores and per-query values stay."""
        with self._write() as conn:
            conn.execute(
                "UPDATE submissions SET summary_json = ? WHERE id = ?",
                (json.dumps(summary, sort_keys=True, allow_nan=False), submission_id),
            )
        self.changed(ROW, submission_id)

    def set_run_note(self, submission_id: int, key: str, text: str) -> None:
        """Add one note to a row's run record (what the row says about itself, e.g. its explorer file)."""
        with self._write() as conn:
            row = conn.execute("SELECT run_json FROM submissions WHERE id = ?", (submission_id,)).fetchone()
            if row is not None:
                run = {**json.loads(row[0]), key: text}
                conn.execute("UPDATE submissions SET run_json = ? WHERE id = ?", (json.dumps(run), submission_id))
        self.changed(ROW, submission_id)

    def set_hidden(self, submission_id: int, hidden: bool) -> bool:
        """Hide or show a submission; False when it does not exist."""
        with self._write() as conn:
            cur = conn.execute("UPDATE submissions SET hidden = ? WHERE id = ?", (int(hidden), submission_id))
        self.changed(ROW, submission_id)
        return cur.rowcount == 1

    def delete(self, submission_id: int) -> bool:
        """Delete a submission and its scores; False when it does not exist."""
        with self._write() as conn:
            cur = conn.execute("DELETE FROM submissions WHERE id = ?", (submission_id,))
            # a name whose owner has no row left is free again
            conn.execute(
                "DELETE FROM names WHERE NOT EXISTS (SELECT 1 FROM submissions s WHERE s.name_key = names.name_key)"
            )
        self.changed(DELETED, submission_id)
        return cur.rowcount == 1

    # --- reads -------------------------------------------------------------------------------------------
    def count_attempts(self, submitter: str, since: float, *, action: str = "submit", failed_only: bool = False) -> int:
        if self._absent():
            return 0
        with self._connect() as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM attempts WHERE submitter = ? AND at >= ? AND action = ?"
                + (" AND accepted = 0" if failed_only else ""),
                (submitter, since, action),
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
                f"SELECT * FROM submissions WHERE {' AND '.join(where)} ORDER BY id",
                args,  # noqa: S608 - fixed clauses
            ).fetchall()
            ids = [int(r["id"]) for r in subs]
            score_rows = (
                conn.execute(
                    "SELECT * FROM scores WHERE submission_id IN (SELECT id FROM submissions WHERE "
                    + " AND ".join(where)
                    + ")",
                    args,
                ).fetchall()
                if ids
                else []
            )
            conn.execute("COMMIT")
        by_id: dict[int, dict[str, ScoreRow]] = {i: {} for i in ids}
        for r in score_rows:
            by_id[int(r["submission_id"])][r["config"]] = ScoreRow(
                r["config"], r["metric"], float(r["value"]), r["lo"], r["hi"], int(r["n_queries"])
            )
        out = []
        verified = {int(r["id"]): _reference_key(r) for r in subs}
        shown = self.reference_scores(sorted({k for k in verified.values() if k}))
        for r in subs:
            skip = ("summary_json", "mismatches_json", "run_json", "verify_json")
            d = {k: r[k] for k in r.keys() if k not in skip}  # noqa: SIM118  # a sqlite3.Row iterates its values
            d["summary"] = json.loads(r["summary_json"])
            d["mismatches"] = json.loads(r["mismatches_json"])
            d["run"] = json.loads(r["run_json"])
            d["verify"] = json.loads(r["verify_json"])
            d["scores"] = by_id[int(r["id"])]
            key = verified[int(r["id"])]
            if key in shown:  # a verified row shows the leaderboard's numbers: its reference run's
                d["submitted_scores"] = d["scores"]
                d["scores"] = {c: ScoreRow(c, **v) for c, v in shown[key].items()}
            out.append(d)
        return out

    def query_scores(self, submission_id: int, config: str) -> dict[str, float]:
        """query id -> the row's per-query value (TRIAD AP, ARK positive rank); a verified row's are its reference
        run's."""
        if self._absent():
            return {}
        with self._connect() as conn:
            row = conn.execute("SELECT status, verify_json FROM submissions WHERE id = ?", (submission_id,)).fetchone()
        key = _reference_key(row) if row is not None else ""
        if key:
            values = self.reference_query_values(key, config)
            if values:
                return values
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
