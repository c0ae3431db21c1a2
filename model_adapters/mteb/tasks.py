"""TRIAD's configs and ARK's subtypes as mteb retrieval tasks read from a dataset folder.

One `AbsTaskRetrieval` subclass per TRIAD config (mteb reads `metadata` from the class) with the fixed pools as
`top_ranked`, and one ARK task whose subsets are the subtypes, each retrieving from its whole gallery. The main
score is the protocol's (`model_adapters.mteb.scores`), not mteb's stock `map_at_1000` / `recall_at_1`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from model_adapters.mteb import metadata as meta
from model_adapters.mteb.data import SplitData, local_folder, split_data
from triad_dataset.contract.errors import TriadError


def _base() -> type:
    from mteb.abstasks.retrieval import AbsTaskRetrieval

    class ProtocolRetrieval(AbsTaskRetrieval):
        """A task whose data comes from the run's planning code and whose main score is the protocol's."""

        folder: str = ""
        configs: tuple[str, ...] = ()
        query_images: bool = True
        candidate_images: bool = True

        def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
            if self.data_loaded:
                return
            self.splits: dict[str, SplitData] = {}
            self.dataset = {}
            for subset, data in self._load().items():
                self.splits[subset] = data
                self.dataset[subset] = {meta.SPLIT: cast(Any, data.mteb)}
            self.data_loaded = True

        def _load(self) -> dict[str, SplitData]:
            raise NotImplementedError

        def evaluate(self, model: Any, *args: Any, **kwargs: Any) -> Any:
            modalities = getattr(getattr(model, "mteb_model_meta", None), "modalities", None)
            self.sees_images = not modalities or "image" in modalities  # which inputs count as identical
            return super().evaluate(model, *args, **kwargs)

    return ProtocolRetrieval


def _triad_class(base: type, config: str, folder: str, revision: str) -> type:
    from model_adapters.mteb.scores import triad_scores
    from model_adapters.planning.plan import plan_triad
    from triad_dataset.contract.tasks import TASKS

    ours = TASKS[config]

    def _load(self: Any) -> dict[str, SplitData]:
        plan = plan_triad(self.folder, [config], variant="full", limit=None)
        self.gold = plan.configs[0].triad_gold()
        self._top_k = max(self._top_k, self.gold.mask.shape[1])  # mteb keeps its top_k: the whole pool must come back
        data = split_data(
            plan.items,
            plan.configs[0],
            query_images=self.query_images,
            candidate_images=self.candidate_images,
            pools=True,
        )
        return {"default": data}

    def task_specific_scores(
        self: Any, scores: Any, qrels: Any, results: Any, hf_split: str, hf_subset: str
    ) -> dict[str, float]:
        split = self.splits[hf_subset]
        same = split.same_input or {}
        return triad_scores(config, self.gold, split.pool_ids, same[self.sees_images], results)

    code = meta.category(ours.query_modalities, ours.candidate_modalities)
    return type(
        f"TRIAD_{config}",
        (base,),
        {
            "metadata": meta.task_metadata(
                ours,
                name=meta.TRIAD_PREFIX + config,
                folder=folder,
                revision=revision,
                main_score=meta.TRIAD_MAIN,
                code=code,
            ),
            "folder": folder,
            "configs": (config,),
            "query_images": code.startswith("i"),
            "candidate_images": "2i" in code,
            "_load": _load,
            "task_specific_scores": task_specific_scores,
        },
    )


def _ark_class(base: type, subtypes: Sequence[str], folder: str, revision: str) -> type:
    # "it2it": a gallery item may carry text beside its image (its `modality` column), and `triad run` feeds both
    from ark_dataset.tasks import TASKS
    from model_adapters.mteb.scores import ark_scores
    from model_adapters.planning.plan import plan_ark

    def _load(self: Any) -> dict[str, SplitData]:
        out = {}
        self.rows = {}
        for subtype in self.configs:
            plan = plan_ark(self.folder, [subtype], variant="full", limit=None)
            cp = plan.configs[0]
            self.rows[subtype] = cp.rows
            out[subtype] = split_data(plan.items, cp, query_images=True, candidate_images=True, pools=False)
        return out

    def task_specific_scores(
        self: Any, scores: Any, qrels: Any, results: Any, hf_split: str, hf_subset: str
    ) -> dict[str, float]:
        return ark_scores(hf_subset, self.rows[hf_subset], self.splits[hf_subset].pool_ids[0], results)

    return type(
        "ARK",
        (base,),
        {
            "metadata": meta.task_metadata(
                TASKS[subtypes[0]], name=meta.ARK_NAME, folder=folder, revision=revision, main_score=meta.ARK_MAIN,
                code="it2it", subsets=subtypes,
            ),
            "folder": folder,
            "configs": tuple(subtypes),
            "_load": _load,
            "task_specific_scores": task_specific_scores,
        },
    )  # fmt: skip


def _folder(folder: str, benchmark: str) -> tuple[str, str]:
    from triad_dataset.folder.io import benchmark_of, fingerprint

    path = local_folder(folder)
    found = benchmark_of(path)
    if found != benchmark:
        raise TriadError(f"{folder}: a {found} folder, not {benchmark}; use {found}_tasks")
    return path, fingerprint(path)[:12]


def triad_tasks(folder: str, configs: str | Sequence[str] = "main") -> list[Any]:
    """mteb tasks for a TRIAD dataset folder (local path or Hub id): one per config, the six main subsets by default.

    Args:
        folder: the dataset folder or its Hub id.
        configs: "main" (the six main subsets), "all" (with the reference configs), or config names.
    """
    from triad_dataset.contract import names

    path, revision = _folder(folder, "triad")
    chosen = (
        {"main": names.MAIN_CONFIGS, "all": names.TASK_CONFIGS}.get(configs, configs)
        if isinstance(configs, str)
        else configs
    )
    chosen = [chosen] if isinstance(chosen, str) else list(chosen)
    unknown = [c for c in chosen if c not in names.TASK_CONFIGS]
    if unknown:
        raise TriadError(f"{unknown[0]}: not a TRIAD task config; choose from {', '.join(names.TASK_CONFIGS)}")
    base = _base()
    return [_triad_class(base, c, path, revision)() for c in chosen]


def ark_tasks(folder: str, subtypes: str | Sequence[str] = "all") -> list[Any]:
    """The ARK task for an ARK dataset folder (local path or Hub id), its subtypes as subsets.

    Args:
        folder: the dataset folder or its Hub id.
        subtypes: "all" (the subtypes the folder holds) or subtype names.
    """
    from ark_dataset.names import SUBTYPES
    from triad_dataset.folder.io import list_configs

    path, revision = _folder(folder, "ark")
    held = [s for s in SUBTYPES if s in list_configs(path)]
    chosen = held if subtypes == "all" else [subtypes] if isinstance(subtypes, str) else list(subtypes)
    missing = [s for s in chosen if s not in held]
    if missing or not chosen:
        raise TriadError(f"{folder}: no ARK subtype {missing[0] if missing else ''} here; it holds {', '.join(held)}")
    return [_ark_class(_base(), chosen, path, revision)()]
