"""What a model retrieved for one query: the query as the model saw it and its top k, each candidate with its role.

A `QueryView` is built from the gold the Space holds (`spaces_app.gold.Gold`), the corpus rows of the dataset folder
(`Corpus`: text, attributes and images by item id, read on demand) and one submitted ranking. Every role shown is the
dataset's own `candidate_roles` entry for that candidate; for the typed constraints / state negatives the violated
requirement is named by the dataset's positive rule (`triad_dataset.contract.rule.RuleChecker.explain`, paper A.2).
The views hold no images, only keys that `spaces_app.thumbs` turns into thumbnails.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
import pyarrow.parquet as pq

from ark_dataset import names as ark_names
from spaces_app.reproduction import average_precision
from triad_dataset.contract import names as triad_names
from triad_dataset.contract.errors import TriadError
from triad_dataset.contract.rule import Condition, RuleChecker
from triad_dataset.contract.schema import DomainSchema, schemas_from_audit
from triad_dataset.folder import io as folder
from triad_dataset.folder.validate_rules import item_attributes

TOP_K: Final = 10
ITEM_ID: Final = "item_id"
# One line per role of TRIAD Table 7 (docs/protocol.md §1); the typed roles add the requirement they fail.
ROLE_TEXT: Final = {
    triad_names.POSITIVE: "positive",
    triad_names.SIBLING: "sibling concept (another branch under the same WordNet parent)",
    triad_names.P_VIOLATION: "violates a requested value",
    triad_names.N_VIOLATION: "has an excluded value",
    triad_names.PN_VIOLATION: "violates a requested and an excluded value",
    triad_names.IMPLICIT_VIOLATION: "meets the request but changes what must stay",
    triad_names.VISUAL: "looks like the reference, fails the request",
    triad_names.RANDOM: "random pool filler",
    triad_names.CONFLICT_TRAP: "conflict trap: matches the superseded request",
}
EXPLAINED: Final = frozenset(
    {
        triad_names.P_VIOLATION,
        triad_names.N_VIOLATION,
        triad_names.PN_VIOLATION,
        triad_names.IMPLICIT_VIOLATION,
        triad_names.VISUAL,
        triad_names.CONFLICT_TRAP,
    }
)
DOMAIN_OF: Final = {
    **dict(zip(triad_names.CONSTRAINTS_CONFIGS, triad_names.DOMAINS, strict=True)),
    **dict(zip(triad_names.STATE_CONFIGS, triad_names.DOMAINS, strict=True)),
    **dict(zip(triad_names.SAME_CONFIGS, triad_names.DOMAINS, strict=True)),
}


@dataclass(frozen=True)
class ImageKey:
    """Where an image lives: a corpus config and item id, or a query config and query id (its `query_image`)."""

    config: str
    key: str
    column: str = "image"


@dataclass(frozen=True)
class Shown:
    """One ranked candidate: its 1-based rank, text, the dataset's role for it and why that role, the model's score."""

    rank: int
    item_id: str
    text: str
    role: str
    why: str
    score: float | None
    image: ImageKey | None


@dataclass(frozen=True)
class QueryView:
    """One query as the model saw it and what the submission ranked first (TRIAD: AP; ARK: reciprocal rank)."""

    benchmark: str
    config: str
    query_id: str
    value_name: str
    value: float
    text: str
    instruction: str | None
    turns: list[str]
    conditions: list[str]
    image: ImageKey | None
    shown: list[Shown]
    positive_ranks: list[int]
    n_ranked: int
    facts: dict[str, str] = field(default_factory=dict)
    reference: str = ""  # constraints / state: the reference product the requested changes apply to


@dataclass(frozen=True)
class QueryRanking:
    """One submitted ranking of one query: ids best first, their scores when the file has them, ARK's positive rank."""

    candidate_ids: Sequence[str]
    scores: Sequence[float] | None = None
    positive_rank: int | None = None


class Corpus:
    """A dataset folder's item rows by id (text, attributes), images read one row group at a time on demand."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._rows: dict[str, dict[str, dict[str, Any]]] = {}
        self._where: dict[tuple[str, str], dict[str, tuple[Path, int, int]]] = {}
        self._schemas: dict[str, DomainSchema] | None = None

    def rows(self, config: str) -> dict[str, dict[str, Any]]:
        """item id -> the corpus row without its image."""
        if config not in self._rows and config not in folder.list_configs(self.path):
            self._rows[config] = {}  # a gold folder without this corpus: ids are shown without text or image
        if config not in self._rows:
            names = pq.read_schema(folder.shard_paths(self.path, config)[0]).names
            columns = [c for c in names if c != "image"]
            self._rows[config] = {r[ITEM_ID]: r for r in folder.read_rows(self.path, config, columns=columns)}
        return self._rows[config]

    def schema(self, domain: str) -> DomainSchema:
        """The attribute schema the folder was built with (audit.json), the domain's default when it records none."""
        if self._schemas is None:
            self._schemas = schemas_from_audit(folder.read_audit(self.path))
        return self._schemas[domain]

    def image(self, key: ImageKey) -> bytes | None:
        """The image's encoded bytes, None when the row has none."""
        id_column = ITEM_ID if key.column == "image" else "query_id"
        if key.config not in folder.list_configs(self.path):
            return None
        where = self._index(key.config, id_column).get(key.key)
        if where is None:
            return None
        path, group, offset = where
        table = pq.ParquetFile(path).read_row_group(group, columns=[key.column])
        value = table.column(key.column)[offset].as_py()
        return (value or {}).get("bytes") if isinstance(value, Mapping) else None

    def _index(self, config: str, id_column: str) -> dict[str, tuple[Path, int, int]]:
        if (config, id_column) not in self._where:
            index: dict[str, tuple[Path, int, int]] = {}
            for path in folder.shard_paths(self.path, config):
                file = pq.ParquetFile(path)
                for group in range(file.num_row_groups):
                    ids = file.read_row_group(group, columns=[id_column]).column(id_column).to_pylist()
                    index.update({item: (path, group, i) for i, item in enumerate(ids)})
            self._where[(config, id_column)] = index
        return self._where[(config, id_column)]


def read_rankings(path: str | Path) -> dict[str, QueryRanking]:
    """query id -> its ranking, from one rankings parquet file of a run (CONTRACTS §2)."""
    table = pq.read_table(path)
    columns = set(table.schema.names)
    out = {}
    for row in table.to_pylist():
        out[row["query_id"]] = QueryRanking(
            row["candidate_ids"],
            row.get("scores") if "scores" in columns else None,
            row.get("positive_rank") if "positive_rank" in columns else None,
        )
    return out


def condition_text(condition: Mapping[str, Any]) -> str:
    """A requested change as a phrase: "colour: black", "colour: not red", "(was red)" for a revised one."""
    value = condition.get("value")
    phrase = f"{condition.get('attribute')}: {value if condition.get('polarity') == 'P' else f'not {value}'}"
    return phrase + (f" (was {condition['old_value']})" if condition.get("old_value") else "")


def _triad_why(
    corpus: Corpus, config: str, row: Mapping[str, Any], role: str, item: str, checker: RuleChecker | None
) -> str:
    base = ROLE_TEXT.get(role, role)
    if checker is None or role not in EXPLAINED:
        if role == triad_names.SIBLING and config in triad_names.ABSTRACTION_CONFIGS + triad_names.SELF_CONFIGS:
            candidate = corpus.rows(triad_names.CANDIDATE_CORPUS[config]).get(item, {})
            name = candidate.get("name") or candidate.get("leaf_name")
            return f"{base}: {name}" if name else base
        if role == triad_names.VISUAL and config in triad_names.SAME_CONFIGS:
            return "another product that looks like the query's"
        return base
    reasons = checker.explain(_attributes(corpus, config, item))
    if role == triad_names.CONFLICT_TRAP:
        earlier = [condition_text(c) for c in row.get("conditions") or [] if c.get("old_value")]
        reasons = reasons + [f"the earlier request {', '.join(earlier)}"] if earlier else reasons
    return f"{base}: {'; '.join(reasons)}" if reasons else base


def _attributes(corpus: Corpus, config: str, item: str) -> dict[str, str]:
    schema = corpus.schema(DOMAIN_OF[config])
    row = corpus.rows(triad_names.CANDIDATE_CORPUS[config]).get(item) or {}
    hidden = json.loads(row.get("attributes") or "{}")
    return item_attributes(schema, row, hidden)


def _checker(corpus: Corpus, config: str, row: Mapping[str, Any]) -> RuleChecker | None:
    """The query's positive rule (constraints / state only), None where the folder lacks the reference's row."""
    if config not in triad_names.CONSTRAINTS_CONFIGS + triad_names.STATE_CONFIGS:
        return None
    reference = row.get("query_image_id")
    if reference not in corpus.rows(triad_names.CANDIDATE_CORPUS[config]):
        return None
    conditions = [Condition.from_row(c) for c in row.get("conditions") or []]
    return RuleChecker(corpus.schema(DOMAIN_OF[config]), _attributes(corpus, config, reference), conditions)


def _reference(corpus: Corpus, config: str, row: Mapping[str, Any]) -> str:
    """The reference product of a constraints / state query: its id, text and attribute values ("" elsewhere)."""
    if config not in triad_names.CONSTRAINTS_CONFIGS + triad_names.STATE_CONFIGS or not row.get("query_image_id"):
        return ""
    item = str(row["query_image_id"])
    found = corpus.rows(triad_names.CANDIDATE_CORPUS[config]).get(item)
    if found is None:
        return item
    values = ", ".join(f"{k} {v}" for k, v in _attributes(corpus, config, item).items() if v not in (None, ""))
    return " · ".join(part for part in (item, str(found.get("text") or ""), values) if part)


def _query_image(config: str, row: Mapping[str, Any], benchmark: str) -> ImageKey | None:
    if benchmark == "triad":
        corpus = triad_names.QUERY_IMAGE_CORPUS.get(config)
        if corpus and row.get("query_image_id"):
            return ImageKey(corpus, str(row["query_image_id"]))
        return None
    return ImageKey(config, str(row["query_id"]), column="query_image")


def triad_view(
    corpus: Corpus,
    config: str,
    row: Mapping[str, Any],
    ranking: QueryRanking,
    k: int = TOP_K,
    positive_ranks: Sequence[int] | None = None,
) -> QueryView:
    """The view of one TRIAD query: roles from `candidate_roles`, AP over the whole submitted ranking.

    `positive_ranks` (every positive's 1-based rank) is given where `ranking` holds only the top ids, as the
    Space stores them; without it the ranks are read from `ranking`, which must then be the whole pool.
    """
    role_of = dict(zip(row["candidate_ids"], row["candidate_roles"], strict=True))
    positives = set(row["positive_ids"])
    ids = list(ranking.candidate_ids)
    missing = [c for c in ids if c not in role_of]
    if missing:
        raise TriadError(f"{config} / {row['query_id']}: ranked candidate {missing[0]!r} is not in the query's pool")
    if positive_ranks is None:
        ranks = sorted(i + 1 for i, c in enumerate(ids) if c in positives)
    else:
        ranks = sorted(int(r) for r in positive_ranks)
    checker = _checker(corpus, config, row)
    items = corpus.rows(triad_names.CANDIDATE_CORPUS[config])
    shown = [
        Shown(
            rank=i + 1,
            item_id=item,
            text=str(items.get(item, {}).get("text") or ""),
            role=role_of[item],
            why=_triad_why(corpus, config, row, role_of[item], item, checker),
            score=float(ranking.scores[i]) if ranking.scores is not None else None,
            image=ImageKey(triad_names.CANDIDATE_CORPUS[config], item),
        )
        for i, item in enumerate(ids[:k])
    ]
    facts = {
        name: str(row[name])
        for name in ("profile", "session_type", "num_turns", "depth")
        if row.get(name) not in (None, "")
    }
    return QueryView(
        benchmark="triad",
        config=config,
        query_id=str(row["query_id"]),
        value_name="AP",
        value=average_precision(ranks, len(positives & set(role_of))),
        text=str(row.get("query_text") or ""),
        instruction=row.get("instruction"),
        turns=list(row.get("turns") or []),
        conditions=[condition_text(c) for c in row.get("conditions") or []],
        image=_query_image(config, row, "triad"),
        shown=shown,
        positive_ranks=ranks,
        n_ranked=len(ids) if positive_ranks is None else len(row["candidate_ids"]),
        facts=facts,
        reference=_reference(corpus, config, row),
    )


def ark_view(corpus: Corpus, subtype: str, row: Mapping[str, Any], ranking: QueryRanking, k: int = TOP_K) -> QueryView:
    """The view of one ARK query: the positive's submitted rank, its reciprocal rank, the taxonomy cells."""
    gallery = subtype + ark_names.GALLERY_SUFFIX
    items = corpus.rows(gallery)
    ids = list(ranking.candidate_ids)
    positive = row["positive_id"]
    hard = set(row.get("hard_negative_ids") or [])
    rank = ranking.positive_rank or (ids.index(positive) + 1 if positive in ids else None)
    if rank is None:
        raise TriadError(f"{subtype} / {row['query_id']}: the ranking neither lists the positive nor gives its rank")
    shown = [
        Shown(
            rank=i + 1,
            item_id=item,
            text=str(items.get(item, {}).get("text") or ""),
            role="positive" if item == positive else "hard negative" if item in hard else "gallery item",
            why="",
            score=float(ranking.scores[i]) if ranking.scores is not None else None,
            image=ImageKey(gallery, item),
        )
        for i, item in enumerate(ids[:k])
    ]
    facts = {
        "subtype": subtype,
        "knowledge domain": str(row.get("domain") or ""),
        "cognitive demand": str(row.get("cognitive_demand") or ""),
        "reasoning skills": ", ".join(row.get("reasoning_skills") or []),
    }
    return QueryView(
        benchmark="ark",
        config=subtype,
        query_id=str(row["query_id"]),
        value_name="RR",
        value=1.0 / rank,
        text=str(row.get("query_text") or ""),
        instruction=None,
        turns=[],
        conditions=[],
        image=_query_image(subtype, row, "ark"),
        shown=shown,
        positive_ranks=[int(rank)],
        n_ranked=len(ids),
        facts=facts,
    )


def query_view(
    benchmark: str,
    corpus: Corpus,
    config: str,
    row: Mapping[str, Any],
    ranking: QueryRanking,
    k: int = TOP_K,
    positive_ranks: Sequence[int] | None = None,
) -> QueryView:
    """`triad_view` or `ark_view` by benchmark."""
    if benchmark == "triad":
        return triad_view(corpus, config, row, ranking, k, positive_ranks)
    return ark_view(corpus, config, row, ranking, k)


def worst(values: Mapping[str, float], n: int) -> list[str]:
    """The n query ids with the lowest value (ties by query id, so the order is stable)."""
    return [q for q, _ in sorted(values.items(), key=lambda kv: (kv[1], kv[0]))[:n]]


def moved_most(a: Mapping[str, float], b: Mapping[str, float], n: int) -> list[str]:
    """The n query ids both runs scored whose value differs most between them (largest |a − b| first)."""
    common = sorted(set(a) & set(b))
    diffs = np.abs(np.array([a[q] - b[q] for q in common], dtype=float))
    order = sorted(range(len(common)), key=lambda i: (-diffs[i], common[i]))
    return [common[i] for i in order[:n]]
