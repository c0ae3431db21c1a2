"""The build audit: figures computed from the written rows, and the table printed after a build.

`summarize(tables)` derives, per task config, the figures a user compares with the paper: queries, mean positives,
mean count per role (paper Table 7), the exact random-ranking mAP (`random_ap`), profile mix (A.2), conditions per
attribute and polarity (A.4.1), session mix and conflict-trap coverage (A.3), and for abstraction the mean
positives/siblings per query (A.1: 1.77 positives and 9.05 siblings for I2C, 5 and 150.87 for C2I).
`format_audit(audit)` renders these next to the paper's figures, with the attribute schema the folder was built with
(audit.json "schema", schema.py) and the builders' gate-violation counts (paper A.2: must be 0).

>>> rows = [{"candidate_roles": ["positive", "sibling", "random"], "candidate_trap": [False] * 3,
...          "positive_ids": ["a"], "profile": None, "session_type": None, "num_turns": None}]
>>> summarize({"abstraction_i2c": rows})["abstraction_i2c"]["mean_per_role"]
{'positive': 1.0, 'sibling': 1.0, 'random': 1.0}
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from triad_dataset.contract import names as n
from triad_dataset.contract.chance import random_ap, random_map  # noqa: F401  (random_map: re-exported for its callers)
from triad_dataset.contract.schema import DomainSchema, schemas_from_audit
from triad_dataset.folder import io as folder

# Paper figures (A.1, Table 7) shown next to the abstraction means.
PAPER_MEANS = {
    n.ABSTRACTION_CONFIGS[0]: {"mean_positives": 1.77, "mean_siblings": 9.05},
    n.ABSTRACTION_CONFIGS[1]: {"mean_positives": 5.0, "mean_siblings": 150.87},
}
# paper A.3: conflict traps cover 459 of 525 Fashion and 517 of 525 Cars conflict queries
PAPER_TRAP_COVERAGE = {s: c for s, c in zip(n.STATE_CONFIGS, ((459, 525), (517, 525)), strict=True)}
ROLE_HEADERS = {  # paper Table 7 abbreviations
    n.POSITIVE: "Pos",
    n.SIBLING: "Sib",
    n.P_VIOLATION: "P-V",
    n.N_VIOLATION: "N-V",
    n.PN_VIOLATION: "PN-V",
    n.IMPLICIT_VIOLATION: "Imp-V",
    n.VISUAL: "Vis",
    n.RANDOM: "Rand",
    n.CONFLICT_TRAP: "Trap",
}
SUMMARY_COLUMNS = (
    "query_id",
    "candidate_roles",
    "candidate_trap",
    "positive_ids",
    "profile",
    "session_type",
    "num_turns",
    "conditions",
)
# Chance level of the six main subsets: random-ranking mAP 0.008-0.011 with 1,000-candidate pools (from the
# paper's pool shapes; docs/metrics.md "chance level").
PAPER_RANDOM_MAP = (0.008, 0.011)
# paper A.4.1: each domain has 1,950 explicit conditions per 1,000 queries, 1,050 positive and 900 negative
PAPER_CONDITIONS_PER_1000 = {"P": 1050, "N": 900}
# paper A.2: Same has 2.042 (Fashion) and 5.156 (Cars) positives per query; A.3: 2,249 / 3,342 trap flags
PAPER_SAME_POSITIVES = {c: v for c, v in zip(n.SAME_CONFIGS, (2.042, 5.156), strict=True)}
PAPER_TRAP_FLAGS_PER_QUERY = {c: v for c, v in zip(n.STATE_CONFIGS, (2.249, 3.342), strict=True)}
SCHEMA_ROLE_HEADERS = {"constraint": "constraint", "modifiable": "modifiable", "non_constraint_hard": "preserved"}


def _mean(total: float, count: int) -> float:
    return round(total / count, 4) if count else 0.0


def summarize_config(config: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Figures of one task config, computed from its rows."""
    count = len(rows)
    roles: Counter[str] = Counter()
    pool_sizes: Counter[int] = Counter()
    for row in rows:
        roles.update(row["candidate_roles"] or [])
        pool_sizes[len(row["candidate_roles"] or [])] += 1
    out: dict[str, Any] = {
        "queries": count,
        "mean_positives": _mean(sum(len(r["positive_ids"] or []) for r in rows), count),
        "mean_per_role": {role: _mean(roles[role], count) for role in n.ROLES if roles[role]},
        "pool_size": {"min": min(pool_sizes, default=0), "max": max(pool_sizes, default=0)},
        "random_map": round(
            sum(random_ap(len(r["candidate_roles"]), len(r["positive_ids"])) for r in rows if r["positive_ids"])
            / count,
            6,
        )
        if count
        else 0.0,
    }
    if config in n.CONSTRAINTS_CONFIGS + n.STATE_CONFIGS:
        profiles = Counter(r["profile"] for r in rows)
        out["profile_mix"] = {p: profiles[p] for p in n.PROFILES}
        conditions: dict[str, dict[str, int]] = {}
        for row in rows:
            for c in row.get("conditions") or []:
                counts = conditions.setdefault(c["attribute"], dict.fromkeys(n.POLARITIES, 0))
                counts[c["polarity"]] += 1
        out["conditions_per_attribute"] = dict(sorted(conditions.items()))
    if config in n.STATE_CONFIGS:
        sessions = Counter(f"{r['session_type']}/{r['num_turns']}" for r in rows)
        out["session_mix"] = {f"{t}/{k}": sessions[f"{t}/{k}"] for t, k, _ in n.SESSION_MIX_PER_1000}
        conflict = [r for r in rows if r["session_type"] == n.SESSION_TYPES[1]]
        out["traps"] = {
            "flags": sum(sum(bool(t) for t in r["candidate_trap"] or []) for r in rows),
            "conflict_queries": len(conflict),
            "conflict_queries_with_trap": sum(any(r["candidate_trap"] or []) for r in conflict),
        }
    return out


def summarize(tables: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    """`summarize_config` for every task config present, in `names.TASK_CONFIGS` order."""
    return {c: summarize_config(c, tables[c]) for c in n.TASK_CONFIGS if c in tables}


def summarize_folder(directory: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """The same figures read back from a folder (for folders whose audit.json has no summary)."""
    present = folder.list_configs(directory)
    return summarize({c: folder.read_rows(directory, c, SUMMARY_COLUMNS) for c in n.TASK_CONFIGS if c in present})


def gate_violations(audit: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted path, count) of every `gate_violations` figure in a builder audit."""
    for key, value in audit.items():
        where = f"{path}.{key}" if path else str(key)
        if key == "gate_violations":
            yield where, value
        elif isinstance(value, Mapping):
            yield from gate_violations(value, where)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    cells = [[str(c) for c in header]] + [[f"{c:.2f}" if isinstance(c, float) else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
        for r in cells
    ]
    return [lines[0], "-" * len(lines[0]), *lines[1:]]


def format_audit(audit: Mapping[str, Any], summary: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """The audit table as text (`summary` defaults to audit["summary"])."""
    summary = summary if summary is not None else audit.get("summary", {})
    lines = [
        f"TRIAD audit (edition {audit.get('edition', '?')}, pool size {audit.get('pool_size')}, "
        f"seed {audit.get('seed', '?')})",
        "",
    ]
    roles = [r for r in n.ROLES if any(r in s["mean_per_role"] for s in summary.values())]
    rows = [
        [
            n.DISPLAY_NAMES.get(c, c),
            s["queries"],
            s["mean_positives"],
            *(s["mean_per_role"].get(r, 0.0) for r in roles),
            s["pool_size"]["min"]
            if s["pool_size"]["min"] == s["pool_size"]["max"]
            else f"{s['pool_size']['min']}-{s['pool_size']['max']}",
        ]
        for c, s in summary.items()
    ]
    lines += ["mean count per query by candidate role (paper Table 7 labels)", ""]
    lines += _table(["config", "queries", "mean pos", *(ROLE_HEADERS[r] for r in roles), "pool"], rows)
    chance = [
        [
            n.DISPLAY_NAMES.get(c, c),
            s["mean_positives"],
            s.get("random_map", 0.0),
            "{:.3f}-{:.3f}".format(*PAPER_RANDOM_MAP)
            if c in n.MAIN_CONFIGS
            else (f"pos {PAPER_SAME_POSITIVES[c]}" if c in PAPER_SAME_POSITIVES else ""),
        ]
        for c, s in summary.items()
    ]
    lines += ["", "random-ranking mAP (exact expectation over uniform orderings of each pool)", ""]
    lines += _table(["config", "mean pos", "random mAP", "paper"], [[a, b, f"{m:.4f}", p] for a, b, m, p in chance])
    paper = [
        [
            n.DISPLAY_NAMES[c],
            summary[c]["mean_positives"],
            p["mean_positives"],
            summary[c]["mean_per_role"].get(n.SIBLING, 0.0),
            p["mean_siblings"],
        ]
        for c, p in PAPER_MEANS.items()
        if c in summary
    ]
    if paper:
        lines += ["", *_table(["abstraction", "positives", "paper", "siblings", "paper"], paper)]
    profiles = [[n.DISPLAY_NAMES[c], *s["profile_mix"].values()] for c, s in summary.items() if "profile_mix" in s]
    if profiles:
        lines += ["", *_table(["profile mix", *n.PROFILES], profiles)]
    lines += _conditions_lines(summary, schemas_from_audit(audit))
    sessions = [
        [
            n.DISPLAY_NAMES[c],
            *s["session_mix"].values(),
            f"{s['traps']['conflict_queries_with_trap']}/{s['traps']['conflict_queries']}",
            s["traps"]["flags"],
            "{}/{}".format(*PAPER_TRAP_COVERAGE[c]),
            _mean(s["traps"]["flags"], s["queries"]),
            PAPER_TRAP_FLAGS_PER_QUERY[c],
        ]
        for c, s in summary.items()
        if "session_mix" in s
    ]
    if sessions:
        header = [
            "session mix",
            *next(s["session_mix"] for s in summary.values() if "session_mix" in s),
            "trap coverage",
            "trap flags",
            "paper coverage",
            "flags/query",
            "paper",
        ]
        lines += ["", *_table(header, sessions)]
    gates = list(gate_violations(audit))
    bad = [f"{where} = {count}" for where, count in gates if count not in (0, None)]
    lines += ["", f"gate violations: {'0 in ' + str(len(gates)) + ' checked subsets' if not bad else '; '.join(bad)}"]
    skipped = list(_skips(audit))
    if skipped:
        lines += ["skipped inputs: " + "; ".join(f"{where} = {count}" for where, count in skipped)]
    return "\n".join(lines)


def _conditions_lines(summary: Mapping[str, Mapping[str, Any]], schemas: Mapping[str, DomainSchema]) -> list[str]:
    """The schema's roles per attribute next to the condition counts of the constraints subsets (paper A.2, A.4.1)."""
    lines: list[str] = []
    for domain, config in zip(n.DOMAINS, n.CONSTRAINTS_CONFIGS, strict=True):
        if config not in summary:
            continue
        schema, counts = schemas[domain], summary[config].get("conditions_per_attribute", {})
        rows = [
            [
                a.name,
                SCHEMA_ROLE_HEADERS[a.role],
                counts.get(a.name, {}).get("P", 0),
                counts.get(a.name, {}).get("N", 0),
            ]
            for a in schema.attributes
        ]
        rows += [[name, "NOT IN SCHEMA", c["P"], c["N"]] for name, c in counts.items() if name not in schema.names]
        queries = max(summary[config]["queries"], 1)
        total = {p: sum(c.get(p, 0) for c in counts.values()) for p in n.POLARITIES}
        rows.append(
            ["all (per 1,000 queries)", "", round(1000 * total["P"] / queries), round(1000 * total["N"] / queries)]
        )
        rows.append(["paper A.4.1 (per 1,000)", "", *PAPER_CONDITIONS_PER_1000.values()])
        lines += [
            "",
            f"{n.DISPLAY_NAMES[config]} conditions per attribute (schema roles; modifiable budget "
            f"{schema.modifiable_budget})",
            "",
        ]
        lines += _table(["attribute", "role", "P", "N"], rows)
    return lines


def _skips(audit: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, Any]]:
    """Non-zero skip counters of the builders (unreadable images, skipped rows...)."""
    for key, value in audit.items():
        where = f"{path}.{key}" if path else str(key)
        if isinstance(value, Mapping):
            yield from _skips(value, where)
        elif key in ("unreadable", "too_small", "duplicates", "skipped", "skipped_rows") and value:
            yield where, value


def format_folder_audit(directory: str | os.PathLike) -> str:
    """The audit table of a written folder, its summary recomputed from the rows actually in the folder (a derived
    folder, e.g. a pool-scaled one, may carry its source's summary in audit.json)."""
    audit = folder.read_audit(directory)
    summary = summarize_folder(directory)
    return f"{Path(directory)}\n" + format_audit(audit, summary)
