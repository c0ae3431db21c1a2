"""Make `evaluate.load("triad-benchmark/triad_map")` / `evaluate.load("triad-benchmark/ark_retrieval")` work offline.

`evaluate.load("NS/name")` is a community module: evaluate asks the Hub for the Space `NS/name`, and when that fails
(offline) falls back to the newest cached copy in its modules cache:
`$HF_MODULES_CACHE/evaluate_modules/metrics/NS--<name>/<hash>/<name>.py`. This installer writes our module scripts
into exactly that place, under the namespace `NAMESPACE` (never `evaluate-metric`, the namespace of Hugging Face's
own metrics), with evaluate's own cache writer (the function a Hub download uses). Run it again after changing a
module: the newest copy wins.

    python -m metrics.install_evaluate              # then, offline:
    HF_EVALUATE_OFFLINE=1 python -c 'import evaluate; print(evaluate.load("triad-benchmark/triad_map").name)'

A path needs no install: `evaluate.load(module_path("triad_map"))` works from any working directory.

>>> Path(module_path("triad_map")).name
'triad_map'
"""

from __future__ import annotations

import argparse
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
    """Copy every module script (and its card) into evaluate's modules cache; returns the installed script paths.

    ``modules_cache`` defaults to evaluate's own setting (``$HF_MODULES_CACHE``, else ~/.cache/huggingface/modules).
    """
    from evaluate.loading import DownloadMode, _create_importable_file, init_dynamic_modules

    dynamic_modules_path = init_dynamic_modules(hf_modules_cache=modules_cache)
    installed = []
    for name in MODULES:
        folder = Path(module_path(name))
        module, _ = _create_importable_file(
            local_path=str(folder / f"{name}.py"),
            local_imports=[],
            additional_files=[("README.md", str(folder / "README.md"))],
            dynamic_modules_path=dynamic_modules_path,
            module_namespace="metrics",
            name=f"{NAMESPACE}/{name}",
            download_mode=DownloadMode.REUSE_DATASET_IF_EXISTS,
        )
        installed.append(str(Path(dynamic_modules_path).parent / Path(*module.split("."))) + ".py")
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
