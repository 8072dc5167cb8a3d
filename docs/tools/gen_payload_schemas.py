"""Write service/contract/payloads.json: the JSON Schema of each game's view `state` and of each
event type's `data` (shared by the games that share the type), inferred from real games with GenSON (a maintained JSON Schema
generator) — `python -m docs.tools.gen_payload_schemas`.

The games are played in process by random clients holding every seat, over every player
count and option combination of /v1/game-types; every seat's and the spectator's view after
every batch is a sample, and so is every event as each viewer saw it live and as it shows
after the end; so are the golden games' recorded views and events (tests/golden/, games
that bots played). The document's per-game `state` and event schemas are built from the file
(service/openapi.py); tests validate every golden game's views and every live response of
the generated-client test against them, so a game whose payloads change shape fails there
until this is re-run.
"""

from __future__ import annotations

import itertools
import json
import os
import random

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "service", "contract", "payloads.json")
GOLDEN_DIR = os.path.join(ROOT, "tests", "golden")
GAMES_PER_SETUP = 2
SHORT = {"speculation": {"deals": 2}}


def _setups(game_type: dict) -> list[tuple[int, dict]]:
    axes = {name: ([False, True] if spec["type"] == "boolean" else list(spec["choices"]))
            for name, spec in game_type["options"].items() if spec["type"] == "boolean" or "choices" in spec}
    combos = [dict(zip(sorted(axes), values)) for values in itertools.product(*(axes[n] for n in sorted(axes)))]
    counts = range(game_type["min_players"], game_type["max_players"] + 1)
    return [(players, {**options, **SHORT.get(game_type["name"], {})}) for players in counts for options in combos]


def _pick(template: dict, rng: random.Random) -> dict:
    return {k: rng.randint(v["min"], v["max"]) if isinstance(v, dict) and set(v) == {"min", "max"} else v
            for k, v in template.items()}


def collect(game_name: str, game_type: dict, seed: int) -> tuple[list, dict[str, list]]:
    import fakeredis

    from projections import disclosure
    from service.app import create_app
    from service.bootstrap import Backend
    from workers.memory_jobs import MemoryJobs

    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    jobs = MemoryJobs()
    app = create_app({"RATE_LIMIT": None}, backend=Backend(redis, redis, False), jobs=jobs)
    service = app.extensions["games"]
    rng = random.Random(seed)
    states, events = [], {}
    for players, options in _setups(game_type):
        for _ in range(GAMES_PER_SETUP):
            session = service.create(game_name, options, [{}] * players)
            game_id = session.game_id
            for seat in range(players):
                service.claim(game_id, seat, f"p{seat}")
            for n in range(50_000):
                session = service.load(game_id)
                states += [disclosure.view_for(session, v)["state"] for v in [None, *range(players)]]
                if session.status != "active":
                    break
                seat = rng.choice(session.to_act())
                action = _pick(rng.choice(session.game.legal_actions(session.state, seat)), rng)
                service.act(game_id, seat, action, idempotency_key=f"a{n}")
            jobs.drain(service)
            session = service.load(game_id)
            states += [disclosure.view_for(session, v)["state"] for v in [None, *range(players)]]
            stored = service.store.read(game_id, 0, session.version)
            for viewer in [None, *range(players)]:
                for finished in (False, True):
                    shown, _ = disclosure.events_for(stored, None, viewer, finished, game_id)
                    for event in shown:
                        events.setdefault(event["type"], []).append(event["data"])
    return [s for s in states if s is not None], events


# What random games seldom or never reach, typed from the code that renders it (the view of a
# pending speculate reward: projections/speculate/view.py). Options and the platform options
# are typed in service/openapi.py from the games' OptionsSchema, not from samples.
# The seats of a game's creation: a search bot's seat may carry its budget (service/core/
# commands.py records it only when given; the random games sampled here have none).
OVERRIDES = {("states", "speculate", "reward"): {"anyOf": [{"type": "null"}, {
    "type": "object", "required": ["to", "payers_left", "share_value_due", "decided"],
    "properties": {"to": {"type": "integer"}, "payers_left": {"type": "array", "items": {"type": "integer"}},
                   "share_value_due": {"type": "integer"},
                   "decided": {"anyOf": [{"type": "null"}, {"type": "object",
                                                            "additionalProperties": {"type": "integer"}}]}}}]},
             ("events", "game.created", "seats"): {"type": "array", "items": {
    "type": "object", "required": ["kind"],
    "properties": {"kind": {"type": "string"}, "level": {"type": "string"},
                   "budget": {"type": "object", "additionalProperties": False,
                              "properties": {"iterations": {"type": "integer"}, "time_ms": {"type": "number"}}}}}}}


def apply_overrides(document: dict) -> dict:
    for (kind, game, field), schema in OVERRIDES.items():
        document[kind][game]["properties"][field] = schema
    for kind in ("states", "events"):
        for schema in document[kind].values():
            for prop in schema.get("properties", {}).values():
                _relax(prop)
    return document


def _relax(schema) -> None:
    """Below the top level, the keys an object had in every sample are not required: many are
    maps keyed by data (shares by company, money by seat) whose keys vary from game to game."""
    if isinstance(schema, dict):
        schema.pop("required", None) if "properties" in schema else None
        for value in schema.values():
            _relax(value)
    elif isinstance(schema, list):
        for value in schema:
            _relax(value)


def golden_cases():
    """Each recorded golden game (tests/golden/, read as files: nothing here imports the
    tests): (its export's records, the record of what every viewer saw)."""
    for folder, dirs, files in os.walk(GOLDEN_DIR):
        dirs.sort()
        for name in sorted(files):
            observed_path = os.path.join(folder, name[:-len(".ndjson")] + ".observed.json")
            if not name.endswith(".ndjson") or not os.path.exists(observed_path):
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                records = [json.loads(line) for line in handle if line.strip()]
            with open(observed_path, encoding="utf-8") as handle:
                yield records, json.load(handle)


def decode_export(records: list[dict]) -> tuple[dict, list]:
    """(header, upcast stored events) of a complete export."""
    from events.envelope import decode_body
    from events.upcast import UPCASTERS

    header, stored, prev = records[0], [], ""
    for row in records[1:]:
        stored.append(UPCASTERS.upcast(decode_body(row["body"], prev, row["hash"])))
        prev = row["hash"]
    return header, stored


def golden(game_name: str) -> tuple[list, dict[str, list]]:
    """The recorded games' views and events (tests/golden/): bot-played games, other moments."""
    from projections import disclosure

    states, events = [], {}
    for records, observed in golden_cases():
        if observed["type"] != game_name:
            continue
        states += [view["state"] for views in observed["views"].values() for view in views.values()
                   if view["state"] is not None]
        header, stored = decode_export(records)
        for viewer in [None, *range(len(fold_seats(stored, header)))]:
            for finished in (False, True):
                shown, _ = disclosure.events_for(stored, None, viewer, finished, header["game_id"])
                for event in shown:
                    events.setdefault(event["type"], []).append(event["data"])
    return states, events


def fold_seats(stored, header) -> tuple:
    from projections.session import fold

    return fold(stored, header["game_id"]).seats


def infer(samples: list) -> dict:
    from genson import SchemaBuilder

    builder = SchemaBuilder(schema_uri=None)
    for sample in samples:
        builder.add_object(sample)
    return builder.to_schema()


def build() -> dict:
    from projections.registry import all_games
    from service.routes.game_types import describe

    out = {"states": {}, "events": {}}
    per_game = {}
    for name, game in sorted(all_games().items()):
        if name == "secret-duel":
            continue
        states, events = collect(name, describe(game), seed=17)
        golden_states, golden_events = golden(name)
        states += golden_states
        for kind, datas in golden_events.items():
            events.setdefault(kind, []).extend(datas)
        out["states"][name] = infer(states)
        per_game[name] = {kind: infer(datas) for kind, datas in sorted(events.items())}
    out["events"] = merge_events(per_game)
    return out


def merge_events(per_game: dict[str, dict[str, dict]]) -> dict[str, dict]:
    """One data schema per event type: the games that share a type share its schema."""
    from genson import SchemaBuilder

    builders: dict[str, SchemaBuilder] = {}
    for name in sorted(per_game):
        for kind, schema in sorted(per_game[name].items()):
            builders.setdefault(kind, SchemaBuilder(schema_uri=None)).add_schema(schema)
    return {kind: builder.to_schema() for kind, builder in sorted(builders.items())}


def main() -> None:
    document = apply_overrides(build())
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as handle:
        json.dump(document, handle, indent=1, sort_keys=True)
        handle.write("\n")


if __name__ == "__main__":
    main()
