"""A cached re-run imports only what it uses; the Arrow <-> numpy helpers it uses instead of pyarrow's conversions
(which import pandas) give what pyarrow gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from metrics.ragged import from_numpy, strings, to_numpy
from model_adapters.planning.plan import ConfigPlan, sorted_distinct
from model_adapters.ranks.ranking import unique_rows
from tests.doubles.folders import write_tiny_triad

# imported by a cached re-run before: none of them is used on that path
UNUSED = ("pandas", "asyncio", "multiprocessing", "urllib.request", "torch", "transformers", "gradio", "datasets")


def test_to_numpy_reads_what_pyarrow_converts():
    ints = pa.array(np.arange(10, dtype=np.int32)).slice(3, 4)
    assert to_numpy(ints).dtype == np.int32 and to_numpy(ints).tolist() == [3, 4, 5, 6]
    flags = pa.array([i % 3 == 0 for i in range(20)]).slice(5, 9)  # bit-packed, starting mid-byte
    assert to_numpy(flags).tolist() == [False, True, False, False, True, False, False, True, False]
    floats = pa.chunked_array([[0.5], [], [1.5, -2.0]])
    assert to_numpy(floats).dtype == np.float64 and to_numpy(floats).tolist() == [0.5, 1.5, -2.0]
    with_nulls = pa.array([1.0, None, 3.0])
    assert np.isnan(to_numpy(with_nulls)[1]) and to_numpy(with_nulls)[[0, 2]].tolist() == [1.0, 3.0]
    with pytest.raises(ValueError, match="not a numeric Arrow type: string"):
        to_numpy(pa.array(["a"]))


def test_from_numpy_and_strings_build_the_arrays_pyarrow_builds():
    values = np.array([7, -1, 3], dtype=np.int64)
    assert from_numpy(values).equals(pa.array([7, -1, 3], pa.int64()))
    assert from_numpy(np.array([0.25], dtype=np.float32)).equals(pa.array([0.25], pa.float32()))
    assert strings(["q1", "", "é"]).equals(pa.array(["q1", "", "é"], pa.string()))
    assert strings([]).equals(pa.array([], pa.string()))


@pytest.mark.slow
def test_a_cached_rerun_imports_nothing_it_does_not_use(tmp_path):
    data = str(write_tiny_triad(tmp_path / "triad"))
    args = ["run", "--encoder", "tests.doubles.folders:HashedEncoder", "--name", "hashed", "--revision", "1"]
    args += ["--data", data, "--cache-dir", str(tmp_path / "cache"), "--quiet", "--cache-check", "0"]  # no re-encoding
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    code = (
        "import json, sys\nfrom triad_cli.main import main\nrc = main(sys.argv[1:])\n"
        f"print(json.dumps([rc, [m for m in {list(UNUSED)!r} if m in sys.modules]]))"
    )
    for out in ("first", "again"):  # the first run fills the cache and the run's records
        proc = subprocess.run(
            [sys.executable, "-c", code, *args, "--out", str(tmp_path / out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
    rc, imported = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (rc, imported) == (0, [])
    again = json.loads((tmp_path / "again" / "results.json").read_text())["run"]
    assert again["encoded"] == 0 and again["cache_hits"] == again["distinct_items"]


def _first_seen(matrix: np.ndarray) -> tuple[list[int], list[int]]:
    """unique_rows by a dict of row bytes: the first index of each distinct row, and each row's distinct number."""
    seen: dict[bytes, int] = {}
    inverse = [seen.setdefault(row.tobytes(), len(seen)) for row in matrix]
    first = [inverse.index(k) for k in range(len(seen))]
    return first, inverse


@pytest.mark.parametrize("dim", [4, 3])  # 16-byte rows are hashed; 12-byte rows take the byte sort
def test_unique_rows_merges_exactly_the_bit_identical_rows(dim):
    rng = np.random.default_rng(1)
    matrix = rng.standard_normal((50, dim)).astype(np.float32)
    matrix[[7, 20, 41]] = matrix[3]
    matrix[30] = matrix[12]
    matrix[45] = np.nextafter(matrix[12], np.float32(np.inf))  # one ulp away: a different row
    matrix[46] = -0.0 * matrix[46]  # -0.0 and 0.0 differ in their bits
    matrix[47] = 0.0
    first, inverse = unique_rows(matrix)
    assert (first.tolist(), inverse.tolist()) == _first_seen(matrix)
    assert len(first) == 50 - 4


def test_distinct_items_of_a_config_plan():
    pools = np.array([[4, 2, 4, -1], [7, 2, 0, 9], [9, -1, -1, -1]], dtype=np.int32)
    cp = ConfigPlan("c", [], np.array([3, 2, 8]), pools, pools, None)
    assert cp.candidate_items().tolist() == [4, 2, 7, 0, 9]  # first-seen pool order, read off by hand
    assert cp.distinct_keys.tolist() == [0, 2, 3, 4, 7, 8, 9]
    assert sorted_distinct(np.zeros(0, dtype=np.int32)).tolist() == []
