"""The one place that decides what each role may see and do. Every command and query asks it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ledger.core.errors import Forbidden
from ledger.domain.access import Role


class Action(StrEnum):
    """Everything a caller can ask of the ledger."""

    OPEN_WALLET = "open_wallet"
    GRANT = "grant"
    READ_WALLET = "read_wallet"
    OPEN_TABLE = "open_table"
    CHANGE_CLIENT_SEED = "change_client_seed"
    PLAY = "play"
    """Deal, stand or raise at a seat."""
    READ_TABLE = "read_table"
    READ_DEAL = "read_deal"
    FIND_DEALS = "find_deals"
    """Search finished deals (a player: those they played in)."""
    ISSUE_KEY = "issue_key"
    MANAGE_KEYS = "manage_keys"
    """List, read and revoke API keys."""
    SEAT = "seat"
    """Seat a wallet at a table, or leave a seat."""
    MANAGE_TABLE = "manage_table"
    """Split the pot (H10) or close a table."""
    AUDIT = "audit"
    """Read the global event feed and past states of tables."""
    SUPPLY_SEED = "supply_seed"
    """Supply the server seed of a deal (an external RNG), where the table allows it."""
    OPEN_DISPUTE = "open_dispute"
    """Dispute one of the player's own finished deals."""
    READ_DISPUTES = "read_disputes"
    """List and read disputes (a player: their own)."""
    RESOLVE_DISPUTE = "resolve_dispute"
    """Close a dispute with a finding and, where the ledger owes the player, an adjustment."""
    WATCH = "watch"
    """Scrape the service's metrics (`/metrics`): staff only, never a player nor no key."""
    SIGN_CHECKPOINT = "sign_checkpoint"
    """Have the public log sign a checkpoint now, rather than when one is due."""


#: Which roles may take an action at all; OWNED actions further need the caller's own seat or wallet.
ALLOWED: dict[Action, frozenset[Role]] = {
    Action.OPEN_WALLET: frozenset({Role.OPERATOR}),
    Action.GRANT: frozenset({Role.OPERATOR}),
    Action.READ_WALLET: frozenset({Role.OPERATOR, Role.AUDITOR, Role.PLAYER}),
    Action.OPEN_TABLE: frozenset({Role.OPERATOR}),
    Action.CHANGE_CLIENT_SEED: frozenset({Role.OPERATOR, Role.PLAYER}),
    Action.PLAY: frozenset({Role.OPERATOR, Role.PLAYER}),
    Action.READ_TABLE: frozenset({Role.OPERATOR, Role.AUDITOR, Role.PLAYER}),
    Action.READ_DEAL: frozenset({Role.OPERATOR, Role.AUDITOR, Role.PLAYER}),
    Action.FIND_DEALS: frozenset({Role.OPERATOR, Role.AUDITOR, Role.PLAYER}),
    Action.ISSUE_KEY: frozenset({Role.OPERATOR}),
    Action.MANAGE_KEYS: frozenset({Role.OPERATOR}),
    Action.SUPPLY_SEED: frozenset({Role.OPERATOR}),
    Action.AUDIT: frozenset({Role.OPERATOR, Role.AUDITOR}),
    Action.SEAT: frozenset({Role.OPERATOR, Role.PLAYER}),
    Action.MANAGE_TABLE: frozenset({Role.OPERATOR}),
    Action.OPEN_DISPUTE: frozenset({Role.PLAYER}),
    Action.READ_DISPUTES: frozenset({Role.OPERATOR, Role.AUDITOR, Role.PLAYER}),
    Action.RESOLVE_DISPUTE: frozenset({Role.OPERATOR}),
    Action.WATCH: frozenset({Role.OPERATOR, Role.AUDITOR}),
    Action.SIGN_CHECKPOINT: frozenset({Role.OPERATOR}),
}
#: Actions that record nothing but, for `AUDIT`, the record of a run of verification. A role that
#: may take no other action has no write rights (the auditor): `writes`.
READS = frozenset({
    Action.READ_WALLET, Action.READ_TABLE, Action.READ_DEAL, Action.FIND_DEALS, Action.AUDIT,
    Action.READ_DISPUTES, Action.WATCH,
})
#: Actions a player may take only on what belongs to them.
OWNED = frozenset({
    Action.SEAT, Action.READ_WALLET, Action.CHANGE_CLIENT_SEED, Action.PLAY, Action.READ_TABLE, Action.READ_DEAL,
    Action.FIND_DEALS, Action.OPEN_DISPUTE, Action.READ_DISPUTES,
})


@dataclass(frozen=True)
class Principal:
    """Who is asking: the key's id (never the key), its role and, for a player, their id."""

    key_id: str
    role: Role
    player_id: str | None = None


#: The ledger's own operator, for the CLI and simulations run on the server itself.
SYSTEM = Principal(key_id="system", role=Role.OPERATOR)


Owner = str | frozenset[str] | set[str] | None


def may(principal: Principal, action: Action, owner: Owner = None) -> bool:
    """Whether the principal may take the action on something owned by `owner` (a player id, or
    the set of players seated at a table)."""
    if principal.role not in ALLOWED[action]:
        return False
    if principal.role is Role.PLAYER and action in OWNED:
        if principal.player_id is None or owner is None:
            return False
        return principal.player_id == owner if isinstance(owner, str) else (
            principal.player_id in owner)
    return True


def writes(role: Role) -> bool:
    """Whether the role has write rights: some action it may take records more than a run of
    verification (operators and players do; auditors do not, and their runs are bounded:
    `ledger.app.verification`)."""
    return any(role in roles for action, roles in ALLOWED.items() if action not in READS)


def require(principal: Principal, action: Action, owner: Owner = None) -> None:
    """Raise Forbidden unless `may` allows it."""
    if not may(principal, action, owner):
        raise Forbidden(f"role {principal.role} may not {action.replace('_', ' ')} here")
