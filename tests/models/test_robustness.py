"""Captioner robustness (paper H.1) on a hand-computed example, through the functions, the command and the Space.

Four models under three captioners (R@1):

    captioner   m1    m2    m3    m4        ranks m1..m4
    A (ref)     .40   .30   .20   .10       1 2 3 4
    B           .35   .25   .15   .20       1 2 4 3
    C           .20   .30   .10   .05       2 1 3 4

Spearman rho = 1 - 6 Σd² / (n(n²-1)) with n = 4 (denominator 60):
    A vs B: d = (0, 0, -1, 1), Σd² = 2  -> 1 - 12/60 = 0.8
    A vs C: d = (-1, 1, 0, 0), Σd² = 2  -> 0.8
    B vs C: d = (-1, 1, 1, -1), Σd² = 4 -> 1 - 24/60 = 0.6
Gain with A = score(A) - mean(score(B), score(C)):
    m1: .40 - .275 = .125   m2: .30 - .275 = .025   m3: .20 - .125 = .075   m4: .10 - .125 = -.025
Family {m1, m2}: mean .075; others {m3, m4}: mean .025.
"""

from __future__ import annotations

import json

import pytest

from metrics.core.robustness import captioner_gain, group_gains, rank_correlations
from metrics.robustness import analyse, collect

SCORES = {
    "A": {"m1": 0.40, "m2": 0.30, "m3": 0.20, "m4": 0.10},
    "B": {"m1": 0.35, "m2": 0.25, "m3": 0.15, "m4": 0.20},
    "C": {"m1": 0.20, "m2": 0.30, "m3": 0.10, "m4": 0.05},
}


def test_hand_computed_rho_and_gains():
    rho = rank_correlations(SCORES)
    assert rho == {("A", "B"): pytest.approx(0.8), ("A", "C"): pytest.approx(0.8), ("B", "C"): pytest.approx(0.6)}
    gains = captioner_gain(SCORES, "A")
    assert gains == {
        "m1": pytest.approx(0.125),
        "m2": pytest.approx(0.025),
        "m3": pytest.approx(0.075),
        "m4": pytest.approx(-0.025),
    }
    assert group_gains(gains, ["m1", "m2"]) == {"family": pytest.approx(0.075), "others": pytest.approx(0.025)}
    with pytest.raises(ValueError, match="reference captioner 'Z'"):
        captioner_gain(SCORES, "Z")


def _results(captioner: str, model: str, knowledge: float, skills: dict[str, float]) -> dict:
    return {
        "benchmark": "ark",
        "model": {"name": model},
        "captioner": {"identity": {"name": captioner}},
        "summary": {
            "macro": {"metrics": {"recall@1": knowledge}},
            "by_reasoning_skill": {k: {"metrics": {"recall@1": v}} for k, v in skills.items()},
        },
    }


def _runs() -> list[dict]:
    # the reasoning axis is the mean over skills: (x + y) / 2 reproduces the table above with x = 2s - y
    return [
        _results(c, m, s, {"logical": 2 * s - 0.1, "spatial": 0.1}) for c, row in SCORES.items() for m, s in row.items()
    ]


def test_analyse_runs_and_command(tmp_path, capsys):
    report = analyse(_runs(), reference="A", family="m1")
    for axis in ("knowledge", "reasoning"):
        rho = {(p["a"], p["b"]): p["rho"] for p in report[axis]["spearman"]}
        assert rho[("B", "C")] == pytest.approx(0.6) and rho[("A", "B")] == pytest.approx(0.8)
        assert report[axis]["gain"]["m1"] == pytest.approx(0.125)
        assert report[axis]["mean_gain"] == {"family": pytest.approx(0.125), "others": pytest.approx(0.025)}
    for i, res in enumerate(_runs()):
        (tmp_path / f"r{i}").mkdir()
        (tmp_path / f"r{i}" / "results.json").write_text(json.dumps(res))
    from triad_cli.main import main

    assert main(["robustness", *[str(tmp_path / f"r{i}") for i in range(12)], "--reference", "A"]) == 0
    out = capsys.readouterr().out
    assert "Spearman rho B vs C: 0.60" in out and "A-caption gain of m1: +12.50 points" in out
    (tmp_path / "r0" / "results.json").write_text(json.dumps({**_runs()[0], "captioner": None}))
    assert main(["robustness", str(tmp_path / "r0"), "--reference", "A"]) == 2


def test_duplicate_model_captioner_is_refused():
    from triad_dataset.contract.errors import TriadError

    with pytest.raises(TriadError, match="model m1 under captioner A"):
        collect(_runs()[:1] * 2)


def test_space_groups_a_model_over_captioners_and_shows_rho():
    from spaces_app import captioner, views
    from spaces_app.db import ScoreRow

    subs = []
    for i, (cap, model, score) in enumerate([(c, m, s) for c, row in SCORES.items() for m, s in row.items()]):
        summary = {
            "macro": {"metrics": {"recall@1": score}},
            "captioner": cap,
            "by_reasoning_skill": {"logical": {"metrics": {"recall@1": score}}},
        }
        subs.append(
            {
                "id": i,
                "model_name": model,
                "family": "other",
                "params": None,
                "summary": summary,
                "scores": {"calendar": ScoreRow("calendar", "recall@1", score, None, None, 10)},
            }
        )
    subs.append(
        {
            "id": 99,
            "model_name": "m3",
            "family": "other",
            "params": None,
            "summary": {"macro": {"metrics": {"recall@1": 0.5}}},
            "scores": {},
        }
    )  # the same model seeing the images itself
    df = views.ark_table(subs)
    assert list(zip(df["Model"], df["Captioner"], strict=True))[:5] == [
        ("m3", ""),
        ("m3", "A"),
        ("m3", "B"),
        ("m3", "C"),
        ("m1", "A"),
    ]
    rob = views.ark_robustness(subs)
    got = {(r["Axis"], r["Captioner A"], r["Captioner B"]): r["Spearman ρ"] for r in rob.to_dict("records")}
    assert got[("knowledge", "B", "C")] == pytest.approx(0.6) and got[("reasoning", "A", "B")] == pytest.approx(0.8)
    assert captioner.label_from_results({"captioner": {"identity": {"name": "ocr<script>"}}}) == "ocrscript"
