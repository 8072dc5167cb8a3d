"""Finding a game through the client generated from /openapi.json (tests/test_generated_client.py
generates it, with no warning allowed), every request and response checked against the
document (the accounts test's Contract, with PUT too): three accounts; alice challenges bob
and carol to a rated game (createChallenge), they accept (acceptChallenge), the game is played
to the end; alice and bob ask for a rematch at once (rematch) and get one game, carol declines
it (declineChallenge); carol takes no challenges any more (setPreferences, getPreferences);
seeks (createSeek, listSeeks, cancelSeek), two of them matched into a game; then the
leaderboard (getLeaderboard), a profile (getProfile) and a rating history (getRatingHistory)
after the rated game, and the account streams' invitation and seek notices, typed."""

from __future__ import annotations

import importlib
import random
import re
import threading

import pytest

from test_generated_client import PACKAGE, _fill, _Tag, client_package  # noqa: F401
from test_generated_client_accounts import PASSWORD, AccountContract, _service

GAME = "speculation"
OPTIONS = {"deals": 2}


class MatchingContract(AccountContract):
    """The accounts' Contract with the PUT operations too (setPreferences)."""

    def __init__(self, spec: dict):
        super().__init__(spec)
        for path, operations in spec["paths"].items():
            if "put" in operations:
                pattern = re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$")
                self.routes.append(("PUT", pattern, operations["put"]))


@pytest.fixture
def service(client_package, fake_redis, monkeypatch):
    import test_generated_client_accounts as accounts_test

    monkeypatch.setattr(accounts_test, "AccountContract", MatchingContract)
    monkeypatch.setitem(accounts_test.SETTINGS, "CREATE_LIMIT", "1000/60")
    return _service(client_package, fake_redis)


def _account(client, name: str):
    accounts = _Tag("accounts")
    models = importlib.import_module(f"{PACKAGE}.models")
    anonymous = client()
    made = accounts.sign_up.sync(client=anonymous, body=models.SignUp(username=name, password=PASSWORD))
    assert isinstance(made, models.SignedUp), made
    session = accounts.sign_in.sync(client=anonymous, body=models.SignIn(username=name, password=PASSWORD))
    assert isinstance(session, models.Session), session
    return made.account.id, client(session.token)


def _events(account_client, kind: str) -> list:
    page = _Tag("accounts").list_account_events.sync(client=account_client)
    return [e for e in page.events if str(e.type_) == kind]


def _play_out(game_id: str, players: dict, rng: random.Random) -> int:
    """Each account plays its one seat (no seat named) until the game is over."""
    play = _Tag("play")
    models = importlib.import_module(f"{PACKAGE}.models")
    for n in range(20_000):
        any_view = play.get_view.sync(game_id, client=next(iter(players.values())))
        if any_view.status != "active":
            return n
        seat = rng.choice(any_view.to_act)
        mine = play.get_view.sync(game_id, client=players[seat])
        assert mine.seat == seat
        body = models.ActionRequest.from_dict({"action": _fill(rng.choice([a.to_dict() for a in mine.legal_actions]),
                                                               rng),
                                               "expected_version": mine.version, "decision": mine.decision})
        done = play.post_action.sync(game_id, client=players[seat], body=body, idempotency_key=f"m-{n:06d}")
        assert isinstance(done, models.ActionResponse), done
    pytest.fail("the game did not end")


def test_a_generated_client_challenges_accepts_plays_rematches_declines_and_seeks(service):
    app, jobs, contract, client = service
    matching, games, accounts, boards = _Tag("matching"), _Tag("games"), _Tag("accounts"), _Tag("leaderboards")
    models = importlib.import_module(f"{PACKAGE}.models")
    anonymous = client()
    alice_id, alice = _account(client, "alice")
    bob_id, bob = _account(client, "bob")
    carol_id, carol = _account(client, "carol")
    by_id = {alice_id: alice, bob_id: bob, carol_id: carol}

    # a rated challenge: alice's seat taken at once, bob's and carol's reserved and offered
    challenged = matching.create_challenge.sync(client=alice, body=models.Challenge.from_dict({
        "type": GAME, "options": OPTIONS, "rated": True, "turn_timeout": 300, "expires_in": 600,
        "seats": [{"me": True}, {"account": "bob"}, {"account": "carol"}]}))
    assert isinstance(challenged, models.GameSummary), challenged
    game_id = challenged.game_id
    assert [s.kind for s in challenged.seats] == ["player", "open", "open"]
    assert [s.reserved for s in challenged.seats[1:]] == [bob_id, carol_id]
    invitation = _events(bob, "invitation")
    assert [(e.game_id, e.kind, e.from_, e.seat) for e in invitation] == [(game_id, "challenge", alice_id, 1)]
    # a reserved seat is not anyone's: a typed 403
    taken = games.claim_seat.sync(game_id, 1, client=carol, body=models.Claim())
    assert isinstance(taken, models.Error) and taken.error.code == "seat_reserved"
    for invited in (bob, carol):
        accepted = matching.accept_challenge.sync(game_id, client=invited)
        assert isinstance(accepted, models.GameSummary), accepted
    assert accepted.status == "active"
    assert sorted(e.by for e in _events(alice, "invitation.accepted")) == sorted([bob_id, carol_id])

    # played to the end, each account its own seat; scored and rated
    seats = {i: by_id[s.account] for i, s in enumerate(accepted.seats)}
    _play_out(game_id, seats, random.Random("matching"))
    jobs.drain(app.extensions["games"])
    finished = games.get_game.sync(game_id, client=anonymous)
    assert finished.status == "scored" and finished.platform_options["rated"] is True

    # a rematch asked by alice and bob at once: one game, both seats taken, seats rotated by one
    asked: dict = {}

    def ask(name, who):
        asked[name] = matching.rematch.sync(game_id, client=who, body=models.Rematch(expires_in=600))

    threads = [threading.Thread(target=ask, args=(n, w)) for n, w in (("alice", alice), ("bob", bob))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(isinstance(a, models.GameSummary) for a in asked.values()), asked
    again = {a.game_id for a in asked.values()}
    assert len(again) == 1
    rematch_id = again.pop()
    rematched = games.get_game.sync(rematch_id, client=anonymous)
    old = [s.account for s in finished.seats]
    assert [s.account or s.reserved for s in rematched.seats] == [old[-1]] + old[:-1]
    assert rematched.status == "open" and rematched.platform_options["rated"] is True
    offered = [e for e in _events(carol, "invitation") if e.game_id == rematch_id]
    assert [(e.kind, e.rated) for e in offered] == [("rematch", True)]
    # carol declines: the game expires and never starts
    declined = matching.decline_challenge.sync(rematch_id, client=carol)
    assert isinstance(declined, models.GameSummary), declined
    assert declined.status == "expired"
    assert [e.reason for e in _events(alice, "invitation.expired") if e.game_id == rematch_id] == ["declined"]
    late = matching.accept_challenge.sync(rematch_id, client=carol)
    assert isinstance(late, models.Error), late

    # carol takes no challenges any more
    assert matching.get_preferences.sync(client=carol).challenges == "anyone"
    set_to = matching.set_preferences.sync(client=carol, body=models.Preferences(
        challenges=models.PreferencesChallenges.NONE))
    assert isinstance(set_to, models.Preferences) and set_to.challenges == "none"
    refused = matching.create_challenge.sync(client=alice, body=models.Challenge.from_dict({
        "type": GAME, "seats": [{"me": True}, {"account": "carol"}, {}]}))
    assert isinstance(refused, models.Error) and refused.error.code == "challenges_refused"

    # seeks: alice's open one listed, then cancelled; bob's and carol's matched into one game
    mine = matching.create_seek.sync(client=alice, body=models.SeekRequest(type_="big-shot", players=2,
                                                                          rating_range=models.RatingRange(min_=50)))
    assert isinstance(mine, models.Seek) and mine.status == "open", mine
    listed = matching.list_seeks.sync(client=alice)
    assert isinstance(listed, models.Seeks)
    assert [(s.seek_id, s.status) for s in listed.seeks] == [(mine.seek_id, "open")]
    assert matching.cancel_seek.sync_detailed(mine.seek_id, client=alice).status_code == 204
    assert matching.list_seeks.sync(client=alice).seeks == []
    gone = matching.cancel_seek.sync(mine.seek_id, client=bob)
    assert isinstance(gone, models.Error) and gone.error.code == "not_found"
    first = matching.create_seek.sync(client=bob, body=models.SeekRequest(type_="big-shot", players=2))
    second = matching.create_seek.sync(client=carol, body=models.SeekRequest(type_="big-shot", players=2))
    assert (first.status, second.status) == ("open", "matched") and isinstance(second.game_id, str)
    assert [(s.status, s.game_id) for s in matching.list_seeks.sync(client=bob).seeks] == [("matched", second.game_id)]
    told = {who: [(e.seek_id, e.game_id) for e in _events(c, "seek.matched")] for who, c in (("bob", bob),
                                                                                              ("carol", carol))}
    assert told == {"bob": [(first.seek_id, second.game_id)], "carol": [(second.seek_id, second.game_id)]}
    formed = games.get_game.sync(second.game_id, client=anonymous)
    assert formed.status == "active" and sorted(s.account for s in formed.seats) == sorted([bob_id, carol_id])

    # after the rated game: the leaderboard, a profile, a rating history
    board = boards.get_leaderboard.sync(GAME, client=anonymous)
    assert isinstance(board, models.Leaderboard), board
    assert {r.account for r in board.rows} == {alice_id, bob_id, carol_id} and board.total == 3
    assert [r.rank for r in board.rows] == [1, 2, 3]
    profile = accounts.get_profile.sync("bob", client=anonymous)
    assert isinstance(profile, models.Profile), profile
    assert profile.id == bob_id and not profile.bot and GAME in profile.ratings.additional_properties
    assert game_id in [g["game_id"] for g in profile.recent_games]
    history = accounts.get_rating_history.sync("bob", GAME, client=anonymous)
    assert isinstance(history, models.RatingHistory), history
    assert [h.game_id for h in history.history] == [game_id] and history.history[0].players == 3

    used = {"createChallenge", "acceptChallenge", "declineChallenge", "rematch", "getPreferences", "setPreferences",
            "createSeek", "listSeeks", "cancelSeek", "getLeaderboard", "getProfile", "getRatingHistory",
            "listAccountEvents", "postAction", "getView", "getGame", "claimSeat"}
    assert used <= contract.checked["operations"], used - contract.checked["operations"]


def test_a_challenger_cancels_through_the_generated_client(service):
    _, _, contract, client = service
    matching = _Tag("matching")
    models = importlib.import_module(f"{PACKAGE}.models")
    _, alice = _account(client, "alice")
    _, bob = _account(client, "bob")
    made = matching.create_challenge.sync(client=alice, body=models.Challenge.from_dict({
        "type": "big-shot", "seats": [{"me": True}, {"account": "bob"}]}))
    assert isinstance(made, models.GameSummary), made
    not_yours = matching.cancel_challenge.sync(made.game_id, client=bob)
    assert isinstance(not_yours, models.Error) and not_yours.error.code == "not_yours"
    cancelled = matching.cancel_challenge.sync(made.game_id, client=alice)
    assert isinstance(cancelled, models.GameSummary) and cancelled.status == "expired"
    assert [e.reason for e in _events(bob, "invitation.expired")] == ["cancelled"]
    assert "cancelChallenge" in contract.checked["operations"]
