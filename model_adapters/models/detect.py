"""Recipe detection: which recipe (`model_adapters.models.recipes`) feeds a folder or Hub repository, read from its
configuration files only (no weights are loaded).

A checkpoint is accepted only when exactly one recipe of the asked kind matches it: by Hub id (or a Hugging Face
cache snapshot of that id), else by the recipe's signature (config.json model_type, architectures, whether it loads
remote code, the tokenizer's added tokens, files such as modules.json). No match, or more than one, is one line
naming what was found and the recipes that exist; `--recipe NAME` chooses one by hand (`--recipe generic`: the
unverified ChatML pipeline). A matched recipe that is `refused` is refused with its reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from model_adapters.models import recipes
from triad_dataset.contract.errors import TriadError

ST_MODULES: Final = "modules.json"
CONFIG: Final = "config.json"
ST_CONFIG: Final = "config_sentence_transformers.json"
SENTENCE_TRANSFORMERS: Final = "sentence-transformers"  # the generic recipe: a fallback behind any specific match
TOKENIZER_FILES: Final = ("tokenizer.json", "tokenizer_config.json", "added_tokens.json")

# A reader of one file of the model: the local path of that file, or None when the model has no such file.
FileReader = Callable[[str], "str | None"]


def _json(read: FileReader, name: str) -> Any:
    path = read(name)
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise TriadError(f"{path}: unreadable {name} ({exc})") from exc


@dataclass
class Checkpoint:
    """What a checkpoint's configuration files say (read lazily: tokens only when a signature asks for them)."""

    read: FileReader
    hub_id: str | None = None  # the Hub repository it is, or a cache snapshot of
    config: dict[str, Any] = field(default_factory=dict)
    _files: dict[str, bool] = field(default_factory=dict)
    _tokens: set[str] | None = None

    @classmethod
    def of(cls, read: FileReader, hub_id: str | None = None) -> Checkpoint:
        config = _json(read, CONFIG)
        return cls(read, hub_id, config if isinstance(config, dict) else {})

    def has_file(self, name: str) -> bool:
        if name not in self._files:
            self._files[name] = self.read(name) is not None
        return self._files[name]

    @property
    def model_type(self) -> str:
        return str(self.config.get("model_type") or "")

    @property
    def architectures(self) -> list[str]:
        return [str(a) for a in self.config.get("architectures") or []]

    @property
    def remote_code(self) -> bool:
        return bool(self.config.get("auto_map"))

    @property
    def remote_classes(self) -> set[str]:
        """The classes config.json auto_map names, each as "module.Class" and as "Class" (a "repo--" prefix
        dropped; a value may be a [slow, fast] pair)."""
        found: set[str] = set()
        for value in (self.config.get("auto_map") or {}).values():
            for ref in value if isinstance(value, list) else [value]:
                if isinstance(ref, str):
                    ref = ref.split("--")[-1]
                    found.update((ref, ref.rsplit(".", 1)[-1]))
        return found

    @property
    def tokenizer_class(self) -> str:
        """tokenizer_config.json tokenizer_class ("" when there is none)."""
        conf = _json(self.read, "tokenizer_config.json") if self.has_file("tokenizer_config.json") else None
        return str(conf.get("tokenizer_class") or "") if isinstance(conf, dict) else ""

    @property
    def query_prompt(self) -> str | None:
        """config_sentence_transformers.json prompts["query"], or None when it has none."""
        conf = _json(self.read, ST_CONFIG) if self.has_file(ST_CONFIG) else None
        prompts = conf.get("prompts") if isinstance(conf, dict) else None
        value = prompts.get("query") if isinstance(prompts, dict) else None
        return value if isinstance(value, str) else None

    @property
    def tokens(self) -> set[str]:
        """The tokenizer's added tokens (tokenizer.json added_tokens, tokenizer_config.json added_tokens_decoder,
        added_tokens.json): where special tokens such as <emb> or <disc_emb> live."""
        if self._tokens is None:
            found: set[str] = set()
            tok = _json(self.read, "tokenizer.json") or {}
            found.update(t.get("content", "") for t in tok.get("added_tokens") or [] if isinstance(t, dict))
            conf = _json(self.read, "tokenizer_config.json") or {}
            decoder = conf.get("added_tokens_decoder") or {}
            found.update(t.get("content", "") for t in decoder.values() if isinstance(t, dict))
            found.update((_json(self.read, "added_tokens.json") or {}).keys())
            self._tokens = found
        return self._tokens

    def describe(self) -> str:
        """What the files say, for messages."""
        if not self.config:
            parts = ["no config.json"]
        else:
            parts = [
                f"config.json model_type {self.config.get('model_type')!r}",
                f"architectures {', '.join(self.architectures) or 'none'}",
                "remote code (auto_map)" if self.remote_code else "no auto_map",
                f"tokenizer_class {self.tokenizer_class!r}" if self.tokenizer_class else "no tokenizer_class",
            ]
        parts.append(ST_MODULES if self.has_file(ST_MODULES) else f"no {ST_MODULES}")
        return "; ".join(parts)


def matches(match: recipes.Match, ckpt: Checkpoint) -> bool:
    """Whether the checkpoint shows every signature field the Match sets (a Match without a signature: never)."""
    if not match.has_signature:
        return False
    checks = (
        not match.model_types or ckpt.model_type in match.model_types,
        not match.architectures or any(a in match.architectures for a in ckpt.architectures),
        match.remote_code is None or ckpt.remote_code == match.remote_code,
        not match.remote_classes or bool(ckpt.remote_classes & set(match.remote_classes)),
        not match.text_only or not any(key in ckpt.config for key in recipes.MULTIMODAL_CONFIG_KEYS),
        all(ckpt.has_file(name) for name in match.files),
        match.query_prompt is None or ckpt.query_prompt == match.query_prompt,
        not match.tokenizer_classes or ckpt.tokenizer_class in match.tokenizer_classes,
    )
    return all(checks) and all(t in ckpt.tokens for t in match.tokens)


def candidates(ckpt: Checkpoint, kind: str) -> list[recipes.Recipe]:
    """The recipes of `kind` the checkpoint matches: those naming its Hub id, else those whose signature it shows."""
    of_kind = [r for r in recipes.RECIPES if r.kind == kind]
    if ckpt.hub_id is not None:
        by_id = [r for r in of_kind if r.match.names_hub_id(ckpt.hub_id)]
        if by_id:
            return by_id
    found = [r for r in of_kind if matches(r.match, ckpt)]
    specific = [r for r in found if r.name != SENTENCE_TRANSFORMERS]
    return specific or found


def _refuse_instruction_template(chosen: recipes.Recipe, ckpt: Checkpoint, where: str) -> None:
    """Refuse the generic sentence-transformers recipe for a checkpoint whose query prompt is an instruction
    template: that recipe would append the benchmark instruction after the checkpoint's default task."""
    prompt = ckpt.query_prompt
    if chosen.name == SENTENCE_TRANSFORMERS and prompt is not None and recipes.INSTRUCTION_TEMPLATE_MARKER in prompt:
        raise TriadError(
            f"{where}: its query prompt {prompt!r} is an instruction template that the "
            f"{SENTENCE_TRANSFORMERS} recipe cannot fill as its authors do (the benchmark instruction "
            f"would follow the default task); no verified recipe matches it; {_choices(chosen.kind)}"
        )


def _dtype(config: dict[str, Any], recipe: recipes.Recipe) -> str:
    value = config.get("dtype") or config.get("torch_dtype")
    if value in ("float32", "float16", "bfloat16"):
        return str(value)
    return recipe.dtype or "float32"


def _choices(kind: str) -> str:
    names = ", ".join(r.name for r in recipes.RECIPES if r.kind == kind and not r.refused and r.name != recipes.GENERIC)
    generic = f"; --recipe {recipes.GENERIC} runs the {recipes.UNVERIFIED_LABEL}" if kind == "embedder" else ""
    return f"recipes: {names}; choose one with --recipe NAME{generic}"


def detect(
    read: FileReader, *, where: str, kind: str = "embedder", recipe: str | None = None, hub_id: str | None = None
) -> tuple[recipes.Recipe, dict[str, Any], str]:
    """(recipe, loading options, dtype) for the model whose files `read` finds; `recipe` chooses one by name."""
    ckpt = Checkpoint.of(read, hub_id)
    if recipe is not None:
        chosen = recipes.get_recipe(recipe, kind=kind)
    else:
        found = candidates(ckpt, kind)
        if not found:
            raise TriadError(
                f"{where}: no verified {kind} recipe matches this checkpoint (found: {ckpt.describe()}); "
                f"{_choices(kind)}"
            )
        if len(found) > 1:
            raise TriadError(
                f"{where}: matches several {kind} recipes ({', '.join(r.name for r in found)}); choose "
                "one with --recipe NAME"
            )
        chosen = found[0]
        _refuse_instruction_template(chosen, ckpt, where)
    chosen.refuse_if_refused(where)
    return chosen, recipes.options_for(chosen, ckpt.config), _dtype(ckpt.config, chosen)
