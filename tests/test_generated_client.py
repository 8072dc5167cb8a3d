"""A third party's view of the contract: a Python client generated fresh from /openapi.json
by openapi-python-client (no warning allowed) plays every game type to the end, using that
client alone, while every request and response is checked against the document with a JSON
Schema validator (jsonschema-rs, Draft 2020-12, so every `oneOf` is strict: an action or a
payload that matches two branches fails). The spec itself passes openapi-spec-validator."""

from __future__ import annotations

import importlib
import json
import random
import re
import sys

import httpx
import jsonschema_rs
import pytest
from openapi_spec_validator.validation.validators import OpenAPIV31SpecValidator

from ops.client import PACKAGE, generate
from projections import big_shot, speculate, speculation, spekulation
from projections.registry import game_types, get_game
from service.app import create_app
from service.bootstrap import Backend
from workers.memory_jobs import MemoryJobs

# Options that keep a game short, by game (a game not here plays with its defaults).
SHORT = {speculation.NAME: {"deals": 2}}
PLAYERS = 3   # or the nearest count the game allows
# Each hosted game's random games of the typed-payloads test: (players, options) cases, the
# game's largest and smallest tables with its defaults when it has none here.
PAYLOAD_CASES = {
    speculation.NAME: [(8, {"deals": 2, "hand_size": 5, "dead_hand": True, "blind_exchanges": True}),
                       (5, {"deals": 2, "jack_five_bonus": True, "price_cap": 3})],
    spekulation.NAME: [(6, {})], speculate.NAME: [(6, {})], big_shot.NAME: [(4, {}), (2, {})]}


def _players(name: str) -> int:
    game = get_game(name)
    return min(max(PLAYERS, game.MIN_PLAYERS), game.MAX_PLAYERS)


def _payload_cases() -> list:
    cases = []
    for name in (t.name for t in game_types()):
        game = get_game(name)
        for players, options in PAYLOAD_CASES.get(name, [(game.MAX_PLAYERS, {}), (game.MIN_PLAYERS, {})]):
            cases.append(pytest.param(name, players, options, id=f"{name}-{players}p"))
    return cases


class Contract:
    """Every request and response checked against the OpenAPI document."""

    def __init__(self, spec: dict):
        self.spec = spec
        self.routes = []
        for path, operations in spec["paths"].items():
            pattern = re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$")
            for method, operation in operations.items():
                if method in ("get", "post", "put", "delete"):
                    self.routes.append((method.upper(), pattern, operation))
        self._validators: dict[str, jsonschema_rs.Draft202012Validator] = {}
        self.checked = {"requests": 0, "responses": 0, "operations": set()}

    def _validator(self, schema: dict):
        key = json.dumps(schema, sort_keys=True)
        if key not in self._validators:
            self._validators[key] = jsonschema_rs.Draft202012Validator(
                {**schema, "components": self.spec["components"]})
        return self._validators[key]

    def _check(self, schema: dict, instance, where: str):
        errors = [f"{e.message} at {list(e.instance_path)}" for e in self._validator(schema).iter_errors(instance)]
        assert not errors, f"{where}: {errors[:3]} in {json.dumps(instance)[:800]}"

    def operation(self, request: httpx.Request) -> dict:
        for method, pattern, operation in self.routes:
            if method == request.method and pattern.match(request.url.path):
                return operation
        raise AssertionError(f"{request.method} {request.url.path} is not in the OpenAPI document")

    def request(self, request: httpx.Request):
        operation = self.operation(request)
        declared = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
        assert set(request.url.params) <= declared, (operation["operationId"], dict(request.url.params))
        if request.content:
            schema = operation["requestBody"]["content"]["application/json"]["schema"]
            self._check(schema, json.loads(request.content), f"{operation['operationId']} request")
        self.checked["requests"] += 1

    def response(self, response: httpx.Response):
        response.read()
        operation = self.operation(response.request)
        declared = operation["responses"].get(str(response.status_code))
        assert declared, f"{operation['operationId']}: status {response.status_code} is not declared"
        kind = response.headers.get("content-type", "").split(";")[0]
        assert kind in declared.get("content", {}), f"{operation['operationId']}: {kind} not declared"
        schema = declared["content"][kind]["schema"]
        if kind == "application/json":
            self._check(schema, response.json(), f"{operation['operationId']} {response.status_code}")
        for header in declared.get("headers", {}):
            assert header in response.headers, f"{operation['operationId']}: header {header} missing"
        self.checked["responses"] += 1
        self.checked["operations"].add(operation["operationId"])


@pytest.fixture(scope="module")
def client_package(tmp_path_factory):
    """A client generated fresh from the service's /openapi.json (the generator must not warn)."""
    spec = create_app({"RATE_LIMIT": None, "REDIS_URL": None}).test_client().get("/openapi.json").json
    out = tmp_path_factory.mktemp("client")
    generate(str(out), meta="none", document=spec)
    sys.path.insert(0, str(out))
    try:
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]
        yield importlib.import_module(PACKAGE), spec
    finally:
        sys.path.remove(str(out))


def test_the_document_is_valid_openapi_3_1():
    spec = create_app({"RATE_LIMIT": None, "REDIS_URL": None}).test_client().get("/openapi.json").json
    assert spec["openapi"].startswith("3.1")
    assert [str(e) for e in OpenAPIV31SpecValidator(spec).iter_errors()] == []
    ids = [op["operationId"] for ops in spec["paths"].values() for m, op in ops.items() if m in ("get", "post")]
    assert len(ids) == len(set(ids)), ids
    for ops in spec["paths"].values():
        for op in (o for m, o in ops.items() if m in ("get", "post")):
            assert {"429", "503"} <= set(op["responses"]), op["operationId"]
            for status in ("429", "503"):
                assert "Retry-After" in op["responses"][status]["headers"]


def test_every_legal_action_matches_exactly_one_branch_of_the_action_union():
    from projections.registry import all_games
    from service.openapi import action_components

    components, per_game = action_components()
    spec = {"components": {"schemas": components}}
    union = jsonschema_rs.Draft202012Validator({"$ref": "#/components/schemas/Action", **spec})
    branches = [name for name, c in components.items() if "properties" in c]
    singles = {n: jsonschema_rs.Draft202012Validator({"$ref": f"#/components/schemas/{n}", **spec}) for n in branches}
    for name, game in all_games().items():
        for kind, spec_ in game.ACTIONS.by_type.items():
            example = {"type": kind, **{f: _example_value(field) for f, field in spec_.fields.items()}}
            assert union.is_valid(example), (name, example)
            matching = [n for n, v in singles.items() if v.is_valid(example)]
            assert matching == [per_game[name][kind]], (name, example, matching)
    assert not union.is_valid({"type": "pass", "amount": 3}), "a closed branch admitted an extra field"
    assert not union.is_valid({"type": "bid"}), "a branch admitted a missing field"


def _example_value(field):
    from projections import kernel

    if isinstance(field, kernel.Int):
        return field.min if field.min is not None else 0
    if isinstance(field, kernel.Choice):
        return field.choices[0]
    return True


def _camel(name: str) -> str:
    return "".join(w.capitalize() for w in name.split("-"))


class _Tag:
    """The generated client's operations of one tag: `_Tag("play").get_view.sync(...)`."""

    def __init__(self, tag: str):
        self.tag = tag

    def __getattr__(self, name: str):
        return importlib.import_module(f"{PACKAGE}.api.{self.tag}.{name}")


def _fill(template: dict, rng: random.Random) -> dict:
    return {k: rng.randint(v["min"], v["max"]) if isinstance(v, dict) and set(v) == {"min", "max"} else v
            for k, v in template.items()}


@pytest.mark.parametrize("game_type", [t.name for t in game_types()])
def test_a_generated_client_plays_the_game_to_the_end(game_type, client_package, fake_redis):
    package, spec = client_package
    api, play, history = (_Tag(tag) for tag in ("games", "play", "history"))
    models = importlib.import_module(f"{PACKAGE}.models")
    contract = Contract(spec)
    jobs = MemoryJobs()
    app = create_app({"RATE_LIMIT": None}, backend=Backend(fake_redis, fake_redis, False), jobs=jobs)
    options, players = SHORT.get(game_type, {}), _players(game_type)
    httpx_args = {"transport": httpx.WSGITransport(app=app),
                  "event_hooks": {"request": [contract.request], "response": [contract.response]}}
    anonymous = package.Client(base_url="http://service", httpx_args=httpx_args, raise_on_unexpected_status=True)

    created = api.create_game.sync(client=anonymous, body=models.CreateGame.from_dict(
        {"type": game_type, "options": options, "seats": [{}] * players}))
    assert isinstance(created, models.GameSummary), created
    game_id = created.game_id
    seats = []
    for seat in range(players):
        claimed = api.claim_seat.sync(game_id, seat, client=anonymous, body=models.Claim(name=f"client{seat}"))
        assert isinstance(claimed, models.Claimed), claimed
        seats.append(package.AuthenticatedClient(base_url="http://service", token=claimed.token,
                                                 httpx_args=httpx_args, raise_on_unexpected_status=True))
    rng = random.Random(game_type)
    for n in range(20_000):
        view = play.get_view.sync(game_id, client=seats[0])
        assert type(view).__name__ == f"{_camel(game_type)}View", view  # the union, by the game's type
        if view.status != "active":
            break
        seat = rng.choice(view.to_act)
        mine = play.get_view.sync(game_id, client=seats[seat])
        templates = [item.to_dict() for item in mine.legal_actions]
        assert templates, f"seat {seat} is to act with no legal action"
        # bound to the version and to the seat's decision (what a simultaneous choice needs)
        body = models.ActionRequest.from_dict({"action": _fill(rng.choice(templates), rng),
                                               "expected_version": mine.version, "decision": mine.decision})
        done = play.post_action.sync(game_id, client=seats[seat], body=body, idempotency_key=f"a{n}")
        assert isinstance(done, models.ActionResponse), done
    else:
        pytest.fail("the game did not end")
    jobs.drain(app.extensions["games"])
    summary = api.get_game.sync(game_id, client=anonymous)
    assert summary.status == "scored" and summary.result is not None
    report = history.verify_game.sync(game_id, client=anonymous)
    assert report.ok and report.seed_checked
    assert history.get_ledger.sync(game_id, client=anonymous).entries
    events = history.list_events.sync(game_id, client=seats[1])
    assert events.version == summary.version
    replay = history.get_replay.sync(game_id, client=anonymous, at=max(1, summary.version // 2))
    assert replay.version == max(1, summary.version // 2)
    exported = history.export_game.sync_detailed(game_id, client=anonymous)
    assert exported.status_code == 200 and exported.content.count(b"\n") == summary.version + 1
    # an error answer is typed too: a stale expected_version is a 409 in the envelope
    stale = play.post_action.sync(game_id, client=seats[0], idempotency_key="late", body=models.ActionRequest.from_dict(
        {"action": {"type": "pass"}, "expected_version": 1}))
    assert isinstance(stale, models.Error) and stale.error.code in ("version_conflict", "game_not_active")
    assert contract.checked["responses"] > 20
    assert {"createGame", "claimSeat", "getView", "postAction", "getGame", "verifyGame", "getLedger",
            "listEvents", "getReplay", "exportGame"} <= contract.checked["operations"]


@pytest.mark.parametrize("name", __import__("tests.golden_games", fromlist=["golden_names"]).golden_names())
def test_every_view_and_event_of_the_golden_games_fits_the_typed_payloads(name):
    """Each golden game's recorded views (every seat, the spectator, at every view point) and
    its events as every viewer saw them live and after the end: each matches exactly one
    branch of the View and Event unions."""
    from projections import disclosure
    from service.schemas import ViewSchema
    from tests.golden_games import decode_export, load_case

    spec = create_app({"RATE_LIMIT": None, "REDIS_URL": None}).test_client().get("/openapi.json").json
    contract = Contract(spec)
    records, observed = load_case(name)
    header, _, events = decode_export(records)
    as_served = ViewSchema()  # the API answers a view through its schema
    for version, views in observed["views"].items():
        for viewer, view in views.items():
            contract._check(_ref("View"), as_served.dump(view), f"{name} view of {viewer} at {version}")
    for viewer in [None, *range(len(observed["views"][next(iter(observed["views"]))]) - 1)]:
        for finished in (False, True):
            shown, _ = disclosure.events_for(events, None, viewer, finished, header["game_id"])
            contract._check({"type": "array", "items": _ref("Event")}, shown, f"{name} events of {viewer}")


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def test_the_examples_are_real_answers_that_fit_their_schemas():
    spec = create_app({"RATE_LIMIT": None, "REDIS_URL": None}).test_client().get("/openapi.json").json
    contract = Contract(spec)
    found = 0
    for ops in spec["paths"].values():
        for op in (o for m, o in ops.items() if m in ("get", "post")):
            media = [op.get("requestBody", {}).get("content", {}).get("application/json", {})]
            media += [r.get("content", {}).get("application/json", {}) for r in op["responses"].values()]
            for entry in media:
                if "example" in entry:
                    contract._check(entry["schema"], entry["example"], f"{op['operationId']} example")
                    found += 1
    assert found >= 9
    action = spec["paths"]["/v1/games/{game_id}/actions"]["post"]
    assert action["requestBody"]["content"]["application/json"]["example"]["action"]["type"] == "bid"


def test_the_readme_client_example_runs(client_package):
    """The README's Python example, as written, against a live service, with the fresh client."""
    import os

    import web_kit

    with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "README.md"), encoding="utf-8") as handle:
        code = handle.read().split("```python\n", 1)[1].split("```", 1)[0]
    live = web_kit.LiveServer().start()
    try:
        namespace: dict = {}
        exec(compile(code.replace("http://127.0.0.1:5000", live.url), "README.md", "exec"), namespace)
    finally:
        live.stop()
    assert type(namespace["view"]).__name__ == "BigShotView" and namespace["view"].status == "active"


@pytest.mark.parametrize("game_type, players, options", _payload_cases())
def test_random_games_fit_the_typed_payloads_at_every_step(game_type, players, options, fake_redis):
    """Every seat's and the spectator's view after every action of a random game (as the API
    serves it), and every event as each viewer sees it live and after the end."""
    from projections import disclosure
    from service.schemas import ViewSchema

    spec = create_app({"RATE_LIMIT": None, "REDIS_URL": None}).test_client().get("/openapi.json").json
    contract, as_served = Contract(spec), ViewSchema()
    jobs = MemoryJobs()
    app = create_app({"RATE_LIMIT": None}, backend=Backend(fake_redis, fake_redis, False), jobs=jobs)
    service = app.extensions["games"]
    game_id = service.create(game_type, options, [{}] * players).game_id
    for seat in range(players):
        service.claim(game_id, seat, f"p{seat}")
    rng = random.Random(f"{game_type}{players}")
    for n in range(20_000):
        session = service.load(game_id)
        for viewer in [None, *range(players)]:
            view = disclosure.view_for(session, viewer)
            if viewer is not None:
                view["decision"] = session.decision(viewer)
            contract._check(_ref("View"), as_served.dump(view), f"view of {viewer} at {session.version}")
        if session.status != "active":
            break
        seat = rng.choice(session.to_act())
        service.act(game_id, seat, _fill(rng.choice(session.game.legal_actions(session.state, seat)), rng),
                    idempotency_key=f"a{n}")
    jobs.drain(service)
    stored = service.store.read(game_id, 0, service.load(game_id).version)
    for viewer in [None, *range(players)]:
        for finished in (False, True):
            shown, _ = disclosure.events_for(stored, None, viewer, finished, game_id)
            contract._check({"type": "array", "items": _ref("Event")}, shown, f"events of {viewer}")


def test_a_generated_client_leaves_a_seat_and_a_bot_plays_it_to_the_end(client_package, fake_redis):
    """leaveGame through the generated client: the typed answer and its retry, the typed 403
    `seat_left` after it, the `seat.left` event typed in the Event union, the seat shown as a
    bot's that its person left; the other seat plays on and the game is scored."""
    package, spec = client_package
    api, play, history = (_Tag(tag) for tag in ("games", "play", "history"))
    models = importlib.import_module(f"{PACKAGE}.models")
    contract = Contract(spec)
    jobs = MemoryJobs()
    app = create_app({"RATE_LIMIT": None}, backend=Backend(fake_redis, fake_redis, False), jobs=jobs)
    httpx_args = {"transport": httpx.WSGITransport(app=app),
                  "event_hooks": {"request": [contract.request], "response": [contract.response]}}
    anonymous = package.Client(base_url="http://service", httpx_args=httpx_args, raise_on_unexpected_status=True)
    created = api.create_game.sync(client=anonymous, body=models.CreateGame.from_dict(
        {"type": big_shot.NAME, "seats": [{}, {}], "leave_level": "random"}))
    game_id = created.game_id
    seats = []
    for seat in range(2):
        claimed = api.claim_seat.sync(game_id, seat, client=anonymous, body=models.Claim(name=f"client{seat}"))
        seats.append(package.AuthenticatedClient(base_url="http://service", token=claimed.token,
                                                 httpx_args=httpx_args, raise_on_unexpected_status=True))
    left = play.leave_game.sync(game_id, client=seats[1], body=models.LeaveRequest(),
                                idempotency_key="leave-0123456789abcdef")
    assert isinstance(left, models.Left) and (left.seat, left.level) == (1, "random"), left
    again = play.leave_game.sync_detailed(game_id, client=seats[1], body=models.LeaveRequest())
    assert again.parsed.to_dict() == left.to_dict() and again.headers["Idempotent-Replayed"] == "true"
    refused = play.get_view.sync(game_id, client=seats[1])
    assert isinstance(refused, models.Error) and refused.error.code == "seat_left", refused
    events = history.list_events.sync(game_id, client=seats[0]).events
    assert [type(e).__name__ for e in events if e.type_ == "seat.left"] == ["SeatLeftPlatformEvent"]
    rng = random.Random(7)
    for n in range(5_000):
        jobs.drain(app.extensions["games"])
        mine = play.get_view.sync(game_id, client=seats[0])
        if mine.status != "active":
            break
        if not mine.legal_actions:
            continue
        body = models.ActionRequest.from_dict({"action": _fill(rng.choice([a.to_dict() for a in mine.legal_actions]),
                                                               rng), "decision": mine.decision})
        assert isinstance(play.post_action.sync(game_id, client=seats[0], body=body, idempotency_key=f"a{n}"),
                          models.ActionResponse)
    jobs.drain(app.extensions["games"])
    summary = api.get_game.sync(game_id, client=anonymous)
    assert summary.status == "scored" and summary.seats[1].left is True and summary.seats[1].kind == "bot"
    assert history.verify_game.sync(game_id, client=anonymous).ok
    assert "leaveGame" in contract.checked["operations"]
