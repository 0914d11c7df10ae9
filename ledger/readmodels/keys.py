"""API keys in the read models: `k|<key id>`, a key's record (role, player, label, expiry,
revocation, who issued and revoked it) as the key list shows it, never the key nor its hash."""

from __future__ import annotations

from typing import Any

from ledger.domain.access import ApiKey


def fold_key(fold: Any, event: Any, data: dict[str, Any]) -> None:
    """Record a key's issue, or its revocation."""
    key_id = str(event.originator_id)
    if isinstance(event, ApiKey.Issued):
        fold.put(f"k|{key_id}", {
            "key_id": key_id, "kind": data.get("kind", "api"), "role": data["role"],
            "player_id": data.get("player_id"), "label": data.get("label", ""),
            "issued_at": event.timestamp.isoformat(), "expires_at": data.get("expires_at"),
            "rate_limit": data.get("rate_limit"), "revoked_at": None,
            "issued_by": data.get("issued_by")})
    elif isinstance(event, ApiKey.Revoked):
        record = fold.get(f"k|{key_id}")
        if record is not None:
            record.update(revoked_at=event.timestamp.isoformat(),
                          revoked_by=data.get("revoked_by"))
            fold.put(f"k|{key_id}", record)
