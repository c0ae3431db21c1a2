"""`triad rewrite`: rewrite every ARK query with an LLM (paper §4.3) into the JSON Lines `triad run --rewrites`
reads: one {"query_id", "query_text"} object per line, plus OUT.meta.json with the rewriter's identity.

The rewriter sees `query_text` only (the paper's rewriter is text-only; image queries keep their image and get
their text rewritten). Written to a temporary name and renamed: never a half-written file. An API rewriter
(`gpt-5.2`, `api:MODEL`; captioners/api.py) reads and fills its response cache (`--api-cache`); with `--offline`
it reads only that cache, and queries missing from it stop the command in one line saying how many.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_adapters.atomic import replacing
from model_adapters.captioners import registry
from model_adapters.protocol import OfflineMiss
from triad_dataset.contract.errors import TriadError


@dataclass
class RewriteConfig:
    rewriter: str
    data: str
    out: str
    subtypes: str | Sequence[str] = "all"
    settings: list[str] = field(default_factory=list)
    model_path: str | None = None
    device: str | None = None
    limit: int | None = None
    quiet: bool = False
    rewriter_obj: Any = None  # a Rewriter object to use instead of loading the entry (tests)
    offline: bool = False  # API rewriters: read only the response cache
    api_cache: str | None = None  # API response cache (default $TRIAD_API_CACHE or ~/.cache/triad/api)


def run_rewrite(cfg: RewriteConfig) -> list[dict[str, str]]:
    from model_adapters.planning.configs import select_configs
    from model_adapters.vectors.distributed import default_device
    from triad_dataset.contract.progress import progress
    from triad_dataset.folder.io import read_rows

    if cfg.limit is not None and cfg.limit < 1:
        raise TriadError(f"--limit must be at least 1, got {cfg.limit}")
    entry = registry.with_options(registry.get_entry(cfg.rewriter, registry.REWRITER), cfg.settings)
    queries = [
        (row["query_id"], row["query_text"] or "")
        for subtype in select_configs(cfg.data, "ark", cfg.subtypes)
        for row in read_rows(cfg.data, subtype, ["query_id", "query_text"])[: cfg.limit]
    ]
    rewriter = cfg.rewriter_obj or registry.load(
        entry, model_path=cfg.model_path, device=cfg.device or default_device(), **_api_runtime(entry, cfg)
    )
    out: list[dict[str, str]] = []
    offline_missing, where = 0, ""
    for start in progress(range(0, len(queries), entry.max_batch), desc="rewrite", unit="batch", disable=cfg.quiet):
        chunk = queries[start : start + entry.max_batch]
        try:
            texts = rewriter.rewrite([text for _, text in chunk])
        except OfflineMiss as miss:  # counted over every batch, then one line
            offline_missing, where = offline_missing + miss.missing, miss.where
            continue
        if len(texts) != len(chunk):
            raise TriadError(f"rewriter {entry.name} returned {len(texts)} texts for {len(chunk)} queries")
        out.extend({"query_id": qid, "query_text": text} for (qid, _), text in zip(chunk, texts, strict=True))
    if offline_missing:
        raise TriadError(
            f"rewriter {entry.name}: --offline, and {offline_missing} of the {len(queries)} queries are "
            f"not in its response cache ({where}); run without --offline to request them (or give "
            "--api-cache the folder that holds them)"
        )
    ident = registry.identity(entry, cfg.model_path)
    if cfg.rewriter_obj is not None:
        ident["object"] = f"{type(cfg.rewriter_obj).__module__}.{type(cfg.rewriter_obj).__qualname__}"
    meta: dict[str, Any] = {
        "rewriter": ident,
        "random_init": entry.random_init,
        "data": str(Path(cfg.data).resolve()),
        "queries": len(out),
        "reproducible": entry.family != registry.API,
    }
    stats = getattr(rewriter, "api_stats", None)
    if entry.family == registry.API and callable(stats):
        meta["api"] = {
            "provider": entry.options.get("provider"),
            "endpoint": entry.hub_id,
            "model": entry.options.get("model"),
            "offline": cfg.offline,
            "response_cache": str(getattr(rewriter.responses, "dir", None)),
            **stats(),
        }
    _write(cfg.out, out, meta)
    if not cfg.quiet:
        print(f"rewrote {len(out)} queries; wrote {cfg.out}", file=sys.stderr)
    return out


def _api_runtime(entry: registry.GeneratorEntry, cfg: RewriteConfig) -> dict[str, Any]:
    """An API rewriter's response store (loaded) and --offline; nothing for the others."""
    if entry.family != registry.API:  # a local rewriter sends no request: --offline changes nothing
        return {}
    from model_adapters.captioners import api
    from model_adapters.generation.records import RecordCache
    from model_adapters.run.config import default_api_cache

    responses = RecordCache(cfg.api_cache or default_api_cache(), api.response_identity(entry), api.RESPONSES)
    responses.load()
    return {"responses": responses, "offline": cfg.offline}


def _write(path: str, rows: list[dict[str, str]], meta: dict[str, Any]) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with replacing(target.with_name(target.name + ".meta.json")) as meta_tmp, replacing(target) as tmp:
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        meta_tmp.write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
