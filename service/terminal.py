"""The terminal for people: `speculation view`, `replay` drawn as text, and `play TYPE`
against bots in process (the embedded store and worker, as `demo` does)."""

from __future__ import annotations

import json
import sys
import time

from service import render


def print_view(view: dict, events=None) -> None:
    print(render.draw_view(view))
    if events:
        print("\nLately:")
        for event in events[-8:]:
            print(f"  #{event['version']:<4} {render.describe_event(view['type'], event, view.get('seats'), view.get('seat'))}")


def print_replay(replay: dict, game: dict) -> None:
    """A replay answer (spectator view, or every seat's after the end) drawn for a person."""
    view = replay.get("spectator") or replay.get("view")
    view = {**view, "type": game["type"], "game_id": game["game_id"], "seats": game["seats"]}
    print(render.draw_view(view))
    if "full_state" in replay:
        hands = render.revealed_hands(game["type"], replay["full_state"], len(game["seats"]))
        if hands:
            print("\nEvery hand (the game has ended):")
            for hand in hands:
                owner = hand["label"] if hand["seat"] is None else \
                    f"{render.seat_label(game['seats'], hand['seat'])}'s {hand['label']}"
                print(f"  {owner}: {', '.join(hand['names']) or 'empty'}"
                      + (f" · objective {hand['objective']}" if hand.get("objective") else ""))


def _choose(legal: list, game_type: str, read=input) -> dict:
    labels = [render.describe_action(game_type, a) for a in legal]
    print("\nYour move:")
    for i, label in enumerate(labels, 1):
        print(f"  {i:>2}. {label}")
    while True:
        answer = read(f"Choose 1-{len(legal)}: ").strip()
        if not answer.isdigit() or not 1 <= int(answer) <= len(legal):
            print("  type the number of a move")
            continue
        action = dict(legal[int(answer) - 1])
        for field, value in list(action.items()):
            if render.common.is_template(value):
                while True:
                    n = read(f"  {field} ({value['min']}-{value['max']}) [{value['min']}]: ").strip() or str(value["min"])
                    if n.lstrip("-").isdigit() and value["min"] <= int(n) <= value["max"]:
                        action[field] = int(n)
                        break
                    print(f"  a whole number from {value['min']} to {value['max']}")
        return action


def play(game_type: str, players: int, level: str, name: str, options=None, read=input,
         seed: str | None = None, budget: dict | None = None) -> dict:
    """Play one game in the terminal against bots, prompting from legal_actions (`seed`: the
    game's secret, which only this in-process service may be given; `budget`: the search
    bots' budget per move, {"iterations", "time_ms"})."""
    from service.app import create_app
    from service.observability import request_scope
    from workers.embedded import EmbeddedWorker

    app = create_app({"REDIS_URL": None, "RATE_LIMIT": None, "ALLOW_SEED": seed is not None})
    worker = EmbeddedWorker(app.extensions["games"], app.extensions["backend"].rq_client,
                            request_scope=request_scope).start()
    http = app.test_client()
    try:
        seats = [{}] + [{"bot": level, **({"budget": budget} if budget else {})}] * (players - 1)
        created = http.post("/v1/games", json={"type": game_type, "options": options or {}, "seats": seats,
                                               **({"seed": seed} if seed is not None else {})})
        if created.status_code != 201:
            raise SystemExit(f"could not create the game: {created.json['error']['message']}")
        game_id = created.json["game_id"]
        claimed = http.post(f"/v1/games/{game_id}/seats/0", json={"name": name}).json
        auth = {"Authorization": f"Bearer {claimed['token']}"}
        print(f"{game_type}: you ({name}) at seat 0 against {players - 1} {level} bots; game {game_id}")
        seen, moves = 0, 0
        while True:
            view = http.get(f"/v1/games/{game_id}/view", headers=auth).json
            fresh = http.get(f"/v1/games/{game_id}/events?after={seen}", headers=auth).json["events"]
            for event in fresh:
                print(f"  #{event['version']:<4} {render.describe_event(game_type, event, view['seats'], 0)}")
            seen = max([seen] + [e["version"] for e in fresh])
            if view["status"] in ("ended", "scored"):
                print()
                print(render.draw_view(view))
                break
            if not view["legal_actions"]:
                time.sleep(0.05)
                continue
            print()
            print(render.draw_view(view))
            action = _choose(view["legal_actions"], game_type, read)
            moves += 1
            answer = http.post(f"/v1/games/{game_id}/actions", json={"action": action},
                               headers={**auth, "Idempotency-Key": f"terminal-{moves}"})
            if answer.status_code != 200:
                print(f"  not accepted: {answer.json['error']['message']}")
        while http.get(f"/v1/games/{game_id}").json["status"] != "scored":
            time.sleep(0.05)
        summary = http.get(f"/v1/games/{game_id}").json
        print("\n" + render.result_words(summary["result"], summary["seats"], 0))
        report = http.get(f"/v1/games/{game_id}/verify").json
        print("verify: " + ("OK" if report["ok"] else "FAILED") + f" ({report['events_checked']} events checked)")
        print(f"seed: {summary['seed']} (--seed plays this deal again)")
        return summary
    finally:
        worker.stop()


def dumps(obj) -> str:
    return json.dumps(obj, indent=2, sort_keys=True)


def main_view(get, api, game_id, token, as_json, follow) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    while True:
        if token:
            view = get(api, f"/v1/games/{game_id}/view", headers=headers)
        else:
            summary = get(api, f"/v1/games/{game_id}")
            view = {**summary["view"], "seats": summary["seats"]}
        if as_json:
            print(dumps(view))
        else:
            events = get(api, f"/v1/games/{game_id}/events?after={max(0, view['version'] - 8)}", headers=headers)["events"]
            print_view(view, events)
        if not follow or view["status"] == "scored":
            return
        sys.stdout.flush()
        version = view["version"]
        while get(api, f"/v1/games/{game_id}")["version"] == version:
            time.sleep(1.0)
        print()
