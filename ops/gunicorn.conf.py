"""Gunicorn settings for the API (the production configuration; the HTTP benchmark runs its
baseline app under the very same settings). Every value can be overridden from the environment.

    gunicorn -c ops/gunicorn.conf.py 'service.app:create_app()'

The worker is gevent's: the contract tells every client to wait (long-poll, SSE, NDJSON), and
under gevent a waiting client costs a greenlet and its socket (about 20 KB), not an OS thread.
redis-py, the rate limiter, the service cache's locks and hiredis all run monkey-patched (gunicorn
patches the worker before it loads the app). A gevent worker serves at most
`worker_connections` clients at once and leaves the rest unanswered in the listen backlog, so it
is raised from gunicorn's 1,000 to 10,000 (each open connection takes a file descriptor: the
process's RLIMIT_NOFILE must be above it, see docs/performance.md). RQ workers stay in their own
processes (`speculation worker`): RQ's job timeouts use signal.alarm and RQ does not run
gevent-patched. One process per core is the starting point (the GIL serialises a process); each
process holds one Redis subscription for all its waiters (events/notify.py).

GUNICORN_WORKER_CLASS=gthread (with GUNICORN_THREADS) brings back the thread-per-request worker,
where every waiting client holds a thread.
"""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", multiprocessing.cpu_count()))
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gevent")
worker_connections = int(os.environ.get("GUNICORN_WORKER_CONNECTIONS", "10000"))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))   # gthread only
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "5"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 10
backlog = int(os.environ.get("GUNICORN_BACKLOG", "4096"))
loglevel = os.environ.get("GUNICORN_LOGLEVEL", "warning")
accesslog = os.environ.get("GUNICORN_ACCESSLOG") or None


def _trusted_proxies() -> str:
    """gunicorn trusts X-Forwarded-Proto (and its other forwarded headers) from the proxies
    SPECULATION_TRUSTED_PROXIES names, the very list the service takes X-Forwarded-For from
    (service/security.py), and from nobody when it is unset: gunicorn's own default
    (127.0.0.1 and ::1, or FORWARDED_ALLOW_IPS) would trust a local process the service does
    not. A bad value is left to the service's settings check, which stops the start naming it."""
    from service.settings import BY_NAME

    raw = os.environ.get(BY_NAME["TRUSTED_PROXIES"].variable) or ""
    try:
        return BY_NAME["TRUSTED_PROXIES"].parse(raw) or "" if raw.strip() else ""
    except ValueError:
        return ""


forwarded_allow_ips = _trusted_proxies()


def post_worker_init(worker):
    """Raise this worker's soft file-descriptor limit towards its hard limit: each open
    connection is a descriptor, and the default soft limit (often 1,024) is far below
    worker_connections."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = worker_connections + 1024
        if soft != resource.RLIM_INFINITY and soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want if hard == resource.RLIM_INFINITY else min(want, hard), hard))
    except (ImportError, ValueError, OSError):
        pass
    _tune_gc()


def _tune_gc():
    """The collector: what the app loaded is frozen out of it (never garbage), and the young
    generation is collected every 50,000 allocations rather than 700. A process holding
    thousands of waiters keeps hundreds of thousands of live objects; with the default
    thresholds each action paid for collections that scan them and find nothing
    (docs/performance.md, benchmark 8). Reference counting still frees almost everything at
    once; cycles wait a little longer. GUNICORN_GC_THRESHOLD=700 brings back the default."""
    import gc

    gc.freeze()
    young = int(os.environ.get("GUNICORN_GC_THRESHOLD", "50000"))
    gc.set_threshold(young, *gc.get_threshold()[1:])


def child_exit(server, worker):
    """prometheus-client's multiprocess mode: a dead worker's live gauges stop counting, and
    its counters and histograms are folded into the archive files (workers/metrics.py), as a
    finished job process's are: a worker gunicorn replaces leaves no files behind."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        from workers.metrics import archive_process

        multiprocess.mark_process_dead(worker.pid)
        archive_process(worker.pid)


def _json_server_errors():
    """gunicorn's own error answers (431 for a header block too large, 400 for a malformed
    request line, ...) in the API's JSON error envelope instead of an HTML page
    (service/errors.py write_server_error). The workers call gunicorn.util.write_error by
    module attribute, so replacing it here, in the master before it forks, covers them all."""
    import gunicorn.util

    from service.errors import write_server_error

    gunicorn.util.write_error = write_server_error


_json_server_errors()
