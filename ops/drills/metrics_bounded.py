"""Metrics bounded drill: `/metrics` stays small and quick however many jobs and requests the
service has served (issue 38, item 4).

On a private redis-server, with one multiprocess metrics folder as the stack sets it up: the
API under gunicorn with the shipped configuration (one process) and `--workers` real
`speculation worker` processes. `--size` jobs are enqueued (turn timeouts of a game whose
seats nobody took: each runs in its own forked work horse, counts in
`speculation_jobs_total` and answers "stale"), and `--methods` requests with invented HTTP
methods are sent to invented paths. Before and after: the page's size, the time of a scrape
(the median and the slowest of `--scrapes`), the series on the page and the files in the
folder. It passes when the page is under 200 KB, the slowest scrape under 200 ms, every job
is counted exactly once (the archive of dead work horses lost nothing) and the folder holds
no more files than before the jobs (plus the archives).

    python -m ops.drills.metrics_bounded                  # 10,000 jobs, 2,000 invented methods
    python -m ops.drills.metrics_bounded --size 300 --methods 200
"""

from __future__ import annotations

import os
import random
import statistics
import string
import sys
import tempfile
import time

from . import _kit

PAGE_LIMIT = 200 * 1024
SCRAPE_LIMIT = 0.2


def _series(page: bytes) -> int:
    return sum(1 for line in page.splitlines() if line and not line.startswith(b"#"))


def _jobs_counted(page: bytes) -> float:
    total = 0.0
    for line in page.decode().splitlines():
        if line.startswith("speculation_jobs_total{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def _files(folder: str) -> int:
    return sum(1 for name in os.listdir(folder) if name.endswith(".db"))


def _scrape(http, url: str, times: int) -> dict:
    seconds, page = [], b""
    for _ in range(times):
        started = time.perf_counter()
        response = http.get(url + "/metrics")
        seconds.append(time.perf_counter() - started)
        assert response.status_code == 200, response.text[:200]
        page = response.content
    return {"bytes": len(page), "series": _series(page), "median_ms": round(statistics.median(seconds) * 1000, 1),
            "max_ms": round(max(seconds) * 1000, 1), "jobs_counted": _jobs_counted(page)}


def run(size: int = 10_000, methods: int = 2_000, workers: int = 2, scrapes: int = 20, seed: int = 1) -> dict:
    import httpx
    from rq import Queue

    from ops.drills.redis_server import free_port
    from workers.queue import QUEUE_NAME, TASKS

    rng = random.Random(seed)
    started = time.monotonic()
    with _kit.private_redis() as server, tempfile.TemporaryDirectory(prefix="drill-metrics-") as folder:
        env = {"REDIS_URL": server.url, "RQ_REDIS_URL": server.url, "PROMETHEUS_MULTIPROC_DIR": folder,
               "SPECULATION_ARCHIVE_URL": os.path.join(folder, "games-archive"),
               "GUNICORN_WORKERS": "1", "SPECULATION_LOG_LEVEL": "WARNING"}
        port = free_port()
        children = [_kit.ChildProcess([sys.executable, "-m", "gunicorn", "-c", str(_kit.REPO / "ops" / "gunicorn.conf.py"),
                                       "--bind", f"127.0.0.1:{port}", "service.wsgi:app"], env, name="api")]
        url = f"http://127.0.0.1:{port}"
        http = httpx.Client(timeout=30)
        try:
            children += [_kit.start_worker(server.url, extra_env=env) for _ in range(workers)]

            def up():
                try:
                    return http.get(url + "/healthz").status_code == 200
                except httpx.HTTPError:
                    return False

            assert _kit.wait_until(up, 60, every=0.2), children[0].output()[-3000:]
            client = _kit.redis_client(server.url)
            service = _kit.make_service(client)
            game = service.create("big-shot", {}, [{}, {}])   # nobody seated: every timeout is stale
            before = _scrape(http, url, scrapes)
            files_before = _files(folder)

            queue = Queue(QUEUE_NAME, connection=client)
            for start in range(0, size, 500):
                queue.enqueue_many([Queue.prepare_data(f"{TASKS}.turn_timeout", (game.game_id, 0, 1),
                                                       job_id=f"timeout_drill_{n}", result_ttl=0)
                                    for n in range(start, min(size, start + 500))])

            def all_counted():
                return _jobs_counted(http.get(url + "/metrics").content) >= size

            assert _kit.wait_until(all_counted, 60 + size / 10, every=1.0), children[1].output()[-3000:]
            jobs_seconds = time.monotonic() - started
            sent = {}
            for _ in range(methods):
                method = "".join(rng.choice(string.ascii_uppercase) for _ in range(rng.randint(3, 12)))
                path = "/" + "".join(rng.choice(string.ascii_lowercase) for _ in range(8))
                status = http.request(method, url + rng.choice([path, "/v1/games", "/metrics"])).status_code
                sent[status] = sent.get(status, 0) + 1
            after = _scrape(http, url, scrapes)
            files_after = _files(folder)
        finally:
            http.close()
            for child in reversed(children):
                child.stop()
    fig = {"jobs": size, "invented_methods": methods, "workers": workers, "answers": sent,
           "before": before, "after": after, "files_before": files_before, "files_after": files_after,
           "jobs_seconds": round(jobs_seconds, 1), "seconds": round(time.monotonic() - started, 1)}
    fig["ok"] = (after["bytes"] < PAGE_LIMIT and after["max_ms"] < SCRAPE_LIMIT * 1000
                 and after["jobs_counted"] == size and files_after <= files_before + 4)
    return fig


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 10_000, "jobs run (each in its own work horse)")
    p.add_argument("--methods", type=int, default=2_000, help="requests with an invented HTTP method")
    p.add_argument("--workers", type=int, default=2, help="`speculation worker` processes")
    p.add_argument("--scrapes", type=int, default=20, help="scrapes timed before and after")
    args = p.parse_args(argv)
    _kit.conclude("metrics_bounded", args,
                  lambda: run(args.size, args.methods, args.workers, args.scrapes, args.seed), lambda fig: (
                      f"{fig['jobs']} jobs and {fig['invented_methods']} invented methods: /metrics "
                      f"{fig['before']['bytes']} -> {fig['after']['bytes']} bytes, {fig['before']['series']} -> "
                      f"{fig['after']['series']} series, scrape median {fig['after']['median_ms']} ms, slowest "
                      f"{fig['after']['max_ms']} ms; files {fig['files_before']} -> {fig['files_after']}; "
                      f"jobs counted {fig['after']['jobs_counted']:.0f}/{fig['jobs']} ({fig['seconds']} s)"))


if __name__ == "__main__":
    main()
