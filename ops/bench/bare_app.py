"""The HTTP baseline: a bare Flask app whose action endpoint parses the JSON body and does one
XADD, the least a server that records an action can do. Run under the same gunicorn settings
as the service: `gunicorn -c ops/gunicorn.conf.py ops.bench.bare_app:app` (BENCH_REDIS_URL)."""

from __future__ import annotations

import os

import redis
from flask import Flask, jsonify, request

app = Flask(__name__)
client = redis.Redis.from_url(os.environ["BENCH_REDIS_URL"])  # required: the benchmark's private Redis


@app.post("/v1/games/<game_id>/actions")
def act(game_id: str):
    body = request.get_json()
    entry = client.xadd(f"bare:{{g:{game_id}}}:events", {"e": request.get_data(), "t": body["action"]["type"]})
    return jsonify({"receipt": {"id": entry.decode()}, "events": [], "status": "active"})
