"""Audit: the global event feed, tables and wallets as they stood, wallet statements."""

from __future__ import annotations

from uuid import UUID

from flask import Response

from api.auth import ledger, principal
from api.gate import audit_read, budget
from api.resources import problems, resource_blueprint
from api.schemas_audit import (
    AsOfArgs,
    AsOfSchema,
    FeedArgs,
    FeedSchema,
    PeriodArgs,
    RecallArgs,
    RecallSchema,
    ReportArgs,
    ReportSchema,
    SeriesArgs,
    SeriesSchema,
    StatementSchema,
)
from ledger.app.reports import report_csv
from ledger.core import validation

blp = resource_blueprint("audit", __name__, "", "The event feed, time travel and statements")
PLAYER_ID = {"in": "path", "name": "player_id", "description": validation.PLAYER_ID.explain,
             "schema": {"type": "string", "pattern": validation.PLAYER_ID.anchored}}


@blp.route("/events", methods=["GET"])
@audit_read
@blp.arguments(FeedArgs, location="query")
@blp.response(200, FeedSchema)
@problems(blp)
def feed(args: dict) -> dict:
    """Read the global log in order, a page at a time (operator, auditor)."""
    types = set(args["type"]) if args.get("type") else None
    return ledger().audit.event_feed(
        principal(), after=args["after"], limit=args["limit"], table=args.get("table"),
        wallet=args.get("wallet"), player=args.get("player"), types=types,
        since=args.get("since"), until=args.get("until"), seconds=budget(),
    )


@blp.route("/tables/<uuid:table_id>/as-of", methods=["GET"])
@audit_read
@blp.arguments(AsOfArgs, location="query")
@blp.response(200, AsOfSchema)
@problems(blp)
def table_as_of(args: dict, table_id: UUID) -> dict:
    """A table as it stood at a version or an instant (operator, auditor)."""
    return ledger().audit.state_at(principal(), table_id, args.get("version"), args.get("at"))


@blp.route("/wallets/<uuid:wallet_id>/as-of", methods=["GET"])
@audit_read
@blp.arguments(AsOfArgs, location="query")
@blp.response(200, AsOfSchema)
@problems(blp)
def wallet_as_of(args: dict, wallet_id: UUID) -> dict:
    """A wallet as it stood at a version or an instant."""
    return ledger().audit.state_at(principal(), wallet_id, args.get("version"), args.get("at"))


@blp.route("/wallets/<uuid:wallet_id>/statement", methods=["GET"])
@audit_read
@blp.arguments(PeriodArgs, location="query")
@blp.response(200, StatementSchema)
@problems(blp)
def statement(args: dict, wallet_id: UUID) -> dict:
    """Every transfer of a wallet in a period, with its cause and the running balance."""
    return ledger().audit.statement(principal(), wallet_id, args.get("since"), args.get("until"),
                              after_version=args["after_version"], limit=args["limit"],
                              seconds=budget())


@blp.route("/reports", methods=["GET"])
@audit_read
@blp.arguments(ReportArgs, location="query")
@blp.response(200, ReportSchema)
@blp.alt_response(200, description="The same report as CSV with format=csv",
                  content_type="text/csv", success=True)
@problems(blp)
def report(args: dict) -> dict | Response:
    """A period report by table, variant, player or banker, as JSON or CSV: the house's hold
    where the house banks the bets, the bankers' results apart (operator, auditor)."""
    result = ledger().reports.report(
        principal(), args["since"], args["until"], group_by=args.get("group_by"),
        table=str(args["table"]) if args.get("table") else None,
        variant=args.get("variant"), player=args.get("player"),
    )
    if args["format"] == "csv":
        return Response(report_csv(result), mimetype="text/csv")
    return result


@blp.route("/reports/series", methods=["GET"])
@audit_read
@blp.arguments(SeriesArgs, location="query")
@blp.response(200, SeriesSchema)
@problems(blp)
def report_series(args: dict) -> dict:
    """A period's series for charts: handle, the house's hold and the bankers' net by day, the
    actual return to player as deals accumulate with the theoretical one, banks deal by deal
    (operator, auditor)."""
    return ledger().series.report_series(
        principal(), args["since"], args["until"],
        table=str(args["table"]) if args.get("table") else None, variant=args.get("variant"))


@blp.route("/players/<string:player_id>/recall", methods=["GET"], parameters=[PLAYER_ID])
@audit_read
@blp.arguments(RecallArgs, location="query")
@blp.response(200, RecallSchema)
@problems(blp)
def recall(args: dict, player_id: str) -> dict:
    """A player's last deals with cards, bets, outcome and balances (the player, operator, auditor)."""
    return ledger().reports.recall(principal(), player_id, args["count"])
