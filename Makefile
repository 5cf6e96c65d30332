# Two commands for a new user: `make demo` and `make test`.
# Both build their virtual environment from uv.lock on first use; nothing else is needed but
# python3 (3.11+) and make. `make test` (and every development target) uses .venv with all the
# development tools; `make demo` and `make ui` use .venv-demo, which has only the library, the
# demo's IO managers and the Dagster UI.

PYTHON ?= python3
UV_VERSION := 0.13.9
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
SYNCED := $(VENV)/.synced-from-lock

export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)

# Python writes the bytecode of what it imports into each environment, once: with
# PYTHONDONTWRITEBYTECODE set in the shell (as on CI's machines), every interpreter the suite
# starts (the test workers, each documentation example, each `dg` command) compiled Dagster,
# Polars and the rest from source again, about 3 s of CPU each.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo ui test unit unit-hostile unit-on integration lint typecheck check docs docs-serve benchmark clean

# --- the demo and the UI (issue 12) -----------------------------------------------------------
# `make demo` materializes into the Dagster instance that `make ui` opens: .demo/dagster_home,
# telemetry off. Running either again keeps the run history (the demo overwrites its tables and
# quarantines under .demo/, and adds runs). Only `make demo-reset` and `make clean` delete it.
.PHONY: demo-reset screenshots

DEMO_VENV := .venv-demo
DEMO_SYNCED := $(DEMO_VENV)/.synced-from-lock
DEMO_HOME := $(CURDIR)/.demo/dagster_home
DEMO_ENV := DAGSTER_HOME=$(DEMO_HOME) PYTHONPATH=examples

demo: $(DEMO_SYNCED) $(DEMO_HOME)/dagster.yaml  ## Materialize the example pipeline; print what happened.
	$(DEMO_ENV) $(DEMO_VENV)/bin/python -m dagster_dataframely_demo.demo

# `dg dev`, as Dagster now recommends, over examples/dg.toml (the demo as a dg project). It runs
# under scripts/ui.py, which stops the whole server within seconds of Ctrl-C (`dg dev` alone
# takes a minute or more).
ui: $(DEMO_SYNCED) $(DEMO_HOME)/dagster.yaml  ## The demo's runs in the Dagster UI (http://127.0.0.1:3000).
	DAGSTER_HOME=$(DEMO_HOME) PYTHONPATH=$(CURDIR)/examples DAGSTER_DATAFRAMELY_DEMO_DIR=$(CURDIR)/.demo \
		$(DEMO_VENV)/bin/python scripts/ui.py --cwd examples -- \
		$(CURDIR)/$(DEMO_VENV)/bin/dg dev -h 127.0.0.1 -p 3000

demo-reset:  ## Delete the demo's tables, quarantines and its whole run history (.demo/).
	rm -rf .demo

$(DEMO_HOME)/dagster.yaml:
	mkdir -p $(@D)
	printf 'telemetry:\n  enabled: false\n' > $@

# What a user of the library installs with both extras (the demo's IO managers), plus the
# `demo` dependency group (dagster-webserver); none of the development tools.
DEMO_SYNC := $(UV) sync --frozen --no-default-groups --extra parquet --extra duckdb

$(DEMO_SYNCED): uv.lock pyproject.toml src/dagster_dataframely/_version.py | $(UV)
	UV_PROJECT_ENVIRONMENT=$(DEMO_VENV) $(DEMO_SYNC) --group demo --python $(PYTHON)
	touch $@

# `make screenshots` (not in CI): photographs the demo in the Dagster UI into docs/images/ with
# Debian's chromium (`apt-get install chromium`) driven by Playwright.
SHOTS_VENV := .venv-screenshots

screenshots: | $(UV)
	UV_PROJECT_ENVIRONMENT=$(SHOTS_VENV) $(DEMO_SYNC) --group screenshots --python $(PYTHON)
	$(SHOTS_VENV)/bin/python scripts/screenshots.py
# --- end of the demo and the UI ----------------------------------------------------------------

# The suites run on WORKERS processes (pytest-xdist): CI has two cores. `make test WORKERS=0`
# runs them in this one process. A worker that runs out of tests takes some of the other's
# (`--dist worksteal`), so a slow test near the end does not leave one core idle.
WORKERS ?= 2
PARALLEL := -n $(WORKERS) --dist worksteal

# Every test run keeps its temporary files (pytest's tmp_path, each tempfile, the Dagster homes,
# SQLite and DuckDB files the tests make) on a memory file system where the machine has one
# (TEST_TMPDIR, /dev/shm on Linux): on a disk, each commit of a test's SQLite event log or DuckDB
# table waits for an fsync (each module twice at once, on /tmp and on /dev/shm, loaded machine:
# test_demo.py 269 s -> 196 s wall, 47.8 s -> 39.9 s CPU; test_concurrent_runs.py 90 s -> 73 s
# wall). What the tests assert does not depend on where the files are; `make test TEST_TMPDIR=`
# leaves TMPDIR as it is.
TEST_TMPDIR ?= $(if $(wildcard /dev/shm/.),/dev/shm)
ifneq ($(TEST_TMPDIR),)
test unit unit-hostile unit-on integration test-lowest test-newest: export TMPDIR := $(TEST_TMPDIR)
endif

# integration_tests/distributed/ runs in one pytest process of its own (its tests share one Dask
# cluster, PostgreSQL server and S3 server, started once for the folder; a pytest-xdist worker
# each would start its own), at the same time as the rest of the suite: its processes mostly
# wait on each other (scripts/test_suite.py; its output follows the rest's).
DISTRIBUTED := integration_tests/distributed

test: $(SYNCED)  ## Run the whole test suite: unit tests and the integration suite.
	DAGSTER_DATAFRAMELY_TEST_COLLECT_ALL=1 $(VENV)/bin/python scripts/test_suite.py \
		$(VENV)/bin/pytest $(DISTRIBUTED) $(PARALLEL)

unit: $(SYNCED)
	$(VENV)/bin/pytest tests $(PARALLEL)

# With HOSTILE=1, a run's command is prefixed with every setting variable exported to a valid
# non-default value ($(1) is the environment whose python prints them): it passes only if the
# root conftest.py clears each one, so no test depends on the outer environment. `unit-hostile`
# always does so; `unit-on`, `test-lowest` and `test-newest` do with HOSTILE=1 (CI runs the
# last two so).
hostile = $(if $(HOSTILE),env $$($(1)/bin/python scripts/non_default_environment.py))

unit-hostile: HOSTILE := 1
unit-hostile: $(SYNCED)
	$(call hostile,$(VENV)) $(VENV)/bin/pytest tests $(PARALLEL)

# What `make test` proves once, on the development versions, and the runs on other versions
# (`unit-on`, `test-lowest`, `test-newest`) leave out, because it tests the same code the same
# way on any version:
# - the examples of the documentation pages (the slowest modules: each example is a fresh
#   interpreter); they test the pages, not the versions;
# - fault injection (`-m fault_injection`): a write killed half way or a disk filled, which
#   tests our own staging and renames. The runs on other versions still store through the same
#   managers and staged writes, so a version that breaks them fails there;
# - mypy over a user's snippet (the settings keywords' types), mypy and pyright over the typed
#   examples of the docs, and ruff and mypy over the schema code `dd.suggest_schema` writes:
#   development tools, not in the version jobs' environments, and the code they read is the
#   package's own.
# And the search of each property test (hypothesis) for the package's own mistakes: a property
# proves two paths equal on any input, and `make test` draws its full count of examples. A
# version job looks for a dependency or a Python that behaves differently, which shows on the
# first examples a property draws (every property still runs, on every version); so there
# each draws at most PER_VERSION_EXAMPLES (`--examples-per-property`, the root conftest.py).
# Likewise the combinations of a parametrized test's values (an input hint's form with each
# outcome and each manager): a version job runs the fewest cases that show each value of each
# parameter once (`--each-value-once`, tests/parameter_values.py); `make test` runs them all.
PER_VERSION_EXAMPLES := 10
NOT_PER_VERSION := --ignore=integration_tests/test_docs_examples.py -m "not fault_injection" \
	--each-value-once \
	--ignore=integration_tests/test_typed_examples.py \
	--deselect tests/model/test_setting_keywords.py::test_mypy_refuses_a_misspelt_setting_and_a_wrong_type \
	--deselect tests/suggest/test_suggest_schema.py::test_output_is_formatted_and_passes_mypy_strict \
	--examples-per-property $(PER_VERSION_EXAMPLES)

# The unit suite on another interpreter, in an environment of its own built from the same lock:
#   make unit-on INTERPRETER=/path/to/python3.13
# HOSTILE=1 exports every setting variable (`hostile`, above).
UNIT_ON_VENV = .venv-$(notdir $(realpath $(INTERPRETER)))
unit-on: | $(UV)
	@test -n "$(INTERPRETER)" || { echo "usage: make unit-on INTERPRETER=/path/to/python"; exit 2; }
	UV_PROJECT_ENVIRONMENT=$(UNIT_ON_VENV) $(UV) sync --frozen --python $(INTERPRETER)
	$(call hostile,$(UNIT_ON_VENV)) $(UNIT_ON_VENV)/bin/pytest tests $(PARALLEL) $(NOT_PER_VERSION)

integration: $(SYNCED)
	$(VENV)/bin/python scripts/test_suite.py $(VENV)/bin/pytest $(DISTRIBUTED) integration_tests $(PARALLEL)

lint: $(SYNCED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

typecheck: $(SYNCED)
	$(VENV)/bin/mypy

check: lint typecheck test

# --- packaging (issue 12) ----------------------------------------------------------------------
.PHONY: dist wheel-test

dist: | $(UV)  ## Build the wheel and the sdist into dist/.
	rm -rf dist
	$(UV) build --out-dir dist

# Installs the built wheel, not the checkout, into a fresh virtual environment and runs the demo
# from it; checks what the wheel and the sdist contain.
wheel-test: dist $(SYNCED)
	$(VENV)/bin/python scripts/check_dist.py dist
# --- end packaging -----------------------------------------------------------------------------

# The documentation site, into site/: warnings (a broken link, a docstring parameter that is not
# in the signature, a page missing from the nav) fail the build. Needs no network.
docs: $(SYNCED)  ## Build the documentation site into site/ (mkdocs build --strict).
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

docs-serve: $(SYNCED)  ## Serve the documentation site on http://127.0.0.1:8000 while editing.
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --strict -a 127.0.0.1:8000

benchmark: $(SYNCED)  ## Print timings (not tests): declaring assets, validating 1M/5M rows, a Collection, wide schemas (alone and in a run).
	$(VENV)/bin/python -m benchmarks.definition_time
	$(VENV)/bin/python -m benchmarks.validation
	$(VENV)/bin/python -m benchmarks.collection --rows 250000 1000000
	$(VENV)/bin/python -m benchmarks.wide
	$(VENV)/bin/python -m benchmarks.wide_run

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

$(SYNCED): uv.lock pyproject.toml src/dagster_dataframely/_version.py | $(UV)
	$(UV) sync --frozen --python $(PYTHON)
	touch $@

clean:  ## Delete every environment, dist/, site/ and the demo with its run history.
	rm -rf $(TOOLS) $(VENV) .venv-* .demo dist site

# --- The lowest and the newest supported versions (docs/compatibility.md) --------------------
# Each set is a committed, fully pinned requirements file, so a run is reproducible:
#   requirements/ci-lowest.txt  every runtime dependency and both extras ([parquet], [duckdb]) at
#                               the lowest version pyproject.toml allows, on Python 3.11;
#   requirements/ci-newest.txt  the newest versions available, polars 2.x included, without the
#                               extras (their IO managers cannot read on polars 2), on Python 3.13.
# Both carry the `test` dependency group, the lowest also the `postgres` group (the newest set
# leaves it out: see pyproject.toml). `make ci-requirements` regenerates them (needs PyPI);
# test modules that import a package an environment lacks are not collected, and pytest's
# summary names them.
LOWEST_PYTHON ?= 3.11
NEWEST_PYTHON ?= 3.13
COMPILE := $(UV) pip compile pyproject.toml --group test --quiet --custom-compile-command "make ci-requirements"

# The two version jobs leave out what `make test` proves once (NOT_PER_VERSION, above).
VERSION_JOB_PYTEST := pytest $(PARALLEL) $(NOT_PER_VERSION)

.PHONY: test-lowest test-newest ci-requirements

test-lowest: .venv-lowest/.synced-from-requirements  ## The whole suite on the lowest versions.
	.venv-lowest/bin/python requirements/check_floors.py
	$(call hostile,.venv-lowest) .venv-lowest/bin/$(VERSION_JOB_PYTEST)

test-newest: .venv-newest/.synced-from-requirements  ## The whole suite on the newest versions.
	$(call hostile,.venv-newest) .venv-newest/bin/$(VERSION_JOB_PYTEST)

ci-requirements: | $(UV)
	$(COMPILE) --group postgres --extra parquet --extra duckdb --extra delta --resolution lowest-direct \
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
