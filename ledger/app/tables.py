"""Multi-seat tables of the high-card family: every variant through one engine.

Each command loads the table and the wallets of every seat, lets the engine decide, moves the
chips of every transfer the new events carry between the wallets, and saves the table, the
wallets it touched and any new sealed seeds in one `save`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any
from uuid import UUID

from ledger.app import newtable, views
from ledger.app.access import Action, Principal, require
from ledger.app.base import StackedPacks
from ledger.app.sealed import SealedBets, shown_balance
from ledger.app.unit import CommandKey, Decision, UnitOfWork
from ledger.core import fairness, validation
from ledger.core.cards import CANONICAL_PACK, Card
from ledger.core.errors import Forbidden, InvalidInput, NotFound, RuleViolation
from ledger.core.ids import derived_id, id_text, uuid_of
from ledger.domain.casino import SealedSeed
from ledger.domain.highcard import NO_DEAL, HighCardTable, default_name
from ledger.domain.records import transfers_in
from ledger.domain.wallet import Wallet
from ledger.rules.highcard import starts as starting
from ledger.rules.highcard.actions import Context, HighCardGame, Shuffle, verify_limits
from ledger.rules.highcard.starts import DEFAULT, STARTS
from ledger.rules.variants import VARIANTS
from ledger.store.snapshots import events_after

SeedSource = Callable[[], str]

Do = Callable[[HighCardGame, Context, HighCardTable], None]


class TableEngine:
    """Runs the high-card engine on a table inside one unit of work: loads the table and the
    wallets of its seats, lets the engine act, moves the chips of every transfer between the
    wallets, and answers with the table as the actor may see it."""

    def __init__(self, unit: UnitOfWork, stacked_packs: StackedPacks | None) -> None:
        self.unit = unit
        self.stacked_packs = stacked_packs

    def run(
        self,
        actor: Principal,
        table_id: UUID,
        permission: tuple[Action, Callable[[HighCardTable], Any]] | None,
        do: Do,
        command: CommandKey | None,
        seed_source: SeedSource | None = None,
    ) -> dict[str, Any]:
        def decide() -> Decision:
            table = self.unit.get(table_id, HighCardTable, "table")
            if permission is not None:
                action, owner = permission
                require(actor, action, owner=owner(table))
            wallets = {seat: self.unit.get(uuid_of(info["wallet"]), Wallet, "wallet")
                       for seat, info in table.state.seats.items()}
            sealed: list[SealedSeed] = []
            ctx = Context(
                balances={seat: wallet.balance for seat, wallet in wallets.items()},
                shuffle=self.current_shuffle(table),
                new_shuffle=lambda: self._new_shuffle(table, sealed, seed_source),
            )
            do(table.game(), ctx, table)
            touched = self._move_wallet_chips(table, wallets)
            answer = self.answer(table, actor, ctx, wallets)
            return [table, *sealed, *touched], answer

        return self.unit.execute(command, decide)

    def _move_wallet_chips(self, table: HighCardTable, wallets: dict[int, Wallet]) -> list[Wallet]:
        by_account = {wallet.account: wallet for wallet in wallets.values()}
        touched: dict[str, Wallet] = {}
        for event in table.pending_events:
            for transfer in transfers_in(event):
                source = by_account.get(transfer["source"])
                destination = by_account.get(transfer["destination"])
                if source is not None:
                    source.debit(transfer, rule="G8")
                    touched[source.account] = source
                if destination is not None:
                    destination.credit(transfer)
                    touched[destination.account] = destination
        return list(touched.values())

    def _new_shuffle(
        self, table: HighCardTable, sealed: list[SealedSeed], seed_source: SeedSource | None
    ) -> Shuffle:
        nonce = table.state.nonce + 1
        seed = seed_source() if seed_source is not None else fairness.new_server_seed()
        deal_id = derived_id(table.id, f"deal:{nonce}")
        sealed.append(SealedSeed(deal_id=deal_id, server_seed=seed, table_id=table.id,
                                 table_version=table.version + 1))
        return Shuffle(id_text(deal_id), nonce, fairness.commitment(seed), table.client_seed, seed,
                       self._pack(table.id, seed, table.client_seed, nonce))

    def current_shuffle(self, table: HighCardTable) -> Shuffle | None:
        deal = table.state.deal
        if deal is None:
            return None
        deal_id = uuid_of(deal.id)
        seed = self.unit.get(SealedSeed.create_id(deal_id), SealedSeed, "sealed seed").server_seed
        return Shuffle(id_text(deal_id), deal.nonce, deal.commitment, deal.client_seed, seed,
                       self._pack(table.id, seed, deal.client_seed, deal.nonce))

    def _pack(self, table_id: UUID, seed: str, client_seed: str, nonce: int) -> list[Card]:
        """The provably fair pack of this shuffle, unless the application was given stacked
        packs (scenario tests only, `LedgerBase.__init__`)."""
        stacked = self.stacked_packs(table_id, nonce) if self.stacked_packs is not None else None
        if stacked is None:
            return fairness.shuffled_pack(seed, client_seed, nonce)
        if sorted(stacked) != sorted(CANONICAL_PACK):
            raise ValueError("a stacked pack must hold each of the 52 cards once")
        return list(stacked)

    def answer(self, table: HighCardTable, actor: Principal, ctx: Context,
                      wallets: dict[int, Wallet]) -> dict[str, Any]:
        """The table as the actor may see it now (`wallets`: those of the seats, in hand). A
        seat whose wallet has a sealed bet the actor may not see shows its balance before it,
        and none of its betting limits, which its balance bounds (`ledger.app.sealed`)."""
        viewer = None
        if actor.player_id is not None:
            viewer = next((seat for seat, info in table.state.seats.items()
                           if info["player"] == actor.player_id), None)
        game = table.game()
        legal = game.legal_actions(dict(ctx.balances))
        legal = starting_actions(table, legal)
        pack = ctx.shuffle.pack if ctx.shuffle is not None else None
        sealed = SealedBets(self.unit.repository, {id_text(table.id): table})
        shown, unshown = dict(ctx.balances), set()
        for seat, info in table.state.seats.items():
            wallet = wallets.get(seat) or self.unit.get(uuid_of(info["wallet"]), Wallet, "wallet")
            hidden = sealed.hidden(actor, wallet)
            if hidden:
                shown[seat] = shown_balance(wallet.balance, hidden)
                unshown.add(seat)
        return views.high_card_table_view(
            table, viewer, shown, legal, pack=pack, game=game,
            hide=actor.role.value == "player", unshown=unshown, results=self.results(table),
        )

    def results(self, table: HighCardTable) -> dict[str, Any]:
        """Each settled turn of the table's current or last deal. A table built from a snapshot
        or a copy does not know them (they are not its state): its deal is replayed from the
        state before the deal's commitment, its events stored and those of this command."""
        known = table.deal_results
        if known is None:
            known = self._replayed_results(table)
            table.keep_results(known)
        return known

    def _replayed_results(self, table: HighCardTable) -> dict[str, Any]:
        pending = list(table.pending_events)
        if table.state.nonce == 0:
            return NO_DEAL
        deal_id = derived_id(table.id, f"deal:{table.state.nonce}")
        try:
            start = self.unit.get(SealedSeed.create_id(deal_id), SealedSeed,
                                  "sealed seed").table_version
        except NotFound:  # the latest shuffle is this command's: a draw for the first dealer
            return NO_DEAL
        assert start is not None  # a table's shuffle
        saved = table.version - len(pending)
        before = copy.deepcopy(self.unit.repository.get(table.id, version=start - 1))
        for event in [*events_after(self.unit.ledger, table.id, start - 1, lte=saved), *pending]:
            before = event.mutate(before)
        return before.deal_results or NO_DEAL


class TableService:
    """High-card tables: open, seat and unseat players, set the client seed, split the pot,
    close, read."""

    def __init__(self, unit: UnitOfWork, engine: TableEngine) -> None:
        self.unit = unit
        self.engine = engine

    def open_table(
        self,
        actor: Principal,
        variant: str,
        limits: dict[str, int] | None = None,
        client_seed: str | None = None,
        accepts_supplied_seeds: bool = False,
        command: CommandKey | None = None,
        table_id: UUID | None = None,
        name: str | None = None,
        starts: str | None = None,
    ) -> dict[str, Any]:
        """Open a table of a high-card variant, its limits checked (G9 and the variant's own),
        with its name (or one drawn from its id) and who starts its deals (G11)."""
        require(actor, Action.OPEN_TABLE)
        if variant not in VARIANTS:
            raise InvalidInput(f"variant must be casino or one of {sorted(VARIANTS)}",
                               field="variant")
        checked = verify_limits(VARIANTS[variant], limits or {})
        given = validation.check_table_name(name) if name is not None else None
        who = validation.check_choice(starts, STARTS, "starts") if starts is not None else DEFAULT

        def build(seed: str, new_id: UUID) -> Decision:
            table = HighCardTable(id=new_id, variant=variant, limits=checked, client_seed=seed,
                                  accepts_supplied_seeds=accepts_supplied_seeds,
                                  name=given or default_name(new_id), starts=who)
            return [table], self.engine.answer(table, actor, Context(), {})

        return newtable.open_table(self.unit, client_seed, table_id, command, build)

    def seat_player(
        self, actor: Principal, table_id: UUID, seat: int, wallet_id: UUID,
        command: CommandKey | None = None,
    ) -> dict[str, Any]:
        """Seat a wallet's player between deals (G5, G9)."""
        wallet = self.unit.get(wallet_id, Wallet, "wallet")
        require(actor, Action.SEAT, owner=wallet.player_id)
        def take_seat(game: HighCardGame, ctx: Context, table: HighCardTable) -> None:
            game.seat(seat, id_text(wallet.id), wallet.player_id)
            ctx.balances[seat] = wallet.balance

        return self.engine.run(actor, table_id, None, take_seat, command)

    def unseat_player(
        self, actor: Principal, table_id: UUID, seat: int, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """Free a seat between deals (G5)."""
        return self.engine.run(actor, table_id, (Action.SEAT, seat_owner(seat)),
                              lambda g, ctx, t: g.unseat(seat), command)

    def change_table_client_seed(
        self, actor: Principal, table_id: UUID, client_seed: str,
        command: CommandKey | None = None,
    ) -> dict[str, Any]:
        """Set the client seed of the next shuffle, between deals (fairness.md)."""
        client_seed = fairness.check_client_seed(client_seed)

        def change(game: HighCardGame, ctx: Context, table: HighCardTable) -> None:
            if table.state.deal is not None:
                raise RuleViolation("G2", "the client seed changes only between deals",
                                    field="client_seed")
            table.change_client_seed(client_seed)

        # At a multi-seat table the seed is shared by everyone, so only an operator sets it.
        return self.engine.run(actor, table_id, (Action.CHANGE_CLIENT_SEED, nobody),
                              change, command)

    def split_pot(
        self, actor: Principal, table_id: UUID, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """Split the pot equally among the seated players (H10)."""
        return self.engine.run(actor, table_id, (Action.MANAGE_TABLE, nobody),
                              lambda g, ctx, t: g.split_pot(ctx), command)

    def close_table(
        self, actor: Principal, table_id: UUID, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """Close the table, paying out the pot (H10)."""
        return self.engine.run(actor, table_id, (Action.MANAGE_TABLE, nobody),
                              lambda g, ctx, t: g.close(ctx), command)

    def high_card_table(self, actor: Principal, table: HighCardTable) -> dict[str, Any]:
        """A table as the caller may see it: a player sees their own hand only when allowed."""
        require(actor, Action.READ_TABLE, owner=seated_players(table))
        wallets = {seat: self.unit.get(uuid_of(info["wallet"]), Wallet, "wallet")
                   for seat, info in table.state.seats.items()}
        balances = {seat: wallet.balance for seat, wallet in wallets.items()}
        return self.engine.answer(
            table, actor, Context(balances=balances, shuffle=self.engine.current_shuffle(table)),
            wallets)


class PlayService:
    """Play at a high-card table: fund or decline the bank, start a deal, bet, buy a centre
    card, pass, the dealer's choice."""

    def __init__(self, engine: TableEngine) -> None:
        self.engine = engine

    def fund_bank(
        self, actor: Principal, table_id: UUID, amount: int, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """The dealer or banker stakes the pot or bank (S1, P1, XB1, H11)."""
        return self.engine.run(actor, table_id, (Action.PLAY, dealer_owner),
                              lambda g, ctx, t: g.fund(dealer_seat(t), amount, ctx), command)

    def decline_bank(
        self, actor: Principal, table_id: UUID, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """The dealer declines to stake the pot: the deal and bank pass left."""
        return self.engine.run(actor, table_id, (Action.PLAY, dealer_owner),
                              lambda g, ctx, t: g.decline(dealer_seat(t), ctx), command)

    def start_deal(
        self,
        actor: Principal,
        table_id: UUID,
        server_seed: str | None = None,
        seed_source: SeedSource | None = None,
        command: CommandKey | None = None,
    ) -> dict[str, Any]:
        """Start the next deal: first dealer (G7), antes, a fresh shuffle, hands, target."""
        supplied = server_seed is not None or seed_source is not None
        if supplied:
            require(actor, Action.SUPPLY_SEED)
        unused: list[str] = []  # the supplied seed, until this attempt's first shuffle takes it
        if server_seed is not None:
            fairness.check_server_seed(server_seed)
            seed_source = lambda: unused.pop() if unused else fairness.new_server_seed()

        def start(game: HighCardGame, ctx: Context, table: HighCardTable) -> None:
            if actor.player_id is not None:  # a player: whom the table's option lets start (G11)
                try:
                    starting.verify_starter(table.who_starts, table.state, actor.player_id)
                except RuleViolation as refusal:  # not this player's to do: 403, naming G11
                    raise Forbidden(refusal.detail, rule=refusal.rule) from None
            if supplied and not table.accepts_supplied_seeds:
                raise RuleViolation("G2", "this table draws its own server seeds",
                                    field="server_seed")
            if server_seed is not None:  # every attempt, a retry after a lost race included
                unused[:] = [server_seed]
            game.start(ctx)

        return self.engine.run(actor, table_id, (Action.PLAY, seated_players), start, command,
                              seed_source=seed_source)

    def say_ready(
        self, actor: Principal, table_id: UUID, seat: int, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """A seated player says they are ready for the next deal (G11, `starts` ready); the
        last of the seated players to say so starts it in the same command, when it may."""

        def ready(game: HighCardGame, ctx: Context, table: HighCardTable) -> None:
            starting.verify_ready(table.who_starts, table.state, table.ready_seats, seat)
            table.say_ready(seat)
            if starting.everyone_ready(table.state, table.ready_seats) and game.start.can(ctx):
                game.start(ctx)

        return self.engine.run(actor, table_id, (Action.PLAY, seat_owner(seat)), ready, command)

    def bet(
        self, actor: Principal, table_id: UUID, seat: int, amount: int,
        command: CommandKey | None = None,
    ) -> dict[str, Any]:
        """Bet (or cover the bank, XB3) for a seat."""
        return self.engine.run(actor, table_id, (Action.PLAY, seat_owner(seat)),
                              lambda g, ctx, t: g.bet(seat, amount, ctx), command)

    def buy_centre_card(
        self, actor: Principal, table_id: UUID, seat: int, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """Buy a new centre card for a fifth of the pot (FW2)."""
        return self.engine.run(actor, table_id, (Action.PLAY, seat_owner(seat)),
                              lambda g, ctx, t: g.buy(seat, ctx), command)

    def pass_turn(
        self, actor: Principal, table_id: UUID, seat: int, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """Pass without betting (FW3, XB3)."""
        return self.engine.run(actor, table_id, (Action.PLAY, seat_owner(seat)),
                              lambda g, ctx, t: g.pass_turn(seat, ctx), command)

    def dealer_choice(
        self, actor: Principal, table_id: UUID, choice: str, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """After three deals: pass now, or deal a fourth time (S6)."""
        return self.engine.run(actor, table_id, (Action.PLAY, dealer_owner),
                              lambda g, ctx, t: g.choose(dealer_seat(t), choice, ctx), command)


def starting_actions(table: HighCardTable, legal: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The legal actions with the start of the next deal offered to whom the table's option
    lets start it (G11): `deal` once for each such seat (or with no seat: an operator's), and
    `ready` for each seat that may still say it is ready."""
    if not any(action["action"] == "deal" for action in legal):
        offered = []
    else:
        players = starting.starters(table.who_starts, table.state)
        seats = [seat for seat, info in sorted(table.state.seats.items())
                 if info["player"] in players]
        offered = [{"action": "deal", "seat": seat, "starts": table.who_starts}
                   for seat in seats] or [{"action": "deal", "seat": None,
                                           "starts": table.who_starts}]
    ready = table.ready_seats
    starts = table.who_starts
    # A table whose players do not say they are ready offers no `ready` (`verify_ready`'s
    # first refusal): its seats are not asked one by one.
    for seat in sorted(table.state.seats) if starts == "ready" else ():
        if starting.can_ready(starts, table.state, ready, seat):
            offered.append({"action": "ready", "seat": seat,
                            "waiting_for": [s for s in sorted(table.state.seats)
                                            if s not in ready and s != seat]})
    others = [action for action in legal if action["action"] != "deal"]
    return offered + others


def seat_owner(seat: int) -> Callable[[HighCardTable], str | None]:
    def owner(table: HighCardTable) -> str | None:
        info = table.state.seats.get(seat)
        return info["player"] if info else None

    return owner


def dealer_owner(table: HighCardTable) -> str | None:
    dealer = table.state.dealer
    if dealer is None or dealer not in table.state.seats:
        return None
    return table.state.seats[dealer]["player"]


def dealer_seat(table: HighCardTable) -> int:
    """The dealer's seat, or 0 (no seat) before a first dealer is chosen: the engine then
    refuses what only the dealer may do."""
    return table.state.dealer if table.state.dealer is not None else 0


def nobody(table: HighCardTable) -> None:
    return None


def seated_players(table: HighCardTable) -> frozenset[str]:
    return frozenset(info["player"] for info in table.state.seats.values())
