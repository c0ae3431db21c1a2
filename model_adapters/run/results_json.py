"""Assembles results.json, docs/CONTRACTS.md §3, whose schema is `model_adapters/results/results.schema.json`.

results = results_json(cfg, plan, models, scored, report, timings, ctx)
results.update(stage_results(plan, models, run_encoder, counters, cfg))
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_adapters.models.recipes import API, UNVERIFIED
from model_adapters.models.resolve import ResolvedModel
from model_adapters.planning.plan import Plan
from model_adapters.run.config import RunConfig
from model_adapters.run.encoder import RunEncoder
from model_adapters.vectors import distributed
from triad_dataset.contract.errors import TriadError

RANDOM_WARNING = "randomly initialised test model: these numbers are noise, not results"
UNVERIFIED_WARNING = (
    "unverified input pipeline (--recipe generic): the inputs were built by a pipeline that mirrors no "
    "authors' code, so these numbers may not be the model's"
)


@dataclass(frozen=True)
class Models:
    """The run's first-stage model and its reranker, which is None when the run is not reranked."""

    model: ResolvedModel
    reranker: ResolvedModel | None = None

    def all(self) -> list[ResolvedModel]:
        """The models that took part, first stage first."""
        return [m for m in (self.model, self.reranker) if m is not None]


def results_json(
    cfg: RunConfig,
    plan: Plan,
    models: Models,
    scored: Mapping[str, Any],
    report: Mapping[str, Any],
    timings: Mapping[str, float],
    ctx: distributed.Context,
) -> dict[str, Any]:
    """Assemble results.json without the stage parts, which `stage_results` adds.

    Args:
        cfg: the run's settings.
        plan: the ranked plan.
        models: the first-stage model and the reranker.
        scored: `rank_plan.score`'s output: one entry per config plus the summary keys.
        report: `plan_vectors.encode_plan`'s report, without its per-process "counters".
        timings: seconds per phase so far.
        ctx: the processes of the run.
    """
    from triad_dataset.folder.io import fingerprint

    config_names = [cp.config for cp in plan.configs]
    configs = {c: scored[c] for c in config_names}
    summary = {k: v for k, v in scored.items() if k not in configs}
    if plan.benchmark == "triad":
        summary["map"] = {c: configs[c]["metrics"]["map"] for c in config_names}
    results: dict[str, Any] = {
        "benchmark": plan.benchmark,
        # complete: every query of every selected config was ranked. `--limit` runs are partial, and the
        # leaderboard refuses them
        "complete": cfg.limit is None,
        "model": model_json(models.model),
        "variant": cfg.variant,
        "dataset": {"path": str(Path(cfg.data).resolve()), "fingerprint": fingerprint(cfg.data)},
        "configs": configs,
        "summary": summary,
        "run": _run_json(cfg, plan, models.model, report, timings, ctx),
    }
    if cfg.rewrites:
        results["rewrites"] = str(Path(cfg.rewrites).resolve())
    if plan.captions is not None:
        results["captioner"] = plan.captions.summary()
    if models.reranker is not None:
        results["reranker"] = model_json(models.reranker)
    warnings = []
    if any(m.random_init for m in models.all()):
        warnings.append(RANDOM_WARNING)
    if any(m.identity.input_pipeline == UNVERIFIED for m in models.all()):
        warnings.append(UNVERIFIED_WARNING)
    if warnings:
        results["warning"] = "; ".join(warnings)
    return results


def _run_json(
    cfg: RunConfig,
    plan: Plan,
    model: ResolvedModel,
    report: Mapping[str, Any],
    timings: Mapping[str, float],
    ctx: distributed.Context,
) -> dict[str, Any]:
    """Assemble results.json "run": sizes of the plan, the encoding report, timings and where the run ran."""
    per_config = {
        cp.config: {
            "queries": len(cp.rows),
            "pool_slots": cp.pool_slots + len(cp.rows),
            "distinct_items": len(cp.distinct_keys),
        }
        for cp in plan.configs
    }
    return {
        "distinct_items": len(plan.items),
        "pool_slots": sum(v["pool_slots"] for v in per_config.values()),
        "per_config": per_config,
        **report,
        "timings_s": dict(timings),
        "limit": cfg.limit,
        "batch_size": cfg.batch_size or model.max_batch,
        # the device a model ran on, null when none ran because every vector came from the cache
        "device": ctx.requested_device,
        "processes": ctx.world,
    }


def stage_results(
    plan: Plan,
    models: Models,
    run_encoder: RunEncoder,
    counters: list[dict[str, Any]],
    cfg: RunConfig,
) -> dict[str, Any]:
    """Assemble results.json "reproducible", "rewriter", "api" and "generation".

    Args:
        plan: the ranked plan.
        models: the first-stage model and the reranker.
        run_encoder: the run's encoder, with its generation stage and API response store.
        counters: each process's `RunEncoder.process_counters()`, rank 0's first.
        cfg: the run's settings.

    "reproducible" is false when an API model produced the vectors or scores, when your own encoder says
    `reproducible = False`, or when the rewrites' maker says it is not reproducible.
    """
    out: dict[str, Any] = {}
    out["reproducible"] = all(
        m.identity.family != API and getattr(m.obj, "reproducible", True) is not False for m in models.all()
    )
    rewriter = rewriter_meta(cfg.rewrites)
    if rewriter is not None:  # the rewrites' maker: an API rewriter's texts cannot be made again by a reader
        out["rewriter"] = rewriter
        out["reproducible"] = out["reproducible"] and rewriter.get("reproducible", True) is not False
    if models.model.identity.family == API:
        out["api"] = _api_json(models.model, run_encoder, counters, cfg)
    stage = run_encoder.stage
    if stage is not None:
        role_of = getattr(plan.items, "role", None) or (lambda k: plan.items[k].role)
        keys_by_role: dict[str, list[str]] = {}
        for key in plan.items:
            keys_by_role.setdefault(role_of(key), []).append(key)
        out["generation"] = stage.summary(keys_by_role, run_encoder.generation_root)
    return out


def sum_counters(parts: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Sum counters over processes. A nested dict, such as reported model names or HTTP statuses, is summed by key.

    >>> sum_counters([{"requests": 2, "status": {"200": 2}}, {"requests": 1, "status": {"200": 1, "429": 1}}])
    {'reported_models': {}, 'status': {'200': 3, '429': 1}, 'requests': 3}
    """
    summed: dict[str, Any] = {"reported_models": {}, "status": {}}
    for part in parts:
        for k, v in part.items():
            if isinstance(v, dict):
                for name, n in v.items():
                    summed[k][name] = summed[k].get(name, 0) + n
            else:
                summed[k] = summed.get(k, 0) + v
    return summed


def _api_json(
    model: ResolvedModel, run_encoder: RunEncoder, counters: list[dict[str, Any]], cfg: RunConfig
) -> dict[str, Any]:
    """Assemble results.json "api": provider, endpoint, model version and the call counters summed over processes."""
    summed = sum_counters([c["api"] for c in counters if c.get("api")])
    options = model.identity.options
    return {
        "provider": options.get("provider"),
        "endpoint": model.identity.source,
        "model_version": options.get("model"),
        "dimensions": options.get("dimensions"),
        "offline": cfg.offline,
        "response_cache": str(run_encoder.responses.dir) if run_encoder.responses is not None else None,
        "requested_on": time.strftime("%Y-%m-%d", time.gmtime()) if summed.get("requests") else None,
        **summed,
    }


def rewriter_meta(rewrites: str | None) -> dict[str, Any] | None:
    """Read the rewriter identity that `triad rewrite` wrote beside a rewrites file, `REWRITES.meta.json`, if any."""
    meta = Path(f"{rewrites}.meta.json") if rewrites else None
    if meta is None or not meta.is_file():
        return None
    try:
        obj = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise TriadError(f"{meta}: unreadable rewriter metadata ({exc})") from exc
    return {"identity": obj.get("rewriter"), "reproducible": obj.get("reproducible", True), "path": str(meta)}


def model_json(model: ResolvedModel) -> dict[str, Any]:
    """Assemble results.json "model": the identity, plus the entry's public fields for a model loaded through one."""
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
