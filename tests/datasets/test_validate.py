"""`triad_dataset.folder.validate`: each check, with a toy folder that breaks exactly that check.

The toy folder (tests/toy_triad.py) is valid; every test corrupts one thing and asserts the exact violation lines.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from datasets import Value

from tests.toy_triad import TOY_POOL, png, toy_audit, toy_tables, write_toy
from triad_dataset.contract import names as n
from triad_dataset.contract.errors import TriadError
from triad_dataset.contract.features import all_features
from triad_dataset.folder.io import write_folder
from triad_dataset.folder.validate import mentions, validate_folder

Tables = dict[str, list[dict[str, Any]]]
B_FASHION, B_CARS = n.CONSTRAINTS_CONFIGS
C_FASHION, C_CARS = n.STATE_CONFIGS
SAME_FASHION, SAME_CARS = n.SAME_CONFIGS
I2C, C2I = n.ABSTRACTION_CONFIGS
SELF_I2C, SELF_C2I = n.SELF_CONFIGS
FASHION_ITEMS, CARS_ITEMS = (n.DOMAIN_CORPUS[d] for d in n.DOMAINS)


def check(tmp_path: Path, mutate: Callable[[Tables], None], **kwargs: Any) -> list[str]:
    tables = toy_tables()
    mutate(tables)
    return validate_folder(write_toy(tmp_path / "triad", tables, **kwargs))


def query(tables: Tables, config: str) -> dict[str, Any]:
    return tables[config][0]


def test_the_toy_folder_is_valid(tmp_path: Path) -> None:
    assert check(tmp_path, lambda t: None) == []


# --- pools ----------------------------------------------------------------------------------------------------


def test_pool_size(tmp_path: Path) -> None:
    def drop_last(t: Tables) -> None:
        q = query(t, B_CARS)
        for column in ("candidate_ids", "candidate_roles", "candidate_trap"):
            q[column] = q[column][:-1]

    assert check(tmp_path, drop_last) == [f"{B_CARS} / cars-q0: pool has 5 candidates, audit pool_size is {TOY_POOL}"]


def test_full_corpus_pools_skip_the_size_check(tmp_path: Path) -> None:
    def grow(t: Tables) -> None:
        q = query(t, B_CARS)
        q["candidate_ids"] = q["candidate_ids"] + ["cars-08"]
        q["candidate_roles"] = q["candidate_roles"] + [n.RANDOM]
        q["candidate_trap"] = q["candidate_trap"] + [False]

    assert check(tmp_path, grow, audit={**toy_audit(), "pool_size": None}) == []


def test_duplicate_candidate(tmp_path: Path) -> None:
    def duplicate(t: Tables) -> None:
        query(t, B_FASHION)["candidate_ids"][5] = "fashion-05"

    assert check(tmp_path, duplicate) == [f"{B_FASHION} / fashion-q0: duplicate candidates 'fashion-05'"]


def test_own_image_in_pool(tmp_path: Path) -> None:
    def own(t: Tables) -> None:
        query(t, SAME_FASHION)["candidate_ids"][5] = "fashion-00"

    assert check(tmp_path, own) == [f"{SAME_FASHION} / fashion-s0: the query's own image 'fashion-00' is in its pool"]


def test_positive_ids_equal_positive_roles(tmp_path: Path) -> None:
    def more(t: Tables) -> None:
        query(t, I2C)["candidate_roles"][2] = n.POSITIVE

    assert check(tmp_path, more) == [
        f"{I2C} / i2c-0: positive_ids 'n00000020', 'n00000010' differ from the positive-role candidates "
        "'n00000020', 'n00000010', 'n00000030'"
    ]


def test_aligned_list_lengths(tmp_path: Path) -> None:
    def short(t: Tables) -> None:
        query(t, SAME_CARS)["candidate_trap"] = [False] * 4

    assert check(tmp_path, short) == [
        f"{SAME_CARS} / cars-s0: list lengths differ: candidate_ids 6, candidate_roles 6, candidate_trap 4"
    ]


def test_unknown_role(tmp_path: Path) -> None:
    def odd(t: Tables) -> None:
        query(t, SAME_CARS)["candidate_roles"][2] = "mystery"

    assert check(tmp_path, odd) == [f"{SAME_CARS} / cars-s0: unknown candidate roles 'mystery'"]


def test_candidate_ids_present_in_corpus(tmp_path: Path) -> None:
    def ghost(t: Tables) -> None:
        query(t, SAME_FASHION)["candidate_ids"][5] = "fashion-99"

    assert check(tmp_path, ghost) == [
        f"{SAME_FASHION} / fashion-s0: 1 candidate ids not in {FASHION_ITEMS}: 'fashion-99'"
    ]


def test_query_image_id_present_in_corpus(tmp_path: Path) -> None:
    def ghost(t: Tables) -> None:
        query(t, SAME_FASHION)["query_image_id"] = "fashion-98"

    assert check(tmp_path, ghost) == [f"{SAME_FASHION} / fashion-s0: query image 'fashion-98' not in {FASHION_ITEMS}"]


def test_query_image_is_the_corpus_picture(tmp_path: Path) -> None:
    def other(t: Tables) -> None:
        query(t, SAME_CARS)["query_image"] = {"bytes": png(999), "path": None}

    assert check(tmp_path, other) == [f"{SAME_CARS} / cars-s0: query_image is not the picture of 'cars-00'"]


def test_text_only_query_carries_no_image(tmp_path: Path) -> None:
    def picture(t: Tables) -> None:
        query(t, C2I)["query_image"] = {"bytes": png(1), "path": None}

    assert check(tmp_path, picture) == [f"{C2I} / c2i-0: text-only query carries a query image"]


def test_duplicate_query_id_and_task_name(tmp_path: Path) -> None:
    def twice(t: Tables) -> None:
        t[SAME_CARS].append(dict(query(t, SAME_CARS)))
        query(t, SAME_FASHION)["task"] = SAME_CARS

    assert check(tmp_path, twice) == [
        f"{SAME_FASHION} / fashion-s0: task '{SAME_CARS}' is not the config name",
        f"{SAME_CARS} / cars-s0: empty or duplicate query_id",
    ]


# --- task-specific fields ---------------------------------------------------------------------------------------


def test_i2c_hops(tmp_path: Path) -> None:
    def hops(t: Tables) -> None:
        query(t, I2C)["positive_hops"] = [1, 3]

    assert check(tmp_path, hops) == [f"{I2C} / i2c-0: positive_hops [1, 3] outside (1, 2)"]

    def misaligned(t: Tables) -> None:
        query(t, I2C)["positive_hops"] = [1]

    assert check(tmp_path / "b", misaligned) == [f"{I2C} / i2c-0: positive_hops [1] not aligned with 2 positive_ids"]


def test_c2i_has_five_positives(tmp_path: Path) -> None:
    def four(t: Tables) -> None:
        q = query(t, C2I)
        q["candidate_roles"][4] = n.SIBLING
        q["positive_ids"] = q["positive_ids"][:4]

    assert check(tmp_path, four) == [f"{C2I} / c2i-0: 4 positives, C2I fixes 5 (paper A.1)"]


def test_instruction_is_the_task_instruction(tmp_path: Path) -> None:
    def swap(t: Tables) -> None:
        query(t, I2C)["instruction"] = n.C2I_INSTRUCTION
        query(t, B_CARS)["instruction"] = "Represent the user's input."

    assert check(tmp_path, swap) == [
        f"{I2C} / {query(toy_tables(), I2C)['query_id']}: instruction {n.C2I_INSTRUCTION!r}, "
        f"expected {n.I2C_INSTRUCTION!r} (paper B.3)",
        f'{B_CARS} / {query(toy_tables(), B_CARS)["query_id"]}: instruction "Represent the user\'s input.", '
        "expected None (paper B.3)",
    ]


def test_self_has_one_positive(tmp_path: Path) -> None:
    def two(t: Tables) -> None:
        q = query(t, SELF_C2I)  # a second sparrow picture as a second positive
        q["candidate_ids"][5] = "img-09"
        q["candidate_roles"][5] = n.POSITIVE
        q["positive_ids"] = ["img-03", "img-09"]

    assert check(tmp_path, two) == [f"{SELF_C2I} / self-c2i-0: 2 positives, Self has exactly 1 (paper A.1)"]


def test_self_positive_is_the_query_class(tmp_path: Path) -> None:
    def other(t: Tables) -> None:
        q = query(t, SELF_I2C)  # the dog picture: make the cat's definition the positive
        q["candidate_roles"][0], q["candidate_roles"][1] = n.RANDOM, n.POSITIVE
        q["positive_ids"] = [q["candidate_ids"][1]]

    assert check(tmp_path, other) == [
        f"{SELF_I2C} / self-i2c-0: positive 'n00000022#def' is not of the query's class 'n00000021'"
    ]


def test_same_positives_are_the_reference_product(tmp_path: Path) -> None:
    def unlabeled(t: Tables) -> None:  # another picture of the reference product enters as a random candidate
        t[CARS_ITEMS][9]["product_id"] = t[CARS_ITEMS][0]["product_id"]

    assert check(tmp_path, unlabeled) == [
        f"{SAME_CARS} / cars-s0: candidates 'cars-09': positive role must equal sharing the reference's product_id "
        "'cars-p0'"
    ]


def test_profile_matches_conditions(tmp_path: Path) -> None:
    def profile(t: Tables) -> None:
        query(t, B_CARS)["profile"] = "D3"

    assert check(tmp_path, profile) == [f"{B_CARS} / cars-q0: profile 'D3' does not match 1P/0N conditions"]


def test_trap_flags(tmp_path: Path) -> None:
    def flag_outside_state(t: Tables) -> None:
        query(t, B_CARS)["candidate_trap"][5] = True

    assert check(tmp_path, flag_outside_state) == [f"{B_CARS} / cars-q0: trap flags outside a conflict session"]

    def unflagged(t: Tables) -> None:
        query(t, C_CARS)["candidate_trap"][5] = False

    assert check(tmp_path / "b", unflagged) == [f"{C_CARS} / cars-q0: a conflict_trap candidate is not trap-flagged"]


def test_turns_and_session_mix(tmp_path: Path) -> None:
    def count(t: Tables) -> None:
        query(t, C_CARS)["num_turns"] = 3

    assert check(tmp_path, count) == [f"{C_CARS} / cars-q0: num_turns 3 with 2 turns (2 or 3)"]

    def natural(t: Tables) -> None:
        q = query(t, C_CARS)
        q["session_type"] = "natural"
        q["candidate_trap"][5] = False
        q["candidate_roles"][5] = n.RANDOM

    assert check(tmp_path / "b", natural) == [
        f"{C_CARS} / cars-q0: session natural/2 turns from a 1-condition query is not in the session mix of docs/protocol.md §2"
    ]


# --- pairing ----------------------------------------------------------------------------------------------------


def test_pairing_positive_set(tmp_path: Path) -> None:
    def fewer(t: Tables) -> None:
        q = query(t, C_FASHION)
        q["candidate_roles"][1] = n.RANDOM
        q["positive_ids"] = q["positive_ids"][:1]

    assert check(tmp_path, fewer) == [
        f"{C_FASHION} / fashion-q0: positive set differs from the paired {B_FASHION} query"
    ]


def test_pairing_query_ids(tmp_path: Path) -> None:
    def rename(t: Tables) -> None:
        query(t, C_CARS)["query_id"] = "cars-q9"

    assert check(tmp_path, rename) == [
        f"{C_CARS} / cars-q9: no {B_CARS} query with this query_id",
        f"{B_CARS} / cars-q0: no {C_CARS} dialogue with this query_id",
    ]


def test_pairing_final_conditions(tmp_path: Path) -> None:
    def other(t: Tables) -> None:
        query(t, C_CARS)["conditions"] = [
            {"attribute": "color", "polarity": "P", "value": "orange", "old_value": "blue"}
        ]

    assert check(tmp_path, other) == [f"{C_CARS} / cars-q0: final conditions differ from the paired {B_CARS} query"]


def test_paired_config_missing(tmp_path: Path) -> None:
    assert check(tmp_path, lambda t: t.pop(C_CARS)) == [f"{B_CARS} / *: its paired config {C_CARS} is missing"]


# --- leakage ----------------------------------------------------------------------------------------------------


def test_positive_condition_reveals_the_reference_value(tmp_path: Path) -> None:
    def reveal(t: Tables) -> None:
        q = query(t, B_FASHION)
        q["query_text"] = q["query_text"].replace("I want it in red.", "Change it from Blue to red.")

    assert check(tmp_path, reveal) == [
        f"{B_FASHION} / fashion-q0: request reveals the reference's hidden color value 'blue' for a positive "
        "condition (paper A.2)"
    ]


def test_a_dialogue_turn_may_not_reveal_it_either(tmp_path: Path) -> None:
    def reveal(t: Tables) -> None:
        q = query(t, C_CARS)
        q["turns"][0] = "It is blue now, I would like it in green."
        q["query_text"] = q["query_text"].replace("I would like it in green.", q["turns"][0])

    assert check(tmp_path, reveal) == [
        f"{C_CARS} / cars-q0: request reveals the reference's hidden color value 'blue' for a positive condition "
        "(paper A.2)"
    ]


def test_negative_condition_may_name_the_excluded_value(tmp_path: Path) -> None:
    def exclude(t: Tables) -> None:
        for config in (B_CARS, C_CARS):
            q = query(t, config)
            q["conditions"] = [
                {"attribute": "color", "polarity": "P", "value": "red", "old_value": "blue"},
                {"attribute": "color", "polarity": "N", "value": "blue", "old_value": None},
            ]
            q["profile"] = "D5"
        q = query(t, B_CARS)
        q["query_text"] = q["query_text"].replace("I want it in red.", "Red, not blue.")

    assert check(tmp_path, exclude) == [
        f"{C_CARS} / cars-q0: session conflict/2 turns from a 2-condition query is not in the session mix of docs/protocol.md §2"
    ]


def test_reference_prefix_shows_only_visible_fields(tmp_path: Path) -> None:
    def prefix(t: Tables) -> None:
        q = query(t, B_CARS)
        q["query_text"] = q["query_text"].replace("year: 2012.", "year: 2012, color: blue.")

    (line,) = check(tmp_path, prefix)
    assert line == (
        f"{B_CARS} / cars-q0: query_text does not start with the reference's visible fields "
        "'Reference product info: brand: Acme, year: 2012. User query: '"
    )


def test_corpus_text_is_the_visible_serialization(tmp_path: Path) -> None:
    def extra(t: Tables) -> None:
        t[CARS_ITEMS][3]["text"] += ", color: yellow"

    assert check(tmp_path, extra) == [
        f"{CARS_ITEMS} / cars-03: text 'Product info: brand: Acme, year: 2012, color: yellow' is not the visible "
        "serialization 'Product info: brand: Acme, year: 2012'"
    ]


def test_self_c2i_query_is_definition_only(tmp_path: Path) -> None:
    def named(t: Tables) -> None:
        q = query(t, SELF_C2I)
        q["query_text"] = "sparrow. " + q["query_text"]

    assert check(tmp_path, named) == [
        f"{SELF_C2I} / self-c2i-0: query_text is not the concept's definition alone (paper A.1 Self)"
    ]


def test_self_i2c_candidates_are_definition_only(tmp_path: Path) -> None:
    def named(t: Tables) -> None:
        query(t, SELF_I2C)["candidate_ids"][5] = "n00000033"

    assert check(tmp_path, named) == [
        f"{SELF_I2C} / self-i2c-0: candidates whose text is not definition-only: 'n00000033'"
    ]


def test_mentions_matches_whole_words() -> None:
    assert mentions("Make it BLUE", "blue") and mentions("light-blue tones", "light_blue")
    assert not mentions("blueish", "blue") and not mentions("", "blue")


# --- corpora, columns, audit ------------------------------------------------------------------------------------


def test_corpus_rows(tmp_path: Path) -> None:
    def corrupt(t: Tables) -> None:
        t[CARS_ITEMS][8]["image"] = None
        t[CARS_ITEMS][9]["attributes"] = "[1, 2]"
        t[FASHION_ITEMS].append(dict(t[FASHION_ITEMS][9]))

    assert check(tmp_path, corrupt) == [
        f"{FASHION_ITEMS} / fashion-09: duplicate item_id",
        f"{CARS_ITEMS} / cars-08: image is missing",
        f"{CARS_ITEMS} / cars-09: attributes is not a JSON object",
    ]


def test_column_types_follow_the_spec(tmp_path: Path) -> None:
    features = all_features()
    features[CARS_ITEMS] = features[CARS_ITEMS].copy()
    features[CARS_ITEMS]["year"] = Value("int64")
    tables = toy_tables()
    for row in tables[CARS_ITEMS]:
        row["year"] = int(row["year"])
    out = write_folder(tmp_path / "triad", tables, features=features, card="", audit=toy_audit())
    (line, *rest) = validate_folder(out)
    assert line.startswith(f"{CARS_ITEMS} / *: test-") and line.endswith("column year has type int64, expected string")
    # the corpus is skipped, so the queries that point into it report it missing
    assert rest == [f"{c} / *: corpus config {CARS_ITEMS} is missing" for c in (B_CARS, C_CARS, SAME_CARS)]


def test_missing_and_extra_columns(tmp_path: Path) -> None:
    features = all_features()
    features[SAME_CARS] = features[SAME_CARS].copy()
    del features[SAME_CARS]["source_query_id"]
    features[SAME_CARS]["note"] = Value("string")
    tables = toy_tables()
    out = write_folder(tmp_path / "triad", tables, features=features, card="", audit=toy_audit())
    (line,) = validate_folder(out)
    assert line.startswith(f"{SAME_CARS} / *: test-")
    assert line.endswith("columns differ from docs/protocol.md §1 (missing ['source_query_id'], extra ['note'])")
    features = all_features()
    features[SAME_CARS] = features[SAME_CARS].__class__(dict(reversed(list(features[SAME_CARS].items()))))
    reordered = write_folder(tmp_path / "reordered", toy_tables(), features=features, card="", audit=toy_audit())
    assert validate_folder(reordered) == []  # column order does not matter


def test_missing_corpus_config(tmp_path: Path) -> None:
    assert check(tmp_path, lambda t: t.pop(n.CONCEPTS_CORPUS)) == [
        f"{c} / *: corpus config {n.CONCEPTS_CORPUS} is missing" for c in (I2C, SELF_I2C)
    ]


def test_gate_violations_in_the_audit(tmp_path: Path) -> None:
    audit = {**toy_audit(), "constraints": {"fashion": {"gate_violations": 2}, "cars": {"gate_violations": 0}}}
    assert check(tmp_path, lambda t: None, audit=audit) == [
        "audit.json / constraints.fashion.gate_violations: 2 gate violations (must be 0, paper A.2)"
    ]


def test_unknown_config_and_benchmark(tmp_path: Path) -> None:
    out = write_folder(
        tmp_path / "x",
        {"extra": [{"a": "1"}]},
        features={"extra": all_features()[SAME_CARS].__class__({"a": Value("string")})},
        card="",
        audit=toy_audit(),
    )
    assert validate_folder(out) == ["extra / *: unknown TRIAD config"]
    audit = json.loads((out / "audit.json").read_text())
    (out / "audit.json").write_text(json.dumps({**audit, "benchmark": "other"}))
    assert validate_folder(out) == ["audit.json / benchmark: 'other' is not 'triad' or 'ark'"]
    (out / "audit.json").unlink()
    (line,) = validate_folder(out)
    assert line.startswith("audit.json / *: ") and line.endswith("audit.json: missing (every built folder has one)")
    with pytest.raises(TriadError, match="not a dataset folder"):
        validate_folder(tmp_path / "nowhere")


def test_ark_folders_go_to_the_ark_validator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    fake = types.ModuleType("ark_dataset.validate")
    fake.validate_folder = lambda path: seen.append(path) or ["daily_life / q1: broken"]
    monkeypatch.setitem(sys.modules, "ark_dataset.validate", fake)
    out = tmp_path / "ark"
    out.mkdir()
    (out / "audit.json").write_text(json.dumps({"benchmark": "ark"}))
    from triad_cli.folders import validate_any  # the dispatch sits above both benchmarks

    assert validate_any(out) == ["daily_life / q1: broken"] and seen == [out]
    assert "an ARK folder" in validate_folder(out)[0] and seen == [out]  # TRIAD's validator never imports ARK's
