"""Schemas of the dispute endpoints."""

from __future__ import annotations

from marshmallow import fields, validate

from api.schemabase import Schema
from api.schemas import Args, Chips, FullMatch, StrictBoolean
from api.schemas_audit import ProjectionStatusSchema
from ledger.core import validation


class DisputeOpenArgs(Args):
    message = fields.String(required=True, validate=FullMatch(validation.DISPUTE_TEXT), metadata={
        "description": "What the player says is wrong with the deal"})


class DisputeResolveArgs(Args):
    finding = fields.String(required=True, validate=FullMatch(validation.DISPUTE_TEXT),
                            metadata={"description": "Staff's finding, shown to the player"})
    upheld = StrictBoolean(required=True, metadata={
        "description": "Whether the ledger owes the player"})
    adjustment = Chips(load_default=0, validate=validate.Range(
        min=0, max=validation.MAX_ADJUSTMENT), metadata={
        "description": "Chips the house pays into the player's wallet, citing the dispute: more "
                       "than 0 only when upheld"})


class DisputeListArgs(Args):
    status = fields.String(validate=validate.OneOf(validation.DISPUTE_STATUSES), metadata={
        "description": "`open` (the queue, oldest first; the default without `deal`) or "
                       "`resolved` (by the time resolved); with `deal`, every status unless "
                       "given"})
    deal = fields.UUID(metadata={
        "description": "Only this deal's disputes (at most one per seat), read from the "
                       "disputes' own events, so one just opened is listed at once; not with "
                       "`after`"})
    after = fields.UUID(metadata={"description": "Cursor: disputes after this one (`next`)"})
    limit = fields.Integer(load_default=validation.DEFAULT_PAGE,
                           validate=validate.Range(min=1, max=validation.MAX_PAGE))


class TransferSchema(Schema):
    id = fields.String()
    source = fields.String()
    destination = fields.String()
    amount = fields.Integer()
    cause = fields.Dict()


class DisputeSchema(Schema):
    dispute_id = fields.String()
    deal_id = fields.String()
    table_id = fields.String()
    player_id = fields.String()
    wallet_id = fields.String()
    message = fields.String()
    opened_by = fields.String(metadata={"description": "The id of the key that opened it"})
    opened_at = fields.String()
    status = fields.String(metadata={"description": "open or resolved",
                                     "enum": list(validation.DISPUTE_STATUSES)})
    finding = fields.String(allow_none=True)
    upheld = fields.Boolean(allow_none=True)
    adjustment = fields.Nested(TransferSchema, allow_none=True, metadata={
        "description": "The compensating transfer house → wallet, if any"})
    resolved_by = fields.String(allow_none=True)
    resolved_at = fields.String(allow_none=True)
    version = fields.Integer()


class DisputeListSchema(Schema):
    status = fields.String(allow_none=True, metadata={
        "description": "The status listed; null for a deal's disputes of every status"})
    disputes = fields.List(fields.Nested(DisputeSchema))
    next = fields.String(allow_none=True, metadata={"description": "Cursor for the next page"})
    projection = fields.Nested(ProjectionStatusSchema)
