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


#: The `by` of what the command line records (`reddog verify`): the server's operator.
COMMAND_LINE = "cli"


def key_holder(store: Any, key_id: str | None) -> dict[str, str | None]:
    """Who held a key, as staff read it: the key's label and role (`by_label`, `by_role`).
    A sign-in link's session key is named by the link's label, which says whose it is; the
    command line (`cli`) is `reddog verify` run on the server. Nothing is known of a key the
    read models have not folded yet (label and role null), and never the key itself."""
    if key_id == COMMAND_LINE:
        return {"by_label": "reddog verify on the server", "by_role": None}
    record = store.read(f"k|{key_id}") if key_id else None
    if record is None:
        return {"by_label": None, "by_role": None}
    label = record.get("label") or ""
    issuer = store.read(f"k|{record['issued_by']}") if record.get("issued_by") else None
    if issuer is not None and issuer.get("kind") == "link" and record.get("kind", "api") == "api" \
            and issuer.get("label"):
        label = issuer["label"]
    return {"by_label": label or None, "by_role": record.get("role")}
