"""The WSGI entry point for gunicorn: `gunicorn -c ops/gunicorn.conf.py 'service.wsgi:app'`.

A served API needs a shared Redis: without REDIS_URL (or REDIS_CLUSTER_NODES) each gunicorn worker would get its own
in-memory store and answer 404 for another's games. `make serve` (service/stack.py) sets it.
"""

import os

from service.app import create_app

if not (os.environ.get("REDIS_URL") or os.environ.get("REDIS_CLUSTER_NODES")
        or os.environ.get("SPECULATION_REDIS_CLUSTER_NODES")):
    raise RuntimeError("REDIS_URL (or REDIS_CLUSTER_NODES) is not set: the served API needs a Redis shared by "
                       "its processes (`make serve` starts one for you; see docs/operations.md)")

from service import config, observability  # noqa: E402

observability.configure_logging(config.from_env()["LOG_LEVEL"])
app = create_app()
