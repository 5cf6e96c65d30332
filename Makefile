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
	DAGSTER_DATAFRAMELY_TEST_COLLECT_ALL=1 $(VENV)/bin/pytest

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

# --- The lowest and the newest supported versions (docs/compatibility.md) --------------------
# Each set is a committed, fully pinned requirements file, so a run is reproducible:
#   requirements/ci-lowest.txt  every runtime dependency and both extras ([parquet], [duckdb]) at
#                               the lowest version pyproject.toml allows, on Python 3.11;
#   requirements/ci-newest.txt  the newest versions available, polars 2.x included, without the
#                               extras (their IO managers cannot read on polars 2), on Python 3.13.
# Both carry the `test` dependency group. `make ci-requirements` regenerates them (needs PyPI);
# test modules that import a package an environment lacks are not collected, and pytest's
# summary names them.
LOWEST_PYTHON ?= 3.11
NEWEST_PYTHON ?= 3.13
COMPILE := $(UV) pip compile pyproject.toml --group test --quiet --custom-compile-command "make ci-requirements"

.PHONY: test-lowest test-newest ci-requirements

test-lowest: .venv-lowest/.synced-from-requirements  ## The whole suite on the lowest versions.
	.venv-lowest/bin/python requirements/check_floors.py
	.venv-lowest/bin/pytest

test-newest: .venv-newest/.synced-from-requirements  ## The whole suite on the newest versions.
	.venv-newest/bin/pytest

ci-requirements: | $(UV)
	$(COMPILE) --extra parquet --extra duckdb --resolution lowest-direct \
		--python-version 3.11 --upgrade -o requirements/ci-lowest.txt
	$(COMPILE) --python-version 3.13 --upgrade -o requirements/ci-newest.txt

.venv-lowest/.synced-from-requirements: requirements/ci-lowest.txt pyproject.toml | $(UV)
	$(UV) venv --clear --quiet --python $(LOWEST_PYTHON) .venv-lowest
	$(UV) pip sync --quiet --python .venv-lowest/bin/python $<
	$(UV) pip install --quiet --python .venv-lowest/bin/python --no-deps -e .
	touch $@

.venv-newest/.synced-from-requirements: requirements/ci-newest.txt pyproject.toml | $(UV)
	$(UV) venv --clear --quiet --python $(NEWEST_PYTHON) .venv-newest
	$(UV) pip sync --quiet --python .venv-newest/bin/python $<
	$(UV) pip install --quiet --python .venv-newest/bin/python --no-deps -e .
	touch $@
