"""Text embedders through sentence-transformers: text fields only, images ignored (the paper's text-only
ablation, D.1.2; ARK's caption-then-embed track, §4.1, gives them captions instead).

Queries and documents are fed as the model's own sentence-transformers config says: queries through
`SentenceTransformer.encode_query` (its `prompts["query"]`, when the config declares one), documents through
`encode_document` with the first non-empty of `prompts["document"]` / `"passage"` / `"corpus"`; a model without
prompts gets the text bare on both sides. Where the benchmark instruction goes (paper B.3):
- a recipe with a `query_template` (an instruction field, e.g. Qwen3-Embedding's `Instruct: {instruction}\nQuery:`)
  formats queries that carry a benchmark instruction with it, in place of the model's default query prompt; queries
  without one keep the model's own query prompt (its outer wrapper, B.3);
- otherwise the instruction is prepended to the query text, `"{instruction} {text}"`, inside the model's prompt.
A config whose prompts name neither side (e.g. only "classification") is refused: which prompt a retrieval query
gets is not in the config.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from model_adapters.families.common import PerThread, pinned
from model_adapters.planning.inputs import CANDIDATE, QUERY, join_instruction
from model_adapters.planning.truncation import TextLimit
from model_adapters.protocol import ModelInput
from triad_dataset.contract.errors import TriadError

ST_CONFIG = "sentence_bert_config.json"


QUERY_PROMPTS: Final = ("query",)  # the names SentenceTransformer.encode_query / encode_document look up
DOCUMENT_PROMPTS: Final = ("document", "passage", "corpus")


@dataclass(frozen=True)
class SentenceTransformerOptions:
    """A sentence-transformers recipe's options (the names a table row may set)."""

    query_template: str | None = None  # the query text around the instruction (its instruction field)
    max_seq_length: int | None = None  # token limit (else the model's own)
    padding_side: str | None = None  # tokenizer padding side (else the model's own)
    pooling: str | None = None  # the pooling the recipe expects the model's modules to do
    use_prompts: bool = True  # whether the model's own query/document prompts are used


def sides_of(prompts: Mapping[str, str | None], default_prompt_name: str | None, where: str) -> None:
    """Refuse a config whose non-empty prompts name neither retrieval side and set no default prompt.

    >>> sides_of({"query": "q: ", "document": ""}, None, "m")
    >>> sides_of({}, None, "m")
    """
    used = {name for name, text in prompts.items() if text}
    if used and not used & {*QUERY_PROMPTS, *DOCUMENT_PROMPTS} and not default_prompt_name:
        raise TriadError(
            f"{where}: config_sentence_transformers.json declares prompts {sorted(used)} but none for "
            f"queries ({', '.join(QUERY_PROMPTS)}) or documents ({', '.join(DOCUMENT_PROMPTS)}), so how "
            "its authors feed a retrieval query is not in the config; choose a recipe with --recipe"
        )


def check_pooling(model: Any, expected: str | None, where: str) -> None:
    """A recipe that names its authors' pooling (e.g. "cls" for BGE-M3, "lasttoken" for Qwen3-Embedding) refuses a
    checkpoint whose sentence-transformers Pooling module pools otherwise."""
    if not expected:
        return
    found = [str(getattr(m, "pooling_mode", "")) for m in model if hasattr(m, "pooling_mode")]
    if found != [expected]:
        raise TriadError(
            f"{where}: its sentence-transformers modules pool with {found or 'no Pooling module'}, but "
            f"its authors' code pools with {expected!r}; this checkpoint is not the model the recipe was "
            "proven on"
        )


def document_prompt(prompts: dict[str, str]) -> str:
    """The config's document prompt: the first non-empty of DOCUMENT_PROMPTS (sentence-transformers 6 adds empty
    "query" / "document" entries to every model's prompts, so its `encode_document` would never reach a config's
    "passage" prompt).

    >>> document_prompt({"query": "query: ", "document": "", "passage": "passage: "})
    'passage: '
    """
    return next((prompts[n] for n in DOCUMENT_PROMPTS if prompts.get(n)), "")


@dataclass
class Prepared:
    """A batch tokenized by `SentenceTransformer.preprocess`: one part per prompt (rows, features, forward kwargs)."""

    size: int
    parts: list[tuple[list[int], dict[str, Any], dict[str, Any]]]


class SentenceTransformerEncoder:
    """Encodes as `SentenceTransformer.encode_query` / `encode_document` / `encode` do, in two steps (`prepare`:
    `SentenceTransformer.preprocess` with the prompt those methods resolve; `forward`: the model's modules, as
    `SentenceTransformer._inference` runs them), so the runner can tokenize the next batch while the model runs
    (protocol.StagedEncoder); tests/models/test_encode_pipeline.py checks the two steps equal `encode_query` /
    `encode_document` on models with and without prompts."""

    prepare_threads = 1  # preprocess uses the model's one tokenizer (serialised by a lock)

    def __init__(self, model: Any, *, query_template: str | None = None, use_prompts: bool = True) -> None:
        self.model = model
        self.dim = int(model.get_embedding_dimension())
        self.query_template = query_template
        # use_prompts=False: the authors' code reads no sentence-transformers prompts (e.g. FlagEmbedding's BGE-M3)
        self.query_prompt: dict[str, str] = {} if use_prompts else {"prompt": ""}
        self.document_prompt = document_prompt(dict(model.prompts)) if use_prompts else ""
        self._lock = threading.Lock()
        self._length_tokenizer = PerThread(model.tokenizer)

    def single_threaded(self) -> SentenceTransformerEncoder:
        """This encoder with torch on one intra-op thread (in a worker process, `vectors.workers`)."""
        import torch

        torch.set_num_threads(1)
        return self

    def text_limit(self) -> TextLimit:
        """sentence-transformers truncates at `max_seq_length` tokens (special tokens included)."""
        return TextLimit(int(self.model.max_seq_length), self.model.tokenizer)

    def query_texts(self, batch: Sequence[ModelInput]) -> tuple[list[str], list[bool]]:
        """The text of each query and whether it is complete (formatted by `query_template`, no model prompt) or
        still gets the model's own query prompt."""
        out, formatted = [], []
        for item in batch:
            if self.query_template and item.instruction:
                out.append(self.query_template.format(instruction=item.instruction, text=item.text))
                formatted.append(True)
            else:
                out.append(join_instruction(item.instruction, item.text))
                formatted.append(False)
        return out, formatted

    def _query_prompt(self) -> str | None:
        """The prompt `encode_query` resolves: ours when given, else the config's "query" prompt, else its default."""
        if "prompt" in self.query_prompt:
            return self.query_prompt["prompt"]
        # sentence-transformers' own (private) resolution, so the prompt is the one encode_query applies
        return self.model._resolve_prompt(None, "query" if "query" in self.model.prompts else None)

    def parts(
        self, batch: Sequence[ModelInput], role: str
    ) -> list[tuple[list[int], list[str], str | None, dict[str, Any]]]:
        """(rows, texts, prompt, forward kwargs) per way of feeding: `encode(prompt="")` for template-formatted
        queries, `encode_query` for the other queries, `encode_document` for candidates."""
        if role != QUERY:
            texts = [join_instruction(i.instruction, i.text) for i in batch]
            return [(list(range(len(batch))), texts, self.document_prompt, {"task": "document"})]
        texts, formatted = self.query_texts(batch)
        out = []
        for done in (True, False):
            rows = [i for i, f in enumerate(formatted) if f == done]
            if rows:  # formatted rows: prompt "" (the template replaces the model's query prompt)
                prompt, kwargs = ("", {}) if done else (self._query_prompt(), {"task": "query"})
                out.append((rows, [texts[i] for i in rows], prompt, kwargs))
        return out

    def input_lengths(self, batch: Sequence[ModelInput], role: str) -> list[int]:
        """Tokens per input as the model sees them (prompt and special tokens included, cut at max_seq_length)."""
        tokenizer = self._length_tokenizer.get()
        limit = int(self.model.max_seq_length)
        lengths = [0] * len(batch)
        for rows, texts, prompt, _ in self.parts(batch, role):
            ids = tokenizer([(prompt or "") + t for t in texts], truncation=True, max_length=limit)["input_ids"]
            for i, row in zip(rows, ids, strict=True):
                lengths[i] = len(row)
        return lengths

    def prepare(self, batch: Sequence[ModelInput], role: str) -> Prepared:
        parts = []
        for rows, texts, prompt, kwargs in self.parts(batch, role):
            with self._lock:
                features = self.model.preprocess(texts, prompt=prompt, **kwargs)
            parts.append((rows, pinned(features, str(self.model.device)), kwargs))
        return Prepared(len(batch), parts)

    def forward(self, prepared: Prepared, role: str) -> Any:
        import torch
        from sentence_transformers.util import batch_to_device, truncate_embeddings

        self.model.eval()
        out = None
        with torch.inference_mode():
            for rows, features, kwargs in prepared.parts:
                emb = self.model(batch_to_device(features, self.model.device), **kwargs)["sentence_embedding"]
                if self.model.truncate_dim is not None:
                    emb = truncate_embeddings(emb, self.model.truncate_dim)
                if len(prepared.parts) == 1:
                    return emb
                out = emb.new_zeros((prepared.size, emb.shape[1])) if out is None else out
                out[rows] = emb
        return out

    def _vectors(self, batch: Sequence[ModelInput], role: str) -> np.ndarray:
        if not batch:
            return np.zeros((0, self.dim), dtype=np.float32)
        emb = self.forward(self.prepare(batch, role), role)
        return emb.detach().float().cpu().numpy().reshape(len(batch), self.dim)

    def encode_queries(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self._vectors(batch, QUERY)

    def encode_candidates(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self._vectors(batch, CANDIDATE)


def _max_seq_length(path: str, revision: str) -> int:
    """`max_seq_length` from the model's sentence_bert_config.json (a local folder or the Hub cache)."""
    import json
    import os

    if os.path.isdir(path):
        config_path = os.path.join(path, ST_CONFIG)
    else:
        from huggingface_hub import hf_hub_download

        config_path = hf_hub_download(path, ST_CONFIG, revision=revision or None)
    with open(config_path, encoding="utf-8") as handle:
        return int(json.load(handle)["max_seq_length"])


def text_limit(entry: Any, path: str) -> TextLimit:
    """The model's text limit with its tokenizer only (no weights), for counting truncated inputs."""
    from transformers import AutoTokenizer

    from model_adapters.families.common import hub_kwargs

    tokenizer = AutoTokenizer.from_pretrained(path, **hub_kwargs(path, entry.revision))
    limit = entry.options.get("max_seq_length")
    return TextLimit(int(limit) if limit else _max_seq_length(path, entry.revision), tokenizer)


def load(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> SentenceTransformerEncoder:
    import os

    if os.path.isdir(path):  # a local copy (e.g. minilm's package directory) never needs the Hub
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    from model_adapters.families.common import hub_kwargs, torch_dtype

    opts = entry.options
    kwargs = hub_kwargs(path, entry.revision)
    if opts.get("padding_side"):  # e.g. Qwen3-Embedding: the authors' tokenizer pads on the left
        kwargs["processor_kwargs"] = {"padding_side": opts["padding_side"]}
    model = SentenceTransformer(path, device=device, model_kwargs={"dtype": torch_dtype(dtype)}, **kwargs)
    if opts.get("max_seq_length"):
        model.max_seq_length = int(opts["max_seq_length"])
    check_pooling(model, opts.get("pooling"), f"model {entry.name}")
    use_prompts = bool(opts.get("use_prompts", True))
    if use_prompts and not opts.get("query_template"):
        sides_of(dict(model.prompts), model.default_prompt_name, f"model {entry.name}")
    return SentenceTransformerEncoder(model, query_template=opts.get("query_template"), use_prompts=use_prompts)
