"""Print a markdown "example game in curl" for a game type, from a real game played in
process (embedded store and worker): `python -m docs.tools.example_curl speculation 3`.

The requests are shown as curl commands and the responses abridged; seat 0 plays the first
legal action each turn (as docs/examples/curl_game.sh does), bots hold the other seats."""

from __future__ import annotations

import json
import sys
import time


def _short(obj, width: int = 400) -> str:
    text = json.dumps(obj, separators=(", ", ": "))
    return text if len(text) <= width else text[:width] + " …"


def _fill(template: dict) -> dict:
    return {k: v["min"] if isinstance(v, dict) and set(v) == {"min", "max"} else v for k, v in template.items()}


def example(game_type: str, players: int, shown_turns: int = 3) -> str:
    from service.app import create_app
    from workers.embedded import EmbeddedWorker

    app = create_app({"REDIS_URL": None, "RATE_LIMIT": None})
    worker = EmbeddedWorker(app.extensions["games"], app.extensions["backend"].rq_client).start()
    http = app.test_client()
    out = ["```sh", "API=http://127.0.0.1:5000"]
    try:
        seats = [{}] + [{"bot": "heuristic"}] * (players - 1)
        body = {"type": game_type, "seats": seats}
        created = http.post("/v1/games", json=body).json
        gid = created["game_id"]
        out += [f"curl -s -X POST $API/v1/games -H 'Content-Type: application/json' -d '{json.dumps(body)}'",
                "# → " + _short({k: created[k] for k in ("game_id", "status", "commitment", "seats")}),
                f"GAME={gid}"]
        claimed = http.post(f"/v1/games/{gid}/seats/0", json={"name": "alice"}).json
        token = claimed["token"]
        auth = {"Authorization": f"Bearer {token}"}
        out += ["curl -s -X POST $API/v1/games/$GAME/seats/0 -H 'Content-Type: application/json' -d '{\"name\": \"alice\"}'",
                "# → " + _short({**claimed, "token": "<seat token>"}), "TOKEN=<seat token>"]
        turns = 0
        while True:
            view = http.get(f"/v1/games/{gid}/view", headers=auth).json
            if view["status"] != "active":
                break
            if 0 not in view["to_act"]:
                http.get(f"/v1/games/{gid}/view?wait=10&after_version={view['version']}", headers=auth)
                continue
            action = _fill(view["legal_actions"][0])
            turns += 1
            response = http.post(f"/v1/games/{gid}/actions", headers={**auth, "Idempotency-Key": f"move-{turns}"},
                                 json={"action": action, "expected_version": view["version"]}).json
            if turns <= shown_turns:
                out += ["", 'curl -s $API/v1/games/$GAME/view -H "Authorization: Bearer $TOKEN"',
                        "# → " + _short({k: view[k] for k in ("version", "status", "to_act", "legal_actions")}),
                        "#   state: " + _short(view["state"], 600),
                        f'curl -s -X POST $API/v1/games/$GAME/actions -H "Authorization: Bearer $TOKEN" '
                        f"-H 'Idempotency-Key: move-{turns}' -H 'Content-Type: application/json' "
                        f"-d '{json.dumps({'action': action, 'expected_version': view['version']})}'",
                        "# → " + _short({"receipt": response["receipt"], "events": [
                            {"version": e["version"], "type": e["type"], "data": e["data"]} for e in response["events"]],
                            "to_act": response["to_act"]}, 600)]
        deadline = time.monotonic() + 60
        while http.get(f"/v1/games/{gid}").json["status"] != "scored" and time.monotonic() < deadline:
            time.sleep(0.05)
        summary = http.get(f"/v1/games/{gid}").json
        verify = http.get(f"/v1/games/{gid}/verify").json
        out += ["", f"# … seat 0 keeps playing its first legal action ({turns} actions in all), the bots theirs,",
                "# until the rules end the game and the scoring job reveals the seed:",
                "curl -s $API/v1/games/$GAME",
                "# → " + _short({k: summary[k] for k in ("status", "version", "result", "seed")}),
                "curl -s $API/v1/games/$GAME/verify", "# → " + _short(verify), "```"]
    finally:
        worker.stop()
    return "\n".join(out)


if __name__ == "__main__":
    print(example(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3))
