"""A game's dispute bundle (docs/audit.md, "Dispute bundles"): GET /v1/games/{id}/bundle."""

from __future__ import annotations

from flask import jsonify
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, ValidationError, fields, validate

from ..audit.bundle import BUNDLE_FORMAT, build_bundle
from ..expensive import audit_slot
from ..limits import ascii_int
from ..schemas import ErrorSchema, SignedReceiptSchema, SigningKeySchema, StrictSchema
from .context import games, viewer
from .play import READ_SECURED as SECURED
from .transparency import HEX_LIST, CheckpointSchema, TreeHeadSchema

blp = Blueprint("bundle", __name__, description="A game's dispute bundle, checkable offline (docs/audit.md)")

MAX_KNOWN = 64


class KnownSizes(fields.String):
    """`known`: tree sizes, ASCII digits separated by commas."""

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        sizes = [ascii_int(part) for part in text.split(",")] if text else []
        if any(size is None or size < 1 for size in sizes):
            raise ValidationError("tree sizes (whole numbers from 1, ASCII digits) separated by commas")
        if len(sizes) > MAX_KNOWN:
            raise ValidationError(f"at most {MAX_KNOWN} tree sizes")
        return sizes


class BundleQuerySchema(StrictSchema):
    seat = fields.Integer(validate=validate.Range(min=0), metadata={
        "description": "with an account credential: which of its seats, when it holds more than one"})
    known = KnownSizes(metadata={"description": "tree sizes of heads you kept (e.g. `120,455`): the bundle "
                                                "adds a consistency proof from each to its tree head"})


class BundleSchema(Schema):
    format = fields.String(required=True, validate=validate.Equal(BUNDLE_FORMAT))
    game = fields.String(required=True)
    seat = fields.Integer(required=True, allow_none=True, metadata={
        "description": "the seat whose receipts the bundle holds (null: a spectator's)"})
    export = fields.List(fields.Dict(), required=True, metadata={
        "description": "GET /v1/games/{id}/export's records as this caller gets them: complete once the game "
                       "has ended, what the caller may see while it runs"})
    receipts = fields.List(fields.Nested(SignedReceiptSchema), required=True, metadata={
        "description": "the creation's receipt, the seat's claim's and every batch its commands appended, "
                       "regenerated from the log"})
    checkpoints = fields.List(fields.Nested(CheckpointSchema), required=True, metadata={
        "description": "the game's checkpoints in `tree_head`, with their inclusion proofs"})
    tree_head = fields.Nested(TreeHeadSchema, required=True, allow_none=True, metadata={
        "description": "the latest signed tree head (null: nothing is sequenced yet)"})
    tree_heads = fields.List(fields.Nested(TreeHeadSchema), required=True, metadata={
        "description": "the first signed tree head that held each checkpoint, earliest first"})
    consistency = fields.Dict(keys=fields.String(), values=fields.List(fields.String()), required=True, metadata={
        "description": "tree size -> consistency proof to `tree_head` (hex), from each of `tree_heads` and each "
                       "`known` size; " + HEX_LIST["description"]})
    keys = fields.List(fields.Nested(SigningKeySchema), required=True, metadata={
        "description": "GET /v1/keys's list when the bundle was made"})


BUNDLE_QUERY = BundleQuerySchema()


@blp.route("/games/<game_id>/bundle")
class Bundle(MethodView):
    @blp.doc(security=SECURED)
    @blp.arguments(BUNDLE_QUERY, location="query")
    @blp.response(200, BundleSchema)
    @blp.alt_response(401, schema=ErrorSchema, description="an unknown token")
    @blp.alt_response(403, schema=ErrorSchema, description="a token of another game")
    @blp.alt_response(422, schema=ErrorSchema, description="`seat` or `known` malformed, or an account holding "
                                                           "several seats without `seat`")
    @blp.alt_response(429, schema=ErrorSchema, description="too many requests (rate limit), or too many verify, "
                                                           "export and replay requests at once from this address")
    def get(self, query, game_id):
        """The game's dispute bundle, `speculation-bundle/1`: its export, the caller's seat's
        signed receipts, its checkpoints with their inclusion proofs in the latest signed tree
        head, the first head that held each, consistency proofs and the service's keys. As the
        export: a seat token or an account's seat gets that seat's bundle, anyone else a
        spectator's (no seat receipts); while the game runs it holds only what the caller may
        see. Check it offline with `speculation verify FILE` (keep GET /v1/keys's answer too:
        checked against keys kept earlier, it proves something even against this service)."""
        seat = viewer(game_id, query.get("seat"))
        with audit_slot():
            bundle = build_bundle(games(), game_id, seat, query.get("known", ()))
        return jsonify(bundle)
