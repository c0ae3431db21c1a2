"""The reasoning-embedder family (TRIAD §5.4, B.2.1): generate, then embed — UME-R1 in Gen mode
(`ume_r1_gen`) and Embed-RL with T-CoT from an external reasoner (`embed_rl_tcot`). TWN is a refused recipe
(models/recipes.py: no code or weights are public).

A recipe's `options["reasoning"]` names which one. Before anything loads, `resolved` completes the entry with its
generation spec (`options["generation"]`: `protocol.GenerationSpec` fields), which the run's generation stage keys
its cache by: the generator and its revision, every prompt, every decoding setting — the generator's own
generation_config.json (read from its folder or the Hub, no weights) updated with the recipe's settings — and the
seed. A source without files, a model built in memory from a config, has its generation config served from memory
(`register_generation_configs`); `load` takes the functions that build the checkpoint and the T-CoT generator, so
another loader can reuse it on other checkpoints.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from model_adapters.families import embed_rl_tcot, ume_r1_gen
from model_adapters.families import qwen_vl_inputs as qvi
from model_adapters.families.common import hub_kwargs, torch_dtype
from model_adapters.families.qwen_chat import ChatOptions, add_recipe_tokens
from model_adapters.protocol import GenerationSpec
from triad_dataset.contract.errors import TriadError

UME_R1_GEN: Final = "ume-r1-gen"
EMBED_RL_TCOT: Final = "embed-rl-tcot"
KINDS: Final = (UME_R1_GEN, EMBED_RL_TCOT)
GENERATION_CONFIG: Final = "generation_config.json"
SPEC_VERSION: Final = "1"  # bump when `generate` changes in a way the spec's fields do not show
NOT_DECODING: Final = ("transformers_version", "_from_model_config")

# The options a reasoning recipe adds to its embedder's (`ChatOptions`) options.
OPTIONS: Final = ("reasoning", "gen_prompt", "decoding", "seed", "generator", "generator_revision", "generator_dtype")
# (reader of a model's files, revision) of a Hub id or folder: resolve.py passes one (the models layer reads the Hub).
OpenRepo = Callable[[str, "str | None"], "tuple[Callable[[str], str | None], str | None]"]
# (model, processor) of a Qwen-VL chat checkpoint: (entry, path, device, dtype, model_class "lm" or "backbone").
Checkpoint = Callable[[Any, str, str, str, str], "tuple[Any, Any]"]
# The T-CoT generator of an entry: (entry, spec, device).
Generator = Callable[[Any, GenerationSpec, str], "embed_rl_tcot.TCoTGenerator"]
# Sources whose generation_config.json is built in memory: prefix -> function of the recipe kind.
IN_MEMORY_CONFIGS: dict[str, Callable[[str], dict[str, Any]]] = {}


def options(embedder: Mapping[str, Any], **values: Any) -> dict[str, Any]:
    """A reasoning recipe's option mapping: its embedder's options and `values`, checked now (at import).

    >>> options({"backbone": "qwen2_vl"}, reasoning="ume-r1-gen", seed=0)
    {'backbone': 'qwen2_vl', 'reasoning': 'ume-r1-gen', 'seed': 0}
    """
    unknown = sorted(set(values) - set(OPTIONS))
    if unknown:
        raise TypeError(f"reasoning options: unknown option(s) {', '.join(unknown)}")
    if values.get("reasoning") not in KINDS:
        raise TypeError(f"reasoning options: reasoning={values.get('reasoning')!r} is not one of {', '.join(KINDS)}")
    return {**embedder, **values}


def register_generation_configs(prefix: str, config_of: Callable[[str], dict[str, Any]]) -> None:
    """Serve `config_of(kind)` as the generation config of every source whose name starts with `prefix`."""
    IN_MEMORY_CONFIGS[prefix] = config_of


def _in_memory_config(source: str, kind: str) -> dict[str, Any] | None:
    for prefix, config_of in IN_MEMORY_CONFIGS.items():
        if source.startswith(prefix):
            return config_of(kind)
    return None


# --- the generation spec ------------------------------------------------------------------------------------------
def _generation_config(
    source: str, revision: str | None, open_repo: OpenRepo, what: str
) -> tuple[dict[str, Any], str | None]:
    read, resolved_revision = open_repo(source, revision)
    path = read(GENERATION_CONFIG)
    if path is None:
        return {}, resolved_revision  # no file: transformers' defaults (greedy), as `generate` would use
    try:
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, json.JSONDecodeError) as exc:
        raise TriadError(f"{what} {source}: unreadable {GENERATION_CONFIG} ({exc})") from exc
    return {k: v for k, v in config.items() if k not in NOT_DECODING}, resolved_revision


def _option(entry: Any, name: str) -> Any:
    if name not in entry.options:
        raise TriadError(f"model {entry.name}: a {entry.options.get('reasoning')} recipe needs option {name!r}")
    return entry.options[name]


def _decoding(entry: Any, config: dict[str, Any]) -> dict[str, Any]:
    """The generator's generation_config.json updated with the recipe's `decoding` settings."""
    settings = _option(entry, "decoding")
    if not isinstance(settings, dict):
        raise TriadError(f"model {entry.name}: option decoding must be a mapping of decoding settings")
    return {**config, **settings}


def _ume_r1_spec(entry: Any, source: str, open_repo: OpenRepo) -> dict[str, Any]:
    prompt = str(_option(entry, "gen_prompt"))
    config, revision = _in_memory_config(source, UME_R1_GEN), entry.revision
    if config is None:
        config, revision = _generation_config(source, entry.revision, open_repo, f"model {entry.name}")
    query = ume_r1_gen.query_options(ChatOptions.parse(entry.options, f"model {entry.name}"), prompt)
    return {
        "generator": source,
        "revision": revision,
        "prompts": {"query": prompt, "query_input": json.dumps(dataclasses.asdict(query), sort_keys=True)},
        "decoding": _decoding(entry, config),
        "seed": entry.options.get("seed", 0),
        "roles": ["query"],
        "version": SPEC_VERSION,
    }


def _tcot_spec(entry: Any, open_repo: OpenRepo) -> dict[str, Any]:
    generator = str(_option(entry, "generator"))
    revision = entry.options.get("generator_revision")
    config = _in_memory_config(generator, EMBED_RL_TCOT)
    if config is None:
        config, revision = _generation_config(generator, revision, open_repo, "T-CoT generator")
    prompts = {
        **embed_rl_tcot.prompts(),
        "pos_image_task": embed_rl_tcot.POS_IMAGE_TASK,
        "pos_image_path": embed_rl_tcot.IMAGE_PATH,
    }
    return {
        "generator": generator,
        "revision": revision,
        "prompts": prompts,
        "decoding": _decoding(entry, config),
        "seed": entry.options.get("seed", 0),
        "roles": ["query", "candidate"],
        "version": SPEC_VERSION,
    }


def resolved(entry: Any, source: str, open_repo: OpenRepo) -> Any:
    """The entry with `options["generation"]` (GenerationSpec fields), read before any weights load. `source` is
    where the weights come from (a Hub id, a folder or an in-memory source)."""
    kind = entry.options.get("reasoning")
    if kind not in KINDS:
        raise TriadError(f"model {entry.name}: option reasoning={kind!r} is not one of {', '.join(KINDS)}")
    spec = _ume_r1_spec(entry, source, open_repo) if kind == UME_R1_GEN else _tcot_spec(entry, open_repo)
    return dataclasses.replace(entry, own_options={**entry.own_options, "generation": spec})


def spec_of(entry: Any) -> GenerationSpec:
    spec = entry.options.get("generation")
    if not isinstance(spec, dict):
        raise TriadError(
            f"model {entry.name}: a reasoning entry is loaded without its generation spec (resolve it "
            "through model_adapters.models.resolve)"
        )
    return GenerationSpec(**{**spec, "roles": tuple(spec["roles"])})


# --- loading ------------------------------------------------------------------------------------------------------
def _chat_checkpoint(entry: Any, path: str, device: str, dtype: str, model_class: str) -> tuple[Any, Any]:
    """(model, QwenVLProcessor) of a Qwen-VL chat checkpoint: `model_class` "lm" (with its LM head, to generate) or
    "backbone"."""
    where = f"model {entry.name}"
    opts = ChatOptions.parse(entry.options, where)
    from transformers import AutoConfig, AutoImageProcessor, AutoModel, AutoModelForImageTextToText, AutoTokenizer

    kwargs = hub_kwargs(path, entry.revision)
    config = AutoConfig.from_pretrained(path, **kwargs)
    if config.model_type != opts.backbone:
        raise TriadError(
            f"{where}: recipe {entry.recipe.name} is for {opts.backbone} checkpoints; {path} is {config.model_type}"
        )
    cls = AutoModelForImageTextToText if model_class == "lm" else AutoModel
    model = cls.from_pretrained(path, dtype=torch_dtype(dtype), **kwargs)
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    add_recipe_tokens(tokenizer, model, opts, where)
    template = (
        qvi.chat_template_of(tokenizer, path, kwargs.get("revision")) if opts.template_source == "processor" else ""
    )
    return model, qvi.QwenVLProcessor(tokenizer, AutoImageProcessor.from_pretrained(path, **kwargs), template)


def _tcot_generator(entry: Any, spec: GenerationSpec, device: str) -> embed_rl_tcot.TCoTGenerator:
    from transformers import GenerationConfig

    generator = spec.generator
    config = GenerationConfig.from_dict(dict(spec.decoding))
    from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoTokenizer

    kwargs = hub_kwargs(generator, spec.revision or "")
    dtype = torch_dtype(str(entry.options.get("generator_dtype", "bfloat16")))
    model = AutoModelForImageTextToText.from_pretrained(generator, dtype=dtype, **kwargs).to(device)  # type: ignore[arg-type]  # transformers' stubs hide `to`'s self behind a decorator
    tokenizer = AutoTokenizer.from_pretrained(generator, **kwargs)
    template = qvi.chat_template_of(tokenizer, generator, kwargs.get("revision"))
    processor = qvi.QwenVLProcessor(tokenizer, AutoImageProcessor.from_pretrained(generator, **kwargs), template)
    return embed_rl_tcot.TCoTGenerator(model, processor, config, spec.seed)


def load(
    entry: Any,
    path: str,
    *,
    device: str = "cpu",
    dtype: str = "float32",
    checkpoint: Checkpoint = _chat_checkpoint,
    generator: Generator = _tcot_generator,
) -> Any:
    """The entry's `protocol.ReasoningEncoder` (its generation spec must be resolved: `resolved`).

    Args:
        entry: the registry entry, its generation spec resolved.
        path: where the weights come from.
        device: the torch device.
        dtype: the weights' dtype.
        checkpoint: builds (model, processor) of the embedder's checkpoint.
        generator: builds the T-CoT generator (Embed-RL + T-CoT only), called on first use.
    """
    spec = spec_of(entry)
    opts = ChatOptions.parse(entry.options, f"model {entry.name}")
    if entry.options.get("reasoning") == UME_R1_GEN:
        lm, processor = checkpoint(entry, path, device, dtype, "lm")
        return ume_r1_gen.UmeR1Gen(
            lm, processor, opts, spec, prompt=str(_option(entry, "gen_prompt")), device=device, label=entry.name
        )
    backbone, processor = checkpoint(entry, path, device, dtype, "backbone")
    embedder = embed_rl_tcot.TCoTEmbedder(backbone, processor, opts, device=device)
    return embed_rl_tcot.EmbedRLTCoT(embedder, lambda: generator(entry, spec, device), spec, label=entry.name)
