"""Pool scaling (paper A.5): strictly nested 1k ⊂ 3k ⊂ eligible-full pools for the constraints subsets.

Each query keeps its whole original pool (every positive and typed negative, in order) and appends products drawn
from its eligible set: corpus items that fail the complete positive rule (so label-matching potential positives —
positives and near-synonym matches — are excluded) and are not the query image. The added order is one seeded
permutation per query (seed 2027 by default, keyed by query id), so a 3k pool is a prefix of the full pool and
every size shares one manifest. Added candidates get the role `random`.

`scale_rows` works on rows in memory; `scale_folder` reads a built folder and writes a new one holding the scaled
constraints configs, their paired state configs (scaled the same way, so the folder keeps the constraints/state
pairing that `triad validate` checks; pass `configs=` to choose) and their corpora. `audit.json` records
`pool_size` (null for the eligible-full pool) and `pool_scaling` (seed, source fingerprint, pool figures).
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from triad_dataset.contract import names
from triad_dataset.contract.errors import TriadError
from triad_dataset.contract.rule import Condition
from triad_dataset.contract.schema import NOT_APPLICABLE
from triad_dataset.sources.catalog import Catalog, Item
from triad_dataset.tracks.constraints_gate import statuses

SCALING_SEED = 2027  # paper A.5: "the 3k pool uses deterministic sampling with seed 2027"
DOMAIN_OF = {
    **{c: d for c, d in zip(names.CONSTRAINTS_CONFIGS, names.DOMAINS, strict=True)},
    **{c: d for c, d in zip(names.STATE_CONFIGS, names.DOMAINS, strict=True)},
}


def catalog_from_corpus(domain: str, corpus_rows: Sequence[Mapping[str, Any]]) -> Catalog:
    """A Catalog from `<d>_items` rows: hidden `attributes` JSON plus the visible field columns."""
    items = []
    for row in corpus_rows:
        hidden = row["attributes"]
        attributes = json.loads(hidden) if isinstance(hidden, str) else dict(hidden or {})
        for f in names.VISIBLE_PRODUCT_FIELDS[domain]:
            attributes[f] = row.get(f) or NOT_APPLICABLE
        items.append(Item(row["item_id"], row.get("product_id") or row["item_id"], attributes))
    return Catalog(domain, items, source=names.DOMAIN_CORPUS[domain])


def _query_rng(query_id: str, seed: int) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(query_id.encode("utf-8"))])


def eligible_additions(catalog: Catalog, row: Mapping[str, Any], seed: int = SCALING_SEED) -> np.ndarray:
    """Catalog positions that may be added to a query's pool, in the query's fixed seeded order."""
    index = catalog.index
    if row["query_image_id"] not in index:
        raise ValueError(f"{row['query_id']}: query image {row['query_image_id']!r} is not in the corpus")
    reference = index[row["query_image_id"]]
    conditions = [Condition.from_row(c) for c in row["conditions"] or []]
    eligible = statuses(catalog, reference, conditions).gate.copy()  # fails the complete positive rule
    eligible[reference] = False
    eligible[[index[i] for i in row["candidate_ids"]]] = False
    positions = np.flatnonzero(eligible)
    return positions[_query_rng(row["query_id"], seed).permutation(len(positions))]


def scale_rows(
    rows: Sequence[Mapping[str, Any]], catalog: Catalog, size: int | None, *, seed: int = SCALING_SEED
) -> list[dict[str, Any]]:
    """Rows with pools grown to `size` candidates (None: every eligible item), original candidates first."""
    out = []
    for row in rows:
        original = list(row["candidate_ids"])
        additions = eligible_additions(catalog, row, seed)
        if size is not None:
            if size < len(original):
                raise ValueError(f"{row['query_id']}: size {size} is below the original pool of {len(original)}")
            if size - len(original) > len(additions):
                raise ValueError(
                    f"{row['query_id']}: only {len(original) + len(additions)} eligible candidates, "
                    f"pool size {size} requested"
                )
            additions = additions[: size - len(original)]
        added = [catalog.items[int(p)].item_id for p in additions]
        new = dict(row)
        new["candidate_ids"] = original + added
        new["candidate_roles"] = list(row["candidate_roles"]) + [names.RANDOM] * len(added)
        new["candidate_trap"] = list(row["candidate_trap"]) + [False] * len(added)
        out.append(new)
    return out


def _kept_figures(audit: Mapping[str, Any], written: set[str]) -> dict[str, Any]:
    """The source audit without the figures of configs this folder does not contain (top level and one below)."""

    def keep(key: str) -> bool:
        return key in written or key not in names.ALL_CONFIGS

    return {
        k: ({kk: vv for kk, vv in v.items() if keep(kk)} if isinstance(v, Mapping) else v)
        for k, v in audit.items()
        if keep(k)
    }


def scale_folder(
    src_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    size: int | None,
    *,
    seed: int = SCALING_SEED,
    configs: Sequence[str] | None = None,
    overwrite: bool = False,
) -> Path:
    """Write `out_dir` with the product configs of `src_dir` scaled to `size` (None = eligible full).

    `configs` defaults to every constraints config present plus its paired state config when present.
    """
    from triad_dataset.contract.features import features_for
    from triad_dataset.folder import io as folder

    src_dir = Path(src_dir)
    present = folder.list_configs(src_dir)
    if configs is None:
        configs = [c for c in names.CONSTRAINTS_CONFIGS + names.STATE_CONFIGS if c in present]
    unknown = [c for c in configs if c not in DOMAIN_OF or c not in present]
    if unknown or not configs:
        raise TriadError(
            f"{src_dir}: cannot scale {unknown or 'nothing'}: pool scaling applies to constraints/state "
            f"configs present in the folder (found {', '.join(present) or 'none'})"
        )
    tables: dict[str, list[dict[str, Any]]] = {}
    figures: dict[str, Any] = {}
    catalogs: dict[str, Catalog] = {}
    for config in configs:
        domain = DOMAIN_OF[config]
        corpus = names.DOMAIN_CORPUS[domain]
        if corpus not in present:
            raise TriadError(f"{src_dir}: {config} needs its corpus {corpus}, which is missing")
        if corpus not in tables:
            tables[corpus] = folder.read_rows(src_dir, corpus)
        if domain not in catalogs:
            catalogs[domain] = catalog_from_corpus(domain, tables[corpus])
        catalog = catalogs[domain]
        scaled = scale_rows(folder.read_rows(src_dir, config), catalog, size, seed=seed)
        lengths = [len(r["candidate_ids"]) for r in scaled]
        tables[config] = scaled
        figures[config] = {
            "queries": len(scaled),
            "min_pool": min(lengths),
            "max_pool": max(lengths),
            "mean_pool": round(float(np.mean(lengths)), 2),
        }
    source_audit = folder.read_audit(src_dir) if (src_dir / folder.AUDIT_NAME).is_file() else {}
    audit = _kept_figures(source_audit, set(tables))
    if "summary" in audit:  # the folder-level row summary (triad_dataset.folder.audit), recomputed on the new pools
        from triad_dataset.folder.audit import summarize

        audit["summary"] = summarize(tables)
    audit.update(
        benchmark="triad",
        pool_size=size,
        pool_scaling={
            "source_fingerprint": folder.fingerprint(src_dir),
            "seed": seed,
            "size": size if size is not None else "eligible-full",
            "configs": figures,
        },
    )
    card_path = src_dir / folder.CARD_NAME
    meta, body = folder.split_front_matter(card_path.read_text(encoding="utf-8")) if card_path.is_file() else ({}, "")
    kept = {k: v for k, v in meta.items() if k.startswith("license") or k in ("language", "task_categories", "tags")}
    front = f"---\n{yaml.safe_dump(kept, sort_keys=False, allow_unicode=True)}---\n\n" if kept else ""
    card = (
        f"{front}# Pool-scaled TRIAD constraints subsets ({audit['pool_scaling']['size']} candidates)\n\n"
        "Built by `triad_dataset.editions.pool_scaling` (paper Appendix A.5): each query keeps its original 1,000 "
        "candidates and appends products that fail the complete positive rule, in a fixed order seeded with "
        f"{seed}; pools of different sizes are nested.\n\n{body}"
    )
    licence_path = src_dir / folder.LICENSE_NAME  # the source's licences apply to every item it copies
    licence = licence_path.read_text(encoding="utf-8") if licence_path.is_file() else None
    features = {c: features_for(c) for c in tables}
    return folder.write_folder(
        out_dir, tables, features=features, card=card, audit=audit, overwrite=overwrite, licence=licence
    )
