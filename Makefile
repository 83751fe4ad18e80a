# Everything starts from a bare machine: the first target run creates .venv.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run play test test-fast lint pictures screenshots bench clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,web]'
	touch $@

## make run: the web app on http://127.0.0.1:8000 (play, watch and replay every game)
run: $(BIN)/.installed
	$(BIN)/ggp web

## make play: wall maze in the terminal against a random player
play: $(BIN)/.installed
	$(BIN)/ggp play wallmaze --white human --black random

## make test: the whole test suite (../shared must sit beside the repository)
test: $(BIN)/.installed
	$(BIN)/python -m pytest -q

## make test-fast: the suite without the slow deep-perft tests
test-fast: $(BIN)/.installed
	$(BIN)/python -m pytest -q -m "not slow"

## make lint: ruff and mypy, as CI runs them
lint: $(BIN)/.installed
	$(BIN)/ruff check src tests docs bench
	$(BIN)/ruff format --check src tests docs bench
	$(BIN)/mypy src/ggp

## make pictures: redraw the board pictures under docs/img
pictures: $(BIN)/.installed
	$(BIN)/python docs/boards.py

## make screenshots: each game's play page in headless chromium, to docs/img/screens
screenshots: $(BIN)/.installed
	$(BIN)/python docs/screenshots.py

## make bench: speed against OpenSpiel on this machine (installs the bench extra)
bench: $(BIN)/.installed
	$(BIN)/pip install -q -e '.[dev,web,bench]'
	$(BIN)/ggp bench

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
