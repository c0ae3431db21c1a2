"""The names modules are the single source of truth: consistent with docs/protocol.md, and not re-spelled elsewhere."""

from __future__ import annotations

import ast
from pathlib import Path

from ark_dataset import names as ark
from triad_dataset.contract import names as n

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("triad_dataset", "ark_dataset", "metrics", "model_adapters", "spaces_app")


def test_config_lists_are_unique_and_complete() -> None:
    assert len(set(n.ALL_CONFIGS)) == len(n.ALL_CONFIGS) == 14
    assert set(n.CANDIDATE_CORPUS) == set(n.TASK_CONFIGS) == set(n.QUERY_IMAGE_CORPUS) == set(n.DISPLAY_NAMES)
    assert set(n.CANDIDATE_CORPUS.values()) <= set(n.CORPUS_CONFIGS)


def test_profile_and_session_mixes_match_the_paper() -> None:
    assert sum(n.PROFILE_MIX_PER_1000.values()) == 1000
    positives = sum(n.PROFILES[p][0] * c for p, c in n.PROFILE_MIX_PER_1000.items())
    negatives = sum(n.PROFILES[p][1] * c for p, c in n.PROFILE_MIX_PER_1000.items())
    assert (positives, negatives) == (1050, 900)  # paper A.4.1
    assert sum(n.SESSION_MIX_PER_1000.values()) == 1000
    # sessions drawn from k-condition sources use exactly the queries with k conditions (paper A.3)
    for k in (1, 2, 3):
        sessions = sum(c for (_, _, src), c in n.SESSION_MIX_PER_1000.items() if src == k)
        queries = sum(c for p, c in n.PROFILE_MIX_PER_1000.items() if sum(n.PROFILES[p]) == k)
        assert sessions == queries


def test_roles_and_quotas() -> None:
    assert len(set(n.ROLES)) == len(n.ROLES) == 9
    for quotas in n.NEGATIVE_QUOTAS.values():
        assert set(quotas) <= set(n.NEGATIVE_ROLES)
    assert all(len(t) == 6 for t in n.SAME_TEMPLATES.values())


def test_ark_names() -> None:
    assert len(ark.SUBTYPES) == len(set(ark.SUBTYPES)) == 17
    assert len(ark.DOMAINS) == 5
    assert set(ark.ALL_CONFIGS).isdisjoint(n.ALL_CONFIGS)


def _spelled_names() -> set[str]:
    multiword_roles = {r for r in n.ROLES if "_" in r}
    return set(n.ALL_CONFIGS) | set(ark.ALL_CONFIGS) | multiword_roles | {n.I2C_INSTRUCTION, n.C2I_INSTRUCTION}


def test_no_package_module_re_spells_a_public_name() -> None:
    """Config names, multi-word roles and instructions appear as string literals only in the names modules."""
    names = _spelled_names()
    offenders = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name == "names.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings = {
                id(node.body[0].value)
                for node in ast.walk(tree)
                if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
                and node.body
                and isinstance(node.body[0], ast.Expr)
                and isinstance(node.body[0].value, ast.Constant)
            }
            for node in ast.walk(tree):
                literal = isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                if literal and node.value in names:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert not offenders, "spell these through triad_dataset/contract/names.py or ark_dataset/names.py:\n" + "\n".join(
        offenders
    )
