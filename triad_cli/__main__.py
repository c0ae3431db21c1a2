"""`python -m triad_cli ...` is the `triad` command."""

from __future__ import annotations

import sys

from triad_cli.main import main

if __name__ == "__main__":
    sys.exit(main())
