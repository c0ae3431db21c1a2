"""`triad run`: encode every distinct input once, rank every pool (TRIAD) or gallery (ARK), save the rankings,
score them through `metrics.scoring` (the same function the Space uses) and write results.json.

    run(RunConfig(model="minilm", data="demo_output/triad", out="runs/minilm-triad")) -> results dict

Phases: plan (read rows, collect distinct inputs) → encode (cache lookup, shard the misses over processes,
encode, gather on rank 0) → rank (batched matrix products, stable ties) → rerank (optional) → score → write.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from model_adapters import distributed, inputs, output, ranking, truncation
from model_adapters.cache import EmbeddingCache
from model_adapters.captioners import textspace
from model_adapters.encoding import encode_items
from model_adapters.plan import ConfigPlan, Plan, load_rewrites, plan_ark, plan_triad
from model_adapters.registry import ADAPTER_VERSION, ModelEntry, get_entry, load_encoder, load_reranker, text_limit
from triad_dataset.errors import TriadError

TRIAD_RERANK_TOP = 30  # paper D.2: the reranker reorders the first-stage top 30
ARK_TOP = 100  # ARK rankings keep the top 100 ids and scores (CONTRACTS §3)
RANDOM_WARNING = "randomly initialised test model: these numbers are noise, not results"


@dataclass
class RunConfig:
    model: str
    data: str
    out: str
    configs: str | Sequence[str] = "all"
    benchmark: str | None = None  # "triad" | "ark"; default: from the folder's audit.json
    variant: str = inputs.FULL
    rerank: str | None = None
    rerank_top: int | None = None  # default 30 (TRIAD) / 50 (ARK)
    batch_size: int | None = None  # default: the registry entry's max batch
    limit: int | None = None  # first N queries per config
    cache_dir: str | None = None  # default $TRIAD_CACHE or ~/.cache/triad/embeddings
    no_cache: bool = False
    model_path: str | None = None
    rerank_model_path: str | None = None
    device: str | None = None
    dtype: str | None = None
    validate: bool = True
    skip_bad_images: bool = False
    rewrites: str | None = None  # ARK: JSON Lines of rewritten queries
    captions: str | None = None  # ARK text-space run: a `triad caption` folder (captioners.textspace)
    seed: int = 0  # bootstrap seed
    quiet: bool = False
    encoder: Any = None  # an Encoder object to use instead of loading the entry (tests, notebooks)
    reranker: Any = None


def default_cache_dir() -> str:
    return os.environ.get("TRIAD_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "triad", "embeddings")


# --- folder, configs ----------------------------------------------------------------------------------------
def detect_benchmark(data: str) -> str:
    from triad_dataset.folder import list_configs

    path = Path(data)
    if not path.is_dir():
        raise TriadError(f"{data}: no such dataset folder")
    audit = path / "audit.json"
    if audit.exists():
        import json

        try:
            bench = json.loads(audit.read_text(encoding="utf-8")).get("benchmark")
        except json.JSONDecodeError as exc:
            raise TriadError(f"{audit}: not valid JSON ({exc})") from exc
        if bench in ("triad", "ark"):
            return bench
    from ark_dataset.names import SUBTYPES

    return "ark" if any(c in SUBTYPES for c in list_configs(data)) else "triad"


def validate_folder(data: str, benchmark: str) -> list[str]:
    """Problems reported by the dataset's own validator (`triad validate`); [] when it finds none."""
    import importlib

    module_name = "ark_dataset.validate" if benchmark == "ark" else "triad_dataset.validate"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        return []
    return list(module.validate_folder(data))


def select_configs(data: str, benchmark: str, requested: str | Sequence[str]) -> list[str]:
    """The task configs (TRIAD) or subtypes (ARK) to run; unknown or absent names list the valid ones."""
    from triad_dataset.folder import list_configs

    if benchmark == "ark":
        from ark_dataset.names import SUBTYPES as known
    else:
        from triad_dataset.names import TASK_CONFIGS as known
    present = [c for c in known if c in set(list_configs(data))]
    names = [requested] if isinstance(requested, str) else list(requested)
    names = [n.strip() for part in names for n in part.split(",") if n.strip()]
    if not names or names == ["all"]:
        if not present:
            raise TriadError(f"{data}: no {benchmark} task configs in this folder")
        return present
    for name in names:
        if name not in known:
            raise TriadError(f"unknown {benchmark} config {name!r}; valid: all, {', '.join(present or known)}")
        if name not in present:
            raise TriadError(f"{data}: config {name!r} is not in this folder; present: {', '.join(present)}")
    return list(dict.fromkeys(names))


# --- encoding -----------------------------------------------------------------------------------------------
def identity(entry: ModelEntry, cfg: RunConfig, dtype: str) -> dict[str, Any]:
    model_id = os.path.abspath(cfg.model_path) if cfg.model_path else entry.hub_id
    # the entry's options (max_length, padding, ...) change what the model sees, so they are part of the identity
    return {"name": entry.name, "model_id": model_id, "revision": entry.revision, "dtype": dtype,
            "adapter_version": ADAPTER_VERSION, "options": dict(sorted(entry.options.items())),
            **textspace.identity_part(cfg.captions)}


def _log(ctx: distributed.Context, cfg: RunConfig, msg: str) -> None:
    if ctx.is_main and not cfg.quiet:
        print(msg, file=sys.stderr)


def encode_plan(plan: Plan, entry: ModelEntry, cfg: RunConfig, ctx: distributed.Context) -> tuple[dict, dict]:
    """Vectors of every distinct item on rank 0 (None elsewhere) and the encoding figures."""
    dtype = cfg.dtype or entry.dtype
    cache = None
    if not cfg.no_cache:
        cache = EmbeddingCache(cfg.cache_dir or default_cache_dir(), identity(entry, cfg, dtype))
        cache.load()
    keys = list(plan.items)
    found, missing = cache.lookup(keys) if cache is not None else ({}, keys)
    missing = ctx.broadcast(missing)  # rank 0 decides what is missing, whatever each node's disk holds
    mine = distributed.shard(missing, ctx.rank, ctx.world)
    vectors: dict[str, np.ndarray] = {}
    stats = None
    if mine:
        encoder = cfg.encoder or load_encoder(entry, model_path=cfg.model_path, device=ctx.device, dtype=dtype)
        vectors, stats = encode_items(encoder, mine, plan.items, model=entry.name,
                                      batch_size=cfg.batch_size or entry.max_batch, cache=cache,
                                      skip_bad_images=cfg.skip_bad_images,
                                      show_progress=not cfg.quiet and ctx.is_main, log=lambda m: _log(ctx, cfg, m))
    gathered = ctx.gather((vectors, stats.images_skipped if stats else [], stats.batch_halvings if stats else 0))
    info = {"cache_hits": len(found), "encoded": len(missing),
            "corrupted_cache_shards": cache.stats.corrupted_shards if cache else [],
            "cache_dir": str(cache.dir) if cache else None, "images_skipped": [], "batch_halvings": 0}
    if not ctx.is_main:
        return {}, info
    for part, skipped, halvings in gathered:
        found.update(part)
        info["images_skipped"] += skipped
        info["batch_halvings"] += halvings
    if cache is not None:
        for part, _, _ in gathered[1:]:
            cache._vectors.update(part)  # other ranks wrote their shards; keep rank 0's view complete
        cache.compact()
    return found, info


def count_truncation(plan: Plan, entry: ModelEntry, cfg: RunConfig, ctx: distributed.Context
                     ) -> dict[str, dict[str, int]] | None:
    """Inputs cut by the encoder's text limit, per config (`truncation.count_truncated`); {} when the encoder does
    not truncate, None when the tokenizer could not be loaded (said on stderr). Only the tokenizer is loaded."""
    try:
        limit = _text_limit(entry, cfg)
    except (OSError, ValueError, ImportError) as exc:
        _log(ctx, cfg, f"warning: could not load {entry.name}'s tokenizer to count truncated inputs ({exc})")
        return None
    return {} if limit is None else truncation.count_truncated(plan, limit)


def _text_limit(entry: ModelEntry, cfg: RunConfig) -> truncation.TextLimit | None:
    if cfg.encoder is not None:  # a given encoder object: only it knows whether it truncates
        own = getattr(cfg.encoder, "text_limit", None)
        return own() if callable(own) else None
    return text_limit(entry, model_path=cfg.model_path)


# --- ranking ------------------------------------------------------------------------------------------------
def _matrix(keys: Sequence[str], vectors: dict[str, np.ndarray]) -> np.ndarray:
    return ranking.normalize(np.stack([vectors[k] for k in keys])) if keys else np.zeros((0, 1), np.float32)


def rank_triad_config(cp: ConfigPlan, vectors: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Pool positions best first and their scores for every query of one config."""
    cand_keys = list(dict.fromkeys(k for keys in cp.pool_keys for k in keys))
    row_of = {k: i for i, k in enumerate(cand_keys)}
    width = max(len(p) for p in cp.pool_keys)
    pools = np.full((len(cp.pool_keys), width), -1, dtype=np.int64)
    for q, keys in enumerate(cp.pool_keys):
        pools[q, :len(keys)] = [row_of[k] for k in keys]
    return ranking.rank_pools(_matrix(cp.query_keys, vectors), _matrix(cand_keys, vectors), pools)


def _rerank_scores(reranker: Any, query: Any, candidates: Sequence[Any], batch: int) -> list[float]:
    scores: list[float] = []
    for start in range(0, len(candidates), batch):
        chunk = candidates[start:start + batch]
        values = np.asarray(reranker.score_pairs([query] * len(chunk), chunk), dtype=np.float64)
        if values.shape != (len(chunk),) or not np.isfinite(values).all():
            raise TriadError(f"reranker returned invalid scores (shape {values.shape}, NaN/inf or wrong length)")
        scores.extend(values.tolist())
    return scores


def triad_rankings(plan: Plan, vectors: dict, reranker: Any, top_k: int, rerank_batch: int, show: bool,
                   rerank_plan: Plan | None = None) -> tuple[dict[str, list[dict]], dict[str, list[dict]]]:
    """`rerank_plan` (same configs, rows and pools as `plan`) supplies the reranker's inputs when they differ from
    the first stage's (a text-only first stage: the reranker still sees the images, paper D.2)."""
    from tqdm.auto import tqdm

    final: dict[str, list[dict]] = {}
    first: dict[str, list[dict]] = {}
    rerank_plan = rerank_plan or plan
    for cp, rcp in tqdm(list(zip(plan.configs, rerank_plan.configs, strict=True)), desc="rank", unit="config",
                        disable=not show):
        order, scores = rank_triad_config(cp, vectors)
        rows, first_rows = [], []
        for q, row in enumerate(cp.rows):
            n = len(cp.pools[q])
            ids = [cp.pools[q][i] for i in order[q, :n]]
            sc = scores[q, :n].tolist()
            entry = {"query_id": row["query_id"], "candidate_ids": ids, "scores": sc}
            if reranker is not None:
                first_rows.append(dict(entry))
                k = min(top_k, n)
                query = rerank_plan.items[rcp.query_keys[q]].model_input
                corpus_inputs = [rerank_plan.items[rcp.pool_keys[q][i]].model_input for i in order[q, :k]]
                rs = _rerank_scores(reranker, query, corpus_inputs, rerank_batch)
                new = ranking.splice_order(rs, n)
                entry = {"query_id": row["query_id"], "candidate_ids": [ids[i] for i in new],
                         "scores": [sc[i] for i in new], "rerank_scores": [rs[i] for i in new[:k]]}
            rows.append(entry)
        final[cp.config] = rows
        if first_rows:
            first[cp.config] = first_rows
    return final, first


def ark_rankings(plan: Plan, vectors: dict, reranker: Any, top_k: int, rerank_batch: int, show: bool,
                 rerank_plan: Plan | None = None) -> tuple[dict[str, list[dict]], dict[str, list[dict]]]:
    from tqdm.auto import tqdm

    final: dict[str, list[dict]] = {}
    first: dict[str, list[dict]] = {}
    rerank_plan = rerank_plan or plan
    for cp, rcp in tqdm(list(zip(plan.configs, rerank_plan.configs, strict=True)), desc="rank", unit="subtype",
                        disable=not show):
        ids = cp.pools[0]
        idx, scores, ranks = ranking.rank_gallery(_matrix(cp.query_keys, vectors), _matrix(cp.pool_keys[0], vectors),
                                                  np.asarray(cp.positives, dtype=np.int64), top=ARK_TOP)
        rows, first_rows = [], []
        for q, row in enumerate(cp.rows):
            entry = {"query_id": row["query_id"], "candidate_ids": [ids[i] for i in idx[q]],
                     "scores": scores[q].tolist(), "positive_rank": int(ranks[q])}
            if reranker is not None:
                first_rows.append(dict(entry))
                k = min(top_k, len(entry["candidate_ids"]))
                query = rerank_plan.items[rcp.query_keys[q]].model_input
                gallery = [rerank_plan.items[rcp.pool_keys[0][i]].model_input for i in idx[q, :k]]
                rs = _rerank_scores(reranker, query, gallery, rerank_batch)
                new = ranking.splice_order(rs, len(entry["candidate_ids"]))
                top_ids = [entry["candidate_ids"][i] for i in new]
                rank = int(ranks[q])
                if rank <= k:  # the positive moved inside the reranked head; ranks k+1.. are unchanged
                    rank = top_ids.index(row["positive_id"]) + 1
                entry = {"query_id": row["query_id"], "candidate_ids": top_ids,
                         "scores": [entry["scores"][i] for i in new], "positive_rank": rank,
                         "rerank_scores": [rs[i] for i in new[:k]]}
            rows.append(entry)
        final[cp.config] = rows
        if first_rows:
            first[cp.config] = first_rows
    return final, first


# --- scoring ------------------------------------------------------------------------------------------------
def score(plan: Plan, rankings: dict[str, list[dict]], seed: int) -> dict[str, Any]:
    """Score the rankings through the one metrics path (CONTRACTS §4)."""
    from metrics import scoring

    gold = {cp.config: cp.rows for cp in plan.configs}
    if plan.benchmark == "ark":
        ranks = {c: {r["query_id"]: {"positive_rank": r["positive_rank"]} for r in rows} for c, rows in rankings.items()}
        return scoring.score_ark(gold, ranks, seed=seed)
    ranked = {c: {r["query_id"]: r["candidate_ids"] for r in rows} for c, rows in rankings.items()}
    return scoring.score_triad(gold, ranked, seed=seed)


def two_stage(plan: Plan, first: dict[str, list[dict]], final_scores: dict, k: int, seed: int) -> dict[str, Any]:
    """First-stage metrics, coverage@k and oracle@k next to the reranked numbers (SPEC §4 two-stage)."""
    from metrics.core import two_stage as ts
    from metrics.core.ranking import rank_from_order

    first_scores = score(plan, first, seed)
    out: dict[str, Any] = {}
    for cp in plan.configs:
        entry: dict[str, Any] = {"first_stage": first_scores[cp.config]["metrics"],
                                 "reranked": final_scores[cp.config]["metrics"], "k": k}
        if plan.benchmark == "triad":
            width = max(len(p) for p in cp.pools)
            order = np.zeros((len(cp.rows), width), dtype=np.int64)
            labels = np.zeros((len(cp.rows), width), dtype=np.int8)
            mask = np.zeros((len(cp.rows), width), dtype=bool)
            for q, (row, ranked) in enumerate(zip(cp.rows, first[cp.config], strict=True)):
                pos = {c: i for i, c in enumerate(cp.pools[q])}
                n = len(cp.pools[q])
                order[q, :n] = [pos[c] for c in ranked["candidate_ids"]]
                order[q, n:] = np.arange(n, width)
                labels[q, [pos[p] for p in row["positive_ids"]]] = 1
                mask[q, :n] = True
            ranked_first = rank_from_order(order, labels, mask)
            entry[f"coverage@{k}"] = float(ts.coverage_at_k(ranked_first, k).mean())
            entry[f"oracle@{k}"] = float(ts.oracle_ap_at_k(ranked_first, k).mean())
        out[cp.config] = entry
    return out


# --- the run ------------------------------------------------------------------------------------------------
def _plan(cfg: RunConfig, benchmark: str, configs: list[str], sees_images: bool) -> Plan:
    if benchmark == "ark":
        return plan_ark(cfg.data, configs, variant=cfg.variant, limit=cfg.limit, rewrites=load_rewrites(cfg.rewrites),
                        sees_images=sees_images, captions=textspace.load_captions(None if sees_images else cfg.captions))
    if cfg.rewrites or cfg.captions:
        raise TriadError("--rewrites and --captions apply to ARK runs only")
    return plan_triad(cfg.data, configs, variant=cfg.variant, limit=cfg.limit, sees_images=sees_images)


def _prepare(cfg: RunConfig, ctx: distributed.Context) -> tuple[str, list[str]]:
    benchmark = cfg.benchmark or detect_benchmark(cfg.data)
    if benchmark not in ("triad", "ark"):
        raise TriadError(f"unknown benchmark {benchmark!r}; valid: triad, ark")
    for flag, value in (("--limit", cfg.limit), ("--batch-size", cfg.batch_size), ("--rerank-top", cfg.rerank_top)):
        if value is not None and value < 1:
            raise TriadError(f"{flag} must be at least 1, got {value}")
    configs = select_configs(cfg.data, benchmark, cfg.configs)
    problems = validate_folder(cfg.data, benchmark) if cfg.validate and ctx.is_main else []
    problems = ctx.broadcast(problems)
    if problems:
        shown = "\n  - ".join(problems[:10])
        more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
        raise TriadError(f"{cfg.data}: the folder fails `triad validate` ({len(problems)} problems):\n  - "
                         f"{shown}{more}")
    return benchmark, configs


def run(cfg: RunConfig) -> dict[str, Any]:
    """Run one model over the selected configs; returns the results dict on rank 0 ({} on other ranks)."""
    ctx = distributed.init(cfg.device)
    try:
        return _run(cfg, ctx)
    finally:
        ctx.close()


def _run(cfg: RunConfig, ctx: distributed.Context) -> dict[str, Any]:
    timings: dict[str, float] = {}
    tick = time.perf_counter()
    entry = get_entry(cfg.model)
    rerank_entry = get_entry(cfg.rerank, kind="reranker") if cfg.rerank else None
    if cfg.variant not in inputs.VARIANTS:
        raise TriadError(f"unknown input variant {cfg.variant!r}; valid: {', '.join(inputs.VARIANTS)}")
    if cfg.variant == inputs.IMAGE_ONLY and not entry.sees_images:
        raise TriadError(f"model {entry.name} ignores images: variant image_only would leave it empty queries")
    textspace.check_model(cfg.captions, entry)
    benchmark, configs = _prepare(cfg, ctx)
    plan = _plan(cfg, benchmark, configs, entry.sees_images)
    truncated = count_truncation(plan, entry, cfg, ctx) if ctx.is_main else None
    timings["plan"] = time.perf_counter() - tick

    tick = time.perf_counter()
    vectors, enc_info = encode_plan(plan, entry, cfg, ctx)
    timings["encode"] = time.perf_counter() - tick
    if not ctx.is_main:
        return {}

    show = not cfg.quiet
    tick = time.perf_counter()
    reranker = cfg.reranker
    if rerank_entry is not None and reranker is None:
        reranker = load_reranker(rerank_entry, model_path=cfg.rerank_model_path, device=ctx.device, dtype=cfg.dtype)
    # A text-only first stage drops images from its plan; the reranker still gets the full inputs (paper D.2).
    rerank_plan = _plan(cfg, benchmark, configs, True) if reranker is not None and not entry.sees_images else None
    top_k = cfg.rerank_top or (_ark_rerank_top() if benchmark == "ark" else TRIAD_RERANK_TOP)
    rerank_batch = rerank_entry.max_batch if rerank_entry else 8
    make = ark_rankings if benchmark == "ark" else triad_rankings
    final, first = make(plan, vectors, reranker, top_k, rerank_batch, show, rerank_plan=rerank_plan)
    timings["rank" if reranker is None else "rank+rerank"] = time.perf_counter() - tick

    tick = time.perf_counter()
    try:
        scored = score(plan, final, cfg.seed)
    except ValueError as exc:
        raise TriadError(f"scoring failed: {exc}") from exc
    timings["score"] = time.perf_counter() - tick
    results = _results(cfg, plan, entry, rerank_entry, scored, enc_info, timings)
    results["run"]["truncated_inputs"] = truncated
    if reranker is not None:
        results["two_stage"] = two_stage(plan, first, scored, top_k, cfg.seed)
        results["rerank_top"] = top_k

    tick = time.perf_counter()
    staged = output.StagedOutput(cfg.out)
    try:
        for cp in plan.configs:
            table = output.rankings_table(final[cp.config], ark=benchmark == "ark", reranked=reranker is not None)
            staged.write_rankings(cp.config, table)
            if cp.config in first:
                staged.write_rankings(cp.config, output.rankings_table(first[cp.config], ark=benchmark == "ark"),
                                      first_stage=True)
        results["run"]["timings_s"]["write"] = time.perf_counter() - tick
        staged.write_results(results)
        staged.commit()
    except BaseException:
        staged.discard()
        raise
    if show:
        _print(results, benchmark)
    return results


def _ark_rerank_top() -> int:
    from ark_dataset.names import RERANK_TOP_K

    return RERANK_TOP_K


def _results(cfg: RunConfig, plan: Plan, entry: ModelEntry, rerank_entry: ModelEntry | None,
             scored: dict[str, Any], enc_info: dict[str, Any], timings: dict[str, float]) -> dict[str, Any]:
    from triad_dataset.folder import fingerprint

    config_names = [cp.config for cp in plan.configs]
    configs = {c: scored[c] for c in config_names}
    summary = {k: v for k, v in scored.items() if k not in configs}
    if plan.benchmark == "triad":
        summary["map"] = {c: configs[c]["metrics"]["map"] for c in config_names}
    per_config = {cp.config: {"queries": len(cp.rows), "pool_slots": cp.pool_slots + len(cp.rows),
                              "distinct_items": len(cp.distinct_keys)} for cp in plan.configs}
    run_info = {
        "distinct_items": len(plan.items), "pool_slots": sum(v["pool_slots"] for v in per_config.values()),
        "per_config": per_config, **enc_info, "timings_s": dict(timings),
        "limit": cfg.limit, "batch_size": cfg.batch_size or entry.max_batch,
    }
    results: dict[str, Any] = {
        "benchmark": plan.benchmark,
        "model": {**entry.to_json(), "model_path": cfg.model_path, "dtype": cfg.dtype or entry.dtype},
        "variant": cfg.variant,
        "dataset": {"path": str(Path(cfg.data).resolve()), "fingerprint": fingerprint(cfg.data)},
        "configs": configs,
        "summary": summary,
        "run": run_info,
    }
    if cfg.rewrites:
        results["rewrites"] = str(Path(cfg.rewrites).resolve())
    if plan.captions is not None:
        results["captioner"] = plan.captions.summary()
    if rerank_entry is not None:
        results["reranker"] = rerank_entry.to_json()
    if entry.random_init or (rerank_entry is not None and rerank_entry.random_init):
        results["warning"] = RANDOM_WARNING
    return results


def _print(results: dict[str, Any], benchmark: str) -> None:
    model = results["model"]["name"]
    print(f"\n{benchmark.upper()} · model {model} · variant {results['variant']}")
    if results.get("warning"):
        print(f"WARNING: {results['warning']}")
    if benchmark == "ark":
        print(output.ark_table(results["configs"], results["summary"].get("macro")))
    else:
        print(output.triad_table(results["configs"]))
    print()
    print(output.summary_table(results["run"]))
    for line in truncation.warning_lines(results["run"].get("truncated_inputs"), model):
        print(line)
