#!/usr/bin/env bash
# Tiny models of every family on CUDA (float32 and bfloat16) against the CPU fixtures; tolerances in
# benchmarks/gpu_check.py. No network: HF offline. With 2+ GPUs the checks are split over 2 processes (cuda:0, cuda:1).
# Then the encode pipeline on CUDA (benchmarks/bench_encode.py --device cuda:0): the runner's encode phase against
# bare SentenceTransformer.encode for minilm on a TRIAD mini edition (built into a temporary folder), and against the
# pipeline limit for tiny CLIP / Qwen3-VL with 800x600 JPEGs; it prints the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
gpus=$(python -c "import torch; print(torch.cuda.device_count())")
if [ "$gpus" -lt 1 ]; then echo "gpu_check: no CUDA device" >&2; exit 2; fi
status=0
if [ "$gpus" -ge 2 ]; then
  python benchmarks/gpu_check.py --device cuda:0 --shard 0 --shards 2 & a=$!
  python benchmarks/gpu_check.py --device cuda:1 --shard 1 --shards 2 & b=$!
  wait $a || status=1; wait $b || status=1
else
  python benchmarks/gpu_check.py --device cuda:0 || status=1
fi
mini=$(mktemp -d)
trap 'rm -rf "$mini"' EXIT
python -c "import sys; from triad_dataset.editions.mini import build_mini; build_mini(sys.argv[1])" "$mini/triad" >/dev/null
python benchmarks/bench_encode.py --device cuda:0 --data "$mini/triad" --repeats 3 || status=1
exit $status
