PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench lint clean

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/reddog serve --demo

test: $(STAMP)
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python -m tests.bench
	$(BIN)/python -m tests.bench_audit

lint: $(STAMP)
	$(BIN)/ruff check ledger api tests

clean:
	rm -rf $(VENV) var/*.sqlite3*
