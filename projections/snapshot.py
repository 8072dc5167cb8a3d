"""Sessions as data: the snapshot codec (JSON, never pickle).

A snapshot is a cache of the fold at some version, kept in Redis. Whoever can write Redis must
not be able to run code in the API, so a snapshot is plain JSON, and decoding builds nothing
but the rules' own value types: dataclasses defined in this package (`projections.*`) or in
a registered game's module,
tuples, lists, dicts, sets, frozensets and JSON scalars. Anything else fails to decode, and a
snapshot that fails is ignored (the game is folded from its log, which is the truth).

Encoding: JSON scalars, lists and str-keyed dicts as themselves; the rest tagged with a
one-key object, `{"$t": [...]}` a tuple, `{"$d": [[k, v], ...]}` a dict with other keys (or a
key starting with `$`), `{"$s": [...]}` / `{"$f": [...]}` a set / frozenset (sorted where the
items allow it, so one state has one encoding), `{"$c": "module:Class", "v": {field: ...}}`
a dataclass.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from typing import Any

FORMAT = "session-json/1"
_PACKAGE = "projections."
_FIELDS: dict[type, tuple[str, ...]] = {}
_GAME_MODULES: set[str] = set()


class SnapshotError(ValueError):
    """The bytes are not a snapshot this code can read (a cache miss, never a crash)."""


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _sorted(items) -> list:
    encoded = [_encode(item) for item in items]
    try:
        return sorted(encoded, key=lambda x: json.dumps(x, sort_keys=True))
    except TypeError:
        return encoded


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [_encode(item) for item in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return {"$t": [_encode(item) for item in value]}
    if isinstance(value, dict) and type(value) is dict:
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: _encode(v) for k, v in value.items()}
        return {"$d": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, frozenset):
        return {"$f": _sorted(value)}
    if isinstance(value, set):
        return {"$s": _sorted(value)}
    cls = type(value)
    if dataclasses.is_dataclass(value) and _rules_module(cls.__module__):
        return {"$c": f"{cls.__module__}:{cls.__qualname__}",
                "v": {name: _encode(getattr(value, name)) for name in _fields(cls)}}
    raise SnapshotError(f"a {cls.__module__}.{cls.__qualname__} is not snapshot data")


def _rules_module(module: str) -> bool:
    """This package, or a game module registered with it (the test-only game, a plug-in)."""
    if module.startswith(_PACKAGE) or module in _GAME_MODULES:
        return True
    from .registry import all_games

    if any(module == game.__name__ or module.startswith(game.__name__ + ".") for game in all_games().values()):
        _GAME_MODULES.add(module)   # the registry only grows: a yes stays a yes
        return True
    return False


def _class(name: str) -> type:
    module, _, qualname = name.partition(":")
    if not _rules_module(module) or not qualname or "." in qualname:
        raise SnapshotError(f"{name!r}: only the rules' own dataclasses are snapshot data")
    try:
        cls = getattr(importlib.import_module(module), qualname)
    except (ImportError, AttributeError) as err:
        raise SnapshotError(f"{name!r}: {err}") from None
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == module):
        raise SnapshotError(f"{name!r} is not a dataclass of the rules")
    return cls


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(item) for item in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        (tag, body), = value.items()
        if tag == "$t":
            return tuple(_decode(item) for item in body)
        if tag == "$d":
            return {_decode(k): _decode(v) for k, v in body}
        if tag == "$s":
            return {_decode(item) for item in body}
        if tag == "$f":
            return frozenset(_decode(item) for item in body)
    if len(value) == 2 and "$c" in value and "v" in value:
        cls = _class(value["$c"])
        names = _fields(cls)
        fields = value["v"]
        if not isinstance(fields, dict) or set(fields) != set(names):
            raise SnapshotError(f"{value['$c']}: fields {sorted(fields)} are not {sorted(names)}")
        instance = object.__new__(cls)   # the stored values as they were: no __init__ re-run
        for name in names:
            object.__setattr__(instance, name, _decode(fields[name]))
        return instance
    return {k: _decode(v) for k, v in value.items()}


def dumps(session) -> bytes:
    """The session as snapshot bytes (JSON)."""
    return json.dumps({"format": FORMAT, "session": _encode(session)}, separators=(",", ":"),
                      allow_nan=False).encode()


def loads(blob: bytes):
    """The session back from snapshot bytes; SnapshotError for anything else (a pickle, say)."""
    try:
        data = json.loads(blob)
    except (ValueError, UnicodeDecodeError) as err:
        raise SnapshotError(f"not JSON: {err}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or "session" not in data:
        raise SnapshotError("not a session snapshot of this format")
    try:
        return _decode(data["session"])
    except SnapshotError:
        raise
    except (TypeError, ValueError, RecursionError) as err:
        raise SnapshotError(f"malformed snapshot: {err}") from None
