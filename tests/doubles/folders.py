"""Tiny hand-made TRIAD and ARK folders (a few queries, pools of 20) for tests and benchmarks of the runner,
written with `triad_dataset.folder.io.write_folder`. They are shaped like the real configs but are not benchmarks.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import numpy as np

from ark_dataset import names as ark_names
from triad_dataset.contract import names as n
from triad_dataset.contract import serialize

_CARS = "cars"
CONSTRAINTS_CARS = n.CONSTRAINTS_CONFIGS[n.DOMAINS.index(_CARS)]
STATE_CARS = n.STATE_CONFIGS[n.DOMAINS.index(_CARS)]
I2C = n.ABSTRACTION_CONFIGS[0]
# two subtypes for tiny ARK folders: calendar (in the mini edition) and metro (absent from it)
TINY_ARK_SUBTYPES = ark_names.DOMAIN_SUBTYPES["humanities_social_science"][3:5]


def png(rgb: tuple[int, int, int], size: int = 16) -> bytes:
    """A solid-colour PNG with a one-pixel marker so that equal colours still differ by position."""
    from PIL import Image

    img = Image.new("RGB", (size, size), rgb)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _colour(rng: np.random.Generator) -> tuple[int, int, int]:
    r, g, b = (int(x) for x in rng.integers(0, 256, size=3))
    return r, g, b


def tiny_triad_tables(
    *, n_queries: int = 4, pool_size: int = 20, n_items: int = 30, seed: int = 0
) -> dict[str, list[dict[str, Any]]]:
    """constraints_cars, state_cars (paired), abstraction_i2c and their corpora."""
    rng = np.random.default_rng(seed)
    brands, years = ("Audi", "BMW", "Fiat", "Kia"), ("2010", "2012", "2014")
    items: list[dict[str, Any]] = []
    for i in range(n_items):
        brand, year = brands[i % len(brands)], years[(i // len(brands)) % len(years)]
        items.append(
            {
                "item_id": f"car{i:03d}",
                "product_id": f"p{i:03d}",
                "brand": brand,
                "year": year,
                "image": png(_colour(rng)),
                "text": serialize.candidate_text(_CARS, {"brand": brand, "year": year}),
                "attributes": {"colour": ("red", "blue", "grey")[i % 3]},
            }
        )
    constraints, state = [], []
    for q in range(n_queries):
        ref = items[q]
        others = [it["item_id"] for it in items if it["item_id"] != ref["item_id"]]
        pool = [str(x) for x in rng.permutation(others)[:pool_size]]
        roles = [n.POSITIVE if j < 2 else n.RANDOM for j in range(pool_size)]
        colours = ("red", "blue", "grey")
        target = colours[(q + 1) % 3]  # never the reference's own colour (no leakage, paper A.2)
        request = f"I want it in {target}"
        common = {
            "query_id": f"q{q}",
            "query_image": ref["image"],
            "query_image_id": ref["item_id"],
            "candidate_ids": pool,
            "candidate_roles": roles,
            "candidate_trap": [False] * pool_size,
            "positive_ids": pool[:2],
            "profile": "D1",
            "conditions": [{"attribute": "colour", "polarity": "P", "value": target, "old_value": None}],
        }
        constraints.append(
            {**common, "task": CONSTRAINTS_CARS, "query_text": serialize.constraints_query_text(_CARS, ref, request)}
        )
        old = colours[(q + 2) % 3]
        turns = [f"I want it in {old}", f"actually, make it {target} instead"]
        text = serialize.state_query_text(_CARS, ref, turns)
        state.append(
            {
                **common,
                "task": STATE_CARS,
                "query_text": text,
                "turns": turns,
                "session_type": "conflict",
                "num_turns": 2,
                "source_query_id": f"q{q}",
            }
        )
    concepts: list[dict[str, Any]] = [
        {
            "item_id": f"n{i:08d}",
            "wnid": f"n{i:08d}",
            "name": f"concept {i}",
            "definition": f"thing {i}",
            "lemmas": [f"concept {i}"],
            "depth": 5 + i % 3,
            "lexname": "noun.artifact",
            "image": None,
            "text": n.CONCEPT_TEMPLATE.format(name=f"concept {i}", definition=f"thing {i}"),
            "attributes": {},
        }
        for i in range(pool_size + 5)
    ]
    instances = [
        {
            "item_id": f"img{i}",
            "wnid": f"n{i:08d}",
            "leaf_name": f"leaf {i}",
            "image": png(_colour(rng)),
            "text": f"leaf {i}",
            "attributes": {},
        }
        for i in range(3)
    ]
    i2c = []
    for q, inst in enumerate(instances):
        pool = [c["item_id"] for c in concepts[q : q + pool_size]]
        i2c.append(
            {
                "query_id": f"i2c{q}",
                "task": I2C,
                "query_text": inst["leaf_name"],
                "query_image": inst["image"],
                "query_image_id": inst["item_id"],
                "instruction": n.I2C_INSTRUCTION,
                "candidate_ids": pool,
                "candidate_roles": [n.POSITIVE] + [n.RANDOM] * (pool_size - 1),
                "candidate_trap": [False] * pool_size,
                "positive_ids": pool[:1],
                "positive_hops": [1],
                "wnid": inst["wnid"],
            }
        )
    return {
        CONSTRAINTS_CARS: constraints,
        STATE_CARS: state,
        I2C: i2c,
        n.DOMAIN_CORPUS["cars"]: items,
        n.CONCEPTS_CORPUS: concepts,
        n.INSTANCES_CORPUS: instances,
    }


def write_tiny_triad(
    out_dir: str | os.PathLike[str], *, tables: dict[str, list[dict]] | None = None, pool_size: int = 20, **kwargs: Any
) -> Path:
    from triad_dataset.contract.features import features_for
    from triad_dataset.folder.io import write_folder

    tables = tables or tiny_triad_tables(pool_size=pool_size, **kwargs)
    return write_folder(
        out_dir,
        tables,
        features={c: features_for(c) for c in tables},
        card="# tiny TRIAD test folder\n",
        audit={"benchmark": "triad", "pool_size": pool_size},
        overwrite=True,
    )


def tiny_ark_tables(
    *, subtypes: tuple[str, ...] = TINY_ARK_SUBTYPES, n_queries: int = 5, gallery: int = 30, seed: int = 0
) -> dict[str, list[dict[str, Any]]]:
    from ark_dataset.names import GALLERY_SUFFIX, SUBTYPE_DOMAIN

    rng = np.random.default_rng(seed)
    tables: dict[str, list[dict[str, Any]]] = {}
    for s in subtypes:
        items = []
        for i in range(gallery):
            has_image = i % 2 == 0
            items.append(
                {
                    "item_id": f"{s}-g{i:03d}",
                    "text": f"{s} item {i} " + "x" * (i % 7),
                    "image": png(_colour(rng)) if has_image else None,
                    "modality": "text_image" if has_image else "text",
                }
            )
        rows = []
        for q in range(n_queries):
            pos = items[int(rng.integers(gallery))]["item_id"]
            negs = [it["item_id"] for it in items if it["item_id"] != pos][:2]
            rows.append(
                {
                    "query_id": f"{s}-q{q}",
                    "domain": SUBTYPE_DOMAIN[s],
                    "subtype": s,
                    "query_text": f"find {s} thing number {q}",
                    "query_image": png(_colour(rng)) if q % 2 else None,
                    "positive_id": pos,
                    "hard_negative_ids": negs,
                    "cognitive_demand": "reasoning_intensive",
                    "reasoning_skills": ["logical"] if q % 2 else ["symbolic", "logical"],
                }
            )
        tables[s] = rows
        tables[s + GALLERY_SUFFIX] = items
    return tables


def write_tiny_ark(
    out_dir: str | os.PathLike[str], *, tables: dict[str, list[dict]] | None = None, **kwargs: Any
) -> Path:
    from ark_dataset.features import features_for
    from triad_dataset.folder.io import write_folder

    tables = tables or tiny_ark_tables(**kwargs)
    return write_folder(
        out_dir,
        tables,
        features={c: features_for(c) for c in tables},
        card="# tiny ARK test folder\n",
        audit={"benchmark": "ark"},
        overwrite=True,
    )


class HashedEncoder:
    """A model-free encoder for tests and benchmarks: each input's vector comes from blake2b of its role, text,
    image bytes and instruction (equal inputs, equal vectors), so the runner around it is what gets measured."""

    dim = 16

    @staticmethod
    def vector(role: str, text: str, image: bytes | None, instruction: str | None) -> np.ndarray:
        import hashlib

        h = hashlib.blake2b(digest_size=64)
        for part in (role.encode(), (text or "").encode(), image or b"-", (instruction or "").encode()):
            h.update(part)
        return (np.frombuffer(h.digest(), dtype=np.uint32) / 2**32 - 0.5).astype(np.float32)

    def encode_queries(self, batch: list) -> np.ndarray:
        return np.stack([self.vector("q", b.text, b.image, b.instruction) for b in batch])

    def encode_candidates(self, batch: list) -> np.ndarray:
        return np.stack([self.vector("c", b.text, b.image, b.instruction) for b in batch])
