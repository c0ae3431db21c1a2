"""The `triad` console entry point (setup.cfg `console_scripts`; also `python -m triad_cli`).

Each part of the project registers its own subcommands through a small `register(subparsers)` function, and the
kinds of `triad build` it builds through `register_build(kinds)`; modules are listed here once and must keep their
top-level imports light (heavy libraries are imported inside handlers).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from triad_dataset.contract.errors import TriadError

DEBUG = "--debug"
SIGPIPE_EXIT = 141  # what a shell reports for a command stopped by SIGPIPE

# Modules that contribute subcommands. Each defines `register(subparsers) -> None` and / or
# `register_build(kinds) -> None` (kinds of `triad build`); a handler is set with `parser.set_defaults(handler=fn)`
# where `fn(args) -> int` returns the exit code. Listed in the order `triad --help` shows them.
COMMAND_MODULES: tuple[str, ...] = (
    "triad_dataset.commands",
    "ark_dataset.commands",
    "triad_cli.folders",
    "triad_cli.listing",
    "model_adapters.commands",
    "model_adapters.captioners.commands",
    "spaces_app.commands",
    "spaces_app.report_command",
)


def _modules() -> list[ModuleType]:
    """The command modules that are installed (a part left out of an installation contributes nothing)."""
    found = []
    for name in COMMAND_MODULES:
        try:
            found.append(importlib.import_module(name))
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a real import error inside the module must surface
                raise
    return found


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="triad", description="TRIAD and ARK retrieval benchmarks.")
    parser.add_argument(
        "--debug", action="store_true", help="an error shows its traceback, not one line (anywhere on the line)"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = _modules()
    build = subparsers.add_parser("build", help="build a dataset folder (TRIAD mini/full/scaled, ARK)")
    kinds = build.add_subparsers(dest="kind", metavar="KIND", required=True)
    for module in modules:
        if hasattr(module, "register_build"):
            module.register_build(kinds)
        if hasattr(module, "register"):
            module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # idle OpenMP threads sleep instead of spinning on shared cores; set before torch is imported (docs/runner.md)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        return _main(argv)
    except BrokenPipeError:  # `triad list configs | head` stopped reading: stop quietly, as `yes | head` does
        _quiet_stdout()
        return SIGPIPE_EXIT
    except ModuleNotFoundError as exc:  # a dependency this interpreter lacks: say which environment has it
        from triad_cli.environment import missing_dependency

        line = missing_dependency(exc)
        if line is None:
            raise
        print(line, file=sys.stderr)
        return 2


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's last flush does not fail on the closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor behind sys.stdout (a test's capture)
        pass
    finally:
        os.close(devnull)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    given = list(sys.argv[1:] if argv is None else argv)
    debug = DEBUG in given  # after a subcommand too: `triad run ... --debug`
    args = parser.parse_args([a for a in given if a != DEBUG])
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return int(handler(args) or 0)
    except TriadError as exc:
        if debug:
            raise
        print(f"triad {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"triad {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
