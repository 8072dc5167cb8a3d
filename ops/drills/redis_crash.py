"""Redis crash drill: kill -9 of a private redis-server (AOF, appendfsync always) during a
flood of actions through the HTTP API, then a restart from its files.

Client threads play games of every registered type through the API; an answer that is not
a receipt (the app's 500 while Redis is down, a broken connection) is retried with the same
Idempotency-Key and body until a receipt comes. Redis is killed `--size` times in the middle
of the flood. Afterwards every acknowledged action (receipt: version and head hash) must be
in the log at its version, with its hash, and every chain must verify.

    python -m ops.drills.redis_crash --size 3      # kills
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from collections import Counter

from projections.templates import fill_template

from . import _kit


def _client(url: str):
    import redis

    return redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=2)


def run(size: int = 2, seed: int = 1, clients: int = 6, flood_seconds: float = 1.5, games=None) -> dict:
    names = games or _kit.game_names()
    acks: list[dict] = []
    stats = Counter()
    errors: list = []
    lock = threading.Lock()
    stop = threading.Event()
    played_games: list[str] = []
    import logging

    logging.getLogger("service.app").setLevel(logging.CRITICAL)   # the 500s while Redis is down are expected
    with _kit.private_redis(durable=True) as server:
        app = _kit.inline_app(_client(server.url))
        service = app.extensions["games"]

        def retrying(call):
            while True:
                try:
                    return call()
                except Exception:
                    with lock:
                        stats["exceptions"] += 1
                    time.sleep(0.05)

        def player(k: int) -> None:
            rng = random.Random(seed * 1009 + k)
            http = app.test_client()
            game_id = None
            while not stop.is_set():
                if game_id is None:
                    name = names[k % len(names)] if rng.random() < 0.5 else rng.choice(names)
                    game_id, tokens = retrying(lambda: _kit.create_playable(service, name, rng))
                    with lock:
                        played_games.append(game_id)
                view = http.get(f"/v1/games/{game_id}").json
                if "error" in view:
                    time.sleep(0.05)
                    continue
                if view["status"] != "active":
                    game_id = None
                    continue
                seat = rng.choice(view["to_act"])
                mine = http.get(f"/v1/games/{game_id}/view", headers=_kit.auth(tokens[seat])).json
                if "error" in mine or seat not in mine["to_act"]:
                    time.sleep(0.02)
                    continue
                body = {"action": fill_template(rng.choice(mine["legal_actions"]), rng),
                        "expected_version": mine["version"]}
                key = uuid.uuid4().hex
                tries = 0
                while True:
                    tries += 1
                    response = http.post(f"/v1/games/{game_id}/actions", json=body,
                                         headers=_kit.auth(tokens[seat], key))
                    if response.status_code == 200:
                        with lock:
                            acks.append({"game": game_id, "seat": seat, "action": body["action"],
                                         "replayed": response.headers.get("Idempotent-Replayed"),
                                         **response.json["receipt"]})
                            stats["retried_until_acknowledged"] += tries > 1
                        break
                    if response.status_code >= 500:
                        with lock:
                            stats["5xx_retried"] += 1
                        time.sleep(0.05)
                        continue
                    with lock:   # a refusal (409, 422): nothing was appended for this key
                        stats[f"refused_{response.status_code}"] += 1
                        if response.status_code not in (409, 422):
                            errors.append((game_id, response.status_code, response.json))
                    break

        threads = [threading.Thread(target=player, args=(k,), daemon=True) for k in range(clients)]
        for t in threads:
            t.start()
        kills = []
        for _ in range(size):
            time.sleep(flood_seconds)
            before = len(acks)
            server.kill()
            time.sleep(0.3)
            server.start()
            kills.append({"acks_before_kill": before})
        time.sleep(flood_seconds)
        stop.set()
        for t in threads:
            t.join(60)

        fresh = _kit.make_service(_client(server.url))
        present = 0
        missing = []
        for ack in acks:
            raw = fresh.store.read_raw(ack["game"], ack["first_version"] - 1, ack["version"])
            ok = False
            if raw and len(raw) == ack["version"] - ack["first_version"] + 1:
                first = json.loads(raw[0][0])
                ok = (first.get("c", {}).get("seat") == ack["seat"] and first["c"].get("action") == ack["action"]
                      and raw[-1][1] == ack["head"])
            present += ok
            if not ok:
                missing.append(ack)
        unique_games = sorted(set(played_games))
        verified = sum(fresh.verify(g)["ok"] for g in unique_games)
        commands = sum(len(_kit.command_events(fresh.store.read_raw(g))) for g in unique_games)
    duplicates = len(acks) - len({(a["game"], a["first_version"]) for a in acks})
    return {"kills": size, "clients": clients, "acknowledged": len(acks), "present": present,
            "missing": missing[:10], "commands_stored": commands, "duplicate_receipts": duplicates,
            "games": len(unique_games), "verified": verified, "stats": dict(stats), "errors": errors[:10],
            "kill_points": kills,
            "ok": present == len(acks) > 0 and verified == len(unique_games) and commands == len(acks)
            and duplicates == 0 and not errors}


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 3, "kill -9 of Redis during the flood")
    p.add_argument("--clients", type=int, default=8)
    args = p.parse_args(argv)
    _kit.conclude("redis_crash", args, lambda: run(args.size, args.seed, args.clients), lambda fig: (
        f"{fig['kills']} kill -9 of Redis during a flood from {fig['clients']} clients: "
        f"actions acknowledged {fig['acknowledged']}, present after restart {fig['present']} "
        f"(stored commands {fig['commands_stored']}); chains verify {fig['verified']}/{fig['games']} "
        f"({fig['stats'].get('5xx_retried', 0)} 5xx answers retried with the same key; {fig['seconds']} s)"))


if __name__ == "__main__":
    main()
