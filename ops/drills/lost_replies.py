"""Lost-replies drill: creates and claims sent WITHOUT an Idempotency-Key while Redis loses the
reply of every Nth script it runs (the append script among them): the write is done, its
acknowledgement is cut, and the service's own Redis client retries (service/bootstrap.py).

Every request must be answered as if nothing was lost: each create answers a game that is in
the lobby (no orphan game: every game in the store was answered to someone), each claim
answers its seat's token and that token holds the seat (no ghost seat: every claimed seat is
held by a token some client was given), and no answer is a 409 the client did not cause.

    python -m ops.drills.lost_replies --size 200      # games, each created then claimed in full
"""

from __future__ import annotations

import random

from ops.drills.proxy import FaultyProxy
from projections.registry import get_game
from service.app import create_app
from service.bootstrap import build_backend
from service.core.tokens import token_hash
from workers.memory_jobs import MemoryJobs

from . import _kit


def run(size: int = 200, seed: int = 1, drop_every: int = 3) -> dict:
    rng = random.Random(seed)
    with _kit.private_redis() as server:
        proxy = FaultyProxy(server.port, match=b"EVALSHA", drop_reply_every=drop_every)
        try:
            app = create_app({"RATE_LIMIT": None, "CREATE_LIMIT": None}, backend=build_backend({"REDIS_URL": proxy.url}),
                             jobs=MemoryJobs())
            return _drive(app, _kit.redis_client(server.url), proxy, size, rng)
        finally:
            proxy.close()


def _drive(app, direct, proxy: FaultyProxy, size: int, rng: random.Random) -> dict:
    http = app.test_client()
    answered_games, given_tokens, refused = set(), {}, []
    for _ in range(size):
        game_type = rng.choice(_kit.service_games())
        players = get_game(game_type).MIN_PLAYERS
        created = http.post("/v1/games", json={"type": game_type, "seats": [{}] * players,
                                               "options": _kit.short_options(game_type)})
        if created.status_code != 201:
            refused.append(("create", created.status_code, created.json))
            continue
        game_id = created.json["game_id"]
        answered_games.add(game_id)
        for seat in range(players):
            claimed = http.post(f"/v1/games/{game_id}/seats/{seat}", json={"name": f"p{seat}"})
            if claimed.status_code != 201:
                refused.append(("claim", claimed.status_code, claimed.json))
                continue
            given_tokens[(game_id, seat)] = claimed.json["token"]
    stored_games = {key.decode()[len("game:{g:"):-len("}:meta")] for key in direct.scan_iter(match="game:{g:*}:meta")}
    ghost_seats = 0
    for game_id in stored_games:
        meta = direct.hgetall(f"game:{{g:{game_id}}}:meta")
        for field, seat in meta.items():
            if field.startswith(b"token:"):
                token = given_tokens.get((game_id, int(seat)))
                if token is None or field.decode() != f"token:{token_hash(token)}":
                    ghost_seats += 1
    orphans = len(stored_games - answered_games)
    figures = {"games": size, "replies_lost": proxy.replies_dropped, "orphan_games": orphans,
               "ghost_seats": ghost_seats, "refused": len(refused), "first_refusals": refused[:3],
               "seats_claimed": len(given_tokens)}
    figures["ok"] = proxy.replies_dropped > 0 and orphans == 0 and ghost_seats == 0 and not refused
    return figures


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 200, "games, each created and then claimed in full, none with a key")
    p.add_argument("--drop-every", type=int, default=3, help="lose the reply of every Nth script run")
    args = p.parse_args(argv)
    _kit.conclude("lost_replies", args, lambda: run(args.size, args.seed, args.drop_every), lambda fig: (
        f"{fig['games']} unkeyed creates and {fig['seats_claimed']} unkeyed claims, {fig['replies_lost']} "
        f"replies lost: orphan games {fig['orphan_games']}, ghost seats {fig['ghost_seats']}, "
        f"refused {fig['refused']}"))


if __name__ == "__main__":
    main()
