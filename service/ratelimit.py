"""Rate limits: a fixed window counter in Redis per subject, 429 + Retry-After.

- every request, per token and per address (RATE_LIMIT);
- game creation, per address (CREATE_LIMIT): its own, tighter window, since each game costs
  storage for good (its log is kept);
- games only bots play, live at once per creating address (BOT_GAMES_PER_ADDRESS): each keeps
  a worker busy until it ends, so one client's bot games cannot fill the background queue (a
  seat a turn timeout plays counts as a bot's, and so does a game whose people all left).
Each creation limit is checked and taken in one atomic step, and given back when the create
fails after all (admit_creation, give_back).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import Optional

from flask import Flask, current_app, request

from .core.errors import CoreError
from .errors import TooManyRequests
from .routes.context import bearer

LIVE = ("open", "active", "ended")   # a game that still needs (or may need) a worker


def parse_limit(text: str) -> tuple[int, int]:
    count, _, seconds = text.partition("/")
    return int(count), int(seconds or 60)


def _window_key(subject: str, now: int, window: int) -> str:
    return f"rate:{subject}:{now // window}"


# One more hit in a window's counter and its expiry, in one step: an INCR and an EXPIRE sent
# apart leave a counter that never expires when the process dies between them (or the
# connection drops), and a pipeline of the two is no transaction on a cluster. One key: any
# slot. KEYS[1]: the counter; ARGV[1]: its time to live (s). Returns the count.
_HIT = """
local n = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[1])
return n
"""
# A count given back (give_back), only while its counter lives: a DECR on a counter that has
# expired would make a new one, at -1 and without expiry.
_UNHIT = """
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECR', KEYS[1]) end
return 0
"""


def _window_counts(client, subjects: list[str], window: int, now: Optional[int] = None) -> tuple[list[int], int]:
    """One more hit for each subject in the window `now` is in: (counts, seconds to its end).
    One script a counter, the subjects' scripts in one round trip: EVAL, not EVALSHA (a cluster
    pipeline cannot load a missing script), sent as a raw command (a cluster pipeline has no
    eval method)."""
    now = int(time.time()) if now is None else now
    pipe = client.pipeline(transaction=False)
    for subject in subjects:
        pipe.execute_command("EVAL", _HIT, 1, _window_key(subject, now, window), window + 1)
    return pipe.execute(), window - now % window


def install_rate_limit(app: Flask, client) -> None:
    spec = app.config.get("RATE_LIMIT")
    if not spec:
        return
    limit, window = parse_limit(spec)

    @app.before_request
    def _limit():
        subjects = [f"addr:{request.remote_addr}"]
        token = bearer()   # the reading authentication uses: `bearer x` and `Bearer  x` count as x
        if token:
            subjects.append("tok:" + hashlib.sha256(token.encode()).hexdigest()[:32])
        counts, retry_after = _window_counts(client, subjects, window)
        for subject, count in zip(subjects, counts):
            if count > limit:
                kind = "token" if subject.startswith("tok:") else "address"
                raise TooManyRequests(f"rate limit: more than {limit} requests in {window} s for this {kind}",
                                      retry_after)


def admit_per_address(setting: str, code: str, what: str) -> None:
    """One more of `what` for this address under the limit the app config's `setting` names
    (e.g. SIGNUP_LIMIT "5/3600"): 429 `code` with Retry-After past it. Counted before the
    request is looked at, so a flood of bad requests counts too."""
    _admit(f"{code}:{request.remote_addr}", "address", setting, code, what)


def admit_per_account(account_id: str, setting: str, code: str, what: str) -> None:
    """As admit_per_address, counted per account (a challenger's challenges)."""
    _admit(f"{code}:account:{account_id}", "account", setting, code, what)


def _admit(subject: str, per: str, setting: str, code: str, what: str) -> None:
    spec = current_app.config.get(setting)
    if not spec:
        return
    limit, window = parse_limit(spec)
    client = current_app.extensions["backend"].store_client
    (count,), retry_after = _window_counts(client, [subject], window)
    if count > limit:
        raise TooManyRequests(f"{what}: more than {limit} in {window} s from this {per}; retry in "
                              f"{retry_after} s", retry_after, code=code)


def _bot_games_key(creator_id: Optional[str] = None) -> str:
    """The set of a creator's live self-playing games (default: this request's, `creator()`)."""
    return f"creator:{creator_id or creator()}:bot-games"


def count_self_playing(game_id: str, creator_id: str) -> None:
    """A game that became self-playing after its creation (every person in it left: POST
    /v1/games/{id}/leave) takes a place among its creator's live self-playing games like a
    game created so (BOT_GAMES_PER_ADDRESS), past the cap if need be: a leave is never
    refused, so the creator's next self-playing game waits for a place instead. A game
    already counted keeps its place (and its time)."""
    if not creator_id or not int(current_app.config.get("BOT_GAMES_PER_ADDRESS") or 0):
        return
    client = current_app.extensions["backend"].store_client
    pipe = client.pipeline(transaction=True)
    pipe.zadd(_bot_games_key(creator_id), {game_id: time.time()}, nx=True)
    pipe.expire(_bot_games_key(creator_id), 7 * 86400)
    pipe.execute()


def creator() -> str:
    """Whose bot time a game created by this request is (the fair scheduling of bot turns,
    workers/queue.py): the client address today, hashed (it is kept with the game)."""
    return "addr:" + hashlib.sha256(str(request.remote_addr).encode()).hexdigest()[:16]


# Takes a slot of the address's live self-playing games, or says how many it has: one step.
# KEYS[1]: the address's games (a sorted set by time: game ids, and "r:<token>" reservations of
# creates under way). ARGV: cap, reservation, now, seconds after which a reservation is stale
# (its create died). Returns -1 when taken (or already held), else the number of live games.
_TAKE_SLOT = """
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[3]) - tonumber(ARGV[4]))
for _, member in ipairs(old) do
  if string.sub(member, 1, 2) == 'r:' then redis.call('ZREM', KEYS[1], member) end
end
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then return -1 end
local live = redis.call('ZCARD', KEYS[1])
if live >= tonumber(ARGV[1]) then return live end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
redis.call('EXPIRE', KEYS[1], 604800)
return -1
"""
RESERVATION_STALE = 60   # seconds: a create that held a slot this long without a game died


class Admission:
    """What one create request took of the creation caps: given back if the create then fails,
    turned into the game's own entry once it is made. `self_playing`: a game that can play to
    its end with nobody acting, every seat a bot's or played by a turn timeout."""

    def __init__(self, self_playing: bool):
        self.self_playing = self_playing
        self.reservation = "r:" + secrets.token_hex(8)
        self.window_key = None     # the CREATE_LIMIT counter this request counted in
        self.slot_key = None       # the set it holds a reservation in
        self.taken = False


def admit_creation(admission: Admission, live_status) -> None:
    """Before a game is created (the core's `admit`: a new, valid create only): 429
    `too_many_games` past CREATE_LIMIT for this address, 429 `too_many_bot_games` when it
    already has BOT_GAMES_PER_ADDRESS live self-playing games. Each limit is checked and taken
    in one atomic step (a Lua script each), so parallel creates cannot pass it together;
    `live_status(game_id)` reads a game's status, to forget the ones that are over. Runs once
    per request, however often the core decides the create again."""
    if admission.taken:
        return
    client = current_app.extensions["backend"].store_client
    spec = current_app.config.get("CREATE_LIMIT")
    if spec:
        limit, window = parse_limit(spec)
        now, subject = int(time.time()), f"create:{request.remote_addr}"
        (count,), retry_after = _window_counts(client, [subject], window, now)
        if count > limit:
            raise TooManyRequests(f"game creation: more than {limit} games in {window} s from this address; "
                                  f"retry in {retry_after} s", retry_after, code="too_many_games")
        admission.window_key = _window_key(subject, now, window)   # the counter just counted in
    cap = int(current_app.config.get("BOT_GAMES_PER_ADDRESS") or 0)
    if admission.self_playing and cap:
        key = _bot_games_key()
        for member in client.zrange(key, 0, -1):   # forget the games that are over (never a live one)
            game_id = member.decode()
            if game_id.startswith("r:"):
                continue
            try:
                status = live_status(game_id)
            except CoreError:   # no such game any more
                status = None
            if status not in LIVE:
                client.zrem(key, game_id)
        live = client.register_script(_TAKE_SLOT)(keys=[key], args=[cap, admission.reservation, time.time(),
                                                                      RESERVATION_STALE])
        if live != -1:
            raise TooManyRequests(f"seats: this address already has {live} live games only bots play (at most "
                                  f"{cap}; a seat played by a turn timeout counts as a bot's); wait for one to "
                                  f"end, or add a player seat", 10, code="too_many_bot_games")
        admission.slot_key = key
    admission.taken = True


def give_back(admission: Admission) -> None:
    """The create that took these places failed after all (a conflict, an error): both go back."""
    if not admission.taken:
        return
    client = current_app.extensions["backend"].store_client
    pipe = client.pipeline(transaction=False)
    if admission.window_key:
        pipe.execute_command("EVAL", _UNHIT, 1, admission.window_key)
    if admission.slot_key:
        pipe.zrem(admission.slot_key, admission.reservation)
    pipe.execute()
    admission.taken = False


def record_creation(game_id: str, admission: Admission) -> None:
    """The game is made: its reservation becomes its own entry, in one transaction."""
    if admission.slot_key:
        client = current_app.extensions["backend"].store_client
        pipe = client.pipeline(transaction=True)
        pipe.zrem(admission.slot_key, admission.reservation)
        pipe.zadd(admission.slot_key, {game_id: time.time()})
        pipe.expire(admission.slot_key, 7 * 86400)
        pipe.execute()
