# The two commands of the README: `make build` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: build test lab lab-down lab-status bench install install-dev lock clean

# Locked versions with hashes (requirements/*.txt, made from pyproject.toml by `make lock`): `make build` installs
# only what building needs, `make test` adds the test, lab and lint extras. Every wheel is checked against its
# hash; the build backend (hatchling) is in the lock too, so the editable install downloads nothing unpinned.
# uv installs them (pinned and hashed itself in requirements/installers.txt, installed by the machine's pip into a
# venv made without pip, which uv then fills): a fresh clone's `make build` in seconds, not half a minute.
BUILD_LOCK := requirements/build.txt
DEV_LOCK   := requirements/dev.txt
UV_LOCK    := requirements/installers.txt
UV          = $(BIN)/uv
# --compile-bytecode: uv, unlike pip, leaves modules uncompiled, and where PYTHONDONTWRITEBYTECODE is set every run
# would compile them again (about 150 ms of each start-up); graphsite's own modules are compiled for the same reason.
UV_INSTALL  = $(UV) pip install --quiet --python $(BIN)/python --no-deps --compile-bytecode
# The one command that refreshes the locks: pins already in them are kept unless UPGRADE=1.
COMPILE     = $(UV) pip compile --quiet --universal --python-version 3.11 --generate-hashes $(if $(UPGRADE),--upgrade)

$(UV): $(UV_LOCK)
	$(PYTHON) -m venv --without-pip $(VENV)
	$(PYTHON) -m pip --python $(BIN)/python install --quiet --require-hashes --no-deps -r $(UV_LOCK)
	@touch $@

$(VENV)/.graphsite-build: $(BUILD_LOCK) pyproject.toml $(UV)
	$(UV_INSTALL) --require-hashes -r $(BUILD_LOCK)
	$(UV_INSTALL) --no-build-isolation -e .
	$(BIN)/python -m compileall -q graphsite
	@touch $@

$(VENV)/.graphsite-dev: $(DEV_LOCK) $(VENV)/.graphsite-build
	$(UV_INSTALL) --require-hashes -r $(DEV_LOCK)
	@touch $@

install: $(VENV)/.graphsite-build

install-dev: $(VENV)/.graphsite-dev

## Refresh the lock files after a change to pyproject.toml's dependencies (UPGRADE=1: newest versions too)
lock: $(UV)
	$(COMPILE) pyproject.toml requirements/backend.in --extra test --extra lab --extra lint -o $(DEV_LOCK)
	$(COMPILE) pyproject.toml requirements/backend.in -c $(DEV_LOCK) -o $(BUILD_LOCK)
	$(COMPILE) requirements/installers.in -o $(UV_LOCK)

## Install graphsite (the product alone) and render the embedded default report into site/index.html
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
	$(UV) pip install --quiet --python $(BIN)/python -e '.[bench]'
	$(BIN)/python benchmarks/build_vs_pandoc.py
	$(BIN)/python benchmarks/build_vs_hugo.py   # needs Debian's hugo: apt-get install hugo
	$(BIN)/python benchmarks/links_vs_peers.py
	$(BIN)/python benchmarks/serve_reload.py
	$(BIN)/python benchmarks/page_vs_mkdocs.py
	scripts/lab up
	$(BIN)/python benchmarks/deploy_lab.py

clean:
	rm -rf site/index.html .graphsite build dist *.egg-info
