"""Archive drill: a thousand scored games moved out of a private Redis into the archive; every
read of each answers as before, byte for byte; Redis memory falls to the index entries; a
changed archive file is caught by verify.

Games of every type are played to the end with random legal actions (seat 0 a person's, the
last seat a bot) on a private redis-server, the API reads of each are recorded (summary, the
seat's view, events as the seat and as a spectator, ledger, replay at two versions, export,
verify, the table and replay pages) with the lobby, then every game is moved by the workers'
pass and the reads are made again by a fresh API process (nothing cached). Judged: every
answer equal, Redis's used memory after against before, every file verifies offline, and one
file changed by hand fails verify.

    python -m ops.drills.archive --size 1000
"""

from __future__ import annotations

import gzip
import random
import re
import shutil
import tempfile

from . import _kit
from .redis_server import RedisProcess

SERVER_TIME = re.compile(rb'"server_time":\d+')


def reads_of(http, game_id: str, token: str, version: int) -> dict:
    """Every read a client makes of one game: path -> (status, bytes)."""
    auth = {"Authorization": f"Bearer {token}"}
    out = {}
    for path, headers in ((f"/v1/games/{game_id}", {}), (f"/v1/games/{game_id}/view", auth),
                          (f"/v1/games/{game_id}/events", auth), (f"/v1/games/{game_id}/events", {}),
                          (f"/v1/games/{game_id}/ledger", {}),
                          (f"/v1/games/{game_id}/replay?at={max(1, version // 2)}", auth),
                          (f"/v1/games/{game_id}/replay?at={version}", {}), (f"/v1/games/{game_id}/export", {}),
                          (f"/v1/games/{game_id}/verify", {}), (f"/web/games/{game_id}", {}),
                          (f"/web/games/{game_id}/replay", {})):
        response = http.get(path, headers=headers)
        # a live view's server_time is the server's clock when it answered, not the game's
        out[(path, bool(headers))] = (response.status_code, SERVER_TIME.sub(b'"server_time":0', response.get_data()))
    return out


def lobby_reads(http) -> dict:
    return {path: http.get(path).get_data() for path in ("/v1/games?per_page=100", "/v1/games?status=scored&per_page=100")}


def play_scored(app, rng: random.Random, count: int) -> list[tuple[str, str, int]]:
    """`count` scored games, the types in turn: (game id, seat 0's token, version)."""
    service = app.extensions["games"]
    names = _kit.service_games()
    games = []
    for n in range(count):
        name = names[n % len(names)]
        players = _kit.get_game(name).MIN_PLAYERS
        game_id, tokens = _kit.create_open_game(service, name, seed=f"{rng.getrandbits(256):064x}",
                                                bots=(players - 1,))
        _kit.play_out(service, service.jobs, game_id, rng)
        games.append((game_id, tokens[0], service.load(game_id).version))
    return games


def run(size: int = 1000, seed: int = 1) -> dict:
    import redis

    server = RedisProcess().start()
    folder = tempfile.mkdtemp(prefix="archive-drill-")
    try:
        client = redis.Redis.from_url(server.url)
        app = _kit.make_app(client, ARCHIVE_URL=folder, ARCHIVE_AFTER=0)
        games = play_scored(app, random.Random(seed), size)
        http = app.test_client()
        before = {g: reads_of(http, g, token, version) for g, token, version in games}
        lobby = lobby_reads(http)
        memory_before = int(client.info("memory")["used_memory"])
        moved = app.extensions["games"].archive_due(limit=size + 10)
        memory_after = int(client.info("memory")["used_memory"])
        fresh = _kit.make_app(client, ARCHIVE_URL=folder, ARCHIVE_AFTER=0).test_client()
        differ = [g for g, token, version in games if reads_of(fresh, g, token, version) != before[g]]
        service = fresh.application.extensions["games"]
        from service.core.archiving import verify_archive

        offline = verify_archive(service.archiving.archive)
        changed = games[0][0]
        path = service.archiving.archive.path(changed, service.store.archived_digest(changed))
        with open(path, "rb") as handle:
            content = gzip.decompress(handle.read())
        with open(path, "wb") as handle:
            handle.write(gzip.compress(content.replace(b'\\"seat\\":0', b'\\"seat\\":1', 1)))
        caught = service.verify(changed)
        figures = {"games": len(games), "moved": moved, "reads_compared": sum(len(r) for r in before.values()),
                   "reads_differing_games": differ[:10], "lobby_same": lobby_reads(fresh) == lobby,
                   "redis_used_memory_before": memory_before, "redis_used_memory_after": memory_after,
                   "redis_memory_ratio": round(memory_after / memory_before, 4),
                   "game_keys_left": sum(1 for _ in client.scan_iter(match="game:*", count=1000)),
                   "files_verified_offline": offline["files"], "offline_ok": offline["ok"],
                   "changed_file_caught": not caught["ok"] and caught["first_divergence"]["check"] == "archive"}
        figures["ok"] = (moved.get("archived") == len(games) and not differ and figures["lobby_same"]
                         and offline["ok"] and offline["files"] == len(games) and figures["changed_file_caught"]
                         and figures["game_keys_left"] == len(games))
        return figures
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def main(argv=None) -> None:
    args = _kit.parser(__doc__, 1000, "scored games to archive").parse_args(argv)
    _kit.conclude("archive", args, lambda: run(args.size, args.seed), lambda fig: (
        f"{fig['games']} games archived ({fig['moved']}); {fig['reads_compared']} reads compared, "
        f"{len(fig['reads_differing_games'])} games differing; Redis used memory {fig['redis_used_memory_before']:,} "
        f"-> {fig['redis_used_memory_after']:,} bytes ({fig['redis_memory_ratio']:.1%}), {fig['game_keys_left']} "
        f"game keys left (the pointers); {fig['files_verified_offline']} files verified offline; a changed file "
        f"{'caught' if fig['changed_file_caught'] else 'NOT caught'} ({fig['seconds']} s)"))


if __name__ == "__main__":
    main()
