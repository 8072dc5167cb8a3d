"""Seek tables drill: accounts whose event streams are open ask at once for 4-player games;
each is told `seek.matched` on its stream within a second of its table's forming, at exactly
one table (docs/matching.md, "Quick pairing").

The API under gunicorn (the shipped configuration, gevent worker, `--processes` API processes)
on a private redis-server (Argon2id made cheap, the sign-up, sign-in and creation limits
raised). `--size` accounts (20) are made over HTTP once. Each round, every account opens its
account stream (`GET /v1/account/events?after=<its head>`, NDJSON) and, once every stream has
answered, all of them post a seek at once (`POST /v1/seeks` `{"type": "speculation",
"players": 4}`, threads released by a barrier). Then, per account, the time from its table's
forming to its stream delivering `seek.matched` for its seek, two ways:

- from the game's creation (`created_at` of the game the table formed, the server's clock on
  this same machine), and
- from the moment the last seek of its table was sent (the client's clock: the table could not
  form before it; this includes that request's wait for an API process).

It holds when, in every round, `size / 4` tables are formed, every account is at exactly one
of them (each game holds 4 distinct accounts, the ones its notices named, and nobody else),
every account is told, and the p99 over all rounds from the game's creation is under 1 s (the
p99 from the last seek sent is reported beside it: it adds that request's wait behind the other
seeks sent at the same instant). Also reported: whether each stream told the account's seat
(`game.joined`) before `seek.matched`, as docs/matching.md says.

    python -m ops.drills.seek_tables --size 20 --rounds 30
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from typing import Optional

from . import _kit
from ._accounts import CHEAP_ARGON2, PASSWORD, Api, sign_in, sign_up

GOAL_S = 1.0
GAME, PLAYERS = "speculation", 4
SETTINGS = {**CHEAP_ARGON2, "SPECULATION_SIGNUP_LIMIT": "100000/60", "SPECULATION_SIGNIN_LIMIT": "100000/60",
            "SPECULATION_CREATE_LIMIT": "100000/60", "SPECULATION_STREAM_KEEPALIVE": "15"}


class Listener:
    """One account stream (NDJSON) read in a thread of its own: each event with the time
    (time.time()) its line arrived."""

    def __init__(self, port: int, token: str, after: int):
        self.events: list[tuple[float, dict]] = []
        self.arrived = threading.Condition()
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.conn.request("GET", f"/v1/account/events?after={after}",
                          headers={"Authorization": f"Bearer {token}", "Accept": "application/x-ndjson"})
        self.sock = self.conn.sock      # http.client lets go of it once the response is read
        self.response = self.conn.getresponse()
        self.status = self.response.status
        self.thread = threading.Thread(target=self._read, daemon=True)
        if self.status == 200:
            self.thread.start()

    def _read(self) -> None:
        try:
            while True:
                line = self.response.readline()
                if not line:
                    return
                now = time.time()
                body = json.loads(line)
                if "type" in body:
                    with self.arrived:
                        self.events.append((now, body))
                        self.arrived.notify_all()
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            return   # closed by the drill

    def matched(self, seek_id: str, until: float) -> Optional[tuple[float, dict]]:
        """(arrival, event) of `seek.matched` for this seek, waiting until the `until` time."""
        with self.arrived:
            while True:
                found = [(t, e) for t, e in self.events if e["type"] == "seek.matched" and e.get("seek_id") == seek_id]
                if found or time.time() >= until:
                    return found[0] if found else None
                self.arrived.wait(max(0.0, until - time.time()))

    def close(self) -> None:
        # shut the socket first: the reading thread holds the response's buffer until a read
        # returns, and closing the response would wait for the next keep-alive (seconds)
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.thread.join(5)
        self.conn.close()


def make_accounts(api: Api, size: int, seed: int) -> list[dict]:
    out = []
    for n in range(size):
        name = f"table{seed}x{n:03d}"
        made = sign_up(api, name)
        assert made.status == 201, made.body
        signed_in = sign_in(api, name, PASSWORD)
        assert signed_in.status == 201, signed_in.body
        out.append({"name": name, "id": made.body["account"]["id"], "token": signed_in.body["token"]})
    return out


def _together(n: int, work) -> list:
    """`work(i)` from n threads released together; the results in order."""
    barrier, results = threading.Barrier(n), [None] * n

    def run(i: int) -> None:
        barrier.wait()
        results[i] = work(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def one_round(api: Api, people: list[dict], round_no: int, wait_s: float = 15.0) -> dict:
    n = len(people)
    heads = [api.call("GET", "/v1/account/events", p["token"]).body["until"] for p in people]
    listeners = _together(n, lambda i: Listener(api.port, people[i]["token"], heads[i]))
    try:
        opened = sum(li.status == 200 for li in listeners)

        def post(i: int) -> dict:
            sent = time.time()
            answer = api.call("POST", "/v1/seeks", people[i]["token"], {"type": GAME, "players": PLAYERS})
            return {"sent": sent, "answered": time.time(), "status": answer.status, "body": answer.body}

        posts = _together(n, post)
        deadline = time.time() + wait_s
        told = [li.matched(p["body"]["seek_id"], deadline) if p["status"] == 201 else None
                for li, p in zip(listeners, posts)]
        order_ok = all(_joined_before_matched(li, t[1]) for li, t in zip(listeners, told) if t)
    finally:
        for li in listeners:
            li.close()
    tables: dict[str, list[int]] = {}
    for i, t in enumerate(told):
        if t:
            tables.setdefault(t[1]["game_id"], []).append(i)
    games = {g: api.call("GET", f"/v1/games/{g}").body for g in tables}
    from_created, from_last_post, problems = [], [], []
    for game_id, members in tables.items():
        game = games[game_id]
        seated = sorted(s.get("account") for s in game["seats"])
        if seated != sorted(people[i]["id"] for i in members) or len(set(seated)) != PLAYERS:
            problems.append(f"game {game_id}: seats {seated}, told {[people[i]['id'] for i in members]}")
        if game["status"] != "active":
            problems.append(f"game {game_id}: {game['status']}")
        last_post = max(posts[i]["sent"] for i in members)
        for i in members:
            arrived = told[i][0]
            from_created.append(arrived - game["created_at"] / 1000)
            from_last_post.append(arrived - last_post)
    answers = [p["status"] for p in posts]
    out = {"round": round_no, "streams_opened": opened, "posted_201": answers.count(201),
           "told": sum(bool(t) for t in told),
           "tables": len(tables), "table_sizes": sorted(len(m) for m in tables.values()),
           "matched_in_the_answer": sum(p["body"].get("status") == "matched" for p in posts if p["status"] == 201),
           "joined_before_matched": order_ok, "problems": problems,
           "from_created_s": from_created, "from_last_post_s": from_last_post}
    out["ok"] = (opened == n and answers.count(201) == n and out["told"] == n and len(tables) == n // PLAYERS
                 and out["table_sizes"] == [PLAYERS] * (n // PLAYERS) and not problems)
    return out


def _joined_before_matched(listener: Listener, matched: dict) -> bool:
    """The stream told the account's seat (`game.joined`) before or with `seek.matched`."""
    ids = [e["id"] for _, e in listener.events if e["type"] == "game.joined" and e["game_id"] == matched["game_id"]]
    return bool(ids) and min(ids) < matched["id"]


def percentile(values: list[float], q: float) -> Optional[float]:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def run(size: int = 20, rounds: int = 30, seed: int = 1, processes: int = 2) -> dict:
    if size % PLAYERS:
        raise ValueError(f"size: a multiple of {PLAYERS}")
    with _kit.private_redis() as server:
        api = Api(server.url, processes, **SETTINGS)
        try:
            api.call("GET", "/v1/game-types")
            people = make_accounts(api, size, seed)
            results = [one_round(api, people, r) for r in range(rounds)]
        finally:
            api.stop()
    created = [x for r in results for x in r["from_created_s"]]
    posted = [x for r in results for x in r["from_last_post_s"]]

    def ms(values: list[float], q: float) -> Optional[float]:
        found = percentile(values, q)
        return None if found is None else round(found * 1000, 1)

    figures = {"size": size, "rounds": rounds, "processes": processes, "game": GAME, "players": PLAYERS,
               "tables": sum(r["tables"] for r in results), "told": sum(r["told"] for r in results),
               "matched_in_the_answer": sum(r["matched_in_the_answer"] for r in results),
               "joined_before_matched_rounds": sum(r["joined_before_matched"] for r in results),
               "from_created_ms": {"p50": ms(created, 50), "p99": ms(created, 99), "max": ms(created, 100)},
               "from_last_post_ms": {"p50": ms(posted, 50), "p99": ms(posted, 99), "max": ms(posted, 100)},
               "per_round_p99_ms": [ms(r["from_created_s"], 99) for r in results],
               "per_round_last_post_p99_ms": [ms(r["from_last_post_s"], 99) for r in results],
               "failures": [{k: v for k, v in r.items() if not k.endswith("_s")} for r in results if not r["ok"]][:5]}
    figures["ok"] = (all(r["ok"] for r in results) and len(created) == size * rounds
                     and percentile(created, 99) < GOAL_S)
    return figures


def summary(fig: dict) -> str:
    c, p = fig["from_created_ms"], fig["from_last_post_ms"]
    return (f"{fig['rounds']} rounds of {fig['size']} accounts seeking {fig['players']}-player {fig['game']} at once "
            f"({fig['processes']} API processes): {fig['tables']} tables, {fig['told']}/{fig['size'] * fig['rounds']} "
            f"told, nobody twice: {not fig['failures']}; seek.matched on the stream after the game's creation "
            f"p50 {c['p50']} ms, p99 {c['p99']} ms, max {c['max']} ms; after the table's last seek was sent "
            f"p50 {p['p50']} ms, p99 {p['p99']} ms, max {p['max']} ms (goal: p99 from the creation < "
            f"{GOAL_S * 1000:.0f} ms) "
            f"({fig['seconds']} s)")


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 20, "accounts seeking at once (a multiple of 4)")
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--processes", type=int, default=2, help="API processes")
    args = p.parse_args(argv)
    _kit.conclude("seek_tables", args, lambda: run(args.size, args.rounds, args.seed, args.processes), summary)


if __name__ == "__main__":
    main()
