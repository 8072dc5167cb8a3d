"""Hostile-request drill: every request of the corpus (tests/hostile_corpus.json) must get a
4xx in the JSON error envelope ({"error": {"code", "message", "details"}}) and change
nothing in the store.

In process (the default) the corpus runs on the app over fakeredis, and the store's whole
content (every key but the rate-limit counters) is compared before and after each request.
With --url it runs against a live API over raw HTTP (paths and bytes sent exactly as
written), the HTTP server's own refusals included (a header block too large: 431, a request
line too long: 400), which the in-process test client never produces.

    python -m ops.drills.hostile                       # in process
    python -m ops.drills.hostile --url http://127.0.0.1:5000 [--corpus FILE]
    python -m ops.drills.hostile --grow 2000       # fuzz; append what breaks the rule
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from pathlib import Path
from typing import Optional

from . import _kit

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "hostile_corpus.json"
_REP = re.compile(r"<<rep:(.*?):(\d+)>>")


def load_corpus(path: Path = CORPUS) -> list[dict]:
    return json.loads(Path(path).read_text())["requests"]


def expand(text: str, fixtures: dict) -> str:
    text = _REP.sub(lambda m: m.group(1) * int(m.group(2)), text)
    for name, value in fixtures.items():
        text = text.replace("{" + name + "}", value)
    return text


def materialise(entry: dict, fixtures: dict) -> tuple[str, str, dict, Optional[bytes]]:
    """(method, path, headers, body bytes) of a corpus entry."""
    headers = {k: expand(v, fixtures) for k, v in (entry.get("headers") or {}).items()}
    body = None
    if "raw" in entry:
        body = expand(entry["raw"], fixtures).encode("utf-8", "surrogatepass")
    elif "raw_latin1" in entry:
        body = expand(entry["raw_latin1"], fixtures).encode("latin-1")
    return entry["method"], expand(entry["path"], fixtures), headers, body


def envelope_problem(status: int, content_type: str, data: bytes, expect: Optional[list]) -> Optional[str]:
    """Why a response is not a 4xx in the error envelope, or None."""
    if expect is not None and status not in expect:
        return f"status {status}, expected one of {expect}"
    if not 400 <= status < 500:
        return f"status {status}"
    if not content_type.startswith("application/json"):
        return f"content type {content_type!r}"
    try:
        error = json.loads(data)["error"]
    except (ValueError, KeyError, TypeError):
        return "not the error envelope"
    if not (isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str)
            and isinstance(error.get("details"), dict)):
        return f"envelope incomplete: {error!r}"[:200]
    return None


def store_digest(client) -> str:
    """Everything in the store but the rate-limit counters, as one digest."""
    digest = hashlib.sha256()
    for key in sorted(client.keys("*")):
        if key.startswith(b"rate:"):
            continue
        digest.update(key + b"\0" + (client.dump(key) or b"") + b"\1")
    return digest.hexdigest()


def in_process_fixtures(app, rng: random.Random) -> dict:
    service = app.extensions["games"]
    open_game = service.create("speculation", {}, [{}, {}, {}])
    active, tokens = _kit.create_playable(service, "speculation", rng)
    return {"open": open_game.game_id, "active": active, "token": tokens[0]}


def run_in_process(corpus: Optional[list[dict]] = None, seed: int = 1) -> dict:
    import logging

    logging.getLogger("service.app").setLevel(logging.CRITICAL)
    corpus = load_corpus() if corpus is None else corpus
    client = _kit.fake_client()
    app = _kit.make_app(client, STREAM_MAX_SECONDS=0.2, STREAM_KEEPALIVE=0.05)
    fixtures = in_process_fixtures(app, random.Random(seed))
    http = app.test_client()
    failures, ran, statuses = [], 0, {}
    for entry in corpus:
        if entry.get("server_only"):
            continue
        method, path, headers, body = materialise(entry, fixtures)
        before = store_digest(client)
        response = http.open(path, method=method, headers=headers, data=body)
        data = response.get_data()
        ran += 1
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        problem = envelope_problem(response.status_code, response.content_type or "", data, entry.get("expect"))
        if problem is None and store_digest(client) != before:
            problem = "the store changed"
        if problem:
            failures.append({"name": entry["name"], "problem": problem, "body": data[:300].decode("utf-8", "replace")})
    return {"requests": ran, "statuses": statuses, "failures": failures,
            "5xx": sum(n for s, n in statuses.items() if s >= 500), "ok": ran > 0 and not failures}


# --- against a live API -------------------------------------------------------------------
def _raw_request(base: str, method: str, path: str, headers: dict, body: Optional[bytes], timeout: float = 10):
    import http.client
    from urllib.parse import urlsplit

    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=timeout)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for key, value in headers.items():
            conn.putheader(key, value.encode("latin-1", "replace"))
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read()
    finally:
        conn.close()


def live_fixtures(base: str) -> dict:
    def call(method, path, body=None):
        status, _, data = _raw_request(base, method, path, {"Content-Type": "application/json"},
                                       json.dumps(body).encode() if body is not None else None)
        if status >= 300:
            raise SystemExit(f"fixture {method} {path}: {status} {data[:200]!r}")
        return json.loads(data)

    open_game = call("POST", "/v1/games", {"type": "speculation", "seats": [{}, {}, {}]})["game_id"]
    active = call("POST", "/v1/games", {"type": "speculation", "seats": [{}, {}, {}]})["game_id"]
    tokens = [call("POST", f"/v1/games/{active}/seats/{s}", {"name": f"p{s}"})["token"] for s in range(3)]
    return {"open": open_game, "active": active, "token": tokens[0]}


def run_live(base: str, corpus: Optional[list[dict]] = None) -> dict:
    corpus = load_corpus() if corpus is None else corpus
    fixtures = live_fixtures(base)
    failures, statuses = [], {}
    for entry in corpus:
        method, path, headers, body = materialise(entry, fixtures)
        try:
            status, content_type, data = _raw_request(base, method, path, headers, body)
        except OSError as err:
            failures.append({"name": entry["name"], "problem": f"connection: {err}"})
            continue
        statuses[status] = statuses.get(status, 0) + 1
        problem = envelope_problem(status, content_type, data, entry.get("expect"))
        if problem:
            failures.append({"name": entry["name"], "problem": problem, "body": data[:300].decode("utf-8", "replace")})
    return {"requests": len(corpus), "statuses": statuses, "failures": failures,
            "5xx": sum(n for s, n in statuses.items() if s >= 500), "ok": not failures}


# --- the fuzzer that grows the corpus ---------------------------------------------------
def _json_string(text: str) -> str:
    """A JSON string literal for any text, lone surrogates as \\u escapes."""
    return json.dumps(text, ensure_ascii=True)


def hostile_requests():
    """A hypothesis strategy of hostile requests of the corpus's kinds (numbers JSON cannot
    hold or the service refuses, text that is not printable, digits that are not ASCII), in
    the corpus's format; a drawn name that might be printable text carries `_check`."""
    from urllib.parse import quote

    from hypothesis import strategies as st

    from service import limits

    nasty_chars = st.sampled_from(["\x00", "\x1b[31m", "\u202e", "\u2066", "\u200d", "\ufeff", "\n", "\x7f",
                                   "\x9b", "\u2028", "\ue000", "\uff11", "\u00b2", "\u0663", "\udc80", "\ud800"])
    nasty_text = st.lists(st.one_of(nasty_chars, st.text(max_size=3)), min_size=1, max_size=6).map("".join)
    nasty_number = st.one_of(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e400", "1E+99999"]),
                             st.integers(min_value=17, max_value=5000).map(lambda n: "9" * n),
                             st.integers(min_value=17, max_value=400).map(lambda n: "-1" + "0" * n),
                             st.integers(min_value=33, max_value=3000).map(lambda n: "[" * n + "]" * n))
    digits = st.one_of(st.sampled_from(["\uff11", "\u00b2", "\u0663", "-1", "+1", "1.0", "0x1", "1 2"]),
                       st.integers(min_value=17, max_value=3000).map(lambda n: "7" * n))
    json_headers = {"Content-Type": "application/json"}
    act_headers = {**json_headers, "Authorization": "Bearer {token}", "Idempotency-Key": "fuzz"}

    @st.composite
    def one(draw):
        kind = draw(st.sampled_from(["action_number", "option_number", "name_text", "name_number", "action_text",
                                     "type_text", "seat_path", "last_event_id", "receipts"]))
        if kind == "action_number":
            return {"method": "POST", "path": "/v1/games/{active}/actions", "headers": act_headers,
                    "raw": '{"action": {"type": "bid", "amount": %s}}' % draw(nasty_number)}
        if kind == "option_number":
            return {"method": "POST", "path": "/v1/games", "headers": json_headers,
                    "raw": '{"type": "speculation", "options": {"deals": %s}, "seats": [{}, {}, {}]}' % draw(nasty_number)}
        if kind == "name_text":
            text = draw(nasty_text)
            return {"method": "POST", "path": "/v1/games/{open}/seats/1", "headers": json_headers,
                    "raw": '{"name": %s}' % _json_string(text), "_check": lambda: limits.text_problem(text) is not None}
        if kind == "name_number":
            return {"method": "POST", "path": "/v1/games/{open}/seats/1", "headers": json_headers,
                    "raw": '{"name": %s}' % draw(nasty_number)}
        if kind == "action_text":
            return {"method": "POST", "path": "/v1/games/{active}/actions", "headers": act_headers,
                    "raw": '{"action": {"type": %s}}' % _json_string(draw(nasty_text))}
        if kind == "type_text":
            return {"method": "POST", "path": "/v1/games", "headers": json_headers,
                    "raw": '{"type": %s, "seats": [{}, {}]}' % _json_string(draw(nasty_text))}
        if kind == "seat_path":
            return {"method": "POST", "path": "/v1/games/{open}/seats/" + quote(draw(digits)), "headers": json_headers,
                    "raw": '{"name": "eve"}'}
        if kind == "last_event_id":
            return {"method": "GET", "path": "/v1/games/{active}/events?follow=0",
                    "headers": {"Accept": "text/event-stream", "Last-Event-ID": draw(digits)}}
        return {"method": "GET", "path": "/v1/games/{active}/verify?receipts=" + quote(draw(digits) + ":" + "ab" * 32)}

    return one()


def try_entry(client, app, fixtures: dict, entry: dict) -> Optional[str]:
    """Why `entry` breaks the rule (a 4xx envelope, nothing changed), or None."""
    check = entry.get("_check")
    if check is not None and not check():
        return None   # a name drawn that happens to be printable text: not hostile
    method, path, headers, body = materialise(entry, fixtures)
    before = store_digest(client)
    response = app.test_client().open(path, method=method, headers=headers, data=body)
    problem = envelope_problem(response.status_code, response.content_type or "", response.get_data(), None)
    if problem is None and store_digest(client) != before:
        problem = "the store changed"
    return problem


def corpus_entry(entry: dict) -> dict:
    return {"name": f"found by the fuzzer: {entry['method']} {entry['path'][:60]}",
            **{k: v for k, v in entry.items() if not k.startswith("_")}}


def grow(examples: int, path: Path = CORPUS, seed: int = 1) -> list[dict]:
    """Run the fuzzer for `examples` requests; append each request that breaks the rule to
    the corpus file (so it stays a regression test once fixed). Returns those found."""
    import logging

    from hypothesis import HealthCheck, given, settings

    logging.getLogger("service.app").setLevel(logging.CRITICAL)
    client = _kit.fake_client()
    app = _kit.make_app(client, STREAM_MAX_SECONDS=0.2)
    fixtures = in_process_fixtures(app, random.Random(seed))
    found = []

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(entry=hostile_requests())
    def probe(entry):
        if try_entry(client, app, fixtures, entry) is not None:
            found.append(corpus_entry(entry))

    probe()
    if found:
        document = json.loads(Path(path).read_text())
        document["requests"] += found
        Path(path).write_text('{"about": %s,\n "requests": [\n' % json.dumps(document["about"])
                              + ",\n".join("  " + json.dumps(e, ensure_ascii=True) for e in document["requests"])
                              + "\n ]\n}\n")
    return found


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--url", help="a live API (default: in process on fakeredis)")
    p.add_argument("--corpus", default=str(CORPUS))
    p.add_argument("--json", action="store_true")
    p.add_argument("--grow", type=int, metavar="N", help="fuzz N requests; append those that break the rule")
    args = p.parse_args(argv)
    if args.grow:
        found = grow(args.grow, Path(args.corpus))
        print(f"hostile --grow: {args.grow} fuzzed requests, {len(found)} broke the rule (appended to {args.corpus})")
        sys.exit(1 if found else 0)
    corpus = load_corpus(Path(args.corpus))
    figures = run_live(args.url, corpus) if args.url else run_in_process(corpus)
    _kit.report("hostile", f"{figures['requests']} requests, {len(figures['failures'])} failed, "
                f"{figures['5xx']} 5xx", figures["ok"], figures, args.json)
    sys.exit(0 if figures["ok"] else 1)


if __name__ == "__main__":
    main()
