"""The OpenAPI contract beyond what the marshmallow schemas say by themselves: an operationId,
every error status and examples from a real game for each operation, the typed action union,
and the typed payloads (the view by game type, the event by event type).

flask-smorest builds the document from the routes' decorators; `ContractPlugin` is an apispec
plugin that runs after marshmallow's and completes each operation and schema from the tables
below, so the contract is written in one place and a route without an entry fails at start-up.

Actions: one closed schema (`additionalProperties: false`, every field required) per distinct
shape, a shape being the action `type` with its field names. Two games whose action has the
same type and fields share one schema (`PassAction`, `BidAction`), with the union of their
ranges and choices (each game still checks its own); shapes of one type that differ in their
fields (`buy` in speculate and in spekulation) get one schema each, under a union named after
the type. The union `Action` is a strict `oneOf` that every valid action matches exactly once
(two shapes of a type differ in a required field, and none admits another's), discriminated
by `type`.

Payloads: `View` becomes a union of one view per game (discriminated by its `type`) with the
game's `…State` and `…LegalAction` (its actions as templates); `Event` a union of one closed
schema per event type. The state and event data schemas are in the contract file each game's
GameType names, service/contract/payloads.json for the hosted games (inferred from real games
by docs/tools/gen_payload_schemas.py), the examples in service/contract/examples.json
(docs/tools/gen_examples.py).
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable

from apispec import BasePlugin

from projections import kernel
from projections.registry import all_games, game_types

ERROR_REF = {"$ref": "#/components/schemas/Error"}
RETRY_AFTER = {"Retry-After": {"description": "seconds to wait before retrying",
                               "schema": {"type": "integer", "minimum": 0}}}

# Every status the service answers with, what it means, and whether it carries Retry-After.
ERRORS = {
    400: ("malformed body: not JSON, or not a JSON object", False),
    401: ("no token where one is required, or an unknown, revoked or expired token or ticket", False),
    403: ("a valid token that does not give access: a token of another game or account, a missing "
          "scope (missing_scope, details.scope), a cookie request without its X-CSRF-Token", False),
    404: ("no such game, seat or game type", False),
    409: ("a conflict: a stale expected_version or round, a seat already taken, a reused "
          "Idempotency-Key; details.version is the game's current version", False),
    413: ("the body is larger than the service's limit", False),
    422: ("invalid fields, or an action the rules refuse now (out of turn included); "
          "the message and details.field name the field", False),
    429: ("too many requests (rate limit) or too many open streams and long-polls", True),
    503: ("the store cannot be reached now; nothing was acknowledged", True),
}
_EVERY = (429, 503)
_BODY = (400, 413, 422)
_TOKEN = (401, 403, 404)

# (method, path) -> (operationId, the error statuses it can answer with).
OPERATIONS: dict[tuple[str, str], tuple[str, tuple[int, ...]]] = {
    ("get", "/v1/game-types"): ("listGameTypes", _EVERY),
    ("get", "/v1/games"): ("listGames", (422, *_EVERY)),
    ("post", "/v1/games"): ("createGame", (*_BODY, 409, *_EVERY)),
    ("get", "/v1/games/{game_id}"): ("getGame", (404, *_EVERY)),
    ("post", "/v1/games/{game_id}/seats/{seat}"): ("claimSeat", (*_BODY, *_TOKEN, 409, *_EVERY)),
    ("get", "/v1/games/{game_id}/view"): ("getView", (*_TOKEN, 422, *_EVERY)),
    ("post", "/v1/games/{game_id}/actions"): ("postAction", (*_BODY, *_TOKEN, 409, *_EVERY)),
    ("post", "/v1/games/{game_id}/leave"): ("leaveGame", (*_BODY, *_TOKEN, 409, *_EVERY)),
    ("get", "/v1/games/{game_id}/events"): ("listEvents", (*_TOKEN, 422, *_EVERY)),
    ("post", "/v1/games/{game_id}/stream-tickets"): ("createStreamTicket", (*_TOKEN, 422, *_EVERY)),
    ("get", "/v1/games/{game_id}/replay"): ("getReplay", (*_TOKEN, 422, *_EVERY)),
    ("get", "/v1/games/{game_id}/ledger"): ("getLedger", (*_TOKEN, 422, *_EVERY)),
    ("get", "/v1/games/{game_id}/verify"): ("verifyGame", (404, 422, *_EVERY)),
    ("get", "/v1/games/{game_id}/export"): ("exportGame", (*_TOKEN, 422, *_EVERY)),
    ("get", "/v1/leaderboards/{game_type}"): ("getLeaderboard", (404, 422, *_EVERY)),
    # accounts (docs/accounts.md)
    ("post", "/v1/accounts"): ("signUp", (*_BODY, 409, *_EVERY)),
    ("get", "/v1/accounts/{username}"): ("getProfile", (404, *_EVERY)),
    ("get", "/v1/accounts/{username}/ratings/{game_type}"): ("getRatingHistory", (404, *_EVERY)),
    ("post", "/v1/sessions"): ("signIn", (*_BODY, 401, *_EVERY)),
    ("delete", "/v1/session"): ("signOut", (401, 403, 422, *_EVERY)),
    ("get", "/v1/account"): ("getAccount", (401, 403, 404, *_EVERY)),
    ("post", "/v1/account/password"): ("changePassword", (*_BODY, 401, 403, *_EVERY)),
    ("post", "/v1/account/sign-out-everywhere"): ("signOutEverywhere", (401, 403, *_EVERY)),
    ("post", "/v1/account/recovery-codes"): ("replaceRecoveryCodes", (*_BODY, 401, 403, *_EVERY)),
    ("post", "/v1/account/recover"): ("recoverAccount", (*_BODY, 401, *_EVERY)),
    ("get", "/v1/account/tokens"): ("listTokens", (401, 403, *_EVERY)),
    ("post", "/v1/account/tokens"): ("createToken", (*_BODY, 401, 403, 409, *_EVERY)),
    ("delete", "/v1/account/tokens/{token_id}"): ("revokeToken", (*_TOKEN, *_EVERY)),
    ("get", "/v1/account/games"): ("listMyGames", (401, 403, 422, *_EVERY)),
    ("get", "/v1/account/events"): ("listAccountEvents", (401, 403, 422, *_EVERY)),
    ("post", "/v1/account/close"): ("closeAccount", (*_BODY, 401, 403, *_EVERY)),
    ("get", "/v1/account/export"): ("exportAccount", (401, 403, *_EVERY)),
    # finding a game (docs/matching.md)
    ("post", "/v1/challenges"): ("createChallenge", (*_BODY, *_TOKEN, 409, *_EVERY)),
    ("post", "/v1/challenges/{game_id}/accept"): ("acceptChallenge", (*_TOKEN, 409, 422, *_EVERY)),
    ("post", "/v1/challenges/{game_id}/decline"): ("declineChallenge", (*_TOKEN, 409, 422, *_EVERY)),
    ("post", "/v1/challenges/{game_id}/cancel"): ("cancelChallenge", (*_TOKEN, 409, 422, *_EVERY)),
    ("post", "/v1/games/{game_id}/rematch"): ("rematch", (*_BODY, *_TOKEN, 409, *_EVERY)),
    ("get", "/v1/account/preferences"): ("getPreferences", (401, 403, *_EVERY)),
    ("get", "/v1/seeks"): ("listSeeks", (401, 403, *_EVERY)),
    ("post", "/v1/seeks"): ("createSeek", (*_BODY, 401, 403, 409, *_EVERY)),
    ("delete", "/v1/seeks/{seek_id}"): ("cancelSeek", (*_TOKEN, *_EVERY)),
    ("put", "/v1/account/preferences"): ("setPreferences", (*_BODY, 401, 403, *_EVERY)),
    # the transparency log (docs/audit.md): public, no credential
    ("get", "/v1/log/tree-head"): ("getTreeHead", (404, *_EVERY)),
    ("get", "/v1/log/tree-heads"): ("getTreeHeadAtSize", (404, 422, *_EVERY)),
    ("get", "/v1/log/consistency"): ("getConsistencyProof", (422, *_EVERY)),
    ("get", "/v1/log/entries"): ("listLogEntries", (422, *_EVERY)),
    ("get", "/v1/games/{game_id}/checkpoints"): ("listCheckpoints", (404, 422, *_EVERY)),
    ("get", "/v1/games/{game_id}/bundle"): ("getBundle", (*_TOKEN, 422, *_EVERY)),
    # audit without trusting the operator (docs/audit.md)
    ("get", "/v1/keys"): ("listSigningKeys", _EVERY),
    # the table chat (docs/api.md, "Chat")
    ("get", "/v1/chat/presets"): ("listChatPresets", _EVERY),
    ("get", "/v1/games/{game_id}/chat"): ("getChat", (*_TOKEN, 422, *_EVERY)),
    ("post", "/v1/games/{game_id}/chat"): ("postChat", (*_BODY, *_TOKEN, 409, *_EVERY)),
    ("post", "/v1/games/{game_id}/chat/mutes"): ("muteChatSeat", (*_BODY, *_TOKEN, 409, *_EVERY)),
    ("delete", "/v1/games/{game_id}/chat/mutes/{target}"): ("unmuteChatSeat", (*_TOKEN, 409, 422, *_EVERY)),
}


# Operations where a seat token is optional: with one, the seat's view of things; without, the
# spectator's (OpenAPI: `security: [{}, {seatToken: []}]`).
OPTIONAL_TOKEN = {"listEvents", "createStreamTicket", "getReplay", "getLedger", "exportGame", "getBundle", "getChat"}


def _camel(*words: str) -> str:
    return "".join(part.capitalize() for w in words for part in w.replace("-", "_").split("_"))


# --- actions --------------------------------------------------------------------------------

def _field_schema(fields: list[kernel.Field]) -> dict:
    """The JSON Schema of one action field, merged over every game that shares the shape."""
    first = fields[0]
    if isinstance(first, kernel.Int):
        out: dict[str, Any] = {"type": "integer"}
        lows, highs = [f.min for f in fields], [f.max for f in fields]
        if None not in lows:
            out["minimum"] = min(lows)
        if None not in highs:
            out["maximum"] = max(highs)
        return out
    if isinstance(first, kernel.Choice):
        choices: list[str] = []
        for f in fields:
            choices += [c for c in f.choices if c not in choices]
        return {"type": "string", "enum": choices}
    if isinstance(first, kernel.Bool):
        return {"type": "boolean"}
    raise TypeError(f"no JSON Schema for the action field {first!r}")


def action_shapes(games: Iterable[tuple[str, Any]]) -> dict[tuple[str, tuple[str, ...]], list[tuple[str, Any]]]:
    """(type, field names) -> [(game name, kernel.Action)], in a stable order."""
    shapes: dict[tuple[str, tuple[str, ...]], list[tuple[str, Any]]] = {}
    for name, game in games:
        for kind, spec in sorted(game.ACTIONS.by_type.items()):
            shapes.setdefault((kind, tuple(sorted(spec.fields))), []).append((name, spec))
    return shapes


def action_components(games: Iterable[tuple[str, Any]] | None = None
                      ) -> tuple[dict[str, dict], dict[str, dict[str, str]]]:
    """The action components (one closed schema per shape, a union per type with several
    shapes, and `Action`, the discriminated union of them all) and, per game, {action type:
    component name}."""
    games = sorted(all_games().items()) if games is None else list(games)
    shapes = action_shapes(games)
    by_type: dict[str, list[str]] = {}
    components: dict[str, Any] = {}
    per_game: dict[str, dict[str, str]] = {}
    for (kind, names), users in sorted(shapes.items()):
        games_using = [g for g, _ in users]
        alone = sum(1 for (k, _) in shapes if k == kind) == 1
        # A type with one shape in several games: `BidAction`; else named after its games.
        component = _camel(kind) + "Action" if alone and len(users) > 1 else _camel(*games_using, kind) + "Action"
        components[component] = {
            "type": "object", "title": component,
            "description": f"`{kind}` in {', '.join(games_using)}",
            "properties": {"type": {"type": "string", "const": kind},
                           **{f: _field_schema([spec.fields[f] for _, spec in users]) for f in names}},
            "required": ["type", *names], "additionalProperties": False}
        by_type.setdefault(kind, []).append(component)
        for g in games_using:
            per_game.setdefault(g, {})[kind] = component
    mapping = {}
    for kind, names in sorted(by_type.items()):
        if len(names) == 1:
            mapping[kind] = f"#/components/schemas/{names[0]}"
        else:
            union = _camel(kind) + "Action"
            components[union] = {"title": union, "description": f"`{kind}`: one shape per game",
                                 "oneOf": [{"$ref": f"#/components/schemas/{n}"} for n in names]}
            mapping[kind] = f"#/components/schemas/{union}"
    components["Action"] = {
        "title": "Action", "description": "one of the games' actions: pick among the seat's legal_actions",
        "oneOf": [{"$ref": ref} for ref in mapping.values()],
        "discriminator": {"propertyName": "type", "mapping": mapping}}
    return components, per_game


# --- the plugin ------------------------------------------------------------------------------

class ContractPlugin(BasePlugin):
    """Completes flask-smorest's document: operationIds, error responses, typed payloads."""

    def __init__(self, schema_patches: dict[str, dict] | None = None, examples: dict | None = None):
        self.schema_patches = schema_patches or {}
        self.examples = load_examples() if examples is None else examples

    def operation_helper(self, path=None, operations=None, **kwargs):
        for method, operation in (operations or {}).items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            entry = OPERATIONS.get((method, path))
            if entry is None:
                raise RuntimeError(f"{method.upper()} {path}: add it to service/openapi.py OPERATIONS")
            operation_id, statuses = entry
            operation["operationId"] = operation_id
            if operation_id in OPTIONAL_TOKEN:
                operation["security"] = [{}, {"seatToken": []}, {"accountToken": ["read"]}, {"sessionCookie": []}]
            if operation_id == "claimSeat":   # a guest by name, or an account
                operation["security"] = [{}, {"accountToken": ["play"]}, {"sessionCookie": []}]
            responses: dict = {}
            for status, response in operation.get("responses", {}).items():
                if status == "default":
                    continue  # every error status is declared below
                # a route's @blp.doc(responses={"200": ...}) and @blp.response(200) meet here
                merged = {**responses.get(str(status), {}), **response} if isinstance(response, dict) else response
                if isinstance(merged, dict):
                    merged.setdefault("description", "OK")
                responses[str(status)] = merged
            operation["responses"] = responses
            for status in statuses:
                description, retry = ERRORS[status]
                declared = responses.get(str(status))
                declared = declared if isinstance(declared, dict) else {}
                response = {"description": declared.get("description") or description,
                            "content": {"application/json": {"schema": ERROR_REF}}}
                if retry:
                    response["headers"] = RETRY_AFTER
                responses[str(status)] = response
            extra = set(map(str, responses)) - {str(s) for s in statuses} - {"200", "201", "204"}
            if extra:
                raise RuntimeError(f"{method.upper()} {path}: responses {sorted(extra)} are not in "
                                   "service/openapi.py OPERATIONS")
            self._examples(operation_id, operation)

    def _examples(self, operation_id: str, operation: dict) -> None:
        """The request and response examples of a real game (service/contract/examples.json)."""
        example = self.examples.get(operation_id)
        if not example:
            return
        if "request" in example:
            operation["requestBody"]["content"]["application/json"]["example"] = example["request"]
        status = next(s for s in ("200", "201", "204") if s in operation["responses"])
        operation["responses"][status]["content"]["application/json"]["example"] = example["response"]
        for status, body in example.get("errors", {}).items():
            error = dict(operation["responses"][status])
            error["content"] = {"application/json": {"schema": ERROR_REF, "example": body}}
            operation["responses"][status] = error

    def init_spec(self, spec):
        self.spec = spec
        self.views: dict[str, str] = {}
        self.event_union: dict = {}

    def options_schema(self, game) -> dict:
        from apispec.ext.marshmallow import MarshmallowPlugin

        plugin = next(p for p in self.spec.plugins if isinstance(p, MarshmallowPlugin))
        return plugin.converter.schema2jsonschema(game.OptionsSchema)

    def schema_helper(self, name, definition, **kwargs):
        # apispec passes the definition marshmallow's plugin just built and merges what this
        # returns into it; View and Event are rewritten in place instead (a union has none of
        # marshmallow's keys). tests/test_generated_client.py fails if that ever stops working.
        if name == "View" and self.views:
            return self._views(definition)
        if name == "Event" and self.views:
            definition.clear()  # the union built by register_components replaces marshmallow's
            definition.update(self.event_union)
            return None
        patch = self.schema_patches.get(name)
        if patch is None:
            return None
        properties = dict(definition.get("properties", {}))
        for field, schema in patch.items():
            described = properties.get(field, {}).get("description")
            properties[field] = {**schema, **({"description": described} if described and "description"
                                               not in schema else {})}
        return {**definition, "properties": properties}

    def _views(self, definition: dict) -> None:
        """View becomes the union of one view per game, discriminated by its `type`."""
        base = json.loads(json.dumps(definition))
        mapping = {}
        for game_name, prefix in sorted(self.views.items()):
            properties = dict(base["properties"])
            properties["type"] = {"type": "string", "const": game_name}
            properties["state"] = {**{k: v for k, v in properties["state"].items() if k == "description"},
                                   "oneOf": [_ref(f"{prefix}State"), {"type": "null"}]}
            properties["legal_actions"] = {**{k: v for k, v in properties["legal_actions"].items()
                                              if k == "description"},
                                           "type": "array", "items": _ref(f"{prefix}LegalAction")}
            component = f"{prefix}View"
            self.spec.components.schema(component, component={
                **base, "title": component, "description": f"a view of a {game_name} game", "properties": properties})
            mapping[game_name] = f"#/components/schemas/{component}"
        definition.clear()
        definition.update({"description": "a seat's or the spectator's view, typed by the game's type",
                           "oneOf": [{"$ref": ref} for ref in mapping.values()],
                           "discriminator": {"propertyName": "type", "mapping": mapping}})
        return None


# Properties the marshmallow schemas leave untyped (or state too narrowly), typed here
# (component -> field -> schema).
SCHEMA_PATCHES: dict[str, dict[str, dict]] = {
    "ActionRequest": {"action": {"$ref": "#/components/schemas/Action"}},
    # a challenge or rematch declined, cancelled or past its expiry is `expired` (docs/matching.md):
    # the answer of /decline and /cancel, and GET /v1/games/{id} of such a game
    "GameSummary": {"status": {"type": "string", "enum": ["open", "active", "ended", "scored", "expired", "abandoned"],
                               "description": "expired: a challenge or rematch declined, cancelled or past "
                                              "its expiry; it never starts. abandoned: a game without a clock "
                                              "that nobody moved for the service's ABANDON_AFTER while a person "
                                              "was to act; it is over, unscored and unrated"}},
    # a seat's budget as recorded: the bounds of the day it was created, so no maximum here
    "SeatBudget": {"iterations": {"type": "integer", "minimum": 1, "description": "search iterations per move"},
                   "time_ms": {"type": "number", "exclusiveMinimum": 0,
                               "description": "the most milliseconds the bot thinks per move"}},
}


def _json_number(value: float):
    return int(value) if float(value).is_integer() else value


def search_budget_patches(limits) -> dict[str, dict[str, dict]]:
    """The `SearchBudget` component's bounds as this service is configured (`limits`: its
    SearchLimits, from SEARCH_MAX_ITERATIONS and SEARCH_MAX_TIME_MS): the app factory adds
    them to SCHEMA_PATCHES, so the document states the limits the service enforces."""
    from .core.bots import DEFAULT_TIME_MS

    most_iterations, most_ms = limits.max_iterations, _json_number(limits.max_time_ms)
    return {"SearchBudget": {
        "iterations": {"type": "integer", "minimum": 1, "maximum": most_iterations, "description":
                       f"search iterations per move, from 1 to {most_iterations} on this service "
                       "(SEARCH_MAX_ITERATIONS); default: the game's own (docs/bots.md)"},
        "time_ms": {"type": "number", "exclusiveMinimum": 0, "maximum": most_ms, "description":
                    f"the most milliseconds the bot thinks per move, whatever the iterations: above 0 and "
                    f"at most {most_ms:g} on this service (SEARCH_MAX_TIME_MS); default "
                    f"{min(DEFAULT_TIME_MS, limits.max_time_ms):g}"}}}


def register_components(spec) -> None:
    """The hand-built components: the action union and its branches, the typed payloads (the
    View and Event unions replace marshmallow's untyped ones as flask-smorest registers them)."""
    components, _ = action_components()
    for name, schema in components.items():
        spec.components.schema(name, component=schema)
    plugin = next(p for p in spec.plugins if isinstance(p, ContractPlugin))
    payloads, views = payload_components(plugin.options_schema)
    plugin.event_union = payloads.pop("Event")  # becomes the Event component (schema_helper)
    for name, schema in payloads.items():
        spec.components.schema(name, component=schema)
    plugin.views = views


# --- typed payloads: each game's state, legal actions and events ----------------------------

INT_RANGE = {"title": "IntRange", "type": "object", "description": "a template field: choose an integer from min to max",
             "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
             "required": ["min", "max"], "additionalProperties": False}
PLATFORM_OPTIONS = {"type": "object", "properties": {"turn_timeout": {"type": ["number", "null"]},
                                                     "leave_level": {"type": "string"}},
                    "additionalProperties": False}


# Platform events the payload generator never meets in the games it plays (it plays them to
# their end), typed here: `game.abandoned` (docs/api.md, "Clocks and abandoned games").
PLATFORM_EVENT_DATA = {
    "game.abandoned": {"type": "object", "required": ["idle_since", "to_act"], "properties": {
        "idle_since": {"type": "integer", "description": "ms since the epoch: the game's last move"},
        "to_act": {"type": "array", "items": {"type": "integer"},
                   "description": "the persons' seats that were to act and did not"}}},
    # a person left the seat; a bot of `level` (the creation's leave_level) plays it from then on
    "seat.left": {"type": "object", "required": ["seat", "level"], "properties": {
        "seat": {"type": "integer", "description": "the seat its person left"},
        "level": {"type": "string", "description": "the level of the bot that took the seat over"}}},
}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


EXAMPLES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "contract", "examples.json")


def load_examples() -> dict:
    """service/contract/examples.json (docs/tools/gen_examples.py writes it from a real game)."""
    with open(EXAMPLES_FILE, encoding="utf-8") as handle:
        return json.load(handle)


def load_payloads() -> dict:
    """The payload schemas of every declared game: each one's state schema and the event
    schemas, from the contract file its GameType names (service/contract/payloads.json,
    written by docs/tools/gen_payload_schemas.py). A declared game without its state schema
    fails here, naming the game, instead of being left out of the document."""
    from .games import GameDeclarationError, payloads_path

    out: dict[str, dict] = {"states": {}, "events": {}}
    documents: dict[str, dict] = {}   # each contract file read once (the hosted games share one)
    for game_type in game_types():
        path = payloads_path(game_type)
        if path not in documents:
            with open(path, encoding="utf-8") as handle:
                documents[path] = json.load(handle)
        document = documents[path]
        if game_type.name not in document.get("states", {}):
            raise GameDeclarationError(f"game type {game_type.name}: payloads: {game_type.payloads} has no "
                                       "state schema for it (python -m docs.tools.gen_payload_schemas)")
        out["states"][game_type.name] = document["states"][game_type.name]
        out["events"].update(document.get("events", {}))
    return out


def _closed(schema: dict) -> dict:
    return {**schema, "additionalProperties": False}


def payload_components(options_schema) -> tuple[dict[str, dict], dict[str, str]]:
    """The components of typed payloads, and {game: its view's component}. `options_schema(game)`
    gives the JSON Schema of a game's options (from its OptionsSchema)."""
    payloads = load_payloads()
    actions, per_game = action_components()
    components: dict[str, dict] = {"IntRange": INT_RANGE}
    # legal actions: each action shape as a template (integer fields may be an IntRange)
    templates: dict[str, str] = {}
    for name, schema in actions.items():
        if "properties" not in schema:
            continue
        ints = [f for f, p in schema["properties"].items() if p.get("type") == "integer"]
        if not ints:
            templates[name] = name
            continue
        template = name[:-len("Action")] + "Template"
        components[template] = {**schema, "title": template,
                                "description": schema["description"] + "; a legal action or a template",
                                "properties": {f: ({"oneOf": [p, _ref("IntRange")]} if f in ints else p)
                                               for f, p in schema["properties"].items()}}
        templates[name] = template
    views = {}
    games = dict(sorted(all_games().items()))
    for game_name, kinds in sorted(per_game.items()):
        if game_name not in payloads["states"]:
            continue  # registered with its rules alone (the tests' toy game): no declared payloads
        prefix = _camel(game_name)
        mapping = {kind: f"#/components/schemas/{templates[component]}" for kind, component in sorted(kinds.items())}
        components[f"{prefix}LegalAction"] = {
            "title": f"{prefix}LegalAction", "description": f"a legal action of {game_name}, or its template",
            "oneOf": [{"$ref": ref} for ref in mapping.values()],
            "discriminator": {"propertyName": "type", "mapping": mapping}}
        state = _closed(payloads["states"][game_name])
        state["properties"] = {**state["properties"], "game": {"type": "string", "const": game_name}}
        if "options" in state["properties"]:
            state["properties"]["options"] = options_schema(games[game_name])
        components[f"{prefix}State"] = {**state, "title": f"{prefix}State",
                                        "description": f"the state of a {game_name} game as the viewer may see it"}
        views[game_name] = prefix
    # events: one closed data schema per event type, the Event union discriminated by type
    options_any = {"anyOf": [options_schema(games[g]) for g in sorted(payloads["states"]) if g in games]}
    mapping = {}
    for kind, schema in sorted({**PLATFORM_EVENT_DATA, **payloads["events"]}.items()):
        data = _closed(schema)
        if kind == "game.created":
            data["properties"] = {**data["properties"], "options": options_any, "platform": PLATFORM_OPTIONS}
        # platform events (game.started) are named apart from a game's own (game_started)
        name = _camel(kind.replace(".", "_")) + ("PlatformEvent" if "." in kind else "Event")
        components[name] = {
            "title": name, "type": "object", "description": f"a `{kind}` event",
            "properties": {"version": {"type": "integer"}, "type": {"type": "string", "const": kind},
                           "data": data, "at": {"type": "integer"}, "prev_hash": {"type": "string"},
                           "hash": {"type": "string"}, "cmd": _ref("Command")},
            "required": ["version", "type", "data", "at", "prev_hash", "hash"], "additionalProperties": False}
        mapping[kind] = f"#/components/schemas/{name}"
    components["Command"] = {
        "title": "Command", "type": "object",
        "description": "the command that caused the batch: its seat and who played it (player, bot:level, "
                       "timeout); the action too for the seat itself and once the game has ended",
        "properties": {"seat": {"type": ["integer", "null"]}, "by": {"type": "string"}, "action": _ref("Action")},
        "required": ["seat", "by"], "additionalProperties": False}
    components["Event"] = {"title": "Event", "description": "one event of the game's log, as the caller may see it",
                           "oneOf": [{"$ref": ref} for ref in mapping.values()],
                           "discriminator": {"propertyName": "type", "mapping": mapping}}
    return components, views
