"""Wallets: open one, grant play credits, read it."""

from __future__ import annotations

from uuid import UUID

from api.auth import command_key, ledger, principal
from api.resources import command, problems, resource_blueprint
from api.schemas import GrantArgs, WalletOpenArgs, WalletSchema
from api.schemas_lobby import WalletListArgs, WalletListSchema

blp = resource_blueprint("wallets", __name__, "/wallets", "Play-credit wallets (C1)")


@blp.route("", methods=["POST"])
@blp.arguments(WalletOpenArgs)
@blp.response(201, WalletSchema)
@command(blp)
def open_wallet(args: dict) -> dict:
    """Open an empty wallet for a pseudonymous player (operator)."""
    return ledger().open_wallet(principal(), args["player_id"], command=command_key(args))


@blp.route("", methods=["GET"])
@blp.arguments(WalletListArgs, location="query")
@blp.response(200, WalletListSchema)
@problems(blp)
def list_wallets(args: dict) -> dict:
    """List wallets in id order with their balances, by player id prefix (operator, auditor;
    a player gets only their own)."""
    return ledger().list_wallets(principal(), player_id=args.get("player_id"),
                                 after=args.get("after"), limit=args["limit"])


@blp.route("/<uuid:wallet_id>", methods=["GET"])
@blp.response(200, WalletSchema)
@problems(blp)
def read_wallet(wallet_id: UUID) -> dict:
    """Read a wallet (operator, auditor, or its own player)."""
    return ledger().wallet(principal(), wallet_id)


@blp.route("/<uuid:wallet_id>/grants", methods=["POST"])
@blp.arguments(GrantArgs)
@blp.response(201, WalletSchema)
@command(blp)
def grant(args: dict, wallet_id: UUID) -> dict:
    """Grant play credits to a wallet (operator, C1)."""
    return ledger().grant(principal(), wallet_id, args["amount"], command=command_key(args))
