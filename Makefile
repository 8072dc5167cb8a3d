PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install serve test check worker demo bench clean golden screenshots client tournament tournament-search league \
	ratings-league audit-attacks failover-drill

# Built once, under a lock: two targets started together on a fresh clone share one build.
$(STAMP): pyproject.toml
	@$(PYTHON) ops/install.py $(VENV) $(STAMP) test

install: $(STAMP)

# The whole stack: an embedded Redis with AOF in $(DATA) (kept across restarts and by make
# clean), the API on $(PORT) under gunicorn, the worker processes. Ctrl-C stops everything.
PORT ?= 5000
DATA ?= var
serve: $(STAMP)
	$(BIN)/speculation serve --port $(PORT) --data $(DATA)

# The whole suite in parallel: pytest-xdist, two workers a core (TEST_WORKERS=2 to choose: much
# of the suite waits on servers and subprocesses it starts, so a core has room for two), each
# worker with its own Redis servers, ports and folders; tests marked `timing` run while no other
# test does (tests/conftest.py). It ends with the 25 slowest tests. TEST_ARGS="-k stack" narrows.
TEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print(2 * (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))')
# Bytecode (and pytest's rewritten test modules) cached under .venv even where the environment
# says PYTHONDONTWRITEBYTECODE: else every xdist worker and every process a test starts compiles
# the project again (collection took 10 s of CPU a worker instead of 3). Nothing lands in the tree.
TEST_ENV := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(abspath $(VENV))/pycache
test: $(STAMP)
	$(TEST_ENV) $(BIN)/python -m pytest -n $(TEST_WORKERS) --durations=25 $(TEST_ARGS)

# The inner loop, at most 90 s: the rules, the kernel, the golden games, the core and the store
# contract (the tests marked `quick`).
check: $(STAMP)
	$(TEST_ENV) $(BIN)/python -m pytest -m quick -n $(TEST_WORKERS) --durations=10 $(TEST_ARGS)

worker: $(STAMP)
	$(BIN)/speculation worker

demo: $(STAMP)
	$(BIN)/speculation demo

BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP) pyproject.toml
	@$(PYTHON) ops/install.py $(VENV) $(BENCH_STAMP) test,bench

# Every benchmark against its baseline, measured in the same run: prints the table and writes
# ops/bench/results/latest.md and latest.json (BENCH_ARGS="--quick", "--only 1,4", "--profile").
bench: $(BENCH_STAMP)
	$(BIN)/python -m ops.bench $(BENCH_ARGS)

# The bot tournament: every level (and a few outside strategies) one seat against three, 400
# sessions a cell (2,000 for speculation), both cores, resumable: rerun to continue after a stop
# (TOURNAMENT_ARGS="--fresh", "--budget 1800", "--games speculate", "--seed 1"). Table: docs/bots.md.
tournament: $(STAMP)
	nice -n 10 $(BIN)/python -m ops.tournament --processes 2 --markdown ops/tournament/results/latest.md $(TOURNAMENT_ARGS)

# The bot league (ops/tournament/league.py, docs/bots.md "League"): CMA-ES searches each game's
# families of strategies for exploiters of the heuristic, then the kept league is played against
# the heuristic both ways. One process under nice -n 15, resumable: rerun after a stop
# (LEAGUE_ARGS="--budget 1800", "--keep", "--matrix-only --search", "--games spekulation", "--seed 2").
league: $(STAMP)
	nice -n 15 $(BIN)/python -m ops.tournament.league --markdown ops/tournament/results/league.md $(LEAGUE_ARGS)

# The search level's 4-player verdicts alone: one search seat against three heuristics, 400
# sessions a game (2,000 for speculation). Hours of CPU: a search move takes up to 200 ms.
tournament-search: $(STAMP)
	nice -n 10 $(BIN)/python -m ops.tournament --processes 2 --only search --field heuristic --no-extra-players \
		--markdown ops/tournament/results/search.md $(TOURNAMENT_ARGS)

# The ratings league: 1,000 rated games of bots alone (every type, 2 to 5 seats, a search seat in
# 8 % of them) played by real worker processes on a private redis-server, a worker killed -9
# inside a scoring 6 times; judged: every type's ratings rebuilt equal from its log, each game
# rated exactly once; prints the levels' ratings per type. About an hour on 2 cores
# (RATINGS_LEAGUE_ARGS="--size 200", "--workers 4", "--json"). Figures: docs/reliability.md.
ratings-league: $(STAMP)
	nice -n 10 $(BIN)/python -m ops.drills.ratings_league $(RATINGS_LEAGUE_ARGS)

# The operator-attack drill: an operator with full Redis access (and the signing key) rewrites,
# deletes, forks and drops checkpoints, 1,000 attempts a kind, on a private redis-server; judged:
# every attempt caught by a monitor or a player's bundle, no finding on honest runs. About ten
# minutes on 2 cores (AUDIT_ATTACKS_ARGS="--attempts 200", "--redis fake", "--json").
# Figures: docs/reliability.md.
audit-attacks: $(STAMP)
	nice -n 10 $(BIN)/python -m ops.drills.audit_attacks --attempts 1000 $(AUDIT_ATTACKS_ARGS)

# The failover drill (issue 45): games played over HTTP by two API processes and two workers on a
# loopback valkey cluster of 3 primaries with a replica each (RQ on its own redis-server), the
# busiest primary killed -9 three times, each time back as a replica before the next kill; run with
# REDIS_ACK_REPLICAS=1 (judged: nothing acknowledged lost, every game finished and verified) and
# then with 0 (the losses reported as measured). About ten minutes on 2 cores, under nice -n 5
# only: the failovers' timing is measured (FAILOVER_ARGS="--failovers 5", "--aof", "--json").
# Figures: docs/reliability.md.
failover-drill: $(STAMP)
	status=0; \
	nice -n 5 $(BIN)/python -m ops.drills.cluster_failover --ack-replicas 1 --failovers 3 --short $(FAILOVER_ARGS) || status=1; \
	nice -n 5 $(BIN)/python -m ops.drills.cluster_failover --ack-replicas 0 --failovers 3 --short $(FAILOVER_ARGS) || status=1; \
	exit $$status

clean:
	rm -rf $(VENV) $(VENV).lock *.egg-info .pytest_cache

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
