"""The ratings on the command line, against a live server (its store on a private
redis-server, an embedded bot worker): `ratings TYPE` (the leaderboard table and --json),
`profile NAME` (ratings per type, the last ratings and rated games, recent games), and the
operator's `ratings-rebuild` on REDIS_URL (equal ratings found, a stale kept rating
rewritten, a rating that differs on replay refused with exit 1 and nothing written)."""

from __future__ import annotations

import io
import re
import sys
import time

import httpx
import pytest

from ops.drills.redis_server import RedisProcess, redis_server_path
from ops.live_server import LiveServer
from service import cli
from service.ratings import service as ratings_service
from service.ratings.model import Rating
from service.ratings.service import bot_account_id, log_of

pytestmark = pytest.mark.skipif(redis_server_path() is None, reason="redis-server is not installed")

PASSWORD = "correct horse battery staple"
CONFIG = {"ARGON2_TIME_COST": 1, "ARGON2_MEMORY_KIB": 1024, "SIGNUP_LIMIT": "1000/60", "SIGNIN_LIMIT": "1000/60",
          "ALLOW_SEED": True, "CREATE_LIMIT": None, "BOT_GAMES_PER_ADDRESS": 0}
GAME, OPTIONS = "speculation", {"deals": 1}
SEATS = [{"bot": "heuristic"}, {"bot": "baseline"}, {"bot": "random"}]
GAMES = 4


@pytest.fixture(scope="module")
def redis_server():
    server = RedisProcess().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server(redis_server):
    live = LiveServer({**CONFIG, "REDIS_URL": redis_server.url}).start()
    yield live
    live.stop()


@pytest.fixture(scope="module")
def rated_games(server):
    """A few rated games of bots alone, played to the end by the server's worker."""
    ids = []
    for i in range(GAMES):
        response = httpx.post(server.url + "/v1/games", json={
            "type": GAME, "options": OPTIONS, "seats": SEATS, "rated": True, "turn_timeout": 60,
            "seed": f"{i + 0x31:02x}" * 32})
        assert response.status_code == 201, response.text
        ids.append(response.json()["game_id"])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if all(httpx.get(f"{server.url}/v1/games/{g}").json()["status"] == "scored" for g in ids):
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the rated games did not finish")
    deadline = time.monotonic() + 30   # the rating follows the scoring
    while server.service.store.head(log_of(GAME))[0] < GAMES and time.monotonic() < deadline:
        time.sleep(0.05)
    logged = [e.data["game_id"] for e in server.service.store.read(log_of(GAME))]
    assert sorted(logged) == sorted(ids)
    return logged   # in the order they were rated (the games end in any order)


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("SPECULATION_API", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.delenv("SPECULATION_REDIS_URL", raising=False)


def run(capsys, monkeypatch, *args) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    try:
        cli.main(list(args))
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def board(server, limit: int = 20) -> dict:
    return httpx.get(f"{server.url}/v1/leaderboards/{GAME}?limit={limit}").json()


def test_the_leaderboard_table_and_its_json(capsys, monkeypatch, server, rated_games):
    expected = board(server)
    assert [r["name"] for r in expected["rows"]][:1] and expected["total"] == 3
    code, out, err = run(capsys, monkeypatch, "ratings", GAME, "--api", server.url)
    assert code == 0, err
    lines = out.splitlines()
    assert re.split(r"\s{2,}", lines[0].strip()) == ["RANK", "NAME", "RATING", "MU ± SIGMA", "GAMES", "WINS"]
    body = lines[1:4]
    for row, line in zip(expected["rows"], body):
        cells = re.split(r"\s{2,}", line.strip())
        assert cells == [str(row["rank"]), row["name"], str(round(row["ordinal"])),
                         f"{row['mu']:.1f} ± {row['sigma']:.1f}", str(GAMES), str(row["wins"]),
                         "bot, provisional"], line
    assert sum(r["wins"] for r in expected["rows"]) >= GAMES   # every game has a winner (ties share)
    assert lines[4] == f"3 rated account(s) in {GAME}"
    # the columns line up: the numbers right-aligned under their headings
    rating_end = lines[0].index("RATING") + len("RATING")
    assert all(line[rating_end - 1] != " " and line[rating_end] == " " for line in body)

    code, out, _ = run(capsys, monkeypatch, "ratings", GAME, "--api", server.url, "--limit", "1")
    assert code == 0 and len(out.splitlines()) == 3
    assert expected["rows"][0]["name"] in out.splitlines()[1]
    assert out.splitlines()[-1] == f"3 rated account(s) in {GAME}, ranks 1-1 shown"
    code, out, _ = run(capsys, monkeypatch, "ratings", GAME, "--api", server.url, "--offset", "2", "--limit", "5")
    assert code == 0 and out.splitlines()[1].split()[:2] == ["3", expected["rows"][2]["name"]]

    monkeypatch.setenv("SPECULATION_API", server.url)   # --api from the environment, JSON as the API gives it
    code, out, _ = run(capsys, monkeypatch, "ratings", GAME, "--json")
    import json

    assert code == 0 and json.loads(out) == expected

    code, out, _ = run(capsys, monkeypatch, "ratings", "big-shot")
    assert code == 0 and out.strip() == "no rated games of big-shot yet"
    code, out, err = run(capsys, monkeypatch, "ratings", "chess")
    assert code == cli.EXIT_API_ERROR and "error 404" in err and "chess" in err
    code, out, err = run(capsys, monkeypatch, "ratings", GAME, "--limit", "0")
    assert code == cli.EXIT_USAGE


def test_unreachable_api(capsys, monkeypatch):
    from ops.drills.redis_server import free_port

    code, _, err = run(capsys, monkeypatch, "ratings", GAME, "--api", f"http://127.0.0.1:{free_port()}")
    assert code == cli.EXIT_UNREACHABLE and "cannot reach the API" in err


def test_a_bot_accounts_profile(capsys, monkeypatch, server, rated_games):
    import json

    code, out, err = run(capsys, monkeypatch, "profile", "baseline", "--api", server.url, "--json")
    assert code == 0, err
    shown = json.loads(out)
    profile, history = shown["profile"], shown["history"]
    assert profile["id"] == bot_account_id("baseline") and profile["bot"]
    assert list(history) == [GAME] and [h["game_id"] for h in history[GAME]] == rated_games
    rating = profile["ratings"][GAME]
    assert rating["games"] == GAMES and history[GAME][-1]["mu"] == rating["mu"]

    code, out, err = run(capsys, monkeypatch, "profile", "baseline", "--api", server.url, "--last", "3")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "baseline (the baseline bot level's account)"
    assert lines[1].startswith(f"  account {profile['id']}, since ")
    head = f"{GAME}: rating {round(rating['ordinal'])} ({rating['mu']:.1f} ± {rating['sigma']:.1f}), " \
           f"{GAMES} rated game(s), {rating['wins']} win(s), provisional"
    assert head in lines
    at = lines.index(head)
    assert lines[at + 1] == "  last ratings: " + " -> ".join(str(round(h["ordinal"])) for h in history[GAME][-3:])
    assert re.split(r"\s{2,}", lines[at + 2].strip()) == ["GAME", "PLACE", "RATING", "MU ± SIGMA", "WHEN"]
    shown_games = [line.split()[0] for line in lines[at + 3:at + 6]]
    assert shown_games == list(reversed(rated_games[-3:]))       # newest first
    for h, line in zip(reversed(history[GAME][-3:]), lines[at + 3:at + 6]):
        assert f"{h['place']} of 3" in line and f"{h['mu']:.1f} ± {h['sigma']:.1f}" in line
    assert len(lines) == at + 6 or not lines[at + 6].startswith("  " + rated_games[0])


def test_an_account_with_no_rated_game_and_an_unknown_one(capsys, monkeypatch, server):
    response = httpx.post(server.url + "/v1/accounts", json={"username": "ulla", "password": PASSWORD})
    assert response.status_code == 201, response.text
    code, out, err = run(capsys, monkeypatch, "profile", "ulla", "--api", server.url)
    assert code == 0, err
    assert out.splitlines()[0] == "ulla" and "no rated games yet" in out
    code, out, err = run(capsys, monkeypatch, "profile", "nobody-at-all", "--api", server.url)
    assert code == cli.EXIT_API_ERROR and "error 404" in err


def test_ratings_rebuild_on_the_store(capsys, monkeypatch, server, redis_server, rated_games):
    store = server.service.store
    stream = log_of(GAME)
    before = board(server)
    code, out, err = run(capsys, monkeypatch, "ratings-rebuild")
    assert code == cli.EXIT_USAGE and "REDIS_URL" in err

    monkeypatch.setenv("REDIS_URL", redis_server.url)
    code, out, err = run(capsys, monkeypatch, "ratings-rebuild")
    assert code == 0, err
    assert f"{GAME}: {GAMES} rated game(s), 3 player(s), kept_differing 0" in out.splitlines()
    assert "big-shot: 0 rated game(s), 0 player(s), kept_differing 0" in out.splitlines()
    assert board(server) == before

    # a kept rating gone stale (not what the log says): found and written again
    heuristic = f"r:{bot_account_id('heuristic')}"
    kept = store.get_meta(stream, heuristic)[heuristic]
    stale = Rating.from_record(kept)
    store.set_meta(stream, {heuristic: Rating(stale.mu + 5, stale.sigma, stale.games, stale.wins).as_record()})
    code, out, err = run(capsys, monkeypatch, "ratings-rebuild", GAME)
    assert code == 0, err
    assert out.splitlines() == [f"{GAME}: {GAMES} rated game(s), 3 player(s), kept_differing 1"]
    assert store.get_meta(stream, heuristic)[heuristic] == kept and board(server) == before

    # a rating that comes out differently on replay: exit 1 with the reason, nothing written
    real_rate = ratings_service.rate

    def drifted(before_, places, winners):
        return [Rating(r.mu + 1e-9, r.sigma, r.games, r.wins) for r in real_rate(before_, places, winners)]

    monkeypatch.setattr(ratings_service, "rate", drifted)
    store.set_meta(stream, {heuristic: Rating(stale.mu + 5, stale.sigma, stale.games, stale.wins).as_record()})
    code, out, err = run(capsys, monkeypatch, "ratings-rebuild", GAME, "big-shot")
    assert code == cli.EXIT_FAILED
    assert f"speculation ratings-rebuild: {GAME}: {stream} v1: " in err and "differs on rebuild" in err
    assert "big-shot: 0 rated game(s)" in out          # the other types are still rebuilt
    assert store.get_meta(stream, heuristic)[heuristic] != kept   # the failed rebuild wrote nothing
    monkeypatch.setattr(ratings_service, "rate", real_rate)
    code, out, err = run(capsys, monkeypatch, "ratings-rebuild", GAME)
    assert code == 0 and "kept_differing 1" in out

    code, out, err = run(capsys, monkeypatch, "ratings-rebuild", "chess")
    assert code == cli.EXIT_USAGE and "unknown game type" in err
