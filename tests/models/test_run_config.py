"""`triad run`'s options become a `RunConfig` field by field of the same name (`commands.run_config`)."""

from __future__ import annotations

from dataclasses import fields

from model_adapters.commands import run_config
from model_adapters.run.config import RunConfig
from model_adapters.vectors.checks import SAMPLE_SIZE
from triad_cli.main import build_parser


def _parse(*argv: str):
    return build_parser().parse_args(["run", "--data", "D", "--out", "O", *argv])


def test_defaults_give_the_dataclass_defaults():
    cfg = run_config(_parse("--model", "minilm"))
    default = RunConfig(model="minilm", data="D", out="O")
    assert {f.name: getattr(cfg, f.name) for f in fields(RunConfig)} == {
        f.name: getattr(default, f.name) for f in fields(RunConfig)
    }


def test_the_three_renamed_options():
    cfg = run_config(_parse("--model", "minilm", "--config", "state_cars,same_cars", "--no-validate"))
    assert (cfg.configs, cfg.validate, cfg.cache_check) == ("state_cars,same_cars", False, SAMPLE_SIZE)
    assert run_config(_parse("--model", "minilm", "--cache-check", "0")).cache_check == 0


def test_every_other_field_comes_from_the_option_of_its_name():
    args = _parse(
        "--encoder", "pkg:make", "--name", "mine", "--revision", "v1", "--text-only", "--rerank-top", "7",
        "--batch-size", "4", "--limit", "3", "--seed", "5", "--offline", "--quiet", "--skip-bad-images",
    )  # fmt: skip
    cfg = run_config(args)
    assert (cfg.encoder, cfg.name, cfg.revision, cfg.sees_images) == ("pkg:make", "mine", "v1", False)
    assert (cfg.rerank_top, cfg.batch_size, cfg.limit, cfg.seed) == (7, 4, 3, 5)
    assert cfg.offline and cfg.quiet and cfg.skip_bad_images
