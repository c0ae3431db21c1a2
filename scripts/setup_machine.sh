#!/usr/bin/env bash
# Installs everything the demo and the tests need on a fresh machine (Debian + Python 3.11, CPU only).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}

need_apt=()
[ -f /usr/share/wordnet/data.noun ] || need_apt+=(wordnet-base)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup: apt-get install ${need_apt[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "setup: not root, cannot install ${need_apt[*]} (tests that need them are skipped with a reason)" >&2
  fi
fi

# torch first, pinned to the CPU build on local disk; the constraints file keeps every later resolve on it.
"$PY" -m pip install -q -c constraints.txt "torch==2.13.0"
"$PY" -m pip install -q -c constraints.txt -e ".[models,metrics,space,dev,mteb]"
if "$PY" -c "import torchvision" >/dev/null 2>&1; then
  echo "setup: torchvision is installed and breaks transformers on CPU-only machines; uninstall it" >&2
fi
# Offline loading: evaluate.load("triad-benchmark/triad_map") / ("triad-benchmark/ark_retrieval") (metrics/install_evaluate.py).
"$PY" -m metrics.install_evaluate
