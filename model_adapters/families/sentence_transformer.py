"""Text embedders through sentence-transformers: text fields only, images ignored (the paper's text-only
ablation, D.1.2). The instruction is prepended to the text (these models have no instruction field, paper B.3)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from model_adapters.planning.inputs import join_instruction
from model_adapters.planning.truncation import TextLimit
from model_adapters.protocol import ModelInput

ST_CONFIG = "sentence_bert_config.json"


class SentenceTransformerEncoder:
    def __init__(self, model: Any) -> None:
        self.model = model
        self.dim = int(model.get_embedding_dimension())

    def text_limit(self) -> TextLimit:
        """sentence-transformers truncates at `max_seq_length` tokens (special tokens included)."""
        return TextLimit(int(self.model.max_seq_length), self.model.tokenizer)

    def encode(self, batch: Sequence[ModelInput]) -> np.ndarray:
        texts = [join_instruction(item.instruction, item.text) for item in batch]
        vectors = self.model.encode(texts, batch_size=max(1, len(texts)), convert_to_numpy=True,
                                    normalize_embeddings=False, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)

    def encode_queries(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.encode(batch)

    def encode_candidates(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.encode(batch)


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

    from model_adapters.families._common import hub_kwargs

    tokenizer = AutoTokenizer.from_pretrained(path, **hub_kwargs(path, entry.revision))
    return TextLimit(_max_seq_length(path, entry.revision), tokenizer)


def load(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> SentenceTransformerEncoder:
    import os

    if os.path.isdir(path):  # a local copy (e.g. minilm's package directory) never needs the Hub
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    from model_adapters.families._common import hub_kwargs, torch_dtype

    kwargs = hub_kwargs(path, entry.revision)
    model = SentenceTransformer(path, device=device, model_kwargs={"dtype": torch_dtype(dtype)}, **kwargs)
    return SentenceTransformerEncoder(model)
