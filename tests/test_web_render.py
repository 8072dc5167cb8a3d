"""The one rendering for people (service/render): every event of every golden game put into
words (never the fallback of a bare type name), every legal action labelled, every view
drawn; the words endpoint only words what it is sent."""

import json
from pathlib import Path

import pytest

from service import render
from service.render import speculate, speculation, spekulation
from service.app import create_app

GOLDEN = Path(__file__).parent / "golden"
GAMES = sorted(p.name[:-len(".ndjson")] for p in GOLDEN.glob("*.ndjson"))


def _events(name):
    out = []
    for line in (GOLDEN / f"{name}.ndjson").read_text().splitlines():
        record = json.loads(line)
        if "body" in record:
            body = json.loads(record["body"])
            out.append({"version": body["v"], "type": body["t"], "data": body["d"], "cmd": body.get("c")})
    return out


@pytest.mark.parametrize("name", GAMES)
def test_every_event_of_a_golden_game_has_words(name):
    observed = json.loads((GOLDEN / f"{name}.observed.json").read_text())
    seats = next(iter(observed["views"].values()))["0"]["seats"]
    for event in _events(name):
        text = render.describe_event(observed["type"], event, seats, 0)
        assert text and text[-1] in ".)", (event["type"], text)
        assert render.words(observed["type"]).describe(event["type"], event["data"], str) or "." in event["type"], \
            f"no words for {event['type']}"
        # redacted forms (what other seats see) have words too
        redacted = {**event, "data": {k: v for k, v in event["data"].items()
                                      if k not in ("deck", "cards", "card", "order", "objective", "event_deck")}}
        assert render.describe_event(observed["type"], redacted, seats, 1)


@pytest.mark.parametrize("name", GAMES)
def test_every_view_is_drawn_and_every_legal_action_labelled(name):
    observed = json.loads((GOLDEN / f"{name}.observed.json").read_text())
    for views in observed["views"].values():
        for view in views.values():
            text = render.draw_view(view)
            assert observed["type"] in text
            for action in view.get("legal_actions") or []:
                label = render.describe_action(observed["type"], action)
                assert label and label != action["type"] or action["type"] == "pass", (action, label)
                assert "{" not in label, label


def test_cards_by_name():
    assert speculation.name("QD") == "the Queen of Diamonds"
    assert speculation.short("TS") == "10♠"
    assert speculation.code(0) == "2C"  # the rules' integer codes in a full state
    assert speculate.card("stores:dividend") == "Stores dividend"
    assert speculate.objective("L2:stores=200,mines=150,properties=100") == \
        "Level 2: Stores 200, Mines 150, Properties 100"
    assert spekulation.name("dark-blue") == "Dark blue"
    assert render.describe_action("big-shot", {"type": "bid", "amount": {"min": 3, "max": 9}}) == "Bid 3–9"


def test_words_endpoint_words_the_servers_own_record():
    """The body names a game; the words are of the server's record as that caller may see it
    (tests/test_words_bounded.py: every number checked, every answer bounded)."""
    app = create_app({"REDIS_URL": None, "RATE_LIMIT": None})
    http = app.test_client()
    core = app.extensions["games"]
    game_id = core.create("speculation", {}, [{}, {"bot": "random"}, {"bot": "random"}]).game_id
    token = core.claim(game_id, 0, "<b>eve</b>")[1]
    answer = http.post("/web/api/words", json={"game_id": game_id, "after": 0, "actions": True},
                       headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200
    assert answer.json["events"][1] == {"version": 2, "type": "seat.claimed", "text": "<b>eve</b> takes seat 1."}
    assert answer.json["seat_labels"][:2] == ["<b>eve</b> (you)", "Bot 2"]  # text, never HTML; seats counted from 1
    templates = http.post("/web/api/words", json={"type": "speculation",
                                                  "actions": [{"type": "bid", "amount": {"min": 5, "max": 30}}]})
    assert templates.json == {"actions": ["Bid 5–30 chips"]}
    assert http.post("/web/api/words", json={"type": "chess"}).status_code == 422
    assert http.get("/web/api/glossary/spekulation").json["companies"]["red"]["name"] == "Red"
    for page in ("/web/", "/web/games/abc", "/web/games/abc/replay"):
        response = http.get(page)
        assert response.status_code == 200 and b"<main" in response.data
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    assert http.get("/").status_code == 302
    # no asset is fetched from anywhere but the service
    static = Path(render.__file__).parent.parent / "web"
    for path in static.rglob("*"):
        if path.suffix in (".html", ".js", ".css"):
            assert "http://" not in path.read_text() and "https://" not in path.read_text(), path


def test_the_words_endpoint_takes_the_services_own_integers_back():
    """A legal action's template may hold speculation's uncapped bid limit (2^60): the words
    endpoint labels it, where the API's own bodies keep the strict limit on integers; a
    client's full_state is never drawn (the server draws its own, tests/test_words_bounded.py)."""
    app = create_app({"REDIS_URL": None, "RATE_LIMIT": None})
    http = app.test_client()
    big = 1 << 60
    echoed = http.post("/web/api/words", json={"type": "speculation",
                                               "actions": [{"type": "bid", "amount": {"min": 1, "max": big}}]})
    assert echoed.status_code == 200 and echoed.json["actions"] == [f"Bid 1–{big} chips"], echoed.json
    assert http.post("/web/api/words", json={"type": "speculation",
                                             "full_state": {"cap": big, "hands": []}}).status_code == 422
    refused = http.post("/v1/games", json={"type": "speculation", "options": {"ante": big}, "seats": [{}] * 3})
    assert refused.status_code == 400 and refused.json["error"]["code"] == "malformed_json"
    too_long = http.post("/web/api/words", data=json.dumps({"type": "speculation"})[:-1] + ', "x": ' + "9" * 21 + "}",
                         content_type="application/json")
    assert too_long.status_code == 400
