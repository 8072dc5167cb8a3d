"""/metrics stays bounded (issue 38, item 4): a dead process's multiprocess files are folded
into one archive per type and deleted (workers/metrics.py archive_process; the worker does it
for every work horse it reaps), and request labels come from closed sets (an invented
method is "other", a path no rule matches "unmatched"). The drill ops/drills/metrics_bounded.py
in a short form: jobs in real work horses and invented methods against the real stack."""

import os
import random
import string
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ops.drills import _kit
from ops.drills.redis_server import redis_server_path

ROOT = Path(__file__).resolve().parents[1]

# Run in a process of its own: prometheus-client picks its multiprocess values at import.
ARCHIVE_SCRIPT = textwrap.dedent("""
    import json, os, sys
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
    from prometheus_client.multiprocess import MultiProcessCollector
    from workers.metrics import archive_process

    folder = os.environ["PROMETHEUS_MULTIPROC_DIR"]
    done = Counter("t_done_total", "jobs", ["kind"])
    took = Histogram("t_seconds", "latency", buckets=(0.1, 1.0))
    live = Gauge("t_live", "live", multiprocess_mode="livesum")
    top = Gauge("t_top", "max", multiprocess_mode="max")
    total = Gauge("t_sum", "sum", multiprocess_mode="sum")

    def page():
        registry = CollectorRegistry()
        MultiProcessCollector(registry, folder)
        return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
                for line in generate_latest(registry).decode().splitlines() if line and line[0] != "#"}

    children = []
    for n in range(int(sys.argv[1])):
        pid = os.fork()
        if pid == 0:
            done.labels("bot" if n % 2 else "score").inc(n + 1)
            took.observe(0.05 * n)
            live.inc()
            top.set(n)
            total.inc(2)
            os._exit(0)
        os.waitpid(pid, 0)
        children.append(pid)
    before, files_before = page(), len(os.listdir(folder))
    folded = [archive_process(pid) for pid in children]
    archive_process(children[0])   # twice: nothing left to fold
    after, names = page(), sorted(os.listdir(folder))
    print(json.dumps({"before": before, "after": after, "files_before": files_before, "pid": os.getpid(),
                      "names": names, "folded": folded}))
""")


def test_a_dead_process_is_folded_into_the_archive_without_losing_a_count(tmp_path):
    import json

    env = dict(os.environ, PROMETHEUS_MULTIPROC_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", ARCHIVE_SCRIPT, "6"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    fig = json.loads(out.stdout)
    before, after = fig["before"], fig["after"]
    assert fig["files_before"] >= 6 * 4           # counter, histogram and gauges per process
    # left: the archives, and the files of the process itself (alive)
    assert sorted(n for n in fig["names"] if n.endswith(".db") and not n.endswith(f"_{fig['pid']}.db")) == [
        "counter_archive.db", "gauge_max_archive.db", "gauge_sum_archive.db", "histogram_archive.db"]
    assert after['t_done_total{kind="score"}'] == before['t_done_total{kind="score"}'] == 1 + 3 + 5
    assert after['t_done_total{kind="bot"}'] == before['t_done_total{kind="bot"}'] == 2 + 4 + 6
    for name in ('t_seconds_count', 't_seconds_sum', 't_seconds_bucket{le="0.1"}', 't_seconds_bucket{le="1.0"}',
                 't_top', 't_sum'):
        assert after[name] == pytest.approx(before[name]), name
    assert after["t_top"] == 5 and after["t_sum"] == 12
    assert after.get("t_live", 0) == 0            # a dead process is live no more


def test_invented_methods_and_paths_add_no_series():
    from prometheus_client import REGISTRY

    app = _kit.make_app(_kit.fake_client())
    client = app.test_client()
    rng = random.Random(1)

    def series() -> set:
        page = client.get("/metrics").get_data(as_text=True)
        return {line.rsplit(" ", 1)[0] for line in page.splitlines()
                if line.startswith("speculation_http_request")}

    for path in ("/zzz-warm", "/v1/games", "/healthz"):   # every (route, status) the loop reaches
        client.open(path, method="FROB")
    client.get("/no/such/path")
    seen = series()
    other_before = REGISTRY.get_sample_value("speculation_http_requests_total",
                                             {"method": "other", "route": "unmatched", "status": "405"}) or 0
    for _ in range(100):
        method = "".join(rng.choice(string.ascii_uppercase) for _ in range(rng.randint(3, 10)))
        path = "/" + "".join(rng.choice(string.ascii_lowercase) for _ in range(12))
        client.open(rng.choice([path, "/v1/games", "/healthz"]), method=method)
        client.get(path)
    assert series() == seen | {s for s in series() if 'route="/metrics"' in s}
    labels = [s for s in series() if 'method="' in s]
    assert all(any(f'method="{m}"' in s for m in ("GET", "POST", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH",
                                                     "other")) for s in labels)
    assert not any("/no/such/path" in s or "zzz" in s for s in series())
    assert REGISTRY.get_sample_value("speculation_http_requests_total",
                                     {"method": "other", "route": "unmatched", "status": "405"}) > other_before


@pytest.mark.timing
@pytest.mark.skipif(redis_server_path() is None, reason="redis-server is not installed")
def test_metrics_bounded_drill_short():
    from ops.drills import metrics_bounded

    fig = metrics_bounded.run(size=150, methods=150, workers=1, scrapes=3)
    assert fig["ok"], fig
    assert fig["after"]["jobs_counted"] == 150
    assert fig["files_after"] <= fig["files_before"] + 4        # the archives, not a file per job
    assert fig["after"]["series"] - fig["before"]["series"] < 40  # the jobs' and requests' own series


GUNICORN_CHILD_EXIT_SCRIPT = textwrap.dedent("""
    import json, os, runpy, types
    from prometheus_client import Counter

    served = Counter("t_served_total", "requests")
    pid = os.fork()
    if pid == 0:
        served.inc(3)
        os._exit(0)
    os.waitpid(pid, 0)
    had = sorted(n for n in os.listdir(os.environ["PROMETHEUS_MULTIPROC_DIR"]) if n.endswith(f"_{pid}.db"))
    conf = runpy.run_path(os.path.join("ops", "gunicorn.conf.py"))
    conf["child_exit"](None, types.SimpleNamespace(pid=pid))
    left = sorted(n for n in os.listdir(os.environ["PROMETHEUS_MULTIPROC_DIR"]) if n.endswith(f"_{pid}.db"))
    print(json.dumps({"had": had, "left": left}))
""")


def test_a_gunicorn_worker_that_exits_leaves_no_metrics_files(tmp_path):
    """gunicorn's child_exit (ops/gunicorn.conf.py) folds a replaced worker's files into the
    archive, as the worker does for a finished job's process."""
    import json

    env = dict(os.environ, PROMETHEUS_MULTIPROC_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", GUNICORN_CHILD_EXIT_SCRIPT], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    fig = json.loads(out.stdout)
    assert fig["had"] and fig["left"] == [], fig
    assert (tmp_path / "counter_archive.db").exists()
