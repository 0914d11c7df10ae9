"""Sign-in for the pages: exchange a one-time sign-in link for a session key; who is asking."""

from __future__ import annotations

from typing import Any

from flask import url_for

from api.auth import ledger, principal
from api.resources import ResourceBlueprint, location, problems
from api.schemas_keys import KeySchema
from api.schemas_lobby import SessionSchema, SignInArgs

# Not `resource_blueprint`: signing in is how a page gets a key, so `POST /sign-in` takes none.
blp = ResourceBlueprint("session", __name__, url_prefix="",
                        description="Sign-in links and the caller's own key")


@blp.route("/sign-in", methods=["POST"])
@blp.arguments(SignInArgs)
@blp.response(201, SessionSchema, headers=location("The session key's record (`GET /me`)"))
@problems(blp)
def sign_in(args: dict) -> Any:
    """Exchange a one-time sign-in link for a session key (no Authorization needed).

    The link is used up: a second exchange is 401, as is an unknown or expired link. The
    session key has the link's role and player and lasts 12 hours."""
    key, record = ledger().signin.exchange_sign_in_link(args["token"])
    return {**record, "key": key}, 201, {"Cache-Control": "no-store",
                                         "Location": url_for("session.whoami")}


@blp.route("/me", methods=["GET"])
@blp.response(200, KeySchema)
@problems(blp)
def whoami() -> dict:
    """Read the caller's own key record: role, player, label, expiry (never the key)."""
    return ledger().signin.whoami(principal())
