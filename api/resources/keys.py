"""API keys: issue one (shown once), list them, read one, revoke one (operators)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import url_for

from api.auth import command_key, ledger, principal
from api.resources import command, problems, resource_blueprint
from api.schemas_keys import IssuedKeySchema, KeyIssueArgs, KeyListArgs, KeyListSchema, KeySchema

blp = resource_blueprint("keys", __name__, "/keys", "API keys: issue, list, read, revoke")

LOCATION = {"Location": {"description": "The new key's record", "schema": {"type": "string"}}}


@blp.route("", methods=["GET"])
@blp.arguments(KeyListArgs, location="query")
@blp.response(200, KeyListSchema)
@problems(blp)
def list_keys(args: dict) -> dict:
    """List API keys in key id order, a page at a time, with their last use (operator)."""
    return ledger().keys.list_keys(
        principal(), role=args.get("role"), player_id=args.get("player_id"),
        include_inactive=args["include_inactive"], after=args.get("after"), limit=args["limit"])


@blp.route("", methods=["POST"])
@blp.arguments(KeyIssueArgs)
@blp.response(201, IssuedKeySchema, headers=LOCATION)
@command(blp)
def issue_key(args: dict) -> Any:
    """Issue an API key; the answer shows the key this once (operator).

    A repeat with the same Idempotency-Key issues no second key: it is 409, naming the key the
    first request issued."""
    key, record = ledger().keys.issue_key(
        args["role"], args.get("player_id"), args["label"], expires_at=args.get("expires_at"),
        expires_in_days=args.get("expires_in_days"), rate_limit=args.get("rate_limit"),
        actor=principal(), command=command_key(args), kind=args["kind"])
    headers = {"Location": url_for("keys.read_key", key_id=record["key_id"]),
               "Cache-Control": "no-store"}
    return {**record, "key": key}, 201, headers


@blp.route("/<uuid:key_id>", methods=["GET"])
@blp.response(200, KeySchema)
@problems(blp)
def read_key(key_id: UUID) -> dict:
    """Read an API key's record, as current as authentication (operator)."""
    return ledger().keys.get_key(principal(), key_id)


@blp.route("/<uuid:key_id>/revoke", methods=["POST"])
@blp.response(200, KeySchema)
@command(blp)
def revoke_key(key_id: UUID) -> dict:
    """Revoke an API key: every worker refuses it from the next request (operator). Revoking a
    revoked key is 409."""
    return ledger().keys.revoke_key(principal(), key_id, command=command_key())
