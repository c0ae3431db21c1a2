"""`triad report`: one self-contained HTML file for one or two runs — scores, diagnostics, the worst queries.

The rankings are re-scored against the dataset folder with the shared metrics core (CONTRACTS §4), as the Space
scores a submission; each subset's number is shown beside the one the run's results.json states. Plots and
thumbnails are inlined as data URIs, so the file opens with no server and no network.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from spaces_app import chance as chance_mod
from spaces_app import explorer as ex
from spaces_app.explorer_html import page, pair_html, view_html
from spaces_app.gold import Gold, load_gold
from spaces_app.refusal import clip, short
from spaces_app.thumbs import SIZE, Thumbnails
from triad_dataset.contract import names as triad_names
from triad_dataset.contract.errors import TriadError

WORST: Final = 10  # worst queries shown per subset (and most-moved queries with two runs)
MAX_WORST: Final = 100  # the most a report shows per subset, so its size has a bound whatever the run's size
MAX_IMAGE_BYTES: Final = 32 * 2**20  # thumbnails inlined in all; later ones are left out, and the page says so
MATCH_TOL: Final = 1e-9


class ImageBudget:
    """Thumbnails as data URIs until they add up to `limit` bytes; the ones past it are left out and counted."""

    def __init__(self, thumbs: Thumbnails, limit: int = MAX_IMAGE_BYTES) -> None:
        self.thumbs, self.limit = thumbs, limit
        self.used = self.omitted = 0

    def data_uri(self, key: ex.ImageKey | None) -> str | None:
        """The thumbnail's data URI while the budget lasts, else None."""
        uri = self.thumbs.data_uri(key)
        if uri is None:
            return None
        if self.used + len(uri) > self.limit:
            self.omitted += 1
            return None
        self.used += len(uri)
        return uri


@dataclass
class Run:
    """A run folder: its results.json, its rankings per config, the name it is shown under."""

    path: Path
    results: dict[str, Any]
    rankings: dict[str, dict[str, ex.QueryRanking]]

    @property
    def name(self) -> str:
        model = self.results.get("model") or {}
        return str(model.get("name") or self.path.name)


def read_run(path: str | Path) -> Run:
    """A run folder written by `triad run` (results.json + rankings/*.parquet); TriadError naming what is missing."""
    from model_adapters.results.side_by_side import read_results

    path = Path(path)
    results = read_results(path)
    check_results(path / "results.json", results)
    files = sorted((path / "rankings").glob("*.parquet"))
    if not files:
        raise TriadError(f"{path}/rankings: no ranking files")
    return Run(path, results, {f.stem: ex.read_rankings(f) for f in files})


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def check_results(path: Path, results: Mapping[str, Any]) -> None:
    """Refuse a results.json whose fields the report reads have the wrong type, naming the first such field."""
    for key in ("model", "dataset"):
        if results.get(key) is not None and not isinstance(results[key], Mapping):
            raise TriadError(f"{path}: {key!r} is {short(results[key])}, not an object")
    metric = "map" if results.get("benchmark") == "triad" else "recall@1"
    for config, node in results["configs"].items():
        where = f"configs.{clip(config, 40)}"
        if not isinstance(node, Mapping):
            raise TriadError(f"{path}: {where} is {short(node)}, not an object")
        for part in ("metrics", "intervals"):
            if node.get(part) is not None and not isinstance(node[part], Mapping):
                raise TriadError(f"{path}: {where}.{part} is {short(node[part])}, not an object")
        value = (node.get("metrics") or {}).get(metric)
        if value is not None and not _number(value):
            raise TriadError(f"{path}: {where}.metrics.{metric} is {short(value)}, not a finite number")
        interval = (node.get("intervals") or {}).get(metric)
        if interval is not None and not (
            isinstance(interval, list) and len(interval) == 2 and all(map(_number, interval))
        ):
            raise TriadError(f"{path}: {where}.intervals.{metric} is {short(interval)}, not two numbers")


def _data_folder(runs: Sequence[Run], data: str | Path | None) -> Path:
    if data is not None:
        return Path(data)
    paths = {str((r.results.get("dataset") or {}).get("path") or "") for r in runs}
    if len(paths) != 1 or not next(iter(paths)):
        raise TriadError("the runs do not name one dataset folder in results.json; pass --data DIR")
    return Path(next(iter(paths)))


def _check_fingerprint(run: Run, gold: Gold) -> None:
    stated = (run.results.get("dataset") or {}).get("fingerprint")
    if stated and stated != gold.fingerprint:
        raise TriadError(
            f"{run.path}: ranked dataset {str(stated)[:12]}, but {gold.path} is {gold.fingerprint[:12]}; "
            "pass --data with the folder the run used"
        )


def score(run: Run, gold: Gold) -> dict[str, Any]:
    """The run's rankings scored against the gold by the shared metrics core (as the Space scores them)."""
    from metrics import scoring

    configs = [c for c in gold.rows if c in run.rankings]
    if gold.benchmark == "triad":
        rankings = {c: {q: list(r.candidate_ids) for q, r in run.rankings[c].items()} for c in configs}
        return scoring.score_triad({c: gold.rows[c] for c in configs}, rankings)
    ark = {
        s: {q: {"candidate_ids": list(r.candidate_ids), "positive_rank": r.positive_rank} for q, r in rk.items()}
        for s, rk in ((s, run.rankings[s]) for s in configs)
    }
    return scoring.score_ark({s: gold.rows[s] for s in configs}, ark)


def per_query(benchmark: str, summary: Mapping[str, Any], config: str) -> dict[str, float]:
    """query id -> AP (TRIAD) or reciprocal rank (ARK) from a scored summary."""
    node = summary.get(config) or {}
    if benchmark == "triad":
        return dict(node.get("per_query_ap") or {})
    return {q: 1.0 / r for q, r in (node.get("positive_rank") or {}).items()}


def _headline(benchmark: str, node: Mapping[str, Any]) -> tuple[float | None, list[float] | None]:
    metric = "map" if benchmark == "triad" else "recall@1"
    value = (node.get("metrics") or {}).get(metric)
    interval = (node.get("intervals") or {}).get(metric)
    return value, interval


def _cell(x: float | None) -> str:
    return "—" if x is None else f"{x:.4f}"


def scores_table(
    benchmark: str, runs: Sequence[Run], summaries: Sequence[Mapping[str, Any]], chance: Mapping[str, float]
) -> str:
    """Per subset: each run's number with its 95% interval, whether results.json states the same, chance."""
    metric = "mAP" if benchmark == "triad" else "R@1"
    head = "".join(f"<th>{html.escape(r.name)} {metric}</th><th>95% CI</th><th>results.json</th>" for r in runs)
    rows = []
    for config in [c for c in summaries[0] if isinstance(summaries[0][c], Mapping) and "metrics" in summaries[0][c]]:
        cells = []
        for run, summary in zip(runs, summaries, strict=True):
            value, interval = _headline(benchmark, summary.get(config) or {})
            stated, _ = _headline(benchmark, ((run.results.get("configs") or {}).get(config)) or {})
            same = stated is not None and value is not None and abs(stated - value) <= MATCH_TOL
            iv = f"{interval[0]:.4f}–{interval[1]:.4f}" if interval else "—"
            note = "same" if same else f"differs: {_cell(stated)}" if stated is not None else "not stated"
            cells.append(
                f'<td class="num" data-config="{config}">{_cell(value)}</td><td>{iv}</td>'
                f'<td class="{"ok" if same else "bad"}">{note}</td>'
            )
        label = triad_names.DISPLAY_NAMES.get(config, config)
        rows.append(f"<tr><td>{html.escape(label)}</td>{''.join(cells)}<td>{_cell(chance.get(config))}</td></tr>")
    return f'<table class="scores"><tr><th>Subset</th>{head}<th>chance</th></tr>{"".join(rows)}</table>'


def _png(fig: Any) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    return f'<img class="plot" alt="plot" src="data:image/png;base64,{base64.b64encode(buffer.getvalue()).decode()}">'


def plots_html(benchmark: str, subs: Sequence[Mapping[str, Any]], gold: Gold) -> str:
    """The Space's diagnostics plots for the first run (TRIAD) or every run (ARK), as inline PNGs."""
    from spaces_app import plots

    if benchmark == "ark":
        return "".join(
            _png(plots.ark_bars(subs, axis, chance_mod.ark_chance_by(gold, axis)))
            for axis in ("domain", "reasoning_skill")
        )
    sub = subs[0]
    chance = chance_mod.triad_chance(gold)
    figures = [
        plots.entry_rate_figure(sub),
        plots.depth_plot(sub, chance.get(triad_names.ABSTRACTION_CONFIGS[1])),
        plots.profile_plot(sub, chance),
        plots.dialogue_cost_plot(sub),
    ]
    return "".join(_png(f) for f in figures)


def _views(
    gold: Gold, corpus: ex.Corpus, runs: Sequence[Run], config: str, queries: Sequence[str], thumbs: ImageBudget
) -> str:
    rows = {r["query_id"]: r for r in gold.rows[config]}
    blocks = []
    for q in queries:
        views_ = [ex.query_view(gold.benchmark, corpus, config, rows[q], run.rankings[config][q]) for run in runs]
        if len(views_) == 1:
            blocks.append(view_html(views_[0], thumbs.data_uri))
        else:
            blocks.append(pair_html(views_, [r.name for r in runs], thumbs.data_uri))
    return "".join(blocks)


def build_report(
    run_dirs: Sequence[str | Path],
    *,
    data: str | Path | None = None,
    worst_n: int = WORST,
    thumbs_root: Path | None = None,
    max_image_bytes: int = MAX_IMAGE_BYTES,
) -> str:
    """The report's HTML for one run, or two runs compared (paired statistics, the queries that moved most).

    Args:
        run_dirs: one `triad run` folder, or two.
        data: the dataset folder the runs ranked (default: the path in results.json).
        worst_n: queries shown per subset, at most `MAX_WORST`.
        thumbs_root: where thumbnails are cached (default: `thumbs.default_root()`).
        max_image_bytes: thumbnails inlined in all; past it they are left out and the page says how many.
    """
    if not 1 <= len(run_dirs) <= 2:
        raise TriadError("triad report takes one run folder or two")
    if worst_n > MAX_WORST:
        raise TriadError(f"--worst {worst_n}: a report shows at most {MAX_WORST} queries per subset")
    runs = [read_run(p) for p in run_dirs]
    benchmarks = {r.results.get("benchmark") for r in runs}
    if len(benchmarks) != 1:
        raise TriadError("the two runs are of different benchmarks; compare TRIAD with TRIAD, ARK with ARK")
    gold = load_gold(_data_folder(runs, data))
    for run in runs:
        _check_fingerprint(run, gold)
    summaries = [score(r, gold) for r in runs]
    subs = [
        {"id": i + 1, "model_name": r.name, "summary": s} for i, (r, s) in enumerate(zip(runs, summaries, strict=True))
    ]
    benchmark = gold.benchmark
    chance = chance_mod.triad_chance(gold) if benchmark == "triad" else chance_mod.ark_chance(gold)
    corpus = ex.Corpus(gold.path)
    images = ImageBudget(Thumbnails(corpus, gold.fingerprint, thumbs_root), max_image_bytes)
    sections = [("scores", "Scores", scores_table(benchmark, runs, summaries, chance))]
    if len(runs) == 2 and benchmark == "triad":
        sections.append(("paired", "Paired comparison (A = first run, B = second)", _paired(subs, benchmark)))
    sections.append(("diagnostics", "Diagnostics", plots_html(benchmark, subs, gold)))
    for config in [c for c in gold.rows if all(c in r.rankings for r in runs)]:
        values = [per_query(benchmark, s, config) for s in summaries]
        if len(runs) == 1:
            title, queries = f"Worst {worst_n} queries", ex.worst(values[0], worst_n)
        else:
            title, queries = f"{worst_n} queries that moved most", ex.moved_most(values[0], values[1], worst_n)
        label = triad_names.DISPLAY_NAMES.get(config, config)
        sections.append((config, f"{label}: {title}", _views(gold, corpus, runs, config, queries, images)))
    head = [
        f"<h1>{html.escape(' vs '.join(r.name for r in runs))} on {benchmark.upper()}</h1>",
        _provenance(runs, gold),
        _size_line(worst_n, images),
        _contents(sections),
    ]
    body = [
        f'<h2 id="{key}">{html.escape(title)}<a class="top" href="#contents">↑ contents</a></h2>{part}'
        for key, title, part in sections
    ]
    return page("".join(head + body), f"TRIAD report: {' vs '.join(r.name for r in runs)}")


def _contents(sections: Sequence[tuple[str, str, str]]) -> str:
    """The table of contents: one link per section."""
    items = "".join(f'<li><a href="#{key}">{html.escape(title)}</a></li>' for key, title, _ in sections)
    return f'<nav id="contents" class="toc"><b>Contents</b><ol>{items}</ol></nav>'


def _size_line(worst_n: int, images: ImageBudget) -> str:
    """The report's stated size bound, and how many thumbnails it left out to keep it."""
    left_out = f" {images.omitted} thumbnails were left out to keep that bound." if images.omitted else ""
    return (
        f'<p class="bound">Size bound: {worst_n} queries per subset (at most {MAX_WORST}: --worst), each with its '
        f"top {ex.TOP_K} candidates; {SIZE}-px thumbnails, inlined up to {images.limit / 2**20:g} MiB in all."
        f"{left_out}</p>"
    )


def _paired(subs: Sequence[Mapping[str, Any]], benchmark: str) -> str:
    from spaces_app import views

    lookup = {s["id"]: s["summary"] for s in subs}
    table = views.paired_comparison(subs[0], subs[1], lambda sid, c: per_query(benchmark, lookup[sid], c))
    return table.to_html(index=False, border=0, classes="scores")


def _provenance(runs: Sequence[Run], gold: Gold) -> str:
    lines = []
    for run in runs:
        model = run.results.get("model") or {}
        lines.append(
            f"<li>{html.escape(run.name)}: source {html.escape(str(model.get('source')))}, revision "
            f"{html.escape(str(model.get('revision')))}, run folder {html.escape(str(run.path))}</li>"
        )
    lines.append(f"<li>dataset {html.escape(str(gold.path))} (fingerprint {gold.fingerprint[:12]})</li>")
    return f"<ul>{''.join(lines)}</ul>"


def write_report(run_dirs: Sequence[str | Path], out: str | Path, **kwargs: Any) -> Path:
    """Build the report and write it atomically to `out`, with the permissions the umask gives any new file."""
    from model_adapters.atomic import atomic_write

    text = build_report(run_dirs, **kwargs)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, text.encode("utf-8"))
    return out
