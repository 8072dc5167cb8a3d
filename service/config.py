"""Configuration: the settings and their defaults, read from the environment.

With no REDIS_URL the store runs on an in-process fakeredis server (the embedded mode of
`make serve`): nothing to install. With REDIS_URL it runs on that Redis, and RQ on
RQ_REDIS_URL (default: the same), since RQ cannot run on Redis Cluster. service/bootstrap.py
builds everything from these settings.
"""

from __future__ import annotations

import os

DEFAULTS = {
    "REDIS_URL": None,
    "RQ_REDIS_URL": None,
    "ALLOW_SEED": False,            # choosing a game's seed: test configuration only
    "MAX_CONTENT_LENGTH": 64 * 1024,
    "EMBEDDED_WORKER": None,        # None: on in embedded mode, off with a real Redis
    "SNAPSHOT_EVERY": 200,
    "STREAM_KEEPALIVE": 15.0,       # seconds between keep-alives on event streams
    "STREAM_MAX_SECONDS": 300.0,    # the longest event stream (a longer `follow` is cut to it)
    "STREAMS_PER_TOKEN": 8,         # open streams + long-polls per token or ticket, per process (0: no cap)
    "STREAMS_PER_ADDRESS": 256,     # open streams + long-polls per client address, per process (0: no cap)
    "REDIS_MAX_CONNECTIONS": 64,    # the store client's pool, per process (requests wait for a free one)
    "TICKET_TTL": 60,
    "RATE_LIMIT": None,             # e.g. "120/60": requests per seconds, per token and per address
}


def from_env() -> dict:
    config = dict(DEFAULTS)
    for key in ("REDIS_URL", "RQ_REDIS_URL", "RATE_LIMIT"):
        if os.environ.get(key):
            config[key] = os.environ[key]
    if os.environ.get("ALLOW_SEED") == "1":
        config["ALLOW_SEED"] = True
    for key in ("STREAM_KEEPALIVE", "STREAM_MAX_SECONDS"):
        if os.environ.get(key):
            config[key] = float(os.environ[key])
    for key in ("STREAMS_PER_TOKEN", "STREAMS_PER_ADDRESS", "REDIS_MAX_CONNECTIONS"):
        if os.environ.get(key):
            config[key] = int(os.environ[key])
    return config
