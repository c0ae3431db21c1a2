"""Two CPU processes (torchrun, gloo) give the same rankings as one process."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
from itertools import pairwise
from pathlib import Path
from string import Template

import numpy as np
import pyarrow.parquet as pq
import pytest

from model_adapters.runner import RunConfig, run
from model_adapters.vectors import distributed
from tests.doubles.folders import write_tiny_triad
from triad_dataset.contract.errors import TriadError

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
        "triad_cli",
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


# --- launch forms: the launchers' variables, the refused single-process launch, README's commands ---------------

ROOT = Path(__file__).resolve().parents[2]
REFUSED = (
    "triad run: error: several processes were asked for but this is the only one (accelerate launch --cpu starts one "
    "process whatever --num_processes says); for N processes use `accelerate launch --multi_gpu --num_processes N -m "
    "triad_cli run ...` (gloo on CPU without a GPU; --device cpu on a GPU machine) or `torchrun --standalone "
    "--nproc_per_node N -m triad_cli run ...`"
)


def _clear_launch_vars(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*distributed.SIZE_VARS, "ACCELERATE_USE_CPU", "MASTER_ADDR"):
        monkeypatch.delenv(name, raising=False)


def test_launched_world_reads_torchrun_then_mpi_variables(monkeypatch):
    _clear_launch_vars(monkeypatch)
    assert distributed.launched_world() == 1 and not distributed.launched_distributed()
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "3")  # mpirun (accelerate --mpirun_hostfile)
    assert distributed.launched_world() == 3 and distributed.launched_distributed()
    monkeypatch.setenv("WORLD_SIZE", "2")  # torchrun / accelerate --multi_gpu: first in accelerate's order
    assert distributed.launched_world() == 2
    monkeypatch.setenv("WORLD_SIZE", "two")
    with pytest.raises(TriadError, match=r"^\$WORLD_SIZE must be a number of processes, got 'two'$"):
        distributed.launched_world()


def test_a_lone_process_of_several_is_refused(monkeypatch):
    _clear_launch_vars(monkeypatch)
    monkeypatch.setenv("ACCELERATE_USE_CPU", "True")
    distributed.check_launch()  # accelerate launch --cpu with one process: no MASTER_ADDR, accepted
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")  # set by accelerate's one-process launcher for num_processes > 1
    with pytest.raises(TriadError) as refused:
        distributed.init("cpu")
    assert f"triad run: error: {refused.value}" == REFUSED
    monkeypatch.setenv("ACCELERATE_USE_CPU", "False")
    with pytest.raises(TriadError, match=r"\(accelerate launch without --multi_gpu starts one process"):
        distributed.check_launch()
    monkeypatch.setenv("WORLD_SIZE", "2")  # the launcher did start several: accepted
    distributed.check_launch()


def _env() -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


def _launcher(name: str) -> str:
    """The launcher script installed beside this interpreter (accelerate, torchrun)."""
    return str(Path(sys.executable).parent / name)


@pytest.mark.slow
def test_accelerate_cpu_forms_are_refused_in_one_line(tmp_path):
    """The forms a CPU user tries: `--cpu --num_processes 2` reaches the run as one process, which refuses it in one
    line (accelerate passes the child's stderr through, then adds its own traceback and exits 1); `--multi_cpu` is
    refused by accelerate itself."""
    data = str(write_tiny_triad(tmp_path / "triad"))
    run_args = ["-m", "triad_cli", "run", "--model", "tiny-random-clip", "--data", data, "--out", "o"]
    cpu = [_launcher("accelerate"), "launch", "--cpu", "--num_processes", "2", *run_args]
    proc = subprocess.run(cpu, env=_env(), cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and REFUSED in proc.stderr.splitlines(), proc.stderr[-3000:]
    assert not (tmp_path / "o").exists()
    multi = [_launcher("accelerate"), "launch", "--multi_cpu", "--num_processes", "2", *run_args]
    proc = subprocess.run(multi, env=_env(), cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stderr.strip().endswith("error: unrecognized arguments: --multi_cpu")


def readme_launch_commands() -> list[list[str]]:
    """The commands of README.md's "Several processes or GPUs" block, one argv each (comments dropped)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("Several processes or GPUs", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line, comments=True) for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _on_this_machine(argv: list[str], data: str, out: Path) -> tuple[list[str], int]:
    """A README command with its model, data and outputs replaced by the tiny ones and 2 CPU processes in all;
    (argv, machines). The launcher, its flags and the module are kept as written."""
    replace = {
        "--model": "tiny-random-clip",
        "--data": data,
        "--out": str(out / "run"),
        "--cache-dir": str(out / "cache"),
        "--num_processes": "2",
        "--nproc_per_node": "2",
        "--main_process_port": str(_free_port()),
    }
    got = [_launcher(argv[0])]
    for before, word in pairwise(argv):
        got.append(replace.get(before, word))
    machines = int(dict(pairwise(argv)).get("--num_machines", "1"))
    return [*got, "--cache-dir", str(out / "cache"), "--batch-size", "2", "--quiet", "--no-validate"], machines


def test_readme_launch_commands_are_the_tested_forms():
    commands = readme_launch_commands()
    assert [c[:3] for c in commands] == [
        ["accelerate", "launch", "--multi_gpu"],
        ["accelerate", "launch", "--multi_gpu"],
        ["torchrun", "--standalone", "--nproc_per_node"],
        ["accelerate", "launch", "--multi_gpu"],
    ]
    assert all(c[c.index("-m") + 1 : c.index("-m") + 3] == ["triad_cli", "run"] for c in commands)
    # the 4-GPU form and the CPU form are one command here: the test runs it once (index 1)
    assert _on_this_machine(commands[0], "D", Path("O")) == _on_this_machine(commands[1], "D", Path("O"))
    argv, machines = _on_this_machine(commands[3], "D", Path("O"))
    assert machines == 2 and argv[argv.index("--machine_rank") + 1] == "$NODE_RANK"  # one launcher per node


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    """The tiny folder and its one-process run (rankings per config, results)."""
    tmp = tmp_path_factory.mktemp("one")
    data = str(write_tiny_triad(tmp / "triad"))
    out, cache = str(tmp / "one"), str(tmp / "c")
    results = run(RunConfig("tiny-random-clip", data, out, batch_size=2, cache_dir=cache, quiet=True, validate=False))
    rankings = {c: pq.read_table(tmp / "one" / "rankings" / f"{c}.parquet").to_pylist() for c in CONFIGS}
    return data, rankings, results


@pytest.mark.slow
@pytest.mark.parametrize("index", [1, 2, 3], ids=["accelerate", "torchrun", "two-nodes"])
def test_readme_launch_command_runs_two_processes(one_process, tmp_path, index):
    """Each README launch command on this GPU-less machine: the GPU forms' model and process counts become the tiny
    model and 2 CPU processes (accelerate's --multi_gpu launcher falls back to gloo without CUDA); the two-node form
    runs both nodes here, one process each."""
    data, rankings, results = one_process
    argv, machines = _on_this_machine(readme_launch_commands()[index], data, tmp_path)
    procs = []
    for rank in range(machines):  # one launcher per node; $NODE_RANK and $MASTER_IP expanded as the shell would
        env = {**_env(), "NODE_RANK": str(rank), "MASTER_IP": "127.0.0.1"}
        expanded = [Template(word).substitute(env) for word in argv]
        procs.append(subprocess.Popen(expanded, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outcomes = [proc.communicate(timeout=600) for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * machines, outcomes[0][1][-3000:]
    two = json.loads((tmp_path / "run" / "results.json").read_text())
    assert two["run"]["processes"] == 2 and two["run"]["encoded"] == results["run"]["distinct_items"]
    for config in CONFIGS:
        got = pq.read_table(tmp_path / "run" / "rankings" / f"{config}.parquet").to_pylist()
        assert [r["candidate_ids"] for r in got] == [r["candidate_ids"] for r in rankings[config]]
        np.testing.assert_allclose([r["scores"] for r in got], [r["scores"] for r in rankings[config]], atol=1e-6)
