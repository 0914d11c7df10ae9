"""Tables: open one, read it as its player sees it, set the client seed, deal."""

from __future__ import annotations

from uuid import UUID

from api.auth import command_key, ledger, principal
from api.resources import command, problems, resource_blueprint
from api.schemas import ClientSeedArgs, DealArgs, DealSchema, TableOpenArgs, TableSchema

blp = resource_blueprint("tables", __name__, "/tables", "Casino Red Dog tables")


@blp.route("", methods=["POST"])
@blp.arguments(TableOpenArgs)
@blp.response(201, TableSchema)
@command(blp)
def open_table(args: dict) -> dict:
    """Open a table with the wallet's player seated (operator)."""
    return ledger().open_casino_table(
        principal(), args["wallet_id"], client_seed=args.get("client_seed"),
        accepts_supplied_seeds=args["accepts_supplied_seeds"], command=command_key(args),
    )


@blp.route("/<uuid:table_id>", methods=["GET"])
@blp.response(200, TableSchema)
@problems(blp)
def read_table(table_id: UUID) -> dict:
    """Read a table as its player may see it, with the actions legal now."""
    return ledger().table(principal(), table_id)


@blp.route("/<uuid:table_id>/client-seed", methods=["POST"])
@blp.arguments(ClientSeedArgs)
@blp.response(200, TableSchema)
@command(blp)
def change_client_seed(args: dict, table_id: UUID) -> dict:
    """Set the client seed for the next shuffle, between deals (fairness.md)."""
    return ledger().change_client_seed(
        principal(), table_id, args["client_seed"], command=command_key(args)
    )


@blp.route("/<uuid:table_id>/deals", methods=["POST"])
@blp.arguments(DealArgs)
@blp.response(201, DealSchema)
@command(blp)
def deal(args: dict, table_id: UUID) -> dict:
    """Deal: commit to a fresh shuffle, take the opening bet, deal two cards (G2, C2, C3)."""
    return ledger().deal(
        principal(), table_id, args["bet"], server_seed=args.get("server_seed"),
        command=command_key(args),
    )
