"""Hostile requests: every request of tests/hostile_corpus.json gets a 4xx in the JSON error
envelope and changes nothing in the store; a fuzzer (hypothesis) throws more of the same
kinds at the API, and prints each request it breaks as a corpus line to add; the limits'
own units; gunicorn's own errors in the envelope."""

import json
import random
import socket

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


# --- the fuzzer -------------------------------------------------------------------------
_nasty_chars = st.sampled_from(["\x00", "\x1b[31m", "\u202e", "\u2066", "\u200d", "\ufeff", "\n", "\x7f",
                                "\x9b", "\u2028", "\ue000", "１", "²", "٣", "\udc80", "\ud800"])
_nasty_text = st.lists(st.one_of(_nasty_chars, st.text(max_size=3)), min_size=1, max_size=6).map("".join)
_nasty_number = st.one_of(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e400", "1E+99999"]),
                          st.integers(min_value=17, max_value=5000).map(lambda n: "9" * n),
                          st.integers(min_value=17, max_value=400).map(lambda n: "-1" + "0" * n),
                          st.integers(min_value=33, max_value=3000).map(lambda n: "[" * n + "]" * n))
_digits = st.one_of(st.sampled_from(["１", "²", "٣", "-1", "+1", "1.0", "0x1", " 1"]),
                    st.integers(min_value=17, max_value=3000).map(lambda n: "7" * n))


def _json_string(text: str) -> str:
    """A JSON string literal for any text, lone surrogates as \\u escapes."""
    return json.dumps(text, ensure_ascii=True)


@st.composite
def hostile_requests(draw):
    kind = draw(st.sampled_from(["action_number", "option_number", "name_text", "name_number", "action_text",
                                 "seat_path", "last_event_id", "receipts", "type_text"]))
    headers = {"Content-Type": "application/json"}
    act_headers = {**headers, "Authorization": "Bearer {token}", "Idempotency-Key": "fuzz"}
    if kind == "action_number":
        raw = '{"action": {"type": "bid", "amount": %s}}' % draw(_nasty_number)
        return {"method": "POST", "path": "/v1/games/{active}/actions", "raw": raw, "headers": act_headers}
    if kind == "option_number":
        raw = '{"type": "speculation", "options": {"deals": %s}, "seats": [{}, {}, {}]}' % draw(_nasty_number)
        return {"method": "POST", "path": "/v1/games", "raw": raw, "headers": headers}
    if kind == "name_text":
        text = draw(_nasty_text)
        return {"method": "POST", "path": "/v1/games/{open}/seats/1", "raw": '{"name": %s}' % _json_string(text),
                "headers": headers, "_check": lambda: limits.text_problem(text) is not None}
    if kind == "name_number":
        return {"method": "POST", "path": "/v1/games/{open}/seats/1", "raw": '{"name": %s}' % draw(_nasty_number),
                "headers": headers}
    if kind == "action_text":
        raw = '{"action": {"type": %s}}' % _json_string(draw(_nasty_text))
        return {"method": "POST", "path": "/v1/games/{active}/actions", "raw": raw, "headers": act_headers}
    if kind == "type_text":
        raw = '{"type": %s, "seats": [{}, {}]}' % _json_string(draw(_nasty_text))
        return {"method": "POST", "path": "/v1/games", "raw": raw, "headers": headers}
    if kind == "seat_path":
        from urllib.parse import quote

        return {"method": "POST", "path": "/v1/games/{open}/seats/" + quote(draw(_digits)),
                "raw": '{"name": "eve"}', "headers": headers}
    if kind == "last_event_id":
        return {"method": "GET", "path": "/v1/games/{active}/events?follow=0",
                "headers": {"Accept": "text/event-stream", "Last-Event-ID": draw(_digits)}}
    from urllib.parse import quote

    return {"method": "GET", "path": "/v1/games/{active}/verify?receipts=" + quote(draw(_digits) + ":" + "ab" * 32)}


@pytest.fixture(scope="module")
def fuzz_target():
    import logging

    logging.getLogger("service.app").setLevel(logging.CRITICAL)
    client = _kit.fake_client()
    app = _kit.make_app(client, STREAM_MAX_SECONDS=0.2)
    return client, app, hostile.in_process_fixtures(app, random.Random(5))


@settings(max_examples=150, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(entry=hostile_requests())
def test_fuzzed_hostile_requests_get_4xx_and_change_nothing(fuzz_target, entry):
    client, app, fixtures = fuzz_target
    check = entry.pop("_check", None)
    if check is not None and not check():
        return   # a name the fuzzer drew that happens to be printable text: not hostile
    method, path, headers, body = hostile.materialise(entry, fixtures)
    before = hostile.store_digest(client)
    response = app.test_client().open(path, method=method, headers=headers, data=body)
    problem = hostile.envelope_problem(response.status_code, response.content_type or "", response.get_data(), None)
    if problem is None and hostile.store_digest(client) != before:
        problem = "the store changed"
    assert problem is None, (f"{problem}; add to tests/hostile_corpus.json: "
                             + json.dumps({"name": "found by the fuzzer", **entry}, ensure_ascii=True))


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
