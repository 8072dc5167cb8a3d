"""A simultaneous choice is bound to its round: the seat's view names its decision (the version
at which it opened), an action that echoes it is refused with 409 once that decision is over
(a turn timeout played for the seat, the round moved on), and nothing is appended."""

import pytest

from projections.session import fold
from service.app import create_app
from service.bootstrap import Backend
from workers.memory_jobs import MemoryJobs


@pytest.fixture
def table(fake_redis):
    app = create_app({"RATE_LIMIT": None}, backend=Backend(fake_redis, fake_redis, False), jobs=MemoryJobs())
    http = app.test_client()
    game_id = http.post("/v1/games", json={"type": "spekulation", "seats": [{}] * 3}).json["game_id"]
    tokens = [http.post(f"/v1/games/{game_id}/seats/{s}", json={"name": f"p{s}"}).json["token"] for s in range(3)]
    return app, http, game_id, [{"Authorization": f"Bearer {t}"} for t in tokens]


def _view(http, game_id, auth):
    response = http.get(f"/v1/games/{game_id}/view", headers=auth)
    assert response.status_code == 200
    return response.json


def _play_until_everyone_is_to_act(http, game_id, headers):
    for n in range(400):
        view = _view(http, game_id, headers[0])
        if len(view["to_act"]) == 3:
            return view
        seat = view["to_act"][-1]
        mine = _view(http, game_id, headers[seat])
        assert http.post(f"/v1/games/{game_id}/actions", json={"action": mine["legal_actions"][0]},
                         headers={**headers[seat], "Idempotency-Key": f"p{n}"}).status_code == 200
    pytest.fail("no simultaneous choice came")


def test_a_late_action_bound_to_its_round_is_a_409_after_a_timeout_played_the_seat(table):
    app, http, game_id, headers = table
    _play_until_everyone_is_to_act(http, game_id, headers)
    late = _view(http, game_id, headers[0])
    assert late["decision"] is not None and set(late["to_act"]) == {0, 1, 2}
    assert {_view(http, game_id, h)["decision"] for h in headers} == {late["decision"]}  # one round, one decision
    service = app.extensions["games"]
    # the turn timeout plays for seat 0, then the others commit: the round is over
    service.act(game_id, 0, late["legal_actions"][-1], idempotency_key="timeout", by="timeout")
    for seat in (1, 2):
        mine = _view(http, game_id, headers[seat])
        assert mine["decision"] == late["decision"], "another seat's action reopened this seat's decision"
        assert http.post(f"/v1/games/{game_id}/actions", json={"action": mine["legal_actions"][0],
                                                                "decision": mine["decision"]},
                         headers={**headers[seat], "Idempotency-Key": "c"}).status_code == 200
    before = _view(http, game_id, headers[0])["version"]
    answer = http.post(f"/v1/games/{game_id}/actions", json={"action": late["legal_actions"][0],
                                                              "decision": late["decision"]},
                       headers={**headers[0], "Idempotency-Key": "late"})
    assert answer.status_code == 409, answer.json
    error = answer.json["error"]
    assert error["code"] == "stale_decision" and error["details"]["field"] == "decision"
    assert error["details"]["version"] == before and "decision" in error["message"]
    assert _view(http, game_id, headers[0])["version"] == before, "a refused action appended"


def test_the_bound_action_is_accepted_while_its_decision_is_open_and_retries_replay(table):
    app, http, game_id, headers = table
    view = _play_until_everyone_is_to_act(http, game_id, headers)
    mine = _view(http, game_id, headers[1])
    body = {"action": mine["legal_actions"][0], "decision": mine["decision"]}
    first = http.post(f"/v1/games/{game_id}/actions", json=body, headers={**headers[1], "Idempotency-Key": "k"})
    assert first.status_code == 200
    again = http.post(f"/v1/games/{game_id}/actions", json=body, headers={**headers[1], "Idempotency-Key": "k"})
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json["receipt"] == first.json["receipt"]
    assert _view(http, game_id, headers[1])["decision"] is None  # seat 1 committed: not to act
    for bad in (0, -1, "7", True):
        refused = http.post(f"/v1/games/{game_id}/actions", json={**body, "decision": bad},
                            headers={**headers[2], "Idempotency-Key": f"bad{bad}"})
        assert refused.status_code == 422 and "decision" in refused.json["error"]["message"]


def test_decisions_are_the_same_however_the_log_is_folded(table):
    app, http, game_id, headers = table
    _play_until_everyone_is_to_act(http, game_id, headers)
    service = app.extensions["games"]
    stored = service.store.read(game_id, 0, service.load(game_id).version)
    whole = fold(stored, game_id)
    batch_ends = [i for i in range(1, len(stored)) if stored[i].cmd is not None]
    for cut in batch_ends:
        assert fold(stored[cut:], game_id, fold(stored[:cut], game_id)).decisions == whole.decisions
    assert whole.decisions == tuple(whole.decision(s) or 0 for s in range(3))
