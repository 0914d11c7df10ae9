"""Schemas of the audit reads: the feed, tables and wallets as of a moment, statements, reports
and recall."""

from __future__ import annotations

from marshmallow import fields, validate

from api.schemabase import Schema
from api.schemas import PLAYER_ID, Args
from ledger.core import validation
from ledger.rules import variants


class FeedArgs(Args):
    after = fields.Integer(load_default=0, validate=validate.Range(min=0),
                           metadata={"description": "Position cursor: entries after it"})
    limit = fields.Integer(load_default=validation.DEFAULT_PAGE,
                           validate=validate.Range(min=1, max=validation.MAX_PAGE))
    table = fields.UUID()
    wallet = fields.UUID()
    player = fields.String(validate=PLAYER_ID)
    type = fields.List(fields.String(metadata={"pattern": validation.EVENT_TYPE.anchored}),
                       metadata={"description": "Event type names"})
    since = fields.AwareDateTime(default_timezone=None, metadata={"description": "UTC, inclusive"})
    until = fields.AwareDateTime(default_timezone=None, metadata={"description": "UTC, exclusive"})


class FeedEntrySchema(Schema):
    position = fields.Integer()
    aggregate_type = fields.String()
    aggregate_id = fields.UUID()
    version = fields.Integer()
    type = fields.String()
    timestamp = fields.String()
    payload = fields.Dict()


class ProjectionStatusSchema(Schema):
    """How far the read models have folded the log."""

    position = fields.Integer(metadata={"description": "Last position folded"})
    head = fields.Integer(metadata={"description": "Last position of the log"})
    behind = fields.Integer(metadata={"description": "Positions not folded yet"})


class LogStateSchema(Schema):
    """The public tree as the log was when the answer was computed (docs/transparency.md)."""

    position = fields.Integer(metadata={"description": "The log position the answer reflects"})
    size = fields.Integer(metadata={"description": "Leaves of the public tree up to there"})
    root = fields.String(metadata={
        "description": "The tree's root hash at that size, base64: a consistency proof "
                       "(GET /log/proof/consistency) ties it to any later signed checkpoint"})


LOG_STATE = {"description": "The public tree (size, root) the answer was computed at; null where "
                            "no public log is kept"}


class FeedSchema(Schema):
    entries = fields.List(fields.Nested(FeedEntrySchema))
    next = fields.Integer(metadata={"description": "Pass as `after` for the next page"})
    end = fields.Boolean(metadata={
        "description": "Nothing more to find: the end of the log (unfiltered) or of what the "
                       "feed index holds (filtered; see `projection`)"})
    projection = fields.Nested(ProjectionStatusSchema, metadata={
        "description": "Filtered pages come from the feed index, which holds the log up to "
                       "`projection.position`"})


class AsOfArgs(Args):
    version = fields.Integer(validate=validate.Range(min=1))
    at = fields.AwareDateTime(default_timezone=None, metadata={"description": "UTC instant"})


class AsOfSchema(Schema):
    as_of_version = fields.Integer()
    as_of = fields.String()
    state = fields.Raw()


class PeriodArgs(Args):
    since = fields.AwareDateTime(default_timezone=None, metadata={"description": "UTC, inclusive"})
    until = fields.AwareDateTime(default_timezone=None, metadata={"description": "UTC, exclusive"})
    after_version = fields.Integer(load_default=0, validate=validate.Range(min=0), metadata={
        "description": "Cursor: list transfers after this wallet version (`next_version`)"})
    limit = fields.Integer(load_default=validation.MAX_PAGE,
                           validate=validate.Range(min=1, max=validation.MAX_PAGE))


class StatementRowSchema(Schema):
    time = fields.String()
    version = fields.Integer()
    type = fields.String()
    transfer_id = fields.String()
    counterparty = fields.String()
    amount = fields.Integer()
    cause = fields.Dict()
    balance = fields.Integer()


class StatementSchema(Schema):
    wallet_id = fields.UUID()
    player_id = fields.String()
    since = fields.String(allow_none=True)
    until = fields.String(allow_none=True)
    opening_balance = fields.Integer()
    closing_balance = fields.Integer()
    credits = fields.Integer()
    debits = fields.Integer()
    transfers = fields.List(fields.Nested(StatementRowSchema))
    empty = fields.Boolean()
    next_version = fields.Integer(allow_none=True, metadata={
        "description": "More transfers follow: pass as `after_version`"})
    log = fields.Nested(LogStateSchema, allow_none=True, metadata=LOG_STATE)


class ReportArgs(Args):
    since = fields.Date(required=True, metadata={"description": "First UTC day"})
    until = fields.Date(required=True, metadata={"description": "Day after the last (exclusive)"})
    group_by = fields.String(validate=validate.OneOf(validation.REPORT_GROUPS))
    table = fields.UUID()
    variant = fields.String(validate=validate.OneOf(variants.VARIANT_NAMES))
    player = fields.String(validate=PLAYER_ID)
    format = fields.String(load_default="json", validate=validate.OneOf(["json", "csv"]))


class ReportSchema(Schema):
    since = fields.String()
    until = fields.String()
    group_by = fields.String(allow_none=True)
    filters = fields.Dict()
    empty = fields.Boolean(metadata={"description": "No activity in the period"})
    groups = fields.List(fields.Dict(), metadata={
        "description": "Per group: variants, banked_by (house, player, pool), deals, turns, "
                       "wins, handle, returned, paid_in, paid_out, net, house_handle, hold (the "
                       "house's: 0 where players bank or share the pot), hold_pct (hold ÷ "
                       "house_handle; null where nobody bet against the house), pots_net "
                       "(net less hold: players' chips in pots, banks and pools), rtp_actual, "
                       "rtp_theoretical, win_rate, top_wins, banker_in/out/net, stitch_rounds, "
                       "pot_splits, partial_payouts"})
    totals = fields.Dict()
    disputes = fields.Dict(metadata={
        "description": "The period's disputes: disputes_opened, disputes_resolved, "
                       "disputes_upheld, chips_adjusted, mean_seconds_to_resolve (null when none "
                       "was resolved)"})
    projection = fields.Nested(ProjectionStatusSchema)
    log = fields.Nested(LogStateSchema, allow_none=True, metadata=LOG_STATE)


class RecallArgs(Args):
    count = fields.Integer(load_default=10, validate=validate.Range(min=1, max=50))


class RecallSchema(Schema):
    player_id = fields.String()
    deals = fields.List(fields.Dict())
    projection = fields.Nested(ProjectionStatusSchema)
    log = fields.Nested(LogStateSchema, allow_none=True, metadata=LOG_STATE)


class SeriesArgs(Args):
    since = fields.Date(required=True, metadata={"description": "First UTC day"})
    until = fields.Date(required=True, metadata={"description": "Day after the last (exclusive)"})
    table = fields.UUID()
    variant = fields.String(validate=validate.OneOf(variants.VARIANT_NAMES))


class SeriesDaySchema(Schema):
    day = fields.String(metadata={"description": "UTC day"})
    deals = fields.Integer()
    handle = fields.Integer(metadata={"description": "Chips bet"})
    returned = fields.Integer(metadata={"description": "Chips paid back on bets"})
    house_handle = fields.Integer(metadata={"description": "Chips bet against the house "
                                                           "(Casino Red Dog)"})
    hold = fields.Integer(metadata={
        "description": "The house's hold (C9): chips paid in less chips paid back at tables "
                       "the house banks; 0 where players bank or share the pot (no rake)"})
    hold_pct = fields.Float(allow_none=True, metadata={
        "description": "hold ÷ house_handle × 100; null where nobody bet against the house"})
    pots_net = fields.Integer(metadata={
        "description": "Chips paid into multi-seat pots, banks and pools less chips paid back: "
                       "players' chips (a dealer's, a banker's or the pool's), not the house's"})
    banker_net = fields.Integer(metadata={
        "description": "Bankers' and staking dealers' collections less their stakes (a bank "
                       "still on the table counts when it is collected)"})


class SeriesPointSchema(Schema):
    deals = fields.Integer(metadata={"description": "Deals so far"})
    handle = fields.Integer(metadata={"description": "Chips bet so far"})
    returned = fields.Integer(metadata={"description": "Chips returned so far"})
    rtp = fields.Float(allow_none=True, metadata={"description": "returned ÷ handle so far"})


class ConvergenceSchema(Schema):
    variant = fields.String()
    theoretical = fields.Float(allow_none=True, metadata={
        "description": "The return to player the rules fix, or null where play selects it"})
    deals = fields.Integer()
    handle = fields.Integer()
    returned = fields.Integer()
    points = fields.List(fields.Nested(SeriesPointSchema), metadata={
        "description": "Cumulative, in the order deals finished; at most 240 points (each may "
                       "cover several deals)"})


class BankPointSchema(Schema):
    deal = fields.Integer(metadata={"description": "The table's deal number"})
    bank = fields.Integer(metadata={"description": "Chips in the bank after the deal: the "
                                                   "banker's, a player's, not the house's"})
    banker = fields.String(allow_none=True, metadata={"description": "The banker's player id"})


class BankLineSchema(Schema):
    table = fields.UUID()
    variant = fields.String()
    last_deal = fields.Integer()
    points = fields.List(fields.Nested(BankPointSchema), metadata={
        "description": "At most 240 points (the later deal of merged neighbours)"})


class SeriesSchema(Schema):
    since = fields.String()
    until = fields.String()
    filters = fields.Dict()
    empty = fields.Boolean(metadata={"description": "No activity in the period"})
    days = fields.List(fields.Nested(SeriesDaySchema), metadata={
        "description": "Every day of the period, quiet ones included"})
    convergence = fields.List(fields.Nested(ConvergenceSchema), metadata={
        "description": "Per variant (none when filtered by table): actual return to player "
                       "as deals accumulate"})
    banks = fields.List(fields.Nested(BankLineSchema), metadata={
        "description": "Tables whose dealer or banker stakes a pot or bank, at most 12 (most "
                       "deals first): the bank after each deal"})
    projection = fields.Nested(ProjectionStatusSchema)
