"""Words drill: `POST /web/api/words` given numbers of the attacker's choosing.

The endpoint draws a game from the server's own record (the body names a game and versions,
never state), so every number a client sends is a version checked against the game's own,
or a legal-action template whose label is cut short. The drill sends each hostile number
(30,000,000, 2^53-1, 10^20, -1, a float, a bool, a string) in every field the endpoint reads
and in the old shapes that once drew a client's view (`view`, `full_state`, `events`,
`result`, `seats`), as a spectator and as a seat, and checks: every answer a 4xx envelope or
a 200 of at most MAX_ANSWER bytes, never a 5xx, and the API worker's memory flat (its RSS
under gunicorn with `--url`; this process's allocations, traced, in the short form).

    python -m ops.drills.words_bounded              # in process (the suite's short form)
    python -m ops.drills.words_bounded --live       # a gunicorn API (gevent) on a private Redis
"""

from __future__ import annotations

import json
import random
import time
import tracemalloc

from . import _kit

NUMBERS = [30_000_000, 2 ** 53 - 1, 10 ** 20, -1, 1.5, True, "9", None]
MAX_ANSWER = 64 * 1024          # bytes: a game's words, every event included, fit far under it
MAX_GROWTH = 24 * 1024 * 1024   # bytes the worker may grow by over the whole drill


def bodies(game_id: str) -> list[dict]:
    """Every hostile body: each number in each field, and the old client-state shapes."""
    out = []
    for n in NUMBERS:
        for field in ("after", "until", "at", "version"):
            out.append({"game_id": game_id, field: n, "actions": True})
        out.append({"game_id": game_id, "after": 0, "until": n})
        out.append({"game_id": game_id, "piles": [n], "view": {"type": "speculation", "state": {"piles": [n] * 8,
                    "dead_hand": n, "chips": [n], "end": n}}, "full_state": {"piles": [[0]] * 4, "cap": n}})
        out.append({"type": "speculation", "actions": [{"type": "bid", "amount": {"min": n, "max": n}}] * 64})
        out.append({"type": "spekulation", "seats": [{"kind": "player", "name": "x" * 4000}] * 3, "viewer": 0,
                    "view": {"type": "spekulation", "state": {"end": n}},
                    "result": {"winners": [0] * 4000, "scores": [n] * 10},
                    "events": [{"version": 1, "type": "bid", "data": {"seat": 0, "piles": [n]}}] * 200})
        out.append({"type": "speculation", "actions": [{"type": "bid", "amount": {"min": 1, "max": 2}}] * 65})
        out.append({"game_id": n})
        out.append({"game_id": game_id, "ticket": n})
    return out


def _game(service, rng: random.Random) -> tuple[str, list]:
    game_id, tokens = _kit.create_open_game(service, "speculation", players=3, options={"deals": 1})
    _kit.play_out(service, service.jobs, game_id, rng)
    return game_id, tokens


def _check(fig: dict, what: str, status: int, size: int, body) -> None:
    fig["requests"] += 1
    fig["largest_answer"] = max(fig["largest_answer"], size)
    if status >= 500:
        fig["server_errors"].append((what, status))
    elif status == 200 and size > MAX_ANSWER:
        fig["too_large"].append((what, size))
    elif status != 200 and not (400 <= status < 500 and isinstance(body, dict) and set(body) == {"error"}):
        fig["unexpected"].append((what, status))


def run_inline(client, repeat: int = 1, seed: int = 1) -> dict:
    """The short form: the app in this process (the suite's), allocations traced."""
    app = _kit.make_app(client)
    service = app.extensions["games"]
    game_id, tokens = _game(service, random.Random(seed))
    http = app.test_client()
    fig = {"requests": 0, "largest_answer": 0, "server_errors": [], "too_large": [], "unexpected": []}
    tracemalloc.start()
    try:
        for _ in range(repeat):
            for i, body in enumerate(bodies(game_id)):
                for token in (None, tokens[0]):
                    headers = {"Authorization": f"Bearer {token}"} if token else {}
                    r = http.post("/web/api/words", data=json.dumps(body), headers=headers,
                                  content_type="application/json")
                    _check(fig, f"body {i}", r.status_code, len(r.data), r.get_json(silent=True))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    fig["peak_bytes"] = peak
    fig["ok"] = not (fig["server_errors"] or fig["too_large"] or fig["unexpected"]) and peak < MAX_GROWTH
    return fig


def run_live(repeat: int = 3, seed: int = 1) -> dict:
    """Against gunicorn's gevent worker on a private Redis: the worker's RSS before and after."""
    import http.client

    import redis

    from ops.bench.http import Gunicorn
    from ops.bench.waiting import rss_kb, worker_pid

    with _kit.private_redis() as redis_process:
        url = redis_process.url
        client = redis.Redis.from_url(url)
        service = _kit.make_service(client)
        game_id, tokens = _game(service, random.Random(seed))
        server = Gunicorn("service.wsgi:app", {"REDIS_URL": url, "GUNICORN_WORKERS": "1",
                                               "SPECULATION_RATE_LIMIT": "", "SPECULATION_LOG_LEVEL": "WARNING"})
        try:
            pid = worker_pid(server)
            fig = {"requests": 0, "largest_answer": 0, "server_errors": [], "too_large": [], "unexpected": []}

            def send(body, token):
                headers = {"Content-Type": "application/json"}
                if token:
                    headers["Authorization"] = f"Bearer {token}"
                conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
                try:
                    conn.request("POST", "/web/api/words", json.dumps(body), headers)
                    response = conn.getresponse()
                    data = response.read()
                finally:
                    conn.close()
                try:
                    parsed = json.loads(data)
                except ValueError:
                    parsed = None
                return response.status, len(data), parsed

            deadline = time.time() + 60
            while True:                                          # the worker has booted
                try:
                    if send({"game_id": game_id, "after": 0}, None)[0] == 200:
                        break
                except OSError:
                    if time.time() > deadline:
                        raise
                time.sleep(0.2)
            before = rss_kb(pid)
            for _ in range(repeat):
                for i, body in enumerate(bodies(game_id)):
                    for token in (None, tokens[0]):
                        _check(fig, f"body {i}", *send(body, token))
            after = rss_kb(pid)
        finally:
            server.stop()
    fig["rss_before_kb"], fig["rss_after_kb"] = before, after
    fig["growth_kb"] = after - before
    fig["ok"] = not (fig["server_errors"] or fig["too_large"] or fig["unexpected"]) and \
        fig["growth_kb"] * 1024 < MAX_GROWTH
    return fig


def main() -> None:
    p = _kit.parser(__doc__, 3, "rounds of every hostile body")
    p.add_argument("--live", action="store_true", help="against a gunicorn API on a private Redis")
    args = p.parse_args()

    def measure():
        if args.live:
            return run_live(args.size, args.seed)
        return run_inline(_kit.fake_client(), args.size, args.seed)

    _kit.conclude("words_bounded", args, measure, lambda f: (
        f"{f['requests']} hostile words requests: {len(f['server_errors'])} 5xx, largest answer "
        f"{f['largest_answer']} bytes, " + (f"worker RSS {f['rss_before_kb']} -> {f['rss_after_kb']} kB"
                                           if "growth_kb" in f else f"peak traced {f['peak_bytes'] // 1024} kB")))


if __name__ == "__main__":
    main()
