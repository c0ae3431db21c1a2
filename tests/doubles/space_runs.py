"""Synthetic gold folders and run folders for the Space's tests and benchmark (seeded, no images needed).

The gold rows follow docs/protocol.md §1 (pools, roles, traps, hops, profiles, sessions); the run folders follow CONTRACTS §3
(``rankings/<config>.parquet`` + ``results.json`` scored by ``metrics.scoring``), i.e. what `triad run` writes.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ark_dataset import names as ark_names
from triad_dataset.contract import names as n

ARK_TOP = 100  # CONTRACTS §3: ARK runs keep the top 100 of the whole-gallery ranking


def _pick_roles(rng: np.random.Generator, size: int, n_pos: int, negatives: Sequence[str]) -> list[str]:
    roles = np.array([n.POSITIVE] * n_pos + list(np.asarray(negatives)[rng.integers(0, len(negatives), size - n_pos)]))
    return roles[rng.permutation(size)].tolist()


def triad_tables(
    n_queries: int = 6,
    pool_size: int = 12,
    *,
    seed: int = 0,
    configs: Sequence[str] = n.TASK_CONFIGS,
    corpus_size: int | None = None,
) -> dict[str, list[dict]]:
    """Query rows per TRIAD task config with random pools and the metadata each config's diagnostics read."""
    rng = np.random.default_rng(seed)
    corpus = corpus_size or max(2 * pool_size, 20)
    profiles = list(n.PROFILES)
    tables: dict[str, list[dict]] = {}
    for config in configs:
        corpus_name = n.CANDIDATE_CORPUS[config]
        corpus_ids = np.array([f"{corpus_name}-{i:06d}" for i in range(corpus)], dtype=object)
        rows = []
        for q in range(n_queries):
            # constraints and state queries with the same id are a pair (docs/protocol.md §1)
            qid = f"q{q:05d}" if config in n.CONSTRAINTS_CONFIGS + n.STATE_CONFIGS else f"{config[:3]}{q:05d}"
            ids = corpus_ids[rng.permutation(corpus)[:pool_size]].tolist()
            row: dict[str, Any] = {"query_id": qid, "task": config, "query_text": f"query {q}", "candidate_ids": ids}
            if config in n.SELF_CONFIGS:
                roles = _pick_roles(rng, pool_size, 1, [n.RANDOM, n.SIBLING])
            elif config in n.SAME_CONFIGS:
                roles = _pick_roles(rng, pool_size, int(rng.integers(1, 3)), [n.VISUAL, n.RANDOM])
            elif config == n.ABSTRACTION_CONFIGS[0]:
                roles = _pick_roles(rng, pool_size, int(rng.integers(1, 4)), [n.SIBLING, n.RANDOM])
            elif config == n.ABSTRACTION_CONFIGS[1]:
                roles = _pick_roles(rng, pool_size, min(n.C2I_POSITIVES, pool_size // 2), [n.SIBLING, n.RANDOM])
                row["depth"] = int(rng.integers(5, 9))
            else:
                roles = _pick_roles(
                    rng,
                    pool_size,
                    int(rng.integers(1, 4)),
                    [n.P_VIOLATION, n.N_VIOLATION, n.PN_VIOLATION, n.IMPLICIT_VIOLATION, n.VISUAL, n.RANDOM],
                )
            row["candidate_roles"] = roles
            row["positive_ids"] = [c for c, r in zip(ids, roles, strict=True) if r == n.POSITIVE]
            row["candidate_trap"] = [False] * pool_size
            if config == n.ABSTRACTION_CONFIGS[0]:
                row["positive_hops"] = [1 + (i % 2) for i in range(len(row["positive_ids"]))]
            if config in n.CONSTRAINTS_CONFIGS + n.STATE_CONFIGS:
                profile = profiles[q % len(profiles)]
                n_p, n_n = n.PROFILES[profile]
                row["profile"] = profile
                row["conditions"] = [
                    {"attribute": f"a{i}", "polarity": pol, "value": f"v{i}", "old_value": None}
                    for i, pol in enumerate(["P"] * n_p + ["N"] * n_n)
                ]
            if config in n.STATE_CONFIGS:
                session = n.SESSION_TYPES[q % 2]
                row["session_type"], row["num_turns"] = session, 2 + (q // 2) % 2
                row["turns"] = [f"turn {t}" for t in range(row["num_turns"])]
                row["source_query_id"] = qid
                if session == n.SESSION_TYPES[1]:  # conflict sessions carry trap-flagged negatives
                    neg = [i for i, r in enumerate(roles) if r != n.POSITIVE]
                    for i in neg[:2]:
                        row["candidate_trap"][i] = True
                        roles[i] = n.CONFLICT_TRAP
            rows.append(row)
        tables[config] = rows
    return tables


def corpus_tables(tables: Mapping[str, list[dict]]) -> dict[str, list[dict]]:
    """Text-only corpus rows for every candidate id the task rows use (enough for `triad run` to encode them)."""
    ids: dict[str, set[str]] = {}
    for config, rows in tables.items():
        for r in rows:
            ids.setdefault(n.CANDIDATE_CORPUS[config], set()).update(r["candidate_ids"])
    return {
        corpus: [{"item_id": i, "text": f"item {i}", "image": None, "attributes": {}} for i in sorted(found)]
        for corpus, found in ids.items()
    }


def write_triad_gold(
    out_dir: str | Path, tables: Mapping[str, list[dict]], pool_size: int, *, with_corpora: bool = False
) -> Path:
    """A TRIAD dataset folder (CONTRACTS §1): the task configs, plus text-only corpora when a runner must read it."""
    from triad_dataset.contract.features import features_for
    from triad_dataset.folder.io import write_folder

    all_tables = {**tables, **(corpus_tables(tables) if with_corpora else {})}
    write_folder(
        out_dir,
        all_tables,
        features={c: features_for(c) for c in all_tables},
        card="# Synthetic TRIAD gold",
        audit={"benchmark": "triad", "pool_size": pool_size},
        overwrite=True,
    )
    return Path(out_dir)


def ark_tables(
    n_queries: int = 5, gallery_size: int = 30, *, seed: int = 0, subtypes: Sequence[str] = ark_names.SUBTYPES[:3]
) -> dict[str, list[dict]]:
    """ARK queries and gallery rows for a few subtypes (one positive per query, hard negatives in the gallery)."""
    rng = np.random.default_rng(seed)
    tables: dict[str, list[dict]] = {}
    for s in subtypes:
        gallery = [f"{s}-g{i:04d}" for i in range(gallery_size)]
        tables[s + ark_names.GALLERY_SUFFIX] = [
            {"item_id": g, "text": f"item {g}", "image": None, "modality": ark_names.MODALITIES[0]} for g in gallery
        ]
        rows = []
        for q in range(n_queries):
            pos, *negs = rng.choice(gallery, size=3, replace=False).tolist()
            rows.append(
                {
                    "query_id": f"{s}-q{q:03d}",
                    "domain": ark_names.SUBTYPE_DOMAIN[s],
                    "subtype": s,
                    "query_text": f"question {q}",
                    "query_image": None,
                    "positive_id": pos,
                    "hard_negative_ids": negs,
                    "cognitive_demand": ark_names.COGNITIVE_DEMANDS[q % len(ark_names.COGNITIVE_DEMANDS)],
                    "reasoning_skills": [ark_names.REASONING_SKILLS[q % len(ark_names.REASONING_SKILLS)]],
                }
            )
        tables[s] = rows
    return tables


def write_ark_gold(out_dir: str | Path, tables: Mapping[str, list[dict]]) -> Path:
    from ark_dataset.features import features_for
    from triad_dataset.folder.io import write_folder

    write_folder(
        out_dir,
        dict(tables),
        features={c: features_for(c) for c in tables},
        card="# Synthetic ARK gold",
        audit={"benchmark": "ark"},
        overwrite=True,
    )
    return Path(out_dir)


# --- rankings and run folders ---------------------------------------------------------------------------------
def random_rankings(
    tables: Mapping[str, list[dict]], *, seed: int = 0, configs: Sequence[str] | None = None
) -> dict[str, dict[str, list[str]]]:
    """config -> query_id -> a random permutation of that query's pool."""
    rng = np.random.default_rng(seed)
    out = {}
    for c in configs or [c for c in tables if c in n.TASK_CONFIGS]:
        out[c] = {
            r["query_id"]: [r["candidate_ids"][i] for i in rng.permutation(len(r["candidate_ids"]))] for r in tables[c]
        }
    return out


def ark_random_rankings(tables: Mapping[str, list[dict]], *, seed: int = 0) -> dict[str, dict[str, list[str]]]:
    """subtype -> query_id -> a random ordering of the whole gallery (the writer keeps the top 100)."""
    rng = np.random.default_rng(seed)
    out = {}
    for s in [s for s in tables if s in ark_names.SUBTYPES]:
        gallery = [g["item_id"] for g in tables[s + ark_names.GALLERY_SUFFIX]]
        out[s] = {r["query_id"]: [gallery[i] for i in rng.permutation(len(gallery))] for r in tables[s]}
    return out


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def ranking_table(
    ranking: Mapping[str, Sequence[str]], *, top: int | None = None, positives: Mapping[str, str] | None = None
) -> pa.Table:
    """The CONTRACTS §3 rankings table: query_id, candidate_ids (best first), scores (descending)[, positive_rank]."""
    qids = list(ranking)
    cands = [list(ranking[q])[:top] if top else list(ranking[q]) for q in qids]
    scores = [np.linspace(1.0, 0.0, num=len(c)).tolist() for c in cands]
    cols: dict[str, Any] = {
        "query_id": pa.array(qids, pa.string()),
        "candidate_ids": pa.array(cands, pa.list_(pa.string())),
        "scores": pa.array(scores, pa.list_(pa.float64())),
    }
    if positives is not None:
        cols["positive_rank"] = pa.array([list(ranking[q]).index(positives[q]) + 1 for q in qids], pa.int64())
    return pa.table(cols)


def parquet_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def write_run(
    out_dir: str | Path,
    tables: Mapping[str, list[dict]],
    rankings: Mapping[str, Mapping[str, Sequence[str]]],
    *,
    benchmark: str = "triad",
    model: str = "synthetic",
    fingerprint: str = "",
) -> Path:
    """A run folder like `triad run` writes: rankings/<config>.parquet and results.json scored by metrics.scoring."""
    from metrics import scoring

    out = Path(out_dir)
    gold = {c: tables[c] for c in rankings}
    if benchmark == "triad":
        scored = scoring.score_triad(gold, rankings)
        for c, r in rankings.items():
            _atomic_write(out / "rankings" / f"{c}.parquet", parquet_bytes(ranking_table(r)))
    else:
        positives = {c: {r["query_id"]: r["positive_id"] for r in tables[c]} for c in rankings}
        scored = scoring.score_ark(gold, rankings)
        for c, r in rankings.items():
            _atomic_write(
                out / "rankings" / f"{c}.parquet", parquet_bytes(ranking_table(r, top=ARK_TOP, positives=positives[c]))
            )
    configs = {c: {k: val for k, val in scored[c].items()} for c in rankings}
    results = {
        "benchmark": benchmark,
        "model": {"name": model},
        "variant": "full",
        "dataset": {"path": "", "fingerprint": fingerprint},
        "configs": configs,
        "summary": {k: val for k, val in scored.items() if k not in rankings},
        "run": {},
    }
    _atomic_write(out / "results.json", json.dumps(results, indent=1).encode())
    return out


def skilled_rankings(
    tables: Mapping[str, list[dict]], skill: float, *, seed: int = 0
) -> dict[str, dict[str, list[str]]]:
    """config -> query_id -> the pool ranked by a noisy model: each candidate scores N(0, 1), plus ``skill`` for a
    positive (0: a random ranking; a larger skill ranks positives higher)."""
    rng = np.random.default_rng(seed)
    out: dict[str, dict[str, list[str]]] = {}
    for c in [c for c in tables if c in n.TASK_CONFIGS]:
        out[c] = {}
        for r in tables[c]:
            pos = set(r["positive_ids"])
            score = np.array([skill * (x in pos) for x in r["candidate_ids"]]) + rng.normal(
                size=len(r["candidate_ids"])
            )
            out[c][r["query_id"]] = [r["candidate_ids"][i] for i in np.argsort(-score, kind="stable")]
    return out


def ark_skilled_rankings(
    tables: Mapping[str, list[dict]], skill: float, *, seed: int = 0
) -> dict[str, dict[str, list[str]]]:
    """subtype -> query_id -> the whole gallery ranked as `skilled_rankings` ranks a pool (one positive)."""
    rng = np.random.default_rng(seed)
    out: dict[str, dict[str, list[str]]] = {}
    for s in [s for s in tables if s in ark_names.SUBTYPES]:
        gallery = [g["item_id"] for g in tables[s + ark_names.GALLERY_SUFFIX]]
        out[s] = {}
        for r in tables[s]:
            score = np.array([skill * (g == r["positive_id"]) for g in gallery]) + rng.normal(size=len(gallery))
            out[s][r["query_id"]] = [gallery[i] for i in np.argsort(-score, kind="stable")]
    return out
