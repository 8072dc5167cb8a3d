"""Leaving a game (docs/api.md "Leaving a game"): a person leaves at any time, a bot of the
level the creation chose takes the seat over (`seat.left`), plays it to the end of the game
and the game finishes; the seat's credentials are refused from then on (403 `seat_left`);
a seat leaves once (any retry answers the original leave); a leave after the end, the expiry
or of a seat no person holds is a 409; a crash after the append is repaired by the
reconciler; in a rated game the seat that left ranks last and the bot is not rated; a game
whose people all left counts among its creator's live games only bots play."""

from __future__ import annotations

import json
import random
from functools import partial

import pytest

from events.envelope import NewEvent
from events.randomness import event_nonce
from projections.session import fold
from service.app import create_app
from service.audit.bundle import seat_receipts
from service.bootstrap import Backend
from service.core.errors import Conflict, Forbidden, NotFound
from service.ratings.service import BOT_ACCOUNTS, log_of
from workers.memory_jobs import MemoryJobs

from service_kit import make_service
from test_accounts import CHEAP, Api, error

SEED = "1e" * 32


@pytest.fixture
def api(fake_redis):
    jobs = MemoryJobs()
    app = create_app({"ALLOW_SEED": True, "RATE_LIMIT": None, "CREATE_LIMIT": None, **CHEAP,
                      "SIGNUP_LIMIT": "1000/60", "SIGNIN_LIMIT": "1000/60", "BOT_GAMES_PER_ADDRESS": 0},
                     backend=Backend(fake_redis, fake_redis, False), jobs=jobs)
    return Api(app, jobs)


def _duel(api, players=2, rounds=1, **extra) -> str:
    body = {"type": "secret-duel", "seats": [{}] * players, "options": {"rounds": rounds}, "seed": SEED,
            "leave_level": "random", **extra}
    made = api.http.post("/v1/games", json=body)
    assert made.status_code == 201, made.json
    return made.json["game_id"]


def _guests(api, game_id, players=2) -> list[str]:
    return [api.http.post(f"/v1/games/{game_id}/seats/{s}", json={"name": f"guest{s}"}).json["token"]
            for s in range(players)]


def _leave(api, game_id, token, **kw):
    return api.call("POST", f"/v1/games/{game_id}/leave", token, json=kw.pop("json", {}), **kw)


def _play_people(api, game_id, tokens: dict, rng) -> None:
    """The persons in `tokens` play random legal moves, the bots' jobs run between them, to the end."""
    for n in range(500):
        api.jobs.drain(api.service)
        game = api.http.get(f"/v1/games/{game_id}").json
        if game["status"] != "active":
            return
        people = [s for s in game["to_act"] if s in tokens]
        assert people, f"nobody to act at version {game['version']}: {game['to_act']}, jobs {api.jobs.pending}"
        seat = rng.choice(people)
        view = api.call("GET", f"/v1/games/{game_id}/view", tokens[seat], query_string={"seat": seat}).json
        template = rng.choice(view["legal_actions"])
        action = {k: rng.randint(v["min"], v["max"]) if isinstance(v, dict) else v for k, v in template.items()}
        done = api.call("POST", f"/v1/games/{game_id}/actions", tokens[seat], json={"action": action, "seat": seat},
                        headers={"Idempotency-Key": f"play-{n}"})
        assert done.status_code == 200, done.json
    raise AssertionError("the game did not end")


# --- the fold and the log ---------------------------------------------------------------------

def test_the_seat_becomes_the_bot_of_the_creation_s_level_and_the_log_verifies(fake_redis):
    service, jobs = make_service(fake_redis)
    game_id = service.create_game("secret-duel", {"rounds": 1}, [{}, {}], seed=SEED, leave_level="baseline").session.game_id
    service.claim(game_id, 0, "ann")
    service.claim(game_id, 1, "ben")
    left = service.leave(game_id, 1)
    seat = left.session.seats[1]
    assert (seat.kind, seat.level, seat.name, seat.left) == ("bot", "baseline", "ben", left.session.version)
    assert seat.as_dict() == {"kind": "bot", "name": "ben", "level": "baseline", "left": True}
    last = service.store.read(game_id, left.session.version - 1, left.session.version)[0]
    assert (last.type, last.data, last.cmd) == ("seat.left", {"seat": 1, "level": "baseline"}, None)
    assert fold(service.store.read(game_id), game_id) == left.session   # the fold from the log agrees
    assert ("bot_turn", game_id, 1, left.session.version) in jobs.pending   # its turn, at once
    raw = service.store.read_raw(game_id)   # the leave's receipt is in the seat's bundle, as its own batch
    assert [r["first_version"] for r in seat_receipts(service, game_id, raw, 1)][-1] == left.session.version
    assert service.signed_receipt(game_id, left.receipt) == service.receipt_through(game_id, left.session.version)
    jobs.drain(service)
    assert service.load(game_id).to_act() == [0]
    service.act(game_id, 0, {"type": "bet", "amount": 1}, idempotency_key="ann")
    jobs.drain(service)
    assert service.load(game_id).status == "scored"
    assert service.verify(game_id)["ok"]


def test_verify_catches_a_leave_the_log_could_not_hold(fake_redis):
    service, _ = make_service(fake_redis)

    def forged(event):
        game_id = service.create("secret-duel", {"rounds": 1}, [{}, {"bot": "random"}], seed=SEED).game_id
        service.claim(game_id, 0, "ann")
        head = service.store.head(game_id)
        service.store.append(game_id, [event], base_version=head[0], base_head=head[1],
                             nonce=partial(event_nonce, SEED))
        return service.verify(game_id)

    report = forged(NewEvent("seat.left", {"seat": 1, "level": "heuristic"}))   # a bot's seat
    assert not report["ok"] and "no person held" in report["first_divergence"]["message"]
    report = forged(NewEvent("seat.left", {"seat": 0, "level": "search"}))      # not the creation's level
    assert not report["ok"] and "leave_level" in report["first_divergence"]["message"]
    assert forged(NewEvent("seat.left", {"seat": 0, "level": "heuristic"}))["ok"]


# --- the command --------------------------------------------------------------------------------

def test_a_leave_is_refused_once_the_game_is_over_expired_or_for_a_seat_no_person_holds(fake_redis):
    service, jobs = make_service(fake_redis)
    game_id = service.create("secret-duel", {"rounds": 1}, [{}, {"bot": "random"}], seed=SEED).game_id
    service.claim(game_id, 0, "ann")
    with pytest.raises(Conflict) as refused:
        service.leave(game_id, 1)
    assert refused.value.code == "not_a_person"
    with pytest.raises(NotFound):
        service.leave(game_id, 2)
    jobs.drain(service)
    service.act(game_id, 0, {"type": "bet", "amount": 0}, idempotency_key="k")
    assert service.load(game_id).status == "ended"
    for _ in range(2):   # ended, then scored
        with pytest.raises(Conflict) as refused:
            service.leave(game_id, 0)
        assert refused.value.code == "game_over" and refused.value.details["field"] == "seat"
        jobs.drain(service)
    open_game = service.create("secret-duel", {}, [{}, {}], seed=SEED).game_id
    service.claim(open_game, 0, "ann")
    service.expire_game(open_game, "cancelled")
    with pytest.raises(Conflict) as refused:
        service.leave(open_game, 0)
    assert refused.value.code == "game_expired"
    assert service.verify(game_id)["ok"] and service.verify(open_game)["ok"]


def test_leaving_an_open_game_gives_the_seat_to_the_bot_and_the_game_starts_when_the_others_come(api):
    game_id = _duel(api, players=3)
    token = api.http.post(f"/v1/games/{game_id}/seats/0", json={"name": "ann"}).json["token"]
    left = _leave(api, game_id, token)
    assert left.status_code == 200 and left.json["status"] == "open" and left.json["level"] == "random"
    game = api.http.get(f"/v1/games/{game_id}").json
    assert game["seats"][0] == {"kind": "bot", "name": "ann", "level": "random", "left": True, "guest": True}
    assert error(api.http.post(f"/v1/games/{game_id}/seats/0", json={"name": "ann"}), 409, "seat_taken")
    others = {s: api.http.post(f"/v1/games/{game_id}/seats/{s}", json={"name": f"p{s}"}).json["token"] for s in (1, 2)}
    assert api.http.get(f"/v1/games/{game_id}").json["status"] == "active"
    _play_people(api, game_id, others, random.Random(1))
    assert api.http.get(f"/v1/games/{game_id}").json["status"] == "scored"
    assert api.http.get(f"/v1/games/{game_id}/verify").json["ok"]


# --- over HTTP: the judged path --------------------------------------------------------------

def test_a_player_who_leaves_is_replaced_by_a_bot_and_the_game_finishes(api):
    game_id = _duel(api, rounds=3)
    tokens = _guests(api, game_id)
    api.call("POST", f"/v1/games/{game_id}/actions", tokens[1], json={"action": {"type": "bet", "amount": 2}},
             headers={"Idempotency-Key": "first-bet"})
    left = _leave(api, game_id, tokens[1], headers={"Idempotency-Key": "leave-seat-1-0123456789"})
    assert left.status_code == 200, left.json
    assert left.headers["Idempotent-Replayed"] == "false"
    assert {k: left.json[k] for k in ("game_id", "seat", "level", "status")} == \
        {"game_id": game_id, "seat": 1, "level": "random", "status": "active"}
    assert left.json["receipt"]["version"] == left.json["version"] == left.json["receipt"]["first_version"]
    # a retry, with the same key, another or none, answers the original leave; nothing is appended
    for headers in ({"Idempotency-Key": "leave-seat-1-0123456789"}, {"Idempotency-Key": "another-key-abcdefgh"}, {}):
        again = _leave(api, game_id, tokens[1], headers=headers)
        assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
        assert again.json == left.json
    assert api.service.load(game_id).version == left.json["version"]
    # the token is refused from then on, for reading and for playing: who left watches as a spectator
    for response in (api.call("GET", f"/v1/games/{game_id}/view", tokens[1]),
                     api.call("GET", f"/v1/games/{game_id}/events", tokens[1]),
                     api.call("POST", f"/v1/games/{game_id}/actions", tokens[1],
                              json={"action": {"type": "bet", "amount": 0}}, headers={"Idempotency-Key": "late"}),
                     api.call("POST", f"/v1/games/{game_id}/stream-tickets", tokens[1])):
        assert error(response, 403, "seat_left")["details"]["seat"] == 1
    events = api.http.get(f"/v1/games/{game_id}/events").json["events"]
    assert [e["data"] for e in events if e["type"] == "seat.left"] == [{"seat": 1, "level": "random"}]
    words = api.http.post("/web/api/words", json={"game_id": game_id, "after": 0,
                                                   "until": left.json["version"]}).json["events"]
    assert words[-1]["text"] == "guest1 leaves the game: a random bot plays seat 2 from now on."   # seat 1, counted from 1
    _play_people(api, game_id, {0: tokens[0]}, random.Random(2))
    game = api.http.get(f"/v1/games/{game_id}").json
    assert game["status"] == "scored" and game["seats"][1]["left"] is True
    assert api.http.get(f"/v1/games/{game_id}/verify").json["ok"]
    commands = [e.get("cmd") for e in api.http.get(f"/v1/games/{game_id}/events").json["events"] if e.get("cmd")]
    assert {c["by"] for c in commands if c["seat"] == 1 and c is not commands[0]} >= {"bot:random"}
    assert error(_leave(api, game_id, tokens[0]), 409, "game_over")


def test_an_account_leaves_its_seat_and_its_games_show_it(api):
    alice, _ = api.account("alice")
    bob, _ = api.account("bob")
    game_id = _duel(api, rounds=2)
    for seat, token in enumerate((alice, bob)):
        assert api.claim(game_id, seat, token).status_code == 201
    assert api.call("GET", "/v1/account/games", alice).json["games"][0]["my_turn"] is True
    left = _leave(api, game_id, alice)
    assert left.status_code == 200 and left.json["seat"] == 0
    assert error(api.call("GET", f"/v1/games/{game_id}/view", alice), 403, "seat_left")
    assert error(api.call("POST", f"/v1/games/{game_id}/actions", alice, json={"action": {"type": "bet", "amount": 0}},
                          headers={"Idempotency-Key": "late"}), 403, "seat_left")
    assert api.call("GET", f"/v1/games/{game_id}/events", alice).status_code == 200   # as a spectator
    assert _leave(api, game_id, alice).headers["Idempotent-Replayed"] == "true"
    row = api.call("GET", "/v1/account/games", alice).json["games"][0]
    assert (row["my_seats"], row["left_seats"], row["my_turn"]) == ([0], [0], False)
    assert row["seats"][0]["left"] is True and row["seats"][0]["name"] == "alice"
    notices = api.call("GET", "/v1/account/events", alice).json["events"]
    turns = [n for n in notices if n["type"] == "turn"]
    _play_people(api, game_id, {1: bob}, random.Random(3))
    assert api.service.load(game_id).status == "scored"
    after = api.call("GET", "/v1/account/events", alice).json["events"]
    assert [n for n in after if n["type"] == "turn"] == turns and not [n for n in after if n["type"] == "ended"]


# --- crashes ----------------------------------------------------------------------------------------

def test_the_reconciler_enqueues_the_bot_s_turn_a_crash_lost(fake_redis):
    service, jobs = make_service(fake_redis)
    game_id = service.create_game("secret-duel", {"rounds": 1}, [{}, {}], seed=SEED,
                                  leave_level="random").session.game_id
    service.claim(game_id, 0, "ann")
    service.claim(game_id, 1, "ben")
    jobs.pending.clear()
    # the append made, the follow-up lost (the process died after it): as the store holds it
    head = service.store.head(game_id)
    service.store.append(game_id, [NewEvent("seat.left", {"seat": 1, "level": "random"})],
                         base_version=head[0], base_head=head[1], idempotency_key="leave:1", body_digest="leave:1",
                         nonce=partial(event_nonce, SEED))
    assert jobs.pending == []
    session = service.repair(game_id)
    assert ("bot_turn", game_id, 1, session.version) in jobs.pending
    jobs.drain(service)
    assert service.load(game_id).to_act() == [0]
    assert service.leave(game_id, 1).replayed   # the client's retry finds the leave done


def test_a_timeout_queued_for_the_person_is_stale_once_they_left(fake_redis):
    service, jobs = make_service(fake_redis)
    game_id = service.create_game("secret-duel", {"rounds": 1}, [{}, {}], seed=SEED, turn_timeout=30,
                                  leave_level="random").session.game_id
    service.claim(game_id, 0, "ann")
    session, _ = service.claim(game_id, 1, "ben")
    assert service.timed_out_turn(game_id, 1, session.version) == session.version
    service.leave(game_id, 1)
    assert service.timed_out_turn(game_id, 1, session.version) is None


# --- streams ---------------------------------------------------------------------------------------

def test_a_seat_s_stream_ends_with_its_leave(api):
    game_id = _duel(api, rounds=2)
    tokens = _guests(api, game_id)
    ticket = api.call("POST", f"/v1/games/{game_id}/stream-tickets", tokens[1]).json["ticket"]
    left = _leave(api, game_id, tokens[1]).json
    api.jobs.drain(api.service)   # the bot bets after the leave: not the leaver's to see
    stream = api.http.get(f"/v1/games/{game_id}/events", headers={"Accept": "application/x-ndjson"},
                          query_string={"ticket": ticket, "after": 0, "follow": 5})
    assert error(stream, 403, "seat_left")
    service = api.service
    cursor, _ = service.open_stream_cursor(game_id, 1, 0, _Lines())
    lines = [json.loads(line) for line in cursor.advance().splitlines()]
    assert lines[-1]["event"]["type"] == "seat.left" and lines[-1]["version"] == left["version"]
    assert cursor.finished and service.load(game_id).version > left["version"]


class _Lines:
    def message(self, body: dict) -> str:
        return json.dumps(body) + "\n"

    def keepalive(self) -> str:
        return "\n"


# --- ratings -------------------------------------------------------------------------------------------

def _rated_duel(api, accounts: list[str]) -> str:
    game_id = _duel(api, players=len(accounts), rated=True, turn_timeout=60)
    for seat, token in enumerate(accounts):
        assert api.claim(game_id, seat, token).status_code == 201
    return game_id


def _rated_places(api, game_id) -> dict:
    event = next(e for e in api.service.store.read(log_of("secret-duel")) if e.data["game_id"] == game_id)
    return {p["seat"]: (p["place"], p["won"], p["bot"], p["account"]) for p in event.data["players"]}


def test_in_a_rated_game_the_seat_that_left_ranks_last_and_the_bot_is_not_rated(api):
    ann, bob, cid = (api.account(name)[0] for name in ("ann", "bob", "cid"))
    game_id = _rated_duel(api, [ann, bob, cid])
    assert _leave(api, game_id, ann).status_code == 200
    _play_people(api, game_id, {1: bob, 2: cid}, random.Random(4))
    session = api.service.load(game_id)
    assert session.status == "scored"
    places = _rated_places(api, game_id)
    ann_id = session.seats[0].account
    assert places[0] == (3, False, None, ann_id)   # the leaver's account, last, whatever its bot made
    assert sorted(p[0] for s, p in places.items() if s != 0) in ([1, 2], [1, 1])
    assert not any(p[3] in BOT_ACCOUNTS for p in places.values())   # the random bot that took over: unrated
    board = {row["name"] for row in api.http.get("/v1/leaderboards/secret-duel").json["rows"]}
    assert board == {"ann", "bob", "cid"}
    assert api.app.extensions["ratings"].rebuild("secret-duel")["kept_differing"] == 0


def test_several_leavers_share_the_last_places_the_first_to_leave_last(api):
    ann, bob, cid = (api.account(name)[0] for name in ("ann", "bob", "cid"))
    game_id = _rated_duel(api, [ann, bob, cid])
    assert _leave(api, game_id, cid).status_code == 200
    assert _leave(api, game_id, ann).status_code == 200
    _play_people(api, game_id, {1: bob}, random.Random(5))
    places = _rated_places(api, game_id)
    won = 1 in api.service.load(game_id).result["winners"]
    assert {s: p[:2] for s, p in places.items()} == {1: (1, won), 0: (2, False), 2: (3, False)}


# --- the creator's games only bots play --------------------------------------------------------------

def test_a_game_whose_people_all_left_counts_among_its_creator_s_bot_games(fake_redis):
    jobs = MemoryJobs()
    app = create_app({"ALLOW_SEED": True, "RATE_LIMIT": None, "CREATE_LIMIT": None, "BOT_GAMES_PER_ADDRESS": 1},
                     backend=Backend(fake_redis, fake_redis, False), jobs=jobs)
    api = Api(app, jobs)
    game_id = _duel(api, rounds=5)     # two open seats: not a game only bots play
    tokens = _guests(api, game_id)
    assert _leave(api, game_id, tokens[0]).status_code == 200
    bots_only = {"type": "secret-duel", "seats": [{"bot": "random"}] * 2, "options": {"rounds": 5}}
    made = api.http.post("/v1/games", json=bots_only)   # one person still plays: the cap is free
    assert made.status_code == 201
    jobs.drain(api.service)   # that one plays to its end
    assert _leave(api, game_id, tokens[1]).status_code == 200
    assert api.service.load(game_id).status == "active"
    assert error(api.http.post("/v1/games", json=bots_only), 429, "too_many_bot_games")
    jobs.drain(api.service)   # the game the people left plays to its end: the place is free again
    assert api.service.load(game_id).status == "scored"
    assert api.http.post("/v1/games", json=bots_only).status_code == 201


def test_leave_level_is_checked_and_recorded(api):
    made = api.http.post("/v1/games", json={"type": "secret-duel", "seats": [{}, {}], "leave_level": "grandmaster"})
    assert error(made, 422, "invalid")["message"].startswith("leave_level: ")
    core = api.service
    with pytest.raises(Exception) as refused:   # the core's own check, for callers past the schema
        core.create_game("secret-duel", {}, [{}, {}], leave_level="grandmaster")
    assert refused.value.details["field"] == "leave_level"
    game_id = _duel(api)
    assert api.http.get(f"/v1/games/{game_id}").json["platform_options"]["leave_level"] == "random"
    default = api.http.post("/v1/games", json={"type": "big-shot", "seats": [{}, {}]}).json
    assert "leave_level" not in default["platform_options"]
    service = api.service
    assert service.load(default["game_id"]).leave_level == "heuristic"
    tokens = _guests(api, default["game_id"])
    assert _leave(api, default["game_id"], tokens[0]).json["level"] == "heuristic"
    with pytest.raises(Forbidden) as refused:   # the core's own check, as the routes use it
        service.authenticate(default["game_id"], tokens[0])
    assert refused.value.code == "seat_left"
    assert service.authenticate(default["game_id"], tokens[0], allow_left=True) == 0
