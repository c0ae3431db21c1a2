"""Task metadata without data: every TRIAD config and ARK subtype as a `TaskMetadata`, its chance level computed
from the paper edition's counts, and `triad list configs` printing them with no folder."""

from __future__ import annotations

from fractions import Fraction

import pytest

from ark_dataset import names as ark_names
from ark_dataset.tasks import TASKS as ARK_TASKS
from triad_cli.main import main
from triad_dataset.contract import names as n
from triad_dataset.contract.chance import random_map
from triad_dataset.contract.tasks import MAIN_CHANCE_RANGE, TASKS, TaskMetadata


def _exact_random_ap(pool: int, positives: Fraction) -> Fraction:
    """E[AP] of a random ranking, summed term by term over ranks j: P(rank j positive) * E[precision@j | it is]."""
    total = Fraction(0)
    for j in range(1, pool + 1):
        total += Fraction(1, pool) * (1 + Fraction(j - 1) * (positives - 1) / (pool - 1)) / j
    return total


def test_every_config_and_subtype_has_its_metadata() -> None:
    assert tuple(TASKS) == n.TASK_CONFIGS and tuple(ARK_TASKS) == ark_names.SUBTYPES
    for task in [*TASKS.values(), *ARK_TASKS.values()]:
        assert isinstance(task, TaskMetadata) and task.description and task.paper_name and task.source
        assert task.main_score == ("map" if task.benchmark == "triad" else "recall@1")
    assert [TASKS[c].paper_name for c in n.MAIN_CONFIGS] == [n.DISPLAY_NAMES[c] for c in n.MAIN_CONFIGS]
    assert {TASKS[c].queries for c in n.MAIN_CONFIGS} == {1000} and TASKS["same_cars"].queries == 500
    assert ARK_TASKS["calendar"].group == "humanities_social_science"


@pytest.mark.parametrize(
    ("config", "mean_positives"),
    [("abstraction_i2c", Fraction(177, 100)), ("abstraction_c2i", Fraction(5)), ("self_c2i", Fraction(1)),
     ("same_fashion", Fraction(1021, 500)), ("same_cars", Fraction(2578, 500))],
)  # fmt: skip
def test_chance_is_the_random_ranking_map_of_the_paper_counts(config: str, mean_positives: Fraction) -> None:
    task = TASKS[config]
    assert task.mean_positives == pytest.approx(float(mean_positives))
    # AP's chance is linear in the positive count: the mean over the edition equals the AP at the mean count
    assert task.chance == pytest.approx(float(_exact_random_ap(1000, mean_positives)), rel=1e-12)
    if config in n.MAIN_CONFIGS:  # TRIAD B.1: random-ranking mAP of the main subsets is 0.008-0.011
        assert MAIN_CHANCE_RANGE[0] <= round(task.chance, 3) <= MAIN_CHANCE_RANGE[1]


def test_chance_is_missing_where_the_paper_states_no_count() -> None:
    assert all(TASKS[c].chance is None for c in n.CONSTRAINTS_CONFIGS + n.STATE_CONFIGS)
    assert ARK_TASKS["comic"].chance == 1 / 3468 and ARK_TASKS["comic"].queries == 87  # ARK B.4
    assert [s for s, t in ARK_TASKS.items() if t.chance is not None] == ["comic"]


def test_random_map_over_even_shapes_equals_any_spread_of_the_same_total() -> None:
    spread = [(1000, 1)] * 300 + [(1000, 2)] * 300 + [(1000, 5)] * 400  # 2,900 positives over 1,000 queries
    even = TaskMetadata("x", "triad", "X", "g", "d", None, None, "map", 1000, 1000, 2900, "s", "r").chance
    assert even == pytest.approx(random_map(spread), rel=1e-12)


def test_list_configs_without_a_folder_prints_the_papers_tasks(capsys) -> None:
    assert main(["list", "configs"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "TRIAD tasks (paper edition)" and "ARK subtypes (paper edition)" in lines
    row = next(line.split() for line in lines if line.startswith("abstraction_c2i "))
    assert row == ["abstraction_c2i", "C2I", "abstraction", "text", "->", "image+text", "map", "1,000", "1,000", "5",
                   f"{TASKS['abstraction_c2i'].chance:.3g}"]  # fmt: skip
    comic = next(line.split() for line in lines if line.startswith("comic "))
    assert comic[-4:] == ["87", "3,468", "1", f"{1 / 3468:.3g}"]
    assert next(line for line in lines if line.startswith("state_cars ")).split()[-2:] == ["—", "—"]
    for task in [*TASKS.values(), *ARK_TASKS.values()]:
        assert f"  {task.description}" in out
