"""The module examples call `evaluate.load("triad_map")` / `evaluate.load("ark_retrieval")` (bare names, as on the Hub).

For the doctests of the two module scripts, a fixture patches `evaluate.load` so a bare module name resolves to this
repository's folder, the way evaluate's own common module test does (`tests/test_metric_common.py`,
`LocalModuleTest.use_local_metrics`). The examples therefore run from any working directory and never depend on a
copy in evaluate's modules cache (`python -m metrics.install_evaluate`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from metrics.install_evaluate import MODULES, module_path

# The widgets are not collected, whatever the working directory (pyproject's --ignore-glob is relative to it).
collect_ignore = [f"{name}/app.py" for name in MODULES]


def resolve_local(name: Any) -> Any:
    """A bare module name of this project becomes its local folder; anything else is passed on unchanged.

    >>> Path(resolve_local("triad_map")) == Path(module_path("triad_map"))
    True
    >>> resolve_local("accuracy")
    'accuracy'
    """
    return module_path(name) if isinstance(name, str) and name in MODULES else name


@pytest.fixture(autouse=True)
def _local_bare_names(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    if Path(str(request.node.fspath)).parent.name not in MODULES:  # only the module scripts need evaluate
        yield
        return
    import evaluate

    real_load = evaluate.load

    def load_local(path: str, *args: Any, **kwargs: Any) -> Any:
        return real_load(resolve_local(path), *args, **kwargs)

    monkeypatch.setattr(evaluate, "load", load_local)
    yield
