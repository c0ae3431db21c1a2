"""`triad report RUN [RUN2] --out report.html`: one self-contained HTML report of a run (or two compared)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report", help="write one self-contained HTML file: scores, diagnostics, the worst queries with images"
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="one `triad run` folder, or two to compare")
    p.add_argument("--out", required=True, help="the HTML file to write")
    p.add_argument("--data", help="the dataset folder the runs used (default: the path in results.json)")
    p.add_argument("--worst", type=int, default=10, help="queries shown per subset (default 10, at most 100)")
    p.set_defaults(handler=_report)


def _report(args: argparse.Namespace) -> int:
    from spaces_app.report import write_report
    from triad_dataset.contract.errors import output_file

    output_file(args.out)  # before the runs are read and scored
    if args.worst < 1:
        print("triad report: --worst must be at least 1", file=sys.stderr)
        return 2
    out = write_report(args.runs, Path(args.out), data=args.data, worst_n=args.worst)
    print(f"report written: {out} ({out.stat().st_size / 2**20:.1f} MiB); open it in a browser, no server needed")
    return 0
