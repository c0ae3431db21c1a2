"""One config's queries, corpus, qrels and pools as mteb retrieval data, rendered by the run's own planning code.

Each query is the input `triad run` builds (`model_adapters.planning.plan`): the serialized text with the
benchmark instruction prepended as a plain-text prefix (paper B.3; mteb itself would append it), and the query
image where the task's queries carry one. Candidates are corpus rows, never given an instruction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from model_adapters.planning.inputs import join_instruction
from model_adapters.planning.plan import ConfigPlan, ItemTable
from triad_dataset.contract.errors import TriadError


@dataclass
class SplitData:
    """mteb's `RetrievalSplitData` of one config, and what scoring needs to read mteb's results back."""

    mteb: dict[str, Any]
    pool_ids: list[list[str]]  # each query's pool in pool order (TRIAD) or the gallery (ARK)
    # per query, each pool slot's input as a model sees it: with its image (item index), or its text alone
    same_input: dict[bool, list[np.ndarray]] | None = None


def _same_input(items: ItemTable, cp: ConfigPlan) -> dict[bool, list[np.ndarray]]:
    """Each pool slot's distinct-input number, for a model that sees images (True) and for a text-only one."""
    text_number: dict[str, int] = {}
    by_text = np.asarray([text_number.setdefault(t, len(text_number)) for t in items.texts], dtype=np.int64)
    rows = [row[row >= 0].astype(np.int64) for row in cp.pool_items]
    return {True: rows, False: [by_text[row] for row in rows]}


def local_folder(folder: str) -> str:
    """The dataset folder as an absolute path; a Hub id is downloaded (or read from the Hub cache)."""
    path = Path(folder)
    if path.is_dir():
        return str(path.resolve())
    try:
        from huggingface_hub import snapshot_download

        return str(snapshot_download(folder, repo_type="dataset"))
    except Exception as exc:  # noqa: BLE001 (any failure to reach the dataset is the same user error)
        raise TriadError(f"{folder}: not a dataset folder here and not on the Hub ({type(exc).__name__})") from exc


def _rows(items: ItemTable, indices: Sequence[int], ids: Sequence[str], image: bool, query: bool) -> Any:
    from datasets import Dataset, Features, Image, Value

    columns: dict[str, list[Any]] = {"id": list(ids), "text": []}
    features = {"id": Value("string"), "text": Value("string")}
    if image:
        columns["image"] = []
        features["image"] = Image()
    for i in indices:
        item = items.model_input(int(i)) if image else items.text_input(int(i))
        columns["text"].append(join_instruction(item.instruction, item.text) if query else item.text)
        if image:
            columns["image"].append(None if item.image is None else {"bytes": item.image, "path": None})
    return Dataset.from_dict(columns, features=Features(features))


def split_data(
    items: ItemTable, cp: ConfigPlan, *, query_images: bool, candidate_images: bool, pools: bool
) -> SplitData:
    """mteb's split data of one config plan: queries, the corpus rows its pools use, qrels and (`pools`) top_ranked."""
    ids = cp.corpus_ids.to_pylist()
    query_ids = cp.query_ids
    if pools:
        used = np.unique(cp.pool_rows[cp.pool_rows >= 0])
        item_of = np.zeros(len(ids), dtype=np.int64)
        item_of[cp.pool_rows[cp.pool_rows >= 0]] = cp.pool_items[cp.pool_rows >= 0]
        pool_ids = [[ids[r] for r in row[row >= 0].tolist()] for row in cp.pool_rows]
        gold = cp.triad_gold()
        relevant = {
            q: {ids[r]: 1 for r in cp.pool_rows[n][(gold.labels[n] == 1) & gold.mask[n]].tolist()}
            for n, q in enumerate(query_ids)
        }
    else:
        used = np.arange(len(ids))
        item_of = cp.pool_items.astype(np.int64)
        pool_ids = [ids]
        if cp.positives is None:
            raise TriadError(f"{cp.config}: an ARK subtype without its positives")
        relevant = {q: {ids[int(p)]: 1} for q, p in zip(query_ids, cp.positives.tolist(), strict=True)}
    data = {
        "queries": _rows(items, cp.query_items.tolist(), query_ids, query_images, query=True),
        "corpus": _rows(items, item_of[used].tolist(), [ids[r] for r in used.tolist()], candidate_images, query=False),
        "relevant_docs": relevant,
        "top_ranked": dict(zip(query_ids, pool_ids, strict=True)) if pools else None,
    }
    return SplitData(data, pool_ids, _same_input(items, cp) if pools else None)
