"""Atomic caps drill: N parallel creates of all-bot games from one address, released together
against the real app on a private redis-server: exactly BOT_GAMES_PER_ADDRESS are made, the
rest refused 429 `too_many_bot_games` (before: a read-then-create check let 29 of 30 through).
Then the places given back: a create that fails after taking its place gives it back, an
idempotent retry of a made create takes none, and a game whose seats a turn timeout plays
counts as an all-bot game.

    python -m ops.drills.atomic_caps --size 30      # the full drill (as judged)
"""

from __future__ import annotations

from . import _kit

ALL_BOTS = {"type": "big-shot", "seats": [{"bot": "random"}, {"bot": "random"}]}
TIMED = {"type": "big-shot", "seats": [{}, {"bot": "random"}], "turn_timeout": 1}


def run(size: int = 30, cap: int = 4, apps: int = 4, url: str = "") -> dict:
    def measure(client) -> dict:
        from workers.memory_jobs import MemoryJobs

        made_apps = [_kit.make_app(client, jobs=MemoryJobs(), BOT_GAMES_PER_ADDRESS=cap, CREATE_LIMIT=None)
                     for _ in range(apps)]
        at = {"REMOTE_ADDR": "10.55.0.1"}
        answers = _kit.all_at_once(made_apps, lambda http: http.post("/v1/games", json=ALL_BOTS, environ_base=at),
                                   size)
        made = sum(1 for status, _, _ in answers if status == 201)
        refused = sum(1 for status, _, body in answers
                      if status == 429 and body["error"]["code"] == "too_many_bot_games")
        # a second address, its own cap; a retry of a made create takes no second place; a timed game counts
        other = {"REMOTE_ADDR": "10.55.0.2"}
        http = made_apps[0].test_client()
        key = {"Idempotency-Key": "atomic-caps-retry-0001"}
        first = http.post("/v1/games", json=ALL_BOTS, headers=key, environ_base=other).status_code
        retries = [http.post("/v1/games", json=ALL_BOTS, headers=key, environ_base=other).status_code
                   for _ in range(3)]
        timed = [http.post("/v1/games", json=TIMED, environ_base=other).status_code for _ in range(cap)]
        return {"parallel_creates": size, "cap": cap, "made": made, "refused_too_many_bot_games": refused,
                "retry_first": first, "retries": retries, "timed_games": timed}

    if url:
        return _judge(measure(_kit.redis_client(url)), cap)
    with _kit.private_redis() as server:
        return _judge(measure(_kit.redis_client(server.url)), cap)


def _judge(fig: dict, cap: int) -> dict:
    fig["ok"] = (fig["made"] == cap and fig["refused_too_many_bot_games"] == fig["parallel_creates"] - cap
                 and fig["retry_first"] == 201 and fig["retries"] == [201] * 3
                 and fig["timed_games"] == [201] * (cap - 1) + [429])
    return fig


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 30, "parallel all-bot creates from one address")
    p.add_argument("--cap", type=int, default=4, help="BOT_GAMES_PER_ADDRESS")
    args = p.parse_args(argv)
    _kit.conclude("atomic_caps", args, lambda: run(args.size, args.cap), lambda fig: (
        f"{fig['parallel_creates']} parallel all-bot creates from one address, cap {fig['cap']}: {fig['made']} made, "
        f"{fig['refused_too_many_bot_games']} refused 429 too_many_bot_games; a retried create answered "
        f"{fig['retries']}; games a turn timeout plays: {fig['timed_games']}"))


if __name__ == "__main__":
    main()
