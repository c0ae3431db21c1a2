"""`triad validate DIR`: check every invariant of a dataset folder; one line per violation.

Each violation reads ``<config> / <query_id or item_id>: <what is wrong>`` (``*`` when it concerns the whole config).
ARK folders (audit.json ``"benchmark": "ark"``) are checked by `ark_dataset.validate.validate_folder`;
`triad validate` picks the validator by the folder's benchmark (`triad_cli.folders.validate_any`).

Checks on a TRIAD folder:

* folder: audit.json readable with ``"benchmark"``; every config name known; columns exactly the docs/protocol.md §1 features;
  every task config's corpora present; no non-zero ``gate_violations`` figure anywhere in the audit (paper A.2).
* corpus rows: unique ``item_id``; ``attributes`` is a JSON object; images present where the corpus has pictures
  (none for concepts); ``text`` is exactly the model-visible serialization (docs/protocol.md §3): ``Product info: <visible
  fields>`` for products, ``{name}. {definition}`` for concepts (definition only for Self concept items
  ``<wnid>#def``), the leaf-class name for instances.
* query rows: unique ``query_id``; ``task`` is the config; ``candidate_roles`` and ``candidate_trap`` aligned with
  ``candidate_ids``; pool size equal to audit.json ``pool_size`` (skipped when it is null, i.e. a full-corpus pool);
  no duplicate candidate; the query's own image not in its pool; every candidate id and the query image id present
  in its corpus, and ``query_image`` holding that corpus item's picture; known roles; ``positive_ids`` equal to the
  ids whose role is ``positive`` (at least one); I2C ``positive_hops`` aligned and in {1, 2}, at most 5 positives;
  C2I exactly 5 positives and a ``depth``; Self exactly 1 positive; trap flags only in conflict sessions of the
  state track and always on ``conflict_trap`` candidates; constraints ``profile`` matching its P/N condition counts;
  state ``session_type``/``num_turns``/``turns`` consistent and in the session mix of docs/protocol.md §2.
* pairing (paper A.3): every state query has the constraints query with the same ``query_id`` and vice versa, with
  the same reference image, the same final conditions and the identical positive set.
* leakage (paper A.2, B.3): model-visible text may carry no hidden label the model must not be given —
  (a) corpus ``text`` and the ``Reference product info`` prefix of a query contain only the visible product fields;
  (b) for every positive condition, the reference item's own hidden value of that attribute (its ``attributes``
  label) appears nowhere in the request (the query text after the reference prefix, the turns, the instruction)
  unless it is itself a value named by one of the query's conditions; values are matched as whole words,
  case-insensitively, with ``_``/``-`` read as spaces, and values shorter than 3 characters are not checked;
  (c) Self concept text (Self C2I queries and Self I2C candidates) is the definition alone, never the name.
* schema (paper A.2, `validate_rules.py`): with the attribute schema recorded in audit.json, every condition names
  a `constraint` attribute, every positive satisfies the complete rule and every typed negative has its role's
  statuses, re-evaluated from the corpus attributes. Every built folder records its schema; a folder without one
  (hand-made) skips this check.
* reference tasks: a Self positive is of the query's own class (`wnid`); Same positives are exactly the pool's other
  pictures of the reference product (same `product_id`).
  Target values, excluded values of negative conditions and superseded values in conflict dialogues may be named.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from triad_dataset.contract import names as n
from triad_dataset.contract.errors import TriadError
from triad_dataset.contract.features import features_for
from triad_dataset.contract.schema import DomainSchema, schemas_from_audit
from triad_dataset.contract.serialize import mentions, normalized_words
from triad_dataset.folder import io as folder
from triad_dataset.folder.validate_rules import check_rule

ALL = "*"
MIN_LEAK_VALUE_LENGTH = 3
MAX_LISTED = 5
STATE_TO_CONSTRAINTS = {s: c for s, c in zip(n.STATE_CONFIGS, n.CONSTRAINTS_CONFIGS, strict=True)}
CONFIG_DOMAIN = {
    **{c: d for c, d in zip(n.CONSTRAINTS_CONFIGS, n.DOMAINS, strict=True)},
    **{c: d for c, d in zip(n.STATE_CONFIGS, n.DOMAINS, strict=True)},
    **{c: d for c, d in zip(n.SAME_CONFIGS, n.DOMAINS, strict=True)},
}
CORPUS_DOMAIN = {corpus: d for d, corpus in n.DOMAIN_CORPUS.items()}
I2C, C2I = n.ABSTRACTION_CONFIGS
SELF_I2C, SELF_C2I = n.SELF_CONFIGS
HOPS = (1, 2)  # paper A.1: positives one or two levels away
TURNS = (2, 3)  # paper A.3: two- or three-turn dialogues
IMAGE_CORPORA = (n.INSTANCES_CORPUS, *n.DOMAIN_CORPUS.values())
PAIRING_FIELDS = ("query_id", "positive_ids", "query_image_id", "conditions", "turns", "session_type")


# ---------------------------------------------------------------------------------------------------- helpers


def _line(config: str, key: Any, message: str) -> str:
    return f"{config} / {key if key not in (None, '') else ALL}: {message}"


def _listed(values: Iterable[Any]) -> str:
    values = list(values)
    shown = ", ".join(repr(v) for v in values[:MAX_LISTED])
    return shown + (f" (+{len(values) - MAX_LISTED} more)" if len(values) > MAX_LISTED else "")


def visible_fields(domain: str, row: Mapping[str, Any]) -> str:
    """docs/protocol.md §3 serialization of a product's visible fields; empty fields are left out.

    >>> visible_fields("cars", {"brand": "Audi", "year": "2012"})
    'brand: Audi, year: 2012'
    """
    return n.FIELD_SEPARATOR.join(
        n.FIELD_TEMPLATE.format(field=f, value=row[f])
        for f in n.VISIBLE_PRODUCT_FIELDS[domain]
        if row.get(f) not in (None, "")
    )


def _iter_batches(directory: Path, config: str, columns: Sequence[str]) -> Iterator[dict[str, list]]:
    for shard in folder.shard_paths(directory, config):
        # pre_buffer=False: the default pre-buffering reads every row group of the columns up front (GBs of images)
        for batch in pq.ParquetFile(shard, pre_buffer=False).iter_batches(batch_size=256, columns=list(columns)):
            yield batch.to_pydict()


@dataclass
class Corpus:
    """What the checks need from one corpus config (images only as digests)."""

    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    image_digest: dict[str, str | None] = field(default_factory=dict)
    attributes: dict[str, dict[str, Any]] = field(default_factory=dict)
    definitions: dict[str, str] = field(default_factory=dict)  # concepts: wnid -> definition


# ---------------------------------------------------------------------------------------------------- corpora


def _corpus_text(config: str, row: Mapping[str, Any]) -> str | None:
    """The text a corpus row must carry (docs/protocol.md §3), or None when there is no rule for it."""
    if config in CORPUS_DOMAIN:
        return n.CANDIDATE_TEMPLATE.format(candidate_attributes=visible_fields(CORPUS_DOMAIN[config], row))
    if config == n.CONCEPTS_CORPUS:
        if row["item_id"] == n.SELF_CONCEPT_ID_TEMPLATE.format(wnid=row["wnid"]):
            return n.SELF_CONCEPT_TEMPLATE.format(definition=row["definition"])
        return n.CONCEPT_TEMPLATE.format(name=row["name"], definition=row["definition"])
    if config == n.INSTANCES_CORPUS:
        return row["leaf_name"]
    return None


def check_corpus(directory: Path, config: str, out: list[str]) -> Corpus:
    corpus = Corpus()
    columns = [c for c in features_for(config) if c != "image"]
    for batch in _iter_batches(directory, config, columns + ["image"]):
        images = batch.pop("image")
        for index, image in enumerate(images):
            row = {c: batch[c][index] for c in columns}
            item = row["item_id"]
            if not item:
                out.append(_line(config, ALL, "a row has an empty item_id"))
                continue
            if item in corpus.rows:
                out.append(_line(config, item, "duplicate item_id"))
                continue
            corpus.rows[item] = row
            if config == n.CONCEPTS_CORPUS:
                corpus.definitions.setdefault(row["wnid"], row["definition"])
            data = image.get("bytes") if image else None
            corpus.image_digest[item] = hashlib.sha256(data).hexdigest() if data else None
            if config in IMAGE_CORPORA and not data:
                out.append(_line(config, item, "image is missing"))
            if config == n.CONCEPTS_CORPUS and image is not None:
                out.append(_line(config, item, "concept items carry no image"))
            try:
                attributes = json.loads(row["attributes"]) if row["attributes"] is not None else {}
            except json.JSONDecodeError:
                attributes = None
            if not isinstance(attributes, dict):
                out.append(_line(config, item, "attributes is not a JSON object"))
                attributes = {}
            corpus.attributes[item] = attributes
            expected = _corpus_text(config, row)
            if expected is not None and row["text"] != expected:
                out.append(_line(config, item, f"text {row['text']!r} is not the visible serialization {expected!r}"))
    return corpus


# ---------------------------------------------------------------------------------------------------- queries


def _check_pool(
    config: str, row: Mapping[str, Any], pool_size: int | None, corpus: Corpus | None, out: list[str]
) -> None:
    qid = row["query_id"]
    ids, roles, traps = row["candidate_ids"] or [], row["candidate_roles"] or [], row["candidate_trap"] or []
    if not (len(ids) == len(roles) == len(traps)):
        out.append(
            _line(
                config,
                qid,
                f"list lengths differ: candidate_ids {len(ids)}, candidate_roles {len(roles)}, "
                f"candidate_trap {len(traps)}",
            )
        )
    if pool_size is not None and len(ids) != pool_size:
        out.append(_line(config, qid, f"pool has {len(ids)} candidates, audit pool_size is {pool_size}"))
    duplicates = sorted(c for c, k in Counter(ids).items() if k > 1)
    if duplicates:
        out.append(_line(config, qid, f"duplicate candidates {_listed(duplicates)}"))
    if row.get("query_image_id") is not None and row["query_image_id"] in ids:
        out.append(_line(config, qid, f"the query's own image {row['query_image_id']!r} is in its pool"))
    if corpus is not None:
        missing = [c for c in ids if c not in corpus.rows]
        if missing:
            out.append(
                _line(
                    config, qid, f"{len(missing)} candidate ids not in {n.CANDIDATE_CORPUS[config]}: {_listed(missing)}"
                )
            )
    unknown = sorted(set(roles) - set(n.ROLES))
    if unknown:
        out.append(_line(config, qid, f"unknown candidate roles {_listed(unknown)}"))
    positives = [c for c, r in zip(ids, roles, strict=False) if r == n.POSITIVE]
    given = row["positive_ids"] or []
    if len(set(given)) != len(given) or set(given) != set(positives):
        out.append(
            _line(
                config,
                qid,
                f"positive_ids {_listed(given)} differ from the positive-role candidates {_listed(positives)}",
            )
        )
    if not given:
        out.append(_line(config, qid, "no positive"))


def _check_abstraction_fields(config: str, row: Mapping[str, Any], out: list[str]) -> None:
    """The per-direction rules of the abstraction configs: I2C's hops and positive cap, C2I's positives and depth."""
    qid = row["query_id"]
    positives = row["positive_ids"] or []
    hops = row.get("positive_hops")
    if config == I2C:
        if hops is None or len(hops) != len(positives):
            out.append(_line(config, qid, f"positive_hops {hops} not aligned with {len(positives)} positive_ids"))
        elif any(h not in HOPS for h in hops):
            out.append(_line(config, qid, f"positive_hops {hops} outside {HOPS}"))
        if len(positives) > n.I2C_MAX_POSITIVES:
            out.append(_line(config, qid, f"{len(positives)} positives, at most {n.I2C_MAX_POSITIVES} (paper A.1)"))
    if config == C2I:
        if len(positives) != n.C2I_POSITIVES:
            out.append(_line(config, qid, f"{len(positives)} positives, C2I fixes {n.C2I_POSITIVES} (paper A.1)"))
        if row.get("depth") is None:
            out.append(_line(config, qid, "depth is missing"))


def _check_task_fields(config: str, row: Mapping[str, Any], out: list[str]) -> None:
    qid = row["query_id"]
    positives = row["positive_ids"] or []
    _check_abstraction_fields(config, row, out)
    expected = n.TASK_INSTRUCTION.get(config)  # paper B.3: only the abstraction directions carry an instruction
    if row.get("instruction") != expected:
        out.append(_line(config, qid, f"instruction {row.get('instruction')!r}, expected {expected!r} (paper B.3)"))
    if config in n.SELF_CONFIGS and len(positives) != 1:
        out.append(_line(config, qid, f"{len(positives)} positives, Self has exactly 1 (paper A.1)"))
    traps = row["candidate_trap"] or []
    roles = row["candidate_roles"] or []
    if any(r == n.CONFLICT_TRAP and not t for r, t in zip(roles, traps, strict=False)):
        out.append(_line(config, qid, "a conflict_trap candidate is not trap-flagged"))
    if any(traps) and not (config in n.STATE_CONFIGS and row.get("session_type") == n.SESSION_TYPES[1]):
        out.append(_line(config, qid, "trap flags outside a conflict session"))
    if config in n.CONSTRAINTS_CONFIGS + n.STATE_CONFIGS:
        _check_profile(config, row, out)
    if config in n.STATE_CONFIGS:
        turns = row.get("turns") or []
        if row.get("session_type") not in n.SESSION_TYPES:
            out.append(_line(config, qid, f"session_type {row.get('session_type')!r} not in {n.SESSION_TYPES}"))
        if row.get("num_turns") != len(turns) or len(turns) not in TURNS:
            out.append(_line(config, qid, f"num_turns {row.get('num_turns')} with {len(turns)} turns (2 or 3)"))


def _check_profile(config: str, row: Mapping[str, Any], out: list[str]) -> None:
    qid = row["query_id"]
    conditions = row.get("conditions") or []
    bad = [c for c in conditions if c.get("polarity") not in n.POLARITIES]
    if bad:
        out.append(_line(config, qid, f"condition polarities {_listed(c.get('polarity') for c in bad)} not P/N"))
    counts = (sum(c.get("polarity") == "P" for c in conditions), sum(c.get("polarity") == "N" for c in conditions))
    if n.PROFILES.get(row.get("profile", "")) != counts:
        out.append(
            _line(config, qid, f"profile {row.get('profile')!r} does not match {counts[0]}P/{counts[1]}N conditions")
        )


def _check_query_image(directory: Path, config: str, corpus: Corpus | None, out: list[str]) -> None:
    image_corpus = n.QUERY_IMAGE_CORPUS[config]
    for batch in _iter_batches(directory, config, ["query_id", "query_image_id", "query_image"]):
        for qid, image_id, image in zip(batch["query_id"], batch["query_image_id"], batch["query_image"], strict=True):
            data = image.get("bytes") if image else None
            if image_corpus is None:
                if image_id is not None or data:
                    out.append(_line(config, qid, "text-only query carries a query image"))
                continue
            if image_id is None or not data:
                out.append(_line(config, qid, "query_image_id or query_image is missing"))
            elif corpus is not None:
                if image_id not in corpus.rows:
                    out.append(_line(config, qid, f"query image {image_id!r} not in {image_corpus}"))
                elif corpus.image_digest[image_id] != hashlib.sha256(data).hexdigest():
                    out.append(_line(config, qid, f"query_image is not the picture of {image_id!r}"))


# ---------------------------------------------------------------------------------------------------- leakage


def _request_text(config: str, row: Mapping[str, Any], reference: Mapping[str, Any] | None, out: list[str]) -> str:
    """The request part of a product query (after the reference prefix), checking the prefix on the way."""
    text = row["query_text"] or ""
    domain = CONFIG_DOMAIN[config]
    template = n.STATE_QUERY_PREFIX if config in n.STATE_CONFIGS else n.CONSTRAINTS_QUERY_TEMPLATE
    if reference is None:
        return text
    prefix = template.format(reference_attributes=visible_fields(domain, reference), query_text="")
    if not text.startswith(prefix):
        out.append(
            _line(config, row["query_id"], f"query_text does not start with the reference's visible fields {prefix!r}")
        )
        marker = template.split("{reference_attributes}")[1].format(query_text="")
        return text.split(marker, 1)[1] if marker in text else text
    return text[len(prefix) :]


def check_leakage(config: str, row: Mapping[str, Any], corpora: Mapping[str, Corpus], out: list[str]) -> None:
    """Leakage rules (b) and the prefix half of (a) for one product query (see the module docstring)."""
    corpus = corpora.get(n.QUERY_IMAGE_CORPUS[config] or "")
    ref_id = row.get("query_image_id", "")
    reference = corpus.rows.get(ref_id) if corpus else None
    request = _request_text(config, row, reference, out)
    if corpus is None or reference is None:
        return
    visible_text = " ".join([request, *(row.get("turns") or []), row.get("instruction") or ""])
    conditions = row.get("conditions") or []
    named = {normalized_words(str(c.get("value"))) for c in conditions if c.get("value") is not None}
    hidden = corpus.attributes.get(ref_id, {})
    for condition in conditions:
        if condition.get("polarity") != "P":
            continue
        attribute = condition.get("attribute")
        value = hidden.get(attribute)
        if not isinstance(value, str) or len(value) < MIN_LEAK_VALUE_LENGTH or normalized_words(value) in named:
            continue
        if mentions(visible_text, value):
            out.append(
                _line(
                    config,
                    row["query_id"],
                    f"request reveals the reference's hidden {attribute} value "
                    f"{value!r} for a positive condition (paper A.2)",
                )
            )


def check_self_text(config: str, row: Mapping[str, Any], concepts: Corpus | None, out: list[str]) -> None:
    """Leakage rule (c): Self concept-side text is the definition alone."""
    if concepts is None:
        return
    qid = row["query_id"]
    if config == SELF_C2I:
        definition = concepts.definitions.get(row.get("wnid", ""))
        if definition is None:
            out.append(_line(config, qid, f"query concept {row.get('wnid')!r} not in {n.CONCEPTS_CORPUS}"))
        elif row["query_text"] != n.SELF_CONCEPT_TEMPLATE.format(definition=definition):
            out.append(_line(config, qid, "query_text is not the concept's definition alone (paper A.1 Self)"))
    if config == SELF_I2C:
        named = [
            c
            for c in row["candidate_ids"] or []
            if c in concepts.rows
            and concepts.rows[c]["text"] != n.SELF_CONCEPT_TEMPLATE.format(definition=concepts.rows[c]["definition"])
        ]
        if named:
            out.append(_line(config, qid, f"candidates whose text is not definition-only: {_listed(named)}"))


def check_reference_positives(
    config: str, row: Mapping[str, Any], corpora: Mapping[str, Corpus], out: list[str]
) -> None:
    """Self: the positive is the query's own leaf class. Same: positives are exactly the other pictures of the
    reference product that are in the pool (paper A.1, A.2)."""
    candidates = corpora.get(n.CANDIDATE_CORPUS[config])
    if candidates is None:
        return
    qid, ids, roles = row["query_id"], row["candidate_ids"] or [], row["candidate_roles"] or []
    if config in n.SELF_CONFIGS:
        wrong = [
            c
            for c in row["positive_ids"] or []
            if c in candidates.rows and candidates.rows[c]["wnid"] != row.get("wnid")
        ]
        if wrong:
            out.append(_line(config, qid, f"positive {_listed(wrong)} is not of the query's class {row.get('wnid')!r}"))
        return
    reference = corpora.get(n.QUERY_IMAGE_CORPUS[config] or "", Corpus()).rows.get(row.get("query_image_id", ""))
    if reference is None:
        return
    product = reference["product_id"]
    wrong = [
        c
        for c, r in zip(ids, roles, strict=False)
        if c in candidates.rows
        and c != row.get("query_image_id")
        and (candidates.rows[c]["product_id"] == product) != (r == n.POSITIVE)
    ]
    if wrong:
        out.append(
            _line(
                config,
                qid,
                f"candidates {_listed(wrong)}: positive role must equal sharing the reference's product_id {product!r}",
            )
        )


# ---------------------------------------------------------------------------------------------------- pairing


def _condition_key(conditions: Sequence[Mapping[str, Any]] | None) -> list[tuple]:
    return sorted((c.get("attribute"), c.get("polarity"), c.get("value")) for c in conditions or [])


def check_pairing(
    state: str, state_rows: Sequence[Mapping], constraints_rows: Sequence[Mapping], out: list[str]
) -> None:
    """Paper A.3: every state query keeps its source's reference, final conditions and complete positive set."""
    constraints = STATE_TO_CONSTRAINTS[state]
    by_id = {r["query_id"]: r for r in constraints_rows}
    state_ids = {r["query_id"] for r in state_rows}
    for row in state_rows:
        qid = row["query_id"]
        source = by_id.get(qid)
        if source is None:
            out.append(_line(state, qid, f"no {constraints} query with this query_id"))
            continue
        if set(row["positive_ids"] or []) != set(source["positive_ids"] or []):
            out.append(_line(state, qid, f"positive set differs from the paired {constraints} query"))
        if row.get("query_image_id") != source.get("query_image_id"):
            out.append(
                _line(
                    state,
                    qid,
                    f"reference {row.get('query_image_id')!r} differs from the paired "
                    f"{constraints} query's {source.get('query_image_id')!r}",
                )
            )
        if _condition_key(row.get("conditions")) != _condition_key(source.get("conditions")):
            out.append(_line(state, qid, f"final conditions differ from the paired {constraints} query"))
        mix_key = (row.get("session_type"), len(row.get("turns") or []), len(source.get("conditions") or []))
        if mix_key not in n.SESSION_MIX_PER_1000:
            out.append(
                _line(
                    state,
                    qid,
                    f"session {mix_key[0]}/{mix_key[1]} turns from a {mix_key[2]}-condition "
                    f"query is not in the session mix of docs/protocol.md §2",
                )
            )
    for qid in sorted(set(by_id) - state_ids):
        out.append(_line(constraints, qid, f"no {state} dialogue with this query_id"))


# ---------------------------------------------------------------------------------------------------- driver


def _gate_violations(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if key == "gate_violations" and item not in (0, None):
                yield where, item
            else:
                yield from _gate_violations(item, where)


def check_columns(directory: Path, config: str, out: list[str]) -> bool:
    expected = features_for(config).arrow_schema
    for shard in folder.shard_paths(directory, config):
        schema = pq.read_schema(shard)
        if set(schema.names) != set(expected.names):  # column order does not matter to readers
            missing = [c for c in expected.names if c not in schema.names]
            extra = [c for c in schema.names if c not in expected.names]
            out.append(
                _line(
                    config,
                    ALL,
                    f"{shard.name}: columns differ from docs/protocol.md §1 (missing {missing}, extra {extra})",
                )
            )
            return False
        for name in expected.names:
            if not schema.field(name).type.equals(expected.field(name).type):
                out.append(
                    _line(
                        config,
                        ALL,
                        f"{shard.name}: column {name} has type {schema.field(name).type}, "
                        f"expected {expected.field(name).type}",
                    )
                )
                return False
    return True


def validate_triad(directory: Path, audit: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for where, count in _gate_violations(audit):
        out.append(_line("audit.json", where, f"{count} gate violations (must be 0, paper A.2)"))
    configs = folder.list_configs(directory)
    unknown = [c for c in configs if c not in n.ALL_CONFIGS]
    out.extend(_line(c, ALL, "unknown TRIAD config") for c in unknown)
    readable = {c for c in configs if c in n.ALL_CONFIGS and check_columns(directory, c, out)}
    corpora: dict[str, Corpus] = {c: check_corpus(directory, c, out) for c in n.CORPUS_CONFIGS if c in readable}
    pool_size = audit.get("pool_size")
    if pool_size is not None and not isinstance(pool_size, int):
        out.append(_line("audit.json", "pool_size", f"{pool_size!r} is not an integer or null"))
        pool_size = None
    schemas: dict[str, DomainSchema] = {}
    try:
        schemas = schemas_from_audit(audit, defaults=False)
    except (ValueError, TypeError, KeyError) as exc:
        out.append(_line("audit.json", "schema", f"unreadable attribute schema ({exc})"))
    query_rows: dict[str, list[dict[str, Any]]] = {}
    for config in n.TASK_CONFIGS:
        if config not in readable:
            continue
        needed = {c for c in (n.CANDIDATE_CORPUS[config], n.QUERY_IMAGE_CORPUS[config]) if c is not None}
        for corpus in sorted(needed - set(readable)):
            out.append(_line(config, ALL, f"corpus config {corpus} is missing"))
        columns = [c for c in features_for(config) if c != "query_image"]
        seen: set[str] = set()
        slim: list[dict[str, Any]] = []  # only what pairing needs, so memory stays near one batch of rows
        for batch in _iter_batches(directory, config, columns):
            rows = [dict(zip(batch, values, strict=True)) for values in zip(*batch.values(), strict=True)]
            _check_queries(config, rows, pool_size, corpora, out, seen, schemas)
            if config in n.CONSTRAINTS_CONFIGS + n.STATE_CONFIGS:
                slim.extend({k: row[k] for k in PAIRING_FIELDS} for row in rows)
        query_rows[config] = slim
        _check_query_image(directory, config, corpora.get(n.QUERY_IMAGE_CORPUS[config] or ""), out)
    for state, constraints in STATE_TO_CONSTRAINTS.items():
        if state in query_rows and constraints in query_rows:
            check_pairing(state, query_rows[state], query_rows[constraints], out)
        elif state in query_rows or constraints in query_rows:
            present, absent = (state, constraints) if state in query_rows else (constraints, state)
            out.append(_line(present, ALL, f"its paired config {absent} is missing"))
    return out


def _check_queries(
    config: str,
    rows: Sequence[Mapping[str, Any]],
    pool_size: int | None,
    corpora: Mapping[str, Corpus],
    out: list[str],
    seen: set[str],
    schemas: Mapping[str, DomainSchema] | None = None,
) -> None:
    for row in rows:
        qid = row["query_id"]
        if not qid or qid in seen:
            out.append(_line(config, qid, "empty or duplicate query_id"))
        seen.add(qid)
        if row["task"] != config:
            out.append(_line(config, qid, f"task {row['task']!r} is not the config name"))
        _check_pool(config, row, pool_size, corpora.get(n.CANDIDATE_CORPUS[config]), out)
        _check_task_fields(config, row, out)
        if config in CONFIG_DOMAIN:
            check_leakage(config, row, corpora, out)
        if config in n.CONSTRAINTS_CONFIGS + n.STATE_CONFIGS and schemas and CONFIG_DOMAIN[config] in schemas:
            check_rule(config, row, schemas[CONFIG_DOMAIN[config]], corpora.get(n.CANDIDATE_CORPUS[config]), out)
        if config in n.SELF_CONFIGS:
            check_self_text(config, row, corpora.get(n.CONCEPTS_CORPUS), out)
        if config in n.SELF_CONFIGS + n.SAME_CONFIGS:
            check_reference_positives(config, row, corpora, out)


def validate_folder(directory: str | Path) -> list[str]:
    """Every violation in a TRIAD or ARK folder, one line each; [] when valid. A missing folder is a TriadError."""
    path = Path(directory)
    if not path.is_dir():
        raise TriadError(f"{path}: not a dataset folder (no such directory)")
    try:
        audit = folder.read_audit(path)
    except TriadError as exc:
        return [_line("audit.json", ALL, str(exc))]
    if audit.get("benchmark") == "ark":  # the dispatch lives above both benchmarks (triad_cli.folders)
        return [
            _line(
                "audit.json",
                "benchmark",
                "an ARK folder: check it with `triad validate` or ark_dataset.validate.validate_folder",
            )
        ]
    if audit.get("benchmark") != "triad":
        return [_line("audit.json", "benchmark", f"{audit.get('benchmark')!r} is not 'triad' or 'ark'")]
    return validate_triad(path, audit)
