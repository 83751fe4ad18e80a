# Everything starts from a bare machine: the first target run creates .venv.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run play test test-fast test-stress chromium test-kernels test-corpus lint fuzz-gdl docs wheel-test pictures screenshots bench clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,web,rl,ray]'
	touch $@

## make run: the web app on http://127.0.0.1:8000 (play, watch and replay every game)
run: $(BIN)/.installed
	$(BIN)/ggp web

## make play: wall maze in the terminal against a random player
play: $(BIN)/.installed
	$(BIN)/ggp play wallmaze --white human --black random

## make test: the whole test suite on two workers (../shared must sit beside the repository), in two runs: the
## tests of compiled code (marked bounds_checked, see tests/conftest.py) with numba's bounds checks on, so an index
## out of range raises IndexError instead of touching memory, then the rest. numba's cache ignores
## NUMBA_BOUNDSCHECK, so the first run compiles into a cache of its own. It installs Debian's chromium for the
## browser tests first when it is missing and you may install packages (root or password-less sudo); otherwise
## those tests are skipped and the run's last line says how many and how to enable them.
## The first match after a bare start runs alone, as a first match does: beside the suite's other worker its
## 2 s moves ran out of time now and then (a search batch that ends late on a crowded machine), which says
## nothing about readiness. Beside a CPU hog on every core it played 0 random moves of 68 (README).
## What its player compiled is added to the caches afterwards (files already there stay), so the rest start warm.
FIRST_MATCH := tests/test_first_match.py::test_a_bare_installs_first_match_on_an_unseen_sheet_plays_no_random_move
BOUNDS := NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR=$(abspath $(VENV))/numba-boundscheck
test: $(BIN)/.installed chromium
	status=0; \
	$(BOUNDS) $(BIN)/python -m pytest -q -n 2 --dist worksteal --durations 15 -m "bounds_checked and not slow" || status=$$?; \
	$(BIN)/python -m pytest -q -p no:xdist $(FIRST_MATCH) || status=$$?; \
	$(BIN)/python -m pytest -q -n 2 --dist worksteal --durations 15 -m "not bounds_checked or slow" \
		--deselect $(FIRST_MATCH) || status=$$?; \
	exit $$status

## make test-stress: the timing-sensitive tests (marked timing) beside a CPU hog, a busy process on every core,
## as CI runs them; make test-stress STRESS= runs the whole suite so, and STRESS_HOG="--per-core 4" makes the
## load heavier (load 8 on two cores)
STRESS ?= -m timing
STRESS_HOG ?=
test-stress: $(BIN)/.installed chromium
	$(BIN)/python tests/stress/hog.py $(STRESS_HOG) -- $(BIN)/python -m pytest -q -n 2 $(STRESS)

## make chromium: Debian's chromium for the browser tests, installed when missing and you may (GGP_NO_INSTALL=1: never)
chromium:
	@sh tests/stress/chromium.sh

## make test-fast: the suite without the slow deep-perft tests
test-fast: $(BIN)/.installed
	$(BIN)/python -m pytest -q -m "not slow"

## make test-kernels: only the tests of compiled code, with numba's bounds checks on (make test's first run)
test-kernels: $(BIN)/.installed
	$(BOUNDS) $(BIN)/python -m pytest -q -n 2 -m "bounds_checked and not slow"

## make test-corpus: every sheet of the public GDL corpus (../shared/corpus) loaded and replayed against
## ggp-base's traces; make test runs a fixed third of them
test-corpus: $(BIN)/.installed
	GGP_CORPUS=all $(BIN)/python -m pytest -q -m corpus -n 2 tests/test_corpus.py

## make lint: ruff and mypy, as CI runs them
lint: $(BIN)/.installed
	$(BIN)/ruff check src tests docs bench
	$(BIN)/ruff format --check src tests docs bench
	$(BIN)/mypy src/ggp

## make fuzz-gdl: the differential fuzzer's long run: random valid GDL sheets and mutants of the corpus's sheets,
## each played on the prover and on every propnet evaluator; disagreements shrunk and saved under fuzz-out/
## (CI runs a 200-sheet sample in make test). FUZZ="--count 1000 --seed 7" changes the run.
FUZZ ?= --count 100000 --seed 1
fuzz-gdl: $(BIN)/.installed
	nice $(BIN)/python -m ggp.gdl.fuzz $(FUZZ) --corpus ../shared/corpus/kif --out fuzz-out

## make docs: the documentation site into site/ (MkDocs, offline, warnings are errors); ggp web serves it at /help
$(BIN)/.docs-installed: $(BIN)/.installed pyproject.toml
	$(BIN)/pip install -q -e '.[dev,web,rl,ray,docs]'
	touch $@
docs: $(BIN)/.docs-installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
	@echo "the site is in site/ (open site/index.html, or ggp web serves it at /help)"

## make wheel-test: build the sdist and wheel, install the wheel into clean virtualenvs (core and each extra)
## and run a smoke test from outside the repository
wheel-test: $(BIN)/.installed
	bash tests/wheel/run.sh

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
	rm -rf $(VENV) build site *.egg-info .pytest_cache .mypy_cache .ruff_cache
