"""API keys (stored only as hashes) and the record of each idempotent command's first answer."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import event

from ledger.core.errors import Conflict
from ledger.domain.base import LedgerAggregate, upcaster, versioned

_KEYS = uuid5(NAMESPACE_URL, "reddog-ledger:api-keys")
_COMMANDS = uuid5(NAMESPACE_URL, "reddog-ledger:commands")


class Role(StrEnum):
    """Who is asking."""

    OPERATOR = "operator"
    """Opens tables, grants credits, runs dealing."""
    PLAYER = "player"
    """Acts only on their own wallet and seat."""
    AUDITOR = "auditor"
    """Reads everything revealed; writes nothing."""


def hash_key(key: str) -> str:
    """SHA-256 of an API key: keys are 256-bit random, so a plain digest is safe to store."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class ApiKey(LedgerAggregate):
    """An API key: its hash, role and (for players) the pseudonymous player id, and its
    lifecycle: when it expires, its own rate limit, who issued it and who revoked it.

    The lifecycle attributes came later than the first keys: they are optional with defaults,
    so `Issued` and `Revoked` events recorded without them load as keys that never expire and
    take the service's rate limit, with `issued_by` and `revoked_by` None (not recorded).
    """

    @staticmethod
    def create_id(key_hash: str) -> UUID:
        return uuid5(_KEYS, key_hash)

    class Issued(LedgerAggregate.Created):
        key_hash: str
        role: str
        player_id: str | None
        label: str
        expires_at: str | None
        rate_limit: float | None
        issued_by: str | None
        kind: str

    @event(Issued)
    def __init__(self, key_hash: str, role: str, player_id: str | None, label: str,
                 expires_at: str | None = None, rate_limit: float | None = None,
                 issued_by: str | None = None, kind: str = "api") -> None:
        self.key_hash = key_hash
        self.role = role
        self.player_id = player_id
        self.label = label
        # The UTC instant (ISO 8601 text) from which the key no longer authenticates, or None.
        self.expires_at = expires_at
        # Requests a second this key may send (0: no limit), or None for the service's setting.
        self.rate_limit = rate_limit
        # The key id of the operator who issued it, "system" (the command line, the demo), or
        # None (issued before issuers were recorded).
        self.issued_by = issued_by
        # "api": sent as a Bearer key; "link": a one-time sign-in link, only ever exchanged for
        # a session key at `POST /sign-in` (keys issued before kinds existed are "api").
        self.kind = kind
        self.revoked = False
        self.revoked_by: str | None = None

    def expired(self, now: datetime) -> bool:
        """Whether the key has expired at this instant (an aware datetime)."""
        return self.expires_at is not None and parse_instant(self.expires_at) <= now

    def revoke(self, revoked_by: str) -> None:
        """Stop the key from authenticating, recording who did (a key id, or "system"); a key is
        revoked once (Conflict the second time)."""
        if self.revoked:
            raise Conflict(f"API key {self.id} is already revoked", field="key_id")
        self._revoked(revoked_by=revoked_by)

    class Revoked(LedgerAggregate.Event):
        revoked_by: str | None

    @event(Revoked)
    def _revoked(self, revoked_by: str | None = None) -> None:
        self.revoked = True
        self.revoked_by = revoked_by


def parse_instant(text: str) -> datetime:
    """An ISO 8601 instant as an aware UTC datetime (the form `expires_at` is recorded in)."""
    return datetime.fromisoformat(text).astimezone(UTC)


class CommandRecord(LedgerAggregate):
    """The first answer to a command sent with an Idempotency-Key, saved with the command."""

    @staticmethod
    def create_id(principal: str, key: str) -> UUID:
        return uuid5(_COMMANDS, f"{principal}\x00{key}")

    class Answered(LedgerAggregate.Created):
        principal: str
        key: str
        fingerprint: str
        answer: dict[str, Any]

    @event(Answered)
    def __init__(self, principal: str, key: str, fingerprint: str, answer: dict[str, Any]) -> None:
        self.principal = principal
        self.key = key
        self.fingerprint = fingerprint
        self.answer = answer


@upcaster(ApiKey.Issued, 1)
def _issued_v1_v2(state: dict[str, Any]) -> None:
    """A key issued by the first release: no expiry, the service's rate limit, issuer not
    recorded, a Bearer key."""
    for name, value in (("expires_at", None), ("rate_limit", None), ("issued_by", None),
                        ("kind", "api")):
        state.setdefault(name, value)


@upcaster(ApiKey.Revoked, 1)
def _revoked_v1_v2(state: dict[str, Any]) -> None:
    """A revocation recorded by the first release: who revoked it was not recorded."""
    state.setdefault("revoked_by", None)


# The version of every stored event class (docs/events.md): 1 until its shape changes.
# Issued and Revoked gained fields after the first release (version 2).
versioned(
    ApiKey,
    Issued=2, Revoked=2,
)
versioned(
    CommandRecord,
    Answered=1,
)
