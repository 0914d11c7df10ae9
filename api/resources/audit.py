"""Audit: the global event feed, tables and wallets as they stood, wallet statements."""

from __future__ import annotations

from uuid import UUID

from api.auth import ledger, principal
from api.resources import problems, resource_blueprint
from api.schemas import AsOfArgs, AsOfSchema, FeedArgs, FeedSchema, PeriodArgs, StatementSchema

blp = resource_blueprint("audit", __name__, "", "The event feed, time travel and statements")


@blp.route("/events", methods=["GET"])
@blp.arguments(FeedArgs, location="query")
@blp.response(200, FeedSchema)
@problems(blp)
def feed(args: dict) -> dict:
    """Read the global log in order, a page at a time (operator, auditor)."""
    types = set(args["type"]) if args.get("type") else None
    return ledger().event_feed(
        principal(), after=args["after"], limit=args["limit"], table=args.get("table"),
        wallet=args.get("wallet"), player=args.get("player"), types=types,
        since=args.get("since"), until=args.get("until"),
    )


@blp.route("/tables/<uuid:table_id>/as-of", methods=["GET"])
@blp.arguments(AsOfArgs, location="query")
@blp.response(200, AsOfSchema)
@problems(blp)
def table_as_of(args: dict, table_id: UUID) -> dict:
    """A table as it stood at a version or an instant (operator, auditor)."""
    return ledger().state_at(principal(), table_id, args.get("version"), args.get("at"))


@blp.route("/wallets/<uuid:wallet_id>/as-of", methods=["GET"])
@blp.arguments(AsOfArgs, location="query")
@blp.response(200, AsOfSchema)
@problems(blp)
def wallet_as_of(args: dict, wallet_id: UUID) -> dict:
    """A wallet as it stood at a version or an instant."""
    return ledger().state_at(principal(), wallet_id, args.get("version"), args.get("at"))


@blp.route("/wallets/<uuid:wallet_id>/statement", methods=["GET"])
@blp.arguments(PeriodArgs, location="query")
@blp.response(200, StatementSchema)
@problems(blp)
def statement(args: dict, wallet_id: UUID) -> dict:
    """Every transfer of a wallet in a period, with its cause and the running balance."""
    return ledger().statement(principal(), wallet_id, args.get("since"), args.get("until"))
