#!/usr/bin/env bash
# Tiny models of every family on CUDA (float32 and bfloat16) against the CPU fixtures; tolerances in
# benchmarks/gpu_check.py. No network: HF offline. With 2+ GPUs the checks are split over 2 processes (cuda:0, cuda:1).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
gpus=$(python -c "import torch; print(torch.cuda.device_count())")
if [ "$gpus" -lt 1 ]; then echo "gpu_check: no CUDA device" >&2; exit 2; fi
if [ "$gpus" -ge 2 ]; then
  python benchmarks/gpu_check.py --device cuda:0 --shard 0 --shards 2 & a=$!
  python benchmarks/gpu_check.py --device cuda:1 --shard 1 --shards 2 & b=$!
  status=0; wait $a || status=1; wait $b || status=1; exit $status
fi
exec python benchmarks/gpu_check.py --device cuda:0
