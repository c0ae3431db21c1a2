"""The ONNX Runtime backend (CPU) for text embedders fed through sentence-transformers (`--backend onnx`).

The whole sentence-transformers pipeline after tokenization (Transformer, Pooling, Dense, Normalize) is traced
once by `torch.onnx.export` into one graph that maps the tokenizer's tensors to the sentence embedding; ONNX Runtime
runs it on the CPU. Everything before the model (prompts, instruction route, tokenization, truncation) is the torch
encoder's own `prepare`, so both backends see the same token ids. The graph is exported once per model identity into
the cache folder the caller names, checked against the torch forward on probe texts of several lengths and batch
sizes right after the export (cosine >= MIN_COSINE, else it is discarded and the run stops), and reused by every
later run: a re-run exports nothing.

A checkpoint's own `onnx/` files are not used: they hold only the transformer (no pooling), were made by other code
at other settings, and are not covered by the equality check. The dual towers' graphs are `onnx_towers`'. Recipes
outside RECIPES (decoder-LLM embedders, VLMs, rerankers) are refused with `--backend onnx` in one line (`refusal`).
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from model_adapters.atomic import replacing
from model_adapters.families import onnx_feed
from model_adapters.families.sentence_transformer import Prepared, SentenceTransformerEncoder
from model_adapters.planning.inputs import CANDIDATE, QUERY
from model_adapters.planning.truncation import TextLimit
from model_adapters.protocol import ModelInput
from triad_dataset.contract.errors import TriadError

ONNX: Final = "onnx"
TEXT_RECIPES: Final = ("sentence-transformers", "bge-m3")  # this module
TOWER_RECIPES: Final = ("clip", "siglip", "siglip2", "metaclip-2", "bge-vl-clip")  # `onnx_towers` (its CLASSES)
RECIPES: Final = (*TEXT_RECIPES, *TOWER_RECIPES)  # each proven equal to torch (tests/models/test_onnx_backend.py)
LIBRARIES: Final = ("onnxruntime",)  # added to an ONNX run's recorded versions (torch, which exports, already is)
MODULES: Final = ("Transformer", "Pooling", "Dense", "Normalize")  # the sentence-transformers modules traced
FILE: Final = onnx_feed.GRAPH
OUTPUT: Final = onnx_feed.OUTPUT
MIN_COSINE: Final = 0.99999
OPSET: Final = 17
# Probe texts of the post-export check: one word to past minilm's 256-token limit, so that padding, truncation and
# batch sizes other than the traced one all run through the graph.
PROBES: Final = (
    "a",
    "red leather jacket with a zip",
    "the same intent as a multi-turn dialogue about a small vintage sedan " * 3,
    "long " * 300,
)


def refusal(
    recipe: str | None,
    dtype: str | None,
    label: str,
    *,
    recipes: Sequence[str] = RECIPES,
    flag: str = "--backend",
    role: str = "model",
    covered_by: str = "the ONNX backend",
) -> str | None:
    """The one-line reason `{flag} onnx` cannot run this model (a recipe outside `recipes`, weights other than
    float32), or None when it can."""
    if recipe not in recipes:
        fed_by = f"the {recipe} recipe" if recipe else "its own code"
        return (
            f"{flag} onnx: {role} {label} is fed by {fed_by}, which has no ONNX path ({covered_by} covers the "
            f"recipes {', '.join(recipes)}); run it with {flag} torch"
        )
    if (dtype or "float32") != "float32":
        return (
            f"{flag} onnx: runs float32 weights, and {role} {label} is set to {dtype}; give --dtype float32, or "
            f"{flag} torch for {dtype}"
        )
    return None


def check_device(device: str, label: str, flag: str = "--backend") -> None:
    """Refuse a device other than the CPU (the backend runs ONNX Runtime's CPUExecutionProvider)."""
    if not str(device).startswith("cpu"):
        raise TriadError(
            f"{flag} onnx: model {label} would run on {device}, but the ONNX backend runs on the CPU; add "
            f"--device cpu, or use {flag} torch"
        )


def check_modules(model: Any, label: str) -> None:
    """Refuse a sentence-transformers model with a module the trace does not cover (e.g. a Router per task)."""
    other = [type(m).__name__ for m in model if type(m).__name__ not in MODULES]
    if other:
        raise TriadError(
            f"--backend onnx: model {label} has sentence-transformers modules {', '.join(other)} that the ONNX "
            f"export does not cover (only {', '.join(MODULES)}); run it with --backend torch"
        )


class OnnxEncoder:
    """The torch encoder's `prepare` (prompts, tokenization) and an ONNX Runtime session as its `forward`."""

    prepare_threads = 1

    def __init__(self, base: SentenceTransformerEncoder, session: Any, *, exported: bool, path: str = "") -> None:
        self.base = base
        self.session = session
        self.path = path
        self.dim = base.dim
        self.exported = exported  # whether this load exported the graph (False: it came from the cache)
        self.inputs = [i.name for i in session.get_inputs()]
        self.truncate_dim = base.model.truncate_dim

    def text_limit(self) -> TextLimit:
        return self.base.text_limit()

    def single_threaded(self) -> OnnxEncoder:
        """This encoder on a one-thread session of its graph (in a worker process, `vectors.workers`)."""
        return OnnxEncoder(self.base, session(self.path, threads=1), exported=self.exported, path=self.path)

    def input_lengths(self, batch: Sequence[ModelInput], role: str) -> list[int]:
        return self.base.input_lengths(batch, role)

    def prepare(self, batch: Sequence[ModelInput], role: str) -> Prepared:
        return self.base.prepare(batch, role)

    def forward(self, prepared: Prepared, role: str) -> np.ndarray:
        return onnx_feed.run_parts(self.session, self.inputs, prepared, self.dim, self.truncate_dim)

    def encode_queries(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.forward(self.prepare(batch, QUERY), QUERY)

    def encode_candidates(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.forward(self.prepare(batch, CANDIDATE), CANDIDATE)


session = onnx_feed.session  # the sessions of every ONNX family open here


def _traced(model: Any, names: list[str]) -> Any:
    """A torch module mapping the tokenizer's tensors (positionally, in `names` order) to the sentence embedding."""
    import torch

    class Traced(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *tensors: Any) -> Any:
            return self.model(dict(zip(names, tensors, strict=True)))[OUTPUT]

    return Traced().eval()


def trace(module: Any, features: dict[str, Any], names: list[str], path: str, output: str = OUTPUT) -> None:
    """`torch.onnx.export` of `module` on `features[names]` into `path`, every axis but the last of a token input
    and the first of every input dynamic; its one output is named `output`."""
    import torch

    axes = {n: {0: "batch", 1: "tokens"} if features[n].dim() == 2 else {0: "batch"} for n in names}
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")  # tracer warnings about Python conditions on shapes
        torch.onnx.export(
            module,
            tuple(features[n] for n in names),
            path,
            input_names=names,
            output_names=[output],
            dynamic_axes={**axes, output: {0: "batch"}},
            opset_version=OPSET,
            dynamo=False,
        )


def check_cosines(got: np.ndarray, want: np.ndarray, label: str) -> None:
    """Refuse vectors of an exported graph whose cosine to the torch forward's is below MIN_COSINE in any row."""
    cos = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
    if not np.all(cos >= MIN_COSINE):
        raise TriadError(
            f"--backend onnx: model {label}'s exported graph gives other vectors than torch (cosine "
            f"{float(cos.min()):.6f} < {MIN_COSINE}); run it with --backend torch"
        )


def export(model: Any, path: str, label: str) -> None:
    """Trace `model` into `path` (written under a temporary name, checked, then moved into place)."""
    import torch

    features = model.preprocess(list(PROBES[:3]), prompt="")
    names = [k for k, v in features.items() if isinstance(v, torch.Tensor)]
    with replacing(path) as tmp:
        trace(_traced(model, names), features, names, str(tmp))
        check_equal(model, session(str(tmp)), label)


def check_equal(model: Any, sess: Any, label: str) -> None:
    """Refuse a graph whose vectors differ from the torch forward's on the probe texts (several batch sizes)."""
    import torch

    names = [i.name for i in sess.get_inputs()]
    for texts in (list(PROBES), [PROBES[1]], list(PROBES[::-1][:2])):
        features = model.preprocess(texts, prompt="")
        with torch.inference_mode():
            want = model(features)[OUTPUT].float().numpy()
        check_cosines(sess.run([OUTPUT], {n: features[n].numpy() for n in names})[0], want, label)


def cached_graph(folder: str, files: Sequence[str], label: str, make: Callable[[], None], *, log: bool) -> bool:
    """Whether this call exported the graph files `files` into `folder` (`make()`, when any of them was absent)."""
    exported = not all(os.path.isfile(os.path.join(folder, f)) for f in files)
    if exported:
        os.makedirs(folder, exist_ok=True)
        if log:
            where = os.path.join(folder, files[0]) if len(files) == 1 else folder
            print(f"exporting {label} to ONNX: {where}", file=sys.stderr)
        make()
    return exported


def wrap(
    base: SentenceTransformerEncoder, folder: str, label: str, *, log: bool = True
) -> OnnxEncoder | onnx_feed.LeanEncoder:
    """The ONNX encoder of a loaded torch encoder: its graph read from `folder`, exported there first if absent.

    Where the model can be fed without torch, its feed files are written beside the graph and the encoder returned
    is `onnx_feed.LeanEncoder`, which holds no reference to `base` (its torch weights can be freed)."""
    check_modules(base.model, label)
    path = os.path.join(folder, FILE)
    exported = cached_graph(folder, [FILE], label, lambda: export(base.model, path, label), log=log)
    sess = session(path)
    inputs = [i.name for i in sess.get_inputs()]
    spec = onnx_feed.read_spec(folder)
    if spec is None and onnx_feed.save(base, folder, inputs):
        spec = onnx_feed.read_spec(folder)
    if spec is None:
        return OnnxEncoder(base, sess, exported=exported, path=path)
    lean = onnx_feed.LeanEncoder(folder, spec, sess)
    lean.exported = exported
    return lean


def load_cached(folder: str) -> onnx_feed.LeanEncoder | None:
    """The torch-free encoder of a graph cached in `folder` with its feed files, or None when any file is absent."""
    spec = onnx_feed.read_spec(folder)
    path = os.path.join(folder, FILE)
    if spec is None or not os.path.isfile(path):
        return None
    return onnx_feed.LeanEncoder(folder, spec, session(path))
