"""Write service/contract/examples.json: request and response examples for the OpenAPI
document, taken from a real game played in process (`python -m docs.tools.gen_examples`).

A speculation game for three, every seat held by a client that posts the last of its legal
actions (the first template once, for the action example) (bound to its version and decision); the examples are what the API answered, the
tokens replaced by a placeholder. service/openapi.py puts them in the document, and a test
validates each against its operation's schema."""

from __future__ import annotations

import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "service", "contract", "examples.json")
TOKEN = "<seat token>"


def _fill(template: dict) -> dict:
    return {k: v["min"] if isinstance(v, dict) and set(v) == {"min", "max"} else v for k, v in template.items()}


def build() -> dict:
    import fakeredis

    from service.app import create_app
    from service.bootstrap import Backend
    from workers.memory_jobs import MemoryJobs

    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    jobs = MemoryJobs()
    app = create_app({"RATE_LIMIT": None}, backend=Backend(redis, redis, False), jobs=jobs)
    http = app.test_client()
    out: dict = {"listGameTypes": {"response": http.get("/v1/game-types").json}}
    body = {"type": "speculation", "options": {"deals": 1}, "seats": [{}, {}, {}]}
    created = http.post("/v1/games", json=body)
    out["createGame"] = {"request": body, "response": created.json}
    game_id = created.json["game_id"]
    tokens = []
    for seat in range(3):
        claimed = http.post(f"/v1/games/{game_id}/seats/{seat}", json={"name": ["ada", "bo", "cy"][seat]})
        tokens.append(claimed.json["token"])
        if seat == 2:
            out["claimSeat"] = {"request": {"name": "cy"}, "response": {**claimed.json, "token": TOKEN}}
    auth = [{"Authorization": f"Bearer {t}"} for t in tokens]
    posted = 0
    while True:
        view = http.get(f"/v1/games/{game_id}/view", headers=auth[0]).json
        if view["status"] != "active":
            break
        seat = view["to_act"][0]
        mine = http.get(f"/v1/games/{game_id}/view", headers=auth[seat]).json
        templates = [t for t in mine["legal_actions"] if any(isinstance(v, dict) for v in t.values())]
        example = "postAction" not in out and bool(templates)
        chosen = templates[0] if example else mine["legal_actions"][-1]
        action = {"action": _fill(chosen), "expected_version": mine["version"], "decision": mine["decision"]}
        answer = http.post(f"/v1/games/{game_id}/actions", json=action,
                           headers={**auth[seat], "Idempotency-Key": f"move-{posted}"})
        posted += 1
        if example:
            out["getView"] = {"response": mine}
            out["postAction"] = {"request": action, "response": answer.json, "errors": {}}
            # the same decision again under another key: it is over (409); a bid below 1 (422)
            stale = http.post(f"/v1/games/{game_id}/actions", json={k: v for k, v in action.items()
                                                                     if k != "expected_version"},
                              headers={**auth[seat], "Idempotency-Key": "late"})
            out["postAction"]["errors"]["409"] = stale.json
            refused = http.post(f"/v1/games/{game_id}/actions", json={"action": {"type": "bid", "amount": 0}},
                                headers={**auth[seat], "Idempotency-Key": "bid-0"})
            if refused.status_code == 422:
                out["postAction"]["errors"]["422"] = refused.json
    jobs.drain(app.extensions["games"])
    out["getGame"] = {"response": http.get(f"/v1/games/{game_id}").json}
    out["verifyGame"] = {"response": http.get(f"/v1/games/{game_id}/verify").json}
    last = out["getGame"]["response"]["version"]
    out["listEvents"] = {"response": http.get(f"/v1/games/{game_id}/events?after={last - 4}").json}
    out["listSigningKeys"] = {"response": http.get("/v1/keys").json}
    return out


def main() -> None:
    document = build()
    with open(OUT, "w") as handle:
        json.dump(document, handle, indent=1, sort_keys=True)
        handle.write("\n")


if __name__ == "__main__":
    main()
