PY ?= python3
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export HF_EVALUATE_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export GRADIO_ANALYTICS_ENABLED := False
export TOKENIZERS_PARALLELISM := false
STAMP := .make/setup.stamp
DEMO_DIR ?= demo_output

.PHONY: setup test demo demo-ocr lint bench artifacts
setup: $(STAMP)
$(STAMP): setup.cfg constraints.txt scripts/setup_machine.sh
	PY=$(PY) scripts/setup_machine.sh
	@mkdir -p .make && touch $(STAMP)

lint: setup
	$(PY) -m ruff check .

test: setup lint
	$(PY) -m pytest
	$(PY) scripts/check_artifacts.py

# 44 s on 2 quiet cores with empty caches (README: Quick start); OCR=1 (or `make demo-ocr`) adds ARK over OCR captions (≈ 16 min of OCR on 2 quiet cores, up to ≈ 70 under load,
# the first time, cached afterwards)
demo: setup
	$(PY) scripts/demo.py --out $(DEMO_DIR) $(if $(filter 1 yes true,$(OCR)),--ocr)

demo-ocr: setup
	$(PY) scripts/demo.py --out $(DEMO_DIR) --ocr

bench: setup
	for f in benchmarks/bench_*.py; do $(PY) $$f || exit 1; done

# The wheel, the metric module folders and the Space bundle, each checked outside the repository (scripts/check_artifacts.py).
artifacts: setup
	$(PY) scripts/check_artifacts.py
