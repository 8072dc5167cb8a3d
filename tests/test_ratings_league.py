"""The ratings league (ops/drills/ratings_league.py) in a short form: rated games of bots
alone played by real RQ worker processes on a private redis-server, workers killed -9 inside
a scoring (after `game.scored`, before `rating.applied`; after it, before its projections),
then (a) every type's rebuild finds every kept rating, (b) every rated game is rated exactly
once and the leaderboard and histories agree with the logs, (c, weaker than the full drill)
the heuristic rated above the random level, and first where it wins nearly every game. And
the leaderboard after a repair of a rating whose projections a crash lost: the games rated
since are not undone."""

from __future__ import annotations

import random

import pytest

from ops.drills import _kit, ratings_league
from ops.drills.redis_server import redis_server_path
from service.ratings import service as ratings_service
from service.ratings.model import Rating
from service.ratings.service import BOT_ACCOUNTS, log_of
from workers.memory_jobs import MemoryJobs

SEATS = [{"bot": "heuristic"}, {"bot": "random"}, {"bot": "baseline"}]


def test_a_repaired_rating_does_not_put_back_an_old_leaderboard_score(monkeypatch):
    """A crash after a rating's append and before its projections; two more games of the same
    bots rated; then the repair replays the first event: the leaderboard's scores stay the
    kept ratings (they were the first game's ratings before the fix, and the order with them)."""
    client = _kit.fake_client()
    jobs = MemoryJobs()
    core = _kit.make_app(client, jobs=jobs).extensions["games"]
    rng = random.Random(3)

    def rated_game() -> str:
        return core.create_game("speculation", {"deals": 1}, SEATS, rated=True, turn_timeout=60,
                                seed=f"{rng.getrandbits(256):064x}").session.game_id

    first = rated_game()
    real_project = ratings_service.Ratings._project

    def crash(self, stored):
        raise RuntimeError("killed before the projections")

    monkeypatch.setattr(ratings_service.Ratings, "_project", crash)
    with pytest.raises(RuntimeError):
        jobs.drain(core)
    monkeypatch.setattr(ratings_service.Ratings, "_project", real_project)
    jobs.drain(core)
    stream = log_of("speculation")
    assert core.store.head(stream)[0] == 1
    rated_game(), rated_game()
    jobs.drain(core)
    assert core.store.head(stream)[0] == 3
    core.repair(first)
    assert core.store.head(stream)[0] == 3
    board = {a.decode(): s for a, s in client.zrange(ratings_service._board_key("speculation"), 0, -1,
                                                     withscores=True)}
    for account in BOT_ACCOUNTS:
        kept = core.store.get_meta(stream, f"r:{account}")[f"r:{account}"]
        if kept:
            assert board[account] == Rating.from_record(kept).ordinal
    history = core.ratings.history(ratings_service.bot_account_id("random"), "speculation")
    assert len(history) == 3 and history[0]["game_id"] == first


@pytest.mark.slow
@pytest.mark.skipif(redis_server_path() is None, reason="redis-server is not installed")
def test_the_league_in_short():
    # 24 games, the plan of seed 11: 6 big-shot (2 or 3 seats), 12 speculate, 6 speculation (the
    # full league, `make ratings-league`, plays 1,000 and kills six times)
    fig = ratings_league.run(size=24, workers=3, kills=2, search_share=0.0, seed=11,
                             mix={"big-shot": 1, "speculation": 1.5, "speculate": 1}, timeout=300)
    assert fig["scored"] == fig["games"] == 24, fig
    # (a) the ratings rebuilt from the logs are the kept ones, to the last digit
    assert fig["rebuild_errors"] == 0 and fig["kept_differing"] == 0, fig["rebuilds"]
    assert all(r["games"] == fig["logs"][t]["logged"] for t, r in fig["rebuilds"].items())
    # (b) each rated game rated exactly once, the killed ones included; the projections agree
    assert fig["duplicates"] == 0 and fig["missing"] == 0, fig["logs"]
    for game_type, log in fig["logs"].items():
        assert log["logged"] == log["expected"] and log["unexpected"] == 0, (game_type, log)
    assert fig["rated_games"] >= 20, fig["logs"]
    assert len(fig["kills"]) == 2 and fig["kills_rated_once"] == 2, fig["kills"]
    assert {k["window"] for k in fig["kills"]} == {"before", "after"}
    for kill in fig["kills"]:
        assert kill["status_at_kill"] == "scored" and kill["ratings_in_log"] == 1 and kill["horse_killed"], kill
        # the job killed in "before" had not rated the game; the one killed in "after" had (at the
        # kill itself a "before" game may be rated already: another worker's reconciler heals it)
        assert kill["rated_in_window"] == (kill["window"] == "after"), kill
        assert kill["rated_at_kill"] or kill["window"] == "before", kill
    assert fig["projections_ok"], fig["projections"]
    assert fig["ok"]
    # (c), weaker: the heuristic above the random level in every type, and first in big-shot
    # and speculate (it wins nearly every game there: docs/bots.md, the tournament). Not
    # "random last": in a few dozen games the random and baseline levels meet too rarely to
    # be told apart (random above baseline in big-shot in 1 of 2 runs of 40 games, 2 of 2 of
    # 36), and with 1,000 games random still ranks above baseline in spekulation, as
    # the tournament has it (docs/reliability.md "Ratings")
    for game_type, found in fig["order"].items():
        ratings = found["ratings"]
        if fig["logs"][game_type]["logged"] >= 8:
            assert ratings["heuristic"]["ordinal"] > ratings["random"]["ordinal"], (game_type, found)
    for game_type in ("big-shot", "speculate"):
        assert fig["order"][game_type]["ranked"][0] == "heuristic", (game_type, fig["order"][game_type])
