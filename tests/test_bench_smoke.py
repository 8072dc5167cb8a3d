"""Every benchmark of ops/bench in its tiny form, so none of them can rot (the figures of a
tiny run mean nothing: only that each benchmark runs and reports a complete row)."""

import json

import pytest

from ops.bench.__main__ import BENCHES, run, table
from ops.bench.common import Scale
from ops.drills.redis_server import redis_server_path

pytestmark = pytest.mark.skipif(redis_server_path() is None, reason="redis-server is not installed")


def test_every_benchmark_runs_and_writes_its_table(tmp_path):
    rows = run(list(BENCHES), Scale.tiny(), out=tmp_path, echo=lambda m: None)
    benches = {r.bench.split()[0] for r in rows}
    assert benches == set(BENCHES)
    for row in rows:
        assert row.figure > 0, row
        if row.baseline is not None:
            assert row.baseline > 0 and row.ratio is not None, row
        if row.goal:
            assert row.met in (True, False), row
    http = next(r for r in rows if r.bench.startswith("2"))
    assert http.extra["errors"] == {"service": 0, "bare": 0}
    waiting = [r for r in rows if r.bench.startswith("8")]   # the production gunicorn config
    assert waiting[0].extra["errors"] == 0 and waiting[0].extra["worker"] == "gevent"
    assert all(r.extra["delivered"] == r.extra["expected"] for r in waiting if "delivered" in r.extra)
    assert any(r.case.startswith("Redis commands/s") and r.met for r in waiting)
    saved = json.loads((tmp_path / "latest.json").read_text())
    assert len(saved["rows"]) == len(rows)
    assert "| benchmark |" in (tmp_path / "latest.md").read_text() and table(rows).count("\n") == len(rows) + 1
