"""One-time sign-in links: a short-lived `link` key the cashier hands out, exchanged once for a
session key, and who the caller of a request is.

A link key authenticates nothing by itself (`KeyService._authentic` refuses it as a Bearer key);
the exchange revokes it and issues the session key in one atomic save, so of two racing
exchanges of one link exactly one gets a session key and the other is refused.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from eventsourcing.domain import Aggregate

from ledger.app.access import Principal
from ledger.app.keys import KeyService, key_view
from ledger.app.unit import UnitOfWork
from ledger.core import clock, validation
from ledger.domain.access import ApiKey, hash_key

#: How long the session key of a sign-in link lasts.
SESSION_TTL = timedelta(hours=12)


class SignInService:
    """Exchange a sign-in link for a session key; say who holds a key."""

    def __init__(self, unit: UnitOfWork, keys: KeyService) -> None:
        self.unit = unit
        self.keys = keys

    def exchange_sign_in_link(self, link: str | None) -> tuple[str, dict[str, Any]]:
        """Revoke the link key and issue a session key of the same role and player, expiring
        in `SESSION_TTL`. Unauthenticated for an unknown, used or expired link. Returns the
        session key (shown this once) and its record."""
        now = clock.utcnow()
        key = "rdl_" + secrets.token_urlsafe(32)

        def decide() -> tuple[list[Aggregate], dict[str, Any]]:
            link_key = self.keys.authentic(link, now, kind="link")
            link_key.revoke(str(link_key.id))
            session = ApiKey(
                key_hash=hash_key(key), role=link_key.role, player_id=link_key.player_id,
                label=f"session of sign-in link {link_key.id}",
                expires_at=(now + SESSION_TTL).isoformat(), rate_limit=link_key.rate_limit,
                issued_by=str(link_key.id))
            return [link_key, session], key_view(session, now, None)

        record = self.unit.execute(None, decide)
        return key, record

    def whoami(self, actor: Principal) -> dict[str, Any]:
        """The caller's own key record: role, player, label, expiry (never the key)."""
        api_key = self.unit.get(validation.check_uuid(actor.key_id, "key_id"), ApiKey, "API key")
        return key_view(api_key, clock.utcnow(), None)
