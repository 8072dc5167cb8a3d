"""No one can predict a bot: a predictor that has the bot code and every public input of a
decision (game id, seat, version) — and here even the bot's own view and legal actions,
more than any opponent has — matches the bots' randomising moves no more often than the
policy's own distribution implies (at least 600 decisions, 4 standard deviations).

The predictor is the attack that worked before the server-held key (issue 15): run the
policy on the bot's randomness derived from the public (game, seat, version) alone. The
policy's own distribution at each decision is estimated by sampling the policy on fresh
randomness; with p_i the chance that the policy plays the predictor's guess, the number of
matches expected by chance is sum(p_i), its variance sum(p_i (1 - p_i)).

The bar is 4 standard deviations above chance, not 1.96: the samples are drawn afresh each
run, and a 95% bound failed an honest run (661 matches where 620 were expected, 2,342
decisions). The attack it guards against is nowhere near either bar: a predictable bot is
matched at every decision, dozens of deviations above chance."""

import hashlib
import json
import math
import random

from ops.drills import _kit
from projections import speculation
from projections.registry import game_types, get_game
from workers import jobs as job_functions
from workers.jobs import bot_rng
from workers.memory_jobs import MemoryJobs

SAMPLES = 40
Z = 4.0   # the bar, in standard deviations above chance (see above)
# Options that keep a game short, by game (a game not here plays with its defaults).
SHORT = {speculation.NAME: {"deals": 2}}


def _games() -> list[tuple[str, int, dict]]:
    """(game, players, options) of every hosted game, in the lobby's order: three players (or
    the nearest count the game allows)."""
    return [(t.name, min(max(3, get_game(t.name).MIN_PLAYERS), get_game(t.name).MAX_PLAYERS),
             SHORT.get(t.name, {})) for t in game_types()]


def _canonical(action: dict) -> str:
    return json.dumps(action, sort_keys=True)


def _record_bot_decisions(monkeypatch, min_decisions: int = 600) -> list[dict]:
    decisions, last_rng = [], {}
    real_rng, real_policy = job_functions.bot_rng, job_functions.policy

    def keyed_rng(game_id, seat, version, key=b""):
        last_rng.update(game_id=game_id, seat=seat, version=version, key=key)
        return real_rng(game_id, seat, version, key)

    def recording_policy(game_type, level, **budget):
        choose = real_policy(game_type, level, **budget)

        def decide(state, legal, seat, rng):
            action = choose(state, legal, seat, rng)
            decisions.append({"choose": choose, "state": json.loads(json.dumps(state)), "legal": legal, "seat": seat,
                              "action": _canonical(action), **last_rng})
            return action
        return decide

    monkeypatch.setattr(job_functions, "bot_rng", keyed_rng)
    monkeypatch.setattr(job_functions, "policy", recording_policy)
    # A fixed key and fixed game seeds: the predictor never sees the key, and the run is the
    # same every time (with a fresh key each run, chance alone failed about one run in ten).
    key = hashlib.sha256(b"test_bot_prediction: a key the predictor does not know").digest()
    jobs = MemoryJobs()
    service = _kit.make_service(_kit.fake_client(), jobs, secrets=lambda: {"bot_key": key})
    games = _games()
    n = 0
    while len(decisions) < 4 * min_decisions and n < 200:
        game_type, players, options = games[n % len(games)]
        service.create(game_type, options, [{"bot": "random"}] * players, seed=f"{n + 1:064x}")
        jobs.drain(service)
        n += 1
    assert service.bot_key == key
    return decisions


def _prediction_figures(decisions: list[dict], actual_of=lambda d: d["action"]) -> dict:
    rng = random.Random(7)
    matches = expected = variance = 0.0
    randomising = 0
    for d in decisions:
        guess = _canonical(d["choose"](d["state"], d["legal"], d["seat"],
                                       bot_rng(d["game_id"], d["seat"], d["version"])))   # public inputs only
        samples = [_canonical(d["choose"](d["state"], d["legal"], d["seat"], random.Random(rng.getrandbits(64))))
                   for _ in range(SAMPLES)]
        p = samples.count(guess) / SAMPLES
        if len(set(samples)) == 1 and p == 1.0:
            continue   # the policy does not randomise here
        randomising += 1
        matches += actual_of(d) == guess
        expected += p
        variance += p * (1 - p) * (1 + 1 / SAMPLES)   # a match's variance, and p's own from its samples
    upper = expected + Z * math.sqrt(variance)
    return {"decisions": randomising, "matches": int(matches), "expected": round(expected, 1),
            "upper": round(upper, 1), "predictable": matches > upper}


def test_a_predictor_with_public_data_does_no_better_than_chance(monkeypatch):
    decisions = _record_bot_decisions(monkeypatch)
    monkeypatch.undo()
    figures = _prediction_figures(decisions)
    print(f"\npredicting bot moves from public data: {figures}")
    assert figures["decisions"] >= 600, figures
    assert not figures["predictable"], figures
    # The check can fail: bots whose randomness came from public data alone (no key), as
    # before the server-held key, are predicted every time, far above the interval.
    unkeyed = _prediction_figures(decisions[:300], actual_of=lambda d: _canonical(
        d["choose"](d["state"], d["legal"], d["seat"], bot_rng(d["game_id"], d["seat"], d["version"]))))
    assert unkeyed["predictable"] and unkeyed["matches"] == unkeyed["decisions"], unkeyed
