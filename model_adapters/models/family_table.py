"""Lists the model families: for each, the options a row may set and the functions that load its models.

A recipe in `model_adapters.models.recipes` names its family. The family's `Family` row carries the callables that
build an encoder, a reranker and a text limit. The family modules import torch and transformers only inside those
functions, so naming them here loads nothing. Installed packages add families through the `triad.models` entry
points (`model_adapters.models.plugins`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import Any, Final

from model_adapters.families import (
    api,
    bidirectional_llama,
    dual_tower,
    qwen_chat,
    reasoning,
    reranker,
    sentence_transformer,
    vlm,
)
from model_adapters.models import plugins
from triad_dataset.contract.errors import TriadError

DUAL_TOWER: Final = "dual_tower"
SENTENCE_TRANSFORMER: Final = "sentence_transformer"
VLM: Final = "vlm"
RERANKER: Final = "reranker"
QWEN_CHAT: Final = "qwen_chat"
API: Final = "api"  # API-only models, families/api.py: requests to a provider, responses cached
BIDIRECTIONAL_LLAMA: Final = "bidirectional_llama"  # a Llama run with is_causal=False, instruction-excluded mean
REASONING: Final = "reasoning"  # generate, then embed: families/reasoning.py, TRIAD §5.4 and B.2.1

# (entry, path, *, device, dtype, **runtime) -> an Encoder or a Reranker
Loader = Callable[..., Any]
# (entry, path) -> a truncation.TextLimit, a tokenizer without weights, or None
TextLimiter = Callable[[Any, str], Any]


@dataclass(frozen=True)
class Family:
    """One family: its name, its options dataclass and the callables that load its models.

    Args:
        name: what recipes, entries and results.json call the family.
        options: the frozen dataclass whose fields are the option names a row of this family may set. None
            allows any name.
        load: builds the encoder of an entry, for `registry.load_encoder`.
        load_reranker: builds the pairwise scorer of a reranker entry. None when the family has no rerankers.
        text_limit: the entry's text limit before any weights load. None when the family does not truncate text.
        extra_options: option names allowed beside the dataclass's fields.
        reads_weights: False for a family whose models are built in memory from a config. A `--model-path`
            folder is then not checked against it.
        modules: the third-party modules its loader imports (`model_adapters.models.dependencies`).
    """

    name: str
    options: type | None
    load: Loader
    load_reranker: Loader | None = None
    text_limit: TextLimiter | None = None
    extra_options: tuple[str, ...] = ()
    reads_weights: bool = True
    modules: tuple[str, ...] = ()

    def option_names(self) -> set[str] | None:
        """The option names a row of this family may set (None: any)."""
        if self.options is None:
            return None
        return {f.name for f in fields(self.options)} | set(self.extra_options)


TORCH: Final = ("numpy", "torch", "transformers", "huggingface_hub")  # what every local family imports
TORCH_IMAGES: Final = (*TORCH, "PIL")

FAMILY_TABLE: Final[dict[str, Family]] = {
    f.name: f
    for f in (
        Family(
            DUAL_TOWER,
            dual_tower.DualTowerOptions,
            load=dual_tower.load,
            text_limit=dual_tower.text_limit,
            modules=TORCH_IMAGES,
        ),
        Family(
            SENTENCE_TRANSFORMER,
            sentence_transformer.SentenceTransformerOptions,
            load=sentence_transformer.load,
            text_limit=sentence_transformer.text_limit,
            modules=(*TORCH_IMAGES, "sentence_transformers"),
        ),
        Family(VLM, vlm.VlmOptions, load=vlm.load, modules=TORCH_IMAGES),
        Family(QWEN_CHAT, qwen_chat.ChatOptions, load=qwen_chat.load, modules=TORCH_IMAGES),
        Family(
            BIDIRECTIONAL_LLAMA,
            bidirectional_llama.BidirectionalLlamaOptions,
            load=bidirectional_llama.load,
            text_limit=bidirectional_llama.text_limit,
            modules=TORCH_IMAGES,
        ),
        Family(
            RERANKER,
            reranker.RerankerOptions,
            load=reranker.load,
            load_reranker=reranker.load_reranker,
            modules=TORCH_IMAGES,
        ),
        Family(API, api.ApiOptions, load=api.load, modules=("numpy",)),
        # `generation`: the spec that `reasoning.resolved` adds to an entry before it loads
        Family(
            REASONING,
            qwen_chat.ChatOptions,
            load=reasoning.load,
            extra_options=(*reasoning.OPTIONS, "generation"),
            modules=TORCH_IMAGES,
        ),
    )
}
FAMILIES: Final = tuple(FAMILY_TABLE)


def plugin_families() -> dict[str, Family]:
    """Map the families that the `triad.models` entry points add by name. A name already taken is refused."""
    out: dict[str, Family] = {}
    for row in plugins.rows():
        if isinstance(row.value, Family):
            if row.value.name in FAMILY_TABLE or row.value.name in out:
                raise TriadError(f"{row.where}: family name {row.value.name!r} is already taken; choose another name")
            out[row.value.name] = row.value
    return out


def family_of(name: str, where: str) -> Family:
    """Return the family named `name`, built in or installed.

    An unknown name is a TypeError naming `where` and the valid families.

    >>> family_of("vlm", "row").load is vlm.load
    True
    >>> family_of("vml", "row")
    Traceback (most recent call last):
    ...
    TypeError: row: unknown family 'vml'; valid: dual_tower, sentence_transformer, vlm, qwen_chat, \
bidirectional_llama, reranker, api, reasoning...
    """
    family = FAMILY_TABLE.get(name)
    if family is not None:
        return family
    installed = plugin_families()
    if name not in installed:
        raise TypeError(f"{where}: unknown family {name!r}; valid: {', '.join([*FAMILIES, *installed])}")
    return installed[name]


def check_options(family: str, names: Iterable[str], where: str) -> None:
    """Refuse option names that the family's options dataclass does not define: a typo fails at import.

    A row built while the entry points are read may name a family that they deliver: it is checked again once
    they are all read (`registry.plugin_entries`).

    >>> check_options(DUAL_TOWER, ["max_length"], "row")
    >>> check_options(DUAL_TOWER, ["max_lenght"], "row")
    Traceback (most recent call last):
    ...
    TypeError: row: unknown dual_tower option(s) max_lenght
    """
    if family not in FAMILY_TABLE and plugins.reading():
        return
    known = family_of(family, where).option_names()
    unknown = sorted(set(names) - known) if known is not None else []
    if unknown:
        raise TypeError(f"{where}: unknown {family} option(s) {', '.join(unknown)}")
