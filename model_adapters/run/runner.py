"""Runs one model over the selected configs of a TRIAD or ARK folder, from the folder to results.json.

    run(RunConfig(model="minilm", data="demo_output/triad", out="runs/minilm-triad")) -> results dict

A `Run` goes through its phases in order:

1. prepare: resolve the model and reranker, detect the benchmark, select the configs, validate the folder.
2. plan: read the rows and collect the distinct inputs. Count the inputs that the encoder's text limit cuts.
3. encode: the vectors of every distinct input, through `vectors.plan_vectors`: cache, encoding split over
   processes, gather.
4. rank: batched matrix products with stable ties, then the reranked heads. Each config's rankings are written once
   ranked.
5. score: through `metrics.scoring`, the function the Space uses.
6. write: results.json, from `run.results_json`, moved into place with the rankings. Then the console tables.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from model_adapters.models.resolve import ResolvedModel
from model_adapters.models.selection import resolve_model, resolve_reranker
from model_adapters.planning import inputs, textspace, truncation
from model_adapters.planning.configs import detect_benchmark, failed_validation, select_configs, validate_folder
from model_adapters.planning.plan import Plan, load_rewrites, plan_ark, plan_triad
from model_adapters.ranks import output
from model_adapters.ranks.rank_plan import (
    Rankings,
    RankingsWriter,
    ark_rankings,
    chance,
    default_rerank_top,
    score,
    triad_rankings,
    two_stage,
)
from model_adapters.run import console
from model_adapters.run.clock import PhaseClock
from model_adapters.run.config import RunConfig
from model_adapters.run.encoder import RunEncoder, cached_text_limit, load_reranker, log, open_cache
from model_adapters.run.failure import encoder_failed
from model_adapters.run.interrupt import DONE, RunInterrupted, Stopped
from model_adapters.run.memo import RunMemo, file_digest
from model_adapters.run.results_json import Models, results_json, stage_results
from model_adapters.vectors import distributed
from model_adapters.vectors.cache import EmbeddingCache
from model_adapters.vectors.plan_vectors import EncodeSettings, encode_plan
from triad_dataset.contract.errors import TriadError

__all__ = ["Run", "run"]


def run(cfg: RunConfig, check: Callable[[Run], None] | None = None) -> dict[str, Any]:
    """Run one model over the selected configs and return the results dict on rank 0, `{}` on the other ranks.

    Args:
        cfg: the run's settings.
        check: sees the run once its models are resolved, before anything is read or written, and raises to stop
            it. `triad run` refuses an `--out` that holds another model's run this way.
    """
    cfg.check_folders()  # before anything loads: nothing half-written
    ctx = distributed.init(cfg.device)
    job = None
    try:
        job = Run.start(cfg, ctx)
        if check is not None:
            check(job)
        return job.run()
    except RunInterrupted:
        raise
    except KeyboardInterrupt as exc:
        raise RunInterrupted(stopped(cfg, job).line()) from exc
    finally:
        ctx.close()


def stopped(cfg: RunConfig, job: Run | None) -> Stopped:
    """Where `job` stopped (None: before its models were resolved), for the line an interrupted run ends with."""
    if job is None:
        return Stopped("prepare", cfg.out)
    cache = job.cache
    identity = job.model.identity
    why = "--no-cache" if cfg.no_cache else f"{identity.name} declares no revision"
    if cache is None:
        return Stopped(job.phase, cfg.out, uncached=why)
    return Stopped(job.phase, cfg.out, str(cache.dir), written=cache.stats.written)


@dataclass
class Run:
    """One run: its settings, processes, models and memo. Each phase method fills in what the next one reads."""

    cfg: RunConfig
    ctx: distributed.Context
    models: Models
    memo: RunMemo
    benchmark: str = ""
    configs: list[str] = field(default_factory=list)
    planned: Plan | None = None  # set by plan_inputs
    truncated: dict[str, dict[str, int]] | None = None
    encoder: RunEncoder | None = None  # set by encode
    images_read: list[int] | None = field(default_factory=list)  # per process, on rank 0
    rerank_plan: Plan | None = None
    top_k: int = 0  # set by rank: how many first-stage candidates the reranker reorders
    clock: PhaseClock = field(default_factory=PhaseClock)
    phase: str = "prepare"  # the phase running, named by the line an interrupted run ends with
    cache: EmbeddingCache | None = None  # set by encode: the model's embedding cache, None when not cached

    @classmethod
    def start(cls, cfg: RunConfig, ctx: distributed.Context) -> Run:
        """Check the variant and resolve the models. The plan phase's clock starts here."""
        clock = PhaseClock()
        if cfg.variant not in inputs.VARIANTS:
            raise TriadError(f"unknown input variant {cfg.variant!r}; valid: {', '.join(inputs.VARIANTS)}")
        models = Models(resolve_model(cfg), resolve_reranker(cfg))
        # records of finished runs beside the embedding cache, none for a model without a revision
        cached = models.model.identity.cacheable and not cfg.no_cache
        return cls(cfg, ctx, models, RunMemo(cfg.cache_root if cached else None), clock=clock)

    @property
    def model(self) -> ResolvedModel:
        """The first-stage model."""
        return self.models.model

    @property
    def plan(self) -> Plan:
        """The plan of the selected configs, made by `plan_inputs`."""
        if self.planned is None:
            raise RuntimeError("the run is not planned yet (plan_inputs)")
        return self.planned

    @property
    def run_encoder(self) -> RunEncoder:
        """The run's encoder, made by `encode`."""
        if self.encoder is None:
            raise RuntimeError("the run has not encoded yet (encode)")
        return self.encoder

    def run(self) -> dict[str, Any]:
        """Run all phases in order and return the results dict on rank 0, `{}` on the other ranks."""
        self.prepare()
        self.plan_inputs()
        vectors, report = self.encode()
        if not self.ctx.is_main:
            return {}
        staged = output.StagedOutput(self.cfg.out)  # moved into place only when all of it succeeded
        try:
            writer = RankingsWriter(staged, self.benchmark == "ark", self.models.reranker is not None)
            final, first = self.rank(vectors, writer)
            results = self.write(staged, self.score(final), first, report, writer)
        except BaseException:
            staged.discard()
            raise
        self.phase = DONE
        if not self.cfg.quiet:
            console.print_results(results, self.benchmark, self.cfg.out)
        return results

    def prepare(self) -> None:
        """Check the settings against the model, detect the benchmark, select the configs, validate the folder."""
        cfg, identity = self.cfg, self.model.identity
        if cfg.variant == inputs.IMAGE_ONLY and not identity.sees_images:
            raise TriadError(f"model {identity.label} ignores images: variant image_only would leave it empty queries")
        reranker = self.models.reranker
        textspace.check_model(cfg.captions, identity, reranker.identity if reranker is not None else None)
        self.benchmark = cfg.benchmark or detect_benchmark(cfg.data)
        if self.benchmark not in ("triad", "ark"):
            raise TriadError(f"unknown benchmark {self.benchmark!r}; valid: triad, ark")
        cfg.check_counts()
        self.configs = select_configs(cfg.data, self.benchmark, cfg.configs)
        validate = cfg.validate and self.ctx.is_main
        problems = self.memo.validate(cfg.data, self.benchmark, validate_folder) if validate else []
        problems = self.ctx.broadcast(problems)
        if problems:
            raise TriadError(failed_validation(cfg.data, problems))

    def plan_inputs(self) -> None:
        """Plan the run. Rank 0 plans and counts the truncated inputs, and the others get only the distinct items."""
        self.phase = "plan"
        sees_images = self.model.identity.sees_images
        if self.ctx.world == 1:
            self.planned = self._plan_for(sees_images)
        else:
            plan, message = None, None
            if self.ctx.is_main:
                try:
                    plan = self._plan_for(sees_images)
                except TriadError as exc:
                    message = str(exc)
            items, message = self.ctx.broadcast((plan.items if plan is not None else None, message))
            if message is not None:
                raise TriadError(message)
            self.planned = plan if plan is not None else Plan(self.benchmark, [], items, sees_images=sees_images)
        self.truncated = self.count_truncation() if self.ctx.is_main else None
        self.clock.lap("plan")

    def _plan_for(self, sees_images: bool) -> Plan:
        """Return the plan of the selected configs for a model that sees images, or one that does not."""
        cfg = self.cfg
        if self.benchmark == "ark":
            return plan_ark(
                cfg.data,
                self.configs,
                variant=cfg.variant,
                limit=cfg.limit,
                rewrites=load_rewrites(cfg.rewrites),
                sees_images=sees_images,
                captions=textspace.load_captions(None if sees_images else cfg.captions),
            )
        if cfg.rewrites or cfg.captions:
            raise TriadError("--rewrites and --captions apply to ARK runs only")
        return plan_triad(cfg.data, self.configs, variant=cfg.variant, limit=cfg.limit, sees_images=sees_images)

    def count_truncation(self) -> dict[str, dict[str, int]] | None:
        """Count the inputs that the encoder's text limit cuts, per config, with `truncation.count_truncated`.

        Returns `{}` when the encoder does not truncate, and None when its tokenizer could not be loaded, which
        stderr says.
        """
        cfg, model, plan = self.cfg, self.model, self.plan

        def key() -> dict[str, Any]:
            identity = {**model.identity.cache_fields(), **textspace.identity_part(cfg.captions)}
            configs = [cp.config for cp in plan.configs]
            key = RunMemo.truncation_key(cfg.data, identity, configs, cfg.variant, cfg.limit, plan.sees_images)
            return {**key, "rewrites": file_digest(cfg.rewrites)}

        def count() -> dict[str, dict[str, int]] | None:
            try:
                limit = cached_text_limit(model, cfg) or model.text_limit()  # only the tokenizer is loaded
            except (OSError, ValueError, ImportError) as exc:
                log(
                    self.ctx,
                    cfg,
                    f"warning: could not load {model.identity.name}'s tokenizer to count truncated inputs ({exc})",
                )
                return None
            return {} if limit is None else truncation.count_truncated(plan, limit)

        return self.memo.truncation(key, count, reuse=cfg.encoder is None)  # a given object may change

    def encode(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Return the vectors of every distinct item and the encoding report of `plan_vectors.encode_plan`."""
        cfg, model = self.cfg, self.model
        self.encoder = RunEncoder(model, cfg, self.ctx)
        settings = EncodeSettings(
            label=model.identity.label,
            batch_size=cfg.batch_size or model.max_batch,
            cache_check=cfg.cache_check,
            may_change=model.identity.may_change,
            skip_bad_images=cfg.skip_bad_images,
            grow=not cfg.batch_size,
            quiet=cfg.quiet,
        )
        self.cache = open_cache(model, cfg, self.ctx)
        self.phase = "encode"
        try:
            vectors, report = encode_plan(self.plan, self.run_encoder, self.ctx, self.cache, settings)
        except TriadError:
            raise
        except Exception as exc:  # your own encoder's: one line naming its file, line, batch and input
            if model.identity.source_kind != "python":
                raise
            raise TriadError(encoder_failed(exc, model, self.plan)) from exc
        self.images_read = self.ctx.gather(self.plan.items.images_read)
        self.clock.lap("encode")
        return vectors, report

    def rank(self, vectors: dict[str, np.ndarray], written: RankingsWriter) -> tuple[Rankings, Rankings]:
        """Rank every config and rerank its head, writing each once ranked; return the final and first rankings."""
        self.phase = "rank"
        cfg, reranker_model, sees_images = self.cfg, self.models.reranker, self.model.identity.sees_images
        reranker = load_reranker(reranker_model, cfg, self.ctx) if reranker_model is not None else None
        # A text-only first stage drops images from its plan. An image-seeing reranker still gets the full inputs,
        # paper D.2, and a text-only one the text-space inputs, ARK §4.1's captions, whatever the first stage.
        rerank_sees = reranker_model.identity.sees_images if reranker_model is not None else sees_images
        if reranker is not None and rerank_sees != sees_images:
            self.rerank_plan = self._plan_for(rerank_sees)
        self.top_k = cfg.rerank_top or default_rerank_top(self.benchmark)
        batch = reranker_model.max_batch if reranker_model is not None else 8
        rank_all = ark_rankings if self.benchmark == "ark" else triad_rankings
        show = not cfg.quiet
        final, first = rank_all(
            self.plan, vectors, reranker, self.top_k, batch, show, rerank_plan=self.rerank_plan, emit=written
        )
        self.clock.lap("rank" if reranker is None else "rank+rerank", written.seconds, written.cpu_seconds)
        return final, first

    def score(self, final: Rankings) -> dict[str, Any]:
        """Score the final rankings with `rank_plan.score`, or take the memo's scores for identical rankings."""
        self.phase, cfg = "score", self.cfg
        try:
            scored = self.memo.scores(
                cfg.data, self.plan, final, cfg.seed, lambda: score(self.plan, final, cfg.seed, data=cfg.data)
            )
        except ValueError as exc:
            raise TriadError(f"scoring failed: {exc}") from exc
        self.clock.lap("score")
        return scored

    def write(
        self,
        staged: output.StagedOutput,
        scored: dict[str, Any],
        first: Rankings,
        report: dict[str, Any],
        written: RankingsWriter,
    ) -> dict[str, Any]:
        """Assemble results.json with `run.results_json`, write it beside the rankings and commit the staged folder.

        Args:
            staged: the staged output the rankings were written into.
            scored: the scores of the final rankings.
            first: the first-stage rankings of a reranked run.
            report: the encoding report of `encode`.
            written: the writer of the rankings files. The time it spent is the write phase.
        """
        self.phase = "write"
        counters = report.pop("counters")  # per process: API calls and fresh generations, not for results["run"]
        results = results_json(self.cfg, self.plan, self.models, scored, report, self.clock.wall, self.ctx)
        results.update(stage_results(self.plan, self.models, self.run_encoder, counters, self.cfg))
        if self.rerank_plan is not None and self.rerank_plan.captions is not None:  # read by a text-only reranker
            results["captioner"] = self.rerank_plan.captions.summary()
        for config, value in chance(self.plan).items():  # the primary metric of a random ranking, for the tables
            results["configs"][config]["chance"] = value
        results["run"]["truncated_inputs"] = self.truncated
        results["run"]["images_read_per_process"] = self.images_read
        if self.models.reranker is not None:
            results["two_stage"] = two_stage(self.plan, first, scored, self.top_k, self.cfg.seed)
            results["rerank_top"] = self.top_k
        results["run"]["timings_s"]["write"] = written.seconds  # the rankings files, written while ranking
        results["run"]["cpu_s"] = {**self.clock.cpu, "write": written.cpu_seconds}
        staged.write_results(results)
        staged.commit()
        return results
