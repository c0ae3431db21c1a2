"""Check that the project's artifacts work outside the repository.

    python scripts/check_artifacts.py [--work DIR] [--skip-run]

1. the wheel (`pip wheel --no-deps .`) holds the six packages and declares the `triad` command only (no test
   double, no `triad.models` row); it installs into a fresh virtual environment, and from a working directory
   outside the repository `triad build mini` and `triad run --model minilm --limit 5` work from it;
2. each evaluate module's Space folder, written from the wheel by `python -m metrics.space_folder`, loads with
   `evaluate.load(<that dir>)` and computes with no project package importable (it carries the code it runs), and
   its requirements.txt names packages of a public index only;
3. `triad space bundle --out DIR` (run from the wheel) writes a Space folder; without gold its app refuses to start
   (exit 2, naming --data), and with `--gold-triad` (the mini edition) it starts from that folder alone.

The virtual environment sees the running interpreter's packages for the heavy dependencies (torch, transformers,
evaluate, gradio): `--system-site-packages` plus a .pth file naming this interpreter's site-packages, so that it
works from inside a virtual environment too. Every check asserts that the project itself is imported from the wheel
(or the Space folder), never from the source tree or the editable install. Each step prints one line; the exit status is 1 when any fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import site
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("triad_dataset", "ark_dataset", "metrics", "model_adapters", "spaces_app", "triad_cli")
MODULES = ("triad_map", "ark_retrieval")


class CheckFailed(Exception):
    """One artifact check failed; the message says which and why."""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing may come from the source tree
    env.update(
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        HF_EVALUATE_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        GRADIO_ANALYTICS_ENABLED="False",
        TOKENIZERS_PARALLELISM="false",
    )
    return env


def _run(cmd: list[str], cwd: Path, timeout: int = 900) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise CheckFailed(f"{' '.join(cmd[:4])} ... exited {done.returncode}: {(done.stderr or done.stdout)[-1500:]}")
    return done.stdout


def _inside(path: str, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


def build_wheel(work: Path) -> Path:
    out = work / "wheel"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        cwd=work,
    )
    wheels = sorted(out.glob("triad_benchmark-*.whl"))
    if len(wheels) != 1:
        raise CheckFailed(f"{out}: expected one triad_benchmark wheel, found {[w.name for w in wheels]}")
    with zipfile.ZipFile(wheels[0]) as wheel:
        tops = {n.split("/")[0] for n in wheel.namelist()}
    others = sorted(t for t in tops - set(PACKAGES) if not t.endswith(".dist-info"))
    if others:  # the test doubles live in tests/, never in the wheel
        raise CheckFailed(f"{wheels[0].name}: holds {others} besides the packages {PACKAGES}")
    return wheels[0]


def outer_site_dirs() -> list[str]:
    """The running interpreter's site-packages folders (a virtual environment's own, then its base's when it sees
    them), which a venv made from here must see: `--system-site-packages` alone reaches only the base interpreter."""
    dirs = [*site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [d for d in dict.fromkeys(dirs) if Path(d).is_dir()]


def expose_outer_packages(python: Path) -> Path:
    """Write a .pth file into the venv of `python` listing `outer_site_dirs()`; they come after the venv's own
    folder, so what is installed into the venv (the wheel) still wins."""
    inner = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
        env=_env(),
    ).stdout.strip()
    pth = Path(inner) / "_triad_outer_env.pth"
    pth.write_text(
        "".join(f"{d}\n" for d in outer_site_dirs() if Path(d).resolve() != Path(inner).resolve()), encoding="utf-8"
    )
    return pth


def make_venv(work: Path, wheel: Path) -> Path:
    venv = work / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], cwd=work)
    python = venv / "bin" / "python"
    expose_outer_packages(python)
    # --ignore-installed: the machine's editable install of the same version must not satisfy the wheel
    _run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--ignore-installed", str(wheel)],
        cwd=work,
    )
    probe = (
        f"import json, importlib; print(json.dumps({{p: importlib.import_module(p).__file__ for p in {PACKAGES!r}}}))"
    )
    files = json.loads(_run([str(python), "-c", probe], cwd=work))
    outside = {p: f for p, f in files.items() if not _inside(f, venv)}
    if outside:
        raise CheckFailed(f"not imported from the wheel: {outside}")
    probe = (
        "from importlib.metadata import distribution as d; print([e.value for e in d('triad-benchmark').entry_points])"
    )
    declared = _run([str(python), "-c", probe], cwd=work).strip()
    if declared != "['triad_cli.main:main']":  # the `triad` command only: no `triad.models` rows such as test models
        raise CheckFailed(f"the wheel declares entry points {declared}, expected the triad command only")
    return python


def check_cli(work: Path, python: Path) -> str:
    triad = python.parent / "triad"
    run_dir = work / "cli"
    run_dir.mkdir()
    _run([str(triad), "build", "mini", "--out", str(run_dir / "mini")], cwd=run_dir)
    _run(
        [
            str(triad),
            "run",
            "--model",
            "minilm",
            "--data",
            str(run_dir / "mini"),
            "--out",
            str(run_dir / "run"),
            "--limit",
            "5",
            "--cache-dir",
            str(run_dir / "cache"),
        ],
        cwd=run_dir,
    )
    results = json.loads((run_dir / "run" / "results.json").read_text(encoding="utf-8"))
    configs = results.get("configs", {})
    counts = {c: v.get("n_queries") for c, v in configs.items()}
    if results.get("benchmark") != "triad" or not counts or set(counts.values()) != {5}:
        raise CheckFailed(f"{run_dir / 'run' / 'results.json'}: unexpected content {counts}")
    return f"{len(counts)} configs x 5 queries"


_LOAD_MODULE = (
    (
        f"import sys\nfor package in {PACKAGES!r}:  # the folder must carry the project code it runs\n"
        "    sys.modules[package] = None\n"
    )
    + """
import json
import evaluate
module = evaluate.load(sys.argv[1])
out = module.compute(predictions=[[0.9, 0.2, 0.4], [0.1, 0.8, 0.3]], references=[[0, 0, 1], [0, 1, 0]])
print(json.dumps({"name": module.name, "keys": sorted(out)}))
"""
)


def check_modules(work: Path, python: Path) -> str:
    """Each metric module's Space folder, written from the wheel, loads and computes with no project package
    importable, and its requirements are packages of a public index only."""
    seen = []
    for name in MODULES:
        folder = work / "modules" / name
        _run([str(python), "-m", "metrics.space_folder", name, "--out", str(folder)], cwd=work)
        info = json.loads(_run([str(python), "-c", _LOAD_MODULE, str(folder)], cwd=work).strip().splitlines()[-1])
        if info["name"] != name:
            raise CheckFailed(f"{folder}: loaded {info['name']}, not {name}")
        lines = [line.split("#")[0].strip() for line in (folder / "requirements.txt").read_text().splitlines()]
        project = [line for line in lines if line.startswith(("--", "triad-benchmark", "."))]
        if project:
            raise CheckFailed(f"{folder}/requirements.txt: not a public-index requirement: {project}")
        seen.append(f"{name} ({len(info['keys'])} outputs)")
    return ", ".join(seen) + ", each from its Space folder alone"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class App:
    """The bundled app started in its folder; its output goes to `log`."""

    proc: subprocess.Popen
    port: int
    log: Path

    def output(self, tail: int = 1500) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-tail:]


def _start_app(space: Path, python: Path, work: Path, name: str) -> App:
    port, log = _free_port(), work / f"{name}.log"
    env = {k: v for k, v in _env().items() if k not in ("TRIAD_SPACE_DATA", "TRIAD_SPACE_ARK_DATA")}  # its own gold
    env.update(GRADIO_SERVER_PORT=str(port), TRIAD_SPACE_DB=str(work / f"{name}.sqlite"))
    with log.open("w") as out:
        proc = subprocess.Popen([str(python), "app.py"], cwd=space, env=env, stdout=out, stderr=subprocess.STDOUT)
    return App(proc, port, log)


def _wait_up(app: App, space: Path) -> str:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if app.proc.poll() is not None:
            raise CheckFailed(f"{space}/app.py exited {app.proc.returncode}: {app.output()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{app.port}/config", timeout=5) as response:
                if response.status == 200 and b"TRIAD leaderboard" in response.read():
                    return f"app up on port {app.port}"
        except OSError:
            pass
        time.sleep(2)
    raise CheckFailed(f"{space}/app.py: no answer on port {app.port} within 300 s")


def _bundle(work: Path, python: Path, name: str, *gold: str) -> Path:
    space = work / name
    _run([str(python.parent / "triad"), "space", "bundle", "--out", str(space), *gold], cwd=work)
    for required in ("README.md", "requirements.txt", "app.py", "spaces_app/app.py", "triad_dataset/contract/names.py"):
        if not (space / required).is_file():
            raise CheckFailed(f"{space}: {required} missing")
    if "app_file: app.py" not in (space / "README.md").read_text(encoding="utf-8"):
        raise CheckFailed(f"{space}/README.md: the Space YAML does not name app.py")
    probe = (
        "import json, sys; sys.path.insert(0, '.'); import spaces_app.app, triad_dataset, ark_dataset, metrics; "
        "print(json.dumps([m.__file__ for m in (spaces_app.app, triad_dataset, ark_dataset, metrics)]))"
    )
    files = json.loads(_run([str(python), "-c", probe], cwd=space).strip().splitlines()[-1])
    if not all(_inside(f, space) for f in files):
        raise CheckFailed(f"{space}: the app imports code from outside the Space folder: {files}")
    return space


def check_space(work: Path, python: Path) -> str:
    """Without gold the bundled app refuses to start (exit 2, naming --data: docs/space.md); with the mini edition
    bundled as its gold (`--gold-triad`) it starts from the folder alone and answers on its port."""
    bare = _bundle(work, python, "space")
    if (bare / "gold").exists():
        raise CheckFailed(f"{bare}: gold data bundled although none was asked for")
    app = _start_app(bare, python, work, "space-bare")
    try:
        app.proc.wait(timeout=300)
    except subprocess.TimeoutExpired:
        app.proc.terminate()
        raise CheckFailed(f"{bare}/app.py started without any gold folder") from None
    if app.proc.returncode != 2 or "no gold dataset folder found" not in app.output():
        raise CheckFailed(f"{bare}/app.py without gold: exit {app.proc.returncode}, {app.output(500)}")
    gold = work / "cli" / "mini"
    if not (gold / "README.md").is_file():  # --skip-run: no mini edition built by the cli check
        _run([str(python.parent / "triad"), "build", "mini", "--out", str(work / "space-gold")], cwd=work)
        gold = work / "space-gold"
    space = _bundle(work, python, "space-gold-bundle", "--gold-triad", str(gold))
    if not (space / "gold" / "triad" / "README.md").is_file():
        raise CheckFailed(f"{space}: --gold-triad did not copy the gold folder into gold/triad")
    app = _start_app(space, python, work, "space")
    try:
        return "without gold: refused (exit 2); with --gold-triad: " + _wait_up(app, space)
    finally:
        app.proc.terminate()
        app.proc.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", help="work folder (default: a new temporary folder, removed afterwards)")
    parser.add_argument("--skip-run", action="store_true", help="skip `triad build mini` + `triad run` (the slow part)")
    args = parser.parse_args(argv)
    work = Path(args.work or tempfile.mkdtemp(prefix="triad-artifacts-"))
    work.mkdir(parents=True, exist_ok=True)
    if _inside(str(work), ROOT):
        print(f"check_artifacts: {work} is inside the repository; pick a folder outside it", file=sys.stderr)
        return 2
    failed = 0
    try:
        start = time.monotonic()
        wheel = build_wheel(work)
        python = make_venv(work, wheel)
        print(
            f"ok   wheel {wheel.name} installed in a fresh venv; every package imports from it "
            f"({time.monotonic() - start:.0f} s)"
        )
        steps = [("modules", lambda: check_modules(work, python)), ("space", lambda: check_space(work, python))]
        if not args.skip_run:
            steps.insert(0, ("cli", lambda: check_cli(work, python)))
        for label, step in steps:
            start = time.monotonic()
            try:
                print(f"ok   {label}: {step()} ({time.monotonic() - start:.0f} s)", flush=True)
            except (CheckFailed, subprocess.TimeoutExpired) as exc:
                failed += 1
                print(f"FAIL {label}: {exc}", flush=True)
    except (CheckFailed, subprocess.TimeoutExpired) as exc:
        print(f"FAIL wheel: {exc}")
        failed += 1
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
