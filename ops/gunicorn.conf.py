"""Gunicorn settings for the API (and for the HTTP benchmark, which runs its baseline app
under the very same settings). Every value can be overridden from the environment.

    gunicorn -c ops/gunicorn.conf.py 'service.app:create_app()'

gthread workers keep client connections alive (the sync worker closes each one) and let a
worker wait on Redis for one request while it serves another; one process per core is the
starting point, since the GIL serialises a process's threads.
"""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", multiprocessing.cpu_count()))
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gthread")
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "5"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 10
loglevel = os.environ.get("GUNICORN_LOGLEVEL", "warning")
accesslog = os.environ.get("GUNICORN_ACCESSLOG") or None
