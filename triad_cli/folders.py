"""`triad validate DIR` and `triad publish DIR`: commands on a dataset folder of either benchmark.

They sit above both benchmarks: the folder's audit.json `"benchmark"` picks TRIAD's or ARK's validator, so neither
validator imports the other. Handlers import their modules lazily.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from triad_dataset.contract.errors import TriadError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "validate",
        help="check every invariant of a TRIAD or ARK folder",
        description="Exit 0 when valid; otherwise print one line per violation "
        "('config / query_id: what is wrong') and exit 1.",
    )
    p.add_argument("dir", help="dataset folder")
    p.set_defaults(handler=_validate)
    p = subparsers.add_parser(
        "publish",
        help="upload a validated folder to the Hugging Face Hub",
        description="Validates DIR, then uploads README.md, audit.json and data/ with "
        "huggingface_hub (token from `hf auth login` or HF_TOKEN).",
    )
    p.add_argument("dir", help="dataset folder")
    p.add_argument("--repo", required=True, help="dataset repo id ORG/NAME")
    p.add_argument("--dry-run", action="store_true", help="list the files and sizes that would be uploaded")
    p.add_argument("--private", action="store_true", help="create the repo as private")
    p.add_argument("--message", default=None, help="commit message")
    p.set_defaults(handler=_publish)


def validate_any(path: str | Path) -> list[str]:
    """Every violation of a TRIAD or ARK folder, by the validator of the benchmark its audit.json names."""
    from triad_dataset.folder.io import benchmark_of
    from triad_dataset.folder.validate import validate_folder

    try:
        benchmark = benchmark_of(path)
    except TriadError:
        benchmark = None  # the TRIAD validator reports the missing or unreadable audit.json
    if benchmark == "ark":
        from ark_dataset.validate import validate_folder as validate_ark

        return list(validate_ark(path))
    return validate_folder(path)


def _validate(args: argparse.Namespace) -> int:
    violations = validate_any(args.dir)
    for line in violations:
        print(line)
    if violations:
        print(f"{args.dir}: {len(violations)} violations", file=sys.stderr)
        return 1
    print(f"{args.dir}: valid")
    return 0


def _publish(args: argparse.Namespace) -> int:
    from triad_dataset.folder.publish import publish

    print(
        publish(
            args.dir,
            args.repo,
            dry_run=args.dry_run,
            private=args.private,
            commit_message=args.message,
            validate=validate_any,
        )
    )
    return 0
