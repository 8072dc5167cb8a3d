"""Health, metrics and logs: what an operator reads.

- `/healthz`: the process answers (nothing else is checked: a load balancer restarts a
  process that fails it, so it must not fail because Redis is down).
- `/readyz`: Redis reachable and writable within a second, the append script loaded, and
  worker processes alive by their RQ heartbeat; 503 with the failing checks otherwise.
- `/metrics`: Prometheus text from prometheus-client, multiprocess-safe under gunicorn and
  across the stack's worker processes (PROMETHEUS_MULTIPROC_DIR, set by the stack).
- One JSON log line per request (method, route, status, duration, game, request id; never
  a token), and the request id carried into the jobs the request enqueues.

prometheus-client is the Prometheus project's own Python client: its multiprocess mode is
the maintained answer to gunicorn's many processes, and its parser checks our output.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import secrets
import sys
import time
from typing import Any, Callable, Iterator, Optional

from prometheus_client import (CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram,
                               generate_latest, multiprocess)
from prometheus_client.core import GaugeMetricFamily

# The workers' counters (jobs by outcome, reconciler repairs) are defined beside their jobs;
# imported here so that every process serving /metrics registers them.
from workers.metrics import JOBS_DONE, RECONCILER_REPAIRS, archive_lock  # noqa: F401

log = logging.getLogger("service.access")

REQUEST_ID_HEADER = "X-Request-ID"
READY_TIMEOUT = 1.0           # seconds each readiness probe of Redis may take
WORKER_HEARTBEAT_MAX_AGE = 60  # seconds: RQ workers beat every few seconds while alive

request_id_var: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar("request_id", default=None)

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

HTTP_REQUESTS = Counter("speculation_http_requests_total", "HTTP requests answered",
                        ["method", "route", "status"])
HTTP_LATENCY = Histogram("speculation_http_request_duration_seconds", "HTTP request latency (streams: until headers)",
                         ["method", "route"], buckets=_LATENCY_BUCKETS)
ACTIONS_APPENDED = Counter("speculation_actions_appended_total", "Actions appended to games' logs", ["by"])
APPEND_LATENCY = Histogram("speculation_append_duration_seconds", "Latency of one append (the Lua script)",
                           buckets=_LATENCY_BUCKETS)


class CoreMetrics:
    """The core's command metrics (service/core/game_repository.py CommandMetrics), on Prometheus."""

    def appended(self, seconds: float, by) -> None:
        APPEND_LATENCY.observe(seconds)
        if by is not None:   # a player's or a bot's action ("bot:<level>" counts as "bot")
            ACTIONS_APPENDED.labels(str(by).split(":")[0]).inc()


OPEN_STREAMS = Gauge("speculation_open_streams", "Event streams open (SSE and NDJSON)",
                     multiprocess_mode="livesum")
BROADCAST_STREAMS = Gauge("speculation_broadcast_streams",
                          "Event streams parked in the broadcaster (one greenlet per game serves them)",
                          multiprocess_mode="livesum")
WAITING_CLIENTS = Gauge("speculation_waiting_clients", "Long-polls waiting", multiprocess_mode="livesum")
REDIS_ERRORS = Counter("speculation_redis_errors_total", "Redis errors seen", ["where"])

# Label values come from closed sets, so no client can add series: a method outside these is
# "other", a request no rule matched (404, or 405 for a method the rule does not take) is
# "unmatched" (the route label is otherwise the matched rule, never the path).
HTTP_METHODS = frozenset({"GET", "POST", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH"})


def method_label(method: str) -> str:
    return method if method in HTTP_METHODS else "other"


def new_request_id() -> str:
    return secrets.token_hex(8)


def current_request_id() -> Optional[str]:
    return request_id_var.get()


@contextlib.contextmanager
def request_scope(request_id: Optional[str]) -> Iterator[None]:
    """Make `request_id` current for the block: a job runs in the scope of the request that
    enqueued it (workers/tasks.py is bound to this), so its log lines and the jobs it
    enqueues carry that id."""
    token = request_id_var.set(request_id)
    try:
        yield
    finally:
        request_id_var.reset(token)


# --- logs -------------------------------------------------------------------------------

class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and any `extra` fields."""

    _STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {"ts": round(record.created, 3), "level": record.levelname,
                               "logger": record.name, "msg": record.getMessage()}
        rid = current_request_id()
        if rid and "request_id" not in record.__dict__:
            out["request_id"] = rid
        for key, value in record.__dict__.items():
            if key not in self._STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


def configure_logging(level: str = "INFO", stream=None) -> None:
    """JSON lines on stderr for the whole process (idempotent)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_speculation", False):
            root.removeHandler(handler)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler._speculation = True
    root.addHandler(handler)
    root.setLevel(level)


# --- metrics ------------------------------------------------------------------------------

def metrics_registry(job_counts: Optional[Callable[[], dict]] = None) -> CollectorRegistry:
    """The registry /metrics renders: every process's samples in multiprocess mode, plus
    the job queue's current counts read from RQ at scrape time."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        _ArchiveAwareCollector(registry)
    else:
        from prometheus_client import REGISTRY as registry
    if job_counts is not None:
        registry.register(_JobsCollector(job_counts))
    return registry


class _ArchiveAwareCollector(multiprocess.MultiProcessCollector):
    """prometheus-client's multiprocess collector, reading the folder under the archive's
    shared lock: a worker folding a dead work horse's files into the archive
    (workers/metrics.py) never shows a scrape the horse twice, or not at all."""

    def collect(self):
        with archive_lock(self._path, shared=True):
            return list(super().collect())


class _JobsCollector:
    """Jobs queued, running and failed, by kind (a job id names its work: bot_, timeout_,
    score_...), read from the queue when scraped."""

    def __init__(self, counts: Callable[[], dict]):
        self.counts = counts

    def describe(self):
        return []

    def collect(self):
        family = GaugeMetricFamily("speculation_jobs", "Jobs in the queue by state and kind", labels=["state", "kind"])
        try:
            counts = self.counts()
        except Exception:
            REDIS_ERRORS.labels("metrics").inc()
            counts = {}
        for (state, kind), n in sorted(counts.items()):
            family.add_metric([state, kind], n)
        yield family


def job_kind(job_id: str) -> str:
    return job_id.split("_", 1)[0] if "_" in job_id else "other"


def rq_job_counts(queue) -> dict:
    from rq.registry import FailedJobRegistry, StartedJobRegistry

    out: dict[tuple[str, str], int] = {}
    for state, ids in (("queued", queue.get_job_ids()),
                       ("running", StartedJobRegistry(queue=queue).get_job_ids()),
                       ("failed", FailedJobRegistry(queue=queue).get_job_ids())):
        for job_id in ids:
            key = (state, job_kind(job_id))
            out[key] = out.get(key, 0) + 1
    return out


def render_metrics(registry: CollectorRegistry) -> tuple[bytes, str]:
    return generate_latest(registry), CONTENT_TYPE_LATEST


# --- readiness ------------------------------------------------------------------------------

def readiness(store_client, script=None, rq_client=None, need_workers: bool = True) -> dict:
    """{"ready": bool, "checks": {name: {"ok": bool, ...}}}: Redis written to, the append
    script loaded (loaded now if a restarted Redis lost it), workers beating."""
    checks: dict[str, dict] = {}
    started = time.monotonic()
    try:
        key = "health:{readyz}"
        store_client.set(key, str(time.time()), ex=60)
        checks["redis"] = {"ok": True, "ms": round((time.monotonic() - started) * 1000, 1)}
        script = script() if callable(script) else script
        if script is not None:
            if not store_client.script_exists(script.sha)[0]:
                store_client.script_load(script.script)
            checks["append_script"] = {"ok": bool(store_client.script_exists(script.sha)[0])}
    except Exception as err:  # any failure to reach or write Redis means not ready
        REDIS_ERRORS.labels("readyz").inc()
        checks["redis"] = {"ok": False, "error": type(err).__name__}
    if need_workers and checks["redis"]["ok"] and rq_client is not None:
        try:
            from rq import Worker

            now = time.time()
            alive = 0
            for worker in Worker.all(connection=rq_client):
                beat = worker.last_heartbeat
                if beat is not None and now - beat.timestamp() < WORKER_HEARTBEAT_MAX_AGE:
                    alive += 1
            checks["workers"] = {"ok": alive > 0, "alive": alive}
        except Exception as err:
            REDIS_ERRORS.labels("readyz").inc()
            checks["workers"] = {"ok": False, "error": type(err).__name__}
    return {"ready": all(c["ok"] for c in checks.values()), "checks": checks}


# --- the HTTP side -------------------------------------------------------------------------

def install(app, backend, core, job_counts: Optional[Callable[[], dict]] = None,
            need_workers: bool = True) -> None:
    """Request ids, one JSON access line and the request metrics per request, and the
    /healthz, /readyz and /metrics routes (outside /v1: for operators, not clients).
    `job_counts` reads the job queue's counts at scrape time."""
    from flask import Response, g, jsonify, request

    registry = metrics_registry(job_counts)
    script = (lambda: core.store.append_script) if hasattr(type(core.store), "append_script") else None

    @app.before_request
    def _start():
        incoming = request.headers.get(REQUEST_ID_HEADER, "")
        rid = incoming if 0 < len(incoming) <= 64 and incoming.isascii() and incoming.isprintable() else new_request_id()
        g.request_id = rid
        g.started = time.perf_counter()
        g.token = request_id_var.set(rid)

    @app.after_request
    def _finish(response):
        route = request.url_rule.rule if request.url_rule is not None else "unmatched"
        elapsed = time.perf_counter() - getattr(g, "started", time.perf_counter())
        method = method_label(request.method)
        HTTP_REQUESTS.labels(method, route, str(response.status_code)).inc()
        HTTP_LATENCY.labels(method, route).observe(elapsed)
        response.headers[REQUEST_ID_HEADER] = getattr(g, "request_id", "")
        if route not in ("/metrics", "/healthz", "/readyz"):
            game = (request.view_args or {}).get("game_id")
            log.info("request", extra={"method": request.method, "route": route, "status": response.status_code,
                                       "ms": round(elapsed * 1000, 2), "game": game,
                                       "request_id": getattr(g, "request_id", None)})
        return response

    @app.teardown_request
    def _reset(exc):
        token = g.pop("token", None)
        if token is not None:
            request_id_var.reset(token)

    @app.get("/healthz")
    def healthz():
        return jsonify({"status": "ok", "pid": os.getpid()})

    @app.get("/readyz")
    def readyz():
        probe = (backend.probe_client or backend.store_client) if backend else None
        report = readiness(probe, script,
                           backend.rq_client if backend and not backend.embedded else None,
                           need_workers=need_workers and backend is not None and not backend.embedded)
        response = jsonify(report)
        response.status_code = 200 if report["ready"] else 503
        if not report["ready"]:
            response.headers["Retry-After"] = "5"
        return response

    @app.get("/metrics")
    def metrics():
        body, content_type = render_metrics(registry)
        return Response(body, content_type=content_type)
