"""Run outputs (CONTRACTS §3): rankings parquet files and results.json, written into a temporary folder inside
OUTDIR and moved into place only when everything succeeded (never a partial results file), plus the tables."""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

RANKINGS: Final = "rankings"
FIRST_STAGE: Final = "rankings_first_stage"
RESULTS: Final = "results.json"


class StagedOutput:
    """Collects files in OUTDIR/.partial-*/ and commits them with renames."""

    def __init__(self, out_dir: str | os.PathLike[str]) -> None:
        self.out = Path(out_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(dir=self.out, prefix=".partial-"))

    def write_rankings(self, config: str, table: Any, *, first_stage: bool = False) -> None:
        import pyarrow.parquet as pq

        folder = self.tmp / (FIRST_STAGE if first_stage else RANKINGS)
        folder.mkdir(exist_ok=True)
        pq.write_table(table, folder / f"{config}.parquet")

    def write_results(self, results: Mapping[str, Any]) -> None:
        text = json.dumps(_clean(results), indent=2, ensure_ascii=False, allow_nan=False)
        (self.tmp / RESULTS).write_text(text + "\n", encoding="utf-8")

    def commit(self) -> Path:
        """Move rankings folders, then results.json, into OUTDIR (old ones replaced)."""
        (self.out / RESULTS).unlink(missing_ok=True)  # the old results never describe the new rankings
        for name in (RANKINGS, FIRST_STAGE):
            target = self.out / name
            if target.exists():
                trash = Path(tempfile.mkdtemp(dir=self.out, prefix=".old-"))
                os.replace(target, trash / name)
                shutil.rmtree(trash, ignore_errors=True)
            if (self.tmp / name).exists():
                os.replace(self.tmp / name, target)
        os.replace(self.tmp / RESULTS, self.out / RESULTS)
        self.discard()
        return self.out / RESULTS

    def discard(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def _clean(value: Any) -> Any:
    """JSON-safe copy: numpy scalars to Python, NaN to None (JSON has no NaN)."""
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _fmt(x: Any) -> str:
    return "—" if x is None else f"{x:.4f}"


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns under a header and a rule of dashes."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def triad_table(configs: Mapping[str, Any]) -> str:
    """mAP [95% CI], chance mAP, top-1 hit and MRR per config (no aggregate over subsets, docs/protocol.md §4)."""
    from triad_dataset.contract.names import DISPLAY_NAMES

    rows = []
    for config, res in configs.items():
        m, (lo, hi) = res["metrics"], res["intervals"]["map"]
        rows.append(
            [
                config,
                DISPLAY_NAMES.get(config, config),
                str(res["n_queries"]),
                _fmt(m["map"]),
                f"[{_fmt(lo)}, {_fmt(hi)}]",
                _fmt(res.get("chance")),
                _fmt(m.get("top1_hit")),
                _fmt(m.get("mrr")),
            ]
        )
    return text_table(["config", "name", "queries", "mAP", "95% CI", "chance", "top1", "MRR"], rows)


def ark_table(configs: Mapping[str, Any], macro: Mapping[str, Any] | None) -> str:
    """Recall@1 (primary) with its chance level, R@5, R@10, nDCG@10 per subtype and the macro average (ARK)."""
    rows = []
    for subtype, res in configs.items():
        m = res["metrics"]
        rows.append(
            [
                subtype,
                str(res["n_queries"]),
                _fmt(m["recall@1"]),
                _fmt(res.get("chance")),
                _fmt(m["recall@5"]),
                _fmt(m["recall@10"]),
                _fmt(m["ndcg@10"]),
            ]
        )
    if macro:
        m = macro["metrics"]
        levels = [res["chance"] for res in configs.values() if res.get("chance") is not None]
        level = sum(levels) / len(levels) if levels and len(levels) == len(configs) else None
        cells = [_fmt(m["recall@1"]), _fmt(level), _fmt(m["recall@5"]), _fmt(m["recall@10"]), _fmt(m["ndcg@10"])]
        rows.append(["macro", "", *cells])
    return text_table(["subtype", "queries", "R@1", "chance", "R@5", "R@10", "nDCG@10"], rows)


def summary_table(run: Mapping[str, Any]) -> str:
    rows = [
        [c, str(v["queries"]), str(v["pool_slots"]), str(v["distinct_items"])] for c, v in run["per_config"].items()
    ]
    head = text_table(["config", "queries", "pool slots", "distinct items"], rows)
    t = run["timings_s"]
    return (
        f"{head}\ndistinct items {run['distinct_items']} (pool slots {run['pool_slots']}) · cache hits "
        f"{run['cache_hits']} · encoded {run['encoded']} · corrupted cache shards rebuilt "
        f"{len(run['corrupted_cache_shards'])} · images skipped {len(run['images_skipped'])}\n"
        + "time: "
        + ", ".join(f"{k} {v:.2f}s" for k, v in t.items())
    )


def written_lines(out_dir: str | os.PathLike[str], results: Mapping[str, Any]) -> list[str]:
    """Where the run's files are, and whether it can be submitted (a `--limit` run cannot)."""
    out = Path(out_dir).resolve()
    n = len(list((out / RANKINGS).glob("*.parquet")))
    lines = [f"results:  {out / RESULTS}", f"rankings: {out / RANKINGS}/ ({n} files)"]
    if (out / FIRST_STAGE).exists():
        lines.append(f"first-stage rankings: {out / FIRST_STAGE}/")
    if results.get("complete") is False:
        limit = (results.get("run") or {}).get("limit")
        lines.append(
            f"PARTIAL RUN (--limit {limit}: only the first {limit} queries of each config): not comparable "
            "to full runs and not submittable to the leaderboard"
        )
    else:
        name = (results.get("model") or {}).get("name", "NAME")
        lines.append(
            f"submit: upload {out / RANKINGS}/*.parquet and {out / RESULTS} to the leaderboard Space, or "
            f"locally: triad space --submit {shlex.quote(str(out))} --model-name {shlex.quote(str(name))}"
        )
    return lines
