"""Caption-then-embed (ARK paper §4.1: text retrievers see each image through its caption): read a captions table
written by `triad caption`, and the one hook that turns a gallery item (or image query) into the text a text-only
model sees.

Order (ours; the paper's gallery items are image-only for captioned subtypes, so it does not say): the item's own
text first, then its caption, separated by a newline — `"{text}\\n{caption}"`; an item without text is its caption;
an item without an image keeps its text. Items whose image could not be captioned (named in the table's `error`
column) get an empty caption.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from model_adapters.protocol import ModelInput
from triad_dataset.contract.errors import TriadError

# A `triad caption` folder: the captions table and the captioner identity (written by captioners.caption).
TABLE: Final = "captions.parquet"
META: Final = "captioner.json"
CAPTION_JOIN: Final = "{text}\n{caption}"


@dataclass(frozen=True)
class Captions:
    """Captions of one captioner: (config, item id) -> caption, and the captioner identity that made them."""

    path: str
    captioner: dict[str, Any]  # captioner.json: identity, key, figures
    table: Mapping[tuple[str, str], str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return str(self.captioner.get("captioner_key"))

    @property
    def name(self) -> str:
        return str(self.captioner.get("captioner", {}).get("name"))

    def summary(self) -> dict[str, Any]:
        """What results.json records about the captions a run used."""
        return {
            "path": self.path,
            "key": self.key,
            "identity": self.captioner.get("captioner"),
            "random_init": bool(self.captioner.get("random_init")),
            "items": len(self.table),
        }


def join_caption(text: str, caption: str) -> str:
    """The text a text-only model sees for an item with `text` and an image captioned `caption`.

    >>> join_caption("", "October 2024")
    'October 2024'
    >>> join_caption("A wiring diagram.", "R1 10k")
    'A wiring diagram.\\nR1 10k'
    """
    if not caption:
        return text
    return CAPTION_JOIN.format(text=text, caption=caption) if text else caption


def load_captions(path: str | None) -> Captions | None:
    """The captions folder written by `triad caption` (captions.parquet + captioner.json), or None without one."""
    if not path:
        return None
    import pyarrow.parquet as pq

    folder = Path(path)
    try:
        meta = json.loads((folder / META).read_text(encoding="utf-8"))
        rows = pq.read_table(folder / TABLE, columns=["config", "item_id", "caption"]).to_pylist()
    except (OSError, json.JSONDecodeError, ValueError) as exc:
        raise TriadError(f"{path}: not a captions folder from `triad caption` ({exc})") from exc
    if not isinstance(meta, dict) or "captioner_key" not in meta:
        raise TriadError(f"{folder / META}: no captioner identity; re-run `triad caption`")
    table = {(r["config"], r["item_id"]): r["caption"] or "" for r in rows}
    return Captions(str(folder.resolve()), meta, table)


def apply_caption(captions: Captions | None, config: str, row: Mapping[str, Any], item: ModelInput) -> ModelInput:
    """THE caption-then-embed hook, called where a gallery row (`item_id`) or query row (`query_id`) of `config`
    becomes a ModelInput: `item` with its caption joined to its text and no image; unchanged without captions.

    A gallery item whose `modality` has an image but no caption in the table is an error naming it (the captions
    do not cover the data); a query is captioned when the table has it (only image queries were captioned).
    """
    if captions is None:
        return item
    is_gallery = "item_id" in row
    item_id = str(row["item_id"] if is_gallery else row.get("query_id"))
    caption = captions.table.get((config, item_id))
    if caption is None and (not is_gallery or row.get("modality", "image") == "text"):
        return item
    if caption is None:
        raise TriadError(
            f"{captions.path}: no caption for {config} item {item_id!r}; run `triad caption` on this folder and subtype"
        )
    return replace(item, text=join_caption(item.text, caption), image=None)


def check_model(path: str | None, entry: Any, reranker: Any = None) -> None:
    """--captions is for text-only models (the paper captions images for its text retrievers and its text
    reranker only): the first stage, or else the reranker, must be one."""
    if path and entry.sees_images and (reranker is None or reranker.sees_images):
        raise TriadError(
            f"--captions: model {entry.name} sees images itself; captions are for text-only models "
            "(a text embedder, or a text reranker with --rerank)"
        )


def identity_part(path: str | None) -> dict[str, str]:
    """The captioner's part of a run's embedding-cache identity ({} without captions): vectors of a run over one
    captioner's captions are kept apart from another's and from the raw text-only run."""
    if not path:
        return {}
    try:
        meta = json.loads((Path(path) / "captioner.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise TriadError(f"{path}: not a captions folder from `triad caption` ({exc})") from exc
    return {"captioner": str(meta.get("captioner_key"))}
