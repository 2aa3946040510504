# sparkstorm: the two commands of the quick start are `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
DEMO_SECONDS ?= 30
TEST_MARKERS ?= not slow

.PHONY: help demo test test-unit test-all install lint docs bench bench-chaos bench-pypy clean services

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*##/\t/'

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@rm -f $(VENV)/.installed-* && touch $@

install: $(STAMP)  ## create .venv and install the project with its test dependencies

demo: $(STAMP)  ## run the word-count example on Spark local[*] for DEMO_SECONDS seconds
	$(VENV)/bin/sparkstorm run examples/wordcount.py --time $(DEMO_SECONDS)

services:  ## install the services the tests run for real (Debian's zookeeper, redis, postgresql, chromium) if missing
	bash scripts/install-zookeeper.sh
	bash scripts/install-redis.sh
	bash scripts/install-postgresql.sh
	bash scripts/install-chromium.sh

test: $(STAMP) services  ## run the test suite but the slow tests (exit code 5, no tests collected, counts as failure)
	$(PY) -m pytest -q -m "$(TEST_MARKERS)" --durations=25

# the tests that need no service, no Spark and no browser: tests/unit, the benchmarks' own
# tests and the doctests of src/ (a Spark test outside tests/integration/ carries @pytest.mark.spark)
UNIT_PATHS ?= tests/unit tests/benchmarks src/sparkstorm

test-unit: $(STAMP)  ## the unit tests only: no services, no Spark, no browser (a few minutes at most)
	$(PY) -m pytest -q -m "not spark and not browser and not slow" --durations=10 $(UNIT_PATHS)

test-all: $(STAMP) services  ## run every test, the slow chaos suite (tests/chaos/) included
	$(PY) -m pytest -q

lint: $(STAMP)  ## ruff, then mypy strict (pyproject's [tool.mypy])
	$(VENV)/bin/ruff check src tests benchmarks scripts
	$(VENV)/bin/mypy

docs: $(STAMP)  ## regenerate docs/configuration.md and docs/errors.md (a unit test checks they are current)
	$(PY) scripts/config_reference.py
	$(PY) scripts/error_reference.py

bench: $(STAMP)  ## the word-count benchmark, then its latency-throughput curve (minutes; not part of the tests)
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) benchmarks/wordcount.py --batch-api --checkpoint-mode
	$(PY) benchmarks/latency_curve.py

bench-chaos: $(STAMP)  ## time to recovery after each chaos fault: kill -9s, a ZooKeeper outage (minutes)
	bash scripts/install-zookeeper.sh
	$(PY) benchmarks/chaos_recovery.py

bench-pypy: $(STAMP)  ## executor CPU per sentence, CPython vs Debian's PyPy (installs it: scripts/install-pypy.sh)
	bash scripts/install-pypy.sh
	$(PY) benchmarks/executor_interpreters.py --python .venv-pypy/bin/python

clean:  ## remove the virtualenv and caches
	rm -rf $(VENV) .venv-pypy .pytest_cache .ruff_cache src/*.egg-info
