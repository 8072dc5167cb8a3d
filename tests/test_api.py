"""Every endpoint and every documented error, through the Flask test client, on fakeredis and
on a real Redis."""

import json
import random

import pytest

from projections.verify import verify_log
from service.app import create_app
from service.bootstrap import Backend
from workers.memory_jobs import MemoryJobs

SEED = "cd" * 32


class Client:
    def __init__(self, app, jobs):
        self.app, self.jobs, self.http = app, jobs, app.test_client()
        self.service = app.extensions["games"]

    def create(self, type_="secret-duel", seats=2, **body):
        body = {"type": type_, "seats": [{}] * seats if isinstance(seats, int) else seats, "seed": SEED, **body}
        response = self.http.post("/v1/games", json=body)
        assert response.status_code == 201, response.json
        return response.json

    def claim_all(self, game):
        return [self.http.post(f"/v1/games/{game['game_id']}/seats/{s}", json={"name": f"p{s}"}).json["token"]
                for s, seat in enumerate(game["seats"]) if seat["kind"] == "open"]

    def act(self, game_id, token, action, key, **body):
        return self.http.post(f"/v1/games/{game_id}/actions", json={"action": action, **body},
                              headers={"Authorization": f"Bearer {token}", "Idempotency-Key": key})

    def view(self, game_id, token, **query):
        return self.http.get(f"/v1/games/{game_id}/view", headers={"Authorization": f"Bearer {token}"},
                             query_string=query)

    def play_out(self, game_id, tokens, rng, max_actions=20000):
        """A generic client: reads views, picks among legal_actions, fills templates."""
        for n in range(max_actions):
            views = [self.view(game_id, t).json for t in tokens]
            if views[0]["status"] != "active":
                self.jobs.drain(self.service)
                return views[0]
            seat = rng.choice(views[0]["to_act"])
            template = rng.choice(views[seat]["legal_actions"])
            action = {k: rng.randint(v["min"], v["max"]) if isinstance(v, dict) and set(v) == {"min", "max"}
                      else v for k, v in template.items()}
            response = self.act(game_id, tokens[seat], action, f"k{n}")
            assert response.status_code == 200, response.json
        raise AssertionError("the game did not end")


@pytest.fixture
def api(redis_client):
    jobs = MemoryJobs()
    app = create_app({"ALLOW_SEED": True, "RATE_LIMIT": None, "STREAM_KEEPALIVE": 0.05},
                     backend=Backend(redis_client, redis_client, False), jobs=jobs)
    return Client(app, jobs)


def error_of(response, status, code=None):
    assert response.status_code == status, response.json
    body = response.json
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    if code:
        assert body["error"]["code"] == code, body
    return body["error"]


# --- discovery ------------------------------------------------------------------------------
def test_game_types_list_every_game_with_options(api):
    types = {t["name"]: t for t in api.http.get("/v1/game-types").json["game_types"]}
    assert {"speculation", "secret-duel"} <= set(types)
    spec = types["speculation"]
    assert (spec["min_players"], spec["max_players"]) == (3, 8)
    assert "dead_hand" in spec["options"] and spec["options"]["dead_hand"]["default"] is False


def test_openapi_describes_each_games_actions(api):
    spec = api.http.get("/openapi.json").json
    assert spec["openapi"].startswith("3.")
    schemas = spec["components"]["schemas"]
    assert schemas["ActionRequest"]["properties"]["action"]["$ref"] == "#/components/schemas/Action"
    mapping = schemas["Action"]["discriminator"]["mapping"]
    assert {"reveal", "bid", "pass", "buy", "place"} <= set(mapping)
    for ref in mapping.values():
        branch = schemas[ref.rsplit("/", 1)[1]]
        for leaf in [schemas[b["$ref"].rsplit("/", 1)[1]] for b in branch["oneOf"]] if "oneOf" in branch else [branch]:
            assert leaf["additionalProperties"] is False and "type" in leaf["required"]
    assert api.http.get("/docs").status_code == 200


# --- lobby and seats ------------------------------------------------------------------------
def test_create_claim_start_and_lobby(api):
    game = api.create(seats=2)
    assert game["status"] == "open" and len(game["commitment"]) == 64 and "seed" not in game
    lobby = api.http.get("/v1/games", query_string={"type": "secret-duel", "status": "open"}).json
    assert game["game_id"] in [g["game_id"] for g in lobby["games"]]
    tokens = api.claim_all(game)
    summary = api.http.get(f"/v1/games/{game['game_id']}").json
    assert summary["status"] == "active" and summary["view"]["seat"] is None
    active = api.http.get("/v1/games", query_string={"status": "active"}).json
    assert game["game_id"] in [g["game_id"] for g in active["games"]]
    assert api.service.authenticate(game["game_id"], tokens[0]) == 0
    # Tokens are stored only as hashes.
    meta = api.service.store.redis.hgetall(f"game:{{g:{game['game_id']}}}:meta")
    assert not any(tokens[0].encode() in k or tokens[0].encode() in v for k, v in meta.items())


def test_create_errors(api):
    error_of(api.http.post("/v1/games", json={"type": "chess", "seats": [{}, {}]}), 422, "unknown_game_type")
    error_of(api.http.post("/v1/games", json={"type": "speculation", "seats": [{}]}), 422)
    e = error_of(api.http.post("/v1/games", json={"type": "speculation", "seats": [{}] * 3,
                                                  "options": {"hand_size": 9}}), 422)
    assert e["message"].startswith("options.hand_size: Must be one of")
    e = error_of(api.http.post("/v1/games", json={"type": "speculation", "seats": [{}] * 3, "colour": 1}), 422)
    assert "colour" in e["message"]
    e = error_of(api.http.post("/v1/games", json={"type": 3, "seats": [{}] * 3}), 422)
    assert "type" in e["message"]
    error_of(api.http.post("/v1/games", data="{", content_type="application/json"), 400, "malformed_json")
    error_of(api.http.post("/v1/games", json=[1, 2]), 400, "malformed_json")
    error_of(api.http.post("/v1/games", json={"type": "speculation", "seats": [{"bot": "genius"}] * 3}), 422)


def test_seed_is_refused_outside_test_configuration(redis_client):
    app = create_app({"RATE_LIMIT": None}, backend=Backend(redis_client, redis_client, False), jobs=MemoryJobs())
    response = app.test_client().post("/v1/games", json={"type": "secret-duel", "seats": [{}, {}], "seed": SEED})
    assert error_of(response, 422, "seed_not_allowed")["details"]["field"] == "seed"


def test_claim_errors(api):
    game = api.create(seats=2)
    gid = game["game_id"]
    api.http.post(f"/v1/games/{gid}/seats/0", json={"name": "a"})
    error_of(api.http.post(f"/v1/games/{gid}/seats/0", json={"name": "b"}), 409, "seat_taken")
    error_of(api.http.post(f"/v1/games/{gid}/seats/7", json={"name": "b"}), 404)
    error_of(api.http.post(f"/v1/games/{gid}/seats/1", json={}), 422)
    error_of(api.http.post("/v1/games/nope/seats/0", json={"name": "b"}), 404)


# --- play -----------------------------------------------------------------------------------
def test_view_and_action_with_receipt(api):
    game = api.create(seats=2)
    tokens = api.claim_all(game)
    gid = game["game_id"]
    view = api.view(gid, tokens[0]).json
    assert view["to_act"] == [0, 1] and view["legal_actions"] == [{"type": "bet", "amount": {"min": 0, "max": 3}}]
    response = api.act(gid, tokens[0], {"type": "bet", "amount": 2}, "k1", expected_version=view["version"])
    assert response.status_code == 200
    receipt = response.json["receipt"]
    assert receipt["version"] == view["version"] + 1
    assert response.json["events"][0]["hash"] == receipt["head"]
    assert response.headers["Idempotent-Replayed"] == "false"
    again = api.act(gid, tokens[0], {"type": "bet", "amount": 2}, "k1", expected_version=view["version"])
    assert again.json == response.json and again.headers["Idempotent-Replayed"] == "true"
    assert api.view(gid, tokens[0]).json["version"] == receipt["version"]
    api.act(gid, tokens[1], {"type": "bet", "amount": 0}, "k2")  # the game moves on
    later = api.act(gid, tokens[0], {"type": "bet", "amount": 2}, "k1", expected_version=view["version"])
    assert later.json == response.json, "a retry gets the original response, not today's state"


def test_bad_actions_get_the_documented_error_and_append_nothing(api):
    game = api.create(seats=2)
    tokens = api.claim_all(game)
    other = api.claim_all(api.create(seats=2))
    gid = game["game_id"]
    version = api.view(gid, tokens[0]).json["version"]
    post = api.http.post
    auth = {"Authorization": f"Bearer {tokens[0]}", "Idempotency-Key": "x"}
    cases = [
        (post(f"/v1/games/{gid}/actions", data="{no", content_type="application/json", headers=auth), 400, "malformed_json"),
        (api.act(gid, tokens[0], {"type": "bet", "amount": 1}, "u", extra=1), 422, "invalid"),
        (api.act(gid, tokens[0], {"type": "bet", "amount": "two"}, "w"), 422, None),
        (api.act(gid, tokens[0], {"type": "bet", "amount": 1}, "v", expected_version="3"), 422, "invalid"),
        (api.act(gid, tokens[0], {"type": "fold"}, "f"), 422, None),
        (api.act(gid, tokens[0], {"type": "bet", "amount": 1}, "s", expected_version=version - 1), 409, "version_conflict"),
        (post(f"/v1/games/{gid}/actions", json={"action": {"type": "bet", "amount": 1}},
              headers={"Idempotency-Key": "n"}), 401, "unauthorized"),
        (api.act(gid, "forged-token", {"type": "bet", "amount": 1}, "g"), 401, "unauthorized"),
        (api.act(gid, other[0], {"type": "bet", "amount": 1}, "o"), 403, "forbidden"),
        (post(f"/v1/games/{gid}/actions", json={"action": {"type": "bet", "amount": 1}},
              headers={"Authorization": f"Bearer {tokens[0]}"}), 422, "invalid"),
        (post(f"/v1/games/{gid}/actions", data=json.dumps({"action": {"type": "bet", "pad": "x" * 70000}}),
              content_type="application/json", headers=auth), 413, "too_large"),
    ]
    for response, status, code in cases:
        error_of(response, status, code)
    assert api.view(gid, tokens[0]).json["version"] == version
    # Out of turn: seat 0 has bet; betting again is not legal now.
    api.act(gid, tokens[0], {"type": "bet", "amount": 1}, "ok")
    e = error_of(api.act(gid, tokens[0], {"type": "bet", "amount": 1}, "again"), 422)
    assert "already" in e["message"]
    conflict = error_of(api.act(gid, tokens[0], {"type": "bet", "amount": 3}, "ok"), 409, "idempotency_conflict")
    assert conflict["details"]["version"] == version + 1


def test_unknown_route_and_method_use_the_envelope(api):
    error_of(api.http.get("/v1/nothing"), 404, "not_found")
    error_of(api.http.delete("/v1/games"), 405, "method_not_allowed")
    error_of(api.http.get("/v1/games/none/view", headers={"Authorization": "Bearer x"}), 404)


def test_long_poll_returns_when_the_version_passes(api):
    game = api.create(seats=2)
    tokens = api.claim_all(game)
    gid = game["game_id"]
    version = api.view(gid, tokens[0]).json["version"]
    waited = api.view(gid, tokens[0], wait=0.2, after_version=version).json
    assert waited["version"] == version
    api.act(gid, tokens[1], {"type": "bet", "amount": 0}, "b")
    assert api.view(gid, tokens[0], wait=5, after_version=version).json["version"] == version + 1


# --- history --------------------------------------------------------------------------------
def test_events_json_sse_ndjson_and_tickets(api):
    game = api.create(seats=2)
    tokens = api.claim_all(game)
    gid = game["game_id"]
    api.act(gid, tokens[0], {"type": "bet", "amount": 3}, "a")
    plain = api.http.get(f"/v1/games/{gid}/events", query_string={"after": 2}).json
    assert plain["events"][0]["version"] == 3 and plain["to_act"] == [1]
    bets = [e for e in plain["events"] if e["type"] == "bet"]
    assert bets and "amount" not in bets[0]["data"] and "action" not in bets[0]["cmd"]
    sse = api.http.get(f"/v1/games/{gid}/events", headers={"Accept": "text/event-stream", "Last-Event-ID": "4"},
                       query_string={"follow": 0.1})
    text = sse.get_data(as_text=True)
    ids = [int(line[4:]) for line in text.splitlines() if line.startswith("id: ")]
    assert ids and ids[0] == 5 and ": keep-alive" in text
    bad = api.http.get(f"/v1/games/{gid}/events", headers={"Accept": "text/event-stream", "Last-Event-ID": "4x"})
    assert bad.status_code == 422 and bad.json["error"]["details"]["field"] == "Last-Event-ID", bad.json
    nd = api.http.get(f"/v1/games/{gid}/events", headers={"Accept": "application/x-ndjson"},
                      query_string={"follow": 0})
    lines = [json.loads(line) for line in nd.get_data(as_text=True).splitlines()]
    assert lines[0]["version"] == 1 and all("to_act" in m for m in lines if "event" in m)
    ticket = api.http.post(f"/v1/games/{gid}/stream-tickets", headers={"Authorization": f"Bearer {tokens[0]}"}).json
    mine = api.http.get(f"/v1/games/{gid}/events", query_string={"ticket": ticket["ticket"]}).json
    assert any(e["type"] == "bet" and e["data"].get("amount") == 3 for e in mine["events"])
    error_of(api.http.get(f"/v1/games/{gid}/events", query_string={"ticket": "bogus"}), 401)


def test_finished_game_replay_ledger_verify_export(api, tmp_path):
    game = api.create(seats=3, options={"rounds": 2})
    tokens = api.claim_all(game)
    gid = game["game_id"]
    final = api.play_out(gid, tokens, random.Random(5))
    summary = api.http.get(f"/v1/games/{gid}").json
    assert summary["status"] == "scored" and summary["seed"] == SEED and final["status"] == "ended"
    version = summary["version"]
    for at in (1, version // 2, version):
        replay = api.http.get(f"/v1/games/{gid}/replay", query_string={"at": at}).json
        assert replay["version"] == at and len(replay["seats"]) == 3
    assert replay["full_state"]["cards"] and replay["full_state"]["chips"] == summary["result"]["scores"]
    error_of(api.http.get(f"/v1/games/{gid}/replay", query_string={"at": version + 1}), 422)
    ledger = api.http.get(f"/v1/games/{gid}/ledger").json
    chips = {a: b.get("chips", 0) for a, b in ledger["balances"].items()}
    assert sum(chips.values()) == 0
    assert [chips[f"seat:{s}"] for s in range(3)] == summary["result"]["scores"]
    assert api.http.get(f"/v1/games/{gid}/verify").json["ok"] is True
    export = api.http.get(f"/v1/games/{gid}/export")
    assert export.mimetype == "application/x-ndjson"
    path = tmp_path / "game.ndjson"
    path.write_text(export.get_data(as_text=True))
    from service.cli import verify_file

    assert verify_file(str(path))["ok"]
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[3]["body"] = rows[3]["body"].replace('"at":', '"at":1', 1)
    report = verify_log([(r["body"], r["hash"]) for r in rows[1:]], SEED)
    assert not report.ok and report.first_divergence["version"] == 3
    board = api.http.get("/v1/leaderboards/secret-duel").json
    assert board["rows"] == [] and board["total"] == 0      # an unrated game moves no rating
    error_of(api.http.get("/v1/leaderboards/chess"), 404)


def test_live_export_and_replay_are_redacted(api):
    game = api.create(seats=2)
    tokens = api.claim_all(game)
    gid = game["game_id"]
    cards = api.service.load(gid).state.cards
    export = api.http.get(f"/v1/games/{gid}/export").get_data(as_text=True)
    header = json.loads(export.splitlines()[0])
    assert header["complete"] is False and "seed" not in header and '"cards"' not in export
    replay = api.http.get(f"/v1/games/{gid}/replay", query_string={"at": 6},
                          headers={"Authorization": f"Bearer {tokens[1]}"}).json
    assert replay["view"]["state"]["my_card"] == cards[1]
    assert "seats" not in replay


def test_verify_with_receipts(api):
    game = api.create(seats=2)
    tokens = api.claim_all(game)
    gid = game["game_id"]
    receipt = api.act(gid, tokens[0], {"type": "bet", "amount": 1}, "r1").json["receipt"]
    good = api.http.get(f"/v1/games/{gid}/verify", query_string={"receipts": f"{receipt['version']}:{receipt['head']}"})
    assert good.json["ok"] is True
    forged = api.http.get(f"/v1/games/{gid}/verify", query_string={"receipts": f"{receipt['version']}:{'0' * 64}"}).json
    assert forged["ok"] is False and forged["first_divergence"]["check"] == "receipt"
    error_of(api.http.get(f"/v1/games/{gid}/verify", query_string={"receipts": "x:y"}), 422)
