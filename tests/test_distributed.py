"""Two CPU processes (torchrun, gloo) give the same rankings as one process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pyarrow.parquet as pq
import pytest

from model_adapters.runner import RunConfig, run
from model_adapters.testing import write_tiny_triad
from model_adapters.vectors import distributed

CONFIGS = ("abstraction_i2c", "constraints_cars", "state_cars")


def test_shard_is_a_partition():
    items = list(range(11))
    parts = [distributed.shard(items, r, 3) for r in range(3)]
    assert sorted(x for p in parts for x in p) == items
    ctx = distributed.Context()
    assert ctx.is_main and ctx.gather("x") == ["x"] and ctx.broadcast(5) == 5


@pytest.mark.slow
def test_two_processes_match_one(tmp_path):
    data = str(write_tiny_triad(tmp_path / "triad"))
    one = run(
        RunConfig(
            model="tiny-random-clip",
            data=data,
            out=str(tmp_path / "one"),
            batch_size=2,
            cache_dir=str(tmp_path / "cache1"),
            quiet=True,
            validate=False,
        )
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        "-m",
        "triad_dataset.cli",
        "run",
        "--model",
        "tiny-random-clip",
        "--data",
        data,
        "--out",
        str(tmp_path / "two"),
        "--cache-dir",
        str(tmp_path / "cache2"),
        "--batch-size",
        "2",
        "--quiet",
        "--no-validate",
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    two = json.loads((tmp_path / "two" / "results.json").read_text())
    assert two["run"]["encoded"] == one["run"]["encoded"] == one["run"]["distinct_items"]
    for config in CONFIGS:
        a = pq.read_table(tmp_path / "one" / "rankings" / f"{config}.parquet").to_pylist()
        b = pq.read_table(tmp_path / "two" / "rankings" / f"{config}.parquet").to_pylist()
        assert [r["candidate_ids"] for r in a] == [r["candidate_ids"] for r in b]
        # scores agree to float32 rounding (thread counts change summation order), the rankings exactly
        np.testing.assert_allclose([r["scores"] for r in a], [r["scores"] for r in b], atol=1e-6)
        assert two["configs"][config]["metrics"]["map"] == one["configs"][config]["metrics"]["map"]
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == ["rankings", "results.json"]  # rank 0 only
    # images are read from the parquet shards per encoding batch, each by the one process that encodes it: the two
    # processes together read every image exactly as often as one process does (once), and both read some
    (alone,) = one["run"]["images_read_per_process"]
    both = two["run"]["images_read_per_process"]
    assert alone == sum(both) and len(both) == 2 and min(both) > 0
