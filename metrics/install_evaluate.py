"""Makes `evaluate.load("triad-benchmark/triad_map")` and `.../ark_retrieval` work offline.

`evaluate.load("NS/name")` loads a community module: evaluate asks the Hub for the Space `NS/name`, and when that
fails offline it falls back to the newest cached copy in its modules cache:
`$HF_MODULES_CACHE/evaluate_modules/metrics/NS--<name>/<hash>/<name>.py`. This installer writes our module scripts
into that place under the namespace `NAMESPACE`, never `evaluate-metric`, the namespace of Hugging Face's own
metrics. The copy is named by evaluate's own `files_to_hash`. Run it again after changing a module: the newest copy
wins. The layout is evaluate 0.4's, the range setup.cfg allows, and `tests/metrics/test_metrics_evaluate.py` loads the
modules through it.

    python -m metrics.install_evaluate              # then, offline:
    HF_EVALUATE_OFFLINE=1 python -c 'import evaluate; print(evaluate.load("triad-benchmark/triad_map").name)'

A path needs no install: `evaluate.load(module_path("triad_map"))` works from any working directory.

>>> Path(module_path("triad_map")).name
'triad_map'
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

MODULES: tuple[str, ...] = ("triad_map", "ark_retrieval")
NAMESPACE = "triad-benchmark"  # evaluate.load("triad-benchmark/x"): a community namespace, the project's name
_HERE = Path(__file__).resolve().parent


def module_path(name: str) -> str:
    """Absolute path of one of this project's evaluate module folders (usable as `evaluate.load(path)`)."""
    if name not in MODULES:
        raise ValueError(f"unknown metric module {name!r}; valid: {', '.join(MODULES)}")
    return str(_HERE / name)


def install(modules_cache: str | None = None) -> list[str]:
    """Copy every module script and its card into evaluate's modules cache and return the scripts' paths.

    Args:
        modules_cache: evaluate's modules cache, by default its own setting, `$HF_MODULES_CACHE`, else
            ~/.cache/huggingface/modules.
    """
    from evaluate.loading import files_to_hash, init_dynamic_modules

    metrics_dir = Path(init_dynamic_modules(hf_modules_cache=modules_cache)) / "metrics"
    installed = []
    for name in MODULES:
        script = Path(module_path(name)) / f"{name}.py"
        module_dir = metrics_dir / f"{NAMESPACE}--{name}"
        copy_dir = module_dir / files_to_hash([str(script)])
        copy_dir.mkdir(parents=True, exist_ok=True)
        for package in (metrics_dir, module_dir, copy_dir):
            (package / "__init__.py").touch()
        shutil.copyfile(script.with_name("README.md"), copy_dir / "README.md")
        shutil.copyfile(script, copy_dir / script.name)  # written last: its time makes it the newest copy
        installed.append(str(copy_dir / script.name))
    return installed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules-cache", default=None, help="evaluate modules cache (default: $HF_MODULES_CACHE)")
    args = parser.parse_args(argv)
    for path in install(args.modules_cache):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
