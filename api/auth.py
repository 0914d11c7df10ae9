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
    request counts against its key's rate limit (429 beyond it) and notes the key's use.

    The request's one look at the log is made here, first (its unit of work begins again,
    having looked: `api.one_look_at_the_log_per_request`), so the key is read as the log has it
    now and the request's command or read loads on that same look."""
    if "principal" not in g:
        header = request.headers.get(AUTHORIZATION, "")
        scheme, _, key = header.partition(" ")
        service = ledger()
        looked = look_now(service)
        g.principal = service.keys.admit(key.strip() if scheme.lower() == "bearer" else None,
                                         looked=looked)
    return g.principal


def look_now(service: LedgerApplication) -> bool:
    """Begin the request's unit of work again, looking at the log now, unless the request has
    none (outside `api.one_look_at_the_log_per_request`); whether it looked."""
    token = g.pop("reddog_unit", None)
    if token is None:
        return False
    service.repository.end_unit(token)
    g.reddog_unit = service.repository.begin_unit(now=True)
    return True


def command_key(body: object = None) -> CommandKey | None:
    """The request's idempotency key, fingerprinted with what it asks for, or None."""
    key = request.headers.get(IDEMPOTENCY_HEADER)
    if key is None:
        return None
    return CommandKey.of(principal(), key, request.method, request.path, body)
