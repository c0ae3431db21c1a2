"""Checks of ARK tables and folders (`triad validate` on a folder whose audit says "benchmark": "ark").

One message per violation, `"<subtype> / <id>: what is wrong"`:

- every `<subtype>` has its `<subtype>_gallery` and the reverse; config names are known;
- ids are present and unique (queries within a subtype, items within a gallery);
- each query has exactly one positive, which exists in the subtype's gallery (ARK §3.1: one positive per query);
- hard negatives exist in the gallery, differ from the positive and are not repeated;
- domain matches the subtype, cognitive demand and reasoning skills come from the allowed sets (ARK §3.2);
- a query has text or an image; an item's `modality` says which of text and image it has.

>>> validate_tables({"calendar": [], "calendar_gallery": []})
[]
>>> validate_tables({"calendar": []})
['calendar: no calendar_gallery config for these queries']
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ark_dataset.features import GALLERY_COLUMNS, QUERY_COLUMNS, split_config
from ark_dataset.names import COGNITIVE_DEMANDS, GALLERY_SUFFIX, MODALITIES, REASONING_SKILLS, SUBTYPE_DOMAIN

Row = Mapping[str, Any]


def _has(value: Any) -> bool:
    """A text or image cell counts as present when it is non-empty (images: a dict with bytes, or raw bytes)."""
    if isinstance(value, Mapping):
        return value.get("bytes") is not None or bool(value.get("path"))
    return value is not None and value != ""


def expected_modality(has_text: bool, has_image: bool) -> str | None:
    """`text`, `image`, `text_image`, or None when the item has neither."""
    if has_text and has_image:
        return "text_image"
    if has_text:
        return "text"
    return "image" if has_image else None


def check_gallery(subtype: str, items: Sequence[Row]) -> tuple[list[str], set[str]]:
    """Messages about the gallery rows, and the set of valid item ids."""
    problems: list[str] = []
    counts = Counter(row.get("item_id") for row in items)
    reported: set[str] = set()
    for number, row in enumerate(items):
        item_id = row.get("item_id")
        if not isinstance(item_id, str) or not item_id:
            problems.append(f"{subtype}{GALLERY_SUFFIX} / row {number}: missing item_id")
            continue
        where = f"{subtype}{GALLERY_SUFFIX} / {item_id}"
        if counts[item_id] > 1 and item_id not in reported:
            reported.add(item_id)
            problems.append(f"{where}: duplicate item_id ({counts[item_id]} rows)")
        modality = row.get("modality")
        expected = expected_modality(_has(row.get("text")), _has(row.get("image")))
        if expected is None:
            problems.append(f"{where}: item has neither text nor image")
        elif modality not in MODALITIES:
            problems.append(f"{where}: unknown modality {modality!r} (allowed: {', '.join(MODALITIES)})")
        elif modality != expected:
            problems.append(f"{where}: modality {modality!r} but the item has {expected.replace('_', ' and ')}")
    return problems, {row["item_id"] for row in items if isinstance(row.get("item_id"), str) and row["item_id"]}


def check_query(subtype: str, row: Row, gallery: set[str] | None) -> list[str]:
    """Messages about one query row; `gallery=None` skips the membership checks (no gallery config)."""
    where = f"{subtype} / {row.get('query_id')}"
    problems: list[str] = []
    if row.get("domain") != SUBTYPE_DOMAIN[subtype]:  # ARK Table 1: each subtype belongs to one domain
        problems.append(f"{where}: domain {row.get('domain')!r}, expected {SUBTYPE_DOMAIN[subtype]!r}")
    if row.get("subtype") != subtype:
        problems.append(f"{where}: subtype {row.get('subtype')!r} in config {subtype!r}")
    if not _has(row.get("query_text")) and not _has(row.get("query_image")):
        problems.append(f"{where}: query has neither text nor image")
    positive = row.get("positive_id")
    if not isinstance(positive, str) or not positive:  # ARK §3.1: exactly one positive per query
        problems.append(f"{where}: no positive_id (each query has exactly one positive)")
        positive = None
    elif gallery is not None and positive not in gallery:
        problems.append(f"{where}: positive {positive!r} is not in {subtype}{GALLERY_SUFFIX}")
    negatives = row.get("hard_negative_ids") or []
    for negative, count in Counter(negatives).items():
        if negative == positive:
            problems.append(f"{where}: hard negative {negative!r} is the positive")
        elif gallery is not None and negative not in gallery:
            problems.append(f"{where}: hard negative {negative!r} is not in {subtype}{GALLERY_SUFFIX}")
        if count > 1:
            problems.append(f"{where}: hard negative {negative!r} listed {count} times")
    demand = row.get("cognitive_demand")
    if demand not in COGNITIVE_DEMANDS:  # ARK §3.2 cognitive demand
        problems.append(f"{where}: unknown cognitive_demand {demand!r} (allowed: {', '.join(COGNITIVE_DEMANDS)})")
    skills = row.get("reasoning_skills") or []
    if not skills:  # ARK §3.2: one or more reasoning skills
        problems.append(f"{where}: no reasoning_skills (allowed: {', '.join(REASONING_SKILLS)})")
    for skill, count in Counter(skills).items():
        if skill not in REASONING_SKILLS:
            problems.append(f"{where}: unknown reasoning skill {skill!r} (allowed: {', '.join(REASONING_SKILLS)})")
        elif count > 1:
            problems.append(f"{where}: reasoning skill {skill!r} listed {count} times")
    return problems


def _pair_configs(configs: Sequence[str]) -> tuple[list[str], list[str]]:
    """(subtypes with a queries config, messages about unknown or unpaired configs)."""
    problems: list[str] = []
    queries: list[str] = []
    galleries: set[str] = set()
    for config in configs:
        try:
            subtype, is_gallery = split_config(config)
        except ValueError as exc:
            problems.append(f"{config}: {exc}")
            continue
        (galleries.add(subtype) if is_gallery else queries.append(subtype))
    problems += [f"{s}: no {s}{GALLERY_SUFFIX} config for these queries" for s in queries if s not in galleries]
    problems += [f"{s}{GALLERY_SUFFIX}: gallery without a {s} queries config" for s in sorted(galleries - set(queries))]
    return queries, problems


def validate_tables(tables: Mapping[str, Sequence[Row]]) -> list[str]:
    """All violations in in-memory tables (config -> rows), in config order."""
    subtypes, problems = _pair_configs(list(tables))
    for subtype in subtypes:
        gallery_rows = tables.get(subtype + GALLERY_SUFFIX)
        gallery = None
        if gallery_rows is not None:
            gallery_problems, gallery = check_gallery(subtype, gallery_rows)
            problems += gallery_problems
        rows = tables[subtype]
        counts = Counter(row.get("query_id") for row in rows)
        reported: set[str] = set()
        for number, row in enumerate(rows):
            query_id = row.get("query_id")
            if not isinstance(query_id, str) or not query_id:
                problems.append(f"{subtype} / row {number}: missing query_id")
                continue
            if counts[query_id] > 1 and query_id not in reported:
                reported.add(query_id)
                problems.append(f"{subtype} / {query_id}: duplicate query_id ({counts[query_id]} rows)")
            problems += check_query(subtype, row, gallery)
    return problems


def _read_config(directory: str | os.PathLike, config: str, columns: Sequence[str]) -> tuple[list[dict], list[str]]:
    """Rows of one config with image cells reduced to presence flags (no image bytes copied into Python)."""
    import pyarrow.compute as pc

    from triad_dataset.folder.io import read_table

    table = read_table(directory, config)
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        return [], [f"{config}: missing columns {missing}"]
    images = [c for c in ("query_image", "image") if c in columns]
    rows = table.select([c for c in columns if c not in images]).to_pylist()
    for column in images:
        present = pc.is_valid(pc.struct_field(table.column(column), "bytes")).to_pylist()
        for row, has in zip(rows, present, strict=True):
            row[column] = {"bytes": b"" if has else None, "path": None}
    return rows, []


def validate_folder(directory: str | os.PathLike) -> list[str]:
    """All violations of an ARK dataset folder; [] when it is valid."""
    from triad_dataset.folder.io import list_configs, read_audit

    problems: list[str] = []
    benchmark = read_audit(directory).get("benchmark")
    if benchmark != "ark":
        problems.append(f"{directory}: audit.json says benchmark {benchmark!r}, expected 'ark'")
    tables: dict[str, list[dict]] = {}
    for config in list_configs(directory):
        try:
            _, is_gallery = split_config(config)
        except ValueError:
            tables[config] = []  # reported as unknown by validate_tables
            continue
        rows, read_problems = _read_config(directory, config, GALLERY_COLUMNS if is_gallery else QUERY_COLUMNS)
        problems += read_problems
        tables[config] = rows
    return problems + validate_tables(tables)
