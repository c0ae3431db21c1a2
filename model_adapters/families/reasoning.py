"""The reasoning-embedder family (TRIAD §5.4, B.2.1): generate, then embed — UME-R1 in Gen mode
(`ume_r1_gen`) and Embed-RL with T-CoT from an external reasoner (`embed_rl_tcot`). TWN is a refused recipe
(models/recipes.py: no code or weights are public).

A recipe's `options["reasoning"]` names which one. Before anything loads, `resolved` completes the entry with its
generation spec (`options["generation"]`: `protocol.GenerationSpec` fields), which the run's generation stage keys
its cache by: the generator and its revision, every prompt, every decoding setting — the generator's own
generation_config.json (read from its folder or the Hub, no weights) updated with the recipe's settings — and the
seed. The tiny test entries (`tiny:` sources) build the same objects from small random models in memory, with a
small `max_new_tokens`; their generation configs stand in for a checkpoint's file (`TINY_GENERATION`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any, Final

from model_adapters.families import embed_rl_tcot, tiny, ume_r1_gen
from model_adapters.families import qwen_vl_inputs as qvi
from model_adapters.families._common import hub_kwargs, torch_dtype
from model_adapters.families.qwen_chat import (
    IMAGE_PAD,
    VIDEO_PAD,
    VISION_END,
    VISION_START,
    ChatOptions,
    add_recipe_tokens,
)
from model_adapters.protocol import GenerationSpec
from triad_dataset.contract.errors import TriadError

UME_R1_GEN: Final = "ume-r1-gen"
EMBED_RL_TCOT: Final = "embed-rl-tcot"
KINDS: Final = (UME_R1_GEN, EMBED_RL_TCOT)
GENERATION_CONFIG: Final = "generation_config.json"
SPEC_VERSION: Final = "1"  # bump when `generate` changes in a way the spec's fields do not show
TINY: Final = "tiny:"
NOT_DECODING: Final = ("transformers_version", "_from_model_config")

# (reader of a model's files, revision) of a Hub id or folder: resolve.py passes one (the models layer reads the Hub).
OpenRepo = Callable[[str, "str | None"], "tuple[Callable[[str], str | None], str | None]"]


# --- tiny stand-ins (tests only) ------------------------------------------------------------------------------
def _tiny_tokenizer(tokens: tuple[str, ...]) -> Any:
    tok = tiny.qwen_tokenizer()
    if tokens:
        tok.add_tokens(list(tokens))
    return tok


def tiny_generation_config(kind: str) -> dict[str, Any]:
    """The generation_config.json of a tiny checkpoint: sampling over the whole vocabulary, ending at <|im_end|> or
    <|endoftext|>, never a vision token (a random model would emit them; a real one does not). The tiny UME-R1's
    adds a +3 logit bias on <gen_emb> (`sequence_bias`) so that some generations contain the marker and some do not
    (random weights alone almost never emit it) — the settings a real checkpoint's file would hold are its own."""
    tok = _tiny_tokenizer(("<disc_emb>", "<gen_emb>") if kind == UME_R1_GEN else ())
    ids = tok.convert_tokens_to_ids
    config: dict[str, Any] = {
        "do_sample": True,
        "temperature": 1.0,
        "top_k": 0,
        "top_p": 1.0,
        "eos_token_id": [ids("<|im_end|>"), ids("<|endoftext|>")],
        "pad_token_id": ids("<|endoftext|>"),
        "suppress_tokens": sorted(ids(t) for t in (VISION_START, VISION_END, IMAGE_PAD, VIDEO_PAD, "<|vision_pad|>")),
    }
    if kind == UME_R1_GEN:
        config["sequence_bias"] = [[[ids(ume_r1_gen.GEN_TOKEN)], 3.0]]
    return config


def save_tiny_ume_r1_gen(folder: str, seed: int = 0) -> str:
    """The tiny UME-R1 checkpoint (tiny.save_tiny_chat_checkpoint("ume-r1")) with `tiny_generation_config` as its
    generation_config.json: the model the UME-R1 Gen fixture was made with."""
    import os

    tiny.save_tiny_chat_checkpoint("ume-r1", folder, seed)
    with open(os.path.join(folder, GENERATION_CONFIG), "w", encoding="utf-8") as handle:
        json.dump(tiny_generation_config(UME_R1_GEN), handle, indent=2)
    return folder


def _tiny_reasoner_images() -> Any:
    """The tiny reasoner's image processor: Qwen3-VL's, bounded to 4..64 vision tokens so tests stay fast."""
    from transformers.models.qwen2_vl import Qwen2VLImageProcessorPil

    return Qwen2VLImageProcessorPil(
        patch_size=16,
        merge_size=2,
        temporal_patch_size=2,
        image_mean=[0.5] * 3,
        image_std=[0.5] * 3,
        size={"shortest_edge": 4 * 32 * 32, "longest_edge": 64 * 32 * 32},
    )


def _tiny_seed(revision: str | None) -> int:
    """A tiny model's seed from its revision ("seed3" -> 3), as the other tiny entries."""
    text = str(revision or "")
    return int(text[4:]) if text.startswith("seed") and text[4:].isdigit() else 0


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
    if source.startswith(TINY):
        config, revision = tiny_generation_config(UME_R1_GEN), entry.revision
    else:
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
    if generator.startswith(TINY):
        config = tiny_generation_config(EMBED_RL_TCOT)
    else:
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
    where the weights come from (Hub id, folder or tiny:)."""
    kind = entry.options.get("reasoning")
    if kind not in KINDS:
        raise TriadError(f"model {entry.name}: option reasoning={kind!r} is not one of {', '.join(KINDS)}")
    spec = _ume_r1_spec(entry, source, open_repo) if kind == UME_R1_GEN else _tcot_spec(entry, open_repo)
    return dataclasses.replace(entry, options={**entry.options, "generation": spec})


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
    "backbone"; tiny sources build the recipe's tiny checkpoint."""
    where = f"model {entry.name}"
    opts = ChatOptions.parse(entry.options, where)
    if path.startswith(TINY):
        kind = "ume-r1" if entry.options.get("reasoning") == UME_R1_GEN else "embed-rl"
        model, tok, image_processor = tiny.TINY_CHAT_CHECKPOINTS[kind](_tiny_seed(entry.revision))
        model = model.to(device=device, dtype=torch_dtype(dtype))
        return (model if model_class == "lm" else model.model), qvi.QwenVLProcessor(
            tok, image_processor, tok.chat_template
        )
    from transformers import AutoConfig, AutoImageProcessor, AutoModel, AutoModelForImageTextToText, AutoTokenizer

    kwargs = hub_kwargs(path, entry.revision)
    config = AutoConfig.from_pretrained(path, **kwargs)
    if config.model_type != opts.backbone:
        raise TriadError(
            f"{where}: recipe {entry.recipe} is for {opts.backbone} checkpoints; {path} is {config.model_type}"
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
    if generator.startswith(TINY):
        model, tok, _ = tiny.build_tiny_qwen3_vl(_tiny_seed(spec.revision))
        processor = qvi.QwenVLProcessor(tok, _tiny_reasoner_images(), tiny.qwen3_vl_chat_template())
        return embed_rl_tcot.TCoTGenerator(model.to(device), processor, config, spec.seed)
    from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoTokenizer

    kwargs = hub_kwargs(generator, spec.revision or "")
    dtype = torch_dtype(str(entry.options.get("generator_dtype", "bfloat16")))
    model = AutoModelForImageTextToText.from_pretrained(generator, dtype=dtype, **kwargs).to(device)
    tokenizer = AutoTokenizer.from_pretrained(generator, **kwargs)
    template = qvi.chat_template_of(tokenizer, generator, kwargs.get("revision"))
    processor = qvi.QwenVLProcessor(tokenizer, AutoImageProcessor.from_pretrained(generator, **kwargs), template)
    return embed_rl_tcot.TCoTGenerator(model, processor, config, spec.seed)


def load(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> Any:
    """The entry's `protocol.ReasoningEncoder` (its generation spec must be resolved: `resolved`)."""
    spec = spec_of(entry)
    opts = ChatOptions.parse(entry.options, f"model {entry.name}")
    if entry.options.get("reasoning") == UME_R1_GEN:
        lm, processor = _chat_checkpoint(entry, path, device, dtype, "lm")
        return ume_r1_gen.UmeR1Gen(
            lm, processor, opts, spec, prompt=str(_option(entry, "gen_prompt")), device=device, label=entry.name
        )
    backbone, processor = _chat_checkpoint(entry, path, device, dtype, "backbone")
    embedder = embed_rl_tcot.TCoTEmbedder(backbone, processor, opts, device=device)
    return embed_rl_tcot.EmbedRLTCoT(embedder, lambda: _tcot_generator(entry, spec, device), spec, label=entry.name)
