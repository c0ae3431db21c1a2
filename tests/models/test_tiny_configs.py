"""Every tiny Qwen-family reference model carries its real checkpoint's attention window.

transformers 4.x builds attention masks from `config.sliding_window` as written, so a tiny config that kept the
library default (4096) would hide or invent a divergence on long inputs when the authors' code runs under 4.x. The
real configs: Qwen2-VL (VLM2Vec, UME-R1, RzenEmbed, LamRA, Ops-MM) sliding_window 32768 with use_sliding_window
false; Qwen3 (Qwen3-Embedding, Diver-Retriever) sliding_window null with use_sliding_window false; Qwen3-VL has no
window field. Checked on the configs in memory, on the config.json the fixture writers save, and on the transformers
4.x layout the 4.x drivers load (benchmarks/reference/tiny_legacy.py); and every stored Qwen2-VL fixture input is
shorter than the window, so the stored vectors hold under either library.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.doubles import tiny, tiny_text

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
QWEN2_VL_REAL = {"sliding_window": 32768, "use_sliding_window": False}
QWEN3_REAL = {"sliding_window": None, "use_sliding_window": False}
QWEN2_VL_CHAT_KINDS = ("ume-r1", "lamra", "rzenembed", "ops-mm")
# fixtures made on the tiny Qwen2-VL (their NOTE.md says which writer)
QWEN2_VL_FIXTURES = (
    "vlm2vec",
    "vlm2vec_v1",
    "ume_r1_disc",
    "ume_r1_gen",
    "ume_r1_tail",
    "rzenembed",
    "lamra_ret",
    "ops_mm_embedding_v1",
)
# every place a Qwen-family config is built in code, and what covers it here
CONFIG_BUILDERS = {
    ("tests/doubles/tiny.py", "Qwen3VLConfig"): "test_qwen3_vl_has_no_window",
    ("tests/doubles/tiny.py", "Qwen2VLConfig"): "test_qwen2_vl_carries_the_real_window",
    ("tests/doubles/tiny_text.py", "Qwen3Config"): "test_qwen3_carries_the_real_window",
    # the tiny captioner stand-in of `triad caption` tests: no real checkpoint, no fixture made on it
    ("tests/doubles/tiny_captioners.py", "Qwen2Config"): "exempt",
}


def window(config: Any) -> dict[str, Any]:
    return {"sliding_window": config.sliding_window, "use_sliding_window": config.use_sliding_window}


def saved_window(folder: Path) -> dict[str, Any]:
    data = json.loads((folder / "config.json").read_text())
    text = data.get("text_config", data)
    return {k: text[k] for k in QWEN2_VL_REAL}


def full_attention_only(config: Any) -> bool:
    return set(getattr(config, "layer_types", None) or ["full_attention"]) == {"full_attention"}


def legacy_folder(src: Path, dst: Path) -> Path:
    spec = importlib.util.spec_from_file_location("tiny_legacy", ROOT / "benchmarks" / "reference" / "tiny_legacy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Path(module.legacy_qwen2_vl_folder(str(src), str(dst)))


def test_every_qwen_config_built_in_code_is_covered():
    found = set()
    places = ("model_adapters", "tests/doubles", "benchmarks")
    for path in [p for place in places for p in sorted((ROOT / place).rglob("*.py"))]:
        for name in re.findall(r"\b(Qwen\w*Config)\(", path.read_text(encoding="utf-8")):
            found.add((str(path.relative_to(ROOT)), name))
    assert found == set(CONFIG_BUILDERS)


@pytest.mark.slow
def test_qwen2_vl_carries_the_real_window(tmp_path):
    model = tiny.tiny_qwen2_vl(0)[0]
    assert window(model.config.text_config) == QWEN2_VL_REAL
    assert full_attention_only(model.config.text_config)  # as transformers 5 runs the real config
    for kind in QWEN2_VL_CHAT_KINDS:
        model = tiny.TINY_CHAT_CHECKPOINTS[kind](0)[0]
        assert window(model.config.text_config) == QWEN2_VL_REAL, kind
        assert full_attention_only(model.config.text_config), kind
    folder = Path(tiny.save_tiny_chat_checkpoint("ume-r1", str(tmp_path / "ume")))
    assert saved_window(folder) == QWEN2_VL_REAL
    assert saved_window(Path(tiny.save_tiny_qwen2_vl(str(tmp_path / "q2vl")))) == QWEN2_VL_REAL
    assert saved_window(legacy_folder(folder, tmp_path / "ume_4x")) == QWEN2_VL_REAL  # what 4.x drivers read


@pytest.mark.slow
def test_qwen3_carries_the_real_window(tmp_path):
    model = tiny_text.tiny_qwen3()[0]
    assert window(model.config) == QWEN3_REAL and full_attention_only(model.config)
    assert saved_window(Path(tiny_text.save_qwen3_embedding(str(tmp_path / "qwen3")))) == QWEN3_REAL


def test_qwen3_vl_has_no_window():
    model = tiny.tiny_qwen3_vl(0)[0]
    text = model.config.text_config
    assert getattr(text, "sliding_window", None) is None and full_attention_only(text)


def _token_rows(data: Any) -> list[list[int]]:
    """Every list of token ids stored under an `input_ids` / `*_ids` key, however deep."""
    rows: list[list[int]] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key.endswith("ids") and isinstance(value, list) and value and isinstance(value[0], list):
                rows.extend(r for r in value if r and isinstance(r[0], int))
            else:
                rows.extend(_token_rows(value))
    elif isinstance(data, list):
        for value in data:
            rows.extend(_token_rows(value))
    return rows


@pytest.mark.parametrize("name", QWEN2_VL_FIXTURES)
def test_stored_qwen2_vl_inputs_are_shorter_than_the_window(name):
    (path,) = (FIXTURES / name).glob("*.json")
    rows = _token_rows(json.loads(path.read_text()))
    assert rows, name
    assert max(len(r) for r in rows) < QWEN2_VL_REAL["sliding_window"], name
