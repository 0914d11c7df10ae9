"""Disputes: a player disputes a finished deal of theirs; staff list, read and resolve them."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import url_for

from api.auth import command_key, ledger, principal
from api.resources import command, problems, resource_blueprint
from api.schemas_disputes import (
    DisputeListArgs,
    DisputeListSchema,
    DisputeOpenArgs,
    DisputeResolveArgs,
    DisputeSchema,
)

blp = resource_blueprint("disputes", __name__, "", "Disputes of deals: open, queue, resolve")

LOCATION = {"Location": {"description": "The new dispute", "schema": {"type": "string"}}}


@blp.route("/deals/<uuid:deal_id>/disputes", methods=["POST"])
@blp.arguments(DisputeOpenArgs)
@blp.response(201, DisputeSchema, headers=LOCATION)
@command(blp)
def open_dispute(args: dict, deal_id: UUID) -> Any:
    """Dispute one of your own finished deals, with a message (player). A deal is disputed once
    per player: a second dispute is 409."""
    dispute = ledger().disputes.open_dispute(principal(), deal_id, args["message"],
                                    command=command_key(args))
    return dispute, 201, {"Location": url_for("disputes.read_dispute",
                                              dispute_id=dispute["dispute_id"])}


@blp.route("/disputes", methods=["GET"])
@blp.arguments(DisputeListArgs, location="query")
@blp.response(200, DisputeListSchema)
@problems(blp)
def list_disputes(args: dict) -> dict:
    """List disputes of one status, oldest first: the open ones are staff's queue (operator,
    auditor); a player sees their own. Read from the projection. With `deal`, that deal's
    disputes (staff: every seat's; a player: their own), read from their events."""
    return ledger().disputes.list_disputes(principal(), args.get("status"), after=args.get("after"),
                                  limit=args["limit"], deal=args.get("deal"))


@blp.route("/disputes/<uuid:dispute_id>", methods=["GET"])
@blp.response(200, DisputeSchema)
@problems(blp)
def read_dispute(dispute_id: UUID) -> dict:
    """Read a dispute (operator, auditor, or the player who opened it)."""
    return ledger().disputes.dispute(principal(), dispute_id)


@blp.route("/disputes/<uuid:dispute_id>/resolve", methods=["POST"])
@blp.arguments(DisputeResolveArgs)
@blp.response(200, DisputeSchema)
@command(blp)
def resolve_dispute(args: dict, dispute_id: UUID) -> dict:
    """Close an open dispute with a finding (operator). An upheld one may pay an `adjustment`:
    a transfer house → the player's wallet citing the dispute, never an edit. Resolving a
    resolved dispute is 409."""
    return ledger().disputes.resolve_dispute(principal(), dispute_id, args["finding"], args["upheld"],
                                    args["adjustment"], command=command_key(args))
