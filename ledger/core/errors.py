"""Typed errors raised where a problem is found, mapped to HTTP once in `api.errors`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class LedgerError(Exception):
    """Base class of every error the ledger raises on purpose."""

    def __init__(self, detail: str, *, field: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field


class RuleViolation(LedgerError):
    """A command broke a game rule; `rule` is its ID in docs/rules.md (G8)."""

    def __init__(self, rule: str, detail: str, *, field: str | None = None) -> None:
        super().__init__(f"{rule}: {detail}", field=field)
        self.rule = rule


class NotFound(LedgerError):
    """The named wallet, table, deal or key does not exist."""


class Conflict(LedgerError):
    """A concurrent command won the race, or an idempotency key was reused differently."""


class Forbidden(LedgerError):
    """The caller's role or identity may not do this; `rule`, where a game rule decides who
    may (G11), is its ID."""

    def __init__(self, detail: str, *, field: str | None = None, rule: str | None = None) -> None:
        super().__init__(detail, field=field)
        self.rule = rule


class InvalidInput(LedgerError):
    """A value has the wrong shape for the ledger (caught before any rule applies)."""


class Unauthenticated(LedgerError):
    """No API key, or one that is unknown or revoked."""


def passes(verify: Callable[..., Any], *args: Any) -> bool:
    """Whether a check (a `verify_*`, an action's `verify`) lets these arguments through
    (the `can_*` or `can` of every rule)."""
    return refusal(verify, *args) is None


def refusal(verify: Callable[..., Any], *args: Any) -> RuleViolation | None:
    """Why a check would refuse these arguments (its RuleViolation), or None where it lets
    them through: the "why not?" beside `passes`' "may I?", from the same check."""
    try:
        verify(*args)
    except RuleViolation as why:
        return why
    return None


class ConfigurationError(Exception):
    """The process cannot run as configured (a missing or wrong chain key): it refuses to start."""


class RateLimited(LedgerError):
    """The API key sent more requests than its rate allows; try again after `retry_after` seconds."""

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


class Busy(LedgerError):
    """Every slot for audit reads is taken and the queue is full; try again after `retry_after`
    seconds (429: the caller is asked to slow down, the server is not failing)."""

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


class Unavailable(LedgerError):
    """Something the command needs before it may record anything could not be reached (the rate
    limit of a key without write rights, which fails closed); nothing was recorded: try again
    after `retry_after` seconds (503)."""

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after
