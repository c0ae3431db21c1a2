"""An mteb model behind our `Encoder` protocol, so `triad run --model mteb:NAME` runs it through our runner.

Each batch of `ModelInput`s goes to the mteb encoder's `encode` as one dataloader batch: "text" (the benchmark
instruction prepended, paper B.3, as for a model without an instruction field) and, for a model whose mteb
`modalities` include images, "image" (PIL images). mteb's wrappers add their own prompts: nothing here proves
this feeds the model as its authors do, so runs say "unverified input pipeline".
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import numpy as np

from model_adapters.planning.inputs import join_instruction
from model_adapters.protocol import ModelInput
from triad_dataset.contract.errors import TriadError

MTEB_PREFIX = "mteb:"


def is_mteb_object(obj: Any) -> bool:
    """Whether `obj` is an mteb `ModelMeta` or encoder (checked only where mteb is already imported)."""
    import sys

    if "mteb" not in sys.modules:
        return False
    from mteb.models import EncoderProtocol, ModelMeta

    return isinstance(obj, (ModelMeta, EncoderProtocol))


def _task_metadata() -> Any:
    from mteb import TaskMetadata

    return TaskMetadata(
        name="TRIAD-run",
        description="inputs of a triad run",
        dataset={"path": "triad", "revision": "run"},
        type="Retrieval",
        category="it2it",
        modalities=["text", "image"],
        eval_splits=["test"],
        eval_langs=["eng-Latn"],
        main_score="triad_map",
    )


class MtebEncoder:
    """Our `Encoder` running an mteb encoder object; `name`, `revision` and `wrapper` identify what produced vectors."""

    max_batch = 32

    def __init__(self, model: Any) -> None:
        self.model = model
        meta = getattr(model, "mteb_model_meta", None)
        self.name = str(getattr(meta, "name", None) or type(model).__name__)
        self.revision = getattr(meta, "revision", None)
        modalities = list(getattr(meta, "modalities", None) or ["text"])
        self.sees_images = "image" in modalities
        self.wrapper = f"{type(model).__module__}.{type(model).__qualname__}"
        self.metadata = _task_metadata()
        dim = getattr(meta, "embed_dim", None)
        self.dim = int(max(dim) if isinstance(dim, (list, tuple)) else dim or self._probe_dim())

    def _probe_dim(self) -> int:
        return int(self._encode([ModelInput(text="a")], "query").shape[1])

    def _batch(self, batch: Sequence[ModelInput]) -> dict[str, Any]:
        out: dict[str, Any] = {"text": [join_instruction(i.instruction, i.text) for i in batch]}
        if self.sees_images and all(i.image is not None for i in batch):
            from PIL import Image

            out["image"] = [Image.open(io.BytesIO(i.image)).convert("RGB") for i in batch if i.image is not None]
        return out

    def _encode(self, batch: Sequence[ModelInput], role: str) -> np.ndarray:
        from mteb.types import PromptType

        prompt = PromptType.query if role == "query" else PromptType.document
        vectors = self.model.encode(
            [self._batch(batch)],
            task_metadata=self.metadata,
            hf_split="test",
            hf_subset="default",
            prompt_type=prompt,
            show_progress_bar=False,
        )
        if hasattr(vectors, "detach"):
            vectors = vectors.detach().float().cpu().numpy()
        return np.asarray(vectors, dtype=np.float32)

    def encode_queries(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self._encode(batch, "query")

    def encode_candidates(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self._encode(batch, "candidate")


def mteb_meta(name: str) -> Any:
    """mteb's `ModelMeta` of `name`; an unknown name is one line."""
    import mteb

    try:
        return mteb.get_model_meta(name)
    except (KeyError, ValueError) as exc:
        raise TriadError(f"mteb:{name}: not a model mteb knows ({str(exc).splitlines()[0][:200]})") from exc


def load_mteb(name: str, model_path: str | None = None, device: str | None = None) -> MtebEncoder:
    """Load mteb's model `name` (its weights from `model_path` when given) as our `Encoder`."""
    meta = mteb_meta(name)
    if model_path:
        meta = meta.model_copy(update={"name": model_path})
    try:
        model = meta.load_model(device=device)
    except Exception as exc:  # noqa: BLE001 (mteb loaders raise anything; the user needs the first line)
        raise TriadError(
            f"mteb:{name}: mteb cannot load it here ({type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''})"
        ) from exc
    encoder = MtebEncoder(model)
    encoder.name, encoder.revision = name, meta.revision
    return encoder
