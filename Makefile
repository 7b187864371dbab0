# The two commands of the README: `make build` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: build test lab lab-down lab-status bench install install-dev lock clean

# Locked versions with hashes (requirements/*.txt, made from pyproject.toml by `make lock`): `make build` installs
# only what building needs, `make test` adds the test, lab and lint extras. Every wheel is checked against its
# hash; the build backend (hatchling) is in the lock too, so the editable install downloads nothing unpinned.
BUILD_LOCK := requirements/build.txt
DEV_LOCK   := requirements/dev.txt
UV_VERSION := 0.13.9
# The one command that refreshes the locks: pins already in them are kept unless UPGRADE=1.
COMPILE     = $(BIN)/uv pip compile --quiet --universal --python-version 3.11 --generate-hashes \
              $(if $(UPGRADE),--upgrade) pyproject.toml requirements/backend.in

$(VENV)/.graphsite-build: $(BUILD_LOCK) pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --require-hashes --no-deps -r $(BUILD_LOCK)
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	@touch $@

$(VENV)/.graphsite-dev: $(DEV_LOCK) $(VENV)/.graphsite-build
	$(BIN)/pip install --quiet --require-hashes --no-deps -r $(DEV_LOCK)
	@touch $@

install: $(VENV)/.graphsite-build

install-dev: $(VENV)/.graphsite-dev

## Refresh the lock files after a change to pyproject.toml's dependencies (UPGRADE=1: newest versions too)
lock:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet uv==$(UV_VERSION)
	$(COMPILE) --extra test --extra lab --extra lint -o $(DEV_LOCK)
	$(COMPILE) -c $(DEV_LOCK) -o $(BUILD_LOCK)

## Install and render the embedded default report into site/index.html
build: install
	$(BIN)/graphsite build

## Install everything (system packages included), start the lab, run the whole suite, stop the lab
test: install-dev
	scripts/test

## Start the lab (Docker Swarm, edge, Cloudflare stand-in); prints the GRAPHSITE_CONFIG line
lab: install-dev
	scripts/lab up

lab-down:
	scripts/lab down

lab-status:
	scripts/lab status

## Benchmarks: run on demand, print ratios against peers
bench: install-dev
	$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python benchmarks/build_vs_pandoc.py
	$(BIN)/python benchmarks/links_vs_peers.py
	$(BIN)/python benchmarks/serve_reload.py
	$(BIN)/python benchmarks/page_vs_mkdocs.py
	scripts/lab up
	$(BIN)/python benchmarks/deploy_lab.py

clean:
	rm -rf site/index.html .graphsite build dist *.egg-info
