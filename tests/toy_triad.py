"""A tiny, hand-made, valid TRIAD folder (all 14 configs, 6-candidate pools) for folder/validator/CLI tests.

Every query's pool, roles and positives are written out by hand here so tests can corrupt exactly one thing and
know which single violation the validator must report. Pool size is `TOY_POOL` (the audit says so).
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

from PIL import Image

from triad_dataset.contract import names as n
from triad_dataset.contract.features import all_features

TOY_POOL = 6
FASHION, CARS = n.DOMAINS
CONSTRAINTS = {d: f"constraints_{d}" for d in n.DOMAINS}
STATE = {d: f"state_{d}" for d in n.DOMAINS}
SAME = {d: f"same_{d}" for d in n.DOMAINS}
I2C, C2I = n.ABSTRACTION_CONFIGS
SELF_I2C, SELF_C2I = n.SELF_CONFIGS


def png(index: int) -> bytes:
    """A 2x2 PNG whose colour depends on `index` (deterministic bytes)."""
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), ((index * 37) % 256, (index * 91) % 256, (index * 53) % 256)).save(buffer, format="PNG")
    return buffer.getvalue()


def visible(domain: str, item: dict[str, Any]) -> str:
    """docs/protocol.md §3 serialization of a product's visible fields ("gender: Women, brand: Acme, ...")."""
    return n.FIELD_SEPARATOR.join(
        n.FIELD_TEMPLATE.format(field=f, value=item[f]) for f in n.VISIBLE_PRODUCT_FIELDS[domain] if item.get(f)
    )


# --- products: id -> (product_id, colour, pattern); colour/pattern are hidden labels ----------------------------
PRODUCTS = {
    "00": ("p0", "blue", "solid"),  # the reference
    "01": ("p1", "red", "solid"),  # positive
    "02": ("p2", "red", "solid"),  # positive
    "03": ("p3", "yellow", "solid"),  # violates the positive condition
    "04": ("p4", "red", "striped"),  # satisfies the request, breaks the preserved pattern
    "05": ("p5", "black", "dotted"),  # random
    "06": ("p6", "green", "solid"),  # random in constraints, conflict trap (superseded green) in state
    "07": ("p0", "blue", "solid"),  # another image of the reference product (Same positive)
    "08": ("p8", "white", "checked"),
    "09": ("p9", "orange", "solid"),
}


def product_corpus(domain: str) -> list[dict[str, Any]]:
    rows = []
    for index, (key, (product, colour, pattern)) in enumerate(PRODUCTS.items()):
        item = {
            "item_id": f"{domain}-{key}",
            "image": {"bytes": png(index + (0 if domain == FASHION else 50)), "path": f"{key}.png"},
            "attributes": {"color": colour, "pattern": pattern},
            "product_id": f"{domain}-{product}",
            "brand": "Acme",
            "year": "2012",
        }
        if domain == FASHION:
            item.update(gender="Women", season="Summer")
        item["text"] = n.CANDIDATE_TEMPLATE.format(candidate_attributes=visible(domain, item))
        rows.append(item)
    return rows


def _ids(domain: str, keys: str) -> list[str]:
    return [f"{domain}-{k}" for k in keys.split()]


def product_tasks(domain: str, corpus: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    ref = corpus[0]
    prefix = visible(domain, ref)
    pool = _ids(domain, "01 02 03 04 05 06")
    roles = [n.POSITIVE, n.POSITIVE, n.P_VIOLATION, n.IMPLICIT_VIOLATION, n.RANDOM, n.RANDOM]
    conditions = [{"attribute": "color", "polarity": "P", "value": "red", "old_value": "blue"}]
    common = {"query_image": ref["image"], "query_image_id": ref["item_id"], "positive_ids": pool[:2]}
    constraints = {
        **common,
        "query_id": f"{domain}-q0",
        "task": CONSTRAINTS[domain],
        "query_text": n.CONSTRAINTS_QUERY_TEMPLATE.format(reference_attributes=prefix, query_text="I want it in red."),
        "candidate_ids": pool,
        "candidate_roles": roles,
        "candidate_trap": [False] * TOY_POOL,
        "profile": "D1",
        "conditions": conditions,
    }
    turns = ["I would like it in green.", "Actually, make it red instead."]
    dialogue = " ".join(n.STATE_TURN_TEMPLATE.format(index=i + 1, turn=t) for i, t in enumerate(turns))
    state = {
        **common,
        "query_id": f"{domain}-q0",
        "task": STATE[domain],
        "query_text": n.STATE_QUERY_PREFIX.format(reference_attributes=prefix) + dialogue,
        "candidate_ids": pool,
        "candidate_roles": roles[:5] + [n.CONFLICT_TRAP],
        "candidate_trap": [False] * 5 + [True],
        "profile": "D1",
        "conditions": conditions,
        "turns": turns,
        "session_type": "conflict",
        "num_turns": 2,
        "source_query_id": f"{domain}-q0",
    }
    same_pool = _ids(domain, "07 01 03 05 08 09")
    same = {
        **common,
        "query_id": f"{domain}-s0",
        "task": SAME[domain],
        "query_text": n.CONSTRAINTS_QUERY_TEMPLATE.format(
            reference_attributes=prefix, query_text=n.SAME_TEMPLATES[domain][0]
        ),
        "candidate_ids": same_pool,
        "candidate_roles": [n.POSITIVE] + [n.RANDOM] * 5,
        "candidate_trap": [False] * TOY_POOL,
        "positive_ids": same_pool[:1],
    }
    return {CONSTRAINTS[domain]: [constraints], STATE[domain]: [state], SAME[domain]: [same]}


# --- abstraction: concept wnid -> (name, depth, parent) ------------------------------------------------------
CONCEPTS = {
    "n00000010": ("animal", 5, None),
    "n00000020": ("mammal", 6, "n00000010"),
    "n00000030": ("bird", 6, "n00000010"),
    "n00000021": ("dog", 7, "n00000020"),  # leaf
    "n00000022": ("cat", 7, "n00000020"),  # leaf
    "n00000023": ("horse", 7, "n00000020"),  # leaf (no picture)
    "n00000031": ("sparrow", 7, "n00000030"),  # leaf
    "n00000032": ("robin", 7, "n00000030"),  # leaf
    "n00000033": ("finch", 7, "n00000030"),  # leaf
}
# instance id -> leaf wnid
INSTANCES = {
    "img-00": "n00000021",
    "img-01": "n00000021",
    "img-02": "n00000022",
    "img-03": "n00000031",
    "img-04": "n00000032",
    "img-05": "n00000033",
    "img-06": "n00000033",
    "img-07": "n00000022",
    "img-08": "n00000022",
    "img-09": "n00000031",  # a second sparrow picture, in no pool (tests swap it in)
}


def self_id(wnid: str) -> str:
    return n.SELF_CONCEPT_ID_TEMPLATE.format(wnid=wnid)


def concept_corpus() -> list[dict[str, Any]]:
    """Every concept with "{name}. {definition}" text, then the leaves again as definition-only Self items."""
    rows = []
    for wnid, (name, depth, parent) in CONCEPTS.items():
        definition = f"the toy concept {name}"
        rows.append(
            {
                "item_id": wnid,
                "image": None,
                "text": n.CONCEPT_TEMPLATE.format(name=name, definition=definition),
                "attributes": {"parent": parent},
                "wnid": wnid,
                "name": name,
                "definition": definition,
                "lemmas": [name],
                "depth": depth,
                "lexname": "noun.animal",
            }
        )
    for row in list(rows):
        if row["depth"] == 7:  # leaves
            rows.append(
                {
                    **row,
                    "item_id": self_id(row["wnid"]),
                    "text": n.SELF_CONCEPT_TEMPLATE.format(definition=row["definition"]),
                }
            )
    return rows


def instance_corpus() -> list[dict[str, Any]]:
    return [
        {
            "item_id": item,
            "image": {"bytes": png(100 + i), "path": None},
            "text": CONCEPTS[leaf][0],
            "attributes": {"wnid": leaf},
            "wnid": leaf,
            "leaf_name": CONCEPTS[leaf][0],
        }
        for i, (item, leaf) in enumerate(INSTANCES.items())
    ]


def abstraction_tasks(concepts: list[dict[str, Any]], instances: list[dict[str, Any]]) -> dict[str, list[dict]]:
    by_id = {row["item_id"]: row for row in concepts}
    query = instances[0]  # a dog picture
    i2c_pool = ["n00000020", "n00000010", "n00000030", "n00000022", "n00000031", "n00000032"]
    i2c = {
        "query_id": "i2c-0",
        "task": I2C,
        "query_text": query["leaf_name"],
        "query_image": query["image"],
        "query_image_id": query["item_id"],
        "instruction": n.I2C_INSTRUCTION,
        "candidate_ids": i2c_pool,
        "candidate_roles": [n.POSITIVE, n.POSITIVE, n.SIBLING, n.SIBLING, n.RANDOM, n.RANDOM],
        "candidate_trap": [False] * TOY_POOL,
        "positive_ids": i2c_pool[:2],
        "positive_hops": [1, 2],
        "wnid": query["wnid"],
    }
    concept = by_id["n00000020"]  # mammal: the dog and cat pictures are its descendants, a sparrow is not
    c2i_pool = ["img-00", "img-01", "img-02", "img-07", "img-08", "img-03"]
    c2i = {
        "query_id": "c2i-0",
        "task": C2I,
        "query_text": concept["text"],
        "instruction": n.C2I_INSTRUCTION,
        "candidate_ids": c2i_pool,
        "candidate_roles": [n.POSITIVE] * 5 + [n.SIBLING],
        "candidate_trap": [False] * TOY_POOL,
        "positive_ids": c2i_pool[:5],
        "depth": concept["depth"],
        "wnid": concept["wnid"],
    }
    leaves = ("n00000021", "n00000022", "n00000023", "n00000031", "n00000032", "n00000033")
    self_i2c_pool = [self_id(w) for w in leaves]
    self_i2c = {
        "query_id": "self-i2c-0",
        "task": SELF_I2C,
        "query_text": query["leaf_name"],
        "query_image": query["image"],
        "query_image_id": query["item_id"],
        "instruction": n.I2C_INSTRUCTION,
        "candidate_ids": self_i2c_pool,
        "candidate_roles": [n.POSITIVE] + [n.RANDOM] * 5,
        "candidate_trap": [False] * TOY_POOL,
        "positive_ids": self_i2c_pool[:1],
        "wnid": query["wnid"],
    }
    leaf = by_id["n00000031"]  # sparrow, definition only (paper A.1 Self)
    self_c2i_pool = ["img-03", "img-00", "img-02", "img-04", "img-05", "img-07"]
    self_c2i = {
        "query_id": "self-c2i-0",
        "task": SELF_C2I,
        "query_text": leaf["definition"],
        "instruction": n.C2I_INSTRUCTION,
        "candidate_ids": self_c2i_pool,
        "candidate_roles": [n.POSITIVE] + [n.RANDOM] * 5,
        "candidate_trap": [False] * TOY_POOL,
        "positive_ids": self_c2i_pool[:1],
        "wnid": leaf["wnid"],
    }
    return {I2C: [i2c], C2I: [c2i], SELF_I2C: [self_i2c], SELF_C2I: [self_c2i]}


def toy_tables() -> dict[str, list[dict[str, Any]]]:
    """Rows of all 14 configs, in `names.ALL_CONFIGS` order."""
    concepts, instances = concept_corpus(), instance_corpus()
    tables: dict[str, list[dict[str, Any]]] = {
        n.CONCEPTS_CORPUS: concepts,
        n.INSTANCES_CORPUS: instances,
        **abstraction_tasks(concepts, instances),
    }
    for domain in n.DOMAINS:
        corpus = product_corpus(domain)
        tables[n.DOMAIN_CORPUS[domain]] = corpus
        tables.update(product_tasks(domain, corpus))
    # each row deep-copied on its own, so no list is shared between two rows
    return {config: [copy.deepcopy(row) for row in tables[config]] for config in n.ALL_CONFIGS}


def toy_audit() -> dict[str, Any]:
    return {"benchmark": "triad", "edition": "toy", "pool_size": TOY_POOL}


def write_toy(out: Path, tables: dict[str, list[dict[str, Any]]] | None = None, **kwargs: Any) -> Path:
    """Write the toy folder (or the given tables) with TRIAD features; returns the folder."""
    from triad_dataset.folder.io import write_folder

    tables = toy_tables() if tables is None else tables
    features = all_features()
    audit = kwargs.pop("audit", toy_audit())
    return write_folder(
        out, tables, features={c: features[c] for c in tables}, card="# Toy TRIAD\n", audit=audit, **kwargs
    )


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
