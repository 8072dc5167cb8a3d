"""Schema versions of event payloads, upcast on read (stored events are never rewritten).

An upcaster turns (type, schema n) data into schema n + 1. Reading applies them in a chain
until the event is at its type's current schema. The hash chain covers the stored bytes,
so upcasting changes nothing an auditor checks.
"""

from __future__ import annotations

from typing import Callable

from .envelope import StoredEvent

Upcaster = Callable[[dict], dict]


class Upcasters:
    def __init__(self) -> None:
        self._steps: dict[tuple[str, int], Upcaster] = {}
        self._current: dict[str, int] = {}

    def register(self, event_type: str, from_schema: int, step: Upcaster) -> None:
        self._steps[(event_type, from_schema)] = step
        self._current[event_type] = max(self._current.get(event_type, 1), from_schema + 1)

    def current(self, event_type: str) -> int:
        return self._current.get(event_type, 1)

    def upcast(self, event: StoredEvent) -> StoredEvent:
        schema, data = event.schema, event.data
        while (step := self._steps.get((event.type, schema))) is not None:
            data = step(data)
            schema += 1
        if schema == event.schema:
            return event
        return event._replace(schema=schema, data=data)


def _created_v1_to_v2(data: dict) -> dict:
    # Schema 1 of game.created had no platform options; turn timeouts came with schema 2.
    return {**data, "platform": data.get("platform", {"turn_timeout": None})}


UPCASTERS = Upcasters()
UPCASTERS.register("game.created", 1, _created_v1_to_v2)
