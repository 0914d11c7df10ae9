"""API keys: issue, authenticate, list, read and revoke them; rate limits and last use.

The application's `keys` service. A key is shown once, when issued; only its SHA-256 is stored, and
no answer here ever carries the key or its hash again.

Authentication reads the key as the log has it now: each request looks at the log (once: the
same look serves the request's command or read, `ledger.store.repository`), and the look evicts
the cached state of any key another process has changed since. What a request needs of a key
(its id, role, player, kind, expiry, revocation and rate) is kept by the service, by the key's
hash, beside the version it was read at, and used while the repository still holds the key at
that version: until the log says the key changed, no request loads it again. So a key revoked
by any process is refused by every process from the next request on, and an expired one from
its expiry on.

What is not audited lives in the runtime store (`ledger.store.runtime`): each key's rate-limit state,
taken atomically once per request and shared by every process on the store, and when it was
last used, written at most once a minute per key by each process.

The list of keys is read from the projection's `k|<key id>` documents (`ledger.readmodels.fold`),
so it lags the log by what has not been folded yet; the answer says how far that is. A single
key (`get_key`) is read from its aggregate, as current as authentication.
"""

from __future__ import annotations

import logging
import math
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.domain import Aggregate

from ledger.app.access import SYSTEM, Action, Principal, require
from ledger.app.base import LedgerBase
from ledger.app.unit import CommandKey, UnitOfWork
from ledger.core import clock, validation
from ledger.core.errors import Conflict, InvalidInput, RateLimited, Unauthenticated
from ledger.domain.access import ApiKey, Role, hash_key, parse_instant
from ledger.store.runtime import Limit, RuntimeUnavailable, whole_seconds

log = logging.getLogger(__name__)

#: Longest lifetime `expires_in_days` may give a key (ten years).
MAX_KEY_DAYS = 3650
#: Highest per-key rate limit, requests a second.
MAX_RATE = 10_000
#: First and (exclusive) last name of the key documents: key ids are lowercase hex and `-`,
#: all below `g`, whatever the collation.
KEYS_FIRST, KEYS_END = "k|", "k|g"
#: Key documents one list request examines before it answers with a cursor instead.
KEYS_SCAN = 5000
#: Kinds of key: sent as a Bearer key, or a one-time sign-in link exchanged at `POST /sign-in`.
KINDS = ("api", "link")
#: How long a sign-in link lasts unless told (and at most `MAX_LINK_TTL`).
LINK_TTL = timedelta(hours=1)
MAX_LINK_TTL = timedelta(days=1)
#: Keys whose authentication a process keeps (`_Known`); past this, it begins again.
KNOWN_KEYS = 10_000


@dataclass(frozen=True)
class _Known:
    """What authentication needs of a key, read from its aggregate at `version`."""

    key_id: UUID
    version: int
    principal: Principal
    kind: str
    revoked: bool
    expires: datetime | None
    rate_limit: float | None

    @classmethod
    def of(cls, api_key: ApiKey) -> _Known:
        return cls(api_key.id, api_key.version, _principal(api_key),
                   getattr(api_key, "kind", "api"), api_key.revoked,
                   None if api_key.expires_at is None else parse_instant(api_key.expires_at),
                   api_key.rate_limit)


class KeyService:
    """Issue, authenticate, list, read and revoke API keys."""

    def __init__(self, unit: UnitOfWork, ledger: LedgerBase) -> None:
        self.unit = unit
        self.ledger = ledger
        #: What authentication read of each key, by the key's hash (module doc).
        self._known: dict[str, _Known] = {}

    # Issue.
    def issue_key(
        self,
        role: str,
        player_id: str | None = None,
        label: str = "",
        *,
        expires_at: datetime | str | None = None,
        expires_in_days: int | None = None,
        rate_limit: float | None = None,
        actor: Principal = SYSTEM,
        command: CommandKey | None = None,
        kind: str = "api",
    ) -> tuple[str, dict[str, Any]]:
        """Make an API key; only its hash is stored. Returns the key (shown this once) and its
        record. `expires_at` (an aware datetime or ISO 8601 text; any instant, even a past one)
        or `expires_in_days` set when it stops authenticating; `rate_limit` (requests a second,
        0 for none) replaces the service's limit for this key. A `link` key is a one-time
        sign-in link: it expires within a day (an hour unless told) and authenticates nothing
        until exchanged for a session key (`exchange_sign_in_link`).

        With an idempotency key (`command`), a repeat does not make a second key: the key of
        the first was shown once and is stored nowhere, so a repeat is a Conflict that names
        the key it made (revoke it if its answer was lost)."""
        require(actor, Action.ISSUE_KEY)
        try:
            role_enum = Role(role)
        except ValueError:
            raise InvalidInput(f"role must be one of {[r.value for r in Role]}",
                               field="role") from None
        if role_enum is Role.PLAYER:
            player_id = validation.PLAYER_ID.check(player_id)
        elif player_id is not None:
            raise InvalidInput("only player keys name a player", field="player_id")
        label = validation.LABEL.check(label)
        now = clock.utcnow()
        validation.check_choice(kind, KINDS, "kind")
        if kind == "link" and expires_at is None and expires_in_days is None:
            expires_at = now + LINK_TTL
        expiry = _expiry(expires_at, expires_in_days, now)
        if kind == "link" and expiry is not None and parse_instant(expiry) > now + MAX_LINK_TTL:
            raise InvalidInput("a sign-in link must expire within a day", field="expires_at")
        rate_limit = _rate(rate_limit)
        if (first := self.unit.recorded_answer(command)) is not None:
            raise _already_issued(first)
        key = "rdl_" + secrets.token_urlsafe(32)
        made: list[ApiKey] = []

        def decide() -> tuple[list[Aggregate], dict[str, Any]]:
            api_key = ApiKey(key_hash=hash_key(key), role=role_enum.value, player_id=player_id,
                             label=label, expires_at=expiry, rate_limit=rate_limit,
                             issued_by=actor.key_id, kind=kind)
            made[:] = [api_key]
            return [api_key], key_view(api_key, now, None)

        record = self.unit.execute(command, decide)
        if not made or record["key_id"] != str(made[0].id):  # a racing repeat recorded first
            raise _already_issued(record)
        return key, record

    # Authenticate.
    def authenticate(self, key: str | None) -> Principal:
        """Who holds this key; Unauthenticated for a missing, unknown, revoked or expired one.
        Nothing is counted or noted: see `admit` for a request."""
        return _principal(self.authentic(key, clock.utcnow()))

    def admit(self, key: str | None, looked: bool = False) -> Principal:
        """Authenticate one request: who holds the key, if its rate limit lets this request
        through (RateLimited otherwise); notes the key's use. `looked`: the caller looked at
        the log for this request a moment ago (`LedgerRepository.begin_unit(now=True)`), so
        the key is read as of that look; else this looks now."""
        now = clock.utcnow()
        known = self._known_key(key, now, looked)
        key_id = str(known.key_id)
        limit = self._limit(known.rate_limit)
        if limit is not None:
            try:
                wait = self.ledger.runtime.admit(key_id, limit, now.timestamp())
            except RuntimeUnavailable as error:  # fail open: the limiter never stops the ledger
                log.warning("rate limit of key %s not checked: %s", key_id, error)
                wait = 0.0
            if wait > 0:
                retry = whole_seconds(wait)
                raise RateLimited(
                    f"this API key may send {limit.rate:g} requests a second, {limit.burst} at "
                    f"once; try again in {retry} s", retry_after=retry)
        try:
            self.ledger.runtime.used(key_id, now.timestamp())
        except RuntimeUnavailable as error:
            log.warning("last use of key %s not noted: %s", key_id, error)
        return known.principal

    def _known_key(self, key: str | None, now: datetime, looked: bool) -> _Known:
        """What authentication needs of a Bearer key, checked as `authentic` checks it: kept
        from an earlier request while the repository holds the key at the version it was read
        at (after this request's look at the log), else read from the key's aggregate."""
        if not key:
            raise Unauthenticated("send an API key as 'Authorization: Bearer <key>'")
        if not validation.is_text(key):  # never a key, and its hash cannot be taken
            raise Unauthenticated("unknown API key")
        key_hash = hash_key(key)
        repository = self.unit.repository
        known = self._known.get(key_hash)
        if known is not None and repository.held is not None:
            if not looked:
                repository.sync()
            # Not held: evicted (changed in the log), or pushed out of the cache.
            if repository.held_version(known.key_id) == known.version:
                _check(known.kind, known.revoked, known.expires, now)
                return known
        api_key = self.authentic(key, now)
        known = _Known.of(api_key)
        if len(self._known) >= KNOWN_KEYS:
            self._known.clear()
        self._known[key_hash] = known
        return known

    def limit_of(self, api_key: ApiKey) -> Limit | None:
        """The key's rate limit: its own, else the service's; None when there is none (0)."""
        return self._limit(api_key.rate_limit)

    def _limit(self, own: float | None) -> Limit | None:
        rate = own if own is not None else self.ledger.settings.rate_limit
        if not rate or rate <= 0:
            return None
        return Limit(rate=float(rate), burst=max(int(self.ledger.settings.rate_burst), 1))

    def authentic(self, key: str | None, now: datetime, kind: str = "api") -> ApiKey:
        if not key:
            raise Unauthenticated("send an API key as 'Authorization: Bearer <key>'")
        if not validation.is_text(key):  # never a key, and its hash cannot be taken
            raise Unauthenticated("unknown API key")
        key_hash = hash_key(key)
        try:
            api_key = self.unit.repository.get(ApiKey.create_id(key_hash))
        except AggregateNotFoundError:
            raise Unauthenticated("unknown API key") from None
        if not isinstance(api_key, ApiKey) or not secrets.compare_digest(api_key.key_hash,
                                                                         key_hash):
            raise Unauthenticated("unknown API key")
        _check(getattr(api_key, "kind", "api"), api_key.revoked,
               None if api_key.expires_at is None else parse_instant(api_key.expires_at), now,
               kind)
        return api_key

    # List and read.
    def list_keys(
        self,
        actor: Principal,
        role: str | None = None,
        player_id: str | None = None,
        include_inactive: bool = False,
        after: UUID | str | None = None,
        limit: int = validation.DEFAULT_PAGE,
    ) -> dict[str, Any]:
        """Keys in key id order, filtered by role and player; revoked and expired keys only
        with `include_inactive`. `next` continues the list (pass it as `after`), None at its
        end. Read from the projection, whose progress is in `projection`."""
        require(actor, Action.MANAGE_KEYS)
        validation.check_page(limit)
        if role is not None:
            validation.check_choice(role, {r.value for r in Role}, "role")
        if player_id is not None:
            validation.PLAYER_ID.check(player_id)
        cursor = str(validation.check_uuid(after, "after")) if after is not None else None
        status = self.ledger.projection.status()
        now = clock.utcnow()
        entries: list[dict[str, Any]] = []
        next_cursor = None
        examined: list[str] = []
        for document in self._key_documents(cursor):
            if len(entries) == limit or len(examined) == KEYS_SCAN:
                next_cursor = examined[-1]  # more follow: continue after the last one examined
                break
            examined.append(document["key_id"])
            entry = document_view(document, now)
            if role is not None and entry["role"] != role:
                continue
            if player_id is not None and entry["player_id"] != player_id:
                continue
            if not include_inactive and entry["status"] != "active":
                continue
            entries.append(entry)
        used = self._last_used([e["key_id"] for e in entries])
        for entry in entries:
            entry["last_used_at"] = used.get(entry["key_id"])
        return {"keys": entries, "next": next_cursor, "projection": status}

    def get_key(self, actor: Principal, key_id: UUID | str) -> dict[str, Any]:
        """One key's record, from its events (as current as authentication)."""
        require(actor, Action.MANAGE_KEYS)
        api_key = self.unit.get(validation.check_uuid(key_id, "key_id"), ApiKey, "API key")
        return key_view(api_key, clock.utcnow(), self._last_used([str(api_key.id)]))

    # Revoke.
    def revoke_key(self, actor: Principal, key_id: UUID | str,
                   command: CommandKey | None = None) -> dict[str, Any]:
        """Revoke a key: from the next request on, no process accepts it. Revoking a revoked
        key is a Conflict (a repeat with the same idempotency key gets the first answer)."""
        require(actor, Action.MANAGE_KEYS)
        key_uuid = validation.check_uuid(key_id, "key_id")

        def decide() -> tuple[list[Aggregate], dict[str, Any]]:
            api_key = self.unit.get(key_uuid, ApiKey, "API key")
            api_key.revoke(actor.key_id)
            return [api_key], key_view(api_key, clock.utcnow(),
                                       self._last_used([str(api_key.id)]))

        return self.unit.execute(command, decide)

    # Plumbing.
    def _key_documents(self, after: str | None) -> Iterator[dict[str, Any]]:
        """Key documents in name order after a key id, read a page at a time."""
        first = KEYS_FIRST if after is None else f"{KEYS_FIRST}{after}"
        while True:
            page = self.ledger.projection.store.read_range(first, KEYS_END, validation.MAX_PAGE)
            for name, document in page.items():
                if name.startswith(KEYS_FIRST) and document.get("key_id") != after:
                    yield document
            if len(page) < validation.MAX_PAGE:
                return
            after = next(reversed(page.values()))["key_id"]
            first = f"{KEYS_FIRST}{after}"

    def _last_used(self, key_ids: list[str]) -> dict[str, str]:
        if not key_ids:
            return {}
        try:
            found = self.ledger.runtime.last_used(key_ids)
        except RuntimeUnavailable as error:
            log.warning("last use of keys not read: %s", error)
            return {}
        return {k: datetime.fromtimestamp(at, UTC).isoformat() for k, at in found.items()}


def key_view(api_key: ApiKey, now: datetime, last_used: dict[str, str] | None) -> dict[str, Any]:
    """A key's record as the API answers it: never the key, never its hash."""
    key_id = str(api_key.id)
    return {
        "key_id": key_id,
        "kind": getattr(api_key, "kind", "api"),
        "role": api_key.role,
        "player_id": api_key.player_id,
        "label": api_key.label,
        "status": _status(api_key.revoked, api_key.expires_at, now),
        "issued_at": api_key.created_on.isoformat(),
        "issued_by": api_key.issued_by,
        "expires_at": api_key.expires_at,
        "rate_limit": api_key.rate_limit,
        # Revoked is a key's last event: its time is the aggregate's last modification.
        "revoked_at": api_key.modified_on.isoformat() if api_key.revoked else None,
        "revoked_by": api_key.revoked_by,
        "last_used_at": (last_used or {}).get(key_id),
    }


def document_view(document: dict[str, Any], now: datetime) -> dict[str, Any]:
    """A key's projection document (`k|<key id>`) as the API answers it."""
    revoked = document.get("revoked_at") is not None
    return {
        "key_id": document["key_id"],
        "kind": document.get("kind", "api"),
        "role": document["role"],
        "player_id": document.get("player_id"),
        "label": document.get("label", ""),
        "status": _status(revoked, document.get("expires_at"), now),
        "issued_at": document.get("issued_at"),
        "issued_by": document.get("issued_by"),
        "expires_at": document.get("expires_at"),
        "rate_limit": document.get("rate_limit"),
        "revoked_at": document.get("revoked_at"),
        "revoked_by": document.get("revoked_by"),
        "last_used_at": None,
    }


def _status(revoked: bool, expires_at: str | None, now: datetime) -> str:
    if revoked:
        return "revoked"
    if expires_at is not None and parse_instant(expires_at) <= now:
        return "expired"
    return "active"


def _check(key_kind: str, revoked: bool, expires: datetime | None, now: datetime,
           kind: str = "api") -> None:
    """Unauthenticated unless a key of `key_kind` is of the `kind` asked for, not revoked and
    not expired at `now`."""
    what = "sign-in link" if kind == "link" else "API key"
    if key_kind != kind:
        raise Unauthenticated("a sign-in link is exchanged at POST /sign-in, not sent as a "
                              "key" if kind == "api" else "not a sign-in link")
    if revoked:
        raise Unauthenticated(f"this {what} was " + ("used" if kind == "link" else "revoked"))
    if expires is not None and expires <= now:
        raise Unauthenticated(f"this {what} has expired")


def _principal(api_key: ApiKey) -> Principal:
    return Principal(key_id=str(api_key.id), role=Role(api_key.role), player_id=api_key.player_id)


def _already_issued(record: dict[str, Any]) -> Conflict:
    return Conflict(
        f"this Idempotency-Key already issued the key {record.get('key_id')}, which is shown "
        "only once: revoke it if its answer was lost, and issue another with a new "
        "Idempotency-Key", field="Idempotency-Key")


def _expiry(expires_at: datetime | str | None, expires_in_days: int | None,
            now: datetime) -> str | None:
    """When a key expires, as UTC ISO 8601 text, from an instant or a number of days."""
    if expires_at is not None and expires_in_days is not None:
        raise InvalidInput("give expires_at or expires_in_days, not both",
                           field="expires_in_days")
    if expires_in_days is not None:
        if (not isinstance(expires_in_days, int) or isinstance(expires_in_days, bool)
                or not 1 <= expires_in_days <= MAX_KEY_DAYS):
            raise InvalidInput(f"expires_in_days must be 1 to {MAX_KEY_DAYS}",
                               field="expires_in_days")
        return (now + timedelta(days=expires_in_days)).isoformat()
    if expires_at is None:
        return None
    instant: datetime | str | None = expires_at
    if isinstance(instant, str):
        try:
            instant = datetime.fromisoformat(instant)
        except ValueError:
            instant = None
    if not isinstance(instant, datetime) or instant.tzinfo is None:
        raise InvalidInput("expires_at must be an ISO 8601 instant with its UTC offset",
                           field="expires_at")
    return instant.astimezone(UTC).isoformat()


def _rate(rate_limit: object) -> float | None:
    if rate_limit is None:
        return None
    if (isinstance(rate_limit, bool) or not isinstance(rate_limit, (int, float))
            or not math.isfinite(rate_limit) or not 0 <= rate_limit <= MAX_RATE):
        raise InvalidInput(f"rate_limit must be 0 (no limit) to {MAX_RATE} requests a second",
                           field="rate_limit")
    return float(rate_limit)
