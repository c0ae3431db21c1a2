#!/usr/bin/env bash
# One invocation, under 5 minutes on one GPU; prints ratios. No network: HF offline. $PY picks the interpreter
# (default: python). Without torch or without a CUDA device it stops at once with one line, exit 2.
# 1. Tiny models of every family on CUDA (float32 and bfloat16) against the CPU fixtures; tolerances in
#    benchmarks/gpu_check.py. With 2+ GPUs the checks are split over 2 processes (cuda:0, cuda:1).
# 2. The encode pipeline on CUDA (benchmarks/bench_encode.py --device cuda:0): the runner's encode phase against bare
#    SentenceTransformer.encode for minilm on a TRIAD mini edition (built into a temporary folder), and against the
#    pipeline limit for tiny CLIP / Qwen3-VL with 800x600 JPEGs; it prints the ratios.
# 3. Whole uncached `triad run --model minilm` processes on cuda:0 in float32 and bfloat16 with the batch growing
#    (benchmarks/bench_dtype_runs.py): encode wall and CPU seconds, the batch sizes reached, bf16/fp32 ratios and how
#    far the bfloat16 rankings move.
# Each step has its own time limit (timeout), so the whole script ends within 5 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-python}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export TOKENIZERS_PARALLELISM=false
if ! gpus=$("$PY" -c "import torch; print(torch.cuda.device_count())" 2>/dev/null); then
  echo "gpu_check: $PY cannot import torch (set PY=/path/to/.venv/bin/python)" >&2; exit 2
fi
if [ "$gpus" -lt 1 ]; then echo "gpu_check: no CUDA device" >&2; exit 2; fi
status=0
step() {  # step SECONDS NAME COMMAND...: run one step within its time limit; a failure is said and counted
  local limit=$1 name=$2; shift 2
  echo "== $name (limit ${limit}s)"
  timeout "$limit" "$@" || { echo "gpu_check: $name failed (exit $?)" >&2; status=1; }
}
if [ "$gpus" -ge 2 ]; then
  step 90 "tiny families, 2 GPUs" bash -c "'$PY' benchmarks/gpu_check.py --device cuda:0 --shard 0 --shards 2 & a=\$!
    '$PY' benchmarks/gpu_check.py --device cuda:1 --shard 1 --shards 2 & b=\$!; wait \$a && wait \$b"
else
  step 90 "tiny families" "$PY" benchmarks/gpu_check.py --device cuda:0
fi
mini=$(mktemp -d)
trap 'rm -rf "$mini"' EXIT
step 45 "mini edition" "$PY" -c "import sys; from triad_dataset.editions.mini import build_mini; build_mini(sys.argv[1], quiet=True)" "$mini/triad"
step 90 "encode pipeline vs bare sentence-transformers" "$PY" benchmarks/bench_encode.py --device cuda:0 --data "$mini/triad" --repeats 3
step 60 "float32 vs bfloat16, batch growth" "$PY" benchmarks/bench_dtype_runs.py --device cuda:0 --data "$mini/triad" --repeats 2
exit $status
