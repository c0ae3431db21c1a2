"""The dataset card (README.md) of a built TRIAD folder: what each config is, its fields, how it was built,
the sources' licences and the paper's citation. `folder.write_folder` adds the `configs:` / `dataset_info:` YAML.

>>> text = render_card("mini", {"summary": {}})
>>> text.startswith("---\\n") and "synthetic placeholders" in text and "arXiv:2611.12364" in text
True
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from triad_dataset.contract import names as n
from triad_dataset.folder.io import LICENSE_NAME

EDITIONS = ("mini", "full")
PAPER_TITLE = "TRIAD: Multimodal Retrieval across Abstraction, Constraints, and State"
ARXIV_ID = "2611.12364"
CITATION = f"""@misc{{triad2026,
  title         = {{{{{PAPER_TITLE}}}}},
  year          = {{2026}},
  eprint        = {{{ARXIV_ID}}},
  archivePrefix = {{arXiv}},
  url           = {{https://arxiv.org/abs/{ARXIV_ID}}}
}}"""

_I2C, _C2I = n.ABSTRACTION_CONFIGS
_SELF_I2C, _SELF_C2I = n.SELF_CONFIGS
CONFIG_DESCRIPTIONS: dict[str, str] = {
    _I2C: "Instance-to-Concept: an instance image plus its leaf-class name; positives are its WordNet ancestors "
    "one or two levels up (at most 5, hop label per positive); sibling concepts are hard negatives.",
    _C2I: "Concept-to-Instance: concept text `{name}. {definition}`; positives are 5 images of classes one or two "
    "levels below; sibling-descendant images are hard negatives; `depth` is the concept's WordNet depth.",
    **{
        c: f"Constraints ({d}): a reference product (image + visible fields) and a request with 1-3 conditions "
        "(profile D1-D7 = 1P, 1N, 2P, 2N, 1P1N, 2P1N, 1P2N); positives satisfy every condition and keep the "
        "preserved attributes; negatives are typed by the requirement they violate."
        for c, d in zip(n.CONSTRAINTS_CONFIGS, n.DOMAINS, strict=True)
    },
    **{
        c: f"State ({d}): the paired constraints query (same `query_id`, reference, final conditions and positive "
        "set) told as a 2-3 turn dialogue; conflict sessions revise a value, and `conflict_trap` candidates "
        "satisfy the superseded value."
        for c, d in zip(n.STATE_CONFIGS, n.DOMAINS, strict=True)
    },
    _SELF_I2C: "Self reference: an instance image plus leaf-class name; the single positive is its own leaf "
    "concept, whose text is the definition only (no name).",
    _SELF_C2I: "Self reference: a leaf concept's definition (no name); the single positive is that class's image.",
    **{
        c: f'Same reference ({d}): "find this exact item" (6 fixed templates, cycled); positives are other '
        "images of the same product."
        for c, d in zip(n.SAME_CONFIGS, n.DOMAINS, strict=True)
    },
    n.CONCEPTS_CORPUS: "Concepts that abstraction candidate ids point to (no image); Self items have ids "
    "`<wnid>#def` and definition-only text.",
    n.INSTANCES_CORPUS: "Instance images (one per WordNet leaf class) that abstraction candidate ids point to.",
    **{
        c: f"{d.capitalize()} products (image, visible fields, hidden attribute labels) that {d} candidate ids "
        "point to."
        for d, c in n.DOMAIN_CORPUS.items()
    },
}

QUERY_FIELDS = """| column | meaning |
|---|---|
| `query_id` | query id; a constraints row and a state row with the same id are a pair |
| `task` | the config name |
| `query_text` | the model-visible query text, already serialized (paper B.3) |
| `query_image` | the reference or instance picture (`Image()`), null for text-only queries |
| `query_image_id` | the corpus `item_id` of `query_image` |
| `instruction` | the directional instruction (abstraction and Self), else null |
| `candidate_ids` | the fixed candidate pool of this query (no duplicates, never the query's own image) |
| `candidate_roles` | aligned with `candidate_ids`: `positive`, `sibling`, `p_violation`, `n_violation`, `pn_violation`, `implicit_violation`, `visual`, `random`, `conflict_trap` |
| `candidate_trap` | aligned flag: the candidate satisfies a superseded value (may overlay another role) |
| `positive_ids` | the complete positive set (= the ids whose role is `positive`) |
| `positive_hops` | I2C: 1 or 2 per positive, aligned with `positive_ids` |
| `depth` | C2I: WordNet depth of the query concept |
| `profile` | constraints/state: D1-D7 |
| `conditions` | constraints/state: list of `{attribute, polarity (P/N), value, old_value}` (final intent) |
| `turns`, `session_type`, `num_turns`, `source_query_id` | state: the user turns, `natural`/`conflict`, 2-3 |
| `wnid` | abstraction and Self: WordNet id of the leaf class (I2C) or query concept (C2I) |"""

CORPUS_FIELDS = """| column | meaning |
|---|---|
| `item_id` | the id candidate lists point to |
| `image` | the picture (`Image()`), null for concepts |
| `text` | the model-visible text: `Product info: <visible fields>`, `{name}. {definition}`, or the leaf-class name |
| `attributes` | JSON object of hidden labels that define relevance; **never give them to a model** |
| `wnid`, `name`, `definition`, `lemmas`, `depth`, `lexname` | concepts: WordNet synset fields |
| `wnid`, `leaf_name` | instances: the leaf class |
| `product_id` + visible fields | products: shared by images of one product; Fashion `gender, brand, year, season`, Cars `brand, year` |"""

BUILD_RULES = """All configs are built by `triad_dataset` with the rules of the paper's Appendix A:

* **Abstraction** (A.1): WordNet 3.0 noun IS-A graph (hypernym and instance-hypernym edges, shortest-path
  distance). Concepts are 1-2 levels above a retained leaf class, depth >= 5, with >= 5 retained descendant images;
  34 overly broad concepts are excluded from I2C level-2 positives only. Pools: positives, taxonomy siblings, then a
  seeded random fill (I2C excludes the image's own class and its ancestors; C2I excludes strict descendants).
* **Constraints** (A.2): attributes have roles `constraint` / `modifiable` / `non_constraint_hard`; requests name
  only the target value of a positive condition (never the reference's value); pools hold every valid positive, then
  typed negatives with quotas 8/8/8/4 (Fashion) and 5/5/3/3 (Cars) for p/n/pn/implicit violations, then `visual`,
  then `random`; every negative fails the complete positive rule (potential-positive gate).
* **State** (A.3): each constraints query becomes a 2-3 turn dialogue (per 1,000: 300 two-turn conflict, 225
  three-turn conflict, 225 two-turn natural, 250 three-turn natural), deterministic templates, seed 42;
  conflict traps satisfy the superseded value and the other active conditions.
* **Same / Self**: 6 fixed templates per domain, cycled; Self uses definition-only concept text and 1 positive.

Every random choice is seeded; the same inputs give byte-identical parquet. `triad validate` checks every
invariant (pool size, duplicates, own image, positives = positive roles, aligned lists, ids present in corpora,
constraints/state pairing, no hidden label in model-visible text) and reported 0 violations for this folder."""

MINI_SOURCES = """**This is the mini edition, for tests, demos and CI.** It is built offline by the same code as the full
build, but its pictures are **synthetic placeholders**: product pictures are rendered with Pillow from their
attributes (colour, pattern, sleeve/length and category silhouette for Fashion; body type, colour and view for
Cars), and each WordNet leaf class gets one rendered placeholder picture instead of an ImageNet photograph. The
Fashion and Cars catalogs are synthetic. Scores on the mini edition are **not** comparable with the paper's.

Sources and licences:

* **WordNet 3.0** (names, definitions, lemmas and the IS-A graph of the abstraction configs): Copyright 2006 by
  Princeton University, distributed under the WordNet License (permissive, BSD-style; its text is in this folder's
  `LICENSE.md`). https://wordnet.princeton.edu/license-and-commercial-use
* Rendered pictures and synthetic catalogs: generated by this project's code (Apache-2.0)."""

FULL_SOURCES = """This folder was built from the user's own copies of the public sources below. **Their terms apply to
this folder; check them before sharing it** (in particular, ImageNet images may not be redistributed).

* **WordNet 3.0**: Copyright 2006 by Princeton University, WordNet License (permissive, BSD-style; its text is in
  this folder's `LICENSE.md`). https://wordnet.princeton.edu/license-and-commercial-use
* **ImageNet-21K** images (abstraction instances): ImageNet terms of access — non-commercial research and
  educational use only; the images belong to their owners. https://image-net.org/download
* **Fashion Product Images** (Kaggle dataset by Param Aggarwal, 2019): the licence stated on its Kaggle page
  applies. https://www.kaggle.com/datasets/paramaggarwal/fashion-product-images-dataset
* **Stanford Cars** (Krause, Stark, Deng and Fei-Fei, "3D Object Representations for Fine-Grained Categorization",
  ICCV Workshops 2013): images collected from the web, provided for research use under the dataset's terms.
* Extra visual-attribute annotations supplied by the user: their own terms."""


def _front_matter(edition: str) -> dict[str, Any]:
    return {
        "pretty_name": f"TRIAD ({edition} edition)",
        "language": ["en"],
        "license": "other",
        "license_name": "apache-2.0-and-wordnet" if edition == "mini" else "source-terms",
        "license_link": LICENSE_NAME,
        "task_categories": ["text-retrieval", "image-feature-extraction"],
        "tags": ["multimodal-retrieval", "composed-image-retrieval", "benchmark", "wordnet", "triad"],
    }  # size_categories: written from the rows by `folder.io.card_with_configs`


WORDNET_LICENSE = Path(__file__).resolve().parents[1] / "data" / "WORDNET_LICENSE.txt"


def licence_text(edition: str) -> str:
    """LICENSE.md of a TRIAD folder (the card's `license_link`): the sources' terms, then the WordNet License."""
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition {edition!r}; known: {EDITIONS}")
    generated = (
        "The queries, pools and labels were built by the triad-benchmark code (Apache-2.0, "
        "https://www.apache.org/licenses/LICENSE-2.0)."
    )
    sources = MINI_SOURCES if edition == "mini" else FULL_SOURCES
    wordnet = WORDNET_LICENSE.read_text(encoding="utf-8").strip()
    return f"# Licences of this TRIAD {edition} edition\n\n{sources}\n\n{generated}\n\n## WordNet License\n\n```\n{wordnet}\n```\n"


def _config_table(summary: Mapping[str, Mapping[str, Any]], configs: list[str]) -> str:
    lines = ["| config | rows | what it is |", "|---|---:|---|"]
    for config in configs:
        rows = summary.get(config, {}).get("queries", "")
        lines.append(f"| `{config}` | {rows} | {CONFIG_DESCRIPTIONS[config]} |")
    return "\n".join(lines)


def render_card(
    edition: str,
    audit: Mapping[str, Any],
    configs: list[str] | None = None,
    corpus_sizes: Mapping[str, int] | None = None,
) -> str:
    """The card text (YAML front matter + markdown) of a TRIAD folder of the given edition."""
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition {edition!r}; known: {EDITIONS}")
    configs = list(configs or n.ALL_CONFIGS)
    summary = dict(audit.get("summary", {}))
    for corpus, size in (corpus_sizes or {}).items():
        summary[corpus] = {"queries": size}
    front = yaml.safe_dump(_front_matter(edition), sort_keys=False, allow_unicode=True)
    sources = MINI_SOURCES if edition == "mini" else FULL_SOURCES
    pool_size = audit.get("pool_size", n.POOL_SIZE)
    pool = f"{pool_size:,} candidates" if isinstance(pool_size, int) else "candidates (every eligible product)"
    return f"""---
{front}---

# TRIAD — {edition} edition

TRIAD evaluates multimodal retrievers on requests that similarity alone does not satisfy: cross-level
**abstraction** (instance <-> concept in WordNet), joint **constraints** (positive and negative conditions while
preserving the rest of a reference product) and dialogue **state** (conditions spread over turns, some revised).
Every query has a fixed pool of {pool}, its complete positive set and typed hard negatives.
Paper: *{PAPER_TITLE}* (arXiv:{ARXIV_ID}).

{sources}

## Configs

Every config has one split, `{n.SPLIT}`.

{_config_table(summary, configs)}

## Loading

```python
from datasets import load_dataset
queries = load_dataset("/abs/path/to/this/folder", "{n.STATE_CONFIGS[1]}", split="{n.SPLIT}")
items = load_dataset("/abs/path/to/this/folder", "{n.DOMAIN_CORPUS["cars"]}", split="{n.SPLIT}")
queries = load_dataset("ORG/triad", "{n.STATE_CONFIGS[1]}", split="{n.SPLIT}")  # from the Hub, once pushed
```

A bare folder name is looked up in the working directory; when it is not there, `datasets` may serve its cached copy
of a different folder of the same name, so give a local folder by its absolute path.

Candidate ids point into the corpus configs (`abstraction_*` tasks into `{n.CONCEPTS_CORPUS}` /
`{n.INSTANCES_CORPUS}`, product tasks into `<domain>_items`). Score a ranking of each pool with multi-positive AP
(the divisor is the complete positive count); report each subset on its own.

## Query fields

{QUERY_FIELDS}

## Corpus fields

{CORPUS_FIELDS}

## How it was built

{BUILD_RULES}

The build audit (`audit.json`) holds the figures per config: queries, mean positives, mean count per candidate
role, profile and session mix, conflict-trap coverage and gate violations (0).

## Citation

```bibtex
{CITATION}
```
"""
