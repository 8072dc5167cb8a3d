"""Accounts: sign-up, sign-in and out, the account's credentials, password and recovery, its
games, its one event stream, closing it and its export (docs/accounts.md)."""

from __future__ import annotations

import time

from flask import Response, current_app, jsonify, request, stream_with_context
from flask.views import MethodView
from flask_smorest import Blueprint

from ..account_schemas import (AccountEventsQuerySchema, AccountEventsSchema, AccountGamesQuerySchema,
                               AccountGamesSchema, ExportSchema, ProfileSchema, RatingHistorySchema, NewTokenSchema,
                               PasswordChangeSchema, PasswordSchema, RecoverSchema, RecoveryCodesSchema,
                               SessionSchema, SignedUpSchema, SignInSchema, SignUpSchema, TokenRequestSchema,
                               TokensSchema, WhoAmISchema)
from ..accounts.feed import AccountCursor, notices_after
from ..core.errors import CoreError, Invalid, Unauthorized
from ..ratings.service import BOT_ACCOUNTS
from ..limits import MAX_INT_DIGITS, ascii_int
from ..ratelimit import admit_per_address
from ..schemas import ErrorSchema
from ..streaming import ACCOUNT_FRAMINGS, SSE, account_stream_body, open_wait, stream_kind
from .context import DEVICE_COOKIE, SESSION_COOKIE, accounts, credential, games, principal

blp = Blueprint("accounts", __name__, description="Accounts: sign-up, sign-in, tokens, your games and your stream")

ACCOUNT = [{"accountToken": ["account"]}, {"sessionCookie": []}]
READ = [{"accountToken": ["read"]}, {"sessionCookie": []}]
ANY = [{"accountToken": []}, {"sessionCookie": []}]
STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _public(account) -> dict:
    return {"id": account.id, "username": account.username, "created_at": account.created_at,
            "closed": account.closed}


def _no_content() -> Response:
    return Response(status=204)


def _end_cookie(response: Response) -> Response:
    response.delete_cookie(SESSION_COOKIE, path="/", samesite="Lax", httponly=True)
    return response


@blp.route("/accounts")
class SignUp(MethodView):
    @blp.arguments(SignUpSchema)
    @blp.response(201, SignedUpSchema)
    @blp.alt_response(409, schema=ErrorSchema, description="`username_taken`: the name, or one that looks like it")
    @blp.alt_response(422, schema=ErrorSchema, description="`username_invalid`, `username_reserved`, `password_refused`")
    @blp.alt_response(429, schema=ErrorSchema, description="`too_many_signups` from this address")
    def post(self, body):
        """Sign up: a username and a password. The answer holds 10 recovery codes, shown once:
        they reset the password when it is lost (there is no email)."""
        admit_per_address("SIGNUP_LIMIT", "too_many_signups", "sign-ups")
        account, codes = accounts().sign_up(body["username"], body["password"])
        return {"account": _public(account), "recovery_codes": codes}, 201


@blp.route("/accounts/<username>")
class Profile(MethodView):
    @blp.response(200, ProfileSchema)
    @blp.alt_response(404, schema=ErrorSchema, description="no such account")
    def get(self, username):
        """An account's public profile, by username (any of its look-alike spellings): its
        rating per game type and its latest games."""
        profile = accounts().profile(username)
        ratings = current_app.extensions["ratings"]
        ids, _ = accounts().index.games(profile["id"], "all", 0, 10)
        recent = []
        for game_id in ids:
            try:
                session = games().load(game_id)
            except CoreError:
                continue
            recent.append({"game_id": game_id, "type": session.game_type, "status": session.status,
                           "rated": bool(session.platform.get("rated")),
                           "last_move_at": session.last_action_at or session.created_at})
        return {**profile, "bot": profile["id"] in BOT_ACCOUNTS, "ratings": ratings.of_account(profile["id"]),
                "recent_games": recent}


@blp.route("/accounts/<username>/ratings/<game_type>")
class RatingHistory(MethodView):
    @blp.response(200, RatingHistorySchema)
    @blp.alt_response(404, schema=ErrorSchema, description="no such account or game type")
    def get(self, username, game_type):
        """The account's rating after each of its rated games of this type, oldest first."""
        account = accounts().profile(username)["id"]
        return {"account": account, "type": game_type,
                "history": current_app.extensions["ratings"].history(account, game_type)}


@blp.route("/sessions")
class Sessions(MethodView):
    @blp.arguments(SignInSchema)
    @blp.response(201, SessionSchema)
    @blp.alt_response(401, schema=ErrorSchema, description="`bad_credentials`: the same for a wrong username "
                                                          "and a wrong password")
    @blp.alt_response(429, schema=ErrorSchema, description="`sign_in_locked` (this account, Retry-After), "
                                                          "`too_many_signins` (this address)")
    def post(self, body):
        """Sign in: a session for 30 days with every scope. API clients get its `token`; the
        web pages ask `use_cookie` and get it in an HttpOnly, SameSite cookie instead (then
        every state-changing request sends `X-CSRF-Token: <csrf_token>`)."""
        admit_per_address("SIGNIN_LIMIT", "too_many_signins", "sign-in attempts")
        device = body.get("device") or request.cookies.get(DEVICE_COOKIE)
        signed = accounts().sign_in(body["username"], body["password"], device)
        found = accounts().authenticate(signed.credential)
        out = {"token_id": signed.grant.id, "account": _public(signed.account), "scopes": list(signed.grant.scopes),
               "expires_at": signed.grant.expires_at, "device": signed.device,
               "csrf_token": accounts().csrf_token(found)}
        if not body["use_cookie"]:
            out["token"] = signed.credential
        response = jsonify(out)
        response.status_code = 201
        if body["use_cookie"]:
            secure = request.scheme == "https"
            max_age = max(0, (signed.grant.expires_at - int(time.time() * 1000)) // 1000)
            response.set_cookie(SESSION_COOKIE, signed.credential, max_age=max_age, path="/", secure=secure,
                                httponly=True, samesite="Lax")
            response.set_cookie(DEVICE_COOKIE, signed.device, max_age=400 * 86400, path="/v1/sessions",
                                secure=secure, httponly=True, samesite="Strict")
        return response


@blp.route("/session")
class CurrentSession(MethodView):
    @blp.doc(security=ANY)
    @blp.response(204)
    @blp.alt_response(401, schema=ErrorSchema, description="no or unknown session")
    def delete(self):
        """Sign out: this session ends (its cookie too)."""
        accounts().sign_out(principal())
        return _end_cookie(_no_content())


@blp.route("/account")
class WhoAmI(MethodView):
    @blp.doc(security=ANY)
    @blp.response(200, WhoAmISchema)
    @blp.alt_response(401, schema=ErrorSchema, description="no, unknown, revoked or expired credential")
    def get(self):
        """Who the credential is: the account, the credential's id, kind and scopes (and a
        cookie session's CSRF token)."""
        found = principal()
        account = accounts().account(found.account_id)
        out = {"id": account.id, "username": account.username, "created_at": account.created_at,
               "token_id": found.token_id, "kind": found.kind, "scopes": list(found.scopes)}
        if found.via_cookie:
            out["csrf_token"] = accounts().csrf_token(found)
        return out


@blp.route("/account/password")
class Password(MethodView):
    @blp.doc(security=ACCOUNT)
    @blp.arguments(PasswordChangeSchema)
    @blp.response(204)
    @blp.alt_response(403, schema=ErrorSchema, description="`wrong_password`, `missing_scope`")
    @blp.alt_response(422, schema=ErrorSchema, description="`password_refused`")
    def post(self, body):
        """Change the password: every other session ends (personal tokens stay)."""
        accounts().change_password(principal("account"), body["current_password"], body["new_password"])
        return _no_content()


@blp.route("/account/sign-out-everywhere")
class SignOutEverywhere(MethodView):
    @blp.doc(security=ACCOUNT)
    @blp.response(204)
    def post(self):
        """Every session of the account ends, this one included (personal tokens stay)."""
        found = principal("account")
        accounts().sign_out_everywhere(found)
        response = _no_content()
        return _end_cookie(response) if found.via_cookie else response


@blp.route("/account/recovery-codes")
class RecoveryCodes(MethodView):
    @blp.doc(security=ACCOUNT)
    @blp.arguments(PasswordSchema)
    @blp.response(201, RecoveryCodesSchema)
    @blp.alt_response(403, schema=ErrorSchema, description="`wrong_password`")
    def post(self, body):
        """New recovery codes, shown once; the old ones stop working."""
        return {"recovery_codes": accounts().replace_recovery_codes(principal("account"), body["password"])}, 201


@blp.route("/account/recover")
class Recover(MethodView):
    @blp.arguments(RecoverSchema)
    @blp.response(204)
    @blp.alt_response(401, schema=ErrorSchema, description="`bad_credentials`: no such username and unused code")
    @blp.alt_response(429, schema=ErrorSchema, description="`sign_in_locked`, `too_many_signins`")
    def post(self, body):
        """A new password with one unused recovery code; every session ends."""
        admit_per_address("SIGNIN_LIMIT", "too_many_signins", "sign-in attempts")
        accounts().recover(body["username"], body["recovery_code"], body["new_password"])
        return _no_content()


@blp.route("/account/tokens")
class Tokens(MethodView):
    @blp.doc(security=ACCOUNT)
    @blp.response(200, TokensSchema)
    def get(self):
        """The account's live credentials (sessions and personal tokens): label, scopes,
        created, expires, last used. Never the tokens themselves."""
        return {"tokens": accounts().tokens(principal("account"))}

    @blp.doc(security=ACCOUNT)
    @blp.arguments(TokenRequestSchema)
    @blp.response(201, NewTokenSchema)
    @blp.alt_response(403, schema=ErrorSchema, description="`missing_scope`: a scope the creating credential "
                                                          "does not hold")
    def post(self, body):
        """A personal API token: shown once, stored only as a hash."""
        token, grant = accounts().create_token(principal("account"), body["label"], body["scopes"],
                                               body.get("expires_in_days"))
        return {"token": token, **grant.as_public(), "last_used_at": None}, 201


@blp.route("/account/tokens/<token_id>")
class Token(MethodView):
    @blp.doc(security=ACCOUNT)
    @blp.response(204)
    @blp.alt_response(404, schema=ErrorSchema, description="no live token with this id")
    def delete(self, token_id):
        """Revoke a token or end a session: 401 on its next request, its streams close within 1 s."""
        found = principal("account")
        accounts().revoke(found, token_id)
        response = _no_content()
        return _end_cookie(response) if found.via_cookie and token_id == found.token_id else response


@blp.route("/account/games")
class MyGames(MethodView):
    @blp.doc(security=READ)
    @blp.arguments(AccountGamesQuerySchema, location="query")
    @blp.response(200, AccountGamesSchema)
    def get(self, query):
        """The account's games, newest move first: `status` active or finished, `my_turn`,
        `type`; each with what a list needs (players, status, whose turn, last move)."""
        found = principal("read")
        return current_app.extensions["account_games"].list(found.account_id, query.get("status"), query["my_turn"],
                                                            query.get("type"), query["offset"], query["limit"])


@blp.route("/account/events")
class AccountEvents(MethodView):
    @blp.doc(security=READ, responses={"200": {"content": {
        "application/json": {"schema": {"$ref": "#/components/schemas/AccountEvents"}},
        SSE: {"schema": {"type": "string", "description": "Server-Sent Events; id = the event's id"}},
        "application/x-ndjson": {"schema": {"type": "string", "description": "one JSON message per line"}}}}})
    @blp.arguments(AccountEventsQuerySchema, location="query")
    @blp.response(200, AccountEventsSchema)
    @blp.alt_response(429, schema=ErrorSchema, description="too many open streams for this token or address")
    def get(self, query):
        """The account's events across all its games: `game.joined`, `game.started`, `turn`
        (game, seat, version, decision), `game.ended` (rank, winners). JSON: those after
        `after`. `Accept: application/x-ndjson` or `text/event-stream` streams them as they
        come, with keep-alives, resumable with `after` or Last-Event-ID; the stream ends
        within a second of its credential's revocation."""
        found = principal("read")
        after = query["after"]
        kind = stream_kind(request.accept_mimetypes)
        if kind is None:
            events, until = notices_after(games().store, found, after)
            return {"events": events, "until": until}
        resume = request.headers.get("Last-Event-ID", "")
        if kind == SSE and resume:
            after = ascii_int(resume)
            if after is None:
                raise Invalid(f"Last-Event-ID: must be an event id, 1 to {MAX_INT_DIGITS} ASCII digits",
                              {"field": "Last-Event-ID"})
        head = games().store.head(found.stream_id)[0]
        if after > head:
            raise Invalid(f"after: the account's stream is at {head}", {"field": "after"})
        # Read after the head, not from the cache: a credential revoked through another process
        # is refused here, and one revoked later is revoked past the head, where the stream sees it.
        if not accounts().still_valid(found):
            raise Unauthorized("credential: unknown or revoked token", {"field": "credential"})
        release = open_wait(credential()[0])
        try:
            messages = account_stream_body(request.environ, found, after, kind, query.get("follow"))
        except BaseException:
            release()
            raise
        present = current_app.extensions["presence"].hold(found.account_id)   # keeps the account's seeks alive
        response = Response(stream_with_context(messages), mimetype=kind, headers=STREAM_HEADERS)
        response.call_on_close(release)
        response.call_on_close(present)
        return response


@blp.route("/account/close")
class Close(MethodView):
    @blp.doc(security=ACCOUNT)
    @blp.arguments(PasswordSchema)
    @blp.response(204)
    @blp.alt_response(403, schema=ErrorSchema, description="`wrong_password`")
    def post(self, body):
        """Close the account: every session and token ends, the username is kept from reuse for
        a year; the games keep their logs and show the seat as a closed account's."""
        accounts().close(principal("account"), body["password"])
        return _end_cookie(_no_content())


@blp.route("/account/export")
class Export(MethodView):
    @blp.doc(security=ACCOUNT)
    @blp.response(200, ExportSchema)
    def get(self):
        """The account's own data: profile, credentials' labels, games."""
        found = principal("account")
        listing = current_app.extensions["account_games"]
        rows, offset = [], 0
        while True:
            page = listing.list(found.account_id, None, False, None, offset, 100)
            rows += page["games"]
            offset += 100
            if offset >= page["total"]:
                break
        return accounts().export(found, rows)
