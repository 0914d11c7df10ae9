PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# axe-core for the browser tests' accessibility checks, as tests/browser/package-lock.json pins it.
AXE := tests/browser/node_modules/axe-core/axe.min.js

.PHONY: run test bench lint typecheck clean screenshots openapi

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[postgres,test,dev]'
	touch $(STAMP)

# Without npm the accessibility checks skip, saying so (they fail with CI=true, as .ci/run sets).
$(AXE): tests/browser/package.json tests/browser/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix tests/browser --ignore-scripts --no-audit --no-fund --loglevel=error \
		&& touch $(AXE); \
	else echo "npm not found: the accessibility checks will skip (apt-get install -y npm)"; fi

run: $(STAMP)
	$(BIN)/reddog serve --demo

# Two workers on the two cores; the load tests, which start servers and many client processes
# of their own, run after the rest, two at a time (most of each is a server's wait on its
# clients, or clients trickling bytes: one alone keeps the two cores about half busy). The run
# starts a great many Python processes (the workers, every server and command a test starts)
# over the same sources: each writes the bytecode it compiles (and pytest its rewritten test
# modules) for the next to read, even where the environment says not to
# (PYTHONDONTWRITEBYTECODE, as container images often set it).
test: export PYTHONDONTWRITEBYTECODE =
test: $(STAMP) $(AXE)
	$(BIN)/mypy
	$(BIN)/pytest -n 2 --dist worksteal -m "not load"
	$(BIN)/pytest -n 2 --dist worksteal -m load

# The HTTP sections' load comes from wrk (Debian's package), installed here when missing; the
# bench says so, and those sections fail, if it still is not there. BENCH_ARGS goes to the bench
# (`make bench BENCH_ARGS=--full`: a million-event replay on every store; see tests/bench).
BENCH_ARGS ?=
bench: $(STAMP)
	@command -v wrk >/dev/null 2>&1 || { export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y -qq wrk >/dev/null 2>&1 \
		|| { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; } \
		|| echo "make bench: wrk could not be installed (apt-get install -y wrk)" >&2; }
	$(BIN)/python -m tests.bench $(BENCH_ARGS)
	$(BIN)/python -m tests.bench.plots

# Pictures of every page at desktop and phone sizes, taken by the browser tests as they play.
screenshots: $(STAMP) $(AXE)
	REDDOG_SCREENSHOTS=docs/screenshots $(BIN)/pytest -q -p no:xdist -m browser tests/browser

# The OpenAPI contract (docs/openapi.json), written again after a deliberate change to the API.
openapi: $(STAMP)
	$(BIN)/python -m tests.write_openapi

lint: $(STAMP)
	$(BIN)/ruff check ledger api tests
	$(BIN)/mypy

# The type checker over what pyproject.toml's [tool.mypy] names.
typecheck: $(STAMP)
	$(BIN)/mypy

# Removes the environment (and the browser tests' node_modules) and the default store's files (databases, their WAL files, the
# writers' turns file and the log's head, named one by one), never a chain key nor a backup:
# tests/unit/test_make_clean.py.
clean:
	rm -rf $(VENV) tests/browser/node_modules
	find var -maxdepth 1 -type f \( -name '*.sqlite3' -o -name '*.sqlite3-wal' \
		-o -name '*.sqlite3-shm' -o -name '*.sqlite3-journal' -o -name '*.sqlite3-writers' \
		-o -name '*.sqlite3.head' \) -delete 2>/dev/null || true
