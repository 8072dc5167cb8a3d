PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install serve test worker demo bench clean golden screenshots client tournament tournament-search

$(STAMP): pyproject.toml
	@echo "== installing the service and its dependencies into $(VENV) (once; about a minute)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade --progress-bar on pip
	$(BIN)/pip install --progress-bar on -e '.[test]'
	@echo "== installed"
	touch $(STAMP)

install: $(STAMP)

# The whole stack: an embedded Redis with AOF in $(DATA) (kept across restarts and by make
# clean), the API on $(PORT) under gunicorn, the worker processes. Ctrl-C stops everything.
PORT ?= 5000
DATA ?= var
serve: $(STAMP)
	$(BIN)/speculation serve --port $(PORT) --data $(DATA)

test: $(STAMP)
	$(BIN)/python -m pytest

worker: $(STAMP)
	$(BIN)/speculation worker

demo: $(STAMP)
	$(BIN)/speculation demo

BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(BIN)/pip install -q -e '.[test,bench]'
	touch $(BENCH_STAMP)

# Every benchmark against its baseline, measured in the same run: prints the table and writes
# ops/bench/results/latest.md and latest.json (BENCH_ARGS="--quick", "--only 1,4", "--profile").
bench: $(BENCH_STAMP)
	$(BIN)/python -m ops.bench $(BENCH_ARGS)

# The bot tournament: every level (and a few outside strategies) one seat against three, 400
# sessions a cell (2,000 for speculation), both cores, resumable: rerun to continue after a stop
# (TOURNAMENT_ARGS="--fresh", "--budget 1800", "--games speculate", "--seed 1"). Table: docs/bots.md.
tournament: $(STAMP)
	nice -n 10 $(BIN)/python -m ops.tournament --processes 2 --markdown ops/tournament/results/latest.md $(TOURNAMENT_ARGS)

# The search level's 4-player verdicts alone: one search seat against three heuristics, 400
# sessions a game (2,000 for speculation). Hours of CPU: a search move takes up to 200 ms.
tournament-search: $(STAMP)
	nice -n 10 $(BIN)/python -m ops.tournament --processes 2 --only search --field heuristic --no-extra-players \
		--markdown ops/tournament/results/search.md $(TOURNAMENT_ARGS)

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache

# Record the golden games that have none yet (tests/golden/); existing ones are never re-recorded.
golden: $(STAMP)
	$(BIN)/python -m tests.golden_games

# docs/images/*.png: the lobby, each game's table and the replay viewer (Debian's chromium).
screenshots: $(STAMP)
	$(BIN)/python docs/tools/screenshots.py

# client/: a Python client generated from /openapi.json by openapi-python-client, and its
# wheel in client/dist/ (git-ignored: generated code is never committed). `pip install client/dist/*.whl`
client: $(STAMP)
	$(BIN)/python -m ops.client --out client
