"""Schemas of the API key endpoints."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from marshmallow import ValidationError, fields, validate, validates

from api.schemabase import Schema
from api.schemas import PLAYER_ID, Args, FullMatch, WholeNumber
from api.schemas_audit import ProjectionStatusSchema
from ledger.app.keys import KINDS, MAX_KEY_DAYS, MAX_RATE
from ledger.core import clock, validation


class StrictNumber(fields.Float):
    """A JSON number: never a bool or a string."""

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.make_error("invalid", input=value)
        return super()._deserialize(value, attr, data, **kwargs)




class KeyIssueArgs(Args):
    role = fields.String(required=True, validate=validate.OneOf(validation.ROLES))
    kind = fields.String(load_default="api", validate=validate.OneOf(KINDS), metadata={
        "description": "`api` (default): a Bearer key. `link`: a one-time sign-in link "
                       "(`/sign-in#token=<key>`), exchanged once at `POST /sign-in` for a session "
                       "key; it expires within a day (in an hour unless told)"})
    player_id = fields.String(validate=PLAYER_ID, metadata={
        "description": "The player's pseudonymous id: player keys only, and required for them"})
    label = fields.String(load_default="", validate=FullMatch(validation.LABEL),
                          metadata={"description": "A note to tell keys apart"})
    expires_at = fields.AwareDateTime(default_timezone=None, metadata={
        "description": "UTC instant, in the future, from which the key no longer "
                       "authenticates (or give expires_in_days)"})
    expires_in_days = WholeNumber(validate=validate.Range(min=1, max=MAX_KEY_DAYS), metadata={
        "description": "Days until the key expires (or give expires_at); default: never"})
    rate_limit = StrictNumber(validate=validate.Range(min=0, max=MAX_RATE), metadata={
        "description": "Requests a second this key may send, in bursts of the service's "
                       "REDDOG_RATE_BURST; 0 for no limit; default: the service's "
                       "REDDOG_RATE_LIMIT"})

    @validates("expires_at")
    def _in_the_future(self, value: datetime, **_kwargs: Any) -> None:
        if value <= clock.utcnow():
            raise ValidationError("Must be in the future.")


class KeyListArgs(Args):
    role = fields.String(validate=validate.OneOf(validation.ROLES))
    player_id = fields.String(validate=PLAYER_ID)
    include_inactive = fields.Boolean(load_default=False, metadata={
        "description": "Also list revoked and expired keys"})
    after = fields.UUID(metadata={"description": "Cursor: keys after this key id (`next`)"})
    limit = fields.Integer(load_default=validation.DEFAULT_PAGE,
                           validate=validate.Range(min=1, max=validation.MAX_PAGE))


class KeySchema(Schema):
    """An API key's record: never the key, never its hash."""

    key_id = fields.UUID()
    kind = fields.String(metadata={"description": "api | link (a one-time sign-in link)",
                                   "enum": list(KINDS)})
    role = fields.String(metadata={"enum": list(validation.ROLES)})
    player_id = fields.String(allow_none=True)
    label = fields.String()
    status = fields.String(metadata={"description": "active | expired | revoked",
                                     "enum": list(validation.KEY_STATUSES)})
    issued_at = fields.String()
    issued_by = fields.String(allow_none=True, metadata={
        "description": "Key id of the operator who issued it, or `system` (the command line)"})
    expires_at = fields.String(allow_none=True)
    rate_limit = fields.Float(allow_none=True, metadata={
        "description": "Its own limit, requests a second (0: none); null: the service's"})
    revoked_at = fields.String(allow_none=True)
    revoked_by = fields.String(allow_none=True)
    last_used_at = fields.String(allow_none=True, metadata={
        "description": "Last authenticated request, to within a minute"})


class IssuedKeySchema(KeySchema):
    key = fields.String(metadata={
        "description": "The key itself, for `Authorization: Bearer <key>`: shown once, in "
                       "this answer only, and stored nowhere"})


class KeyListSchema(Schema):
    keys = fields.List(fields.Nested(KeySchema))
    next = fields.UUID(allow_none=True, metadata={
        "description": "More keys follow: pass as `after`; null at the end"})
    projection = fields.Nested(ProjectionStatusSchema, metadata={
        "description": "The list is read from the projection, which holds the log up to "
                       "`projection.position`"})
