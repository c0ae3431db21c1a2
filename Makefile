# The project's own virtual environment unless PY names another interpreter (README: Prerequisites).
VENV_PY := .venv/bin/python
PY ?= $(VENV_PY)
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export HF_EVALUATE_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export GRADIO_ANALYTICS_ENABLED := False
export TOKENIZERS_PARALLELISM := false
STAMP := .make/setup$(subst /,_,$(abspath $(PY))).stamp
DEMO_DIR ?= demo_output

.PHONY: setup test test-fast test-unit demo demo-ocr lint bench artifacts
setup: $(STAMP)
$(STAMP): setup.cfg constraints.txt scripts/setup_machine.sh $(filter $(VENV_PY),$(PY))
	PY=$(PY) scripts/setup_machine.sh
	@mkdir -p .make && touch $(STAMP)

# over the machine's packages: what is already installed there is reused, the rest goes into .venv only; without a
# pip of its own where the machine has one (the bundled pip brings an old setuptools that shadows the machine's)
$(VENV_PY):
	python3 -m venv --system-site-packages $(if $(shell python3 -c 'import pip' 2>/dev/null && echo y),--without-pip) .venv

# ruff and mypy read their settings from pyproject.toml; .pre-commit-config.yaml runs the same three checks.
lint: setup
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

# the whole suite; the 20 slowest tests are listed so that a new slow one shows up in CI
test: setup
	$(PY) -m pytest --durations=20
	$(PY) scripts/check_artifacts.py

# the suite without the slow and browser tests, spread over every core (pytest-xdist)
test-fast: setup
	$(PY) -m pytest -m "not slow and not browser" -n auto

# the inner loop: metrics, the dataset contracts, the Space's checks, the layer, cache-key and test-double checks and every
# package's doctests, without torch (the session fails if it is imported). Left out: the two evaluate module scripts
# (evaluate imports transformers and torch) and the doctests that import torch (tests/import_guard.py deselects
# them). Timings: CONTRIBUTING.md.
UNIT_TESTS := \
  tests/metrics/test_metrics_core.py tests/metrics/test_metrics_scoring.py tests/metrics/test_metrics_stats.py tests/metrics/test_metrics_paper_diagnostics.py \
  tests/metrics/test_metrics_trec_eval.py tests/metrics/test_columnar_scoring.py tests/datasets/test_names.py tests/datasets/test_features.py \
  tests/datasets/test_schema_roles.py tests/datasets/test_validate.py tests/datasets/test_folder.py tests/datasets/test_same.py \
  tests/datasets/test_state.py tests/datasets/test_constraints.py tests/datasets/test_ark_validate.py tests/datasets/test_ark_importer.py \
  tests/space/test_space_validation.py tests/space/test_space_names.py tests/space/test_space_hostile.py tests/space/test_space_scoring.py \
  tests/space/test_space_reproduction.py tests/space/test_space_markers.py tests/space/test_space_storage.py tests/space/test_space_db.py \
  tests/repo/test_import_graph.py tests/repo/test_private_names.py tests/models/test_cache_keys.py \
  tests/repo/test_doubles.py
UNIT_DOCTESTS := metrics triad_dataset ark_dataset model_adapters spaces_app triad_cli
test-unit: setup
	$(PY) -m pytest -m "not slow and not browser" -p tests.import_guard --forbid-imports torch \
	  --ignore=metrics/triad_map --ignore=metrics/ark_retrieval $(UNIT_TESTS) $(UNIT_DOCTESTS)

# the mini editions, minilm on TRIAD, its report, the board seeded (times: README, Quick start); OCR=1 (or
# `make demo-ocr`) adds ARK over OCR captions, slow the first time and cached afterwards
demo: setup
	$(PY) scripts/demo.py --out $(DEMO_DIR) $(if $(filter 1 yes true,$(OCR)),--ocr)

demo-ocr: setup
	$(PY) scripts/demo.py --out $(DEMO_DIR) --ocr

# every benchmark script (docs/benchmarks.md); those measuring runs on a TRIAD mini edition read the demo's
BENCH_ON_DEMO := bench_cached_rerun bench_dtype_runs bench_encode bench_onnx_settings
bench: demo
	for f in benchmarks/bench_*.py; do \
	  case " $(BENCH_ON_DEMO) " in *" $$(basename $$f .py) "*) data="--data $(DEMO_DIR)/triad";; *) data="";; esac; \
	  $(PY) $$f $$data || exit 1; \
	done

# The wheel, the metric module folders and the Space bundle, each checked outside the repository (scripts/check_artifacts.py).
artifacts: setup
	$(PY) scripts/check_artifacts.py
