"""A `search` seat's budget end to end: POST /v1/games takes it (only on a search bot's seat,
within the configured SEARCH_MAX_* limits), the creation event records it (only when given),
the seats show it, and the worker hands it to the policy with the service's limits.

The policy itself is replaced by a recorder here: these tests do not need the search to run."""

import importlib

import httpx
import pytest

from ops.client import PACKAGE
from service.app import create_app
from service.bootstrap import Backend, search_limits
from service.cli import main as cli_main
from service.cli import EXIT_USAGE
from service.settings import SettingsError, load
from service_kit import make_service
from workers import jobs as job_functions
from workers.bots import SearchLimits, budget_from, random_bot
from workers.memory_jobs import MemoryJobs

from test_generated_client import Contract, client_package  # noqa: F401 (a fixture: a client generated fresh)

BUDGET = {"iterations": 500, "time_ms": 50}


def make_app(fake_redis, **config):
    jobs = MemoryJobs()
    app = create_app({"RATE_LIMIT": None, **config}, backend=Backend(fake_redis, fake_redis, False), jobs=jobs)
    return app, jobs


@pytest.fixture
def app(fake_redis):
    return make_app(fake_redis)[0]


def create(http, *seats, **headers):
    return http.post("/v1/games", json={"type": "speculation", "seats": list(seats)}, headers=headers)


def nothing_created(app, fake_redis) -> bool:
    lobby = app.test_client().get("/v1/games").json
    return lobby["total"] == 0 and not fake_redis.keys("game:*")


def test_a_search_seat_with_a_budget_is_created_recorded_and_shown(app):
    http = app.test_client()
    response = create(http, {}, {"bot": "search", "budget": BUDGET}, {"bot": "search"})
    assert response.status_code == 201, response.json
    game = response.json
    assert game["seats"] == [{"kind": "open"}, {"kind": "bot", "level": "search", "budget": BUDGET},
                             {"kind": "bot", "level": "search"}]
    assert isinstance(game["seats"][1]["budget"]["time_ms"], int)   # 50 stays 50, not 50.0
    detail = http.get(f"/v1/games/{game['game_id']}").json
    assert detail["seats"] == game["seats"] and detail["view"]["seats"] == game["seats"]
    # the creation event: the budget only on the seat that was given one
    created = http.get(f"/v1/games/{game['game_id']}/events").json["events"][0]
    assert created["type"] == "game.created"
    assert created["data"]["seats"] == game["seats"]
    # the session's seat info
    seats = app.extensions["games"].load(game["game_id"]).seats
    assert seats[1].budget == BUDGET and seats[2].budget is None and seats[0].budget is None
    assert "search" in http.get("/v1/game-types").json["game_types"][0]["bot_levels"]


def test_a_fractional_time_and_either_field_alone_are_taken(app):
    http = app.test_client()
    game = create(http, {}, {"bot": "search", "budget": {"time_ms": 12.5}},
                  {"bot": "search", "budget": {"iterations": 20000}}).json
    assert [s.get("budget") for s in game["seats"]] == [None, {"time_ms": 12.5}, {"iterations": 20000}]


def test_an_empty_budget_records_nothing(app):
    game = create(app.test_client(), {}, {"bot": "search", "budget": {}}, {"bot": "heuristic"}).json
    assert game["seats"][1] == {"kind": "bot", "level": "search"}


OVER_THE_LIMITS = [
    ({"time_ms": 200.5}, "seats.1.budget.time_ms"),
    ({"time_ms": 201}, "seats.1.budget.time_ms"),
    ({"iterations": 20001}, "seats.1.budget.iterations"),
    ({"iterations": 10, "time_ms": 1000}, "seats.1.budget.time_ms"),
]


@pytest.mark.parametrize("budget,field", OVER_THE_LIMITS)
def test_a_budget_over_the_limits_is_refused_naming_the_field(app, fake_redis, budget, field):
    response = create(app.test_client(), {}, {"bot": "search", "budget": budget}, {"bot": "random"})
    assert response.status_code == 422
    error = response.json["error"]
    assert error["code"] == "invalid" and error["details"]["field"] == field
    assert error["message"].startswith(f"{field}: ") and ("at most" in error["message"] or "to 20000" in error["message"])
    assert nothing_created(app, fake_redis)


ON_ANOTHER_SEAT = [
    ({"bot": "heuristic", "budget": {"time_ms": 50}}, "heuristic"),
    ({"bot": "random", "budget": {}}, "random"),
    ({"budget": {"time_ms": 50}}, "open"),
    ({"open": True, "budget": {"iterations": 5}}, "open"),
]


@pytest.mark.parametrize("seat,kind", ON_ANOTHER_SEAT)
def test_a_budget_on_any_seat_but_a_search_bot_is_refused(app, fake_redis, seat, kind):
    response = create(app.test_client(), {"bot": "search"}, seat, {"bot": "random"})
    assert response.status_code == 422
    error = response.json["error"]
    assert error["details"]["field"] == "seats.1.budget"
    assert error["message"].startswith("seats.1.budget: only a search bot takes a budget") and kind in error["message"]
    assert nothing_created(app, fake_redis)


MALFORMED = [
    ({"iterations": "500"}, "seats.1.budget.iterations"),
    ({"iterations": 2.5}, "seats.1.budget.iterations"),
    ({"iterations": True}, "seats.1.budget.iterations"),
    ({"iterations": 0}, "seats.1.budget.iterations"),
    ({"iterations": None}, "seats.1.budget.iterations"),
    ({"time_ms": "50"}, "seats.1.budget.time_ms"),
    ({"time_ms": False}, "seats.1.budget.time_ms"),
    ({"time_ms": 0}, "seats.1.budget.time_ms"),
    ({"time_ms": -5}, "seats.1.budget.time_ms"),
    ({"time_ms": [50]}, "seats.1.budget.time_ms"),
    ({"depth": 3}, "seats.1.budget.depth"),
    ({"time_ms": 50, "Iterations": 5}, "seats.1.budget.Iterations"),
    ("fast", "seats.1.budget"),
    ([50], "seats.1.budget"),
    (None, "seats.1.budget"),
]


@pytest.mark.parametrize("budget,field", MALFORMED)
def test_a_malformed_budget_is_refused_naming_the_field(app, fake_redis, budget, field):
    response = create(app.test_client(), {}, {"bot": "search", "budget": budget}, {"bot": "random"})
    assert response.status_code == 422, response.json
    error = response.json["error"]
    assert error["code"] == "invalid" and error["message"].startswith(f"{field}: "), error
    assert nothing_created(app, fake_redis)


def test_the_core_checks_the_budget_too(fake_redis):
    """Callers of the core that skip the HTTP schema (tools, the CLI's in-process paths) get
    the same checks, each naming the field."""
    from service.core.errors import Invalid

    service, _ = make_service(fake_redis, search_limits=SearchLimits(max_iterations=100, max_time_ms=10))
    for budget, field in (({"iterations": 101}, "seats.0.budget.iterations"), ({"time_ms": True}, "seats.0.budget.time_ms"),
                          ({"x": 1}, "seats.0.budget.x"), ("fast", "seats.0.budget")):
        with pytest.raises(Invalid) as refused:
            service.create("speculation", {}, [{"bot": "search", "budget": budget}, {}, {}])
        assert refused.value.details["field"] == field and refused.value.message.startswith(field + ": ")
    session = service.create("speculation", {}, [{"bot": "search", "budget": {"iterations": 100, "time_ms": None}},
                                                 {}, {}])
    assert session.seats[0].budget == {"iterations": 100}


def test_the_limits_come_from_the_configuration(fake_redis):
    app, _ = make_app(fake_redis, SEARCH_MAX_TIME_MS=50, SEARCH_MAX_ITERATIONS=1000)
    http = app.test_client()
    refused = create(http, {}, {"bot": "search", "budget": {"time_ms": 100}}, {"bot": "random"})
    assert refused.status_code == 422 and refused.json["error"]["details"]["field"] == "seats.1.budget.time_ms"
    assert "at most 50" in refused.json["error"]["message"]
    refused = create(http, {}, {"bot": "search", "budget": {"iterations": 1001}}, {"bot": "random"})
    assert refused.status_code == 422 and refused.json["error"]["details"]["field"] == "seats.1.budget.iterations"
    assert nothing_created(app, fake_redis)
    taken = create(http, {}, {"bot": "search", "budget": {"time_ms": 50, "iterations": 1000}}, {"bot": "random"})
    assert taken.status_code == 201
    # the OpenAPI document states this service's limits
    schema = http.get("/openapi.json").json["components"]["schemas"]["SearchBudget"]
    assert schema["properties"]["time_ms"]["maximum"] == 50 and schema["properties"]["time_ms"]["exclusiveMinimum"] == 0
    assert schema["properties"]["iterations"]["maximum"] == 1000 and schema["additionalProperties"] is False
    # and a bigger limit takes a bigger budget
    app, _ = make_app(fake_redis, SEARCH_MAX_TIME_MS=1000)
    assert create(app.test_client(), {}, {"bot": "search", "budget": {"time_ms": 500}}, {}).status_code == 201


def test_the_settings_are_read_from_the_environment():
    config = load({"SPECULATION_SEARCH_MAX_TIME_MS": "50", "SPECULATION_SEARCH_MAX_ITERATIONS": "3000"})
    assert search_limits(config) == SearchLimits(max_iterations=3000, max_time_ms=50.0)
    assert search_limits(load({})) == SearchLimits(max_iterations=20000, max_time_ms=200.0)
    for variable, value in (("SPECULATION_SEARCH_MAX_TIME_MS", "0"), ("SPECULATION_SEARCH_MAX_TIME_MS", "fast"),
                            ("SPECULATION_SEARCH_MAX_ITERATIONS", "1.5"), ("SPECULATION_SEARCH_MAX_ITERATIONS", "0")):
        with pytest.raises(SettingsError, match=variable):
            load({variable: value})


def test_a_retry_with_the_same_key_needs_the_same_budget(app):
    http = app.test_client()
    key = {"Idempotency-Key": "budget-retry-key-0123456789"}
    first = create(http, {}, {"bot": "search", "budget": BUDGET}, {"bot": "random"}, **key)
    again = create(http, {}, {"bot": "search", "budget": BUDGET}, {"bot": "random"}, **key)
    assert first.status_code == 201 and again.status_code == 201
    assert again.json["game_id"] == first.json["game_id"] and again.headers["Idempotent-Replayed"] == "true"
    other = create(http, {}, {"bot": "search", "budget": {"time_ms": 10}}, {"bot": "random"}, **key)
    assert other.status_code == 409 and other.json["error"]["code"] == "idempotency_conflict"


# --- the contract ---------------------------------------------------------------------------------

def test_the_document_describes_the_budget_and_the_answers_fit_it(app):
    """Requests and answers with a budget, checked against the OpenAPI document (Draft 2020-12),
    and the schema refuses what the service refuses."""
    import jsonschema_rs

    http = app.test_client()
    spec = http.get("/openapi.json").json

    def valid(name: str, instance) -> bool:
        return jsonschema_rs.Draft202012Validator({"$ref": f"#/components/schemas/{name}",
                                                   "components": spec["components"]}).is_valid(instance)

    body = {"type": "speculation", "seats": [{}, {"bot": "search", "budget": BUDGET}, {"bot": "search"}]}
    assert valid("CreateGame", body)
    for budget, _ in OVER_THE_LIMITS + [b for b in MALFORMED if b[0] is not None]:
        assert not valid("SearchBudget", budget), budget
    game = http.post("/v1/games", json=body).json
    assert valid("GameSummary", game) and valid("GameDetail", http.get(f"/v1/games/{game['game_id']}").json)
    events = http.get(f"/v1/games/{game['game_id']}/events").json
    assert valid("Events", events) and events["events"][0]["data"]["seats"][1]["budget"] == BUDGET
    assert spec["components"]["schemas"]["SeatRequest"]["properties"]["budget"]["$ref"].endswith("/SearchBudget")
    assert spec["components"]["schemas"]["Seat"]["properties"]["budget"]["$ref"].endswith("/SeatBudget")


def test_a_generated_client_creates_a_search_seat_with_a_budget(client_package, fake_redis):
    package, spec = client_package
    models = importlib.import_module(f"{PACKAGE}.models")
    create_game = importlib.import_module(f"{PACKAGE}.api.games.create_game")
    get_game = importlib.import_module(f"{PACKAGE}.api.games.get_game")
    app, _ = make_app(fake_redis)
    contract = Contract(spec)
    client = package.Client(base_url="http://service", raise_on_unexpected_status=True, httpx_args={
        "transport": httpx.WSGITransport(app=app),
        "event_hooks": {"request": [contract.request], "response": [contract.response]}})
    created = create_game.sync(client=client, body=models.CreateGame.from_dict(
        {"type": "speculation", "seats": [{}, {"bot": "search", "budget": BUDGET}, {"bot": "heuristic"}]}))
    assert isinstance(created, models.GameSummary), created
    assert created.seats[1].budget.iterations == 500 and created.seats[1].budget.time_ms == 50
    assert created.to_dict()["seats"][1]["budget"] == BUDGET
    detail = get_game.sync(created.game_id, client=client)
    assert detail.seats[1].to_dict() == {"kind": "bot", "level": "search", "budget": BUDGET}
    # a budget past the limits: the document's own maximum says so (the request check refuses
    # it), and the service answers the typed error naming the field
    sloppy = package.Client(base_url="http://service", raise_on_unexpected_status=True, httpx_args={
        "transport": httpx.WSGITransport(app=app), "event_hooks": {"response": [contract.response]}})
    refused = create_game.sync(client=sloppy, body=models.CreateGame.from_dict(
        {"type": "speculation", "seats": [{}, {"bot": "search", "budget": {"time_ms": 500}}, {}]}))
    assert isinstance(refused, models.Error) and refused.error.details.field == "seats.1.budget.time_ms"


# --- the worker ---------------------------------------------------------------------------------

@pytest.fixture
def recorded(monkeypatch):
    """Every policy(...) the worker asks for, with its arguments; it plays the random bot."""
    calls = []

    def recording_policy(game_type, level, budget=None, limits=SearchLimits()):
        calls.append({"game_type": game_type, "level": level, "budget": budget, "limits": limits})
        return random_bot.choose

    monkeypatch.setattr(job_functions, "policy", recording_policy)
    return calls


def test_the_worker_passes_the_stored_budget_and_the_service_limits(fake_redis, recorded):
    limits = SearchLimits(max_iterations=800, max_time_ms=60)
    service, jobs = make_service(fake_redis, search_limits=limits)
    session = service.create("secret-duel", {}, [{"bot": "search", "budget": BUDGET}, {"bot": "random"}])
    jobs.drain(service)
    assert service.load(session.game_id).status == "scored"
    searched = [c for c in recorded if c["level"] == "search"]
    others = [c for c in recorded if c["level"] != "search"]
    assert searched and others
    assert all(c["budget"] == BUDGET and c["limits"] == limits for c in searched)
    assert all(c["budget"] is None and c["limits"] == limits for c in others)
    # the policy searches with the budget within the limits
    assert budget_from(searched[0]["budget"], searched[0]["limits"]) == budget_from(BUDGET)
    moves = [e.cmd["by"] for e in service.store.read(session.game_id) if e.cmd]
    assert "bot:search" in moves


def test_a_stored_budget_is_clamped_to_the_limits_the_worker_runs_with(fake_redis, recorded):
    """A game created under generous limits, played by a worker whose limits were lowered since:
    the worker passes its own limits, and the budget is clamped to them."""
    generous, _ = make_service(fake_redis, search_limits=SearchLimits(max_iterations=20000, max_time_ms=1000))
    session = generous.create("secret-duel", {}, [{"bot": "search", "budget": {"iterations": 15000, "time_ms": 900}},
                                                  {"bot": "random"}])
    lowered = SearchLimits(max_iterations=300, max_time_ms=25)
    worker, _ = make_service(fake_redis, search_limits=lowered)
    _, game_id, seat, version = next(j for j in generous.jobs.pending if j[0] == "bot_turn")
    assert job_functions.bot_turn(worker, game_id, seat, version) == "played"
    call = recorded[-1]
    assert call["level"] == "search" and call["budget"] == {"iterations": 15000, "time_ms": 900}
    assert call["limits"] == lowered
    budget = budget_from(call["budget"], call["limits"])
    assert (budget.iterations, budget.time_ms) == (300, 25.0)
    assert worker.load(session.game_id).seats[0].budget == {"iterations": 15000, "time_ms": 900}


def test_the_embedded_app_worker_gets_the_configured_limits(fake_redis, recorded):
    app, jobs = make_app(fake_redis, SEARCH_MAX_TIME_MS=40, SEARCH_MAX_ITERATIONS=700)
    http = app.test_client()
    game = http.post("/v1/games", json={"type": "secret-duel", "seats": [{"bot": "search", "budget": {"time_ms": 30}},
                                                                         {"bot": "random"}]}).json
    jobs.drain(app.extensions["games"])
    searched = [c for c in recorded if c["level"] == "search"]
    assert searched and all(c["limits"] == SearchLimits(max_iterations=700, max_time_ms=40.0) for c in searched)
    assert all(c["budget"] == {"time_ms": 30} for c in searched)
    assert http.get(f"/v1/games/{game['game_id']}").json["status"] == "scored"


# --- the command line ---------------------------------------------------------------------------

def test_the_cli_takes_a_search_budget_only_with_the_search_level(capsys):
    from service.cli import search_budget

    assert search_budget("search", None, None) is None
    assert search_budget("search", 500, 50.0) == {"iterations": 500, "time_ms": 50}
    assert search_budget("search", None, 12.5) == {"time_ms": 12.5}
    for command in ("play", "demo"):
        with pytest.raises(SystemExit) as stopped:
            cli_main([command, *(["speculation"] if command == "play" else []), "--level", "heuristic",
                      "--time-ms", "50"])
        assert stopped.value.code == EXIT_USAGE
        assert "--level search" in capsys.readouterr().err
        cli_main([command, "--help"])
        shown = capsys.readouterr().out
        assert "--iterations" in shown and "--time-ms" in shown and "search" in shown
