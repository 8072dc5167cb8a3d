"""The transparency log's public endpoints (docs/audit.md, "Log endpoints"): the signed tree
heads, consistency proofs, the leaves, and a game's checkpoints with their inclusion proofs.
No credential: everything here is public, as a log anyone can audit must be."""

from __future__ import annotations

from typing import Optional

from flask import current_app
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, ValidationError, fields, validate

from ..core.errors import Invalid, NotFound
from ..limits import MAX_INT_DIGITS, ascii_int
from ..schemas import ErrorSchema, StrictSchema
from .context import games

blp = Blueprint("transparency", __name__, description="The transparency log: signed tree heads, proofs, "
                                                       "checkpoints (docs/audit.md)")

MAX_ENTRIES = 1000
HEX_LIST = {"description": "hashes, lower-case hex, from the leaves up (RFC 9162 §2.1)"}


def transparency():
    return current_app.extensions["transparency"]


class AsciiInteger(fields.Integer):
    """A query integer: ASCII digits only (as the paths' integers), at most MAX_INT_DIGITS."""

    def _deserialize(self, value, attr, data, **kwargs):
        found = ascii_int(value) if isinstance(value, str) else None
        if found is None:
            raise ValidationError(f"must be a whole number, 1 to {MAX_INT_DIGITS} ASCII digits")
        return found


# --- schemas -----------------------------------------------------------------------------------

class TreeHeadSchema(Schema):
    format = fields.String(required=True, metadata={"description": "`speculation-sth/1`"})
    tree_size = fields.Integer(required=True, metadata={"description": "leaves in the tree"})
    root_hash = fields.String(required=True, metadata={"description": "the tree's root (RFC 9162 MTH), hex"})
    timestamp = fields.Integer(required=True, metadata={"description": "ms since the epoch, when it was published"})
    key_id = fields.String(required=True, metadata={"description": "the signing key (GET /v1/keys)"})
    signature = fields.String(required=True, metadata={
        "description": "base64url Ed25519 signature of the head's canonical JSON without `signature`"})


class LeafSchema(Schema):
    game = fields.String(required=True)
    head = fields.String(required=True, metadata={"description": "the game's hash chain head at `version`, hex"})
    version = fields.Integer(required=True)


class EntrySchema(Schema):
    index = fields.Integer(required=True)
    leaf = fields.Nested(LeafSchema, required=True)
    sequenced_at = fields.Integer(required=True, metadata={
        "description": "ms since the epoch: the timestamp of the first tree head that held it"})


class EntriesSchema(Schema):
    entries = fields.List(fields.Nested(EntrySchema), required=True)


class ConsistencySchema(Schema):
    first = fields.Integer(required=True)
    second = fields.Integer(required=True)
    proof = fields.List(fields.String(), required=True, metadata=HEX_LIST)


class CheckpointSchema(Schema):
    index = fields.Integer(required=True)
    leaf = fields.Nested(LeafSchema, required=True)
    inclusion = fields.List(fields.String(), required=True, metadata=HEX_LIST)


class CheckpointsSchema(Schema):
    game = fields.String(required=True)
    tree_size = fields.Integer(required=True, metadata={"description": "the tree the proofs reach"})
    tree_head = fields.Nested(TreeHeadSchema, required=True, allow_none=True, metadata={
        "description": "the signed tree head published at `tree_size` (null: none was at that size)"})
    checkpoints = fields.List(fields.Nested(CheckpointSchema), required=True)


class TreeHeadsQuerySchema(StrictSchema):
    size = AsciiInteger(required=True, validate=validate.Range(min=1), metadata={"description": "a tree size at which a head was published"})


class ConsistencyQuerySchema(StrictSchema):
    first = AsciiInteger(required=True, validate=validate.Range(min=1), metadata={"description": "the earlier tree size, from 1"})
    second = AsciiInteger(required=True, validate=validate.Range(min=1), metadata={"description": "the later tree size, at most the log's"})


class EntriesQuerySchema(StrictSchema):
    start = AsciiInteger(required=True, metadata={"description": "the first leaf index"})
    end = AsciiInteger(required=True, metadata={"description": f"past the last leaf index (at most start + {MAX_ENTRIES})"})


class CheckpointsQuerySchema(StrictSchema):
    tree_size = AsciiInteger(metadata={"description": "the proofs' tree size (default: the latest tree head's)"})


# --- checks ------------------------------------------------------------------------------------

def _within_tree(name: str, value: int, size: int, low: int = 1) -> None:
    if not low <= value <= size:
        raise Invalid(f"{name}: {value} is not a tree size of the log ({low} to {size})",
                      {"field": name, "tree_size": size}, code="beyond_tree")


def _no_tree_head() -> NotFound:
    return NotFound("the log has no tree head yet (its first batch is not sequenced)", code="no_tree_head")


def _known_game(game_id: str, indexes: list[int]) -> None:
    """A game with checkpoints, or one the store holds (a new game not sequenced yet)."""
    if not indexes:
        games().load(game_id)   # NotFound for a game that does not exist


# --- routes ------------------------------------------------------------------------------------

@blp.route("/log/tree-head")
class TreeHead(MethodView):
    @blp.response(200, TreeHeadSchema)
    @blp.alt_response(404, schema=ErrorSchema, description="`no_tree_head`: nothing is sequenced yet")
    def get(self):
        """The latest signed tree head. One is published after each batch of checkpoints (a
        pass with nothing new publishes none: the latest stays the log's head)."""
        head = transparency().latest_head()
        if head is None:
            raise _no_tree_head()
        return head


@blp.route("/log/tree-heads")
class TreeHeadAt(MethodView):
    @blp.arguments(TreeHeadsQuerySchema, location="query")
    @blp.response(200, TreeHeadSchema)
    @blp.alt_response(404, schema=ErrorSchema, description="`no_tree_head`: none was published at that size")
    @blp.alt_response(422, schema=ErrorSchema, description="`size` not a whole number from 1")
    def get(self, query):
        """The signed tree head published at `size` (a batch ended there)."""
        head = transparency().head_at(query["size"])
        if head is None:
            raise NotFound(f"size: no tree head was published at size {query['size']}", {"field": "size"},
                           code="no_tree_head")
        return head


@blp.route("/log/consistency")
class Consistency(MethodView):
    @blp.arguments(ConsistencyQuerySchema, location="query")
    @blp.response(200, ConsistencySchema)
    @blp.alt_response(422, schema=ErrorSchema, description="`first` or `second` not a whole number from 1, "
                      "`first` greater than `second`, or `second` past the log's size (`beyond_tree`)")
    def get(self, query):
        """A consistency proof (RFC 9162 §2.1.4) from the tree of `first` leaves to the tree
        of `second`: verified with §2.1.4.2 against the two signed heads' roots, it proves
        the earlier tree a prefix of the later. Empty when first equals second."""
        log = transparency()
        first, second = query["first"], query["second"]
        size = log.size()
        _within_tree("second", second, size)
        if first > second:
            raise Invalid(f"first: {first} is greater than second ({second})", {"field": "first"})
        return {"first": first, "second": second, "proof": log.consistency_proof(first, second)}


@blp.route("/log/entries")
class Entries(MethodView):
    @blp.arguments(EntriesQuerySchema, location="query")
    @blp.response(200, EntriesSchema)
    @blp.alt_response(422, schema=ErrorSchema, description="`end` not after `start` or more than 1,000 past it, "
                      "or `start` past the log's last leaf (`beyond_tree`)")
    def get(self, query):
        """The leaves `start`..`end`−1 (at most 1,000; fewer when the log ends before `end`),
        each with its index and when it was sequenced."""
        start, end = query["start"], query["end"]
        if end <= start:
            raise Invalid(f"end: must be greater than start ({start})", {"field": "end"})
        if end - start > MAX_ENTRIES:
            raise Invalid(f"end: at most {MAX_ENTRIES} leaves at once (end <= {start + MAX_ENTRIES})", {"field": "end"})
        log = transparency()
        size = log.size()
        if start >= size:
            raise Invalid(f"start: {start} is past the log's last leaf ({size} leaves)",
                          {"field": "start", "tree_size": size}, code="beyond_tree")
        return {"entries": log.entries(start, min(end, size))}


@blp.route("/games/<game_id>/checkpoints")
class Checkpoints(MethodView):
    @blp.arguments(CheckpointsQuerySchema, location="query")
    @blp.response(200, CheckpointsSchema)
    @blp.alt_response(404, schema=ErrorSchema, description="no such game")
    @blp.alt_response(422, schema=ErrorSchema, description="`tree_size` past the log's size (`beyond_tree`)")
    def get(self, query, game_id):
        """The game's checkpoints within the first `tree_size` leaves (default: the latest
        tree head's), each with its leaf index and its inclusion proof in that tree (RFC 9162
        §2.1.3), and the signed tree head of that size, whose root the proofs reach."""
        log = transparency()
        indexes = log.leaf_indexes(game_id)
        _known_game(game_id, indexes)
        tree_size: Optional[int] = query.get("tree_size")
        if tree_size is None:
            latest = log.latest_head()
            tree_size = latest["tree_size"] if latest else 0
        else:
            _within_tree("tree_size", tree_size, log.size(), low=0)
        return {"game": game_id, "tree_size": tree_size, "tree_head": log.head_at(tree_size) if tree_size else None,
                "checkpoints": log.checkpoints(game_id, tree_size)}
