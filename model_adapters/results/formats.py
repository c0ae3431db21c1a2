"""The output formats of `triad results`: one `Table` printed as text, Markdown, CSV, LaTeX or JSON.

A table carries its cells as shown (text, Markdown, LaTeX) and its records with unrounded values (CSV, JSON), so a
paper table is pasted from the first three and a notebook reads the last two.

>>> t = Table("T · mAP", ["config", "a|b"], [["s_1", "0.5000"]], [{"config": "s_1", "a|b": 0.5}], ["note"])
>>> print(render([t], "markdown"))
**T · mAP**
<BLANKLINE>
| config | a\\|b |
|---|---|
| s_1 | 0.5000 |
<BLANKLINE>
note
>>> print(render([t], "csv"))
config,a|b
s_1,0.5
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from model_adapters.ranks.output import text_table
from triad_dataset.contract.errors import TriadError

FORMATS: Final = ("table", "markdown", "csv", "latex", "json")
MTEB: Final = "mteb"  # written as files beside each run (mteb's TaskResult JSON), not printed
WRITTEN_FORMATS: Final = (MTEB,)
LATEX_SPECIAL: Final = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "|": r"\textbar{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "—": "---",
    "–": "--",
    "−": "$-$",
    "Δ": r"$\Delta$",
    "α": r"$\alpha$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "·": r"$\cdot$",
}


@dataclass(frozen=True)
class Table:
    """One table: a title, the header and cells as shown, the records behind them, notes printed under it."""

    title: str
    header: list[str]
    rows: list[list[str]]
    records: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


def _stripped_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    return "\n".join(line.rstrip() for line in text_table(header, rows).splitlines())


def _markdown_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped and the symbols the tables use spelled in LaTeX.

    >>> latex_escape("ΔmAP (A−B) & p_Holm ≥ 0.05")
    '$\\\\Delta$mAP (A$-$B) \\\\& p\\\\_Holm $\\\\geq$ 0.05'
    """
    return "".join(LATEX_SPECIAL.get(ch, ch) for ch in text)


def _text(table: Table) -> str:
    return "\n".join([table.title, _stripped_table(table.header, table.rows), *table.notes])


def _markdown(table: Table) -> str:
    lines = [f"**{_markdown_cell(table.title)}**", ""]
    lines.append("| " + " | ".join(_markdown_cell(h) for h in table.header) + " |")
    lines.append("|" + "---|" * len(table.header))
    lines += ["| " + " | ".join(_markdown_cell(c) for c in row) + " |" for row in table.rows]
    if table.notes:
        lines += ["", *(_markdown_cell(note) for note in table.notes)]
    return "\n".join(lines)


def _latex(table: Table) -> str:
    spec = "l" * min(2, len(table.header)) + "r" * max(0, len(table.header) - 2)
    lines = [f"% {latex_escape(table.title)}", rf"\begin{{tabular}}{{{spec}}}", r"\toprule"]
    lines.append(" & ".join(latex_escape(h) for h in table.header) + r" \\")
    lines.append(r"\midrule")
    lines += [" & ".join(latex_escape(c) for c in row) + r" \\" for row in table.rows]
    lines += [r"\bottomrule", r"\end{tabular}", *(f"% {latex_escape(note)}" for note in table.notes)]
    return "\n".join(lines)


def _csv(tables: Sequence[Table]) -> str:
    records = [r for t in tables for r in t.records]
    columns = list(dict.fromkeys(k for r in records for k in r))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return buffer.getvalue().rstrip("\n")


def _json(tables: Sequence[Table]) -> str:
    body: list[Mapping[str, Any]] = [{"title": t.title, **t.meta, "rows": t.records, "notes": t.notes} for t in tables]
    return json.dumps(body, indent=2, ensure_ascii=False, allow_nan=False)


def render(tables: Sequence[Table], fmt: str) -> str:
    """The tables in one of `FORMATS`; CSV and JSON hold every table's records, unrounded."""
    if fmt not in FORMATS:
        raise TriadError(f"--format {fmt}: unknown; use one of {', '.join(FORMATS)}")
    if fmt == "csv":
        return _csv(tables)
    if fmt == "json":
        return _json(tables)
    one = {"table": _text, "markdown": _markdown, "latex": _latex}[fmt]
    return "\n\n".join(one(t) for t in tables)


def write_runs(runs: Sequence[str | Path], fmt: str) -> str:
    """Write each run in a file format of `WRITTEN_FORMATS` (mteb: RUN/mteb/, the `mteb` extra); lists the files."""
    if fmt not in WRITTEN_FORMATS:
        raise TriadError(f"--format {fmt}: not a written format; use one of {', '.join(WRITTEN_FORMATS)}")
    try:
        from model_adapters.mteb.results import write_mteb_results
    except ImportError as exc:
        raise TriadError(f"--format mteb needs the mteb extra: pip install 'triad-benchmark[mteb]' ({exc})") from exc
    return "\n".join(str(path) for run in runs for path in write_mteb_results(run))
