"""Your own encoder or reranker: `module:factory` or `file.py:factory` imported and called, and checked against the
protocol; an error in your code is one line naming your file and line (a user error, exit 2).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import Any, Final

from triad_dataset.contract.errors import TriadError


def class_path(obj: Any) -> str:
    """`stem.QualifiedName` of the object's class, `stem` the name of the file that defines it.

    The same class gets the same path however its file was loaded: `--encoder my_encoder.py:build`, `import
    examples.my_encoder` or a script run as `__main__`. So its embedding cache is shared. A class with no file of
    its own keeps its module's name.
    """
    import inspect
    import sys

    cls = type(obj)
    module = sys.modules.get(cls.__module__)
    try:
        path = inspect.getfile(module) if module is not None else ""
    except TypeError:  # a built-in module, or one made without a file
        path = ""
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem == "__init__":
        stem = os.path.basename(os.path.dirname(path))
    return f"{stem or cls.__module__.rpartition('.')[2]}.{cls.__qualname__}"


def where(exc: BaseException, own_file: str | None) -> str:
    """`file:line` of the user's code where ``exc`` arose: the line a SyntaxError names, else the innermost
    traceback frame in the user's file (or, failing that, the innermost frame outside Python's import machinery).
    Paths under the current folder are shown relative to it."""
    import traceback

    if isinstance(exc, SyntaxError) and exc.filename:
        filename, line = exc.filename, exc.lineno
    else:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<frozen")]
        own = [f for f in frames if own_file and os.path.abspath(f.filename) == own_file]
        if not (own or frames):
            return own_file or "?"
        frame = (own or frames)[-1]
        filename, line = frame.filename, frame.lineno
    shown = os.path.relpath(filename) if os.path.abspath(filename).startswith(os.getcwd() + os.sep) else filename
    return f"{shown}:{line}" if line else shown


def _user_code_error(spec: str, exc: Exception, own_file: str | None, what: str) -> TriadError:
    """One line for an exception raised by the user's encoder / reranker file (a user error: exit 2)."""
    message = exc.msg if isinstance(exc, SyntaxError) else str(exc).strip()
    first = message.splitlines()[0] if message else ""
    return TriadError(f"{spec}: {where(exc, own_file)}: {what} {type(exc).__name__}{': ' + first if first else ''}")


def _import(module_name: str, spec: str) -> Any:
    """A module by dotted name (the current folder is searched too, as `python -m` would) or a `.py` file path.
    Any error while importing it (a syntax error, a missing dependency, an exception at module level) is one
    line naming the file and line."""
    import sys

    if module_name.endswith(".py"):
        path = os.path.abspath(module_name)
        if not os.path.isfile(path):
            raise TriadError(f"{spec}: no such file {module_name}")
        module_spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
        if module_spec is None or module_spec.loader is None:
            raise TriadError(f"{spec}: {module_name} cannot be imported")
        module = importlib.util.module_from_spec(module_spec)
        try:
            module_spec.loader.exec_module(module)
        except Exception as exc:
            raise _user_code_error(spec, exc, path, "importing it raised") from exc
        return module
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())
    own_file = None
    try:
        found = importlib.util.find_spec(module_name)
        own_file = os.path.abspath(found.origin) if found is not None and found.origin else None
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise _user_code_error(spec, exc, own_file, "importing it raised") from exc  # missing inside the module
        raise TriadError(
            f"{spec}: module {exc.name!r} not found (is it installed, on PYTHONPATH or in the current folder?)"
        ) from exc
    except Exception as exc:
        raise _user_code_error(spec, exc, own_file, "importing it raised") from exc


def load_factory(spec: str) -> Any:
    """Call `module:factory` or `path/file.py:factory` (a function or class with no required arguments) and return
    what it gives; an exception raised inside the factory is one line naming the file and line it came from."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise TriadError(f"{spec!r}: expected module:factory (e.g. my_pkg.models:build) or file.py:factory")
    module = _import(module_name, spec)
    factory: Any = module
    for part in attr.split("."):
        factory = getattr(factory, part, None)
        if factory is None:
            raise TriadError(f"{spec}: {module_name} has no attribute {attr!r}")
    if not callable(factory):
        raise TriadError(f"{spec}: {attr} is not callable")
    try:
        return factory()
    except TriadError:
        raise
    except Exception as exc:
        own = getattr(module, "__file__", None)
        raise _user_code_error(spec, exc, os.path.abspath(own) if own else None, f"{attr}() raised") from exc


def default_name(obj: Any, spec: str | None = None) -> str:
    """The name a run of your own encoder / reranker gets without `--name` (or a `name` attribute): its class
    (`BagOfWordsAndColour`), or the factory's file / module stem (`my_encoder`) when the factory returns an object
    of a class defined elsewhere (a library's wrapper says nothing about your model)."""
    cls = type(obj)
    if spec is None:
        return cls.__name__
    module_name = spec.rpartition(":")[0]
    if module_name.endswith(".py"):
        module_name = os.path.splitext(os.path.basename(module_name))[0]
    return cls.__name__ if cls.__module__ == module_name else module_name.rpartition(".")[2]


# what `model_adapters.evaluate` and `--encoder` accept as a model (`models.objects` recognises the typed ones)
ACCEPTED: Final = (
    "an Encoder (encode_queries, encode_candidates), a 'module:factory' string, a registry name, Hub id or folder, "
    "'mteb:NAME', a SentenceTransformer, a transformers CLIPModel or SiglipModel, or an mteb encoder / ModelMeta"
)


def check_protocol(obj: Any, kind: str, where: str) -> None:
    """Refuse an object that is not an encoder (or reranker, or reasoning embedder) of `model_adapters.protocol`."""
    methods = ("score_pairs",) if kind == "reranker" else ("encode_queries", "encode_candidates")
    if kind != "reranker" and callable(getattr(obj, "generate", None)):
        methods = ("generate", "encode")  # a reasoning embedder (protocol.ReasoningEncoder)
        if getattr(obj, "generation", None) is None:
            raise TriadError(
                f"{where}: {type(obj).__name__} has generate/encode but no `generation` (the "
                "GenerationSpec naming its generator, prompts, decoding settings and seed; "
                "model_adapters/protocol.py)"
            )
    missing = [m for m in methods if not callable(getattr(obj, m, None))]
    if missing:
        what = "a reranker" if kind == "reranker" else "an encoder"
        accepted = "" if kind == "reranker" else f"; accepted: {ACCEPTED}"
        raise TriadError(
            f"{where}: {type(obj).__name__} is not {what} (no {', '.join(missing)}; see model_adapters/protocol.py)"
            f"{accepted}"
        )
