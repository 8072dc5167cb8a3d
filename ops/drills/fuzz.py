"""Fuzzing drill: schemathesis against /openapi.json, every operation, valid (positive) and
invalid (negative) inputs, on the app in process (WSGI) over fakeredis.

Generated path parameters are replaced, most of the time, by the ids of real games (open,
active, ended and scored ones of every registered type) and an Authorization header with
a real seat token is added to some cases, so requests reach the code behind the 404s and
401s. Each response must not be a 5xx and must match its operation's documented schema
(status code documented, body valid against the response schema, declared content type).
Finally, bodies over the size limit must get 413.

    python -m ops.drills.fuzz --size 60        # examples per operation and mode
"""

from __future__ import annotations

import random
from collections import Counter

from . import _kit

CHECK_NAMES = ("not_a_server_error", "status_code_conformance", "response_schema_conformance",
               "content_type_conformance")


def _fixtures(app, rng: random.Random) -> dict:
    """Real games in every state, with their seat tokens."""
    service = app.extensions["games"]
    games, tokens = [], []
    for name in _kit.game_names():
        open_game = service.create(name, _kit.short_options(name), [{}] * _kit.get_game(name).MIN_PLAYERS,
                                   seed=f"{rng.getrandbits(256):064x}")
        games.append(open_game.game_id)
        active, seat_tokens = _kit.create_playable(service, name, rng)
        games.append(active)
        tokens += seat_tokens
        done, done_tokens = _kit.create_playable(service, name, rng)
        _kit.play_out(service, service.jobs, done, rng)
        games.append(done)
        tokens += done_tokens
    return {"games": games, "tokens": [t for t in tokens if t]}


def run(size: int = 30, seed: int = 1) -> dict:
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from hypothesis.errors import Unsatisfiable
    from schemathesis import checks as st_checks
    from schemathesis.generation.modes import GenerationMode

    import logging

    logging.getLogger("service.app").setLevel(logging.CRITICAL)
    rng = random.Random(seed)
    client = _kit.fake_client()
    app = _kit.make_app(client, RATE_LIMIT=None, STREAM_MAX_SECONDS=0.2, STREAM_KEEPALIVE=0.05)
    fixtures = _fixtures(app, rng)
    schema = schemathesis.openapi.from_wsgi("/openapi.json", app)
    chosen = [getattr(st_checks, name) for name in CHECK_NAMES]
    counts = Counter()
    statuses = Counter()
    failures: list[dict] = []
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode), pick=st.integers(0, 10_000))
            @settings(max_examples=size, deadline=None, database=None, derandomize=True,
                      suppress_health_check=list(HealthCheck))
            def fuzz(case, pick):
                if case.path_parameters and "game_id" in case.path_parameters and pick % 4:
                    case.path_parameters["game_id"] = fixtures["games"][pick % len(fixtures["games"])]
                if pick % 3 == 0:
                    case.headers = {**(case.headers or {}),
                                    "Authorization": f"Bearer {fixtures['tokens'][pick % len(fixtures['tokens'])]}"}
                if operation.path.endswith("/events"):
                    # The streams are not fuzzed (their messages are JSON objects; the document
                    # declares the stream body a string): the JSON variant is.
                    case.headers = {**(case.headers or {}), "Accept": "application/json"}
                if case.query and "follow" in case.query:
                    case.query["follow"] = 0       # streams: do not hold the fuzzer for minutes
                try:
                    response = case.call()
                except (Exception, BaseExceptionGroup) as err:   # schemathesis checks SSE events while reading the stream
                    counts["requests"] += 1
                    if "SSE event violates schema" in str(err):
                        counts["sse_schema_notes"] += 1   # see docs/reliability.md: the SSE body is declared a string
                        return
                    raise
                counts["requests"] += 1
                statuses[response.status_code] += 1
                if response.status_code >= 500:
                    counts["5xx"] += 1
                try:
                    case.validate_response(response, checks=chosen)
                except (Exception, BaseExceptionGroup) as err:   # a failed check: record it, keep fuzzing
                    counts["schema_failures"] += 1
                    if len(failures) < 25:
                        failures.append({"operation": operation.label, "mode": str(mode),
                                         "status": response.status_code, "check": type(err).__name__,
                                         "message": "; ".join(str(e).splitlines()[0] for e in
                                                              getattr(err, "exceptions", [err]))[:300],
                                         "request": f"{case.method} {case.formatted_path} query={case.query} body={str(case.body)[:200]}"})

            try:
                fuzz()
            except Unsatisfiable:   # e.g. no invalid input exists for an operation without parameters
                counts["unsatisfiable"] += 1
    too_large = _too_large(app, fixtures)
    return {"operations": operations, "requests_fuzzed": counts["requests"], "5xx": counts["5xx"],
            "schema_failures": counts["schema_failures"], "failures": failures,
            "sse_events_not_matching_declared_string": counts["sse_schema_notes"],
            "statuses": {str(k): v for k, v in sorted(statuses.items())}, "too_large": too_large,
            "ok": counts["5xx"] == 0 and counts["schema_failures"] == 0 and too_large["ok"]}


def _too_large(app, fixtures) -> dict:
    """Every JSON-accepting endpoint, a body one byte over the limit and one far over: 413."""
    limit = app.config["MAX_CONTENT_LENGTH"]
    http = app.test_client()
    game = fixtures["games"][1]
    token = fixtures["tokens"][0]
    targets = ["/v1/games", f"/v1/games/{game}/seats/0", f"/v1/games/{game}/actions"]
    answers = []
    for path in targets:
        for extra in (1, 10 * limit):
            pad = "x" * (limit + extra)
            response = http.post(path, data='{"pad": "' + pad + '"}', content_type="application/json",
                                 headers=_kit.auth(token, "too-large"))
            body = response.get_json(silent=True) or {}
            answers.append((path, extra, response.status_code, body.get("error", {}).get("code")))
    return {"limit_bytes": limit, "answers": answers,
            "ok": all(status == 413 and code == "too_large" for _, _, status, code in answers)}


def main(argv=None) -> None:
    args = _kit.parser(__doc__, 60, "examples per operation and generation mode").parse_args(argv)
    _kit.conclude("fuzz", args, lambda: run(args.size, args.seed), lambda fig: (
        f"{fig['operations']} operations, {fig['requests_fuzzed']} requests fuzzed (valid and invalid): "
        f"{fig['5xx']} 5xx, {fig['schema_failures']} responses breaking their schema; oversized bodies: "
        f"{sum(a[2] == 413 for a in fig['too_large']['answers'])}/{len(fig['too_large']['answers'])} got 413 "
        f"({fig['seconds']} s)"))


if __name__ == "__main__":
    main()
