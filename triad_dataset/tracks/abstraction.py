"""Abstraction track (I2C, C2I) and the Self reference task, built from WordNet 3.0 and instance images.

Rules (paper Appendix A.1; serialization B.3; docs/protocol.md §1-§3), with every distance the shortest hypernym path:
- a **retained leaf** is a WordNet class with a retained image (one image per class);
- **concepts** are synsets 1 or 2 levels above a retained leaf with depth >= 5 and >= 5 retained images of classes
  1-2 levels below them (so every concept can be a C2I query with 5 positives);
- **I2C**: query = instance image + leaf-class name; positives = concepts 1-2 levels above the leaf (nearest first, at
  most 5; blacklisted concepts are never level-2 positives); `sibling` negatives = concepts sharing a direct
  hypernym with the leaf or with one of its ancestors 1-2 levels up; `random` fill from the concept pool, never the leaf's own
  class or any of its ancestors;
- **C2I**: query = ``"{name}. {definition}"``; 5 positives = images of classes 1-2 levels below; `sibling` negatives =
  images of a sibling of the concept (a synset sharing a direct hypernym) or of any of its descendants; `random` fill
  from all images, never the concept's own class or its descendants;
- **Self**: one independent pool of 1,000 leaf concepts shown by definition only (items ``{wnid}#def``); Self-I2C
  retrieves an instance's own leaf concept, Self-C2I the image of the described leaf class; exactly one positive.

Candidate pools are shuffled per query with seeded `random.Random` streams (one per config), so the same inputs and
seed give identical rows.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any

from tqdm.auto import tqdm

from triad_dataset.contract import names
from triad_dataset.contract.errors import TriadError
from triad_dataset.contract.records import BuildResult
from triad_dataset.sources.imagefolder import ImageCollection, InstanceImage
from triad_dataset.sources.wordnet import NounGraph

BLACKLIST_PATH = Path(__file__).resolve().parents[1] / "data" / "abstraction_blacklist.tsv"
MIN_CONCEPT_DEPTH = 5  # paper A.1: concepts have depth >= 5
MIN_CONCEPT_IMAGES = 5  # paper A.1: >= 5 retained descendant images (counted 1-2 levels below, see docs)
MAX_LEVELS = 2  # paper A.1: positives are 1 or 2 levels away
# Paper A.1 / Table 7 figures, reported next to ours in the audit.
PAPER_FIGURES = {
    names.ABSTRACTION_CONFIGS[0]: {"mean_positives": 1.77, "mean_siblings": 9.05},
    names.ABSTRACTION_CONFIGS[1]: {"mean_positives": 5.0, "mean_siblings": 150.87, "depth_range": [5, 16]},
    "concepts": 1317,
    "instances": 15981,
    "blacklist": 34,
    "removed_shallow": 36,
}
_NULL_QUERY_FIELDS = ("profile", "conditions", "turns", "session_type", "num_turns", "source_query_id")


def load_blacklist(path: str | Path = BLACKLIST_PATH) -> tuple[str, ...]:
    """The wnids of a blacklist file (``wnid<TAB>name`` lines, ``#`` comments)."""
    out = []
    for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        wnid = line.split("\t")[0].strip()
        if not (len(wnid) == 9 and wnid[0] == "n" and wnid[1:].isdigit()):
            raise TriadError(f"{path}:{lineno}: {wnid!r} is not a WordNet noun id like n02084071")
        out.append(wnid)
    return tuple(out)


@dataclass
class Taxonomy:
    """What the pools are drawn from: retained leaves, their images, and the concept pool (paper A.1)."""

    graph: NounGraph
    image_of: dict[int, InstanceImage]  # retained leaf node -> its image
    leaves: list[int]  # sorted retained leaf nodes
    below: dict[int, list[tuple[int, int]]]  # node -> [(retained leaf, distance 1|2)], leaves sorted
    concepts: list[int]  # sorted concept nodes
    stats: dict[str, int]

    @property
    def concept_set(self) -> frozenset[int]:
        return frozenset(self.concepts)


def select_taxonomy(graph: NounGraph, images: ImageCollection | Iterable[InstanceImage]) -> Taxonomy:
    """Retained leaves and the concept pool (paper A.1: 1-2 levels up, depth >= 5, >= 5 images)."""
    items = images.images if isinstance(images, ImageCollection) else list(images)
    image_of: dict[int, InstanceImage] = {}
    not_in_wordnet = 0
    for im in items:
        node = graph.index.get(im.wnid)
        if node is None:
            not_in_wordnet += 1
            continue
        if node in image_of:
            raise ValueError(f"two images for class {im.wnid}: {image_of[node].item_id}, {im.item_id} (one per class)")
        image_of[node] = im
    leaves = sorted(image_of)
    below: dict[int, list[tuple[int, int]]] = {}
    for leaf in leaves:
        for anc, dist in graph.ancestor_distances(leaf, MAX_LEVELS).items():
            below.setdefault(anc, []).append((leaf, dist))
    enough = {a for a, lst in below.items() if len(lst) >= MIN_CONCEPT_IMAGES}
    deep = {a for a in below if graph.depth[a] >= MIN_CONCEPT_DEPTH}
    concepts = sorted(enough & deep)
    stats = {
        "images_not_in_wordnet": not_in_wordnet,
        "retained_leaves": len(leaves),
        "concept_candidates": len(below),
        "removed_shallow": len(enough - deep),
        "removed_few_images": len(deep - enough),
        "concepts": len(concepts),
    }
    return Taxonomy(graph, image_of, leaves, below, concepts, stats)


# ---------------------------------------------------------------------------------------------------------------
def _query_row(config: str, k: int, **fields: Any) -> dict[str, Any]:
    row = {"query_id": f"{config}-{k:05d}", "task": config, **fields}
    row["candidate_trap"] = [False] * len(row["candidate_ids"])
    for name in _NULL_QUERY_FIELDS:
        row[name] = None
    return row


def _pool(rng: random.Random, groups: Sequence[tuple[str, Sequence[str]]]) -> tuple[list[str], list[str]]:
    """Concatenate (role, ids) groups and shuffle ids and roles together."""
    pairs = [(cid, role) for role, ids in groups for cid in ids]
    rng.shuffle(pairs)
    return [c for c, _ in pairs], [r for _, r in pairs]


def _fill(rng: random.Random, universe: Sequence[int], banned: set[int], need: int, where: str) -> list[int]:
    eligible = [x for x in universe if x not in banned]
    if len(eligible) < need:
        raise TriadError(f"{where}: only {len(eligible)} eligible random candidates, {need} needed to fill the pool")
    return rng.sample(eligible, need)


def _concept_id(graph: NounGraph, node: int) -> str:
    return graph.wnids[node]


def _i2c_positives(tax: Taxonomy, leaf: int, blacklist: frozenset[int]) -> list[tuple[int, int]]:
    """(concept, hop) ancestors 1-2 levels up; blacklisted concepts are not level-2 positives (paper A.1)."""
    cs = tax.concept_set
    return sorted(
        (a, d)
        for a, d in tax.graph.ancestor_distances(leaf, MAX_LEVELS).items()
        if a in cs and not (d == 2 and a in blacklist)
    )


def i2c_row(
    tax: Taxonomy, k: int, leaf: int, *, pool_size: int, rng: random.Random, blacklist: frozenset[int] = frozenset()
) -> dict[str, Any]:
    """The I2C query row for the image of retained leaf `leaf` (the k-th query)."""
    config = names.ABSTRACTION_CONFIGS[0]
    g, cs = tax.graph, tax.concept_set
    ancestors = g.ancestor_distances(leaf)
    found = _i2c_positives(tax, leaf, blacklist)
    chosen: list[tuple[int, int]] = []
    for hop in (1, 2):  # paper A.1: at most 5 positives; we keep the nearest first
        level = [a for a, d in found if d == hop]
        room = names.I2C_MAX_POSITIVES - len(chosen)
        chosen += [(a, hop) for a in sorted(rng.sample(level, room) if len(level) > room else level)]
    positives = [a for a, _ in chosen]
    # Sibling hard negatives (paper A.1, "taxonomy-derived"): pool concepts sharing a direct hypernym with the
    # leaf or with one of its ancestors 1-2 levels up, never the leaf or one of its ancestors.
    near = [leaf, *(a for a, d in ancestors.items() if d <= MAX_LEVELS)]
    siblings = sorted(
        {
            c
            for x in near
            for p in g.parents(x).tolist()
            for c in g.children(p).tolist()
            if c in cs and c != leaf and c not in ancestors
        }
    )
    if len(siblings) > pool_size - len(positives):
        siblings = sorted(rng.sample(siblings, pool_size - len(positives)))
    banned = set(ancestors) | {leaf} | set(siblings)  # paper A.1: random fill never the own class or an ancestor
    where = f"{config}-{k:05d} ({g.wnids[leaf]})"
    fill = _fill(rng, tax.concepts, banned, pool_size - len(positives) - len(siblings), where)
    ids, roles = _pool(
        rng,
        [
            (names.POSITIVE, [_concept_id(g, a) for a in positives]),
            (names.SIBLING, [_concept_id(g, a) for a in siblings]),
            (names.RANDOM, [_concept_id(g, a) for a in fill]),
        ],
    )
    image = tax.image_of[leaf]
    return _query_row(
        config,
        k,
        query_text=g.name(leaf),
        query_image=image.feature(),
        query_image_id=image.item_id,
        instruction=names.I2C_INSTRUCTION,
        candidate_ids=ids,
        candidate_roles=roles,
        positive_ids=[_concept_id(g, a) for a in positives],
        positive_hops=[h for _, h in chosen],
        depth=None,
        wnid=g.wnids[leaf],
    )


def c2i_row(tax: Taxonomy, k: int, concept: int, *, pool_size: int, rng: random.Random) -> dict[str, Any]:
    """The C2I query row for concept `concept` (the k-th query)."""
    config = names.ABSTRACTION_CONFIGS[1]
    g = tax.graph
    descendants = set(g.descendant_distances(concept)) | {concept}
    ancestors = set(g.ancestor_distances(concept))
    # paper A.1: 5 positives, images of classes 1-2 levels below
    positives = sorted(rng.sample([leaf for leaf, _ in tax.below[concept]], names.C2I_POSITIVES))
    # Sibling-descendant negatives (paper A.1): images of a synset sharing a direct hypernym with the concept or
    # of any of its descendants, never an instance of the concept itself.
    sibling_nodes = {c for p in g.parents(concept).tolist() for c in g.children(p).tolist()}
    sibling_nodes -= descendants | ancestors
    siblings = sorted(
        {
            x
            for s in sibling_nodes
            for x in (s, *g.descendant_distances(s))
            if x in tax.image_of and x not in descendants
        }
    )
    if len(siblings) > pool_size - len(positives):
        siblings = sorted(rng.sample(siblings, pool_size - len(positives)))
    # paper A.1: random fill never takes an instance of the concept (a strict descendant class; we also exclude
    # the concept's own class, an unlabeled true instance)
    banned = descendants | set(siblings)
    where = f"{config}-{k:05d} ({g.wnids[concept]})"
    fill = _fill(rng, tax.leaves, banned, pool_size - len(positives) - len(siblings), where)
    ids, roles = _pool(
        rng,
        [
            (names.POSITIVE, [tax.image_of[x].item_id for x in positives]),
            (names.SIBLING, [tax.image_of[x].item_id for x in siblings]),
            (names.RANDOM, [tax.image_of[x].item_id for x in fill]),
        ],
    )
    return _query_row(
        config,
        k,
        query_text=names.CONCEPT_TEMPLATE.format(name=g.name(concept), definition=g.definitions[concept]),
        query_image=None,
        query_image_id=None,
        instruction=names.C2I_INSTRUCTION,
        candidate_ids=ids,
        candidate_roles=roles,
        positive_ids=[tax.image_of[x].item_id for x in positives],
        positive_hops=None,
        depth=int(g.depth[concept]),
        wnid=g.wnids[concept],
    )


def _build_i2c(
    tax: Taxonomy, n_queries: int, pool_size: int, seed: int, blacklist: frozenset[int], progress: bool
) -> list[dict[str, Any]]:
    config = names.ABSTRACTION_CONFIGS[0]
    rng = random.Random(f"{seed}/{config}")
    # paper B.1: hop-1 AP is reported over all I2C queries, so every query has a concept one level up
    eligible = [leaf for leaf in tax.leaves if any(d == 1 for _, d in _i2c_positives(tax, leaf, blacklist))]
    if len(eligible) < n_queries:
        raise TriadError(
            f"{config}: only {len(eligible)} images have a concept one level up; {n_queries} queries asked"
        )
    queries = rng.sample(eligible, n_queries)
    return [
        i2c_row(tax, k, leaf, pool_size=pool_size, rng=rng, blacklist=blacklist)
        for k, leaf in enumerate(tqdm(queries, desc=config, disable=not progress))
    ]


def _build_c2i(tax: Taxonomy, n_queries: int, pool_size: int, seed: int, progress: bool) -> list[dict[str, Any]]:
    config = names.ABSTRACTION_CONFIGS[1]
    rng = random.Random(f"{seed}/{config}")
    if len(tax.concepts) < n_queries:
        raise TriadError(f"{config}: only {len(tax.concepts)} concepts; {n_queries} queries asked")
    queries = rng.sample(tax.concepts, n_queries)
    return [
        c2i_row(tax, k, concept, pool_size=pool_size, rng=rng)
        for k, concept in enumerate(tqdm(queries, desc=config, disable=not progress))
    ]


def _self_id(graph: NounGraph, node: int) -> str:
    return names.SELF_CONCEPT_ID_TEMPLATE.format(wnid=graph.wnids[node])


def _build_self(tax: Taxonomy, n_queries: int, pool_size: int, seed: int) -> tuple[list[int], dict[str, list]]:
    """Self-I2C and Self-C2I over one independent pool of `pool_size` leaf classes (paper A.1)."""
    g = tax.graph
    i2c, c2i = names.SELF_CONFIGS
    if len(tax.leaves) < pool_size:
        raise TriadError(f"{i2c}: only {len(tax.leaves)} leaf classes with an image; the Self pool needs {pool_size}")
    if n_queries > pool_size:
        raise TriadError(f"{i2c}: {n_queries} queries asked but the Self pool has {pool_size} leaf classes")
    pool = sorted(random.Random(f"{seed}/self-pool").sample(tax.leaves, pool_size))
    tables: dict[str, list] = {i2c: [], c2i: []}
    for config in (i2c, c2i):
        rng = random.Random(f"{seed}/{config}")
        for k, leaf in enumerate(rng.sample(pool, n_queries)):
            others = [x for x in pool if x != leaf]
            if config == i2c:
                ids, roles = _pool(
                    rng, [(names.POSITIVE, [_self_id(g, leaf)]), (names.RANDOM, [_self_id(g, x) for x in others])]
                )
                image = tax.image_of[leaf]
                fields: dict[str, Any] = dict(
                    query_text=g.name(leaf),
                    query_image=image.feature(),
                    query_image_id=image.item_id,
                    instruction=names.I2C_INSTRUCTION,
                    positive_ids=[_self_id(g, leaf)],
                )
            else:
                ids, roles = _pool(
                    rng,
                    [
                        (names.POSITIVE, [tax.image_of[leaf].item_id]),
                        (names.RANDOM, [tax.image_of[x].item_id for x in others]),
                    ],
                )
                fields = dict(
                    query_text=names.SELF_CONCEPT_TEMPLATE.format(definition=g.definitions[leaf]),
                    query_image=None,
                    query_image_id=None,
                    instruction=names.C2I_INSTRUCTION,
                    positive_ids=[tax.image_of[leaf].item_id],
                )
            tables[config].append(
                _query_row(
                    config,
                    k,
                    candidate_ids=ids,
                    candidate_roles=roles,
                    positive_hops=None,
                    depth=None,
                    wnid=g.wnids[leaf],
                    **fields,
                )
            )
    return pool, tables


# ---------------------------------------------------------------------------------------------------------------
def _concept_row(tax: Taxonomy, node: int, *, self_item: bool, blacklist: frozenset[int]) -> dict[str, Any]:
    g = tax.graph
    name, definition = g.name(node), g.definitions[node]
    # paper A.1: records keep the synset's paths (here: one shortest path from the root) and its hypernyms
    relations = {
        "hypernyms": [g.wnids[int(p)] for p in g.parents(node)],
        "path": [g.wnids[x] for x in g.root_path(node)],
    }
    if self_item:
        item_id, text = _self_id(g, node), names.SELF_CONCEPT_TEMPLATE.format(definition=definition)
        attributes: dict[str, Any] = {"kind": "self_leaf", **relations}
    else:
        item_id, text = _concept_id(g, node), names.CONCEPT_TEMPLATE.format(name=name, definition=definition)
        attributes = {
            "kind": "concept",
            **relations,
            "images_1_2_levels_below": len(tax.below[node]),
            "level2_blacklisted": node in blacklist,
        }
    return {
        "item_id": item_id,
        "image": None,
        "text": text,
        "attributes": attributes,
        "wnid": g.wnids[node],
        "name": name,
        "definition": definition,
        "lemmas": list(g.lemmas[node]),
        "depth": int(g.depth[node]),
        "lexname": g.lexname(node),
    }


def _instance_row(tax: Taxonomy, node: int) -> dict[str, Any]:
    g, im = tax.graph, tax.image_of[node]
    return {
        "item_id": im.item_id,
        "image": im.feature(),
        "text": g.name(node),
        "attributes": {
            "hypernyms": [g.wnids[int(p)] for p in g.parents(node)],
            "width": im.width,
            "height": im.height,
            "sha256": im.sha256,
        },
        "wnid": im.wnid,
        "leaf_name": g.name(node),
    }


def _role_means(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    counts: Counter[str] = Counter()
    for row in rows:
        counts.update(row["candidate_roles"])
    return {role: round(counts[role] / len(rows), 4) for role in names.ROLES if counts[role]} if rows else {}


def _config_audit(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    means = _role_means(rows)
    out: dict[str, Any] = {
        "queries": len(rows),
        "mean_positives": means.get(names.POSITIVE, 0.0),
        "mean_siblings": means.get(names.SIBLING, 0.0),
        "mean_per_role": means,
        "pool_sizes": sorted({len(r["candidate_ids"]) for r in rows}),
    }
    if rows and rows[0]["positive_hops"] is not None:
        hops = Counter(h for r in rows for h in r["positive_hops"])
        out["positive_hops"] = {str(h): hops[h] for h in sorted(hops)}
        out["queries_with_hop2"] = sum(1 for r in rows if 2 in r["positive_hops"])
    if rows and rows[0]["depth"] is not None:
        depths = Counter(r["depth"] for r in rows)
        out["depth_distribution"] = {str(d): depths[d] for d in sorted(depths)}
        out["depth_range"] = [min(depths), max(depths)]
        out["mean_depth"] = round(mean(r["depth"] for r in rows), 3)
    return out


def build_abstraction(
    graph: NounGraph,
    images: ImageCollection | Iterable[InstanceImage],
    *,
    n_queries: int,
    pool_size: int = names.POOL_SIZE,
    seed: int = 0,
    self_queries: int | None = None,
    blacklist: Iterable[str] | None = None,
    progress: bool = True,
) -> BuildResult:
    """Build abstraction_i2c/c2i, self_i2c/c2i and the two abstraction corpora (docs/protocol.md §1 columns).

    `self_queries` defaults to `n_queries`; `blacklist` (wnids) defaults to the shipped list of 34 broad concepts.
    Raises TriadError when the images cannot support the requested queries or full pools.
    """
    if n_queries < 1 or pool_size <= names.C2I_POSITIVES:
        raise ValueError(f"need n_queries >= 1 and pool_size > {names.C2I_POSITIVES}, got {n_queries}, {pool_size}")
    collection_audit = dict(images.audit) if isinstance(images, ImageCollection) else {}
    tax = select_taxonomy(graph, images)
    if len(tax.concepts) < 2:
        raise TriadError(
            f"only {len(tax.concepts)} concepts qualify (depth >= {MIN_CONCEPT_DEPTH}, "
            f">= {MIN_CONCEPT_IMAGES} images 1-2 levels below); add images"
        )
    if len(tax.concepts) <= pool_size:
        raise TriadError(
            f"{names.ABSTRACTION_CONFIGS[0]}: only {len(tax.concepts)} concepts qualify; {pool_size}-candidate "
            "pools need more (add images, or lower pool_size)"
        )
    black_wnids = tuple(load_blacklist() if blacklist is None else blacklist)
    black = frozenset(graph.index[w] for w in black_wnids if w in graph.index)
    i2c, c2i = names.ABSTRACTION_CONFIGS
    self_i2c, self_c2i = names.SELF_CONFIGS
    tables: dict[str, list[dict[str, Any]]] = {
        i2c: _build_i2c(tax, n_queries, pool_size, seed, black, progress),
        c2i: _build_c2i(tax, n_queries, pool_size, seed, progress),
    }
    self_pool, self_tables = _build_self(tax, self_queries or n_queries, pool_size, seed)
    tables.update(self_tables)
    tables[names.CONCEPTS_CORPUS] = [_concept_row(tax, c, self_item=False, blacklist=black) for c in tax.concepts] + [
        _concept_row(tax, leaf, self_item=True, blacklist=black) for leaf in self_pool
    ]
    tables[names.INSTANCES_CORPUS] = [_instance_row(tax, leaf) for leaf in tax.leaves]
    lexnames = Counter(graph.lexname(c) for c in tax.concepts)
    depths = Counter(int(graph.depth[c]) for c in tax.concepts)
    audit = {
        "wordnet": {
            "source": graph.source,
            "noun_synsets": len(graph),
            "hypernym_edges": int(len(graph.parent_idx)),
            "instance_hypernym_edges": int(graph.parent_instance.sum()),
        },
        "images": collection_audit,
        **tax.stats,
        "blacklist": {"size": len(black_wnids), "in_concept_pool": len(black & tax.concept_set)},
        "concept_lexnames": dict(lexnames.most_common()),
        "concept_depths": {str(d): depths[d] for d in sorted(depths)},
        "self_pool_leaf_concepts": len(self_pool),
        "configs": {name: _config_audit(rows) for name, rows in tables.items() if name in names.TASK_CONFIGS},
        "paper": PAPER_FIGURES,
        "seed": seed,
        "pool_size": pool_size,
    }
    return BuildResult(tables, {"abstraction": audit})


# ---------------------------------------------------------------------------------------------------------------
# Mini edition: the real WordNet 3.0 graph, the animal and artifact subtrees (every non-instance synset below them
# gets one rendered placeholder picture) - enough for 1,000-concept and 1,000-image pools.
MINI_ROOTS = ("n00015388", "n00021939")  # animal.n.01, artifact.n.01
MINI_QUERIES = 100


def build_mini_abstraction(seed: int = 0) -> BuildResult:
    """The mini edition's abstraction, Self and corpus configs (deterministic for a given seed)."""
    from triad_dataset.sources.placeholders import placeholder_images, subtree_classes
    from triad_dataset.sources.wordnet import load_wordnet

    graph = load_wordnet()
    images = placeholder_images(graph, subtree_classes(graph, MINI_ROOTS))
    images.audit["subtrees"] = list(MINI_ROOTS)
    return build_abstraction(graph, images, n_queries=MINI_QUERIES, seed=seed, progress=False)
