"""API keys (stored only as hashes) and the record of each idempotent command's first answer."""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import event

from ledger.domain.base import LedgerAggregate

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
    """An API key: its hash, role and (for players) the pseudonymous player id."""

    @staticmethod
    def create_id(key_hash: str) -> UUID:
        return uuid5(_KEYS, key_hash)

    @event("Issued")
    def __init__(self, key_hash: str, role: str, player_id: str | None, label: str) -> None:
        self.key_hash = key_hash
        self.role = role
        self.player_id = player_id
        self.label = label
        self.revoked = False

    def revoke(self) -> None:
        """Stop the key from authenticating."""
        self._revoked()

    @event("Revoked")
    def _revoked(self) -> None:
        self.revoked = True


class CommandRecord(LedgerAggregate):
    """The first answer to a command sent with an Idempotency-Key, saved with the command."""

    @staticmethod
    def create_id(principal: str, key: str) -> UUID:
        return uuid5(_COMMANDS, f"{principal}\x00{key}")

    @event("Answered")
    def __init__(self, principal: str, key: str, fingerprint: str, answer: dict[str, Any]) -> None:
        self.principal = principal
        self.key = key
        self.fingerprint = fingerprint
        self.answer = answer
