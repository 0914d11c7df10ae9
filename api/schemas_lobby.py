"""Schemas of what the pages list and ask: tables, wallets, the casino bet slip, sign-in."""

from __future__ import annotations

from marshmallow import fields, validate

from api.schemabase import Schema
from api.schemas import PLAYER_ID, Args, WalletSchema
from api.schemas_audit import ProjectionStatusSchema
from api.schemas_keys import KeySchema
from ledger.app.lobby import SLIP_ACTIONS, TABLE_STATUSES
from ledger.core import validation
from ledger.rules import casino, variants

PAGE = {"description": f"Page size, 1-{validation.MAX_PAGE}"}
PROJECTION = {"description": "The list is read from the projection, which holds the log up to "
                             "`projection.position`"}


class TableListArgs(Args):
    variant = fields.String(validate=validate.OneOf(variants.VARIANT_NAMES))
    status = fields.String(validate=validate.OneOf(TABLE_STATUSES), metadata={
        "description": "open (default: both) or closed"})
    after = fields.UUID(metadata={"description": "Cursor: tables after this table id (`next`)"})
    limit = fields.Integer(load_default=validation.DEFAULT_PAGE,
                           validate=validate.Range(min=1, max=validation.MAX_PAGE),
                           metadata=PAGE)


class LobbySeatSchema(Schema):
    seat = fields.Integer()
    player_id = fields.String()


class TableSummarySchema(Schema):
    """A table as the lobby lists it: no cards, no balances."""

    id = fields.UUID()
    variant = fields.String(metadata={"enum": list(variants.VARIANT_NAMES)})
    title = fields.String()
    name = fields.String(metadata={"description": "The table's name (a casino table: its "
                                                  "player's)"})
    starts = fields.String(allow_none=True, metadata={
        "description": "Multi-seat: who starts the next deal (G11); null at a casino table"})
    family = fields.String(metadata={"enum": list(variants.FAMILIES)})
    status = fields.String(metadata={"description": "open | closed", "enum": list(TABLE_STATUSES)})
    phase = fields.String(metadata={"enum": list(validation.TABLE_PHASES)})
    limits = fields.Dict(keys=fields.String(), values=fields.Raw())
    max_seats = fields.Integer()
    seats = fields.List(fields.Nested(LobbySeatSchema))
    seats_free = fields.Integer()
    pot = fields.Integer(allow_none=True, metadata={"description": "Pot, bank or pool; null at "
                                                                   "a casino table"})
    dealer = fields.Integer(allow_none=True, metadata={"description": "The dealer's seat"})
    dealer_player_id = fields.String(allow_none=True)
    deals = fields.Integer()
    version = fields.Integer()


class TableListSchema(Schema):
    tables = fields.List(fields.Nested(TableSummarySchema))
    next = fields.UUID(allow_none=True, metadata={
        "description": "More tables may follow: pass as `after`; null at the end"})
    projection = fields.Nested(ProjectionStatusSchema, metadata=PROJECTION)


class WalletListArgs(Args):
    player_id = fields.String(validate=PLAYER_ID, metadata={
        "description": "Only wallets whose player id starts with this"})
    after = fields.UUID(metadata={"description": "Cursor: wallets after this wallet id (`next`)"})
    limit = fields.Integer(load_default=validation.DEFAULT_PAGE,
                           validate=validate.Range(min=1, max=validation.MAX_PAGE),
                           metadata=PAGE)


class WalletListSchema(Schema):
    wallets = fields.List(fields.Nested(WalletSchema))
    next = fields.UUID(allow_none=True, metadata={
        "description": "More wallets may follow: pass as `after`; null at the end"})
    projection = fields.Nested(ProjectionStatusSchema, metadata=PROJECTION)


class BetSlipArgs(Args):
    chips = fields.List(fields.Integer(validate=validate.OneOf(casino.CHIPS)), load_default=list,
                        validate=validate.Length(max=500), metadata={
                            "description": "The chips on the slip now, in the order laid"})
    action = fields.String(validate=validate.OneOf(SLIP_ACTIONS), metadata={
        "description": "The control to apply: add (with `chip`), undo, clear, rebet, double"})
    chip = fields.Integer(validate=validate.OneOf(casino.CHIPS), metadata={
        "description": "The chip to add"})


class SlipAllowedSchema(Schema):
    add = fields.Dict(keys=fields.String(), values=fields.Boolean(), metadata={
        "description": "Chip value → whether laying it is allowed"})
    undo = fields.Boolean()
    clear = fields.Boolean()
    rebet = fields.Boolean()
    double = fields.Boolean()
    deal = fields.Boolean()


class SlipRefusalSchema(Schema):
    """Why a control is refused now: the rule and the detail a refusal of it would carry."""

    rule = fields.String(metadata={"description": "The rule ID (C2, C8, G8)"})
    detail = fields.String(metadata={"description": "As the problem's `detail`: `C2: …`"})


class SlipRefusedSchema(Schema):
    # No `clear`: Clear is never refused (and a dict's own `clear` would stand in for it).
    add = fields.Dict(keys=fields.String(), values=fields.Nested(SlipRefusalSchema), metadata={
        "description": "Chip value → why laying it is refused (only the refused chips)"})
    undo = fields.Nested(SlipRefusalSchema)
    rebet = fields.Nested(SlipRefusalSchema)
    double = fields.Nested(SlipRefusalSchema)
    deal = fields.Nested(SlipRefusalSchema)


class BetSlipSchema(Schema):
    """A casino bet slip after the control, and what each control would do now (C8)."""

    table_id = fields.UUID()
    chips = fields.List(fields.Integer())
    total = fields.Integer()
    balance = fields.Integer()
    last_opening = fields.Integer(metadata={"description": "What Rebet repeats (never a raise)"})
    chip_values = fields.List(fields.Integer())
    min_bet = fields.Integer()
    max_opening_bet = fields.Integer()
    allowed = fields.Nested(SlipAllowedSchema)
    refused = fields.Nested(SlipRefusedSchema, metadata={
        "description": "Why each control `allowed` refuses is refused (only those refused)"})


class SignInArgs(Args):
    token = fields.String(required=True, validate=validate.Length(min=1, max=200), metadata={
        "description": "The link key of a one-time sign-in link (`/sign-in#token=<key>`)"})


class SessionSchema(KeySchema):
    key = fields.String(metadata={
        "description": "The session key, for `Authorization: Bearer <key>`: shown once"})
