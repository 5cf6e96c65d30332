# Two commands for a new user: `make demo` and `make test`.
# Both build the virtual environment from uv.lock on first use; nothing else is needed but
# python3 (3.11+) and make.

PYTHON ?= python3
UV_VERSION := 0.13.9
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
SYNCED := $(VENV)/.synced-from-lock

export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)

.PHONY: demo ui test unit unit-on integration lint typecheck check benchmark clean

demo: $(SYNCED)  ## Materialize the example pipeline and print what happened.
	PYTHONPATH=examples $(VENV)/bin/python -m dagster_dataframely_demo.demo

ui: $(SYNCED)  ## Open the example code location in the Dagster UI (http://127.0.0.1:3000).
	mkdir -p .demo/dagster_home
	printf 'telemetry:\n  enabled: false\n' > .demo/dagster_home/dagster.yaml
	DAGSTER_HOME=$(CURDIR)/.demo/dagster_home PYTHONPATH=examples \
		$(VENV)/bin/dagster dev -h 127.0.0.1 -p 3000 -m dagster_dataframely_demo.definitions

test: $(SYNCED)  ## Run the whole test suite: unit tests and the integration suite.
	$(VENV)/bin/pytest

unit: $(SYNCED)
	$(VENV)/bin/pytest tests

# The unit suite on another interpreter, in an environment of its own built from the same lock:
#   make unit-on INTERPRETER=/path/to/python3.13
unit-on: | $(UV)
	@test -n "$(INTERPRETER)" || { echo "usage: make unit-on INTERPRETER=/path/to/python"; exit 2; }
	UV_PROJECT_ENVIRONMENT=.venv-$(notdir $(realpath $(INTERPRETER))) \
		$(UV) sync --frozen --python $(INTERPRETER)
	.venv-$(notdir $(realpath $(INTERPRETER)))/bin/pytest tests

integration: $(SYNCED)
	$(VENV)/bin/pytest integration_tests

lint: $(SYNCED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(SYNCED)
	$(VENV)/bin/mypy

check: lint typecheck test

benchmark: $(SYNCED)  ## Print timings (not tests): declaring assets, then validating 1M/5M rows.
	$(VENV)/bin/python -m benchmarks.definition_time
	$(VENV)/bin/python -m benchmarks.validation

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

$(SYNCED): uv.lock pyproject.toml | $(UV)
	$(UV) sync --frozen --python $(PYTHON)
	touch $@

clean:
	rm -rf $(TOOLS) $(VENV) .venv-* .demo
