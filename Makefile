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

# The main job on the built-in data: an odds demo, the designer's odds tables in reports/ and the
# balance report of the default scenario in reports/balance/index.html (every registered policy
# against every other; under a minute on two cores once the engine is compiled — the first run compiles
# it first, about 4-6 minutes, announced on stderr).
BALANCE_SCENARIO ?= kiev-offensive
BALANCE_GAMES ?= 1000
BALANCE_MATRIX_GAMES ?= 100
BALANCE_SAMPLE_GAMES ?= 150

run: $(STAMP)
	$(BIN)/soe-sim odds --attacker "4i,4i/3c" --defender "4i,3i" --garrison --defend --mc 200000 --seed 1
	$(BIN)/python -m analysis.odds_tables --out reports
	$(BIN)/soe-sim report balance --scenario $(BALANCE_SCENARIO) --games $(BALANCE_GAMES) \
		--matrix-games $(BALANCE_MATRIX_GAMES) --sample-games $(BALANCE_SAMPLE_GAMES) --seed 1 --out reports/balance

# Whole default suite (slow statistical tests excluded; `make test-all` includes them), one pytest-xdist
# worker per core (TEST_WORKERS=0 runs in one process); a test file's tests stay on one worker, and the
# files go out in the order tests/conftest.py gives them (one worker compiles the game loop while the
# others run the files that play no game).
# pytest exit code 5 (no tests collected) is an error here, never a silent pass.
TEST_WORKERS ?= auto
XDIST = -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
test: $(STAMP)
	$(BIN)/python -m pytest -q $(XDIST)

test-all: $(STAMP)
	$(BIN)/python -m pytest -q -m '' $(XDIST)

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_battles.py

clean:
	rm -rf $(VENV) reports .pytest_cache
