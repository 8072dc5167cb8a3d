"""Race drills on a private real Redis, through the HTTP API (Flask test clients in threads,
several app instances standing for several API processes):

  writers   for every registered game, N writers post at once on the same expected_version:
            exactly one gets 200, the others 409, the chain still verifies
  same-key  N clients post the same Idempotency-Key and body at once: one append, N equal
            receipts, exactly one answer not marked Idempotent-Replayed
  soak      many clients play many games at once (one thread per seat), some responses
            "lost" and retried with the same key: no acknowledged action lost, none
            duplicated, none out of order; every chain verifies

    python -m ops.drills.races --size 50          # writers per race
    python -m ops.drills.soak --size 40           # games
"""

from __future__ import annotations

import random
import threading
from collections import Counter

from projections import disclosure
from projections.templates import fill_template

from . import _kit

APPS_PER_RACE = 5


def _apps(client, n: int):
    return [_kit.inline_app(client) for _ in range(n)]


def writers(client, n: int = 50, seed: int = 1, games=None) -> dict:
    """One race per registered game: n writers, one expected version."""
    rng = random.Random(seed)
    out = {"races": 0, "writers": 0, "succeeded": 0, "conflicts": 0, "other": [], "chains_ok": 0,
           "games": []}
    for name in games or _kit.game_names():
        apps = _apps(client, min(n, APPS_PER_RACE))
        service = apps[0].extensions["games"]
        game_id, tokens = _kit.create_playable(service, name, rng)
        session = service.load(game_id)
        seat = session.to_act()[0]
        version = session.version
        legal = disclosure.view_for(session, seat)["legal_actions"]
        barrier = threading.Barrier(n)
        results = [None] * n

        def writer(i: int) -> None:
            own = random.Random(seed * 1000 + i)
            http = apps[i % len(apps)].test_client()
            action = fill_template(own.choice(legal), own)
            barrier.wait()
            response = http.post(f"/v1/games/{game_id}/actions", json={"action": action, "expected_version": version},
                                 headers=_kit.auth(tokens[seat], f"writer-{i}"))
            results[i] = (response.status_code, response.json)

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        statuses = Counter(status for status, _ in results)
        winners = [body for status, body in results if status == 200]
        conflicts = [body for status, body in results if status == 409]
        out["races"] += 1
        out["writers"] += n
        out["succeeded"] += len(winners)
        out["conflicts"] += sum(1 for body in conflicts if body["error"]["code"] == "version_conflict")
        out["other"] += [(name, status) for status in statuses if status not in (200, 409)]
        fresh = _kit.make_service(client)
        after = fresh.load(game_id)
        chain_ok = fresh.verify(game_id)["ok"] and len(winners) == 1 and \
            after.version == winners[0]["receipt"]["version"] and after.head == winners[0]["receipt"]["head"]
        out["chains_ok"] += bool(chain_ok)
        out["games"].append({"type": name, "statuses": dict(statuses), "version_before": version,
                             "version_after": after.version, "verify_ok": chain_ok})
    out["ok"] = (out["succeeded"] == out["races"] and out["conflicts"] == out["writers"] - out["races"]
                 and not out["other"] and out["chains_ok"] == out["races"])
    return out


def same_key(client, n: int = 20, game_type: str = "secret-duel") -> dict:
    """n clients send the same key and body at once."""
    apps = _apps(client, min(n, APPS_PER_RACE))
    service = apps[0].extensions["games"]
    game_id, tokens = _kit.create_playable(service, game_type, random.Random(n))
    session = service.load(game_id)
    seat = session.to_act()[0]
    action = fill_template(disclosure.view_for(session, seat)["legal_actions"][0], random.Random(0))
    results = _kit.all_at_once(apps, lambda http: http.post(f"/v1/games/{game_id}/actions", json={"action": action},
                                                            headers=_kit.auth(tokens[seat], "the-same-key")), n)
    receipts = {str(body.get("receipt")) for status, _, body in results if status == 200}
    fresh = _kit.make_service(client).load(game_id)
    appended = len(_kit.command_events(service.store.read_raw(game_id)))
    first = sum(1 for status, replayed, _ in results if status == 200 and replayed == "false")
    return {"clients": n, "ok_responses": sum(1 for s, _, _ in results if s == 200), "distinct_receipts": len(receipts),
            "commands_appended": appended, "not_replayed": first, "version": fresh.version,
            "ok": len(receipts) == 1 and appended == 1 and first == 1 and all(s == 200 for s, _, _ in results)}


def soak(client, games: int = 10, seed: int = 1, lose: float = 0.1, apps: int = 4,
         types=None) -> dict:
    """`games` games (every registered type in turn) played at once by one client thread per
    seat; `lose` is the share of responses the client "loses" and retries with the same key."""
    rng = random.Random(seed)
    instances = _apps(client, apps)
    service = instances[0].extensions["games"]
    names = types or _kit.game_names()
    plan = []
    for g in range(games):
        name = names[g % len(names)]
        game_id, tokens = _kit.create_playable(service, name, rng)
        plan.append((name, game_id, tokens))
    lock = threading.Lock()
    acks: list[dict] = []
    stats = Counter()
    errors: list = []

    def player(game_id: str, seat: int, token: str, k: int) -> None:
        own = random.Random(seed * 7919 + k)
        http = instances[k % len(instances)].test_client()
        last_version = -1
        attempt = 0
        try:
            while True:
                query = {"wait": 0.5, "after_version": last_version} if last_version >= 0 else {}
                view = http.get(f"/v1/games/{game_id}/view", headers=_kit.auth(token), query_string=query).json
                if view["status"] != "active":
                    return
                last_version = view["version"]
                if seat not in view["to_act"]:
                    continue
                action = fill_template(own.choice(view["legal_actions"]), own)
                body = {"action": action}
                if own.random() < 0.7:
                    body["expected_version"] = view["version"]
                attempt += 1
                key = f"{seat}-{attempt}"
                response = http.post(f"/v1/games/{game_id}/actions", json=body, headers=_kit.auth(token, key))
                if response.status_code == 200 and own.random() < lose:
                    # The response is "lost": the client retries with the same key and body.
                    again = http.post(f"/v1/games/{game_id}/actions", json=body, headers=_kit.auth(token, key))
                    with lock:
                        stats["retried"] += 1
                        if again.status_code != 200 or again.json["receipt"] != response.json["receipt"] or \
                                again.headers.get("Idempotent-Replayed") != "true":
                            errors.append(("retry differs", game_id, seat, again.status_code))
                    response = again
                with lock:
                    stats[response.status_code] += 1
                    if response.status_code == 200:
                        acks.append({"game": game_id, "seat": seat, "action": action, "order": attempt,
                                     **response.json["receipt"]})
                    elif response.status_code not in (409, 422):
                        errors.append(("status", game_id, seat, response.status_code, response.json))
                        return
        except Exception as err:  # a client that dies is a finding, not a hang
            with lock:
                errors.append(("exception", game_id, seat, repr(err)))

    threads = []
    k = 0
    for name, game_id, tokens in plan:
        for seat, token in enumerate(tokens):
            threads.append(threading.Thread(target=player, args=(game_id, seat, token, k), daemon=True))
            k += 1
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    stats["hung_clients"] = sum(t.is_alive() for t in threads)

    fresh = _kit.make_service(client)
    lost = duplicated = out_of_order = present = 0
    verified = scored = 0
    for name, game_id, _ in plan:
        raw = fresh.store.read_raw(game_id)
        by_version = {}
        for body, hash_ in raw:
            import json as _json

            decoded = _json.loads(body)
            by_version[decoded["v"]] = (decoded, hash_)
        mine = [a for a in acks if a["game"] == game_id]
        firsts = Counter(a["first_version"] for a in mine)
        duplicated += sum(c - 1 for c in firsts.values())
        for ack in mine:
            stored = by_version.get(ack["first_version"])
            if stored is None or stored[0].get("c", {}).get("seat") != ack["seat"] or \
                    stored[0]["c"].get("action") != ack["action"] or by_version[ack["version"]][1] != ack["head"]:
                lost += 1
            else:
                present += 1
        commands = [v for v, (d, _) in by_version.items() if d.get("c") and d["c"].get("by") == "player"]
        duplicated += len(set(commands) - set(firsts))  # a stored command nobody was acknowledged for
        for seat in {a["seat"] for a in mine}:
            versions = [a["first_version"] for a in sorted((a for a in mine if a["seat"] == seat),
                                                           key=lambda a: a["order"])]
            out_of_order += sum(1 for x, y in zip(versions, versions[1:]) if y <= x)
        verified += fresh.verify(game_id)["ok"]
        scored += fresh.load(game_id).status == "scored"
    return {"games": games, "clients": len(threads), "acknowledged": len(acks), "present": present,
            "lost": lost, "duplicated": duplicated, "out_of_order": out_of_order, "verified": verified,
            "scored": scored, "responses": {str(k): v for k, v in stats.items()}, "errors": errors[:10],
            "ok": (lost == duplicated == out_of_order == 0 and not errors and present == len(acks)
                   and verified == scored == games and stats["hung_clients"] == 0)}


def main(argv=None) -> None:
    args = _kit.parser(__doc__, 50, "writers per race").parse_args(argv)
    with _kit.private_redis() as server:
        client = _kit.redis_client(server.url)
        with _kit.Timer() as t:
            race = writers(client, args.size, args.seed)
            dup = same_key(client, max(2, args.size // 2), "speculation")
    fig = {"writers": race, "same_key": dup, "seconds": round(t.seconds, 1)}
    ok = race["ok"] and dup["ok"]
    _kit.report("races", f"{race['races']} races of {args.size} writers: {race['succeeded']} succeeded, "
                f"{race['conflicts']} got 409, {race['chains_ok']}/{race['races']} chains verify; "
                f"{dup['clients']} same-key clients: {dup['commands_appended']} append, "
                f"{dup['distinct_receipts']} receipt ({fig['seconds']} s)", ok, fig, args.json or not ok)
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
