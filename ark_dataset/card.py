"""The dataset card (README.md body and front matter) of ARK folders: mini edition and imported releases."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ark_dataset.names import COGNITIVE_DEMANDS, DOMAIN_SUBTYPES, GALLERY_SUFFIX, MODALITIES, REASONING_SKILLS, SUBTYPES
from triad_dataset.folder.io import LICENSE_NAME

RELEASE_LICENCE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "license", "license.md", "license.txt")
CITATION = """@misc{ark_benchmark,
  title  = {ARK: A Dual-Axis Multimodal Retrieval Benchmark along Reasoning and Knowledge},
  year   = {2026},
  note   = {Complete the authors and venue from the official ARK release}
}"""
DOMAIN_TITLES = {
    "visual_cognition": "Visual Cognition",
    "natural_science": "Natural Science",
    "formal_science": "Formal Science",
    "humanities_social_science": "Humanities & Social Science",
    "engineering_technology": "Engineering & Technology",
}


def _front_matter(*, license_id: str, synthetic: bool) -> str:
    """The card's YAML; `size_categories` is written from the rows by `folder.io.card_with_configs`."""
    tags = ["multimodal-retrieval", "reasoning", "benchmark"] + (["synthetic"] if synthetic else [])
    licence = [f"license: {license_id}"]
    if license_id == "other":  # the Hub asks a name and a link for a licence it does not list
        licence += ["license_name: ark-release-terms", f"license_link: {LICENSE_NAME}"]
    lines = [
        "---",
        f"pretty_name: {'ARK mini (synthetic)' if synthetic else 'ARK'}",
        *licence,
        "language:",
        "- en",
        "task_categories:",
        "- text-retrieval",
        "- visual-document-retrieval",
        "tags:",
        *(f"- {t}" for t in tags),
        "---",
    ]
    return "\n".join(lines) + "\n"


def _taxonomy_table(present: Mapping[str, tuple[int, int]]) -> str:
    rows = ["| Domain | Subtype (config) | In this folder |", "|---|---|---|"]
    for domain, subtypes in DOMAIN_SUBTYPES.items():
        for subtype in subtypes:
            here = (
                f"{present[subtype][0]} queries, {present[subtype][1]} gallery items"
                if subtype in present
                else "absent"
            )
            rows.append(f"| {DOMAIN_TITLES[domain]} | `{subtype}` | {here} |")
    return "\n".join(rows)


def _fields_section() -> str:
    return f"""## Configs and fields

Each subtype has two configs, each with the single split `test`:

- `<subtype>` — the queries: `query_id` (string), `domain` (knowledge domain), `subtype`, `query_text` (string or
  null), `query_image` (image or null), `positive_id` (the one relevant `item_id` of the subtype's gallery),
  `hard_negative_ids` (list of gallery `item_id`s, possibly empty), `cognitive_demand` (one of
  {", ".join(f"`{c}`" for c in COGNITIVE_DEMANDS)}), `reasoning_skills` (one or more of
  {", ".join(f"`{s}`" for s in REASONING_SKILLS)}).
- `<subtype>{GALLERY_SUFFIX}` — the gallery the subtype's queries rank in full: `item_id`, `text` (string or null),
  `image` (image or null), `modality` ({", ".join(f"`{m}`" for m in MODALITIES)}).

Every query has exactly one positive, which is in its subtype's gallery; hard negatives are in the same gallery and
differ from the positive. Retrieval ranks the **whole** gallery of the subtype; the primary metric is Recall@1,
macro-averaged over subtypes (also Recall@5/10 and nDCG@5/10/20, broken down by domain, cognitive demand and
reasoning skill).

```python
from datasets import load_dataset
queries = load_dataset("/abs/path/to/this/folder", "calendar", split="test")   # a local folder: its absolute path
gallery = load_dataset("/abs/path/to/this/folder", "calendar{GALLERY_SUFFIX}", split="test")
queries = load_dataset("ORG/ark", "calendar", split="test")                    # from the Hub, once pushed
```
"""


def _about() -> str:
    names = ", ".join(f"`{s}`" for s in SUBTYPES)
    return f"""ARK is a knowledge- and reasoning-intensive benchmark for multimodal retrieval. It organises retrieval
instances along two axes: a **knowledge axis** of 17 subtypes in 5 domains (Visual Cognition, Natural Science,
Formal Science, Humanities & Social Science, Engineering & Technology) and a **reasoning axis** (cognitive demand:
perception-only, knowledge-intensive, reasoning-intensive, or both; reasoning skills: knowledge, spatial, logical,
symbolic, fine-grained visual, conceptual abstraction). Queries and gallery items may be text, images or both; each
query has exactly one positive and, in most cases, hand-made hard negatives that satisfy part of the query but break
a required relation. The full release has 1,750 queries and 36,858 gallery items. Subtype configs: {names}.
"""


def mini_card(
    counts: Mapping[str, tuple[int, int]],
    *,
    seed: int,
    descriptions: Mapping[str, str],
    labels: Mapping[str, tuple[str, Sequence[str]]] | None = None,
) -> str:
    """Card of the synthetic mini edition; `counts` maps each generated subtype to (queries, gallery items),
    `descriptions` to a sentence on how it is generated and `labels` to (cognitive demand, reasoning skills)."""
    labels = labels or {}

    def label_text(subtype: str) -> str:
        if subtype not in labels:
            return ""
        demand, skills = labels[subtype]
        return f" Labels: `{demand}`; " + ", ".join(f"`{k}`" for k in skills) + "."

    described = "\n".join(f"- `{s}`: {descriptions[s]}{label_text(s)}" for s in SUBTYPES if s in counts)
    absent = ", ".join(f"`{s}`" for s in SUBTYPES if s not in counts)
    return (
        _front_matter(license_id="apache-2.0", synthetic=True)
        + f"""
# ARK mini (synthetic edition)

**This folder is synthetic.** It is not the ARK release: it was generated by program (`triad build ark-mini`,
seed {seed}) for the subtypes whose items can be generated exactly and checked by program, with hard negatives made
the way the paper makes them. Use it to test pipelines and compare retrievers on controlled reasoning; report
results on the official release. Absent from this edition: {absent}.

## About ARK

{_about()}
{_taxonomy_table(counts)}

## What the mini edition contains

{described}

Queries are text and every gallery item is an image, so a text-only retriever ranks at chance here (as in the
paper, text retrievers need captions of the images first).

Labels follow the paper's assignment for these subtypes (ARK Appendix B): a subtype whose skills include knowledge
reasoning is labelled `both`, the others `reasoning_intensive`. Every query's hard negatives violate exactly one
stated fact, and the positive is the only gallery item satisfying all of them (checked by the test suite).

{_fields_section()}
## Citation

```bibtex
{CITATION}
```
"""
    )


def release_card(counts: Mapping[str, tuple[int, int]], *, source: str) -> str:
    """Card of a folder imported from an ARK release (`triad build ark --from DIR`)."""
    return (
        _front_matter(license_id="other", synthetic=False)
        + f"""
# ARK

Imported from the release files in `{source}` with `triad build ark`. The content and its license are those of the
release you obtained; this folder only converts its layout.

## About ARK

{_about()}
{_taxonomy_table(counts)}

{_fields_section()}
## Citation

```bibtex
{CITATION}
```
"""
    )


def release_licence(src_dir: str | os.PathLike[str]) -> str:
    """LICENSE.md of an imported release: the release's terms apply, followed by its own licence file when it has one."""
    source = Path(src_dir)
    own = next((source / name for name in RELEASE_LICENCE_FILES if (source / name).is_file()), None)
    head = (
        f"# Licence of this ARK folder\n\nImported with `triad build ark` from the release files in `{source.name}`. "
        "The content and its licence are those of the release you obtained; this folder only converts its layout."
    )
    if own is None:
        return head + " The release came with no licence file: check its terms where you obtained it.\n"
    return f"{head}\n\n## The release's licence ({own.name})\n\n```\n{own.read_text(encoding='utf-8').strip()}\n```\n"
