"""`triad run`: encode every distinct input once, rank every pool (TRIAD) or gallery (ARK), save the rankings,
score them through `metrics.scoring` (the same function the Space uses) and write results.json.

    run(RunConfig(model="minilm", data="demo_output/triad", out="runs/minilm-triad")) -> results dict

Phases: plan (read rows, collect distinct inputs) → encode (cache lookup, shard the misses over processes,
encode — a reasoning embedder generates first, through its cached generation stage; an API model reads its
response cache before it requests — gather on rank 0) → rank (batched matrix products, stable ties) → rerank (optional) → write each config's
rankings as soon as it is ranked (into a staged folder; only the orders are kept) → score → write results.json and
move everything into place.
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

from model_adapters.generation.stage import GENERATION_DIR, GenerationStage, ReasoningAdapter, is_reasoning
from model_adapters.models.identity import pillow_notice
from model_adapters.models.recipes import API, UNVERIFIED
from model_adapters.models.resolve import ResolvedModel, from_name, from_python
from model_adapters.planning import inputs, textspace, truncation
from model_adapters.planning.configs import select_configs
from model_adapters.planning.plan import Plan, load_rewrites, plan_ark, plan_triad
from model_adapters.ranks import output
from model_adapters.ranks.rank_plan import ark_rankings, rankings_table, score, triad_rankings, two_stage
from model_adapters.vectors import checks, distributed
from model_adapters.vectors.cache import EmbeddingCache
from model_adapters.vectors.encoding import encode_items
from model_adapters.vectors.run_state import RunState
from triad_dataset.contract.errors import TriadError

TRIAD_RERANK_TOP = 30  # paper D.2: the reranker reorders the first-stage top 30
RANDOM_WARNING = "randomly initialised test model: these numbers are noise, not results"
UNVERIFIED_WARNING = (
    "unverified input pipeline (--recipe generic): the inputs were built by a pipeline that mirrors no "
    "authors' code, so these numbers may not be the model's"
)


@dataclass
class RunConfig:
    """`model`: a registry name, Hub id ORG/NAME or local folder; or None with `encoder` given (an object satisfying
    the Encoder protocol, or "module:factory"). `name`, `revision`, `sees_images` describe your own model."""

    model: str | None
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
    captions: str | None = None  # ARK text-space run: a `triad caption` folder (planning.textspace)
    seed: int = 0  # bootstrap seed
    quiet: bool = False
    encoder: Any = None  # your own Encoder object or "module:factory" (then `model` is None)
    reranker: Any = None  # your own Reranker object or "module:factory" (instead of `rerank`)
    name: str | None = None  # the name results are shown under (default: registry name / folder / Hub id / your class)
    revision: str | None = None  # Hub commit to pin; your own model's version (caches a Python encoder's vectors)
    recipe: str | None = None  # the input recipe of a folder / Hub id, by name (default: detected; recipes.py)
    rerank_recipe: str | None = None  # the same for the reranker
    sees_images: bool | None = None  # Python encoders: False leaves images out of their inputs (default True)
    cache_check: int = checks.SAMPLE_SIZE  # cached items re-encoded to detect a changed model (0: no check)
    offline: bool = False  # API models read only their response cache (a miss stops the run, naming how many)
    api_cache: str | None = None  # API response cache (default $TRIAD_API_CACHE or ~/.cache/triad/api)


def default_cache_dir() -> str:
    return os.environ.get("TRIAD_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "triad", "embeddings"
    )


def default_api_cache() -> str:
    return os.environ.get("TRIAD_API_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "triad", "api"
    )


# --- folder, configs ----------------------------------------------------------------------------------------
def detect_benchmark(data: str) -> str:
    from triad_dataset.folder.io import list_configs

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

    module_name = "ark_dataset.validate" if benchmark == "ark" else "triad_dataset.folder.validate"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        return []
    return list(module.validate_folder(data))


# --- the model ----------------------------------------------------------------------------------------------
def resolve_model(cfg: RunConfig) -> ResolvedModel:
    """The model of the run and its identity (`model_adapters.models.resolve`)."""
    if cfg.encoder is not None:
        if cfg.model is not None:
            raise TriadError(
                f"give either a model (--model {cfg.model}) or your own encoder, not both: an encoder "
                "never borrows another model's name, settings or cache"
            )
        return from_python(cfg.encoder, name=cfg.name, revision=cfg.revision, sees_images=cfg.sees_images)
    if not cfg.model:
        raise TriadError("no model: give --model NAME|ORG/NAME|FOLDER or --encoder module:factory")
    if cfg.sees_images is not None:
        raise TriadError(
            "--sees-images / --text-only apply to your own encoder (--encoder); a model's family decides what it sees"
        )
    return from_name(
        cfg.model, model_path=cfg.model_path, name=cfg.name, revision=cfg.revision, dtype=cfg.dtype, recipe=cfg.recipe
    )


def resolve_reranker(cfg: RunConfig) -> ResolvedModel | None:
    if cfg.reranker is not None:
        if cfg.rerank:
            raise TriadError(f"give either --rerank {cfg.rerank} or your own reranker, not both")
        return from_python(cfg.reranker, kind="reranker")
    if not cfg.rerank:
        return None
    return from_name(
        cfg.rerank, kind="reranker", model_path=cfg.rerank_model_path, dtype=cfg.dtype, recipe=cfg.rerank_recipe
    )


# --- encoding -----------------------------------------------------------------------------------------------
def _log(ctx: distributed.Context, cfg: RunConfig, msg: str) -> None:
    if ctx.is_main and not cfg.quiet:
        print(msg, file=sys.stderr)


def _open_cache(model: ResolvedModel, cfg: RunConfig, ctx: distributed.Context) -> EmbeddingCache | None:
    notice = pillow_notice(model.identity.versions)
    if notice is not None:
        _log(ctx, cfg, notice)
    if cfg.no_cache:
        return None
    if not model.identity.cacheable:
        _log(
            ctx,
            cfg,
            f"note: {model.identity.label} declares no revision: its vectors are not cached (give it "
            "a revision, --revision / revision=..., to cache them)",
        )
        return None
    # a run over one captioner's captions keeps its vectors apart from another's (ARK text space)
    cache = EmbeddingCache(
        cfg.cache_dir or default_cache_dir(), {**model.identity.cache_fields(), **textspace.identity_part(cfg.captions)}
    )
    cache.load()
    return cache


def verify_cache(
    encoder: Any,
    model: ResolvedModel,
    plan: Plan,
    found: dict[str, np.ndarray],
    cfg: RunConfig,
    stage: GenerationStage | None = None,
) -> float | None:
    """Re-encode a fixed sample of the cached items (`checks.sample`); the smallest cosine to the cached vectors,
    or None when nothing was checked. A reasoning embedder is re-embedded from its stored generations (sampled items
    without one are left out), never regenerated: a new sample would be a different input, not drift."""
    if stage is not None:
        found = {k: v for k, v in found.items() if stage.stored(k, plan.items[k].role)}
        encoder = ReasoningAdapter(encoder, stage, generate=False)
    keys = checks.sample(list(found), {k: plan.items[k].role for k in found}, cfg.cache_check)
    if not keys:
        return None
    label, dim = model.identity.label, checks.encoder_dim(encoder, model.identity.label)
    worst = 1.0
    for role in (inputs.QUERY, inputs.CANDIDATE):
        part = [k for k in keys if plan.items[k].role == role]
        if not part:
            continue
        fn = encoder.encode_queries if role == inputs.QUERY else encoder.encode_candidates
        fresh = checks.check_batch(
            fn([plan.items[k].model_input for k in part]),
            [plan.items[k].label for k in part],
            model=label,
            dim=dim,
            batch=f"cache check ({role} sample)",
        )
        if fresh.shape[1] != found[part[0]].shape[0]:
            return -1.0  # another dimension: certainly another model
        worst = min(worst, checks.min_cosine(fresh, np.stack([found[k] for k in part])))
    return worst


class RunEncoder:
    """The run's encoder, loaded at most once: an API model gets its response store and --offline; a reasoning
    embedder is encoded through its generation stage, which exists before any model loads (a run whose vectors
    are cached counts its fallbacks from the stored generations without loading anything)."""

    def __init__(self, model: ResolvedModel, cfg: RunConfig, ctx: distributed.Context) -> None:
        self.model, self.cfg, self.ctx = model, cfg, ctx
        self.stage: GenerationStage | None = None
        self.responses: EmbeddingCache | None = None
        self._encoder: Any = None
        if model.identity.generation is not None:
            spec = model.obj.generation if model.obj is not None else model.entry.options["generation"]
            self.stage = GenerationStage(spec, self.generation_root, label=model.identity.label)

    @property
    def generation_root(self) -> str | None:
        return None if self.cfg.no_cache else os.path.join(self.cfg.cache_dir or default_cache_dir(), GENERATION_DIR)

    def raw(self) -> Any:
        """The loaded model object itself (what verify_cache re-encodes with)."""
        runtime: dict[str, Any] = {}
        if self.model.identity.family == API and self.model.obj is None:
            from model_adapters.families.api import response_identity

            self.responses = EmbeddingCache(
                self.cfg.api_cache or default_api_cache(), response_identity(self.model.entry)
            )
            self.responses.load()
            runtime = {"responses": self.responses, "offline": self.cfg.offline}
        return self.model.load(self.ctx.device, self.cfg.dtype or self.model.identity.dtype, **runtime)

    def get(self) -> Any:
        """The `Encoder` the encode loop calls (a reasoning embedder behind its `ReasoningAdapter`)."""
        if self._encoder is None:
            raw = self.raw()
            if self.stage is not None and not is_reasoning(raw):
                raise TriadError(
                    f"model {self.model.identity.label}: its identity names a generation stage but the "
                    "loaded object has no generate/encode/generation (protocol.ReasoningEncoder)"
                )
            self._encoder = ReasoningAdapter(raw, self.stage) if self.stage is not None else raw
        return self._encoder

    def figures(self) -> dict[str, Any]:
        """This process's API call figures and fresh generations (gathered on rank 0)."""
        obj = self.model.obj
        api = obj.api_stats() if obj is not None and callable(getattr(obj, "api_stats", None)) else None
        return {
            "api": api,
            "generated": self.stage.fresh if self.stage is not None else {},
            "stage": vars(self.stage.stats) if self.stage is not None else None,
        }


def encode_plan(
    plan: Plan, model: ResolvedModel, cfg: RunConfig, ctx: distributed.Context, run_encoder: RunEncoder | None = None
) -> tuple[dict, dict]:
    """Vectors of every distinct item on rank 0 (None elsewhere) and the encoding figures (`run_encoder`: the run's
    encoder, whose generation stage and API figures `_stage_results` reads afterwards; "figures" in the second
    value holds each process's)."""
    cache = _open_cache(model, cfg, ctx)
    run_encoder = run_encoder or RunEncoder(model, cfg, ctx)
    keys = list(plan.items)
    found, missing = cache.lookup(keys) if cache is not None else ({}, keys)
    check: dict[str, Any] | None = None
    if cache is not None and found and cfg.cache_check > 0 and model.identity.may_change and ctx.is_main:
        worst = verify_cache(run_encoder.raw(), model, plan, found, cfg, run_encoder.stage)
        check = {"items": min(cfg.cache_check, len(found)), "min_cosine": worst, "changed": False}
        if worst is not None and worst < checks.MIN_COSINE:
            print(
                f"warning: {model.identity.label} changed since its vectors were cached (re-encoded sample "
                f"cosine {worst:.4f} < {checks.MIN_COSINE}): discarding {len(found)} cached vectors and encoding "
                "everything again",
                file=sys.stderr,
            )  # shown even with --quiet
            cache.clear()
            check["changed"] = True
            found, missing = {}, keys
    missing = ctx.broadcast(missing)  # rank 0 decides what is missing, whatever each node's disk holds
    # contiguous slices in storage order: each process reads the images of its own items only
    mine = distributed.split(plan.items.storage_order(missing), ctx.rank, ctx.world)
    vectors: dict[str, np.ndarray] = {}
    stats = None
    if mine:
        device = _encode_device(ctx)
        vectors, stats = encode_items(
            run_encoder.get(),
            mine,
            plan.items,
            model=model.identity.label,
            batch_size=cfg.batch_size or model.max_batch,
            cache=cache,
            skip_bad_images=cfg.skip_bad_images,
            show_progress=not cfg.quiet and ctx.is_main,
            log=lambda m: _log(ctx, cfg, m),
            grow=device.startswith("cuda") and not cfg.batch_size,
            device=device,
        )
    plan.items.close_images()
    gathered = ctx.gather(
        (
            vectors,
            stats.images_skipped if stats else [],
            stats.batch_halvings if stats else 0,
            {**run_encoder.figures(), "encoding": stats.figures() if stats else None},
        )
    )
    info = {
        "cache_hits": len(found),
        "encoded": len(missing),
        "corrupted_cache_shards": cache.stats.corrupted_shards if cache else [],
        "cache_dir": str(cache.dir) if cache else None,
        "cache_check": check,
        "images_skipped": [],
        "batch_halvings": 0,
    }
    if not ctx.is_main:
        return {}, info
    for part, skipped, halvings, _ in gathered:
        found.update(part)
        info["images_skipped"] += skipped
        info["batch_halvings"] += halvings
    info["figures"] = [fig for *_, fig in gathered]
    encodings = [fig.pop("encoding") for fig in info["figures"]]  # per process: order, batch sizes, padding
    info["encoding"] = None if not any(encodings) else encodings[0] if len(encodings) == 1 else encodings
    if cache is not None:
        for part, *_ in gathered[1:]:
            cache._vectors.update(part)  # other ranks wrote their shards; keep rank 0's view complete
        cache.compact()
    if run_encoder.stage is not None:
        for *_, fig in gathered[1:]:
            run_encoder.stage.add(fig["generated"])
        run_encoder.stage.cache.compact()
    return found, info


def _encode_device(ctx: distributed.Context) -> str:
    """The device encoding runs on (torch is not imported for it: an encoder given as an object may not use it)."""
    if ctx.requested_device is not None or "torch" in sys.modules:
        return str(ctx.device)
    return "cpu"


def count_truncation(
    plan: Plan, model: ResolvedModel, cfg: RunConfig, ctx: distributed.Context
) -> dict[str, dict[str, int]] | None:
    """Inputs cut by the encoder's text limit, per config (`truncation.count_truncated`); {} when the encoder does
    not truncate, None when the tokenizer could not be loaded (said on stderr). Only the tokenizer is loaded."""
    state = _run_state(cfg, model) if cfg.encoder is None else RunState(None)  # a given object may change: count afresh
    key = {}
    if state.dir is not None:
        key = state.truncation_key(
            cfg.data,
            {**model.identity.cache_fields(), **textspace.identity_part(cfg.captions)},
            [cp.config for cp in plan.configs],
            cfg.variant,
            cfg.limit,
            plan.sees_images,
        )
        key["rewrites"] = _file_digest(cfg.rewrites)
        known = state.get("truncation", key)
        if known is not None:  # the same inputs and model as a finished run: no tokenizer to load
            return known
    try:
        limit = model.text_limit()
    except (OSError, ValueError, ImportError) as exc:
        _log(ctx, cfg, f"warning: could not load {model.identity.name}'s tokenizer to count truncated inputs ({exc})")
        return None
    counts = {} if limit is None else truncation.count_truncated(plan, limit)
    state.put("truncation", key, counts)
    return counts


def _file_digest(path: str | None) -> str | None:
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest() if path else None


# --- the run ------------------------------------------------------------------------------------------------
def _plan(cfg: RunConfig, benchmark: str, configs: list[str], sees_images: bool) -> Plan:
    if benchmark == "ark":
        return plan_ark(
            cfg.data,
            configs,
            variant=cfg.variant,
            limit=cfg.limit,
            rewrites=load_rewrites(cfg.rewrites),
            sees_images=sees_images,
            captions=textspace.load_captions(None if sees_images else cfg.captions),
        )
    if cfg.rewrites or cfg.captions:
        raise TriadError("--rewrites and --captions apply to ARK runs only")
    return plan_triad(cfg.data, configs, variant=cfg.variant, limit=cfg.limit, sees_images=sees_images)


def _shared_plan(
    cfg: RunConfig, ctx: distributed.Context, benchmark: str, configs: list[str], sees_images: bool
) -> Plan:
    """Rank 0 plans; the other processes receive only the distinct-item table (they encode, never rank)."""
    if ctx.world == 1:
        return _plan(cfg, benchmark, configs, sees_images)
    plan, message = None, None
    if ctx.is_main:
        try:
            plan = _plan(cfg, benchmark, configs, sees_images)
        except TriadError as exc:
            message = str(exc)
    items, message = ctx.broadcast((plan.items if plan is not None else None, message))
    if message is not None:
        raise TriadError(message)
    return plan if plan is not None else Plan(benchmark, [], items, sees_images=sees_images)


def _run_state(cfg: RunConfig, model: ResolvedModel) -> RunState:
    """Records of finished runs beside the embedding cache; none for a model that is not cached (no revision)."""
    if not model.identity.cacheable:
        return RunState(None)
    return RunState(None if cfg.no_cache else (cfg.cache_dir or default_cache_dir()))


def _validate_once(cfg: RunConfig, benchmark: str, model: ResolvedModel) -> list[str]:
    """`validate_folder`, skipped when this folder (same files, sizes, times) already passed this validator."""
    state = _run_state(cfg, model)
    key = state.validation_key(cfg.data, benchmark) if state.dir is not None else {}
    if state.get("validated", key):
        return []
    problems = validate_folder(cfg.data, benchmark)
    if not problems:
        state.put("validated", key, True)
    return problems


def _score_once(cfg: RunConfig, plan: Plan, final: dict, model: ResolvedModel) -> dict[str, Any]:
    """`score`, or the stored scores of identical rankings of the same folder (same seed and metrics code)."""
    import hashlib

    state = _run_state(cfg, model)
    if state.dir is None:
        return score(plan, final, cfg.seed, data=cfg.data)
    digest = hashlib.sha256()
    for cp in plan.configs:
        result = final[cp.config]
        digest.update(cp.config.encode() + result.order.astype(np.int64).tobytes())
        if result.positive_rank is not None:
            digest.update(result.positive_rank.astype(np.int64).tobytes())
        digest.update("\0".join(cp.query_ids).encode())
    key = state.scores_key(cfg.data, [cp.config for cp in plan.configs], cfg.seed, digest.hexdigest())
    known = state.get("scores", key)
    if known is not None:
        return known
    scored = score(plan, final, cfg.seed, data=cfg.data)
    state.put("scores", key, scored)
    return scored


def _prepare(cfg: RunConfig, ctx: distributed.Context, model: ResolvedModel) -> tuple[str, list[str]]:
    benchmark = cfg.benchmark or detect_benchmark(cfg.data)
    if benchmark not in ("triad", "ark"):
        raise TriadError(f"unknown benchmark {benchmark!r}; valid: triad, ark")
    for flag, value in (("--limit", cfg.limit), ("--batch-size", cfg.batch_size), ("--rerank-top", cfg.rerank_top)):
        if value is not None and value < 1:
            raise TriadError(f"{flag} must be at least 1, got {value}")
    configs = select_configs(cfg.data, benchmark, cfg.configs)
    problems = _validate_once(cfg, benchmark, model) if cfg.validate and ctx.is_main else []
    problems = ctx.broadcast(problems)
    if problems:
        shown = "\n  - ".join(problems[:10])
        more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
        raise TriadError(
            f"{cfg.data}: the folder fails `triad validate` ({len(problems)} problems):\n  - {shown}{more}"
        )
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
    if cfg.variant not in inputs.VARIANTS:
        raise TriadError(f"unknown input variant {cfg.variant!r}; valid: {', '.join(inputs.VARIANTS)}")
    model = resolve_model(cfg)
    rerank_model = resolve_reranker(cfg)
    sees_images = model.identity.sees_images
    if cfg.variant == inputs.IMAGE_ONLY and not sees_images:
        raise TriadError(
            f"model {model.identity.label} ignores images: variant image_only would leave it empty queries"
        )
    textspace.check_model(cfg.captions, model.identity, rerank_model.identity if rerank_model is not None else None)
    benchmark, configs = _prepare(cfg, ctx, model)
    plan = _shared_plan(cfg, ctx, benchmark, configs, sees_images)
    truncated = count_truncation(plan, model, cfg, ctx) if ctx.is_main else None
    timings["plan"] = time.perf_counter() - tick

    tick = time.perf_counter()
    run_encoder = RunEncoder(model, cfg, ctx)
    vectors, enc_info = encode_plan(plan, model, cfg, ctx, run_encoder)
    images_read = ctx.gather(plan.items.images_read)
    timings["encode"] = time.perf_counter() - tick
    if not ctx.is_main:
        return {}

    show = not cfg.quiet
    tick = time.perf_counter()
    reranker = rerank_model.load(ctx.device, cfg.dtype) if rerank_model is not None else None
    # A text-only first stage drops images from its plan; an image-seeing reranker still gets the full inputs (paper
    # D.2), a text-only one (bge-reranker-v2-m3) the text-space inputs (captions, ARK §4.1) whatever the first stage.
    rerank_sees = rerank_model.identity.sees_images if rerank_model is not None else sees_images
    rerank_plan = (
        _plan(cfg, benchmark, configs, rerank_sees) if reranker is not None and rerank_sees != sees_images else None
    )
    top_k = cfg.rerank_top or (_ark_rerank_top() if benchmark == "ark" else TRIAD_RERANK_TOP)
    rerank_batch = rerank_model.max_batch if rerank_model is not None else 8
    make = ark_rankings if benchmark == "ark" else triad_rankings
    staged = output.StagedOutput(cfg.out)
    try:
        written = _write_as_ranked(staged, benchmark == "ark", reranker is not None)
        final, first = make(plan, vectors, reranker, top_k, rerank_batch, show, rerank_plan=rerank_plan, emit=written)
        timings["rank" if reranker is None else "rank+rerank"] = time.perf_counter() - tick - written.seconds

        tick = time.perf_counter()
        try:
            scored = _score_once(cfg, plan, final, model)
        except ValueError as exc:
            raise TriadError(f"scoring failed: {exc}") from exc
        timings["score"] = time.perf_counter() - tick
        figures = enc_info.pop("figures")  # per process: API calls, fresh generations (not for results["run"])
        results = _results(cfg, plan, model, rerank_model, scored, enc_info, timings, ctx)
        results.update(_stage_results(plan, model, rerank_model, run_encoder, figures, cfg))
        if rerank_plan is not None and rerank_plan.captions is not None:  # captions read by a text-only reranker
            results["captioner"] = rerank_plan.captions.summary()
        results["run"]["truncated_inputs"] = truncated
        results["run"]["images_read_per_process"] = images_read
        if reranker is not None:
            results["two_stage"] = two_stage(plan, first, scored, top_k, cfg.seed)
            results["rerank_top"] = top_k

        results["run"]["timings_s"]["write"] = written.seconds  # the rankings files, written while ranking
        staged.write_results(results)
        staged.commit()
    except BaseException:
        staged.discard()
        raise
    if show:
        _print(results, benchmark, cfg.out)
    return results


def _stage_lines(results: dict[str, Any]) -> list[str]:
    """Console lines for a generation stage and for API models (what results.json records about them)."""
    lines = []
    gen = results.get("generation")
    if gen is not None:
        lines.append(
            f"generation {gen['generator']} ({gen['key']}): {gen['generated']} generated in "
            f"{gen['generator_calls']} calls, {gen['reused']} reused; {gen['fallback_inputs']} of "
            f"{gen['inputs']} inputs fell back"
        )
    api = results.get("api")
    if api is not None:
        lines.append(
            f"API {api['model_version']}: {api['responses_requested']} responses requested "
            f"({api['retries']} retries), {api['responses_cached']} from the response cache"
        )
    if results.get("reproducible") is False:
        lines.append(
            "NOT REPRODUCIBLE without provider access (an API model or API rewrites made these numbers); the "
            "responses are cached, so the run can be repeated from them (--offline)"
        )
    return lines


class _write_as_ranked:  # noqa: N801 (used as a function)
    """`emit` for the rank loop: writes each config's rankings (and first-stage rankings) into the staged output as
    soon as it is ranked, so its scores and output table are freed before the next config (issue 16)."""

    def __init__(self, staged: output.StagedOutput, ark: bool, reranked: bool) -> None:
        self.staged, self.ark, self.reranked, self.seconds = staged, ark, reranked, 0.0

    def __call__(self, cp: Any, final: Any, first: Any) -> None:
        tick = time.perf_counter()
        self.staged.write_rankings(cp.config, rankings_table(cp, final, ark=self.ark, reranked=self.reranked))
        if first is not None:
            self.staged.write_rankings(cp.config, rankings_table(cp, first, ark=self.ark), first_stage=True)
        self.seconds += time.perf_counter() - tick


def _ark_rerank_top() -> int:
    from ark_dataset.names import RERANK_TOP_K

    return RERANK_TOP_K


def _results(
    cfg: RunConfig,
    plan: Plan,
    model: ResolvedModel,
    rerank_model: ResolvedModel | None,
    scored: dict[str, Any],
    enc_info: dict[str, Any],
    timings: dict[str, float],
    ctx: distributed.Context,
) -> dict[str, Any]:
    from triad_dataset.folder.io import fingerprint

    config_names = [cp.config for cp in plan.configs]
    configs = {c: scored[c] for c in config_names}
    summary = {k: v for k, v in scored.items() if k not in configs}
    if plan.benchmark == "triad":
        summary["map"] = {c: configs[c]["metrics"]["map"] for c in config_names}
    per_config = {
        cp.config: {
            "queries": len(cp.rows),
            "pool_slots": cp.pool_slots + len(cp.rows),
            "distinct_items": len(cp.distinct_keys),
        }
        for cp in plan.configs
    }
    run_info = {
        "distinct_items": len(plan.items),
        "pool_slots": sum(v["pool_slots"] for v in per_config.values()),
        "per_config": per_config,
        **enc_info,
        "timings_s": dict(timings),
        "limit": cfg.limit,
        "batch_size": cfg.batch_size or model.max_batch,
        # the device a model ran on; null when none ran (every vector came from the cache: torch is never imported)
        "device": ctx.requested_device,
        "processes": ctx.world,
    }
    results: dict[str, Any] = {
        "benchmark": plan.benchmark,
        # complete: every query of every selected config was ranked; `--limit` runs are partial and the
        # leaderboard refuses them
        "complete": cfg.limit is None,
        "model": _model_json(model, cfg.dtype),
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
    if rerank_model is not None:
        results["reranker"] = _model_json(rerank_model, cfg.dtype)
    warnings = []
    if model.random_init or (rerank_model is not None and rerank_model.random_init):
        warnings.append(RANDOM_WARNING)
    if any(m is not None and m.identity.input_pipeline == UNVERIFIED for m in (model, rerank_model)):
        warnings.append(UNVERIFIED_WARNING)
    if warnings:
        results["warning"] = "; ".join(warnings)
    return results


def _stage_results(
    plan: Plan,
    model: ResolvedModel,
    rerank_model: ResolvedModel | None,
    run_encoder: RunEncoder,
    figures: list[dict[str, Any]],
    cfg: RunConfig,
) -> dict[str, Any]:
    """results.json "reproducible" (false when an API model produced the vectors or scores, or your own encoder
    says `reproducible = False`), "api" (provider, endpoint, model version, call figures summed over processes) and
    "generation" (the generation stage's identity, figures and fallback counts)."""
    out: dict[str, Any] = {}
    models = [m for m in (model, rerank_model) if m is not None]
    out["reproducible"] = all(
        m.identity.family != API and getattr(m.obj, "reproducible", True) is not False for m in models
    )
    rewriter = _rewriter_meta(cfg.rewrites)
    if rewriter is not None:  # the rewrites' maker: an API rewriter's texts cannot be made again by a reader
        out["rewriter"] = rewriter
        out["reproducible"] = out["reproducible"] and rewriter.get("reproducible", True) is not False
    if model.identity.family == API:
        calls = [f["api"] for f in figures if f.get("api")]
        summed: dict[str, Any] = {"reported_models": {}, "status": {}}
        for part in calls:
            for k, v in part.items():
                if isinstance(v, dict):
                    for name, n in v.items():
                        summed[k][name] = summed[k].get(name, 0) + n
                else:
                    summed[k] = summed.get(k, 0) + v
        options = model.identity.options
        out["api"] = {
            "provider": options.get("provider"),
            "endpoint": model.identity.source,
            "model_version": options.get("model"),
            "dimensions": options.get("dimensions"),
            "offline": cfg.offline,
            "response_cache": str(run_encoder.responses.dir) if run_encoder.responses is not None else None,
            "requested_on": time.strftime("%Y-%m-%d", time.gmtime()) if summed.get("requests") else None,
            **summed,
        }
    stage = run_encoder.stage
    if stage is not None:
        for fig in figures[1:]:
            for k, v in (fig.get("stage") or {}).items():
                setattr(stage.stats, k, getattr(stage.stats, k) + v)
        role_of = getattr(plan.items, "role", None) or (lambda k: plan.items[k].role)
        keys_by_role: dict[str, list[str]] = {}
        for key in plan.items:
            keys_by_role.setdefault(role_of(key), []).append(key)
        out["generation"] = stage.summary(keys_by_role, run_encoder.generation_root)
    return out


def _rewriter_meta(rewrites: str | None) -> dict[str, Any] | None:
    """What `triad rewrite` wrote beside a rewrites file (REWRITES.meta.json): the rewriter identity and whether it is
    reproducible; None when there is no such file (rewrites made elsewhere)."""
    import json

    meta = Path(f"{rewrites}.meta.json") if rewrites else None
    if meta is None or not meta.is_file():
        return None
    try:
        obj = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise TriadError(f"{meta}: unreadable rewriter metadata ({exc})") from exc
    return {"identity": obj.get("rewriter"), "reproducible": obj.get("reproducible", True), "path": str(meta)}


def _model_json(model: ResolvedModel, dtype: str | None) -> dict[str, Any]:
    """results.json "model": the identity (name, source, revision, family, dtype, versions, ...) plus, for models
    loaded through an entry, the entry's fields the leaderboard and readers know (hub_id, description, ...)."""
    out = model.identity.to_json()
    entry = model.entry
    if entry is not None:
        out.update(
            {
                "hub_id": entry.hub_id,
                "description": entry.description,
                "max_batch": entry.max_batch,
                "has_instruction_field": entry.has_instruction_field,
                "random_init": entry.random_init,
            }
        )
    out["model_path"] = model.model_path
    return out


def _print(results: dict[str, Any], benchmark: str, out: str) -> None:
    from model_adapters.models.identity import describe

    model = results["model"]
    print(f"\n{benchmark.upper()} · model {describe(model)} · variant {results['variant']}")
    if results.get("warning"):
        print(f"WARNING: {results['warning']}")
    if benchmark == "ark":
        print(output.ark_table(results["configs"], results["summary"].get("macro")))
    else:
        print(output.triad_table(results["configs"]))
    print()
    print(output.summary_table(results["run"]))
    for line in _stage_lines(results):
        print(line)
    for line in truncation.warning_lines(results["run"].get("truncated_inputs"), model["name"]):
        print(line)
    for line in output.written_lines(out, results):
        print(line)
