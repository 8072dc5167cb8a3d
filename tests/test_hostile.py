"""Hostile requests: every request of tests/hostile_corpus.json gets a 4xx in the JSON error
envelope and changes nothing in the store; a fuzzer (hypothesis) throws more of the same
kinds at the API, and prints each request it breaks as a corpus line to add; the limits'
own units; gunicorn's own errors in the envelope."""

import json
import random
import socket

import pytest
from hypothesis import HealthCheck, given, settings

from ops.drills import _kit, hostile
from service import limits
from service.errors import server_error_bytes, write_server_error


def test_the_corpus_gets_4xx_envelopes_and_changes_nothing():
    figures = hostile.run_in_process()
    assert figures["requests"] >= 150
    assert figures["5xx"] == 0, figures["failures"]
    assert not figures["failures"], figures["failures"]


def test_the_corpus_check_can_fail():
    """A request the service accepts (201, the store changed) is reported as a failure."""
    accepted = {"name": "a valid game", "method": "POST", "path": "/v1/games",
                "raw": json.dumps({"type": "big-shot", "seats": [{}, {}]}),
                "headers": {"Content-Type": "application/json"}}
    figures = hostile.run_in_process([accepted])
    assert [f["name"] for f in figures["failures"]] == ["a valid game"]


# --- the fuzzer (its requests: ops/drills/hostile.py hostile_requests) ------------------
@pytest.fixture(scope="module")
def fuzz_target():
    import logging

    logging.getLogger("service.app").setLevel(logging.CRITICAL)
    client = _kit.fake_client()
    app = _kit.make_app(client, STREAM_MAX_SECONDS=0.2)
    return client, app, hostile.in_process_fixtures(app, random.Random(5))


@settings(max_examples=150, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(entry=hostile.hostile_requests())
def test_fuzzed_hostile_requests_get_4xx_and_change_nothing(fuzz_target, entry):
    client, app, fixtures = fuzz_target
    problem = hostile.try_entry(client, app, fixtures, entry)
    assert problem is None, (f"{problem}; add to tests/hostile_corpus.json (or run python -m "
                             f"ops.drills.hostile --grow N): " + json.dumps(hostile.corpus_entry(entry), ensure_ascii=True))


# --- the limits' units ------------------------------------------------------------------
@pytest.mark.parametrize("text", ["NaN", "[Infinity]", "-Infinity", "1e999", "9" * 17, "-" + "9" * 17,
                                  str(2 ** 53), "[" * 40 + "]" * 40, "[" * 30000 + "]" * 30000,
                                  '"\\ud800"', '{"\\udfff": 1}', '["a", {"b": "\\ud83d"}]', "1." + "5" * 70])
def test_strict_json_refuses(text):
    with pytest.raises(limits.JsonRefused):
        limits.strict_loads(text)


@pytest.mark.parametrize("text, value", [("0", 0), (str(2 ** 53 - 1), 2 ** 53 - 1), ("-12.5", -12.5),
                                         ("[" * 31 + "]" * 31, None), ('"\\ud83d\\ude00"', "\U0001F600"),
                                         ('{"a": [1, {"b": null}]}', {"a": [1, {"b": None}]})])
def test_strict_json_accepts(text, value):
    loaded = limits.strict_loads(text)
    if value is not None:
        assert loaded == value


def test_refusals_name_where():
    with pytest.raises(limits.JsonRefused) as err:
        limits.strict_loads('{"action": {"type": "bid", "note": ["\\ud800"]}}')
    assert err.value.where == "body.action.note.0"


@pytest.mark.parametrize("name", ["ann", "Zoë", "李雷", "o'brien 2", "a b"])
def test_printable_names(name):
    assert limits.text_problem(name) is None


@pytest.mark.parametrize("name", ["a\x00", "\x1b[0m", "x\u202ey", "\u2067", "a\u200b", " ", "", "x" * 41, "a\tb",
                                  "\udc80", "a\u00a0b"])
def test_names_that_are_not_printable_text(name):
    assert limits.text_problem(name) is not None


@pytest.mark.parametrize("text, value", [("0", 0), ("12", 12), ("１", None), ("²", None), ("-1", None),
                                         ("9" * 17, None), ("", None), (" 1", None)])
def test_ascii_int(text, value):
    assert limits.ascii_int(text) == value


# --- the HTTP server's own errors -----------------------------------------------------------
def test_gunicorns_own_errors_are_json_envelopes():
    ours, theirs = socket.socketpair()
    try:
        write_server_error(ours, 431, "Request Header Fields Too Large", "Error parsing headers: 'limit request headers'")
        raw = theirs.recv(65536)
    finally:
        ours.close()
        theirs.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 ") and b"Content-Type: application/json" in head
    assert f"Content-Length: {len(body)}".encode() in head
    assert b"X-Content-Type-Options: nosniff" in head and b"frame-ancestors 'none'" in head   # as the app's answers
    error = json.loads(body)["error"]
    assert error["code"] == "headers_too_large" and "headers" in error["message"]
    # gunicorn's 501 (an unimplemented transfer coding) is the client's fault: 400.
    assert server_error_bytes(501, "Not Implemented", "Unsupported transfer coding").startswith(b"HTTP/1.1 400 ")


def test_gunicorn_answers_431_and_400_in_the_envelope():
    """The shipped gunicorn settings, serving a trivial WSGI app: its own refusals (a header
    block too large, a request line too long, a bad request line) come back as the envelope."""
    import subprocess
    import sys
    import time

    from ops.drills.redis_server import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", str(_kit.REPO / "ops" / "gunicorn.conf.py"),
                             "--bind", f"127.0.0.1:{port}", "--workers", "1", "--worker-class", "sync",
                             "werkzeug.testapp:test_app"], cwd=_kit.REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def send(raw: bytes) -> bytes:
            for _ in range(100):
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
                        conn.sendall(raw)
                        chunks = []
                        while True:
                            chunk = conn.recv(65536)
                            if not chunk:
                                return b"".join(chunks)
                            chunks.append(chunk)
                except ConnectionRefusedError:
                    time.sleep(0.1)
            raise AssertionError("gunicorn did not start")

        answers = {
            431: send(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n"),
            400: send(b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
        }
        bad_line = send(b"\x00\x01 nonsense\r\n\r\n")
    finally:
        proc.terminate()
        proc.wait(10)
    for status, raw in answers.items():
        head, _, body = raw.partition(b"\r\n\r\n")
        assert head.startswith(f"HTTP/1.1 {status} ".encode()), raw[:200]
        assert set(json.loads(body)["error"]) == {"code", "message", "details"}
    assert bad_line.startswith(b"HTTP/1.1 400 ") and b'"error"' in bad_line


def test_the_fuzzer_grows_the_corpus_with_what_it_breaks(tmp_path, monkeypatch):
    corpus = tmp_path / "corpus.json"
    corpus.write_text(hostile.CORPUS.read_text())
    before = len(hostile.load_corpus(corpus))
    monkeypatch.setattr(hostile, "try_entry", lambda *args: "pretend it broke")
    found = hostile.grow(3, corpus)
    grown = hostile.load_corpus(corpus)
    assert found and len(grown) == before + len(found)
    assert all(e["name"].startswith("found by the fuzzer") and "_check" not in e for e in grown[before:])
