"""Which benchmark a folder holds, whether it passes its validator, and which task configs (TRIAD) or subtypes
(ARK) a run or a captioning pass covers: one rule for `triad run` and `triad caption` (a module of its own so that
the captioners need not import the runner)."""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from pathlib import Path

from triad_dataset.contract.errors import TriadError, did_you_mean

BUILD_HINT = "build one with `triad build mini --out DIR` (TRIAD) or `triad build ark-mini --out DIR` (ARK)"


def select_configs(data: str, benchmark: str, requested: str | Sequence[str]) -> list[str]:
    """The task configs (TRIAD) or subtypes (ARK) to run; unknown or absent names list the valid ones."""
    from triad_dataset.folder.io import list_configs

    known = _known_configs(benchmark)
    in_folder = list_configs(data)
    if not in_folder:
        raise TriadError(
            f"{data}: not a benchmark dataset folder (no configs in a README.md card, no data/<config>/ "
            f"folders); {BUILD_HINT}"
        )
    present = [c for c in known if c in set(in_folder)]
    names = [requested] if isinstance(requested, str) else list(requested)
    names = [n.strip() for part in names for n in part.split(",") if n.strip()]
    if not names or names == ["all"]:
        if not present:
            raise TriadError(f"{data}: no {benchmark} task configs in this folder")
        return present
    for name in names:
        if name not in known:
            hint = did_you_mean(name, present or known)
            raise TriadError(f"unknown {benchmark} config {name!r}{hint}; valid: all, {', '.join(present or known)}")
        if name not in present:
            hint = did_you_mean(name, present)
            raise TriadError(f"{data}: config {name!r} is not in this folder{hint}; present: {', '.join(present)}")
    return list(dict.fromkeys(names))


def _known_configs(benchmark: str) -> Sequence[str]:
    """Every task config (TRIAD) or subtype (ARK) of the benchmark, in the benchmark's order."""
    if benchmark == "ark":
        from ark_dataset.names import SUBTYPES

        return SUBTYPES
    from triad_dataset.contract.names import TASK_CONFIGS

    return TASK_CONFIGS


def detect_benchmark(data: str) -> str:
    """ "triad" or "ark": the folder's audit.json says which, else its config names do."""
    from ark_dataset.names import SUBTYPES
    from triad_dataset.folder.io import list_configs

    path = Path(data)
    if not path.is_dir():
        raise TriadError(f"{data}: no such dataset folder")
    audit = path / "audit.json"
    if audit.exists():
        try:
            bench = json.loads(audit.read_text(encoding="utf-8")).get("benchmark")
        except json.JSONDecodeError as exc:
            raise TriadError(f"{audit}: not valid JSON ({exc})") from exc
        if bench in ("triad", "ark"):
            return bench
    return "ark" if any(c in SUBTYPES for c in list_configs(data)) else "triad"


def failed_validation(data: str, problems: list[str]) -> str:
    """The one error a run gives for a folder that fails its validator: the count and the first ten problems."""
    shown = "\n  - ".join(problems[:10])
    more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
    return f"{data}: the folder fails `triad validate` ({len(problems)} problems):\n  - {shown}{more}"


def validate_folder(data: str, benchmark: str) -> list[str]:
    """Problems reported by the dataset's own validator (`triad validate`); [] when it finds none."""
    module_name = "ark_dataset.validate" if benchmark == "ark" else "triad_dataset.folder.validate"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        return []
    return list(module.validate_folder(data))
