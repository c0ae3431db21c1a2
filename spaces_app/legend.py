"""What the leaderboard's columns mean, the chance level of each, and where the papers, data and code are.

Only constant text and numbers computed on the server go into the Markdown made here — never a user string (those
stay in plain-text table cells, spaces_app/views.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from triad_dataset.contract import names as n
from triad_dataset.folder.card import ARXIV_ID
from triad_dataset.folder.card import PAPER_TITLE as TRIAD_TITLE

TRIAD_PAPER_URL: Final = f"https://arxiv.org/abs/{ARXIV_ID}"
ARK_TITLE: Final = "ARK: A Dual-Axis Multimodal Retrieval Benchmark along Reasoning and Knowledge"
DATASET_URL_ENV: Final = "TRIAD_SPACE_DATASET_URL"  # the TRIAD dataset card on the Hub, when published
REPO_URL_ENV: Final = "TRIAD_SPACE_REPO_URL"  # the code repository


@dataclass(frozen=True)
class Column:
    """One subset of the leaderboard: its track, the column header shown and a one-line explanation."""

    track: str
    header: str
    tooltip: str


# TRIAD §3.2 and docs/protocol.md §1. The paper's short names (I2C, B-Fashion, ...) stay the keys of the API and of
# results.json; the page puts the track in front of each. Domains follow names.DOMAINS: fashion, then cars.
_FASHION_CONSTRAINTS = (
    "a reference product + 1–3 requested changes (positive and negative conditions) retrieves the "
    "products satisfying all of them"
)
_FASHION_STATE = (
    "the same final intent as Constraints Fashion, stated over a 2–3 turn dialogue that may revise earlier conditions"
)
COLUMNS: Final[Mapping[str, Column]] = {
    n.ABSTRACTION_CONFIGS[0]: Column(
        "Abstraction",
        "Abstraction I2C",
        "image → concept: an instance image (+ its class name) retrieves its WordNet ancestors 1–2 levels up",
    ),
    n.ABSTRACTION_CONFIGS[1]: Column(
        "Abstraction",
        "Abstraction C2I",
        "concept → image: a concept's name and "
        "definition retrieves images of classes 1–2 levels below it (5 positives)",
    ),
    n.CONSTRAINTS_CONFIGS[0]: Column("Constraints", "Constraints Fashion", _FASHION_CONSTRAINTS),
    n.CONSTRAINTS_CONFIGS[1]: Column("Constraints", "Constraints Cars", "the same on Stanford Cars"),
    n.STATE_CONFIGS[0]: Column("State", "State Fashion", _FASHION_STATE),
    n.STATE_CONFIGS[1]: Column("State", "State Cars", "the same over a dialogue on Stanford Cars"),
    n.SELF_CONFIGS[0]: Column(
        "Reference: Self", "Self I2C", "an instance retrieves its own leaf concept (one positive: mAP = MRR)"
    ),
    n.SELF_CONFIGS[1]: Column(
        "Reference: Self", "Self C2I", "a leaf concept retrieves its own instance (one positive)"
    ),
    n.SAME_CONFIGS[0]: Column("Reference: Same", "Same Fashion", "find this exact product: its other images"),
    n.SAME_CONFIGS[1]: Column("Reference: Same", "Same Cars", "find this exact car: its other images"),
}


def header(config: str) -> str:
    column = COLUMNS.get(config)
    return column.header if column is not None else n.DISPLAY_NAMES.get(config, config)


def headers(configs: Sequence[str]) -> dict[str, str]:
    return {c: header(c) for c in configs}


def _chance_cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


ROWS_NOTE: Final = (
    "**Verified?** beside each name: *✓ verified* = the leaderboard ran the named model itself and every query "
    "agrees (the row shows the leaderboard's numbers); *unverified* = self-reported; *pending* = the leaderboard's "
    "own run is still to come; *✗ failed* = it disagrees (listed only with *Every row*); *older gold* = scored on an "
    "earlier gold. **Rank**: verified rows among themselves; self-reported rows among themselves, marked *(self)*, "
    "and pending rows likewise, marked *(pending)*; flagged, failed and older-gold rows say *unranked*; **Status** "
    "gives the whole reason."
)
TIES_NOTE: Final = (
    "**Ties (mAP range)**: where a model gives several candidates the same score their order is arbitrary; ± is half "
    "the gap between the mAP with tied positives placed first and placed last (the widest subset), *none* = no ties."
)


def legend_markdown(configs: Sequence[str], chance: Mapping[str, float]) -> str:
    """A table (column, track, what it measures, chance mAP of a random ranking of the gold), then the row columns."""
    lines = ["| column | paper's name | what it measures | chance mAP |", "|---|---|---|---:|"]
    for c in configs:
        col = COLUMNS[c]
        lines.append(
            f"| **{col.header}** | {n.DISPLAY_NAMES.get(c, c)} | {col.tooltip} | {_chance_cell(chance.get(c))} |"
        )
    return "\n".join(lines) + f"\n\n{ROWS_NOTE}\n\n{TIES_NOTE}"


CHANCE_NOTE: Final = (
    "*Chance* is the exact expected mAP of a uniformly random ranking of each query's pool, "
    "computed on this server from the gold it holds (pool size and positives per query; TRIAD "
    "eq. 2, `triad audit` prints the same figure): a score near it means the model found nothing."
)

ARK_COLUMNS: Final = (
    "**R@1 macro** is Recall@1 (is the one positive ranked first?) averaged over the subtypes, each retrieving from "
    "its own whole gallery (ARK §4); the other columns average it per knowledge domain, reasoning skill or subtype. "
    "*Captioner* is empty when the model saw the images, else the captioner of a text-space run "
    "(`triad run --captions`). **Verified?** is the row's status as on the TRIAD tab (**Status**: the whole reason)."
)


def ark_chance_line(chance: Mapping[str, float]) -> str:
    """Chance R@1 per subtype: 1 / gallery size (one positive, a uniformly random ranking)."""
    if not chance:
        return ""
    cells = ", ".join(f"{s} {v:.4f}" for s, v in chance.items())
    return f"Chance R@1 (1 / gallery size, from the gold): {cells}."


def links_markdown(env: Mapping[str, str] | None = None) -> str:
    """Papers, dataset card and code. A link is shown only where it is known: the dataset's Hub URL and the code
    repository come from TRIAD_SPACE_DATASET_URL / TRIAD_SPACE_REPO_URL, or, on a Hugging Face Space, the Space's
    own files (which hold the whole code that serves this page)."""
    env = os.environ if env is None else env
    parts = [f"Papers: [{TRIAD_TITLE}]({TRIAD_PAPER_URL}) (TRIAD, arXiv:{ARXIV_ID}); *{ARK_TITLE}* (ARK)."]
    dataset = env.get(DATASET_URL_ENV, "").strip()
    parts.append(
        f"Dataset card: [{_safe_url(dataset)}]({_safe_url(dataset)})"
        if _is_url(dataset)
        else "Dataset card: the README.md of the gold folder served here (in the *About* tab)."
    )
    repo = env.get(REPO_URL_ENV, "").strip()
    space = env.get("SPACE_ID", "").strip()
    if _is_url(repo):
        parts.append(f"Code: [{_safe_url(repo)}]({_safe_url(repo)})")
    elif space and all(ch.isalnum() or ch in "-_./" for ch in space):
        url = f"https://huggingface.co/spaces/{space}/tree/main"
        parts.append(f"Code: [{url}]({url}) (this Space's files: the packages that score every submission)")
    else:
        parts.append(f"Code: the `triad-benchmark` package (`spaces_app/`; set {REPO_URL_ENV} to link its repository).")
    return " · ".join(parts)


def _is_url(text: str) -> bool:
    return text.startswith(("https://", "http://")) and not any(ch in text for ch in " <>()[]\"'`")


def _safe_url(text: str) -> str:
    return text if _is_url(text) else ""


def card_markdown(card: str) -> str:
    """A dataset card (README.md of the gold folder) without its YAML header, for the About tab."""
    if card.startswith("---"):
        end = card.find("\n---", 3)
        if end != -1:
            card = card[end + 4 :]
    return card.strip()


ARK_EMPTY: Final = (
    "**No ARK submission yet.** Run `triad run --model NAME --data ARK_FOLDER --out RUN` on the ARK gold and "
    "upload the run in the **Submit** tab, or ask for an evaluation there; the tables and bars appear with the "
    "first row."
)
ARK_NOT_SERVED: Final = "**This leaderboard serves no ARK gold**, so it has no ARK rows and refuses ARK uploads."
ARK_TAB_NOTE: Final = (
    "ARK: Recall@1 macro-averaged over subtypes, then per knowledge domain and reasoning skill, rescored on this "
    "server from the submitted rankings. `triad run` writes each query's top {top} of its subtype's whole gallery "
    "and the positive's rank; the server needs at least the top {depth} ids (R@10, nDCG@20) and checks the rank "
    "against the listed ids.\n\n"
    "A row marked *scores tied* gave every gallery item of those queries one score (a text-only model on image-only "
    "galleries sees nothing to tell them apart): its order is the file's list order, so its R@1 there says nothing "
    "about the model."
)
