# NodeFlow: `make run` (then open http://localhost:3000), `make dev` (hot reload) and `make test`.
# Every target sets up what is missing (venv, Python deps, Node >= 22.22, data folder) and is fast
# when everything is already there (stamp files under .venv/).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

ROOT    := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
VENV    := $(ROOT)/.venv
PY      := $(VENV)/bin/python
TOOLS   := $(ROOT)/.tools
DATA    := $(abspath $(or $(NODEFLOW_DATA_DIR),$(ROOT)/data))
STAMP   := $(VENV)/.nodeflow-installed
PYTHON3 ?= python3.11
CHROMIUM ?= /usr/bin/chromium
NODE_MIN := 22.22
# `make run PORT=8080`: the production server's one port (pages, API and websocket).
PORT    ?= 3000
BACKEND_PORT ?= 8000
# Everything the app or its tests write under the app root: a change there must not reload `make dev`
# (SQLite's -wal/-shm files in data/ restarted the backend every ~2 s). Reflex compares these with the
# root's top-level entries, so tests/ (tests/.artifacts), docs/ (screenshots) and benchmarks/ go whole.
DEV_NO_RELOAD := $(DATA) $(ROOT)/uploaded_files $(ROOT)/tests $(ROOT)/docs $(ROOT)/benchmarks

# Project-local Node first, then the venv, for every recipe (and everything they start).
export PATH := $(TOOLS)/node_modules/node/bin:$(TOOLS)/node_modules/.bin:$(VENV)/bin:$(PATH)
export REFLEX_USE_NPM := 1
export REFLEX_CHECK_LATEST_VERSION := 0
export REFLEX_HTTP_CLIENT_BIND_ADDRESS := 0.0.0.0
export AGNO_TELEMETRY := false
export npm_config_prefer_offline := true
# Pins the registry, so Reflex does not probe mirrors at init (see also .npmrc).
export NPM_CONFIG_REGISTRY ?= https://registry.npmjs.org/
export PYTHONUNBUFFERED := 1

.PHONY: help install run dev test bench e2e node chromium data clean-web

help:
	@echo "make run     start NodeFlow on http://localhost:3000 (production build, one port; PORT=... to change)"
	@echo "make dev     start NodeFlow with hot reload (front end :$(PORT), backend :$(BACKEND_PORT)), to work on NodeFlow"
	@echo "make test    run the whole test suite (unit, integration, e2e in Chromium)"
	@echo "make bench   run the benchmarks"
	@echo "make install set up .venv, Python deps, Node >= $(NODE_MIN) and data/"

install: $(STAMP) node data

$(PY):
	$(PYTHON3) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip

# Re-installs only when pyproject.toml changes.
$(STAMP): $(ROOT)/pyproject.toml | $(PY)
	cd $(ROOT) && $(PY) -m pip install -e '.[test,bench]'
	touch $@

# Node >= 22.22 installed project-locally when the one on PATH is older (or missing).
node:
	@if ! node -e 'const [a,b]=process.versions.node.split(".").map(Number); const [x,y]="$(NODE_MIN)".split(".").map(Number); process.exit(a>x||(a===x&&b>=y)?0:1)' 2>/dev/null; then \
		echo "Installing Node 22 into .tools/ ..."; \
		mkdir -p $(TOOLS); \
		command -v npm >/dev/null || { apt-get update && apt-get install -y npm; }; \
		npm install --prefix $(TOOLS) node@22; \
	fi

chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		echo "Installing Debian chromium ..."; \
		apt-get update && apt-get install -y chromium; \
	fi

data:
	@mkdir -p $(DATA)

# The production build on one port. The front end is rebuilt only when its sources changed
# (nodeflow_app/serve.py keys .web/build by their hash); the server never reloads by itself.
run: install
	cd $(ROOT) && exec $(PY) -m nodeflow_app.serve --port $(PORT)

# Hot reload for people working on NodeFlow: any code change restarts the backend, nothing the app writes does.
dev: install
	@mkdir -p $(ROOT)/uploaded_files $(ROOT)/tests/.artifacts
	cd $(ROOT) && REFLEX_HOT_RELOAD_EXCLUDE_PATHS="$(subst $(eval) ,:,$(strip $(wildcard $(DEV_NO_RELOAD))))" \
		reflex run --env dev --frontend-port $(PORT) --backend-port $(BACKEND_PORT)

test: install chromium
	cd $(ROOT) && $(PY) -m pytest -q

e2e: install chromium
	cd $(ROOT) && $(PY) -m pytest -q tests/e2e

bench: install
	@if [ -f $(ROOT)/benchmarks/__main__.py ]; then \
		cd $(ROOT) && $(PY) -m benchmarks; \
	else \
		echo "no benchmarks yet (benchmarks/__main__.py is missing)"; \
	fi

# Forces a fresh front-end build next time (slow: ~1 min of npm).
clean-web:
	rm -rf $(ROOT)/.web
