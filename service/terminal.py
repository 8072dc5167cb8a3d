"""The terminal for people: `speculation view`, `replay` drawn as text, and `play TYPE`
against bots in process (the embedded store and worker, as `demo` does), or on a server as
the signed-in account (`play --api`: play_online). At a move prompt `L` leaves the game
(asked first: confirm_leave): a bot takes the seat over (POST /v1/games/{id}/leave).

On a server every accepted command's signed receipt (docs/audit.md) is kept in
$XDG_CONFIG_HOME/speculation/receipts.ndjson, one a line: `speculation verify BUNDLE --kept`
checks the game's log against them (a receipt the log does not hold convicts the operator).
A game played in process is not kept: its service and its log end with the command."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from service import render


RECEIPT_FORMAT = "speculation-receipt/1"
RECEIPTS_FILE = "receipts.ndjson"


def kept_receipts_path() -> Path:
    from service.client_config import config_dir

    return config_dir() / RECEIPTS_FILE


def keep_receipt(answer) -> None:
    """Append the answer's signed receipt, when it carries one, to the kept receipts (the
    folder 0700 as the credentials' is, the file 0600): one JSON line, written whole."""
    receipt = answer.get("receipt") if isinstance(answer, dict) else None
    if not isinstance(receipt, dict) or receipt.get("format") != RECEIPT_FORMAT:
        return
    path = kept_receipts_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    line = (json.dumps(receipt, sort_keys=True, separators=(",", ":")) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.write(fd, line)   # one write of a whole line under O_APPEND: never two receipts interleaved
    finally:
        os.close(fd)


def kept_receipts(game_id: str | None = None) -> list[dict]:
    """The receipts kept (of one game, when given); a line that is not a receipt is skipped."""
    try:
        with open(kept_receipts_path(), encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        try:
            receipt = json.loads(line)
        except ValueError:
            continue
        if isinstance(receipt, dict) and receipt.get("format") == RECEIPT_FORMAT and \
                (game_id is None or receipt.get("game") == game_id):
            out.append(receipt)
    return out


def clock_line(view: dict) -> str:
    """A timed game's deadlines as the view gave them, counted from its `server_time` (the
    server's clock, never this machine's): "clock: you 1:45 · bob 0:30 left" ("" without one)."""
    clock = view.get("clock") or {}
    deadlines, now = clock.get("deadlines") or [], view.get("server_time")
    if not deadlines or now is None:
        return ""

    def left(at: int) -> str:
        secs = max(0, -(-(at - now) // 1000))   # whole seconds, rounded up
        return f"{secs // 3600}:{secs // 60 % 60:02d}:{secs % 60:02d}" if secs >= 3600 else f"{secs // 60}:{secs % 60:02d}"

    parts = [("you" if d["seat"] == view.get("seat") else render.seat_label(view.get("seats") or [], d["seat"]))
             + " " + left(d["at"]) for d in deadlines]
    return f"clock: {' · '.join(parts)} left (then the random bot plays the move)"


ABANDONED_WORDS = "the game was abandoned: nobody moved for too long while a person was to act; it is over, unscored"


def print_view(view: dict, events=None) -> None:
    print(render.draw_view(view))
    if clock_line(view):
        print(clock_line(view))
    if view.get("status") == "abandoned":
        print(ABANDONED_WORDS)
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


# What _choose returns when the person chose to leave the game (and confirmed it).
LEAVE = {"leave": True}


def confirm_leave(level: str, read=input) -> bool:
    """Ask before leaving: what it means, and yes typed out (anything else stays)."""
    print(f"Leave this game? A {level} bot takes your seat over and plays it to the end; "
          "you cannot come back to it.")
    if read("Type yes to leave, anything else to stay: ").strip().lower() in ("yes", "y"):
        return True
    print("  you stay")
    return False


def _choose(legal: list, game_type: str, read=input, leave_level: str | None = None, chat=None) -> dict:
    """The action the person picks among `legal`; with `leave_level`, `L` leaves the game
    instead (asked first): the answer is then LEAVE. With `chat` (terminal_chat.ChatLines),
    `C` shows the chat's new lines and sends a preset message."""
    labels = [render.describe_action(game_type, a) for a in legal]
    print("\nYour move:")
    for i, label in enumerate(labels, 1):
        print(f"  {i:>2}. {label}")
    if leave_level:
        print(f"   L. leave the game (a {leave_level} bot plays your seat)")
    if chat is not None:
        print("   C. chat: the new lines, and say a preset")
    while True:
        answer = read(f"Choose 1-{len(legal)}: ").strip()
        if chat is not None and answer.lower() in ("c", "chat"):
            chat.menu(read)
            continue
        if leave_level and answer.lower() in ("l", "leave"):
            if confirm_leave(leave_level, read):
                return LEAVE
            continue
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
        leave_level = created.json["platform_options"].get("leave_level") or "heuristic"
        print(f"{game_type}: you ({name}) at seat 1 against {players - 1} {level} bots; game {game_id}")
        seen, moves, me = 0, 0, 0
        while True:
            if me is None:   # left: the spectator's view, the game played to its end by the bots
                summary = http.get(f"/v1/games/{game_id}").json
                view = {**summary["view"], "seats": summary["seats"], "legal_actions": []}
            else:
                view = http.get(f"/v1/games/{game_id}/view", headers=auth).json
            fresh = http.get(f"/v1/games/{game_id}/events?after={seen}", headers=auth).json["events"]
            for event in fresh:
                print(f"  #{event['version']:<4} {render.describe_event(game_type, event, view['seats'], me)}")
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
            action = _choose(view["legal_actions"], game_type, read, leave_level)
            if action is LEAVE:
                left = http.post(f"/v1/games/{game_id}/leave", json={}, headers=auth).json
                print(f"you left: a {left['level']} bot plays seat 1 from now on; watching the game to its end")
                me, auth = None, {}
                continue
            moves += 1
            answer = http.post(f"/v1/games/{game_id}/actions", json={"action": action},
                               headers={**auth, "Idempotency-Key": f"terminal-{moves}"})
            if answer.status_code != 200:
                print(f"  not accepted: {answer.json['error']['message']}")
        while http.get(f"/v1/games/{game_id}").json["status"] != "scored":
            time.sleep(0.05)
        summary = http.get(f"/v1/games/{game_id}").json
        print("\n" + render.result_words(summary["result"], summary["seats"], me))
        report = http.get(f"/v1/games/{game_id}/verify").json
        print("verify: " + ("OK" if report["ok"] else "FAILED") + f" ({report['events_checked']} events checked)")
        print(f"seed: {summary['seed']} (--seed plays this deal again)")
        return summary
    finally:
        worker.stop()


def play_online(http, game_id: str, seat: int | None = None, read=None) -> dict:
    """Play one seat of a game on a server, as an account (`speculation play --api`): the same
    prompts as `play`, through `http` (the command line's client: .get(path, params) -> JSON,
    .post(path, body, headers) -> (status, JSON)). `seat`: which of the account's seats, when
    it holds several. Waits for the other seats with long-polls. Returns the scored summary."""
    import uuid

    from service.terminal_chat import ChatLines

    read = read or (lambda prompt: input(prompt))
    mine = {"seat": seat} if seat is not None else {}
    chat = ChatLines(http.get, game_id, http.post, mine)
    game = http.get(f"/v1/games/{game_id}")
    game_type = game["type"]
    leave_level = (game.get("platform_options") or {}).get("leave_level") or "heuristic"
    seen, version, said_waiting = 0, None, False
    while True:
        wait = {"wait": 5, "after_version": version} if version is not None else {}   # 5 s: chat lines too
        view = http.get(f"/v1/games/{game_id}/view", {**mine, **wait})
        me = view["seat"]
        fresh = http.get(f"/v1/games/{game_id}/events", {"after": seen, **mine})["events"]
        for event in fresh:
            print(f"  #{event['version']:<4} {render.describe_event(game_type, event, view['seats'], me)}")
        seen = max([seen] + [e["version"] for e in fresh])
        chat.show()
        if view["status"] in ("ended", "scored"):
            print()
            print(render.draw_view(view))
            break
        if view["status"] == "expired":   # a challenge or rematch declined, cancelled or not taken in time
            print("\nthe game expired before every seat was taken: it never starts")
            return http.get(f"/v1/games/{game_id}")
        if view["status"] == "abandoned":
            print("\n" + ABANDONED_WORDS)
            return http.get(f"/v1/games/{game_id}")
        if not view["legal_actions"]:
            if view["status"] == "open" and not said_waiting:
                print("waiting for the other seats to be taken...")
                said_waiting = True
            version = view["version"]   # long-poll for the next version
            continue
        version = None
        print()
        print(render.draw_view(view))
        if clock_line(view):
            print(clock_line(view))
        action = _choose(view["legal_actions"], game_type, read, leave_level, chat)
        if action is LEAVE:
            return leave_online(http, game_id, mine)
        body = {"action": action, **mine}
        if view.get("decision") is not None:
            body["decision"] = view["decision"]
        status, answer = http.post(f"/v1/games/{game_id}/actions", body,
                                   {"Idempotency-Key": f"cli-{uuid.uuid4().hex}"})
        keep_receipt(answer if status == 200 else None)
        if status != 200:
            print(f"  not accepted: {answer['error']['message']}")
    summary = http.get(f"/v1/games/{game_id}")
    deadline = time.monotonic() + 120
    while summary["status"] != "scored" and time.monotonic() < deadline:
        time.sleep(0.1)
        summary = http.get(f"/v1/games/{game_id}")
    if summary.get("result"):
        print("\n" + render.result_words(summary["result"], summary["seats"], me))
    if summary["status"] == "scored":
        report = http.get(f"/v1/games/{game_id}/verify")
        print("verify: " + ("OK" if report["ok"] else "FAILED") + f" ({report['events_checked']} events checked)")
    if summary.get("seed"):
        print(f"seed: {summary['seed']}")
    return summary


def leave_online(http, game_id: str, mine: dict) -> dict:
    """Leave the game on the server (asked before: confirm_leave), keep the leave's receipt;
    the game's summary after it (the bot plays on there)."""
    import uuid

    status, answer = http.post(f"/v1/games/{game_id}/leave", dict(mine), {"Idempotency-Key": f"cli-{uuid.uuid4().hex}"})
    if status != 200:
        print(f"  not left: {answer['error']['message']}")
        return http.get(f"/v1/games/{game_id}")
    keep_receipt(answer)
    print(f"you left game {game_id}: a {answer['level']} bot plays seat {answer['seat']} to the end, and you "
          f"cannot come back to it (`speculation view {game_id} --follow` watches it)")
    return http.get(f"/v1/games/{game_id}")


def dumps(obj) -> str:
    return json.dumps(obj, indent=2, sort_keys=True)


def main_view(get, api, game_id, token, as_json, follow) -> None:
    from urllib.parse import urlencode

    from service.terminal_chat import ChatLines

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    chat = ChatLines(lambda path, params: get(api, f"{path}?{urlencode(params)}", headers=headers), game_id)
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
            chat.show()
        if not follow or view["status"] in ("scored", "abandoned", "expired"):
            return
        sys.stdout.flush()
        version = view["version"]
        while get(api, f"/v1/games/{game_id}")["version"] == version:
            if not as_json:
                chat.show()       # the chat's lines as they come, between the table's changes
            time.sleep(1.0)
        print()
