"""Schemas of the deal search (`GET /deals`)."""

from __future__ import annotations

from marshmallow import fields, validate

from api.schemabase import Schema
from api.schemas import PLAYER_ID, Args, FullMatch
from api.schemas_audit import ProjectionStatusSchema
from ledger.core import validation
from ledger.rules import variants


class DealSearchArgs(Args):
    table = fields.UUID(metadata={"description": "The table's deals only"})
    player = fields.String(validate=PLAYER_ID, metadata={
        "description": "Deals this player was dealt in; a player key may name only its own "
                       "player (and is taken to mean it when left out)"})
    variant = fields.String(validate=validate.OneOf(variants.VARIANT_NAMES))
    outcome = fields.String(validate=validate.OneOf(validation.DEAL_OUTCOMES), metadata={
        "description": "What the player's part ended with (with `player`), else any player's: "
                       "`win`, `lose`, `push` (a casino bet returned) or `no_bet` (dealt in, "
                       "no bet of theirs settled)"})
    since = fields.AwareDateTime(default_timezone=None, metadata={
        "description": "Finished at or after this instant (with its UTC offset)"})
    until = fields.AwareDateTime(default_timezone=None, metadata={
        "description": "Finished before this instant (with its UTC offset)"})
    disputed = fields.Boolean(truthy={"true"}, falsy={"false"}, metadata={
        "description": "`true`: deals a player has disputed; `false`: the others"})
    after = fields.String(validate=FullMatch(validation.DEAL_CURSOR), metadata={
        "description": "Cursor: the `next` of the page before"})
    limit = fields.Integer(load_default=validation.DEFAULT_PAGE,
                           validate=validate.Range(min=1, max=validation.MAX_PAGE))


class DealPlayerSchema(Schema):
    player_id = fields.String()
    seat = fields.Integer()
    wallet_id = fields.String(metadata={"description": "Absent for other players (player keys)"})
    bets = fields.Integer(metadata={"description": "Chips bet, raises included"})
    returned = fields.Integer(metadata={"description": "Chips paid back on bets"})
    outcome = fields.String(metadata={"enum": list(validation.DEAL_OUTCOMES)})
    balance_before = fields.Integer(metadata={"description": "The wallet when the deal began"})
    balance_after = fields.Integer(metadata={"description": "The wallet when the deal ended"})


class DealFoundSchema(Schema):
    deal_id = fields.String()
    table_id = fields.String()
    variant = fields.String(metadata={"enum": list(variants.VARIANT_NAMES)})
    family = fields.String(metadata={"description": "`C` (casino) or the high-card family letter",
                                     "enum": list(variants.FAMILIES)})
    started_at = fields.String()
    finished_at = fields.String()
    players = fields.List(fields.Nested(DealPlayerSchema))
    handle = fields.Integer(allow_none=True, metadata={
        "description": "Chips bet by every player (null for player keys)"})
    returned = fields.Integer(allow_none=True)
    net = fields.Integer(allow_none=True, metadata={"description": "handle - returned"})
    disputed = fields.Boolean()
    disputes = fields.List(fields.Dict(), metadata={
        "description": "`dispute_id`, `player_id` of each dispute (a player: their own)"})


class DealSearchSchema(Schema):
    deals = fields.List(fields.Nested(DealFoundSchema))
    next = fields.String(allow_none=True, metadata={
        "description": "Pass as `after` for more; null when the search has nothing more"})
    filters = fields.Dict()
    projection = fields.Nested(ProjectionStatusSchema)
