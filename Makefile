# Thin wrapper over tox. Every target bootstraps its own tool venv, so a fresh
# machine with Python 3.11 and Java 17 needs nothing else.
PYTHON ?= python3
VENV   := .venv
WHEELHOUSE := $(CURDIR)/.cache/wheelhouse
PYSPARK_VERSION := 4.3.0
# tox-uv installs every env; uv finds the prebuilt pyspark wheel here.
TOX    := UV_FIND_LINKS=$(WHEELHOUSE) $(VENV)/bin/tox
# Extra arguments for tox, e.g. make test TOXARGS="-e py311-test-protocol"
TOXARGS ?=

.DEFAULT_GOAL := help
.PHONY: help bootstrap test test-slow test-slow-ci lint typecheck bench bench-companion demo clean

help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(VENV)/.bootstrapped:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check 'tox>=4.20,<5' 'tox-uv>=1.20'
	touch $@

# pyspark is published only as an sdist that builds a ~456 MB wheel. Build it
# once here (pip caches it across runs); every tox env installs from this dir.
$(WHEELHOUSE)/.built: $(VENV)/.bootstrapped
	$(VENV)/bin/pip wheel --quiet --disable-pip-version-check --no-deps \
		-w $(WHEELHOUSE) 'pyspark==$(PYSPARK_VERSION)'
	touch $@

bootstrap: $(VENV)/.bootstrapped $(WHEELHOUSE)/.built ## Create the tool venv (tox, tox-uv) and the pyspark wheel

# `make test` runs two envs at a time: the pyspark suite (one lane, ~2/3 of the time) beside
# the others. The envs are created first, one after another: the editable installs build
# their Cython extensions in the source tree, which two builds at once would share (the
# first env compiles them; each later one copies a module newer than its sources). tox
# prints the output of an env that fails (and each env's verdict); `.tox/<env>/log` keeps
# the rest.
TEST_ENVS := py311-test-pyspark,lint,typecheck,py311-test-protocol,py311-test-avrostate-ext,py311-test-avrostate-pure,py311-test-storage,py311-test-search,py311-test-admin
ENVS_OR_ARGS = $(if $(TOXARGS),$(TOXARGS),-e $(1))

test: bootstrap ## Run every tox env: lint, typecheck and each package's tests
	$(TOX) run --notest $(call ENVS_OR_ARGS,$(TEST_ENVS))
	$(TOX) run-parallel -p 2 --parallel-no-spinner $(call ENVS_OR_ARGS,$(TEST_ENVS))

# Every package's tests marked slow: crash trials, races, fuzzers, install tests and the
# long differential run against Parquet. Each env below has at least one; two envs run at
# a time (tox prints a failing env's output, `.tox/<env>/log` keeps the rest).
SLOW_ENVS := py311-test-pyspark,py311-test-protocol,py311-test-admin,py311-test-search,py311-test-storage,py311-test-avrostate-ext

test-slow: bootstrap ## Run every slow test of every package (crash trials, races, fuzzers, installs)
	$(TOX) run-parallel -p 2 --parallel-no-spinner -e $(SLOW_ENVS) -- -m slow

# What CI runs after `make test`: every slow test but the long differential run against
# Parquet (marked `long`, only in the pyspark env: 30 seeds, ~30 min on 2 cores; the bounded
# differential run is in `make test`), with 20 SIGKILL trials per crash test instead of 50,
# two envs at a time, to keep CI under 30 minutes.
test-slow-ci: bootstrap ## The slow tests CI runs (all but the long differential run)
	INDEXTABLES_CRASH_TRIALS=20 $(TOX) run-parallel -p 2 --parallel-no-spinner \
		-e $(SLOW_ENVS) -- -m "slow and not long"

lint: bootstrap ## ruff check, ruff format --check, layout checks
	$(TOX) run -e lint

typecheck: bootstrap ## mypy over every package's src/
	$(TOX) run -e typecheck

bench: bootstrap ## Run the benchmarks (figures and same-run ratios)
	$(TOX) run -e bench-avrostate,bench-pyspark

bench-companion: bootstrap ## Companion index vs its Delta source (size, search, build, sync)
	$(TOX) run -e bench-search -- --companion

demo: bootstrap ## The main job: a real PySpark pipeline on a local table
	$(TOX) run -e demo

clean: ## Remove venvs, caches and build output
	rm -rf $(VENV) .tox .cache build */*.egg-info
	find packages -name '*.egg-info' -prune -exec rm -rf {} +
	find packages -name '*.so' -delete
