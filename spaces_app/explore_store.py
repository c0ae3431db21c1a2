"""What the query explorer shows of a stored submission: per query its top ids and every positive's rank.

A submission's rankings are its public output; the Space keeps of them only what the explorer shows — the first
`TOP_STORED` ids of each query and the 1-based ranks of its positives — in one parquet file per submission beside
the database (`<db>.explore/<id>.parquet`), removed with the row. The file is written before the row is committed
(`stage`: a full disk refuses the submission, nothing stored) and moved to its name once the row has its id
(`commit`); a move that fails twice is said on the row (`NOT_STORED` in its run record).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from spaces_app.explorer import QueryRanking

TOP_STORED: Final = 20
NOT_STORED: Final = "explorer"  # run-record key of a row whose explorer file could not be stored: the reason
SCHEMA: Final = pa.schema(
    [
        ("config", pa.string()),
        ("query_id", pa.string()),
        ("top_ids", pa.list_(pa.string())),
        ("positive_ranks", pa.list_(pa.int32())),
    ]
)


def directory(db_path: str | Path) -> Path:
    """The folder of explorer files that belongs to this database."""
    db_path = Path(db_path)
    return db_path.with_name(db_path.name + ".explore")


def file_of(db_path: str | Path, submission_id: int) -> Path:
    """The explorer file of one submission."""
    return directory(db_path) / f"{int(submission_id)}.parquet"


def triad_table(gold: Any, positions: Mapping[str, np.ndarray]) -> pa.Table:
    """The rows for a TRIAD submission from its pool positions (`positions[config][q, r]`, gold query order)."""
    rows: dict[str, list[Any]] = {name: [] for name in SCHEMA.names}
    for config, order in positions.items():
        labels = gold.columnar(config).labels
        for q, row in enumerate(gold.rows[config]):
            pool = row["candidate_ids"]
            ranked = order[q][: len(pool)]
            rows["config"].append(config)
            rows["query_id"].append(row["query_id"])
            rows["top_ids"].append([pool[int(p)] for p in ranked[:TOP_STORED]])
            rows["positive_ranks"].append((np.flatnonzero(labels[q][ranked]) + 1).astype(np.int32).tolist())
    return pa.table(rows, schema=SCHEMA)


def ark_table(parsed: Any, scored: Mapping[str, Any]) -> pa.Table:
    """The rows for an ARK submission: its listed top ids and the server-checked positive rank."""
    rows: dict[str, list[Any]] = {name: [] for name in SCHEMA.names}
    for subtype, ranking in parsed.rankings.items():
        ranks = scored[subtype]["positive_rank"]
        for i, qid in enumerate(ranking.query_ids):
            rows["config"].append(subtype)
            rows["query_id"].append(qid)
            rows["top_ids"].append(ranking.ranked(i)[:TOP_STORED])
            rows["positive_ranks"].append([int(ranks[qid])])
    return pa.table(rows, schema=SCHEMA)


def save(db_path: str | Path, submission_id: int, table: pa.Table) -> Path:
    """Write the submission's explorer file atomically (a reader never sees half of it)."""
    path = file_of(db_path, submission_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def stage(db_path: str | Path, table: pa.Table) -> Path:
    """Write a submission's explorer file under a temporary name, before its row is committed."""
    folder = directory(db_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f".staged-{uuid.uuid4().hex}.parquet"
    try:
        pq.write_table(table, path)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path


def commit(staged: Path, db_path: str | Path, submission_id: int) -> Path:
    """Give a staged explorer file its submission's name (a rename: no new space needed)."""
    path = file_of(db_path, submission_id)
    os.replace(staged, path)
    return path


def discard(staged: Path) -> None:
    """Remove a staged file whose row was not stored (and its folder when nothing else is in it)."""
    staged.unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # other files are there
        staged.parent.rmdir()


def save_bytes(db_path: str | Path, submission_id: int, data: bytes) -> Path:
    """Write a submission's explorer file from parquet bytes (a reference run's kept table), atomically."""
    path = file_of(db_path, submission_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def remove(db_path: str | Path, submission_id: int) -> None:
    """Delete the submission's explorer file, if any."""
    file_of(db_path, submission_id).unlink(missing_ok=True)


def load(db_path: str | Path, submission_id: int, config: str) -> tuple[dict[str, QueryRanking], dict[str, list[int]]]:
    """(query id -> its stored top ids, query id -> its positives' ranks) for one config; empty when not stored."""
    path = file_of(db_path, submission_id)
    if not path.is_file():
        return {}, {}
    table = pq.read_table(path, filters=[("config", "=", config)])
    tops, ranks = {}, {}
    for qid, ids, positive in zip(
        table.column("query_id").to_pylist(),
        table.column("top_ids").to_pylist(),
        table.column("positive_ranks").to_pylist(),
        strict=True,
    ):
        tops[qid] = QueryRanking(ids, None, positive[0] if len(positive) == 1 else None)
        ranks[qid] = positive
    return tops, ranks
