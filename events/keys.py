"""How one aggregate's stream is named in Redis: every key of it shares one hash tag, so it
lives in one slot of a Redis Cluster and every append is a single-slot script.

A game is named by its bare id; an aggregate of another kind by "<kind>/<id>".
"""

from __future__ import annotations


def stream_prefix(stream_id: str) -> str:
    """The prefix of every key of one aggregate's stream, hash tag included. An aggregate of
    another kind than a game is named "<kind>/<id>" ("account/7f3a" -> "account:{account:7f3a}");
    a game by its bare id ("game:{g:<id>}"). One hash tag an aggregate: it lives in one slot of
    a Redis Cluster, and every append is a single-slot script."""
    kind, separator, ident = stream_id.partition("/")
    if not separator:
        return f"game:{{g:{stream_id}}}"
    if not kind or not ident or "/" in ident:
        raise ValueError(f"a stream id is <kind>/<id> or a game's id, not {stream_id!r}")
    return f"{kind}:{{{kind}:{ident}}}"


def stream_of_prefix(prefix: str) -> str:
    """The stream id a key prefix names (stream_prefix's inverse)."""
    kind, _, tag = prefix.partition(":")
    ident = tag[1:-1].partition(":")[2]
    return ident if kind == "game" else f"{kind}/{ident}"
