"""The ONNX text backend without torch: a cached graph fed by the `tokenizers` library and the recipe's prompt rules.

When `onnx_text` exports a sentence-transformers model, it also writes what feeding the graph needs next to it:
the model's fast tokenizer (`tokenizer.json`) and `feed.json` (the prompts `SentenceTransformerEncoder` resolves, the
query template, the token limit, the padding and truncation sides). A later run finds the three files and loads
`LeanEncoder`, which imports neither torch nor sentence-transformers nor transformers and holds no torch weights.
The prompt rules are `SentenceTransformerEncoder`'s own (`parts`, `query_texts`), on the stored prompt strings; the
token ids equal `SentenceTransformer.preprocess`'s for every ONNX text recipe (tests/models/test_onnx_feed.py).

Only a plain text tokenizer call is stored: a model whose sentence-transformers Transformer does more (lowercasing,
per-task lengths, query expansion, prompt-excluding pooling, a chat template) gets no feed files and keeps the
torch-fed path (`reason_not_lean`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final

import numpy as np

from model_adapters.atomic import replacing
from model_adapters.families.sentence_transformer import Prepared, SentenceTransformerEncoder
from model_adapters.planning.inputs import CANDIDATE, QUERY
from model_adapters.planning.truncation import TextLimit
from model_adapters.protocol import ModelInput

GRAPH: Final = "model.onnx"  # onnx_text.FILE, written by its export
TOKENIZER: Final = "tokenizer.json"
FEED: Final = "feed.json"
FEED_VERSION: Final = 1  # bump when what feed.json means changes: older files are then ignored and rewritten
OUTPUT: Final = "sentence_embedding"


@dataclass(frozen=True)
class FeedSpec:
    """What feeding the graph needs besides the tokenizer: prompts, limits, sides, padding, graph inputs."""

    dim: int
    truncate_dim: int | None
    max_length: int
    query_template: str | None
    query_prompt: str
    document_prompt: str
    padding_side: str
    truncation_side: str
    pad_token: str
    pad_id: int
    pad_type_id: int
    inputs: list[str]
    version: int = FEED_VERSION


def reason_not_lean(base: SentenceTransformerEncoder) -> str | None:
    """Why `base` cannot be fed without torch (a tokenizer call that is more than text in, ids out), or None."""
    model = base.model
    first = model[0]
    tokenizer: Any = getattr(model, "tokenizer", None)
    checks = {
        "its tokenizer is not a fast tokenizer": getattr(tokenizer, "backend_tokenizer", None) is None,
        "it lowercases its inputs": bool(getattr(first, "do_lower_case", False)),
        "it sets per-task lengths": any(getattr(first, n, None) for n in ("query_length", "document_length")),
        "it expands queries": getattr(first, "query_expansion", None) is not None,
        "it sets processing kwargs": bool(getattr(first, "processing_kwargs", None)),
        "it reads chat messages": "message" in (getattr(first, "modality_config", None) or {}),
        "its pooling leaves out prompt tokens": any(getattr(m, "include_prompt", True) is False for m in model),
        "it has no token limit": not isinstance(getattr(tokenizer, "model_max_length", None), int)
        or tokenizer.model_max_length > 1 << 20,
    }
    return next((why for why, failed in checks.items() if failed), None)


def spec_of(base: SentenceTransformerEncoder, inputs: Sequence[str]) -> FeedSpec:
    """The feed of a loaded torch encoder whose graph takes `inputs`."""
    tokenizer = base.model.tokenizer
    return FeedSpec(
        dim=base.dim,
        truncate_dim=base.model.truncate_dim,
        max_length=int(tokenizer.model_max_length),
        query_template=base.query_template,
        query_prompt=base._query_prompt() or "",
        document_prompt=base.document_prompt or "",
        padding_side=str(tokenizer.padding_side),
        truncation_side=str(tokenizer.truncation_side),
        pad_token=str(tokenizer.pad_token),
        pad_id=int(tokenizer.pad_token_id),
        pad_type_id=int(getattr(tokenizer, "pad_token_type_id", 0) or 0),
        inputs=list(inputs),
    )


def save(base: SentenceTransformerEncoder, folder: str, inputs: Sequence[str]) -> bool:
    """Write the feed files of `base` into `folder` (the tokenizer first: feed.json says both are in place).

    Returns whether they are there, False for a model `reason_not_lean` keeps on the torch-fed path."""
    if reason_not_lean(base) is not None:
        return False
    with replacing(os.path.join(folder, TOKENIZER)) as tmp:
        tmp.write_text(base.model.tokenizer.backend_tokenizer.to_str(), encoding="utf-8")
    with replacing(os.path.join(folder, FEED)) as tmp:
        tmp.write_text(json.dumps(asdict(spec_of(base, inputs)), indent=1), encoding="utf-8")
    return True


def read_spec(folder: str) -> FeedSpec | None:
    """The feed stored in `folder`, or None when its files are absent or of another FEED_VERSION."""
    if not all(os.path.isfile(os.path.join(folder, f)) for f in (TOKENIZER, FEED)):
        return None
    with open(os.path.join(folder, FEED), encoding="utf-8") as handle:
        raw = json.load(handle)
    return FeedSpec(**raw) if raw.get("version") == FEED_VERSION else None


def tokenizers_of(folder: str, spec: FeedSpec) -> tuple[Any, Any]:
    """Two `tokenizers.Tokenizer`s of the stored tokenizer: one truncating (token counts), one also padding."""
    from tokenizers import Tokenizer

    path = os.path.join(folder, TOKENIZER)
    counting, batching = Tokenizer.from_file(path), Tokenizer.from_file(path)
    for tok in (counting, batching):
        tok.no_padding()
        tok.enable_truncation(spec.max_length, strategy="longest_first", direction=spec.truncation_side)
    batching.enable_padding(
        direction=spec.padding_side, pad_id=spec.pad_id, pad_type_id=spec.pad_type_id, pad_token=spec.pad_token
    )
    return counting, batching


class CountingTokenizer:
    """The stored tokenizer as `TextLimit.token_counts` calls a transformers tokenizer (untruncated ids)."""

    def __init__(self, folder: str) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(os.path.join(folder, TOKENIZER))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()

    def __call__(self, texts: Sequence[str], *, add_special_tokens: bool = True, **_: Any) -> dict[str, list[Any]]:
        encodings = self.tokenizer.encode_batch(list(texts), add_special_tokens=add_special_tokens)
        return {"input_ids": [e.ids for e in encodings]}


def text_limit(folder: str) -> TextLimit | None:
    """The model's text limit counted with the stored tokenizer, or None when no feed is stored in `folder`."""
    spec = read_spec(folder)
    return None if spec is None else TextLimit(spec.max_length, CountingTokenizer(folder))


def default_threads() -> int:
    """Intra-op threads: as many as torch uses where torch is loaded (both backends share a budget), else the
    usable cores (without importing torch)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        return int(torch.get_num_threads())
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def session(path: str, *, spin: bool = False, threads: int | None = None) -> Any:
    """An ONNX Runtime CPU session on `path` with `threads` intra-op threads (default `default_threads`); its idle
    threads sleep unless `spin` (ONNX Runtime's own default, which benchmarks/bench_encode.py compares)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or default_threads()
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


FIELDS: Final = {"input_ids": "ids", "attention_mask": "attention_mask", "token_type_ids": "type_ids"}


def run_parts(session: Any, inputs: Sequence[str], prepared: Prepared, dim: int, truncate_dim: int | None) -> Any:
    """One float32 row per input: each part (one prompt) through the session, rows put back in batch order."""
    out = np.zeros((prepared.size, dim), dtype=np.float32)
    for rows, features, _ in prepared.parts:
        emb = session.run([OUTPUT], {n: np.asarray(features[n]) for n in inputs})[0]
        out[rows] = emb[:, :truncate_dim] if truncate_dim is not None else emb
    return out


def prompt_rules(spec: FeedSpec) -> SentenceTransformerEncoder:
    """`SentenceTransformerEncoder`'s own prompt rules (`parts`) on the stored prompts, with no model behind them."""
    rules = SentenceTransformerEncoder.__new__(SentenceTransformerEncoder)  # `parts` reads only these three
    rules.query_template = spec.query_template
    rules.query_prompt = {"prompt": spec.query_prompt}  # the resolved prompt: `_query_prompt` returns it as is
    rules.document_prompt = spec.document_prompt
    return rules


class LeanEncoder:
    """A cached ONNX text graph, fed by the stored tokenizer and prompt rules; no torch anywhere."""

    prepare_threads = 1
    exported = False  # it is only ever loaded from the cache

    def __init__(self, folder: str, spec: FeedSpec, session: Any) -> None:
        self.folder, self.spec, self.session = folder, spec, session
        self.dim = spec.dim
        self.rules = prompt_rules(spec)
        self.counting, self.batching = tokenizers_of(folder, spec)

    def single_threaded(self) -> LeanEncoder:
        """This encoder on a one-thread session of its graph (in a worker process, `vectors.workers`)."""
        return LeanEncoder(self.folder, self.spec, session(os.path.join(self.folder, GRAPH), threads=1))

    def parts(self, batch: Sequence[ModelInput], role: str) -> list[tuple[list[int], list[str], str | None, Any]]:
        return self.rules.parts(batch, role)

    def input_lengths(self, batch: Sequence[ModelInput], role: str) -> list[int]:
        """Tokens per input as the model sees them (prompt and special tokens included, cut at the limit)."""
        lengths = [0] * len(batch)
        for rows, texts, prompt, _ in self.parts(batch, role):
            for i, enc in zip(rows, self.counting.encode_batch([(prompt or "") + t for t in texts]), strict=True):
                lengths[i] = len(enc.ids)
        return lengths

    def features(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The graph's int64 inputs for `texts`, as the model's tokenizer call pads and truncates them."""
        encodings = self.batching.encode_batch(list(texts))
        return {n: np.array([getattr(e, FIELDS[n]) for e in encodings], dtype=np.int64) for n in self.spec.inputs}

    def prepare(self, batch: Sequence[ModelInput], role: str) -> Prepared:
        parts = [
            (rows, self.features([(prompt or "") + t for t in texts]), kwargs)
            for rows, texts, prompt, kwargs in self.parts(batch, role)
        ]
        return Prepared(len(batch), parts)

    def forward(self, prepared: Prepared, role: str) -> np.ndarray:
        return run_parts(self.session, self.spec.inputs, prepared, self.dim, self.spec.truncate_dim)

    def encode_queries(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.forward(self.prepare(batch, QUERY), QUERY)

    def encode_candidates(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.forward(self.prepare(batch, CANDIDATE), CANDIDATE)
