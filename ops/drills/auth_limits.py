"""Auth and rate-limit drill: every endpoint that takes a seat token, called with no token,
a forged token, another game's token and the right one; every seat of every game acting
with its token only for itself; tokens searched for in every Redis key; and the limits per
token and per address answering 429 with Retry-After.

    python -m ops.drills.auth_limits --size 3      # games per registered type
"""

from __future__ import annotations

import random
import secrets

from projections import disclosure
from projections.templates import fill_template

from . import _kit

# (method, path template, needs a token): every endpoint that reads the caller's seat.
SECURED = [("GET", "/v1/games/{id}/view", True), ("POST", "/v1/games/{id}/actions", True),
           ("GET", "/v1/games/{id}/events", False), ("POST", "/v1/games/{id}/stream-tickets", False),
           ("GET", "/v1/games/{id}/replay?at=1", False), ("GET", "/v1/games/{id}/ledger", False),
           ("GET", "/v1/games/{id}/export", False)]


def _call(http, method, path, token=None):
    headers = _kit.auth(token, "auth-drill")
    if method == "POST":
        return http.post(path, json={"action": {"type": "nothing"}}, headers=headers)
    return http.get(path, headers=headers)


def redis_values(client) -> list[bytes]:
    """Every key and every stored value of a Redis, read by type (never a compressed dump)."""
    out = []
    for key in client.scan_iter(count=1000):
        out.append(key)
        kind = client.type(key)
        if kind == b"string":
            out.append(client.get(key) or b"")
        elif kind == b"hash":
            for k, v in client.hgetall(key).items():
                out += [k, v]
        elif kind == b"list":
            out += client.lrange(key, 0, -1)
        elif kind == b"set":
            out += list(client.smembers(key))
        elif kind == b"zset":
            out += client.zrange(key, 0, -1)
        elif kind == b"stream":
            for _, fields in client.xrange(key):
                for k, v in fields.items():
                    out += [k, v]
    return out


def run(client, games_per_type: int = 1, seed: int = 1) -> dict:
    rng = random.Random(seed)
    app = _kit.inline_app(client)
    service = app.extensions["games"]
    http = app.test_client()
    fig = {"requests": 0, "expected": 0, "unexpected": [], "seat_checks": 0, "tokens": 0,
           "tokens_found_in_redis": 0}

    def expect(response, status, what):
        fig["requests"] += 1
        body = response.get_json(silent=True) or {}
        if response.status_code == status and set(body) == {"error"}:
            fig["expected"] += 1
        elif response.status_code == status == 200:
            fig["expected"] += 1
        else:
            fig["unexpected"].append((what, response.status_code, status))

    all_tokens = []
    for name in _kit.game_names():
        for _ in range(games_per_type):
            game_id, tokens = _kit.create_playable(service, name, rng)
            other_id, other_tokens = _kit.create_playable(service, name, rng)
            all_tokens += tokens + other_tokens
            for method, template, required in SECURED:
                path = template.format(id=game_id)
                if required:
                    expect(_call(http, method, path), 401, f"{name} {method} {template} without a token")
                expect(_call(http, method, path, "forged-" + secrets.token_urlsafe(24)), 401,
                       f"{name} {method} {template} with a forged token")
                expect(_call(http, method, path, tokens[0][:-2] + "xx"), 401,
                       f"{name} {method} {template} with an altered token")
                expect(_call(http, method, path, other_tokens[0]), 403,
                       f"{name} {method} {template} with another game's token")
            # Every seat's token acts only for its own seat.
            for _step in range(6):
                session = service.load(game_id)
                if session.status != "active":
                    break
                actor = rng.choice(session.to_act())
                action = fill_template(rng.choice(disclosure.view_for(session, actor)["legal_actions"]), rng)
                for seat, token in enumerate(tokens):
                    if seat in session.to_act():
                        continue
                    response = http.post(f"/v1/games/{game_id}/actions", json={"action": action},
                                         headers=_kit.auth(token, f"not-mine-{session.version}-{seat}"))
                    expect(response, 422, f"{name}: seat {seat} playing seat {actor}'s move")
                response = http.post(f"/v1/games/{game_id}/actions", json={"action": action},
                                     headers=_kit.auth(tokens[actor], f"mine-{session.version}"))
                expect(response, 200, f"{name}: seat {actor} playing its own move")
                recorded = _kit.command_events(service.store.read_raw(game_id))[-1]["c"]["seat"]
                fig["seat_checks"] += 1
                if recorded != actor:
                    fig["unexpected"].append((f"{name}: the move was recorded for seat {recorded}", actor))
    stored = redis_values(client)
    fig["tokens"] = len(all_tokens)
    fig["tokens_found_in_redis"] = sum(1 for t in all_tokens if any(t.encode() in v for v in stored))
    fig["rate_limits"] = rate_limits(client)
    fig["ok"] = (not fig["unexpected"] and fig["tokens_found_in_redis"] == 0 and fig["rate_limits"]["ok"])
    return fig


def rate_limits(client, limit: int = 5) -> dict:
    """A limit of `limit` requests a minute per token and per address: the next one is 429
    with Retry-After, for the token from any address and for the address with any token."""
    import time

    if 60 - time.time() % 60 < 2:   # a fixed window: keep the burst inside one
        time.sleep(60 - time.time() % 60 + 0.05)
    app = _kit.inline_app(client, RATE_LIMIT=f"{limit}/60")
    service = app.extensions["games"]
    http = app.test_client()
    game_id, tokens = _kit.create_playable(service, _kit.game_names()[0], random.Random(1))
    out = {"limit": limit, "token": [], "address": [], "other_address": None, "retry_after": []}
    for i in range(limit + 2):   # one token, a new address each time
        r = http.get(f"/v1/games/{game_id}/view", headers=_kit.auth(tokens[0]),
                     environ_base={"REMOTE_ADDR": f"10.1.0.{i + 1}"})
        out["token"].append(r.status_code)
        if r.status_code == 429:
            out["retry_after"].append(r.headers.get("Retry-After"))
    for i in range(limit + 2):   # one address, no token
        r = http.get(f"/v1/games/{game_id}", environ_base={"REMOTE_ADDR": "10.2.0.1"})
        out["address"].append(r.status_code)
        if r.status_code == 429:
            out["retry_after"].append(r.headers.get("Retry-After"))
            out["body"] = r.get_json()
    out["other_address"] = http.get(f"/v1/games/{game_id}", environ_base={"REMOTE_ADDR": "10.3.0.1"}).status_code
    want = [200] * limit + [429, 429]
    ok_retry = all(v is not None and v.isdigit() and 1 <= int(v) <= 60 for v in out["retry_after"])
    out["ok"] = (out["token"] == want and out["address"] == want and out["other_address"] == 200 and ok_retry
                 and out.get("body", {}).get("error", {}).get("code") == "rate_limited")
    return out


def _on_private_redis(args) -> dict:
    with _kit.private_redis() as server:   # stopped before the report is printed
        return run(_kit.redis_client(server.url), args.size, args.seed)


def main(argv=None) -> None:
    args = _kit.parser(__doc__, 3, "games per registered type").parse_args(argv)
    _kit.conclude("auth_limits", args, lambda: _on_private_redis(args), lambda fig: (
        f"{fig['requests']} requests, {fig['expected']} answered as they must "
        f"(401 no/forged token, 403 other game, 422 another seat's move, 200 own); "
        f"{fig['seat_checks']} moves recorded for the token's seat; {fig['tokens_found_in_redis']} of "
        f"{fig['tokens']} tokens found in Redis; rate limits {'OK' if fig['rate_limits']['ok'] else 'FAILED'} "
        f"({fig['seconds']} s)"))


if __name__ == "__main__":
    main()
