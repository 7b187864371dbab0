# The two commands of the README: `make build` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: build test lab lab-down lab-status bench install clean

# The product alone: what `make build` needs (no lab, no test tools).
$(BIN)/graphsite: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	@touch $@

# Everything the suite needs besides: the test tools, the lab's packages (graphsite_lab/ is importable from
# this editable install of the checkout), ruff and mypy.
$(VENV)/.dev: $(BIN)/graphsite pyproject.toml
	$(BIN)/pip install --quiet -e '.[test,lab,lint]'
	@touch $@

install: $(VENV)/.dev

## Install graphsite (the product alone) and render the embedded default report into site/index.html
build: $(BIN)/graphsite
	$(BIN)/graphsite build

## Install everything (system packages included), start the lab, run the whole suite, stop the lab
test: install
	scripts/test

## Start the lab (Docker Swarm, edge, Cloudflare stand-in); prints the GRAPHSITE_CONFIG line
lab: install
	scripts/lab up

lab-down:
	scripts/lab down

lab-status:
	scripts/lab status

## Benchmarks: run on demand, print ratios against peers
bench: install
	$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python benchmarks/build_vs_pandoc.py
	$(BIN)/python benchmarks/links_vs_peers.py
	$(BIN)/python benchmarks/serve_reload.py
	$(BIN)/python benchmarks/page_vs_mkdocs.py
	scripts/lab up
	$(BIN)/python benchmarks/deploy_lab.py

clean:
	rm -rf site/index.html .graphsite build dist *.egg-info
