"""Who is asking (Bearer API keys) and the Idempotency-Key of a command."""

from __future__ import annotations

from flask import current_app, g, request

from ledger.app.access import Principal
from ledger.app.application import LedgerApplication
from ledger.app.unit import CommandKey

AUTHORIZATION = "Authorization"
IDEMPOTENCY_HEADER = "Idempotency-Key"


def ledger() -> LedgerApplication:
    """The application service of this process."""
    return current_app.extensions["reddog_ledger"]


def principal() -> Principal:
    """Authenticate the request once, from `Authorization: Bearer <key>`: this is where each
    request counts against its key's rate limit (429 beyond it) and notes the key's use."""
    if "principal" not in g:
        header = request.headers.get(AUTHORIZATION, "")
        scheme, _, key = header.partition(" ")
        g.principal = ledger().keys.admit(key.strip() if scheme.lower() == "bearer" else None)
    return g.principal


def command_key(body: object = None) -> CommandKey | None:
    """The request's idempotency key, fingerprinted with what it asks for, or None."""
    key = request.headers.get(IDEMPOTENCY_HEADER)
    if key is None:
        return None
    return CommandKey.of(principal(), key, request.method, request.path, body)
