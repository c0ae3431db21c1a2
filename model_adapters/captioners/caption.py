"""`triad caption`: caption every gallery image (and image query) of an ARK folder once, through the caption cache,
sharded over processes like `triad run`, and write OUT/captions.parquet + OUT/captioner.json.

captions.parquet columns: config (`<subtype>_gallery` or `<subtype>`), item_id (gallery item id or query id), role
("gallery" | "query"), image_sha256, caption ("" when the image has no text / did not decode), error (None, or why
the image could not be captioned). The parquet schema metadata `triad_captioner` and captioner.json hold the
captioner identity (name, model, revision, prompt, every setting) and the run's figures (counts, seconds per image).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from model_adapters.atomic import replacing
from model_adapters.captioners import registry
from model_adapters.captioners.cache import CaptionCache, image_key
from model_adapters.planning.textspace import META, TABLE
from model_adapters.vectors import distributed
from triad_dataset.contract.errors import TriadError

GALLERY: Final = "gallery"
QUERY: Final = "query"


@dataclass
class CaptionConfig:
    captioner: str
    data: str
    out: str
    subtypes: str | Sequence[str] = "all"
    settings: list[str] = field(default_factory=list)  # KEY=VALUE overrides of the entry (part of the identity)
    cache_dir: str | None = None  # default $TRIAD_CAPTION_CACHE or ~/.cache/triad/captions
    no_cache: bool = False
    model_path: str | None = None
    device: str | None = None
    batch_size: int | None = None
    fail_on_bad_images: bool = False
    quiet: bool = False
    captioner_obj: Any = None  # a Captioner object to use instead of loading the entry (tests)


@dataclass
class ImageItem:
    config: str
    item_id: str
    role: str
    data: bytes
    key: str


def default_cache_dir() -> str:
    return os.environ.get("TRIAD_CAPTION_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "triad", "captions"
    )


def collect_images(data: str, subtypes: Sequence[str]) -> list[ImageItem]:
    """Every gallery image and image query of the subtypes, in folder order."""
    from ark_dataset.names import GALLERY_SUFFIX
    from model_adapters.planning.inputs import image_bytes
    from triad_dataset.folder.io import read_rows

    items: list[ImageItem] = []
    for subtype in subtypes:
        gallery = subtype + GALLERY_SUFFIX
        for row in read_rows(data, gallery, ["item_id", "image"]):
            blob = image_bytes(row.get("image"))
            if blob is not None:
                items.append(ImageItem(gallery, row["item_id"], GALLERY, blob, image_key(blob)))
        for row in read_rows(data, subtype, ["query_id", "query_image"]):
            blob = image_bytes(row.get("query_image"))
            if blob is not None:
                items.append(ImageItem(subtype, row["query_id"], QUERY, blob, image_key(blob)))
    return items


def _caption_batches(
    captioner: Any, todo: list[ImageItem], batch: int, cache: CaptionCache | None, show: bool
) -> tuple[dict[str, str], dict[str, str]]:
    """Captions (and errors) of `todo` by image key; each successful batch goes to the cache at once."""
    from triad_dataset.contract.progress import progress

    captions: dict[str, str] = {}
    errors: dict[str, str] = {}
    with progress(total=len(todo), desc="caption", unit="img", disable=not show) as bar:
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            try:
                texts = dict(zip([i.key for i in chunk], captioner.caption([i.data for i in chunk]), strict=True))
            except ValueError:  # one image in the batch does not decode: caption one by one to name it
                texts = {}
                for item in chunk:
                    try:
                        texts[item.key] = captioner.caption([item.data])[0]
                    except ValueError as exc:
                        errors[item.key] = f"{item.config} {item.role} {item.item_id}: {exc}"
            captions.update(texts)
            if cache is not None:
                cache.put(texts)
            bar.update(len(chunk))
    return captions, errors


def run_caption(cfg: CaptionConfig) -> dict[str, Any]:
    """Caption the folder; returns captioner.json's content on rank 0 ({} elsewhere)."""
    ctx = distributed.init(cfg.device)
    try:
        return _run(cfg, ctx)
    finally:
        ctx.close()


def _run(cfg: CaptionConfig, ctx: distributed.Context) -> dict[str, Any]:
    from model_adapters.planning.configs import select_configs

    entry = registry.with_options(registry.get_entry(cfg.captioner), cfg.settings)
    ident = registry.identity(entry, cfg.model_path)
    if cfg.captioner_obj is not None:  # a given object, not the registry's model: say so (and cache it apart)
        ident["object"] = f"{type(cfg.captioner_obj).__module__}.{type(cfg.captioner_obj).__qualname__}"
    subtypes = select_configs(cfg.data, "ark", cfg.subtypes)
    items = collect_images(cfg.data, subtypes)
    cache = None if cfg.no_cache else CaptionCache(cfg.cache_dir or default_cache_dir(), ident)
    if cache is not None:
        cache.load()
    distinct = list({i.key: i for i in items}.values())
    missing = [i.key for i in distinct if cache is None or i.key not in cache.captions]
    missing = ctx.broadcast(missing)
    by_key = {i.key: i for i in distinct}
    mine = [by_key[k] for k in distributed.shard(missing, ctx.rank, ctx.world)]
    tick = time.perf_counter()
    captions: dict[str, str] = {}
    errors: dict[str, str] = {}
    if mine:
        captioner = cfg.captioner_obj or registry.load(entry, model_path=cfg.model_path, device=ctx.device)
        captions, errors = _caption_batches(
            captioner, mine, cfg.batch_size or entry.max_batch, cache, show=not cfg.quiet and ctx.is_main
        )
    seconds = time.perf_counter() - tick
    gathered = ctx.gather((captions, errors, seconds, len(mine)))
    if not ctx.is_main or gathered is None:
        return {}
    known = dict(cache.captions) if cache is not None else {}
    all_errors: dict[str, str] = {}
    busy = 0.0
    for part, errs, secs, _ in gathered:
        known.update(part)
        all_errors.update(errs)
        busy += secs
    if all_errors and cfg.fail_on_bad_images:
        first = next(iter(all_errors.values()))
        raise TriadError(
            f"{len(all_errors)} image(s) could not be captioned (first: {first}); "
            "drop --fail-on-bad-images to caption the rest and record them"
        )
    if cache is not None:
        cache.compact()
    meta = {
        "captioner": ident,
        "captioner_key": CaptionCache.key_of(ident),
        "random_init": entry.random_init,
        "data": str(Path(cfg.data).resolve()),
        "subtypes": subtypes,
        "images": len(items),
        "distinct_images": len(distinct),
        "captioned": len(missing),
        "cache_hits": len(distinct) - len(missing),
        "bad_images": sorted(all_errors.values()),
        "processes": ctx.world,
        "timings_s": {
            "caption": round(seconds if ctx.world == 1 else busy, 3),
            "per_image": round(busy / len(missing), 4) if missing else None,
        },
    }
    write_table(cfg.out, items, known, all_errors, meta)
    if not cfg.quiet:
        print(
            f"captioned {len(missing)} image(s), {meta['cache_hits']} from the cache, "
            f"{len(all_errors)} bad; wrote {Path(cfg.out) / TABLE}",
            file=sys.stderr,
        )
        for message in sorted(all_errors.values())[:10]:
            print(f"warning: {message}", file=sys.stderr)
    return meta


def write_table(
    out: str, items: Sequence[ImageItem], captions: dict[str, str], errors: dict[str, str], meta: dict[str, Any]
) -> None:
    """captions.parquet + captioner.json, each written to a temporary name and renamed (never half-written)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        {
            "config": i.config,
            "item_id": i.item_id,
            "role": i.role,
            "image_sha256": i.key,
            "caption": captions.get(i.key, ""),
            "error": errors.get(i.key),
        }
        for i in items
    ]
    schema = pa.schema(
        [(n, pa.string()) for n in ("config", "item_id", "role", "image_sha256", "caption", "error")],
        metadata={"triad_captioner": json.dumps(meta, sort_keys=True)},
    )
    table = pa.Table.from_pylist(rows, schema=schema)
    with replacing(folder / META) as tmp_meta, replacing(folder / TABLE) as tmp_table:  # the table moves first
        pq.write_table(table, tmp_table)
        tmp_meta.write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
