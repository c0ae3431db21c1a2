"""Model objects handed in by type, and `mteb:NAME`: each resolved to our verified recipe where its files match one,
else wrapped and labelled "unverified input pipeline".

Accepted besides an `Encoder` / `Reranker` object or a "module:factory" string (`resolve.from_python`):
- a sentence-transformers `SentenceTransformer`, a transformers `CLIPModel` or `SiglipModel`: the folder it was
  loaded from (its `name_or_path`) is detected as `--model FOLDER` is; a verified recipe then loads and feeds it;
  otherwise a SentenceTransformer is fed through its own prompts (unverified), a CLIP/SigLIP object is refused
  (its processor is not part of the object);
- an mteb encoder or `ModelMeta` (only where mteb is imported), and `--model mteb:NAME`: mteb's model behind our
  `Encoder` protocol (`model_adapters.mteb.model`), cached under mteb's name and revision, the wrapper class and
  the library versions, unless `--model-path` holds files of a verified recipe.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Final

from model_adapters.models import recipes
from model_adapters.models.identity import ModelIdentity, library_versions
from model_adapters.models.resolve import ResolvedModel, from_name
from model_adapters.models.user_code import class_path
from triad_dataset.contract.errors import TriadError

MTEB_PREFIX: Final = "mteb:"
_TOWERS: Final = ("CLIPModel", "SiglipModel")


def _is(obj: Any, module: str, names: tuple[str, ...]) -> bool:
    """Whether `obj` is an instance of a class `names` of an already imported `module` (nothing is imported)."""
    loaded = sys.modules.get(module)
    classes = tuple(c for c in (getattr(loaded, n, None) for n in names) if isinstance(c, type))
    return bool(classes) and isinstance(obj, classes)


def _files_of(obj: Any) -> str | None:
    """The local folder a SentenceTransformer / transformers model was loaded from, or None."""
    is_st = _is(obj, "sentence_transformers", ("SentenceTransformer",))
    inner = getattr(obj[0], "auto_model", None) if is_st and len(obj) else obj
    path = getattr(getattr(inner, "config", None), "_name_or_path", None) or getattr(inner, "name_or_path", None)
    return str(path) if path and os.path.isdir(str(path)) else None


def _verified(folder: str | None, what: str, name: str | None = None) -> ResolvedModel | None:
    """Our resolution of `folder` (shown as `name`) when its detected recipe is verified (said on stderr), else None."""
    if folder is None:
        return None
    try:
        resolved = from_name(folder, name=name)
    except TriadError:
        return None
    if resolved.identity.input_pipeline != recipes.VERIFIED:
        return None
    print(
        f"{what}: its files ({folder}) match our verified recipe {resolved.identity.recipe}; ours feeds them",
        file=sys.stderr,
    )
    return resolved


def _unverified(
    obj: Any, *, name: str, source: str, revision: str | None, sees_images: bool, options: dict[str, Any]
) -> ResolvedModel:
    identity = ModelIdentity(
        name=name,
        source_kind="mteb" if source.startswith(MTEB_PREFIX) else "python",
        source=source,
        revision=revision,
        sees_images=sees_images,
        encoder_class=class_path(obj),
        options=options,
        input_pipeline=recipes.UNVERIFIED,
        versions=library_versions(),
    )
    return ResolvedModel(identity, obj=obj)


def _mteb_resolved(encoder: Any, source: str, name: str | None) -> ResolvedModel:
    import mteb

    options = {"mteb": mteb.__version__, "mteb_wrapper": encoder.wrapper}
    return _unverified(
        encoder,
        name=name or encoder.name,
        source=source,
        revision=encoder.revision,
        sees_images=encoder.sees_images,
        options=options,
    )


def from_mteb(spec: str, *, model_path: str | None = None, name: str | None = None) -> ResolvedModel:
    """Resolve `mteb:NAME` (`--model-path`: a local copy of its weights)."""
    mteb_name = spec.removeprefix(MTEB_PREFIX)
    folder = os.path.abspath(model_path) if model_path and os.path.isdir(model_path) else None
    ours = _verified(folder, spec, name or mteb_name)
    if ours is not None:
        return ours
    try:
        from model_adapters.mteb.model import load_mteb
    except ImportError as exc:
        raise TriadError(f"{spec}: needs the mteb extra (pip install 'triad-benchmark[mteb]'; {exc})") from exc
    return _mteb_resolved(load_mteb(mteb_name, model_path), f"{MTEB_PREFIX}{mteb_name}", name)


def from_object(obj: Any, *, name: str | None = None, revision: str | None = None) -> ResolvedModel | None:
    """Resolve a SentenceTransformer, CLIPModel / SiglipModel or mteb object by its type; None for anything else."""
    kind = type(obj).__name__
    if _is(obj, "sentence_transformers", ("SentenceTransformer",)):
        folder = _files_of(obj)
        ours = _verified(folder, f"{kind} object")
        if ours is not None:
            return ours
        from model_adapters.families.sentence_transformer import SentenceTransformerEncoder

        label = name or (os.path.basename(folder) if folder else kind)
        return _unverified(
            SentenceTransformerEncoder(obj),
            name=label,
            source=folder or kind,
            revision=revision,
            sees_images=False,
            options={},
        )
    if _is(obj, "transformers", _TOWERS):
        ours = _verified(_files_of(obj), f"{kind} object")
        if ours is None:
            raise TriadError(
                f"{kind} object: its files are not a folder here that a verified recipe feeds (the processor is not "
                "part of the object); save_pretrained it with its processor and pass the folder, or wrap it in an Encoder"
            )
        return ours
    if "mteb" in sys.modules:  # an mteb object exists only where its user imported mteb
        from model_adapters.mteb.model import MtebEncoder, is_mteb_object

        if is_mteb_object(obj):
            inner = getattr(obj, "model", None)
            ours = _verified(_files_of(inner), f"{kind} object", name) if inner is not None else None
            if ours is not None:
                return ours
            encoder = MtebEncoder(obj if hasattr(obj, "encode") else obj.load_model())
            return _mteb_resolved(encoder, f"{MTEB_PREFIX}{encoder.name}", name)
    return None
