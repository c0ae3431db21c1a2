"""The `triad` console entry point.

Each part of the project registers its own subcommands through a small `register(subparsers)` function; modules
are listed here once and must keep their top-level imports light (heavy libraries are imported inside handlers).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from triad_dataset.contract.errors import TriadError

# Modules that contribute subcommands. Each defines `register(subparsers) -> None`; a handler is set with
# `parser.set_defaults(handler=fn)` where `fn(args) -> int` returns the exit code.
COMMAND_MODULES: tuple[str, ...] = (
    "triad_dataset.commands",
    "model_adapters.commands",
    "model_adapters.captioners.commands",
    "spaces_app.commands",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="triad", description="TRIAD and ARK retrieval benchmarks.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a real import error inside the module must surface
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return int(handler(args) or 0)
    except TriadError as exc:
        print(f"triad {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"triad {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
