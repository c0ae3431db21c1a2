"""`triad build mini --out DIR`: the embedded, deterministic mini edition.

Built offline by the same pipeline as the full build: abstraction over real WordNet 3.0 subtrees with rendered
placeholder pictures, synthetic Fashion and Cars catalogs with attribute-rendered pictures, every config with
>= 100 queries and full 1,000-candidate pools. The folder is validated before it is moved into place.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from triad_dataset.contract import names as n
from triad_dataset.contract.records import BuildResult


def assemble(
    result: BuildResult, *, edition: str, seed: int, extra: Mapping[str, Any] | None = None
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """Tables in `names.ALL_CONFIGS` order and the folder audit (builders' figures + the row summary)."""
    from triad_dataset.folder.audit import summarize

    tables: dict[str, list[dict[str, Any]]] = {c: result.tables[c] for c in n.ALL_CONFIGS if c in result.tables}
    # the attribute schema each domain was built with (validate.py and audit.py read it back; schema.py)
    schemas = {
        d: result.audit[n.DOMAIN_CORPUS[d]]["schema"]
        for d in n.DOMAINS
        if "schema" in result.audit.get(n.DOMAIN_CORPUS[d], {})
    }
    audit: dict[str, Any] = {
        "benchmark": "triad",
        "edition": edition,
        "pool_size": n.POOL_SIZE,
        "seed": seed,
        **(extra or {}),
        "schema": schemas,
        "summary": summarize(tables),
        "builders": result.audit,
    }
    return tables, audit


def write_validated(
    out_dir: str | os.PathLike,
    result: BuildResult,
    *,
    edition: str,
    seed: int,
    overwrite: bool,
    extra: Mapping[str, Any] | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Write the folder with its card and audit; abort (TriadError, nothing written) if the validator objects."""
    from triad_dataset.contract.errors import TriadError
    from triad_dataset.contract.features import features_for
    from triad_dataset.folder.card import licence_text, render_card
    from triad_dataset.folder.io import write_folder
    from triad_dataset.folder.validate import validate_folder

    tables, audit = assemble(result, edition=edition, seed=seed, extra=extra)
    corpus_sizes: dict[str, int] = {c: len(tables[c]) for c in n.CORPUS_CONFIGS if c in tables}
    card = render_card(edition, audit, list(tables), corpus_sizes)

    def check(tmp: Path) -> None:
        violations = validate_folder(tmp)
        if violations:
            shown = "\n  ".join(violations[:20])
            more = f"\n  ... and {len(violations) - 20} more" if len(violations) > 20 else ""
            raise TriadError(
                f"{out_dir}: the built folder has {len(violations)} violations, nothing written:\n  {shown}{more}"
            )

    features = {c: features_for(c) for c in tables}
    path = write_folder(
        out_dir,
        tables,
        features=features,
        card=card,
        audit=audit,
        overwrite=overwrite,
        check=check,
        licence=licence_text(edition),
    )
    return path, audit


def _steps(seed: int) -> list[tuple[str, Callable[[], BuildResult]]]:
    from triad_dataset.editions.domain import build_mini_domain
    from triad_dataset.tracks.abstraction import build_mini_abstraction

    return [
        ("abstraction", lambda: build_mini_abstraction(seed=seed)),
        *((domain, lambda d=domain: build_mini_domain(d, seed=seed)) for domain in n.DOMAINS),
    ]


def build_mini(out_dir: str | os.PathLike, *, seed: int = 0, overwrite: bool = False, quiet: bool = False) -> Path:
    """Build, validate and write the mini edition to `out_dir`; prints the audit table and stage timings."""
    from triad_dataset.folder.audit import format_audit
    from triad_dataset.folder.io import check_output_dir

    check_output_dir(out_dir, overwrite)  # fail before minutes of work
    timings: dict[str, float] = {}
    result = BuildResult()
    steps = _steps(seed)
    with tqdm(total=len(steps) + 1, desc="mini edition", unit="stage", disable=quiet) as bar:
        for name, step in steps:
            bar.set_postfix_str(name)
            start = time.perf_counter()
            result = result.merge(step())
            timings[name] = time.perf_counter() - start
            bar.update()
        bar.set_postfix_str("write + validate")
        start = time.perf_counter()
        path, audit = write_validated(out_dir, result, edition="mini", seed=seed, overwrite=overwrite)
        timings["write + validate"] = time.perf_counter() - start
        bar.update()
    if not quiet:
        print(format_audit(audit))
        print(
            "\nstage seconds: "
            + ", ".join(f"{k} {v:.1f}" for k, v in timings.items())
            + f"; total {sum(timings.values()):.1f}"
        )
        print(f"wrote {path} (0 validation violations)")
    return path
