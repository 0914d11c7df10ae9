"""Tables: open one, read it as its caller may see it, set the client seed, play."""

from __future__ import annotations

import hashlib
from typing import Any
from uuid import UUID

import orjson
from flask import Response, request, url_for

from api import answers
from api.auth import command_key, ledger, principal
from api.resources import command, location, problems, resource_blueprint
from api.schemas import (
    MAX_SEATS,
    BankArgs,
    ChoiceArgs,
    ClientSeedArgs,
    DealArgs,
    DealSchema,
    NextDealArgs,
    SeatArgs,
    SeatOnlyArgs,
    TableBetArgs,
    TableOpenArgs,
    TableSchema,
)
from api.schemas_lobby import BetSlipArgs, BetSlipSchema, TableListArgs, TableListSchema

blp = resource_blueprint("tables", __name__, "/tables", "Tables of every Red Dog variant")
#: The table's answer, dumped in the view itself (its ETag is of what it dumps).
TABLE = TableSchema()
SEAT = {"in": "path", "name": "seat", "description": "The seat, from 1 (G5)",
        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_SEATS}}


@blp.route("", methods=["POST"])
@blp.arguments(TableOpenArgs)
@blp.response(201, TableSchema, headers=location("The new table"))
@command(blp)
def open_table(args: dict) -> Any:
    """Open a table with the wallet's player seated (operator)."""
    table = ledger().deals.open_any_table(
        principal(), args["variant"], wallet_id=args.get("wallet_id"), limits=args.get("limits"),
        client_seed=args.get("client_seed"), accepts_supplied_seeds=args["accepts_supplied_seeds"],
        command=command_key(args), name=args.get("name"), starts=args.get("starts"),
    )
    return table, 201, _at_table(table["id"])


def _at_table(table_id: Any) -> dict[str, str]:
    return {"Location": url_for("tables.read_table", table_id=table_id)}


NOT_MODIFIED = ("The table looks to this caller as it did when it answered the ETag sent in "
                "If-None-Match; no body")


@blp.route("", methods=["GET"])
@blp.arguments(TableListArgs, location="query")
@blp.response(200, TableListSchema)
@problems(blp)
def list_tables(args: dict) -> dict:
    """List tables in id order for the lobby: limits, seats, pot or bank, dealer (players: every
    multi-seat table and their own casino tables)."""
    return ledger().lobby.list_tables(principal(), variant=args.get("variant"),
                                status=args.get("status"), after=args.get("after"),
                                limit=args["limit"])


@blp.route("/<uuid:table_id>", methods=["GET"])
@blp.response(200, TableSchema, headers={"ETag": {
    "description": "Names this answer as this caller sees it; send it as If-None-Match",
    "schema": {"type": "string"}}})
@blp.alt_response(304, description=NOT_MODIFIED)
@problems(blp)
def read_table(table_id: UUID) -> Any:
    """Read a table as its player may see it, with the actions legal now. With If-None-Match
    naming the ETag of the last answer, 304 while nothing this caller sees has changed."""
    view = answers.dump(TABLE, ledger().deals.table(principal(), table_id))  # once, for both uses
    etag = hashlib.sha256(answers.encode(view, orjson.OPT_SORT_KEYS)).hexdigest()[:32]
    headers = {"ETag": f'"{etag}"', "Cache-Control": "private, no-cache"}
    if etag in request.if_none_match:
        return Response(status=304, headers=headers)
    answer = answers.respond(view)  # what the response schema would have written
    answer.headers.update(headers)
    return answer


@blp.route("/<uuid:table_id>/bet-slip", methods=["GET"])
@blp.arguments(BetSlipArgs, location="query")
@blp.response(200, BetSlipSchema)
@problems(blp)
def bet_slip(args: dict, table_id: UUID) -> dict:
    """Apply one bet-slip control of a casino table (C8) and say what each control would do
    next: chips laid, Undo, Clear, Rebet, Double, Deal. Records nothing."""
    return ledger().lobby.bet_slip(principal(), table_id, args["chips"], action=args.get("action"),
                             chip=args.get("chip"))


@blp.route("/<uuid:table_id>/client-seed", methods=["POST"])
@blp.arguments(ClientSeedArgs)
@blp.response(200, TableSchema)
@command(blp)
def change_client_seed(args: dict, table_id: UUID) -> dict:
    """Set the client seed for the next shuffle, between deals (fairness.md)."""
    return ledger().deals.change_client_seed(
        principal(), table_id, args["client_seed"], command=command_key(args)
    )


@blp.route("/<uuid:table_id>/deals", methods=["POST"])
@blp.arguments(DealArgs)
@blp.response(201, DealSchema, headers=location("The new deal"))
@command(blp)
def deal(args: dict, table_id: UUID) -> Any:
    """Deal: commit to a fresh shuffle, take the opening bet, deal two cards (G2, C2, C3)."""
    dealt = ledger().deals.deal(
        principal(), table_id, args["bet"], server_seed=args.get("server_seed"),
        command=command_key(args),
    )
    return dealt, 201, {"Location": url_for("deals.read_deal", deal_id=dealt["id"])}


@blp.route("/<uuid:table_id>/seats", methods=["POST"])
@blp.arguments(SeatArgs)
@blp.response(201, TableSchema, headers=location("The table"))
@command(blp)
def seat(args: dict, table_id: UUID) -> Any:
    """Seat a wallet's player between deals (G5, G9; operator or the wallet's player)."""
    table = ledger().tables.seat_player(principal(), table_id, args["seat"], args["wallet_id"],
                                 command=command_key(args))
    return table, 201, _at_table(table_id)


@blp.route("/<uuid:table_id>/seats/<int:seat>/leave", methods=["POST"], parameters=[SEAT])
@blp.response(200, TableSchema)
@command(blp)
def leave(table_id: UUID, seat: int) -> dict:
    """Leave a seat between deals (G5)."""
    return ledger().tables.unseat_player(principal(), table_id, seat, command=command_key())


@blp.route("/<uuid:table_id>/bank", methods=["POST"])
@blp.arguments(BankArgs)
@blp.response(200, TableSchema)
@command(blp)
def fund_bank(args: dict, table_id: UUID) -> dict:
    """The dealer or banker stakes the pot or bank (S1, P1, XB1, H11)."""
    return ledger().play.fund_bank(principal(), table_id, args["amount"], command=command_key(args))


@blp.route("/<uuid:table_id>/bank/decline", methods=["POST"])
@blp.response(200, TableSchema)
@command(blp)
def decline_bank(table_id: UUID) -> dict:
    """The dealer declines to stake the pot; the deal and bank pass left (S1, P1, XB1)."""
    return ledger().play.decline_bank(principal(), table_id, command=command_key())


@blp.route("/<uuid:table_id>/next-deal", methods=["POST"])
@blp.arguments(NextDealArgs)
@blp.response(201, TableSchema, headers=location("The table, its new deal under way"))
@command(blp)
def next_deal(args: dict, table_id: UUID) -> Any:
    """Start the next deal of a multi-seat table: first dealer (G7), antes, shuffle, hands."""
    table = ledger().play.start_deal(principal(), table_id, server_seed=args.get("server_seed"),
                                command=command_key(args))
    return table, 201, _at_table(table_id)


@blp.route("/<uuid:table_id>/ready", methods=["POST"])
@blp.arguments(SeatOnlyArgs)
@blp.response(200, TableSchema)
@command(blp)
def say_ready(args: dict, table_id: UUID) -> dict:
    """Say the seat's player is ready for the next deal, at a table whose deals start when
    every seated player is (G11); the last to say so starts it, in this command."""
    return ledger().play.say_ready(principal(), table_id, args["seat"], command=command_key(args))


@blp.route("/<uuid:table_id>/bets", methods=["POST"])
@blp.arguments(TableBetArgs)
@blp.response(200, TableSchema)
@command(blp)
def table_bet(args: dict, table_id: UUID) -> dict:
    """Bet, or cover part of the bank (H5, S3, P3, X4, XB3)."""
    return ledger().play.bet(principal(), table_id, args["seat"], args["amount"],
                        command=command_key(args))


@blp.route("/<uuid:table_id>/centre-card", methods=["POST"])
@blp.arguments(SeatOnlyArgs)
@blp.response(200, TableSchema)
@command(blp)
def buy_centre_card(args: dict, table_id: UUID) -> dict:
    """Buy a new centre card for a fifth of the pot (FW2)."""
    return ledger().play.buy_centre_card(principal(), table_id, args["seat"],
                                    command=command_key(args))


@blp.route("/<uuid:table_id>/passes", methods=["POST"])
@blp.arguments(SeatOnlyArgs)
@blp.response(200, TableSchema)
@command(blp)
def pass_turn(args: dict, table_id: UUID) -> dict:
    """Pass without betting (FW3, XB3)."""
    return ledger().play.pass_turn(principal(), table_id, args["seat"], command=command_key(args))


@blp.route("/<uuid:table_id>/dealer-choice", methods=["POST"])
@blp.arguments(ChoiceArgs)
@blp.response(200, TableSchema)
@command(blp)
def dealer_choice(args: dict, table_id: UUID) -> dict:
    """After three deals in a row: pass now or deal a fourth time (S6)."""
    return ledger().play.dealer_choice(principal(), table_id, args["choice"],
                                  command=command_key(args))


@blp.route("/<uuid:table_id>/pot-split", methods=["POST"])
@blp.response(200, TableSchema)
@command(blp)
def split_pot(table_id: UUID) -> dict:
    """Split the pot equally among the seated players (H10, operator)."""
    return ledger().tables.split_pot(principal(), table_id, command=command_key())


@blp.route("/<uuid:table_id>/close", methods=["POST"])
@blp.response(200, TableSchema)
@command(blp)
def close(table_id: UUID) -> dict:
    """Close the table and pay out its pot (H10, operator)."""
    return ledger().tables.close_table(principal(), table_id, command=command_key())
