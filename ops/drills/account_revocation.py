"""Account revocation drill: a personal token's streams end within 1 s of its revocation, and
its next request is 401 (docs/accounts.md, "Credentials").

The API under gunicorn (the shipped configuration, gevent worker) on a private redis-server:
API X (one process) and, for the second mode, API Y (another process on the same Redis, as
`make serve` runs one per core). An account signs up and in (its session is the "other
credential"), holds a seat of a big-shot game, and for each revocation:

1. makes a new personal token T (play, read) and uses it once on X (GET /v1/account: X now
   holds T in its credential cache);
2. opens, with T, on X, its account stream (`GET /v1/account/events`) and the game's stream
   (`GET /v1/games/{id}/events`), both `Accept: application/x-ndjson`;
3. revokes T with the session (`DELETE /v1/account/tokens/{id}`), then at once sends T's next
   request to X (and, in the second mode, to Y too);
4. times each stream's end (the body's last chunk) from the revocation's 204.

Modes, in turn: `same` (revoked through X, the streams parked for 0.3 s first), `other`
(revoked through Y: X learns it from Redis alone), `at-once` (revoked through X as soon as
both streams' headers arrived, racing the streams' parking), and `stale`: T revoked through Y
first, then its streams opened on X at once, while X's credential cache still holds T (the
account stream from the stream's head, past the revoking event). It holds when every stream
ended (or was refused) within MAX_CLOSE_S of the 204 and every next request was 401, except
on X in mode `other`: X's credential cache (service/accounts/credentials.py CACHE_SECONDS,
0.9 s) may still accept T there; the drill reports how long, and holds it to MAX_CLOSE_S.

    python -m ops.drills.account_revocation --size 30      # revocations (the modes in turn)
"""

from __future__ import annotations

import time

from . import _kit
from ._accounts import CHEAP_ARGON2, Api, StreamEnd, new_token, sign_in, sign_up

MODES = ("same", "other", "at-once", "stale")
MAX_CLOSE_S = 1.0
SETTLE_S = 0.3
SETTINGS = {**CHEAP_ARGON2, "SPECULATION_SIGNUP_LIMIT": "1000/60", "SPECULATION_SIGNIN_LIMIT": "1000/60",
            "SPECULATION_STREAM_KEEPALIVE": "15"}


def one(x: Api, y: Api, session: str, game_id: str, mode: str) -> dict:
    if mode == "stale":
        return stale(x, y, session, game_id)
    token, token_id = new_token(x, session)
    warmed = x.call("GET", "/v1/account", token).status
    streams = {"account": StreamEnd(x.port, "/v1/account/events?after=0", token),
               "game": StreamEnd(x.port, f"/v1/games/{game_id}/events?after=0", token)}
    opened = {name: s.status for name, s in streams.items()}
    if mode != "at-once":
        time.sleep(SETTLE_S)
    early = [name for name, s in streams.items() if s.ended_at is not None]
    revoker = y if mode == "other" else x
    sent = time.perf_counter()
    revoked = revoker.call("DELETE", f"/v1/account/tokens/{token_id}", session)
    answered = time.perf_counter()
    next_x = x.call("GET", "/v1/account", token)
    next_y = y.call("GET", "/v1/account", token) if mode == "other" else None
    refused_after = 0.0 if next_x.status == 401 else None   # X's first 401 for T, from the 204
    while refused_after is None and time.perf_counter() - answered < 5:
        time.sleep(0.02)
        if x.call("GET", "/v1/account", token).status == 401:
            refused_after = time.perf_counter() - answered
    for s in streams.values():
        s.wait(5.0)
    out = {"mode": mode, "warmed": warmed, "opened": opened, "ended_early": early, "revoke_status": revoked.status,
           "revoke_ms": round((answered - sent) * 1000, 2),
           "next_status": [next_x.status] + ([next_y.status] if next_y else []),
           "next_code": next_x.code,
           "refused_after_s": None if refused_after is None else round(refused_after, 4)}
    for name, s in streams.items():
        out[f"{name}_close_s"] = round(s.ended_at - answered, 4) if s.ended_at else None
        out[f"{name}_close_from_sent_s"] = round(s.ended_at - sent, 4) if s.ended_at else None
        s.close()
    out["ok"] = (revoked.status == 204 and warmed == 200 and set(opened.values()) == {200} and not early
                 and all(out[f"{n}_close_s"] is not None and out[f"{n}_close_s"] < MAX_CLOSE_S for n in streams)
                 and (set(out["next_status"]) == {401} if mode != "other"
                      else next_y.status == 401 and refused_after is not None and refused_after < MAX_CLOSE_S))
    return out


def stale(x: Api, y: Api, session: str, game_id: str) -> dict:
    """T revoked through Y while X still holds it in its credential cache, then T's streams
    opened on X at once: the account stream from the stream's head (past the revoking event,
    as a client resuming there would), and the game's. Each must be refused or end within
    MAX_CLOSE_S of the 204."""
    token, token_id = new_token(x, session)
    warmed = x.call("GET", "/v1/account", token).status
    sent = time.perf_counter()
    revoked = y.call("DELETE", f"/v1/account/tokens/{token_id}", session)
    answered = time.perf_counter()
    head = x.call("GET", "/v1/account/events", session).body["until"]   # read with the account's other credential
    streams = {"account": StreamEnd(x.port, f"/v1/account/events?after={head}", token),
               "game": StreamEnd(x.port, f"/v1/games/{game_id}/events?after=0", token)}
    for s in streams.values():
        s.wait(MAX_CLOSE_S + 2.0)
    out = {"mode": "stale", "warmed": warmed, "revoke_status": revoked.status,
           "revoke_ms": round((answered - sent) * 1000, 2),
           "opened": {name: s.status for name, s in streams.items()},
           "next_status": [s.status for s in streams.values()], "refused_after_s": None}
    for name, s in streams.items():
        out[f"{name}_close_s"] = round(s.ended_at - answered, 4) if s.ended_at else None
        out[f"{name}_close_from_sent_s"] = round(s.ended_at - sent, 4) if s.ended_at else None
        s.close()
    out["ok"] = (revoked.status == 204 and warmed == 200 and all(
        out[f"{n}_close_s"] is not None and out[f"{n}_close_s"] < MAX_CLOSE_S for n in streams))
    return out


def run(size: int = 30, seed: int = 1) -> dict:
    with _kit.private_redis() as server:
        x = Api(server.url, 1, **SETTINGS)
        y = None
        try:
            y = Api(server.url, 1, **SETTINGS)
            username = f"revoker{seed}"
            assert sign_up(x, username).status == 201
            session = sign_in(x, username).body["token"]
            player, _ = new_token(x, session, label="the seat")
            made = x.call("POST", "/v1/games", body={"type": "big-shot", "seats": [{}, {}]})
            game_id = made.body["game_id"]
            assert x.call("POST", f"/v1/games/{game_id}/seats/0", player, {}).status in (200, 201)
            x.call("GET", "/v1/game-types")
            y.call("GET", "/v1/game-types")
            runs = [one(x, y, session, game_id, MODES[n % len(MODES)]) for n in range(size)]
        finally:
            x.stop()
            if y:
                y.stop()
    by_mode = {}
    for mode in MODES:
        got = [r for r in runs if r["mode"] == mode]
        if not got:
            continue
        closes = sorted(r[f"{n}_close_s"] for r in got for n in ("account", "game") if r[f"{n}_close_s"] is not None)
        by_mode[mode] = {
            "revocations": len(got), "failed": sum(not r["ok"] for r in got),
            "account_close_max_s": _max(r["account_close_s"] for r in got),
            "game_close_max_s": _max(r["game_close_s"] for r in got),
            "close_median_s": closes[len(closes) // 2] if closes else None,
            "from_sent_max_s": _max(max(r["account_close_from_sent_s"] or 99, r["game_close_from_sent_s"] or 99)
                                    for r in got),
            "revoke_max_ms": max(r["revoke_ms"] for r in got)}
        if mode == "stale":
            by_mode[mode]["account_stream_refused"] = sum(r["opened"]["account"] == 401 for r in got)
            by_mode[mode]["game_stream_refused"] = sum(r["opened"]["game"] == 401 for r in got)
        else:
            by_mode[mode]["next_401"] = sum(r["next_status"][0] == 401 for r in got)
            by_mode[mode]["refused_after_max_s"] = _max(r["refused_after_s"] for r in got)
        if mode == "other":
            by_mode[mode]["next_401_on_the_revoking_process"] = sum(r["next_status"][1] == 401 for r in got)
    failures = [r for r in runs if not r["ok"]]
    return {"size": size, "by_mode": by_mode,
            "close_max_s": _max(max(m["account_close_max_s"], m["game_close_max_s"]) if None not in (
                m["account_close_max_s"], m["game_close_max_s"]) else None for m in by_mode.values()),
            "failures": failures[:10], "ok": not failures and len(runs) == size}


def _max(values):
    values = list(values)
    return None if any(v is None for v in values) else max(values, default=None)


def summary(fig: dict) -> str:
    parts = []
    for mode, m in fig["by_mode"].items():
        closed = (f"account stream closed <= {m['account_close_max_s']} s, game stream <= {m['game_close_max_s']} s "
                  f"after the 204 (<= {m['from_sent_max_s']} s after the DELETE was sent)")
        n = m["revocations"]
        if mode == "same":
            parts.append(f"{n} revoked through the streams' process: {closed}; next request 401 {m['next_401']}/{n}")
        elif mode == "at-once":
            parts.append(f"{n} revoked as the streams opened: {closed}; next request 401 {m['next_401']}/{n}")
        elif mode == "other":
            parts.append(f"{n} revoked through another process: {closed}; next request 401 there "
                         f"{m['next_401_on_the_revoking_process']}/{n}, on the streams' process {m['next_401']}/{n} "
                         f"at once, all within {m['refused_after_max_s']} s (its credential cache)")
        else:
            parts.append(f"{n} streams opened after a revocation through another process: account stream refused "
                         f"401 {m['account_stream_refused']}/{n}, game stream {closed.split(', game stream ')[1]}")
    return "; ".join(parts) + f" ({fig['seconds']} s)"


def main(argv=None) -> None:
    args = _kit.parser(__doc__, 30, "revocations (the modes in turn)").parse_args(argv)
    _kit.conclude("account_revocation", args, lambda: run(args.size, args.seed), summary)


if __name__ == "__main__":
    main()
