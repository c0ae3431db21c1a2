"""What a run must encode: every distinct model input over all requested configs, and each config's pools.

Candidates are shared across pools and across configs, so an item is identified by the hash of its exact
serialized input (`inputs.input_key`): each distinct input is encoded once, however many pools contain it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from model_adapters import inputs
from model_adapters.captioners.textspace import apply_caption
from model_adapters.protocol import ModelInput
from triad_dataset.errors import TriadError


@dataclass
class Item:
    role: str  # inputs.QUERY or inputs.CANDIDATE
    model_input: ModelInput
    label: str  # where it comes from, for error messages ("fashion_items item f12", "state_cars query q3")


@dataclass
class ConfigPlan:
    """One TRIAD config (fixed pools) or one ARK subtype (whole gallery)."""

    config: str
    rows: list[dict[str, Any]]  # gold query rows (SPEC §1 / §5)
    query_keys: list[str]
    pools: list[list[str]]  # TRIAD: pool item ids per query; ARK: [gallery ids] once
    pool_keys: list[list[str]]  # input keys aligned with pools
    positives: list[int] = field(default_factory=list)  # ARK: gallery position of each query's positive

    @property
    def pool_slots(self) -> int:
        return sum(len(p) for p in self.pools) if not self.positives else len(self.pools[0]) * len(self.rows)

    @property
    def distinct_keys(self) -> set[str]:
        return set(self.query_keys) | {k for keys in self.pool_keys for k in keys}


@dataclass
class Plan:
    benchmark: str
    configs: list[ConfigPlan]
    items: dict[str, Item]  # input key -> item, first-seen order
    candidate_inputs: dict[str, dict[str, ModelInput]] = field(default_factory=dict)  # corpus -> id -> input
    sees_images: bool = True  # False for text-only models: their inputs (and keys) carry no image
    candidate_keys: dict[str, dict[str, str]] = field(default_factory=dict)  # corpus -> id -> input key
    captions: Any = None  # ARK text-space runs: a captioners.textspace.Captions applied to every row's input

    def add(self, role: str, model_input: ModelInput, label: str) -> str:
        if not self.sees_images and model_input.image is not None:
            model_input = replace(model_input, image=None)
        key = inputs.input_key(role, model_input)
        if key not in self.items:
            self.items[key] = Item(role, model_input, label)
        return key


IMAGE_COLUMNS = ("image", "query_image")


def _read_rows(data: str, config: str, *, images: bool = True) -> list[dict[str, Any]]:
    """Rows of one config; without `images` the image columns are not read at all (text-only models)."""
    from triad_dataset.folder import read_rows

    if images:
        return read_rows(data, config)
    names = _column_names(data, config)
    return read_rows(data, config, [c for c in names if c not in IMAGE_COLUMNS])


def _column_names(data: str, config: str) -> list[str]:
    import pyarrow.parquet as pq

    from triad_dataset.folder import shard_paths

    return list(pq.read_schema(shard_paths(data, config)[0]).names)


def _corpus(plan: Plan, data: str, corpus: str) -> dict[str, ModelInput]:
    if corpus not in plan.candidate_inputs:
        rows = _read_rows(data, corpus, images=plan.sees_images)
        plan.candidate_inputs[corpus] = {
            row["item_id"]: apply_caption(plan.captions, corpus, row, inputs.candidate_input(row)) for row in rows}
    return plan.candidate_inputs[corpus]


def _candidate_keys(plan: Plan, corpus: str, table: Mapping[str, ModelInput], ids: Sequence[str], where: str
                    ) -> list[str]:
    known = plan.candidate_keys.setdefault(corpus, {})  # each corpus item is hashed once, however many pools
    keys = []
    for cid in ids:
        key = known.get(cid)
        if key is None:
            item = table.get(cid)
            if item is None:
                raise TriadError(f"{where}: candidate id {cid!r} is not in corpus {corpus}")
            key = known[cid] = plan.add(inputs.CANDIDATE, item, f"{corpus} item {cid}")
        keys.append(key)
    return keys


def plan_triad(data: str, configs: Sequence[str], *, variant: str, limit: int | None, sees_images: bool = True
               ) -> Plan:
    from triad_dataset.names import CANDIDATE_CORPUS

    plan = Plan("triad", [], {}, sees_images=sees_images)
    for config in configs:
        rows = _read_rows(data, config, images=sees_images)[:limit]
        inputs.check_variant(variant, config, has_images=any(r.get("query_image") for r in rows))
        corpus = CANDIDATE_CORPUS[config]
        table = _corpus(plan, data, corpus)
        query_keys, pools, pool_keys = [], [], []
        for row in rows:
            qid = row["query_id"]
            query_keys.append(plan.add(inputs.QUERY, inputs.query_input(row, variant), f"{config} query {qid}"))
            ids = list(row["candidate_ids"])
            pools.append(ids)
            pool_keys.append(_candidate_keys(plan, corpus, table, ids, f"{config} query {qid}"))
        plan.configs.append(ConfigPlan(config, rows, query_keys, pools, pool_keys))
    return plan


def load_rewrites(path: str | None) -> dict[str, str]:
    """Rewritten ARK queries from JSON Lines: one {"query_id": str, "query_text": str} object per line."""
    if not path:
        return {}
    out: dict[str, str] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise TriadError(f"{path}: cannot read the rewrites file ({exc})") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TriadError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
        if not isinstance(obj, dict) or not isinstance(obj.get("query_id"), str) or not isinstance(
                obj.get("query_text"), str):
            raise TriadError(f"{path}:{number}: expected {{\"query_id\": str, \"query_text\": str}}")
        if obj["query_id"] in out:
            raise TriadError(f"{path}:{number}: query_id {obj['query_id']!r} rewritten twice")
        out[obj["query_id"]] = obj["query_text"]
    return out


def plan_ark(data: str, subtypes: Sequence[str], *, variant: str, limit: int | None,
             rewrites: Mapping[str, str] | None = None, sees_images: bool = True, captions: Any = None) -> Plan:
    from ark_dataset.names import GALLERY_SUFFIX

    rewrites = dict(rewrites or {})
    plan = Plan("ark", [], {}, sees_images=sees_images, captions=captions)
    used: set[str] = set()
    for subtype in subtypes:
        rows = _read_rows(data, subtype, images=sees_images)[:limit]
        inputs.check_variant(variant, subtype, benchmark="ark", has_images=any(r.get("query_image") for r in rows))
        gallery = subtype + GALLERY_SUFFIX
        table = _corpus(plan, data, gallery)
        ids = list(table)
        position = {cid: i for i, cid in enumerate(ids)}
        keys = _candidate_keys(plan, gallery, table, ids, gallery)
        query_keys, positives = [], []
        for row in rows:
            qid = row["query_id"]
            if row.get("positive_id") not in position:
                raise TriadError(f"{subtype} query {qid}: positive {row.get('positive_id')!r} is not in {gallery}")
            positives.append(position[row["positive_id"]])
            text = rewrites.get(qid)
            used.update([qid] if text is not None else [])
            query = apply_caption(plan.captions if variant == inputs.FULL else None, subtype, row, inputs.query_input(row, variant, text=text))
            query_keys.append(plan.add(inputs.QUERY, query, f"{subtype} query {qid}"))
        plan.configs.append(ConfigPlan(subtype, rows, query_keys, [ids], [keys], positives))
    unused = sorted(set(rewrites) - used)
    if unused and limit is None:
        raise TriadError(f"rewrites name {len(unused)} query ids that are not in the selected subtypes "
                         f"(first: {unused[0]!r})")
    return plan
