"""Which task configs (TRIAD) or subtypes (ARK) a run or a captioning pass covers: one rule for `triad run` and
`triad caption` (a module of its own so that the captioners need not import the runner)."""

from __future__ import annotations

from collections.abc import Sequence

from triad_dataset.contract.errors import TriadError


def select_configs(data: str, benchmark: str, requested: str | Sequence[str]) -> list[str]:
    """The task configs (TRIAD) or subtypes (ARK) to run; unknown or absent names list the valid ones."""
    from triad_dataset.folder.io import list_configs

    if benchmark == "ark":
        from ark_dataset.names import SUBTYPES as known
    else:
        from triad_dataset.contract.names import TASK_CONFIGS as known
    present = [c for c in known if c in set(list_configs(data))]
    names = [requested] if isinstance(requested, str) else list(requested)
    names = [n.strip() for part in names for n in part.split(",") if n.strip()]
    if not names or names == ["all"]:
        if not present:
            raise TriadError(f"{data}: no {benchmark} task configs in this folder")
        return present
    for name in names:
        if name not in known:
            raise TriadError(f"unknown {benchmark} config {name!r}; valid: all, {', '.join(present or known)}")
        if name not in present:
            raise TriadError(f"{data}: config {name!r} is not in this folder; present: {', '.join(present)}")
    return list(dict.fromkeys(names))
