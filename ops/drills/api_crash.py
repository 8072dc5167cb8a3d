"""API crash drill: the API process (gunicorn, its workers with it) killed with kill -9 in
the middle of a POST /actions, then restarted; the client retries with its Idempotency-Key.

The served app is wrapped by a pause (this module's `paused_app`, an env var DRILL_PAUSE):
`before:S` holds a POST /actions S seconds before the app handles it (nothing appended
yet), `after:S` holds the response S seconds after the app appended the action. The drill
kills the server inside the pause, alternating the two, restarts it without the pause and
retries with the same key and body. Each action must then be in the log exactly once (the
"after" retries answer Idempotent-Replayed: true, the "before" ones false), its receipt
matching the stored head.

    python -m ops.drills.api_crash --size 4        # kills
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import urllib.error
import urllib.request

from projections.templates import fill_template

from . import _kit

PAUSE_ENV = "DRILL_PAUSE"
MARK = "DRILL-PAUSED"


def paused_app():
    """The service's app behind the drill's pause (gunicorn: 'ops.drills.api_crash:paused_app()')."""
    from service.app import create_app

    app = create_app()
    mode, _, seconds = (os.environ.get(PAUSE_ENV) or "").partition(":")
    if not mode:
        return app
    inner = app.wsgi_app
    pause = float(seconds or 5)

    def wsgi(environ, start_response):
        is_action = environ.get("REQUEST_METHOD") == "POST" and environ.get("PATH_INFO", "").endswith("/actions")
        key = environ.get("HTTP_IDEMPOTENCY_KEY", "")
        if is_action and mode == "before":
            print(f"{MARK} before {key}", flush=True)
            time.sleep(pause)
        body = inner(environ, start_response)
        if is_action and mode == "after":
            body = list(body)   # the app has appended and answered; hold the answer
            print(f"{MARK} after {key}", flush=True)
            time.sleep(pause)
        return body

    app.wsgi_app = wsgi
    return app


def start_server(redis_url: str, port: int, pause: str = "") -> _kit.ChildProcess:
    gunicorn = os.path.join(os.path.dirname(sys.executable), "gunicorn")
    env = {"REDIS_URL": redis_url, "SPECULATION_ALLOW_SEED": "1", PAUSE_ENV: pause}
    server = _kit.ChildProcess([gunicorn, "-b", f"127.0.0.1:{port}", "-w", "2", "--threads", "4",
                                "--graceful-timeout", "1", "ops.drills.api_crash:paused_app()"], env, name="api")
    base = f"http://127.0.0.1:{port}"

    def up():
        try:
            with urllib.request.urlopen(base + "/v1/game-types", timeout=1):
                return True
        except Exception:
            return False

    if not _kit.wait_until(up, 30, every=0.1):
        server.kill()
        raise AssertionError("the API did not start: " + server.output()[-2000:])
    return server


def call(base: str, method: str, path: str, body=None, headers=None, timeout: float = 30):
    """(status, headers, json) — raises on a broken connection."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), json.loads(response.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), json.loads(err.read() or b"null")


def run(size: int = 4, seed: int = 1, pause: float = 4.0, games=None) -> dict:
    rng = random.Random(seed)
    from ops.drills.redis_server import free_port

    names = games or _kit.service_games()
    results = []
    with _kit.private_redis(durable=True) as redis_server:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        client = _kit.redis_client(redis_server.url)
        reader = _kit.make_service(client)
        for k in range(size):
            mode = ("after", "before")[k % 2]
            name = names[k % len(names)]
            server = start_server(redis_server.url, port, f"{mode}:{pause}")
            try:
                created = None
                for _ in range(50):
                    status, _, created = call(base, "POST", "/v1/games", {
                        "type": name, "options": _kit.short_options(name),
                        "seats": [{}] * _kit.get_game(name).MIN_PLAYERS, "seed": f"{rng.getrandbits(256):064x}"})
                    tokens = [call(base, "POST", f"/v1/games/{created['game_id']}/seats/{s}", {"name": f"p{s}"})[2]["token"]
                              for s in range(len(created["seats"]))]
                    summary = call(base, "GET", f"/v1/games/{created['game_id']}")[2]
                    if summary["to_act"]:
                        break
                game_id = created["game_id"]
                seat = summary["to_act"][0]
                view = call(base, "GET", f"/v1/games/{game_id}/view", headers=_kit.auth(tokens[seat]))[2]
                body = {"action": fill_template(rng.choice(view["legal_actions"]), rng), "expected_version": view["version"]}
                key = f"crash-{k}"
                headers = _kit.auth(tokens[seat], key)
                import threading

                outcome = {}

                def first_try():
                    try:
                        outcome["first"] = call(base, "POST", f"/v1/games/{game_id}/actions", body, headers)[0]
                    except Exception as err:   # the connection dies with the server
                        outcome["first"] = type(err).__name__

                thread = threading.Thread(target=first_try)
                thread.start()
                if not _kit.wait_until(lambda: f"{MARK} {mode} {key}" in server.output(), 20, every=0.02):
                    raise AssertionError("the request never reached the pause: " + server.output()[-2000:])
                server.kill()
                thread.join(30)
            finally:
                server.stop()
            appended_before_retry = len(_kit.command_events(reader.store.read_raw(game_id)))
            server = start_server(redis_server.url, port, "")
            try:
                status, response_headers, answer = call(base, "POST", f"/v1/games/{game_id}/actions", body, headers)
            finally:
                server.stop()
            stored = reader.store.read_raw(game_id)
            commands = _kit.command_events(stored)
            receipt = answer.get("receipt", {}) if isinstance(answer, dict) else {}
            replayed = response_headers.get("Idempotent-Replayed")
            ok = (status == 200 and len(commands) == 1 and commands[0]["c"]["action"] == body["action"]
                  and receipt.get("first_version") == commands[0]["v"]
                  and stored[receipt["version"] - 1][1] == receipt["head"]
                  and replayed == ("true" if mode == "after" else "false")
                  and appended_before_retry == (1 if mode == "after" else 0))
            results.append({"mode": mode, "type": name, "first_attempt": outcome.get("first"),
                            "appended_before_retry": appended_before_retry, "retry_status": status,
                            "retry_replayed": replayed, "commands_stored": len(commands), "ok": ok})
    completed_once = sum(r["ok"] for r in results)
    return {"kills": len(results), "retried": len(results), "completed_exactly_once": completed_once,
            "killed_after_append": sum(r["mode"] == "after" for r in results),
            "killed_before_append": sum(r["mode"] == "before" for r in results),
            "details": results, "ok": completed_once == len(results) == size}


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 4, "kills of the API mid-request")
    p.add_argument("--pause", type=float, default=4.0)
    args = p.parse_args(argv)
    _kit.conclude("api_crash", args, lambda: run(args.size, args.seed, args.pause), lambda fig: (
        f"{fig['kills']} kill -9 of the API mid-request ({fig['killed_after_append']} after the "
        f"append, {fig['killed_before_append']} before): retries with the same key {fig['retried']}, "
        f"actions completed exactly once {fig['completed_exactly_once']} ({fig['seconds']} s)"))


if __name__ == "__main__":
    main()
