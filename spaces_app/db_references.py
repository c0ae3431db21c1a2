"""The leaderboard database's reference runs and claims (a part of `spaces_app.db.Database`).

Tables
- ``reference_runs``: one row per model identity and gold (`spaces_app.reference.RefSpec`, keyed by its `key`):
  wanted (a pending submission names it, or someone requested an evaluation) or done, with the board's scores per
  config, the run's summary and explorer table (for a row "evaluated by the leaderboard") and how it was made.
- ``reference_queries``: per query of a done run, the model's own value and its tie range (`low`, `high`).
- ``claims``: who is working on a pending row or a wanted reference run, until when; a claim is taken with one
  conditional write, so two checkers never work on one item at once.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict
from typing import Any, Final

from spaces_app.reference import Reference, RefSpec

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS reference_runs (
    key TEXT PRIMARY KEY,
    benchmark TEXT NOT NULL,
    gold_content TEXT NOT NULL,
    spec TEXT NOT NULL,
    revision TEXT NOT NULL,
    variant TEXT NOT NULL,
    recipe TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL DEFAULT 'wanted' CHECK (state IN ('wanted', 'done')),
    requested_by TEXT NOT NULL DEFAULT '',
    requested_at REAL,
    row_id INTEGER,
    scores_json TEXT NOT NULL DEFAULT '{}',
    summary_json TEXT NOT NULL DEFAULT '{}',
    meta_json TEXT NOT NULL DEFAULT '{}',
    explorer BLOB,
    created_at REAL NOT NULL,
    done_at REAL
);
CREATE TABLE IF NOT EXISTS reference_queries (
    key TEXT NOT NULL REFERENCES reference_runs(key) ON DELETE CASCADE,
    config TEXT NOT NULL,
    query_id TEXT NOT NULL,
    own REAL NOT NULL,
    low REAL NOT NULL,
    high REAL NOT NULL,
    PRIMARY KEY (key, config, query_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS claims (item TEXT PRIMARY KEY, worker TEXT NOT NULL, until REAL NOT NULL);
"""
SPEC_COLUMNS: Final = ("benchmark", "gold_content", "spec", "revision", "variant", "recipe")


def row_item(submission_id: int) -> str:
    """The claim item of a pending row."""
    return f"row:{int(submission_id)}"


def reference_item(key: str) -> str:
    """The claim item of a wanted reference run."""
    return f"ref:{key}"


class ReferenceTables:
    """Reads and writes of the reference runs and the claims; mixed into `spaces_app.db.Database`."""

    def _write(self, *, bump: bool = True) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _connect(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _absent(self) -> bool:
        raise NotImplementedError

    def changed(self, kind: str, what: Any) -> None:
        raise NotImplementedError

    # --- reference runs -------------------------------------------------------------------------------------
    def want_reference(self, spec: RefSpec, *, requested_by: str = "", conn: sqlite3.Connection | None = None) -> None:
        """Record that ``spec``'s reference run is wanted (nothing changes when it is known already); with
        ``requested_by``, someone asked for its row "evaluated by the leaderboard"."""
        with self._write(bump=False) if conn is None else contextlib.nullcontext(conn) as c:
            c.execute(
                f"INSERT INTO reference_runs (key, {', '.join(SPEC_COLUMNS)}, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (key) DO NOTHING",
                (spec.key, *(getattr(spec, k) for k in SPEC_COLUMNS), time.time()),
            )
            if requested_by:
                c.execute(
                    "UPDATE reference_runs SET requested_by = ?, requested_at = ? WHERE key = ? AND requested_by = ''",
                    (requested_by, time.time(), spec.key),
                )

    def reference_state(self, key: str) -> dict[str, Any] | None:
        """The reference run's bookkeeping (spec, state, requested_by, row_id, meta), or None when unknown."""
        if self._absent():
            return None
        with self._connect() as conn:
            row = conn.execute(
                f"SELECT {', '.join(SPEC_COLUMNS)}, state, requested_by, row_id, meta_json FROM reference_runs "
                "WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        spec = RefSpec(*(row[k] for k in SPEC_COLUMNS))
        return {
            "key": key,
            "spec": spec,
            "state": row["state"],
            "requested_by": row["requested_by"],
            "row_id": row["row_id"],
            "meta": json.loads(row["meta_json"]),
        }

    def wanted_references(self) -> list[RefSpec]:
        """Every reference run wanted and not made yet, oldest first."""
        if self._absent():
            return []
        with self._connect() as conn:
            rows = conn.execute(
                f"SELECT {', '.join(SPEC_COLUMNS)} FROM reference_runs WHERE state = 'wanted' ORDER BY created_at"
            ).fetchall()
        return [RefSpec(*(r[k] for k in SPEC_COLUMNS)) for r in rows]

    def store_reference(self, reference: Reference, explorer: bytes | None = None) -> None:
        """Store a made reference run (its scores, summary, per-query values, explorer table); it replaces a run
        of the same key."""
        spec = reference.spec
        with self._write() as conn:
            self.want_reference(spec, conn=conn)
            conn.execute(
                "UPDATE reference_runs SET state = 'done', scores_json = ?, summary_json = ?, meta_json = ?,"
                " explorer = ?, done_at = ? WHERE key = ?",
                (
                    json.dumps(reference.scores, sort_keys=True, allow_nan=False),
                    json.dumps(reference.summary, sort_keys=True, allow_nan=False),
                    json.dumps(reference.meta, sort_keys=True, allow_nan=False),
                    explorer,
                    time.time(),
                    spec.key,
                ),
            )
            conn.execute("DELETE FROM reference_queries WHERE key = ?", (spec.key,))
            conn.executemany(
                "INSERT INTO reference_queries (key, config, query_id, own, low, high) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (spec.key, c, q, float(v[0]), float(v[1]), float(v[2]))
                    for c, per in reference.queries.items()
                    for q, v in per.items()
                ],
            )
            conn.execute("DELETE FROM claims WHERE item = ?", (reference_item(spec.key),))
        self.changed("reference", spec.key)

    def reference(self, key: str) -> Reference | None:
        """The made reference run of ``key``, else None."""
        if self._absent():
            return None
        with self._connect() as conn:
            conn.execute("BEGIN")
            row = conn.execute(
                f"SELECT {', '.join(SPEC_COLUMNS)}, scores_json, summary_json, meta_json FROM reference_runs "
                "WHERE key = ? AND state = 'done'",
                (key,),
            ).fetchone()
            rows = (
                conn.execute(
                    "SELECT config, query_id, own, low, high FROM reference_queries WHERE key = ?", (key,)
                ).fetchall()
                if row is not None
                else []
            )
            conn.execute("COMMIT")
        if row is None:
            return None
        queries: dict[str, dict[str, tuple[float, float, float]]] = {}
        for r in rows:
            queries.setdefault(r["config"], {})[r["query_id"]] = (r["own"], r["low"], r["high"])
        return Reference(
            RefSpec(*(row[k] for k in SPEC_COLUMNS)),
            json.loads(row["scores_json"]),
            queries,
            json.loads(row["meta_json"]),
            json.loads(row["summary_json"]),
        )

    def reference_explorer(self, key: str) -> bytes | None:
        """The explorer table (parquet bytes) of a made reference run, if kept."""
        if self._absent():
            return None
        with self._connect() as conn:
            row = conn.execute("SELECT explorer FROM reference_runs WHERE key = ?", (key,)).fetchone()
        return bytes(row[0]) if row is not None and row[0] is not None else None

    def reference_scores(self, keys: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
        """key -> the board's scores per config, for the made reference runs among ``keys``."""
        if self._absent() or not keys:
            return {}
        with self._connect() as conn:
            rows = conn.execute(
                f"SELECT key, scores_json FROM reference_runs WHERE state = 'done' AND key IN "
                f"({','.join('?' * len(keys))})",
                list(keys),
            ).fetchall()
        return {r[0]: json.loads(r[1]) for r in rows}

    def reference_query_values(self, key: str, config: str) -> dict[str, float]:
        """query id -> the model's own value (TRIAD AP, ARK positive rank) in a made reference run."""
        if self._absent():
            return {}
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT query_id, own FROM reference_queries WHERE key = ? AND config = ?", (key, config)
            ).fetchall()
        return {r[0]: float(r[1]) for r in rows}

    def set_reference_row(self, key: str, row_id: int) -> None:
        """Link a reference run to its row "evaluated by the leaderboard"."""
        with self._write(bump=False) as conn:
            conn.execute("UPDATE reference_runs SET row_id = ? WHERE key = ?", (row_id, key))
        self.changed("reference", key)

    def requested_references(self) -> list[dict[str, Any]]:
        """Made reference runs someone requested whose row is not on the board yet."""
        if self._absent():
            return []
        with self._connect() as conn:
            keys = [
                r[0]
                for r in conn.execute(
                    "SELECT key FROM reference_runs WHERE state = 'done' AND requested_by != '' AND row_id IS NULL"
                )
            ]
        return [s for s in (self.reference_state(k) for k in keys) if s is not None]

    def reference_record(self, key: str) -> tuple[dict[str, Any], bytes | None] | None:
        """A made reference run as JSON (`Reference.to_json` plus who requested it and its row) with its explorer
        bytes, or None."""
        ref, state = self.reference(key), self.reference_state(key)
        if ref is None or state is None:
            return None
        record = {**ref.to_json(), "requested_by": state["requested_by"], "row_id": state["row_id"]}
        return record, self.reference_explorer(key)

    def reference_records(self) -> Iterator[tuple[dict[str, Any], bytes | None]]:
        """Every made reference run as `reference_record` gives it."""
        if self._absent():
            return
        with self._connect() as conn:
            keys = [r[0] for r in conn.execute("SELECT key FROM reference_runs WHERE state = 'done' ORDER BY key")]
        for key in keys:
            found = self.reference_record(key)
            if found is not None:
                yield found

    def is_empty(self) -> bool:
        """No row and no reference run: what the mirror restores into."""
        if self._absent():
            return True
        with self._connect() as conn:
            rows = conn.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]
            refs = conn.execute("SELECT COUNT(*) FROM reference_runs").fetchone()[0]
        return int(rows) == 0 and int(refs) == 0

    # --- claims ----------------------------------------------------------------------------------------------
    def claim(self, item: str, worker: str, lease_s: float, *, now: float | None = None) -> bool:
        """Take ``item`` for ``worker`` until ``lease_s`` from now, unless another worker holds it (one conditional
        write: of two workers claiming at once, one gets it). A pending row must still be pending."""
        now = time.time() if now is None else now
        with self._write(bump=False) as conn:
            if item.startswith("row:"):
                row = conn.execute("SELECT status FROM submissions WHERE id = ?", (int(item[4:]),)).fetchone()
                if row is None or row[0] != "pending":
                    return False
            cur = conn.execute(
                "INSERT INTO claims (item, worker, until) VALUES (?, ?, ?) ON CONFLICT (item) DO UPDATE SET "
                "worker = excluded.worker, until = excluded.until WHERE claims.until < ? OR claims.worker = ?",
                (item, worker, now + lease_s, now, worker),
            )
            return cur.rowcount == 1

    def release(self, item: str, worker: str) -> None:
        """Give ``item`` back (only ``worker``'s own claim)."""
        with self._write(bump=False) as conn:
            conn.execute("DELETE FROM claims WHERE item = ? AND worker = ?", (item, worker))


def spec_json(spec: RefSpec) -> dict[str, str]:
    """A `RefSpec` as the API and the mirror carry it."""
    return {**asdict(spec), "key": spec.key}


def restore_reference(store: ReferenceTables, record: Mapping[str, Any], explorer: bytes | None) -> None:
    """Put a mirrored reference run back (`ReferenceTables.reference_records`' form)."""
    ref = Reference.from_json(record)
    store.store_reference(ref, explorer)
    if record.get("requested_by"):
        store.want_reference(ref.spec, requested_by=str(record["requested_by"]))
    if record.get("row_id") is not None:
        store.set_reference_row(ref.spec.key, int(record["row_id"]))
