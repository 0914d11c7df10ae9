"""Worlds for the hidden-information crawler (`tests/api/test_hidden_everywhere.py`): a table
of one variant played through the real application to a moment mid-deal, built twice.

The two builds are the same in everything a viewer may see and differ only in what the rules
keep from that viewer: the cards at face-down places it may not look at and the cards still in
the pack (the two packs are the same at every place that has been shown), and the amounts of
sealed six-spot bets it did not make (X4). Everything else is made the same: the clock is
frozen, and every random draw of the service (server seeds, ids, keys) comes from one seeded
source that both builds read in the same order. So any difference between what the viewer gets
from the two builds is hidden information reaching the viewer.

Packs are stacked through the application's scenario seam (`stacked_packs`): the first-dealer
draw shows one ace (seat 1 deals), and the deal itself is dealt from the given pack.
"""

from __future__ import annotations

import os
import random
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.persistence import DatetimeAsISO
from flask import Flask
from freezegun import freeze_time
from freezegun.api import FakeDatetime

from api import create_app
from ledger.app.access import SYSTEM, Principal
from ledger.app.application import LedgerApplication
from ledger.core.cards import CANONICAL_PACK, Card
from ledger.domain.casino import SealedSeed
from ledger.domain.highcard import HighCardTable
from ledger.domain.records import record_of
from ledger.rules import operations as op
from ledger.settings import Settings
from tests.api.helpers import auth
from tests.integration.highcard_client import player, stack

NOW = "2026-11-30 12:00:00"
GRANT = 500_000
PLAYERS = ("p1", "p2", "p3")
OUTSIDER = "p9"
TABLE_ID = uuid5(NAMESPACE_URL, "reddog-ledger:tests:hidden-table")
#: Turns played before the crawl, per variant: one turn settled and the next one waiting;
#: at a six-spot table two of the three players have laid their sealed bets.
TURNS = {"six_spot": 2}
#: The sealed amounts the first build's bettors lay, by seat; the second build lays others
#: for every bettor whose bet the viewer may not see.
SEALED = {1: 7, 2: 11, 3: 13}
OTHER_SEALED = {1: 23, 2: 19, 3: 29}
#: The bank a dealer stakes, where the variant's least would be covered by one bet.
BANK = 200


def wallet_id(player_id: str) -> UUID:
    return uuid5(NAMESPACE_URL, f"reddog-ledger:tests:wallet:{player_id}")


@contextmanager
def seeded_randomness(seed: int) -> Iterator[None]:
    """Every random draw of the service (`secrets`, `uuid4`) from one seeded source."""
    source = random.Random(seed)
    saved_sysrand, saved_urandom = secrets._sysrand, os.urandom  # type: ignore[attr-defined]
    secrets._sysrand = source  # type: ignore[attr-defined]
    os.urandom = source.randbytes  # type: ignore[assignment]
    try:
        yield
    finally:
        secrets._sysrand = saved_sysrand  # type: ignore[attr-defined]
        os.urandom = saved_urandom  # type: ignore[assignment]


class FakeDatetimeAsISO(DatetimeAsISO):
    """Under the frozen clock the library decodes stored times as freezegun's own class, which
    an aggregate read back then carries: store those as the times they are."""

    type = FakeDatetime


class Packs:
    """The stacked packs of the world's one table by shuffle (nonce): the first-dealer draw,
    then the deal; the service asks again at every command of a deal."""

    def __init__(self, packs: list[list[Card]]) -> None:
        self.packs = packs

    def __call__(self, _table_id: UUID, nonce: int) -> list[Card] | None:
        return self.packs[nonce - 1] if nonce <= len(self.packs) else None


@dataclass
class World:
    """One build: the application, its Flask app and a key per viewer."""

    variant: str
    ledger: LedgerApplication
    app: Flask
    keys: dict[str, dict[str, str]] = field(default_factory=dict)
    key_ids: dict[str, str] = field(default_factory=dict)

    @property
    def table(self) -> HighCardTable | None:
        """The world's multi-seat table (None in the casino world)."""
        table = self.ledger.repository.get(TABLE_ID)
        return table if isinstance(table, HighCardTable) else None

    def secrets_in_play(self) -> list[str]:
        """The server seeds sealed and not yet revealed (never to be seen anywhere)."""
        from ledger.integrity.verify import read_log

        sealed, revealed = [], set()
        for _position, event in read_log(self.ledger):
            if isinstance(event, SealedSeed.Event) and hasattr(event, "server_seed"):
                sealed.append(event.server_seed)
            seed = getattr(record_of(event), "server_seed", None)
            if type(event).__name__ == "SeedRevealed" and seed:
                revealed.add(seed)
        return [seed for seed in sealed if seed not in revealed]


def world_settings() -> Settings:
    """In memory, without rate limits, and audit reads taking any share of the time: the crawl
    sends audit reads between table reads, and a share of the time would have each wait for the
    last one's rest (on a slow machine, a read of one build told to come back, 429, and the
    same read of the other served); tests/unit/test_audit_share.py tests the share."""
    return Settings.from_env(store="memory", rate_limit=0, audit_share=1.0)


def build(variant: str, pack: list[Card], sealed: dict[int, int], seed: int = 1) -> World:
    """Play a table of `variant` from `pack` to the crawl's moment (`TURNS`), the same steps
    in every build; `sealed` are the amounts of the six-spot bets, by seat."""
    with seeded_randomness(seed), freeze_time(NOW):
        packs = Packs([stack("As"), pack])
        ledger = LedgerApplication(world_settings(), stacked_packs=packs)
        ledger.mapper.transcoder.register(FakeDatetimeAsISO())
        world = World(variant, ledger, create_app({"LEDGER": ledger, "TESTING": True}))
        _keys(world)
        for player_id in (*PLAYERS, OUTSIDER):
            ledger.wallets.open_wallet(SYSTEM, player_id, wallet_id=wallet_id(player_id))
            ledger.wallets.grant(SYSTEM, wallet_id(player_id), GRANT)
        ledger.tables.open_table(SYSTEM, variant, client_seed="hidden-crawl", table_id=TABLE_ID)
        for seat, player_id in enumerate(PLAYERS, start=1):
            ledger.tables.seat_player(player(player_id), TABLE_ID, seat, wallet_id(player_id))
        ledger.play.start_deal(SYSTEM, TABLE_ID)
        _play(world, TURNS.get(variant, 1), sealed)
        ledger.project()
        return world


def build_casino(seed: int = 1) -> World:
    """A casino deal waiting for the player's Stand or Raise (the third card still in the pack)."""
    from ledger.core.fairness import shuffled_pack
    from ledger.rules.casino import OpeningKind, classify_opening

    with seeded_randomness(seed), freeze_time(NOW):
        ledger = LedgerApplication(world_settings())
        ledger.mapper.transcoder.register(FakeDatetimeAsISO())
        world = World("casino", ledger, create_app({"LEDGER": ledger, "TESTING": True}))
        _keys(world)
        for player_id in (*PLAYERS, OUTSIDER):
            ledger.wallets.open_wallet(SYSTEM, player_id, wallet_id=wallet_id(player_id))
            ledger.wallets.grant(SYSTEM, wallet_id(player_id), GRANT)
        ledger.casino.open_casino_table(SYSTEM, wallet_id("p1"), "hidden-crawl", True, None,
                                 table_id=TABLE_ID)
        for nonce in range(1, 200):
            candidate = f"{nonce:064x}"
            pack = shuffled_pack(candidate, "hidden-crawl", 1)
            if classify_opening(pack[0], pack[1]).kind is OpeningKind.SPREAD:
                break
        ledger.deals.deal(SYSTEM, TABLE_ID, 100, server_seed=candidate)
        ledger.project()
        return world


VIEWERS = ("nobody", "operator", "auditor", *PLAYERS, OUTSIDER)


def _keys(world: World) -> None:
    for viewer in VIEWERS:
        if viewer == "nobody":
            world.keys[viewer] = {}
            continue
        role = viewer if viewer in ("operator", "auditor") else "player"
        key, record = world.ledger.keys.issue_key(role, None if role != "player" else viewer)
        world.keys[viewer] = auth(key)
        world.key_ids[viewer] = record["key_id"]


def _play(world: World, turns: int, sealed: dict[int, int]) -> None:
    """Take the first legal action of whoever must act, `turns` bets in all: a bank of `BANK`
    (or the variant's least), the next deal, a bet at its least (a six-spot bet at its sealed
    amount)."""
    ledger = world.ledger
    bets = 0
    for _ in range(40):
        table: HighCardTable = ledger.repository.get(TABLE_ID)
        state = table.state
        game = table.game()
        balances = {seat: ledger.repository.get(UUID(info["wallet"])).balance
                    for seat, info in state.seats.items()}
        actions = game.legal_actions(balances)
        if bets == turns:
            return
        chosen = next(a for a in actions if a["action"] in ("bet", "fund_bank", "deal"))
        who = player(state.seats[chosen["seat"]]["player"])
        if chosen["action"] == "fund_bank":
            ledger.play.fund_bank(who, TABLE_ID, max(chosen["min"], BANK))
            continue
        if chosen["action"] == "deal":
            ledger.play.start_deal(who, TABLE_ID)
            continue
        amount = sealed.get(chosen["seat"], chosen["min"]) if state.variant.betting.value == \
            "sealed" else chosen["min"]
        ledger.play.bet(who, TABLE_ID, chosen["seat"], amount)
        bets += 1
    raise AssertionError(f"{world.variant}: {turns} turns were not reached")


def hidden_places(world: World, viewer: str) -> list[int]:
    """The pack places whose cards the viewer may not see and that nothing played so far
    depended on: the cards still in the pack, and the hands of seats that have not played."""
    table = world.table
    assert table is not None
    state = table.state
    deal = state.deal
    assert deal is not None and deal.purpose == op.Committed.DEAL
    game = table.game()
    seat_of = {info["player"]: seat for seat, info in state.seats.items()}
    own = seat_of.get(viewer)
    places = list(deal.pack)
    for seat, positions in deal.hands.items():
        played = seat in deal.acted or seat in deal.shown
        if not played and not game.may_see(own, seat):
            places.extend(positions)
    return sorted(set(places) - shown_places(world, deal.id))


def shown_places(world: World, deal_id: str) -> set[int]:
    """The places of the deal's cards that have been shown (a card burned or returned face up
    goes to the bottom of the pack, still in it: G3)."""
    from ledger.integrity.verify import read_log

    shown: set[int] = set()
    for _position, event in read_log(world.ledger):
        record = record_of(event)
        if getattr(record, "deal_id", None) != deal_id:
            continue
        if getattr(record, "card", None) is not None:
            shown.add(record.position)
        shown.update(card["position"] for card in getattr(record, "cards", None) or ())
    return shown


def other_pack(pack: list[Card], places: list[int]) -> list[Card]:
    """The pack with the cards at `places` in reverse order among themselves."""
    other = list(pack)
    cards = [pack[p] for p in places]
    for place, card in zip(places, reversed(cards), strict=True):
        other[place] = card
    return other


def other_sealed(world: World, viewer: str) -> dict[int, int]:
    """The sealed amounts of the second build: the viewer's own bet as in the first."""
    seat_of = {info["player"]: seat
               for seat, info in world.table.state.seats.items()}  # type: ignore[union-attr]
    own = seat_of.get(viewer)
    return {seat: (SEALED[seat] if seat == own else OTHER_SEALED[seat]) for seat in SEALED}


def first_pack(variant: str) -> list[Card]:
    """A pack whose order the tests know, the same every run."""
    cards = list(CANONICAL_PACK)
    random.Random(f"hidden-crawl:{variant}").shuffle(cards)
    return cards


def principal(world: World, viewer: str) -> Principal:
    return SYSTEM if viewer == "operator" else player(viewer)
