"""`python -m triad_dataset.cli ...`: an alias of the `triad` command, kept for the command lines that use it.

The dispatcher lives above every package, in `triad_cli.main`; this module only forwards to it (and is the one
module of triad_dataset that scripts/import_graph.py places in the CLI's top layer).
"""

from __future__ import annotations

import sys

from triad_cli.main import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
