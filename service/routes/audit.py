"""The service's public signing keys (docs/audit.md, "Keys")."""

from __future__ import annotations

from flask import current_app, jsonify
from flask.views import MethodView
from flask_smorest import Blueprint

from ..schemas import KeysSchema

blp = Blueprint("audit", __name__, description="Audit without trusting the operator: the signing keys")

# A rotation reaches every process within a second or two; a minute's caching keeps a
# verifier's fetch cheap, and a receipt signed by a key it has not seen yet names its key_id.
KEYS_MAX_AGE = 60


@blp.route("/keys")
class Keys(MethodView):
    @blp.response(200, KeysSchema, headers={
        "Cache-Control": {"description": f"public, max-age={KEYS_MAX_AGE}", "schema": {"type": "string"}}})
    def get(self):
        """Every key the service has signed receipts and tree heads with, newest first: its
        `key_id`, the raw Ed25519 public key (base64url) and when it signed (`valid_from` to
        `valid_until`; null: the current key). Ended keys stay listed, so that what they signed
        still verifies. Keep a copy: checked against a copy kept earlier, a bundle's signatures
        prove something even against the service that sent it."""
        response = jsonify({"keys": current_app.extensions["keyring"].public_keys()})
        response.headers["Cache-Control"] = f"public, max-age={KEYS_MAX_AGE}"
        return response
