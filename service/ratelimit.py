"""Rate limits per token and per address: a fixed window counter in Redis, 429 + Retry-After."""

from __future__ import annotations

import hashlib
import time

from flask import Flask, request

from .errors import TooManyRequests


def parse_limit(text: str) -> tuple[int, int]:
    count, _, seconds = text.partition("/")
    return int(count), int(seconds or 60)


def install_rate_limit(app: Flask, client) -> None:
    spec = app.config.get("RATE_LIMIT")
    if not spec:
        return
    limit, window = parse_limit(spec)

    @app.before_request
    def _limit():
        now = int(time.time())
        bucket = now // window
        retry_after = window - now % window
        subjects = [f"addr:{request.remote_addr}"]
        auth = request.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            subjects.append("tok:" + hashlib.sha256(auth[7:].encode()).hexdigest()[:32])
        pipe = client.pipeline()
        for subject in subjects:
            key = f"rate:{subject}:{bucket}"
            pipe.incr(key)
            pipe.expire(key, window + 1)
        counts = pipe.execute()[::2]
        for subject, count in zip(subjects, counts):
            if count > limit:
                kind = "token" if subject.startswith("tok:") else "address"
                raise TooManyRequests(f"rate limit: more than {limit} requests in {window} s for this {kind}",
                                      retry_after)
