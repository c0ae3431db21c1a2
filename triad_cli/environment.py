"""The one line `triad` prints when the Python running it lacks a dependency: which environment has them.

>>> from pathlib import Path
>>> missing_line("pyarrow", Path("/src"), venv_exists=True, in_venv=False, checkout=True)
"triad: error: this Python lacks 'pyarrow', which triad needs; run the project's environment: /src/.venv/bin/triad"
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

PROJECT_PACKAGES: Final = ("triad_dataset", "ark_dataset", "metrics", "model_adapters", "spaces_app", "triad_cli")
ROOT: Final = Path(__file__).resolve().parents[1]


def missing_line(module: str, root: Path, *, venv_exists: bool, in_venv: bool, checkout: bool) -> str:
    """What to run instead when `module` is missing.

    Args:
        module: the top-level module that did not import.
        root: the folder holding the project's packages.
        venv_exists: whether `make setup` made `root/.venv`.
        in_venv: whether that environment is the one running.
        checkout: whether `root` is a source checkout (it has the Makefile).
    """
    head = f"triad: error: this Python lacks {module!r}, which triad needs"
    venv = root / ".venv"
    if not checkout:
        return f"{head}; install triad-benchmark with its extras into this environment (docs: README, Quick start)"
    if not venv_exists:
        return f"{head}; make the project's environment first: `make setup` in {root}, then {venv}/bin/triad"
    if not in_venv:
        return f"{head}; run the project's environment: {venv}/bin/triad"
    return f"{head}; the project's environment {venv} lacks it: run `make setup` in {root} again"


def _importer(exc: BaseException) -> Path | None:
    """The file whose import statement failed: the innermost frame outside the import machinery."""
    tb, found = exc.__traceback__, None
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not name.startswith("<"):
            found = Path(name)
        tb = tb.tb_next
    return found


def missing_dependency(exc: ModuleNotFoundError) -> str | None:
    """The one line for a third-party module that the project's own code imports and this interpreter lacks.

    None for a module of the project itself, and for an import made by other code (your encoder, a library).
    """
    module = (exc.name or "").split(".")[0]
    importer = _importer(exc)
    ours = importer is not None and any(importer.resolve().is_relative_to(ROOT / p) for p in PROJECT_PACKAGES)
    if not module or module in PROJECT_PACKAGES or not ours:
        return None
    venv = ROOT / ".venv"
    return missing_line(
        module,
        ROOT,
        venv_exists=venv.is_dir(),
        in_venv=venv.is_dir() and Path(sys.prefix).resolve() == venv.resolve(),
        checkout=(ROOT / "Makefile").is_file(),
    )
