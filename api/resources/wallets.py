"""Wallets: open one, grant play credits, read it."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import url_for

from api.auth import command_key, ledger, principal
from api.resources import command, location, problems, resource_blueprint
from api.schemas import GrantArgs, WalletOpenArgs, WalletSchema
from api.schemas_lobby import WalletListArgs, WalletListSchema

blp = resource_blueprint("wallets", __name__, "/wallets", "Play-credit wallets (C1)")


@blp.route("", methods=["POST"])
@blp.arguments(WalletOpenArgs)
@blp.response(201, WalletSchema, headers=location("The new wallet"))
@command(blp)
def open_wallet(args: dict) -> Any:
    """Open an empty wallet for a pseudonymous player (operator)."""
    wallet = ledger().wallets.open_wallet(principal(), args["player_id"], command=command_key(args))
    return wallet, 201, {"Location": url_for("wallets.read_wallet", wallet_id=wallet["id"])}


@blp.route("", methods=["GET"])
@blp.arguments(WalletListArgs, location="query")
@blp.response(200, WalletListSchema)
@problems(blp)
def list_wallets(args: dict) -> dict:
    """List wallets in id order with their balances, by player id prefix (operator, auditor;
    a player gets only their own)."""
    return ledger().lobby.list_wallets(principal(), player_id=args.get("player_id"),
                                 after=args.get("after"), limit=args["limit"])


@blp.route("/<uuid:wallet_id>", methods=["GET"])
@blp.response(200, WalletSchema)
@problems(blp)
def read_wallet(wallet_id: UUID) -> dict:
    """Read a wallet (operator, auditor, or its own player)."""
    return ledger().wallets.wallet(principal(), wallet_id)


@blp.route("/<uuid:wallet_id>/grants", methods=["POST"])
@blp.arguments(GrantArgs)
@blp.response(201, WalletSchema, headers=location("The wallet credited"))
@command(blp)
def grant(args: dict, wallet_id: UUID) -> Any:
    """Grant play credits to a wallet (operator, C1)."""
    wallet = ledger().wallets.grant(principal(), wallet_id, args["amount"], command=command_key(args))
    return wallet, 201, {"Location": url_for("wallets.read_wallet", wallet_id=wallet_id)}
