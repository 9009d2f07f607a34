# Fresh machine: `make run` and `make test` are all a newcomer needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test test-all bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,jupyter]'
	touch $(STAMP)

install: $(STAMP)

# The main job on the built-in data: an odds demo and the designer's odds tables in reports/.
run: $(STAMP)
	$(BIN)/soe-sim odds --attacker "4i,4i/3c" --defender "4i,3i" --garrison --defend --mc 200000 --seed 1
	$(BIN)/python -m analysis.odds_tables --out reports

# Whole default suite (slow statistical tests excluded; `make test-all` includes them).
# pytest exit code 5 (no tests collected) is an error here, never a silent pass.
test: $(STAMP)
	$(BIN)/python -m pytest -q

test-all: $(STAMP)
	$(BIN)/python -m pytest -q -m ''

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_battles.py

clean:
	rm -rf $(VENV) reports .pytest_cache
