"""Rate limits: a fixed window counter in Redis per subject, 429 + Retry-After.

- every request, per token and per address (RATE_LIMIT);
- game creation, per address (CREATE_LIMIT): its own, tighter window, since each game costs
  storage for good (its log is kept);
- games only bots play, live at once per creating address (BOT_GAMES_PER_ADDRESS): each keeps
  a worker busy until it ends, so one client's bot games cannot fill the background queue.
"""

from __future__ import annotations

import hashlib
import time

from flask import Flask, current_app, request

from .core.errors import CoreError
from .errors import TooManyRequests

LIVE = ("open", "active", "ended")   # a game that still needs (or may need) a worker


def parse_limit(text: str) -> tuple[int, int]:
    count, _, seconds = text.partition("/")
    return int(count), int(seconds or 60)


def _window_counts(client, subjects: list[str], window: int) -> tuple[list[int], int]:
    """One more hit for each subject in the current window: (counts, seconds to its end)."""
    now = int(time.time())
    bucket = now // window
    pipe = client.pipeline()
    for subject in subjects:
        key = f"rate:{subject}:{bucket}"
        pipe.incr(key)
        pipe.expire(key, window + 1)
    return pipe.execute()[::2], window - now % window


def install_rate_limit(app: Flask, client) -> None:
    spec = app.config.get("RATE_LIMIT")
    if not spec:
        return
    limit, window = parse_limit(spec)

    @app.before_request
    def _limit():
        subjects = [f"addr:{request.remote_addr}"]
        auth = request.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            subjects.append("tok:" + hashlib.sha256(auth[7:].encode()).hexdigest()[:32])
        counts, retry_after = _window_counts(client, subjects, window)
        for subject, count in zip(subjects, counts):
            if count > limit:
                kind = "token" if subject.startswith("tok:") else "address"
                raise TooManyRequests(f"rate limit: more than {limit} requests in {window} s for this {kind}",
                                      retry_after)


def _bot_games_key() -> str:
    return f"creator:{request.remote_addr}:bot-games"


def check_creation(all_bots: bool, live_status) -> None:
    """Before a game is created: 429 `too_many_games` past CREATE_LIMIT for this address, 429
    `too_many_bot_games` when it already has BOT_GAMES_PER_ADDRESS live games only bots play
    (`live_status(game_id)` reads a game's status; finished ones are forgotten)."""
    client = current_app.extensions["backend"].store_client
    spec = current_app.config.get("CREATE_LIMIT")
    if spec:
        limit, window = parse_limit(spec)
        (count,), retry_after = _window_counts(client, [f"create:{request.remote_addr}"], window)
        if count > limit:
            raise TooManyRequests(f"game creation: more than {limit} games in {window} s from this address; "
                                  f"retry in {retry_after} s", retry_after, code="too_many_games")
    cap = int(current_app.config.get("BOT_GAMES_PER_ADDRESS") or 0)
    if all_bots and cap:
        key = _bot_games_key()
        live = 0
        for member in client.zrange(key, 0, -1):
            game_id = member.decode()
            try:
                status = live_status(game_id)
            except CoreError:   # no such game any more
                status = None
            if status in LIVE:
                live += 1
            else:
                client.zrem(key, game_id)
        if live >= cap:
            raise TooManyRequests(f"seats: this address already has {live} live games only bots play (at most "
                                  f"{cap}); wait for one to end, or add a player seat", 10, code="too_many_bot_games")


def record_creation(game_id: str, all_bots: bool) -> None:
    if all_bots and current_app.config.get("BOT_GAMES_PER_ADDRESS"):
        client = current_app.extensions["backend"].store_client
        key = _bot_games_key()
        pipe = client.pipeline()
        pipe.zadd(key, {game_id: time.time()})
        pipe.expire(key, 7 * 86400)
        pipe.execute()
