"""Marshmallow schemas: what each endpoint takes and answers; they also write the OpenAPI document."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from marshmallow import ValidationError, fields, post_dump, pre_load, validate

from api.links import deal_links, table_links
from api.schemabase import Schema
from ledger.core import validation
from ledger.domain.wallet import MAX_GRANT
from ledger.rules import variants
from ledger.rules.casino import CHIP_GRID, MAX_OPENING_BET, MIN_BET
from ledger.rules.highcard.limits import options_of
from ledger.rules.highcard.starts import STARTS
from ledger.rules.variants import VARIANTS

#: What the game rules refuse whatever the table, documented where the schema does not check it
#: itself (the rule does, and names itself when it refuses): the document is the contract.
HAND_SIZES = sorted({size for variant in VARIANTS.values() for size in variant.hand_sizes})
MAX_SEATS = max(variant.max_players for variant in VARIANTS.values())


class Args(Schema):
    """What a request sends, as a body or a query string: every request schema is one (the
    blueprints refuse any other, `api.resources.ResourceBlueprint`).

    Two limits hold for every field whatever else it checks (`ledger.core.validation`). Every string
    is text UTF-8 can encode: a lone surrogate, which a JSON `\\ud800` escape or a query
    string's bytes that are not UTF-8 make (`api.inputs`), is refused naming its field before
    any field reads it, as a name that is not text is refused naming the body. Every integer
    field holds what the stores hold: one whose own validators leave an end open is given the
    stores' bound there (signed 64-bit), which the OpenAPI document shows as its `minimum` and
    `maximum`. A nested schema is an `Args` too."""

    @pre_load
    def _only_text(self, data: Any, **_kwargs: Any) -> Any:
        found = validation.unstorable(data, numbers=False) if isinstance(data, Mapping) else None
        if found is not None:
            place, explain = found
            message: Any = [f"Must be {explain}."]
            for key in reversed(place or ("_schema",)):
                message = {key: message}
            raise ValidationError(message)
        return data

    def on_bind_field(self, field_name: str, field_obj: fields.Field) -> None:
        if isinstance(field_obj, fields.Nested) and not (
                isinstance(field_obj.nested, type) and issubclass(field_obj.nested, Args)):
            raise TypeError(f"{type(self).__name__}.{field_name} nests a schema that is not Args")
        for field in (field_obj, getattr(field_obj, "inner", None)):
            if isinstance(field, fields.Integer):
                _stored(field)


def _stored(field: fields.Integer) -> None:
    """Bound an integer field by what the stores hold at each end its validators leave open (a
    field that takes only listed values is bounded by them)."""
    if any(isinstance(check, validate.OneOf) for check in field.validators):
        return
    ranges = [check for check in field.validators if isinstance(check, validate.Range)]
    low = any(check.min is not None for check in ranges)
    high = any(check.max is not None for check in ranges)
    if low and high:
        return
    if low:
        error = f"Must be at most {validation.MAX_STORED}, the most the stores hold."
    elif high:
        error = f"Must be at least {validation.MIN_STORED}, the least the stores hold."
    else:
        error = f"Must be {validation.STORED}."
    field.validators = [*field.validators, validate.Range(
        min=None if low else validation.MIN_STORED, max=None if high else validation.MAX_STORED,
        error=error)]


class WholeNumber(fields.Integer):
    """A JSON whole number: never a bool, float or string."""

    message = "Must be a whole number."

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)

    def _validated(self, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValidationError(self.message)
        return super()._validated(value)


class Chips(WholeNumber):
    """A whole number of chips: an int, never a bool, float or string (G4)."""

    message = "Must be a whole number of chips."


class StrictBoolean(fields.Boolean):
    """JSON `true` or `false` only: never "yes", "true", 1 or 0."""

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class FullMatch(validate.Regexp):
    """A `ledger.core.validation` pattern as a schema validator: the whole value must match (a
    trailing newline never passes), and the OpenAPI document shows the anchored pattern."""

    def __init__(self, pattern: validation.Pattern) -> None:
        super().__init__(pattern.anchored, error=f"Must be {pattern.explain}.")
        self.pattern = pattern

    def __call__(self, value: Any) -> Any:
        if not self.pattern.matches(value):
            raise ValidationError(self._format_error(value))
        return value


PLAYER_ID = FullMatch(validation.PLAYER_ID)
CLIENT_SEED = FullMatch(validation.CLIENT_SEED)
SERVER_SEED = FullMatch(validation.SERVER_SEED)


class WalletOpenArgs(Args):
    player_id = fields.String(required=True, validate=PLAYER_ID,
                              metadata={"description": "Pseudonymous player id"})


class GrantArgs(Args):
    amount = Chips(required=True, validate=validate.Range(min=1),
                   metadata={"description": "Play credits to grant (C1)", "maximum": MAX_GRANT})


def _used_by(option: str, what: str) -> str:
    """An option's description: what it is, and the variants that use it (the others refuse
    it, naming it: `ledger.rules.highcard.limits.options_of`)."""
    users = [name for name, variant in VARIANTS.items() if option in options_of(variant)]
    where = "every multi-seat variant" if len(users) == len(VARIANTS) else ", ".join(users)
    return f"{what}. Used by {where}"


class TableLimitsArgs(Args):
    """Limits of a multi-seat table; each defaults from its variant (rules.md). An option its
    variant does not use, or limits that contradict each other, are refused naming the option."""

    hand_size = Chips(metadata={
        "description": _used_by("hand_size", "Cards per hand (H1: 5, 4 or 3; the variant's)"),
        "enum": HAND_SIZES})
    ante = Chips(validate=validate.Range(min=1),
                 metadata={"description": _used_by("ante", "Ante (H2, X1)")})
    min_bet = Chips(validate=validate.Range(min=1), metadata={"description": _used_by(
        "min_bet", "Smallest bet (High Card Pool's is its ante, H5)")})
    max_bet = Chips(validate=validate.Range(min=1), metadata={"description": _used_by(
        "max_bet", "Optional cap, at least the smallest bet")})
    bank_min = Chips(validate=validate.Range(min=1), metadata={"description": _used_by(
        "bank_min", "Smallest stake or bank (S1, P1)")})
    bank_max = Chips(validate=validate.Range(min=1), metadata={"description": _used_by(
        "bank_max", "Largest stake or bank (S1), at least bank_min")})
    bank_fixed = Chips(validate=validate.Range(min=1), metadata={"description": _used_by(
        "bank_fixed", "A bank the table fixes (P1), from bank_min to bank_max")})
    centre_price = Chips(validate=validate.Range(min=0), metadata={
        "description": _used_by("centre_price", "The agreed price of a centre card (FW2); 0 "
                                "(default) is a fifth of the pot at the turn's first purchase, "
                                "the second the same")})
    max_seats = Chips(validate=validate.Range(min=2), metadata={
        "description": _used_by("max_seats", "Seats (G9, within the variant's players)"),
        "maximum": MAX_SEATS})


class TableOpenArgs(Args):
    variant = fields.String(required=True, validate=validate.OneOf(variants.VARIANT_NAMES))
    wallet_id = fields.UUID(metadata={"description": "Casino only: the seated player's wallet"})
    limits = fields.Nested(TableLimitsArgs, metadata={
        "description": "Multi-seat tables only (a casino table's are fixed, C2)"})
    client_seed = fields.String(validate=CLIENT_SEED)
    accepts_supplied_seeds = StrictBoolean(
        load_default=False,
        metadata={"description": "Operator may supply server seeds (fairness.md)"},
    )
    name = fields.String(validate=validate.Length(max=200), metadata={
        "description": "Multi-seat only: the table's name, 1-40 printable characters once "
                       "trimmed; without one, a colour and a number drawn from its id"})
    starts = fields.String(validate=validate.OneOf(STARTS), metadata={
        "description": "Multi-seat only: who starts the next deal (G11): `operator` (default; "
                       "the dealer's player may too once drawn), `dealer` (the dealer's "
                       "player, any seated player before the first draw), `ready` (when every "
                       "seated player has said ready)"})


class ClientSeedArgs(Args):
    client_seed = fields.String(required=True, validate=CLIENT_SEED)


class SeatArgs(Args):
    seat = Chips(required=True, validate=validate.Range(min=1))
    wallet_id = fields.UUID(required=True)


class BankArgs(Args):
    amount = Chips(required=True, validate=validate.Range(min=1),
                   metadata={"description": "The dealer's stake or bank (S1, P1, XB1)"})


class NextDealArgs(Args):
    server_seed = fields.String(validate=SERVER_SEED, metadata={
        "description": "Operator-supplied seed, only where the table accepts them"})


class TableBetArgs(Args):
    seat = Chips(required=True, validate=validate.Range(min=1))
    amount = Chips(required=True, metadata={"description": "Bet or cover (H5, S3, P3, X4, XB3; G4)",
                                            "minimum": 1})


class SeatOnlyArgs(Args):
    seat = Chips(required=True, validate=validate.Range(min=1))


class ChoiceArgs(Args):
    choice = fields.String(required=True, validate=validate.OneOf(validation.DEALER_CHOICES),
                           metadata={"description": "S6"})


class DealArgs(Args):
    bet = Chips(required=True, metadata={"description": "Opening bet: 10-5,000 in tens (C2)",
                                         "minimum": MIN_BET, "maximum": MAX_OPENING_BET,
                                         "multipleOf": CHIP_GRID})
    server_seed = fields.String(validate=SERVER_SEED, metadata={
        "description": "Operator-supplied seed, only where the table accepts them"})


class WalletSchema(Schema):
    id = fields.UUID()
    player_id = fields.String()
    balance = fields.Integer(metadata={"description": (
        "Chips in the wallet as the caller may see them: with the chips of its sealed six-spot "
        "bets not shown yet still in it, to anyone but its own player (X4)")})
    granted = fields.Integer()
    sealed_bets = fields.Integer(metadata={"description": (
        "Sealed six-spot bets the wallet has laid that the caller may not see yet (their chips "
        "are still in `balance`); 0 for its own player (X4)")})
    version = fields.Integer()


class CardSchema(Schema):
    card = fields.String(metadata={"description": "Rank + suit, e.g. `Td` (G1)"})
    position = fields.Integer(metadata={"description": "Place in the pack, 0 = top"})
    face_up = fields.Boolean()
    to = fields.String(metadata={"description": "Who the card was dealt to"})


class OpeningSchema(Schema):
    kind = fields.String()
    spread = fields.Integer(allow_none=True)
    odds = fields.Integer(allow_none=True)
    label = fields.String()


class DealSchema(Schema):
    id = fields.UUID()
    table_id = fields.UUID()
    wallet_id = fields.UUID()
    player_id = fields.String()
    nonce = fields.Integer()
    client_seed = fields.String()
    commitment = fields.String(metadata={"description": "SHA-256 of the server seed"})
    phase = fields.String(metadata={"enum": list(validation.DEAL_PHASES)})
    cards = fields.List(fields.Nested(CardSchema))
    opening = fields.Nested(OpeningSchema, allow_none=True)
    bet = fields.Integer()
    raised = fields.Boolean()
    stake = fields.Integer()
    outcome = fields.String(allow_none=True, metadata={
        "enum": [*validation.CASINO_OUTCOMES, None]})
    returned = fields.Integer(allow_none=True)
    net = fields.Integer(allow_none=True)
    server_seed = fields.String(allow_none=True, metadata={"description": "Only once finished"})
    awaiting = fields.String(allow_none=True, metadata={"enum": ["player", None]})
    legal_actions = fields.List(fields.String())
    version = fields.Integer()
    started_at = fields.String()
    updated_at = fields.String()
    state = fields.Raw(metadata={"description": "Multi-seat deals: the table after the deal's "
                                                "last step so far"})
    links = fields.Dict(dump_only=True, metadata={
        "description": "The requests that take each action legal now, and `self`: "
                       "`{name: {href, method}}`",
        "example": {"self": {"href": "/deals/0b6f…", "method": "GET"},
                    "stand": {"href": "/deals/0b6f…/stand", "method": "POST"},
                    "raise": {"href": "/deals/0b6f…/raise", "method": "POST"}}})

    @post_dump
    def add_links(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        if "id" in data:
            data["links"] = deal_links(data)
        return data


class TableSchema(Schema):
    """A table as the caller may see it. Casino tables and multi-seat tables share this shape;
    fields of the other kind are absent."""

    id = fields.UUID()
    variant = fields.String(metadata={"enum": list(variants.VARIANT_NAMES)})
    title = fields.String()
    name = fields.String(metadata={"description": "Multi-seat: the table's name"})
    starts = fields.String(metadata={"description": "Multi-seat: who starts the next deal (G11)",
                                     "enum": list(STARTS)})
    ready = fields.List(fields.Integer(), metadata={
        "description": "Multi-seat: the seats that said they are ready for the next deal (G11)"})
    last_deal = fields.Dict(allow_none=True, metadata={
        "description": "Multi-seat: each settled turn of the current or last deal (seat, "
                       "player, outcome, stake, target, winnings, returned, cards shown), kept "
                       "until the next deal starts"})
    family = fields.String(metadata={"description": "Rule family: C, H, S, SS, FW, P, X, XB",
                                     "enum": list(variants.FAMILIES)})
    wallet_id = fields.UUID()
    player_id = fields.String()
    client_seed = fields.String()
    next_nonce = fields.Integer()
    deals = fields.Integer()
    accepts_supplied_seeds = fields.Boolean()
    limits = fields.Dict(keys=fields.String(), values=fields.Raw())
    paytable = fields.Dict(keys=fields.String(), values=fields.Integer())
    balance = fields.Integer(allow_none=True)
    phase = fields.String(metadata={"enum": list(validation.TABLE_PHASES)})
    dealer = fields.Integer(allow_none=True)
    pot = fields.Integer(metadata={"description": "Pot, bank or pool"})
    stake = fields.Integer(allow_none=True, metadata={
        "description": "Chips bet and not yet settled (null while six-spot bets are sealed)"})
    banker_start = fields.Integer()
    deals_by_this_dealer = fields.Integer()
    stitch_round = fields.Boolean()
    seats = fields.List(fields.Dict())
    counters = fields.Dict(keys=fields.String(), values=fields.Integer(allow_none=True))
    current_deal = fields.Raw(allow_none=True, metadata={
        "description": "Casino: the deal; multi-seat: order, turn, target, hands (own cards "
                       "only when the rules allow), bets (sealed ones hidden)"})
    legal_actions = fields.List(fields.Raw(), metadata={
        "description": "Casino: action names; multi-seat: {action, seat, player_id, min, max}"})
    version = fields.Integer()
    links = fields.Dict(dump_only=True, metadata={
        "description": "The requests that take each action legal now, and `self`: "
                       "`{name: {href, method}}`"})

    @post_dump
    def add_links(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        if "id" in data:
            data["links"] = table_links(data)
        return data


class EventSchema(Schema):
    aggregate_id = fields.UUID()
    version = fields.Integer()
    type = fields.String()
    timestamp = fields.String()
    payload = fields.Dict()


class SeatBalanceSchema(Schema):
    seat = fields.Integer()
    balance = fields.Integer(allow_none=True, metadata={
        "description": "The seat's wallet balance after the step: its balance before the deal "
                       "moved by the deal's transfers so far; null where the caller may not "
                       "read that wallet (another player's)"})


class ReplayStepSchema(Schema):
    event = fields.Nested(EventSchema)
    state = fields.Raw(metadata={"description": "The deal (casino) or table (multi-seat) after"})
    balances = fields.List(fields.Nested(SeatBalanceSchema))


class ReplaySeatSchema(Schema):
    seat = fields.Integer()
    player_id = fields.String()
    wallet_id = fields.String()
    balance_before = fields.Integer(allow_none=True, metadata={
        "description": "The wallet's balance just before the deal's commitment; null where the "
                       "caller may not read that wallet"})


class ReplaySchema(Schema):
    deal_id = fields.UUID()
    table_id = fields.UUID()
    variant = fields.String()
    finished = fields.Boolean()
    seats = fields.List(fields.Nested(ReplaySeatSchema), metadata={
        "description": "Who sat where for the deal (a casino deal: seat 1)"})
    steps = fields.List(fields.Nested(ReplayStepSchema))


class CheckSchema(Schema):
    check = fields.String()
    ok = fields.Boolean()
    detail = fields.String()


class FairnessSchema(Schema):
    deal_id = fields.UUID()
    fair = fields.Boolean()
    server_seed = fields.String()
    commitment = fields.String()
    client_seed = fields.String()
    nonce = fields.Integer()
    pack = fields.List(fields.String())
    checks = fields.List(fields.Nested(CheckSchema))


class ProblemSchema(Schema):
    """An error (RFC 9457 problem details) naming the rule or field."""

    type = fields.String(required=True, metadata={
        "description": "`/problems/<kind>`: a page explaining the kind of problem and what to do"})
    title = fields.String(required=True)
    status = fields.Integer(required=True, metadata={"description": "The HTTP status"})
    detail = fields.String(required=True)
    rule = fields.String(metadata={"description": "Rule ID from rules.md, when a rule refused"})
    field = fields.String(metadata={"description": "The offending field, when one is known"})
    errors = fields.Dict(metadata={"description": "Field-by-field validation messages"})
    request_id = fields.String(metadata={"description": "The request's id, as in the "
                                                       "`X-Request-Id` header and the log"})
