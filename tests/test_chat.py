"""The table chat (docs/api.md "Chat"): its pure rules (projections/chat.py) and the API —
seats and spectators in separate channels, text only and length-limited, presets, the
per-author rate and the per-game cap (a refusal changes nothing), a seat's mutes, the
operator's removals, idempotent retries, the chat kept with the game (its export, its archive)
but outside its hash chain."""

from __future__ import annotations

import json
import random

import pytest

from events.chat import ChatEntry
from ops.drills import _kit
from projections import chat as rules
from projections.chat import PLAYERS, SPECTATORS, Viewer

from test_accounts import CHEAP, Api, error

SEED = "c4" * 32


# --- the rules, pure ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, problem", [
    ("hello", None),
    ("  padded  ", None),
    ("<img src=x onerror=alert(1)>", None),            # markup is text: shown as typed, never rendered
    ("👩‍👩‍👧 and 🇫🇷", None),                                  # emoji sequences keep their joiners
    ("Việt Nam, שָׁלוֹם", None),
    ("", "empty"), ("   ", "empty"),
    ("a\nb", "U+000A"), ("tab\there", "U+0009"), ("nul\x00", "U+0000"), ("\x1b[31mred", "U+001B"),
    ("abc\u202edcba", "U+202E"), ("in\u2066side", "U+2066"), ("zero\u200bwidth", "U+200B"), ("bom\ufeff", "U+FEFF"),
    ("line\u2028sep", "U+2028"), ("private\ue000", "U+E000"),
    ("Z" + "\u0301" * 8, "combining"),       # NFC composes one: 7 left in a row
    ("x" * 281, "at most 280"),
])
def test_what_a_message_may_say(text, problem):
    found, kept = rules.text_problem(text, 280)
    if problem is None:
        assert found is None and kept == text.strip(" ")
    else:
        assert found and problem in found, found


def test_length_is_counted_after_nfc():
    decomposed = "e\u0301" * 280                # 560 code points, 280 once composed
    assert rules.text_problem(decomposed, 280) == (None, "\u00e9" * 280)


def test_who_reads_and_writes_each_channel():
    seat, spectator, account = Viewer(seat=1), Viewer(), Viewer(account="a1")
    assert rules.readable("active", seat) == [PLAYERS, SPECTATORS]
    assert rules.readable("active", spectator) == [SPECTATORS] == rules.readable("open", account)
    for over in ("ended", "scored", "expired", "abandoned"):
        assert rules.readable(over, spectator) == [PLAYERS, SPECTATORS]
    assert rules.writable(seat) == [PLAYERS] and rules.writable(account) == [SPECTATORS]
    assert rules.writable(Viewer(seat=0, account="a1")) == [PLAYERS, SPECTATORS] and rules.writable(spectator) == []
    assert rules.author_key(PLAYERS, Viewer(0, "a1")) == "seat:0" and rules.author_key(SPECTATORS, Viewer(0, "a1")) == "account:a1"


def _entries(*bodies):
    return rules.decode([ChatEntry(n, body, 3, 1000 + n) for n, body in enumerate(bodies, start=1)])


def test_what_a_viewer_is_shown():
    entries = _entries(rules.message_body(PLAYERS, Viewer(0), "secret plan"),
                       rules.message_body(SPECTATORS, Viewer(account="a9"), preset="good-luck"),
                       rules.mute_body(1, 0, True),
                       rules.message_body(PLAYERS, Viewer(1), "hi"),
                       rules.removal_body(4, PLAYERS, "spam"),
                       "not json", json.dumps([1, 2]))
    spectator = rules.shown(entries, "active", Viewer())
    assert [(i["id"], i["text"]) for i in spectator] == [(2, "Good luck!")]         # no players' channel, no mute
    seat = rules.shown(entries, "active", Viewer(1), muted=[0])
    assert [(i["id"], i["kind"], i["text"], i["removed"]) for i in seat] == [
        (2, "message", "Good luck!", False), (4, "message", None, True), (5, "removal", None, False)]
    assert seat[2]["message"] == 4 and seat[2]["reason"] == "spam"
    after_the_end = rules.shown(entries, "scored", Viewer(), removed={1})
    assert [(i["id"], i["text"]) for i in after_the_end if i["kind"] == "message"] == [
        (1, None), (2, "Good luck!"), (4, None)]
    assert [i["id"] for i in rules.shown(entries, "scored", Viewer(), channel=SPECTATORS)] == [2]


def test_flags_give_mutes_and_removals():
    flags = {"mute:1:0": True, "mute:1:3": True, "mute:2:1": True, "removed:7": True}
    assert rules.muted_by(flags, 1) == [0, 3] and rules.muted_by(flags, None) == []
    assert rules.removed_in(flags) == {7}


# --- the API -----------------------------------------------------------------------------------

@pytest.fixture
def api(fake_redis):
    app = _kit.make_app(fake_redis, SIGNUP_LIMIT="1000/60", SIGNIN_LIMIT="1000/60", **CHEAP)
    return Api(app, app.extensions["games"].jobs)


def _table(api, players=2, rounds=1):
    made = api.http.post("/v1/games", json={"type": "secret-duel", "seats": [{}] * players,
                                            "options": {"rounds": rounds}, "seed": SEED})
    assert made.status_code == 201, made.json
    game_id = made.json["game_id"]
    tokens = [api.http.post(f"/v1/games/{game_id}/seats/{s}", json={"name": f"p{s}"}).json["token"]
              for s in range(players)]
    return game_id, tokens


def say(api, game_id, token, text=None, channel=PLAYERS, preset=None, **kw):
    body = {"channel": channel, **({"text": text} if text is not None else {}),
            **({"preset": preset} if preset is not None else {}), **kw.pop("json", {})}
    return api.call("POST", f"/v1/games/{game_id}/chat", token, json=body, **kw)


def read(api, game_id, token=None, **query):
    answer = api.call("GET", f"/v1/games/{game_id}/chat", token, query_string=query)
    assert answer.status_code == 200, answer.json
    return answer.json


def texts(answer):
    return [(i["author"]["name"] if i["author"] else None, i["text"]) for i in answer["items"]]


def test_presets_and_limits_are_served(api):
    served = api.http.get("/v1/chat/presets").json
    assert [p["id"] for p in served["presets"]] == list(rules.PRESETS)
    assert served["limits"] == {"max_length": 280, "rate_count": 5, "rate_seconds": 10, "max_entries": 2000}


def test_seats_talk_in_their_channel_which_spectators_read_only_after_the_end(api):
    game_id, tokens = _table(api)
    version = api.service.load(game_id).version
    said = say(api, game_id, tokens[0], "<b>bold</b> & <img src=x onerror=alert(1)>")
    assert said.status_code == 201 and said.headers["Idempotent-Replayed"] == "false", said.json
    assert said.json["text"] == "<b>bold</b> & <img src=x onerror=alert(1)>"      # as typed, to show as text
    assert said.json["version"] == version and said.json["author"] == {"seat": 0, "account": None, "name": "p0",
                                                                       "guest": True}
    assert say(api, game_id, tokens[1], preset="good-luck").json["text"] == "Good luck!"
    seat = read(api, game_id, tokens[1])
    assert texts(seat) == [("p0", "<b>bold</b> & <img src=x onerror=alert(1)>"), ("p1", "Good luck!")]
    assert (seat["readable"], seat["writable"], seat["seat"], seat["last"]) == ([PLAYERS, SPECTATORS], [PLAYERS], 1, 2)
    assert read(api, game_id, tokens[1], after=1)["items"][0]["id"] == 2
    spectator = read(api, game_id)
    assert spectator["items"] == [] and spectator["last"] == 2 and spectator["readable"] == [SPECTATORS]
    error(api.call("GET", f"/v1/games/{game_id}/chat", None, query_string={"channel": PLAYERS}), 403, "chat_forbidden")
    # the chat is no event: the game's version and head are where they were, verify still passes
    assert api.service.load(game_id).version == version and api.service.verify(game_id)["ok"]
    _kit.play_out(api.service, api.jobs, game_id, random.Random(3))
    assert api.service.load(game_id).status == "scored"
    assert texts(read(api, game_id))[:2] == texts(seat)                # over: the players' channel is public
    assert say(api, game_id, tokens[0], preset="well-played").status_code == 201   # post-game words
    header = json.loads(api.http.get(f"/v1/games/{game_id}/export").get_data(as_text=True).splitlines()[0])
    assert [i["text"] for i in header["chat"]] == [t for _, t in texts(seat)] + ["Well played!"]


@pytest.mark.parametrize("body, status, code, field", [
    ({"channel": PLAYERS, "text": "x" * 281}, 422, "invalid_text", "text"),
    ({"channel": PLAYERS, "text": "ring\x07"}, 422, "invalid_text", "text"),
    ({"channel": PLAYERS, "text": "\x1b[2J\x1b[31mcleared"}, 422, "invalid_text", "text"),
    ({"channel": PLAYERS, "text": "two\nlines"}, 422, "invalid_text", "text"),
    ({"channel": PLAYERS, "text": "rtl \u202eevil"}, 422, "invalid_text", "text"),
    ({"channel": PLAYERS, "text": "   "}, 422, "invalid_text", "text"),
    ({"channel": PLAYERS}, 422, "invalid_text", "text"),
    ({"channel": PLAYERS, "text": "hi", "preset": "thanks"}, 422, "invalid_text", "text"),
    ({"channel": PLAYERS, "preset": "free-money"}, 422, "invalid", "preset"),
    ({"channel": "everyone", "text": "hi"}, 422, "invalid", "channel"),
    ({"channel": PLAYERS, "text": 42}, 422, "invalid", "text"),
    ({"channel": PLAYERS, "text": "hi", "html": "<b>"}, 422, "invalid", "html"),
])
def test_bad_messages_are_refused_naming_the_field_and_change_nothing(api, body, status, code, field):
    game_id, tokens = _table(api)
    refused = api.call("POST", f"/v1/games/{game_id}/chat", tokens[0], json=body)
    found = error(refused, status, code)
    assert field in (found["details"].get("field") or json.dumps(found["details"].get("errors")))
    assert field in found["message"]
    assert read(api, game_id, tokens[0])["last"] == 0


def test_a_huge_or_hostile_body_is_refused_before_the_chat(api):
    game_id, tokens = _table(api)
    huge = api.call("POST", f"/v1/games/{game_id}/chat", tokens[0], json={"channel": PLAYERS, "text": "x" * 70_000})
    assert huge.status_code == 413
    lone = api.call("POST", f"/v1/games/{game_id}/chat", tokens[0], data=b'{"channel":"players","text":"\\ud800"}',
                    headers={"Content-Type": "application/json"})
    error(lone, 400, "malformed_json")
    assert read(api, game_id, tokens[0])["last"] == 0


def test_who_may_write_where(api):
    game_id, tokens = _table(api)
    error(say(api, game_id, None, "hi"), 401, "unauthorized")
    error(say(api, game_id, None, "hi", channel=SPECTATORS), 401, "unauthorized")
    error(say(api, game_id, tokens[0], "hi", channel=SPECTATORS), 403, "chat_forbidden")   # a guest's seat token
    other_game, other_tokens = _table(api)
    error(say(api, game_id, other_tokens[0], "hi"), 403, "forbidden")
    watcher, _ = api.account("watcher")
    error(say(api, game_id, watcher, "hi"), 403, "not_your_game")                        # no seat: not the players'
    spoken = say(api, game_id, watcher, "go p1!", channel=SPECTATORS)
    assert spoken.status_code == 201, spoken.json
    assert spoken.json["author"]["name"] == "watcher" and spoken.json["author"]["seat"] is None
    assert texts(read(api, game_id)) == [("watcher", "go p1!")]
    assert read(api, game_id, watcher)["writable"] == [SPECTATORS]
    assert read(api, game_id, tokens[1])["items"][0]["text"] == "go p1!"       # seats read the spectators too
    error(say(api, "0123456789abcdef", watcher, "hi", channel=SPECTATORS), 404, "not_found")


def test_an_account_holding_a_seat_talks_in_both_channels(api):
    alice, _ = api.account("alice")
    game_id = api.create()
    assert api.claim(game_id, 0, alice).status_code == 201
    api.http.post(f"/v1/games/{game_id}/seats/1", json={"name": "guest"})
    assert say(api, game_id, alice, "as my seat").json["author"]["seat"] == 0
    assert say(api, game_id, alice, "as me", channel=SPECTATORS).json["author"] == {
        "seat": None, "account": api.service.load(game_id).seats[0].account, "name": "alice", "guest": False}
    assert read(api, game_id, alice)["writable"] == [PLAYERS, SPECTATORS]


def test_a_flood_gets_429_with_retry_after_and_changes_nothing(api):
    game_id, tokens = _table(api)
    for n in range(5):
        assert say(api, game_id, tokens[0], f"m{n}").status_code == 201
    for _ in range(20):
        flood = say(api, game_id, tokens[0], "more!")
        error(flood, 429, "chat_rate_limited")
        assert 1 <= int(flood.headers["Retry-After"]) <= 10
    assert read(api, game_id, tokens[0])["last"] == 5
    assert say(api, game_id, tokens[1], "my own rate").status_code == 201        # another author's own window
    error(api.call("POST", f"/v1/games/{game_id}/chat/mutes", tokens[0], json={"target": 1}), 429, "chat_rate_limited")


def test_the_cap_stops_a_game_s_chat_growing(fake_redis):
    app = _kit.make_app(fake_redis, CHAT_MAX_ENTRIES=6, CHAT_RATE="100/10")
    api = Api(app, app.extensions["games"].jobs)
    game_id, tokens = _table(api)
    for n in range(6):
        assert say(api, game_id, tokens[n % 2], f"m{n}").status_code == 201
    error(say(api, game_id, tokens[0], "one more"), 409, "chat_full")
    error(api.call("POST", f"/v1/games/{game_id}/chat/mutes", tokens[0], json={"target": 1}), 409, "chat_full")
    assert read(api, game_id, tokens[0])["last"] == 6
    api.service.chat.remove(game_id, 2, "still removable")     # the operator's removal goes past the cap
    assert read(api, game_id, tokens[0])["items"][1]["removed"]


def test_a_seat_mutes_and_unmutes_another_for_itself_only(api):
    game_id, tokens = _table(api, players=3)
    for seat in range(3):
        say(api, game_id, tokens[seat], f"from {seat}")
    muted = api.call("POST", f"/v1/games/{game_id}/chat/mutes", tokens[1], json={"target": 0})
    assert muted.status_code == 200 and muted.json == {"game_id": game_id, "seat": 1, "muted": [0]}
    assert api.call("POST", f"/v1/games/{game_id}/chat/mutes", tokens[1], json={"target": 0}).json["muted"] == [0]
    assert texts(read(api, game_id, tokens[1])) == [("p1", "from 1"), ("p2", "from 2")]
    assert read(api, game_id, tokens[1])["muted"] == [0]
    say(api, game_id, tokens[0], "still talking")
    assert [t for _, t in texts(read(api, game_id, tokens[1], after=3))] == []
    assert len(read(api, game_id, tokens[2])["items"]) == 4                 # the others still read seat 0
    error(api.call("POST", f"/v1/games/{game_id}/chat/mutes", tokens[1], json={"target": 1}), 422, "invalid")
    error(api.call("POST", f"/v1/games/{game_id}/chat/mutes", tokens[1], json={"target": 9}), 422, "invalid")
    error(api.call("POST", f"/v1/games/{game_id}/chat/mutes", None, json={"target": 0}), 401, "unauthorized")
    unmuted = api.call("DELETE", f"/v1/games/{game_id}/chat/mutes/0", tokens[1])
    assert unmuted.status_code == 200 and unmuted.json["muted"] == []
    assert [t for _, t in texts(read(api, game_id, tokens[1]))] == ["from 0", "from 1", "from 2", "still talking"]


def test_the_operator_removes_a_message_kept_as_a_removal(api):
    game_id, tokens = _table(api)
    say(api, game_id, tokens[0], "something awful")
    say(api, game_id, tokens[1], "fine")
    before = read(api, game_id, tokens[1])
    removed = api.service.chat.remove(game_id, 1, "abuse")
    assert removed["removal"]["kind"] == "removal" and removed["removal"]["message"] == 1
    assert api.service.chat.remove(game_id, 1, "again")["removal"] is None      # once
    news = read(api, game_id, tokens[1], after=before["last"])
    assert [(i["kind"], i["message"], i["reason"]) for i in news["items"]] == [("removal", 1, "abuse")]
    fresh = read(api, game_id, tokens[1], limit=1)         # a new reader, a page before the removal
    assert fresh["items"][0]["removed"] and fresh["items"][0]["text"] is None and fresh["more"]
    assert "something awful" not in json.dumps(read(api, game_id, tokens[0]))
    from service.core.errors import NotFound

    for missing in (0, 2 + 1, 99):
        with pytest.raises(NotFound):
            api.service.chat.remove(game_id, missing)


def test_a_retry_with_its_key_says_nothing_twice(api):
    game_id, tokens = _table(api)
    first = say(api, game_id, tokens[0], "once", headers={"Idempotency-Key": "chat-key-1"})
    again = say(api, game_id, tokens[0], "once", headers={"Idempotency-Key": "chat-key-1"})
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true" and again.json == first.json
    error(say(api, game_id, tokens[0], "twice?", headers={"Idempotency-Key": "chat-key-1"}), 409, "idempotency_conflict")
    assert read(api, game_id, tokens[0])["last"] == 1


def test_the_chat_moves_to_the_archive_with_its_game(fake_redis, tmp_path):
    app = _kit.make_app(fake_redis, ARCHIVE_URL=str(tmp_path / "archive"), ARCHIVE_AFTER=0)
    api = Api(app, app.extensions["games"].jobs)
    game_id, tokens = _table(api)
    say(api, game_id, tokens[0], "<script>alert(1)</script>")
    say(api, game_id, tokens[1], preset="thanks")
    _kit.play_out(api.service, api.jobs, game_id, random.Random(5))
    say(api, game_id, tokens[0], preset="well-played")
    api.service.chat.remove(game_id, 2)
    before = read(api, game_id)
    export = api.http.get(f"/v1/games/{game_id}/export").get_data()
    assert api.service.archive_due() == {"archived": 1} and api.service.is_archived(game_id)
    assert not [k for k in fake_redis.keys("game:*") if b"chat" in k]
    fresh = _kit.make_app(fake_redis, ARCHIVE_URL=str(tmp_path / "archive")).test_client()   # nothing cached
    assert fresh.get(f"/v1/games/{game_id}/chat").json == before
    assert fresh.get(f"/v1/games/{game_id}/export").get_data() == export
    error(say(api, game_id, tokens[0], "late"), 409, "chat_closed")
    assert api.service.restore_game(game_id) == "restored"
    assert read(api, game_id) == before
