"""Waiting clients: the Accept rule, the caps (429 + envelope + Retry-After), jittered
keep-alives, and streams held through the real gunicorn gevent configuration."""

import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from werkzeug.datastructures import MIMEAccept
from werkzeug.http import parse_accept_header

from ops.drills._kit import wait_until
from ops.drills.redis_server import free_port
from projections.registry import get_game
from service.app import create_app
from service.bootstrap import Backend
from service.core.streams import keepalive_interval
from service.streaming import NDJSON, SSE
from service.streaming import StreamCaps, stream_kind
from tests.gamekit import seed_that_plays
from workers.memory_jobs import MemoryJobs

ROOT = Path(__file__).resolve().parents[1]
SEED = "cd" * 32


def kind_of(header):
    return stream_kind(parse_accept_header(header, MIMEAccept))


@pytest.mark.parametrize("header,kind", [
    (None, None), ("", None), ("*/*", None), ("text/*", None), ("application/json", None),
    ("text/event-stream", SSE), ("application/x-ndjson", NDJSON),
    ("text/event-stream, */*;q=0.1", SSE), ("application/json, text/event-stream;q=0.5", None),
    ("application/x-ndjson;q=0.9, text/event-stream;q=0.4", NDJSON), ("text/event-stream;q=0", None),
    ("Text/Event-Stream", SSE)])
def test_only_an_explicit_accept_streams(header, kind):
    assert kind_of(header or "") == kind


def test_keepalives_are_jittered_per_stream():
    rng = random.Random(5)
    periods = [keepalive_interval(15.0, rng) for _ in range(1000)]
    assert 12.0 <= min(periods) and max(periods) <= 18.0
    assert max(periods) - min(periods) > 4.0   # spread, not in step


def test_caps_count_per_token_and_per_address():
    caps = StreamCaps(per_token=2, per_address=3)
    a = caps.acquire("10.0.0.1", "t1")
    b = caps.acquire("10.0.0.1", "t1")
    with pytest.raises(Exception) as err:
        caps.acquire("10.0.0.1", "t1")
    assert err.value.status == 429 and err.value.details["per"] == "token"
    c = caps.acquire("10.0.0.1", None)
    with pytest.raises(Exception) as err:
        caps.acquire("10.0.0.1", "t2")
    assert err.value.details["per"] == "address"
    a(), a()   # a release is idempotent
    caps.acquire("10.0.0.1", "t2")
    b(), c()
    assert caps.open_count() == 1


# --- through the app (fakeredis and a real Redis) -------------------------------------------
@pytest.fixture
def app(redis_client):
    return create_app({"ALLOW_SEED": True, "RATE_LIMIT": None, "STREAM_KEEPALIVE": 0.05,
                       "STREAMS_PER_TOKEN": 2, "STREAMS_PER_ADDRESS": 3, "STREAM_MAX_SECONDS": 0.3},
                      backend=Backend(redis_client, redis_client, False), jobs=MemoryJobs())


def new_game(http):
    game = http.post("/v1/games", json={"type": "secret-duel", "seats": [{}, {}], "seed": SEED}).json
    tokens = [http.post(f"/v1/games/{game['game_id']}/seats/{s}", json={"name": f"p{s}"}).json["token"]
              for s in range(2)]
    return game["game_id"], tokens


def test_wildcard_and_missing_accept_get_json(app):
    http = app.test_client()
    gid, _ = new_game(http)
    for headers in ({}, {"Accept": "*/*"}, {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}):
        response = http.get(f"/v1/games/{gid}/events", headers=headers)
        assert response.status_code == 200 and response.mimetype == "application/json", headers
        assert "events" in response.json
    streamed = http.get(f"/v1/games/{gid}/events", headers={"Accept": SSE})
    assert streamed.mimetype == SSE


def assert_429(response, per):
    assert response.status_code == 429
    body = response.get_json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == "too_many_streams" and body["error"]["details"]["per"] == per
    assert int(response.headers["Retry-After"]) >= 1


def test_open_streams_are_capped_per_token_and_address_with_a_429(app):
    http = app.test_client()
    gid, tokens = new_game(http)
    auth = {"Authorization": f"Bearer {tokens[0]}"}
    held = [http.get(f"/v1/games/{gid}/events", headers={"Accept": SSE, **auth}, buffered=False)
            for _ in range(2)]
    assert all(r.status_code == 200 for r in held)
    assert_429(http.get(f"/v1/games/{gid}/events", headers={"Accept": NDJSON, **auth}), "token")
    # a long-poll is an open wait too
    assert_429(http.get(f"/v1/games/{gid}/view", headers=auth, query_string={"wait": 1, "after_version": 99}),
               "token")
    spectator = http.get(f"/v1/games/{gid}/events", headers={"Accept": SSE}, buffered=False)
    assert spectator.status_code == 200
    assert_429(http.get(f"/v1/games/{gid}/events", headers={"Accept": SSE}), "address")
    # the JSON answer is never capped
    assert http.get(f"/v1/games/{gid}/events", headers=auth).status_code == 200
    for response in reversed(held + [spectator]):   # last opened first: each holds a request context
        response.close()
    again = http.get(f"/v1/games/{gid}/events", headers={"Accept": SSE, **auth}, query_string={"follow": 0})
    assert again.status_code == 200


@pytest.mark.timing
def test_a_stream_lasts_at_most_stream_max_seconds(app):
    http = app.test_client()
    gid, _ = new_game(http)
    t0 = time.monotonic()
    response = http.get(f"/v1/games/{gid}/events", headers={"Accept": SSE}, query_string={"follow": 3600})
    text = response.get_data(as_text=True)
    assert time.monotonic() - t0 < 2 and "id: 1" in text


# --- the production configuration: gunicorn's gevent worker ---------------------------------
def commands_processed(client) -> int:
    return int(client.info("stats")["total_commands_processed"])


def metric(port, name) -> float | None:
    """One unlabelled sample of the server's /metrics (None when it is not there)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        text = read_to_end(sock).decode()
    found = re.search(rf"^{re.escape(name)}(?:\{{[^}}]*\}})? (\S+)$", text, re.M)
    return float(found.group(1)) if found else None


def commands_during(client, span: float) -> list[str]:
    """The commands Redis ran in the next `span` seconds, as MONITOR prints them (the INFOs
    that ask left out)."""
    kwargs = client.connection_pool.connection_kwargs
    seen = b""
    with socket.create_connection((kwargs["host"], kwargs["port"]), timeout=0.2) as sock:
        sock.sendall(b"MONITOR\r\n")
        deadline = time.monotonic() + span
        while time.monotonic() < deadline:
            try:
                seen += sock.recv(65536)
            except (socket.timeout, TimeoutError):
                continue
    lines = [line.decode(errors="replace") for line in seen.split(b"\r\n")[1:] if line]   # past +OK
    return [line for line in lines if '"INFO"' not in line.upper()]


def quiet_for(client, span: float):
    """A predicate: True once Redis has run no command (but the INFOs that ask) for `span` s."""
    state = {"count": commands_processed(client), "since": time.monotonic()}

    def check() -> bool:
        now = commands_processed(client)
        if now - state["count"] > 1:
            state["since"] = time.monotonic()
        state["count"] = now
        return time.monotonic() - state["since"] >= span
    return check


def http_json(port, method, path, body=None, timeout=10, token=None):
    """(status, JSON) of one request on its own connection; an action gets a fresh key."""
    payload = json.dumps(body).encode() if body is not None else b""
    extra = f"Authorization: Bearer {token}\r\n" if token else ""
    if method == "POST" and path.endswith("/actions"):
        extra += f"Idempotency-Key: {os.urandom(8).hex()}\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{extra}"
                     f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode() + payload)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(rest or b"null")


@pytest.fixture
def gunicorn(redis_server, real_redis):
    port = free_port()
    env = dict(os.environ, GUNICORN_BIND=f"127.0.0.1:{port}", GUNICORN_WORKERS="1", REDIS_URL=redis_server.url,
               SPECULATION_ALLOW_SEED="1", SPECULATION_STREAMS_PER_ADDRESS="1000",
               SPECULATION_STREAM_KEEPALIVE="30")
    env.pop("GUNICORN_CMD_ARGS", None)
    env.pop("GUNICORN_WORKER_CLASS", None)
    proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", str(ROOT / "ops" / "gunicorn.conf.py"),
                             "service.app:create_app()"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while time.time() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    yield port
    proc.send_signal(signal.SIGINT)     # gunicorn's quick shutdown: a graceful one waits out open streams
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def read_head(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


@pytest.mark.timing
def test_gevent_worker_holds_200_streams_and_still_answers(gunicorn, real_redis):
    port = gunicorn
    status, game = http_json(port, "POST", "/v1/games", {"type": "speculation", "seats": [{}, {}, {}]})
    assert status == 201, game
    gid = game["game_id"]
    streams = []
    try:
        for n in range(200):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            accept = SSE if n % 2 else NDJSON
            sock.sendall(f"GET /v1/games/{gid}/events HTTP/1.1\r\nHost: x\r\nAccept: {accept}\r\n\r\n".encode())
            streams.append(sock)
        for sock in streams:
            assert b" 200 " in read_head(sock).split(b"\r\n", 1)[0]
        t0 = time.monotonic()
        status, types = http_json(port, "GET", "/v1/game-types", timeout=5)
        assert status == 200 and types["game_types"] and time.monotonic() - t0 < 1.0
        # all 200 parked in the broadcaster, then Redis quiet (the joins' head reads done)
        assert wait_until(lambda: metric(port, "speculation_broadcast_streams") == 200, 10), \
            metric(port, "speculation_broadcast_streams")
        assert wait_until(quiet_for(real_redis, 0.3), 10, every=0.1)
        # a duration, not an event: the promise is that nothing is sent for the streams over a span
        # of idle time. A process's own periodic commands (a connection's health-check PING, a
        # heartbeat) may fall in the span: they are per process, never per stream, and name no game.
        idle = commands_during(real_redis, 2.0)
        per_stream = [c for c in idle if gid in c]
        assert not per_stream and len(idle) <= 3, idle   # 200 idle streams: not a command each
        # an append reaches the streams
        status, _ = http_json(port, "POST", f"/v1/games/{gid}/seats/0", {"name": "p0"})
        assert status == 201
        for sock in streams[:20]:
            sock.settimeout(5)
            got = b""
            while b"seat.claimed" not in got:
                chunk = sock.recv(65536)
                assert chunk, "stream closed"
                got += chunk
    finally:
        for sock in streams:
            sock.close()


# --- the broadcaster (service/broadcast.py): streams parked, written by one greenlet per game --
def http_call(port, method, path, body=None, token=None):
    return http_json(port, method, path, body, token=token)


def open_stream(port, path, accept, token=None, protocol="HTTP/1.1"):
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    sock.sendall(f"GET {path} {protocol}\r\nHost: x\r\nAccept: {accept}\r\n{auth}\r\n".encode())
    return sock


def read_to_end(sock) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    sock.close()
    return data


def dechunk(body: bytes) -> bytes:
    """An HTTP/1.1 chunked body, checked frame by frame, to its bytes (it must end with 0)."""
    out = b""
    while True:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            assert body == b"\r\n", body[:80]
            return out
        assert body[size:size + 2] == b"\r\n", "a chunk's frame"
        out, body = out + body[:size], body[size + 2:]


def stream_events(body: bytes, kind: str) -> list[dict]:
    if kind == NDJSON:
        messages = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
        return [m["event"] for m in messages if "event" in m]
    events = []
    for block in body.decode().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":"))
        if "data" in lines:
            message = json.loads(lines["data"])
            assert int(lines["id"]) == message["version"]
            events.append(message["event"])
    return events


def play_to_the_end(port, gid, tokens, viewers):
    """Play first legal actions to the end; what each viewer's JSON answer held one action
    before the end (after the end every hand is shown, in the JSON answer as in a stream)."""
    before_end = {}
    for _ in range(2000):
        status, view = http_call(port, "GET", f"/v1/games/{gid}")
        if view["status"] != "active":
            return before_end
        before_end = {t: http_call(port, "GET", f"/v1/games/{gid}/events", token=t)[1]["events"] for t in viewers}
        seat = view["to_act"][0]
        status, mine = http_call(port, "GET", f"/v1/games/{gid}/view", token=tokens[seat])
        action = dict(mine["legal_actions"][0])
        for field, value in action.items():
            if isinstance(value, dict) and "min" in value:
                action[field] = value["min"]
        status, answer = http_call(port, "POST", f"/v1/games/{gid}/actions", {"action": action},
                                   token=tokens[seat])
        assert status in (200, 201, 409), answer
    raise AssertionError("the game did not end")


def test_parked_streams_get_what_each_viewer_may_see_to_the_end(gunicorn):
    port = gunicorn
    # Created at 1, two claims, the last claim at 4 starts the game at 5: a seed whose deal goes on.
    seed = seed_that_plays(get_game("speculation"), {"deals": 1}, 3, started_at=5)
    status, game = http_call(port, "POST", "/v1/games", {"type": "speculation", "options": {"deals": 1},
                                                         "seats": [{}, {}, {}], "seed": seed})
    gid = game["game_id"]
    tokens = [http_call(port, "POST", f"/v1/games/{gid}/seats/{s}", {"name": f"p{s}"})[1]["token"]
              for s in range(3)]
    assert http_call(port, "GET", f"/v1/games/{gid}")[1]["status"] == "active"
    # No worker here scores the game, so the streams end when `follow` runs out: 15 s leaves room
    # for the game to be played to its end on a loaded machine (about 20 actions, 6 requests each).
    path = f"/v1/games/{gid}/events?follow=15"
    streams = [(open_stream(port, path, SSE), SSE, None, "HTTP/1.1"),
               (open_stream(port, path, NDJSON, tokens[1]), NDJSON, tokens[1], "HTTP/1.1"),
               (open_stream(port, path, SSE, tokens[2], "HTTP/1.0"), SSE, tokens[2], "HTTP/1.0")]
    deadline = time.monotonic() + 10   # all three parked before the game goes on
    while True:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            metrics = read_to_end(sock).decode()
        if re.search(r"^speculation_broadcast_streams(\{[^}]*\})? 3\.0$", metrics, re.M):
            break
        assert time.monotonic() < deadline, [line for line in metrics.splitlines() if "broadcast" in line]
        time.sleep(0.1)
    before_end = play_to_the_end(port, gid, tokens, [None, tokens[1], tokens[2]])
    for sock, kind, token, protocol in streams:
        head, _, body = read_to_end(sock).partition(b"\r\n\r\n")
        assert b" 200 " in head.split(b"\r\n")[0]
        if protocol == "HTTP/1.1":
            assert b"transfer-encoding: chunked" in head.lower()
            body = dechunk(body)
        got = stream_events(body, kind)
        status, expected = http_call(port, "GET", f"/v1/games/{gid}/events", token=token)
        seen = before_end[token]
        assert got[:len(seen)] == seen, (kind, token, protocol)   # exactly what that viewer may see
        assert [(e["version"], e["hash"]) for e in got] == [(e["version"], e["hash"]) for e in expected["events"]]
        assert len(got) > len(seen) and got[-1] == expected["events"][-1]   # the end too


class _TrickleSocket:
    """A socket that takes at most `room` bytes per non-blocking send, all of a blocking one."""

    def __init__(self, room):
        self.room, self.sent = room, b""

    def send(self, data, flags=0, timeout=None):
        taken = bytes(data[:self.room])
        self.sent += taken
        return len(taken)

    def sendall(self, data):
        self.sent += bytes(data)


class _Flag:
    def __init__(self):
        self.set_count = 0

    def set(self):
        self.set_count += 1


def test_a_parked_stream_that_cannot_take_a_write_keeps_the_rest_in_order():
    from service.broadcast import MAX_PENDING, Broadcaster, Parked

    sock = _TrickleSocket(room=5)
    parked = Parked(cursor=None, sock=sock, frame=lambda data: b"[" + data + b"]", period=15.0, wake=_Flag())
    parked.send(b"first")            # 5 bytes taken, the rest queued for the stream's greenlet
    parked.send(b"second")           # queued behind, never sent before the rest of the first
    assert sock.sent == b"[firs" and bytes(parked.pending) == b"t][second]" and parked.wake.set_count >= 1
    Broadcaster._drain(parked)
    assert sock.sent == b"[first][second]" and not parked.pending
    parked.send(b"x" * (MAX_PENDING + 10))   # a client too far behind is ended, not buffered
    assert parked.failed and not parked.pending
