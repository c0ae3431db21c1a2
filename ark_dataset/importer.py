"""Import an ARK release given as JSON Lines plus image files (`triad build ark --from DIR --out DIR`).

Expected layout (one folder per subtype; folder names in snake_case or the paper's spelling, e.g. `Spatial-Cogmap`)::

    SRC/<subtype>/queries.jsonl   one JSON object per line:
        query_id            string, unique within the subtype                          (required)
        query_text          string or null                                             (text and/or image)
        query_image         image path (relative to SRC/<subtype>/ or SRC/), or null   (text and/or image)
        positive_id         the item_id of the one positive (a one-element list is accepted)   (required)
        hard_negative_ids   list of item_ids (default [])
        cognitive_demand    perception_only | knowledge_intensive | reasoning_intensive | both (required)
        reasoning_skills    list (or one string) of knowledge, spatial, logical, symbolic,
                            fine_grained_visual, conceptual_abstraction                (required)
        domain, subtype     optional; when given they must match the folder
    SRC/<subtype>/gallery.jsonl   item_id (required), text (string or null), image (path or null), modality (optional)
    SRC/<subtype>/<any folders>/  the image files the rows point to (paths relative to SRC/<subtype>/, or to SRC/)

Labels are matched loosely: case, spaces and hyphens do not matter and a trailing "reasoning" is dropped, so
"Fine-Grained Visual Reasoning" reads as `fine_grained_visual` and "Both" as `both`. When the release names its
fields differently, `mapping` (CLI: `--map FIELD=SOURCE_FIELD`, repeatable) says where each field is read from,
e.g. `{"query_text": "question", "positive_id": "answer"}`; `query`, `positive`, `negatives`, `demand` and
`skills` are accepted as short names for the query fields.

Every problem is collected (file and line, subtype and id) and reported in one TriadError; nothing is written then.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ark_dataset.card import release_card, release_licence
from ark_dataset.features import features_for
from ark_dataset.names import COGNITIVE_DEMANDS, GALLERY_SUFFIX, REASONING_SKILLS, SUBTYPE_DOMAIN, SUBTYPES
from ark_dataset.validate import expected_modality, validate_tables
from triad_dataset.contract.errors import TriadError

QUERIES_FILE = "queries.jsonl"
GALLERY_FILE = "gallery.jsonl"
QUERY_FIELDS = (
    "query_id",
    "query_text",
    "query_image",
    "positive_id",
    "hard_negative_ids",
    "cognitive_demand",
    "reasoning_skills",
    "domain",
    "subtype",
)
GALLERY_FIELDS = ("item_id", "text", "image", "modality")
ALIASES = {
    "query": "query_text",
    "positive": "positive_id",
    "negatives": "hard_negative_ids",
    "demand": "cognitive_demand",
    "skills": "reasoning_skills",
}
DEMAND_SYNONYMS = {"both_knowledge_and_reasoning_intensive": "both", "knowledge_and_reasoning_intensive": "both"}
MAX_REPORTED = 30


def normalize_label(text: str) -> str:
    """Lower-case snake_case of a label or subtype name.

    >>> normalize_label("Fine-Grained Visual"), normalize_label("Humanities & Social Science")
    ('fine_grained_visual', 'humanities_social_science')
    """
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def parse_mapping(pairs: Iterable[str]) -> dict[str, str]:
    """`["query=question", "positive_id=answer"]` -> `{"query_text": "question", "positive_id": "answer"}`.

    >>> parse_mapping(["query=question"])
    {'query_text': 'question'}
    """
    mapping: dict[str, str] = {}
    for pair in pairs:
        field, sep, source = pair.partition("=")
        field, source = ALIASES.get(field.strip(), field.strip()), source.strip()
        if not sep or not source:
            raise TriadError(f"--map {pair!r}: expected FIELD=SOURCE_FIELD")
        if field not in QUERY_FIELDS + GALLERY_FIELDS:
            known = ", ".join(QUERY_FIELDS + GALLERY_FIELDS + tuple(ALIASES))
            raise TriadError(f"--map {pair!r}: unknown field {field!r} (fields: {known})")
        mapping[field] = source
    return mapping


class _Problems:
    """Collects messages; `raise_if_any` raises one TriadError listing them."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def add(self, message: str) -> None:
        self.messages.append(message)

    def raise_if_any(self, src: Path) -> None:
        if self.messages:
            shown = self.messages[:MAX_REPORTED]
            more = len(self.messages) - len(shown)
            tail = f"\n  ... and {more} more" if more else ""
            raise TriadError(f"{src}: {len(self.messages)} problem(s) in the release:\n  " + "\n  ".join(shown) + tail)


def _progress(rows: list, path: Path) -> Iterable:
    from tqdm.auto import tqdm

    return tqdm(rows, desc=f"{path.parent.name}/{path.name}", unit="row", leave=False, disable=len(rows) < 200)


def _read_jsonl(path: Path, problems: _Problems) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()  # tolerate a byte-order mark
    except UnicodeDecodeError as exc:
        problems.add(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})")
        return []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.add(f"{path}:{number}: invalid JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(row, dict):
            problems.add(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
            continue
        rows.append((number, row))
    return rows


def _field(row: Mapping[str, Any], field: str, mapping: Mapping[str, str]) -> Any:
    return row.get(mapping.get(field, field))


def _hint(row: Mapping[str, Any], fields: tuple[str, ...], mapping: Mapping[str, str]) -> str:
    """Names the row's fields nothing reads, so a missing-field message points at `--map`."""
    read = {mapping.get(f, f) for f in fields}
    unknown = sorted(k for k in row if k not in read)
    return f" (unrecognised fields: {', '.join(unknown)}; rename them with --map FIELD=SOURCE)" if unknown else ""


def _image_path(base: Path, value: str) -> Path | None:
    """The file a row's image path names: relative to SRC/<subtype>/, else to SRC/; None if it leaves SRC/."""
    root = base.parent.resolve()
    candidates = [(base / value).resolve(), (base.parent / value).resolve()]
    inside = [c for c in candidates if c.is_relative_to(root)]
    return next((c for c in inside if c.is_file()), inside[0] if inside else None)


def _load_image(base: Path, value: Any, where: str, problems: _Problems) -> dict[str, Any] | None:
    """Image cell from a relative path: the file's own bytes, after checking that it decodes."""
    from PIL import Image

    if value is None or value == "":
        return None
    if not isinstance(value, str):
        problems.add(f"{where}: image must be a relative file path, got {type(value).__name__}")
        return None
    path = _image_path(base, value)
    if path is None:
        problems.add(f"{where}: image path {value!r} leaves the release folder")
        return None
    try:
        data = path.read_bytes()
    except OSError as exc:
        problems.add(f"{where}: cannot read image {value!r} ({exc.strerror or exc})")
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # ARK metro maps are ~9858x9057
            limit, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, None
            try:
                with Image.open(path) as image:
                    image.draft("RGB", (max(1, image.width // 8), max(1, image.height // 8)))  # JPEG: decode at 1/8
                    image.load()
            finally:
                Image.MAX_IMAGE_PIXELS = limit
    except Exception as exc:  # noqa: BLE001 - Pillow raises many types for corrupt files
        problems.add(f"{where}: image {value!r} does not decode ({type(exc).__name__}: {exc})")
        return None
    return {"bytes": data, "path": path.name}


def _optional_text(value: Any, name: str, where: str, problems: _Problems) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        problems.add(f"{where}: {name} must be a string, got {type(value).__name__}")
        return None
    return value


def _read_gallery(subtype: str, path: Path, mapping: Mapping[str, str], problems: _Problems) -> list[dict[str, Any]]:
    items = []
    for number, row in _progress(_read_jsonl(path, problems), path):
        item_id = _field(row, "item_id", mapping)
        if not isinstance(item_id, str) or not item_id:
            problems.add(
                f"{path}:{number}: {subtype}: missing or non-string item_id{_hint(row, GALLERY_FIELDS, mapping)}"
            )
            continue
        where = f"{path}:{number}: {subtype}{GALLERY_SUFFIX} / {item_id}"
        text = _optional_text(_field(row, "text", mapping), "text", where, problems)
        image = _load_image(path.parent, _field(row, "image", mapping), where, problems)
        modality = expected_modality(text is not None, image is not None)
        if _field(row, "text", mapping) in (None, "") and _field(row, "image", mapping) in (None, ""):
            problems.add(f"{where}: item has neither text nor image{_hint(row, GALLERY_FIELDS, mapping)}")
        given = _field(row, "modality", mapping)
        if given is not None and modality is not None and normalize_label(str(given)) != modality:
            problems.add(f"{where}: modality {given!r} but the item has {modality.replace('_', ' and ')}")
        items.append({"item_id": item_id, "text": text, "image": image, "modality": modality})
    return items


def _positive(value: Any, where: str, problems: _Problems) -> str | None:
    """The single positive id; ARK §3.1: each query has exactly one positive."""
    if isinstance(value, list):
        if len(value) != 1:
            problems.add(f"{where}: {len(value)} positives given, each query has exactly one")
            return None
        value = value[0]
    if not isinstance(value, str) or not value:
        problems.add(f"{where}: missing positive_id (each query has exactly one positive)")
        return None
    return value


def _labels(
    row: Mapping[str, Any], mapping: Mapping[str, str], where: str, problems: _Problems
) -> tuple[str | None, list[str]]:
    demand_raw = _field(row, "cognitive_demand", mapping)
    demand = normalize_label(demand_raw) if isinstance(demand_raw, str) else None
    demand = DEMAND_SYNONYMS.get(demand, demand) if demand else None
    if demand not in COGNITIVE_DEMANDS:  # ARK §3.2 cognitive demand
        problems.add(f"{where}: unknown cognitive_demand {demand_raw!r} (allowed: {', '.join(COGNITIVE_DEMANDS)})")
        demand = None
    skills_raw = _field(row, "reasoning_skills", mapping)
    if isinstance(skills_raw, str):
        skills_raw = [skills_raw]
    if not isinstance(skills_raw, list) or not skills_raw:
        problems.add(f"{where}: reasoning_skills must be a non-empty list (allowed: {', '.join(REASONING_SKILLS)})")
        return demand, []
    skills = []
    for skill in skills_raw:
        name = normalize_label(skill) if isinstance(skill, str) else ""
        name = name.removesuffix("_reasoning")
        if name not in REASONING_SKILLS:  # ARK §3.2 reasoning skills
            problems.add(f"{where}: unknown reasoning skill {skill!r} (allowed: {', '.join(REASONING_SKILLS)})")
        elif name not in skills:
            skills.append(name)
    return demand, skills


def _read_queries(subtype: str, path: Path, mapping: Mapping[str, str], problems: _Problems) -> list[dict[str, Any]]:
    rows = []
    for number, row in _progress(_read_jsonl(path, problems), path):
        query_id = _field(row, "query_id", mapping)
        if not isinstance(query_id, str) or not query_id:
            problems.add(
                f"{path}:{number}: {subtype}: missing or non-string query_id{_hint(row, QUERY_FIELDS, mapping)}"
            )
            continue
        where = f"{path}:{number}: {subtype} / {query_id}"
        for name, expected in (("subtype", subtype), ("domain", SUBTYPE_DOMAIN[subtype])):
            given = _field(row, name, mapping)
            if given is not None and normalize_label(str(given)).replace("_and_", "_") != expected:
                problems.add(f"{where}: {name} {given!r} does not match the folder ({expected!r})")
        negatives = _field(row, "hard_negative_ids", mapping) or []
        if not isinstance(negatives, list) or not all(isinstance(n, str) and n for n in negatives):
            problems.add(f"{where}: hard_negative_ids must be a list of item ids")
            negatives = []
        demand, skills = _labels(row, mapping, where, problems)
        raw_text, raw_image = _field(row, "query_text", mapping), _field(row, "query_image", mapping)
        if raw_text in (None, "") and raw_image in (None, ""):
            problems.add(f"{where}: query has neither text nor image{_hint(row, QUERY_FIELDS, mapping)}")
        text = _optional_text(raw_text, "query_text", where, problems)
        image = _load_image(path.parent, raw_image, where, problems)
        rows.append(
            {
                "query_id": query_id,
                "domain": SUBTYPE_DOMAIN[subtype],
                "subtype": subtype,
                "query_text": text,
                "query_image": image,
                "positive_id": _positive(_field(row, "positive_id", mapping), where, problems),
                "hard_negative_ids": negatives,
                "cognitive_demand": demand,
                "reasoning_skills": skills,
            }
        )
    return rows


def _subtype_folders(src: Path, problems: _Problems) -> dict[str, Path]:
    folders: dict[str, Path] = {}
    for child in sorted(p for p in src.iterdir() if p.is_dir()):
        has_files = (child / QUERIES_FILE).exists() or (child / GALLERY_FILE).exists()
        if not has_files:
            continue
        subtype = normalize_label(child.name)
        if subtype not in SUBTYPES:
            problems.add(f"{child}: unknown subtype folder {child.name!r} (subtypes: {', '.join(SUBTYPES)})")
        elif subtype in folders:
            problems.add(f"{child}: subtype {subtype} given twice ({folders[subtype].name!r} and {child.name!r})")
        else:
            folders[subtype] = child
        for name in (QUERIES_FILE, GALLERY_FILE):
            if not (child / name).is_file():
                problems.add(f"{child}: missing {name}")
    return folders


def read_release(
    src_dir: str | os.PathLike, *, mapping: Mapping[str, str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Tables (config -> rows, subtypes in paper order) of a release folder; TriadError listing every problem."""
    src = Path(src_dir)
    if not src.is_dir():
        raise TriadError(f"{src}: release folder not found")
    mapping = {ALIASES.get(k, k): v for k, v in (mapping or {}).items()}
    problems = _Problems()
    folders = _subtype_folders(src, problems)
    if not folders and not problems.messages:
        raise TriadError(f"{src}: no <subtype>/{QUERIES_FILE} files (see docs/ark.md for the release layout)")
    tables: dict[str, list[dict[str, Any]]] = {}
    for subtype in (s for s in SUBTYPES if s in folders):
        folder = folders[subtype]
        if (folder / GALLERY_FILE).is_file():
            tables[subtype + GALLERY_SUFFIX] = _read_gallery(subtype, folder / GALLERY_FILE, mapping, problems)
        if (folder / QUERIES_FILE).is_file():
            tables[subtype] = _read_queries(subtype, folder / QUERIES_FILE, mapping, problems)
    problems.raise_if_any(src)
    for message in validate_tables(tables):  # cross-row checks: ids, positives and negatives in the gallery
        problems.add(message)
    problems.raise_if_any(src)
    return tables


def import_release(
    src_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    mapping: Mapping[str, str] | None = None,
    overwrite: bool = False,
) -> Path:
    """Read a release (layout above), check it, and write the Hub-style ARK folder atomically."""
    from triad_dataset.folder.io import write_folder

    if Path(out_dir).exists() and not overwrite:
        raise TriadError(f"{out_dir}: output folder exists (pass --overwrite to replace it)")
    tables = read_release(src_dir, mapping=mapping)
    subtypes = [c for c in tables if not c.endswith(GALLERY_SUFFIX)]
    counts = {s: (len(tables[s]), len(tables[s + GALLERY_SUFFIX])) for s in subtypes}
    audit = {
        "benchmark": "ark",
        "edition": "release",
        "synthetic": False,
        "source": Path(src_dir).name,
        "mapping": dict(mapping or {}),
        "subtypes": {s: {"queries": q, "gallery": g} for s, (q, g) in counts.items()},
    }
    return write_folder(
        out_dir,
        tables,
        features={c: features_for(c) for c in tables},
        card=release_card(counts, source=Path(src_dir).name),
        audit=audit,
        overwrite=overwrite,
        licence=release_licence(src_dir),
    )
