"""POST /web/api/words draws from the server's own record: numbers of the attacker's choosing
are a 4xx or a bounded answer, never a 5xx; a seat gets the words of what it may see."""

import random

from ops.drills import _kit, words_bounded
from service import render


def test_drill_short_form(fake_redis):
    figures = words_bounded.run_inline(fake_redis, repeat=1)
    assert figures["ok"], figures
    assert not figures["server_errors"] and figures["largest_answer"] < words_bounded.MAX_ANSWER


def _finished(client):
    app = _kit.make_app(client)
    service = app.extensions["games"]
    game_id, tokens = _kit.create_open_game(service, "secret-duel", options={"rounds": 2})
    _kit.play_out(service, service.jobs, game_id, random.Random(3))
    return app, service, game_id, tokens


def test_words_are_the_servers_own_for_that_seat(fake_redis):
    app, service, game_id, tokens = _finished(fake_redis)
    http = app.test_client()
    summary = service.game(game_id)
    version = summary["version"]
    for seat, token in [(None, None), (0, tokens[0]), (1, tokens[1])]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        answer = http.post("/web/api/words", json={"game_id": game_id, "after": 0}, headers=headers).json
        shown, _ = service.events(game_id, seat, 0)
        assert answer["events"] == [{"version": e["version"], "type": e["type"],
                                     "text": render.describe_event(summary["type"], e, summary["seats"], seat)}
                                    for e in shown]
        assert answer["seat_labels"] == [render.seat_label(summary["seats"], s, seat)
                                         for s in range(len(summary["seats"]))]
        assert answer["events_until"] == version and answer["viewer"] == seat
    hands = http.post("/web/api/words", json={"game_id": game_id, "at": version}).json["hands"]
    assert hands == render.revealed_hands(summary["type"], service.replay(game_id, version, None)["full_state"],
                                          len(summary["seats"]))


def test_a_live_game_hides_the_hands_and_checks_every_version(fake_redis):
    app = _kit.make_app(fake_redis)
    service = app.extensions["games"]
    game_id, tokens = _kit.create_open_game(service, "speculation", players=3)
    http = app.test_client()
    version = service.game(game_id)["version"]
    auth = {"Authorization": f"Bearer {tokens[0]}"}
    assert http.post("/web/api/words", json={"game_id": game_id, "at": 1}).status_code == 422
    for n in (version + 1, -1, 2 ** 53 - 1, 30_000_000, 1.5, True, "3"):
        for field in ("after", "until", "at", "version"):
            response = http.post("/web/api/words", json={"game_id": game_id, field: n, "actions": True}, headers=auth)
            assert response.status_code == 422, (field, n, response.json)
    actions = http.post("/web/api/words", json={"game_id": game_id, "actions": True, "version": version},
                        headers=auth).json
    view = service.view(game_id, 0)
    assert actions["actions"] == [render.describe_action("speculation", a) for a in view["legal_actions"]]
    other, other_tokens = _kit.create_open_game(service, "speculation", players=3)
    refused = http.post("/web/api/words", json={"game_id": game_id},
                        headers={"Authorization": f"Bearer {other_tokens[0]}"})
    assert refused.status_code == 403
    assert http.post("/web/api/words", json={"game_id": game_id},
                     headers={"Authorization": "Bearer forged"}).status_code == 401
    assert http.post("/web/api/words", json={"game_id": "nosuchgame"}).status_code == 404


def test_events_come_a_page_at_a_time(fake_redis, monkeypatch):
    import service.web as web

    monkeypatch.setattr(web, "EVENTS_PER_ANSWER", 4)
    app, service, game_id, tokens = _finished(fake_redis)
    http = app.test_client()
    version, after, seen = service.game(game_id)["version"], 0, []
    while after < version:
        page = http.post("/web/api/words", json={"game_id": game_id, "after": after}).json
        assert len(page["events"]) <= 4 and page["events_until"] > after
        seen += [e["version"] for e in page["events"]]
        after = page["events_until"]
    assert seen == [e["version"] for e in service.events(game_id, None, 0)[0]]


def test_words_that_read_the_past_wait_on_the_audit_gate(fake_redis):
    """A past version's legal actions are a replay, as the API's /replay: past the address's
    bound they are a 429 too_many_audits, while the labels, the current actions and the events
    (what GET /events answers, the live table's every update) still answer."""
    app = _kit.make_app(fake_redis, AUDITS_PER_ADDRESS=1)
    service = app.extensions["games"]
    game_id, tokens = _kit.create_open_game(service, "speculation", players=3)
    http = app.test_client()
    version = service.game(game_id)["version"]
    auth = {"Authorization": f"Bearer {tokens[0]}"}
    from service.expensive import gate

    with app.app_context(), gate().slot("127.0.0.1", may_wait=False):
        response = http.post("/web/api/words", json={"game_id": game_id, "actions": True, "version": version - 1},
                             headers=auth)
        assert response.status_code == 429, response.json
        assert response.json["error"]["code"] == "too_many_audits"
        assert http.post("/web/api/words", json={"game_id": game_id}, headers=auth).status_code == 200
        events = http.post("/web/api/words", json={"game_id": game_id, "after": 0}, headers=auth)
        assert events.status_code == 200 and events.json["events"], events.json
        assert http.post("/web/api/words", json={"game_id": game_id, "at": 1}).status_code == 422  # checked first
        current = http.post("/web/api/words", json={"game_id": game_id, "actions": True, "version": version},
                            headers=auth)
        assert current.status_code == 200 and current.json["actions_version"] == version
    past = http.post("/web/api/words", json={"game_id": game_id, "actions": True, "version": version - 1},
                     headers=auth)
    assert past.status_code == 200 and past.json["actions_version"] == version - 1


def test_a_live_game_in_words_is_each_callers_own(fake_redis):
    """While the game is live every seat's words are its own: a token's seat, a ticket's seat,
    the spectator's; no seat's dealt cards or objective reach another (the finished game above
    discloses everything, so only a live one can catch a words answer for the wrong seat)."""
    app = _kit.make_app(fake_redis)
    service = app.extensions["games"]
    game_id, tokens = _kit.create_open_game(service, "speculate", players=3)
    http = app.test_client()
    summary = service.game(game_id)
    assert summary["status"] == "active"
    ticket = service.issue_stream_ticket(game_id, 1)["ticket"]
    callers = [(None, {}, {}), (0, {"Authorization": f"Bearer {tokens[0]}"}, {}),
               (1, {}, {"ticket": ticket}),
               (1, {"Authorization": f"Bearer {tokens[0]}"}, {"ticket": ticket})]   # the ticket decides
    texts = {}
    for seat, headers, extra in callers:
        answer = http.post("/web/api/words", json={"game_id": game_id, "after": 0, **extra}, headers=headers).json
        shown, _ = service.events(game_id, seat, 0)
        assert answer["viewer"] == seat
        assert answer["events"] == [{"version": e["version"], "type": e["type"],
                                     "text": render.describe_event("speculate", e, summary["seats"], seat)}
                                    for e in shown]
        texts[seat] = [e["text"] for e in answer["events"]]
    for seat in (0, 1):             # each seat's own hand and objective, in words, reach no one else
        secrets = [t.split(marker, 1)[1] for t in texts[seat] if "(you)" in t
                   for marker in ("is dealt ", "objective: ") if marker in t]
        assert len(secrets) == 2, (seat, texts[seat])
        others = " ".join(sum((texts[o] for o in texts if o != seat), []))
        assert not [x for x in secrets if x in others], (seat, secrets)
    assert http.post("/web/api/words", json={"game_id": game_id, "ticket": 5}).status_code == 422
    assert http.post("/web/api/words", json={"game_id": game_id, "ticket": "forged"}).status_code == 401
    other, _ = _kit.create_open_game(service, "speculate", players=3)
    elsewhere = service.issue_stream_ticket(other, 0)["ticket"]
    assert http.post("/web/api/words", json={"game_id": game_id, "ticket": elsewhere}).status_code == 401
