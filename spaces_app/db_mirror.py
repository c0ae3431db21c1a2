"""A row of the leaderboard database as the mirror keeps it, and put back (a part of `spaces_app.db.Database`).

The mirror holds the public fields of each row (`PUBLIC_FIELDS`, an allow-list), its own scores and per-query
values (what rescoring, the paired statistics and verification need), and the public part of its check
(`spaces_app.disclosure.public`): never a secret sample, a client address or a model's scores on a failed row.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Mapping
from typing import Any, Final

from spaces_app import disclosure, identity, reference

PUBLIC_FIELDS: Final = (
    "id",
    "benchmark",
    "model_name",
    "model_link",
    "family",
    "params",
    "created_at",
    "dataset_fingerprint",
    "file_digest",
    "hidden",
    "status",
    "name_key",
    "gold_content",
    "score_digest",
)
JSON_FIELDS: Final = ("summary_json", "mismatches_json", "run_json")


LEADERBOARD: Final = "leaderboard"  # the submitter of the rows the leaderboard evaluated itself


def public_submitter(submitter: str) -> str:
    """A submitter as the mirror keeps it: a Hub user, the local owner or the leaderboard; anyone else (a hashed
    address) is "anonymous".

    >>> public_submitter("hf:alice"), public_submitter("ip:0123456789abcdef"), public_submitter("demo")
    ('hf:alice', 'anonymous', 'demo')
    """
    return submitter if identity.name_owner(submitter) is not None or submitter == LEADERBOARD else "anonymous"


class MirrorRows:
    """Reads and writes of whole rows for the mirror; mixed into `spaces_app.db.Database`."""

    def _write(self, *, bump: bool = True) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _connect(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _absent(self) -> bool:
        raise NotImplementedError

    def want_reference(self, spec: reference.RefSpec, *, requested_by: str = "", conn: Any = None) -> None:
        raise NotImplementedError

    def mirror_row(self, submission_id: int) -> dict[str, Any] | None:
        """One row as the mirror keeps it (hidden or not), or None when it does not exist."""
        if self._absent():
            return None
        with self._connect() as conn:
            conn.execute("BEGIN")
            row = conn.execute("SELECT * FROM submissions WHERE id = ?", (submission_id,)).fetchone()
            scores = conn.execute(
                "SELECT config, metric, value, lo, hi, n_queries FROM scores WHERE submission_id = ?", (submission_id,)
            ).fetchall()
            values = conn.execute(
                "SELECT config, query_id, value FROM query_scores WHERE submission_id = ?", (submission_id,)
            ).fetchall()
            conn.execute("COMMIT")
        if row is None:
            return None
        record: dict[str, Any] = {k: row[k] for k in PUBLIC_FIELDS}
        record.update({k.removesuffix("_json"): json.loads(row[k]) for k in JSON_FIELDS})
        record["submitter"] = public_submitter(str(row["submitter"]))
        record["verify"] = disclosure.public(json.loads(row["verify_json"]), str(row["status"]))
        record["scores"] = {
            r["config"]: {k: r[k] for k in ("metric", "value", "lo", "hi", "n_queries")} for r in scores
        }
        per_query: dict[str, dict[str, float]] = {}
        for r in values:
            per_query.setdefault(r["config"], {})[r["query_id"]] = float(r["value"])
        record["query_scores"] = per_query
        return record

    def restore_row(self, record: Mapping[str, Any]) -> None:
        """Put a mirrored row back under its own id, with its scores, per-query values and name claim; a pending
        row waits for its reference run again."""
        verify_record = {k: v for k, v in record["verify"].items() if k != "status"}
        with self._write() as conn:
            conn.execute(
                f"INSERT INTO submissions ({', '.join(PUBLIC_FIELDS)}, submitter, summary_json, mismatches_json, "
                f"run_json, verify_json) VALUES ({', '.join('?' * (len(PUBLIC_FIELDS) + 5))})",
                (
                    *(record[k] for k in PUBLIC_FIELDS),
                    record["submitter"],
                    *(json.dumps(record[k.removesuffix("_json")], sort_keys=True) for k in JSON_FIELDS),
                    json.dumps(verify_record, sort_keys=True),
                ),
            )
            conn.executemany(
                "INSERT INTO scores (submission_id, config, metric, value, lo, hi, n_queries) VALUES (?,?,?,?,?,?,?)",
                [
                    (record["id"], c, *(s[k] for k in ("metric", "value", "lo", "hi", "n_queries")))
                    for c, s in record["scores"].items()
                ],
            )
            conn.executemany(
                "INSERT INTO query_scores (submission_id, config, query_id, value) VALUES (?, ?, ?, ?)",
                [(record["id"], c, q, v) for c, per in record["query_scores"].items() for q, v in per.items()],
            )
            owner = identity.name_owner(str(record["submitter"]))
            if record["name_key"] and owner is not None:
                conn.execute(
                    "INSERT OR IGNORE INTO names (name_key, owner, created_at) VALUES (?, ?, ?)",
                    (record["name_key"], owner, record["created_at"]),
                )
            spec = reference.spec_for(record["benchmark"], record["gold_content"], verify_record)
            if record["status"] == "pending" and spec is not None:
                self.want_reference(spec, conn=conn)
