"""Deals: find finished ones; stand or raise, read, list events, replay step by step, hand
history, check fairness."""

from __future__ import annotations

from uuid import UUID

from flask import Response

from api.auth import command_key, ledger, principal
from api.gate import audit_read
from api.resources import command, problems, resource_blueprint
from api.schemas import DealSchema, EventSchema, FairnessSchema, ReplaySchema
from api.schemas_search import DealSearchArgs, DealSearchSchema
from ledger.history.hands import export_history

blp = resource_blueprint("deals", __name__, "/deals", "Casino Red Dog deals, their events and audit")


@blp.route("", methods=["GET"])
@audit_read
@blp.arguments(DealSearchArgs, location="query")
@blp.response(200, DealSearchSchema)
@problems(blp)
def find_deals(args: dict) -> dict:
    """Find finished deals by table, player, variant, outcome, time and dispute, newest first
    (staff: any deal; a player: the deals they played in)."""
    return ledger().search.find_deals(
        principal(), table=args.get("table"), player=args.get("player"),
        variant=args.get("variant"), outcome=args.get("outcome"), since=args.get("since"),
        until=args.get("until"), disputed=args.get("disputed"), after=args.get("after"),
        limit=args["limit"])


@blp.route("/<uuid:deal_id>", methods=["GET"])
@blp.response(200, DealSchema)
@problems(blp)
def read_deal(deal_id: UUID) -> dict:
    """Read a deal as it stands."""
    return ledger().deals.deal_state(principal(), deal_id)


@blp.route("/<uuid:deal_id>/stand", methods=["POST"])
@blp.response(200, DealSchema)
@command(blp)
def stand(deal_id: UUID) -> dict:
    """Stand on the opening bet; the third card settles the deal (C6, C7)."""
    return ledger().casino.stand(principal(), deal_id, command=command_key())


@blp.route("/<uuid:deal_id>/raise", methods=["POST"])
@blp.response(200, DealSchema)
@command(blp)
def raise_bet(deal_id: UUID) -> dict:
    """Raise by exactly the opening bet; the third card settles the deal (C6, C7)."""
    return ledger().casino.raise_bet(principal(), deal_id, command=command_key())


@blp.route("/<uuid:deal_id>/events", methods=["GET"])
@audit_read
@blp.response(200, EventSchema(many=True))
@problems(blp)
def deal_events(deal_id: UUID) -> list:
    """List a deal's events in order, nothing unrevealed."""
    return ledger().deals.deal_events(principal(), deal_id)


@blp.route("/<uuid:deal_id>/replay", methods=["GET"])
@audit_read
@blp.response(200, ReplaySchema)
@problems(blp)
def replay(deal_id: UUID) -> dict:
    """Replay a deal step by step, with the state after each step."""
    return ledger().deals.replay(principal(), deal_id)


#: What the hand history answer says about itself.
HISTORY_HEADERS = {"Content-Disposition": {
    "description": "`attachment; filename=deal-<deal id>.rdhh`: browsers save it as a file",
    "schema": {"type": "string"}}}


@blp.route("/<uuid:deal_id>/history", methods=["GET"])
@audit_read
@blp.response(200, {"type": "string"}, content_type="text/plain", headers=HISTORY_HEADERS,
              description="The deal's hand history, RDHH/1 text (docs/audit.md)")
@problems(blp)
def history(deal_id: UUID) -> Response:
    """A finished deal's portable hand history (RDHH/1), as `reddog history export` writes it.
    Readable by whoever may read its replay; a deal in progress is 422 (G2: its seed is still
    sealed)."""
    text = export_history(ledger(), deal_id, principal())
    return Response(text, content_type="text/plain; charset=utf-8", headers={
        "Content-Disposition": f"attachment; filename=deal-{deal_id}.rdhh"})


@blp.route("/<uuid:deal_id>/fairness", methods=["GET"])
@audit_read
@blp.response(200, FairnessSchema)
@problems(blp)
def fairness(deal_id: UUID) -> dict:
    """Check a finished deal against its commitment (fairness.md)."""
    return ledger().deals.check_fairness(principal(), deal_id)
