"""The high-card test client (`tests/integration/highcard_client.py`) checks itself, and the
application's stacked-pack seam does only what it says."""

from __future__ import annotations

from uuid import UUID

import pytest

from ledger.app.access import SYSTEM
from ledger.core.cards import CANONICAL_PACK
from ledger.core.fairness import shuffled_pack
from ledger.rules.variants import VARIANTS
from tests.integration.highcard_client import Table, round_robin, stack


def test_client_stacked_pack_is_a_whole_pack_with_the_given_cards_on_top():
    pack = stack("As 7h", round_robin([2, 3], {2: "2c 3c", 3: "4c 5c"}))
    # Check the top cards come in the order given, dealing round the seats one at a time
    assert [str(card) for card in pack[:6]] == ["As", "7h", "2c", "4c", "3c", "5c"]
    assert sorted(pack) == sorted(CANONICAL_PACK)
    with pytest.raises(AssertionError):
        stack("As As")


def test_client_unstacked_shuffles_follow_the_table_nonce_and_check_fair():
    table = Table("high_card_pool", seats=[1, 2, 3])
    table.start()
    draw, deal = table.events("Committed")
    # Check the first-dealer draw, then the deal, each a fresh shuffle with the next nonce
    assert (draw["purpose"], draw["nonce"]) == ("first_dealer", 1)
    assert (deal["purpose"], deal["nonce"]) == ("deal", 2)
    # Check an unstacked shuffle deals exactly the provably fair pack of its sealed seed
    check = table.app.deals.check_fairness(SYSTEM, UUID(draw["deal_id"]))
    assert check["fair"] is True, check["checks"]
    pack = shuffled_pack(check["server_seed"], draw["client_seed"], draw["nonce"])
    face_up = [d["card"] for d in table.events("CardDealt") if d["face_up"]]
    assert face_up == [str(card) for card in pack[:len(face_up)]]


def test_client_a_stacked_deal_keeps_its_real_commitment_but_fails_the_fairness_check():
    table = Table("high_card_pool", seats=[1, 2, 3])
    table.packs.append(stack("2c 3c Ac"))
    table.start()
    draw = table.events("Committed")[0]
    # Check the stacked draw was dealt (seat 3 got the ace), its seed sealed and revealed
    assert [d["card"] for d in table.events("CardDealt")[:3]] == ["2c", "3c", "Ac"]
    assert table.state.dealer == 3
    check = table.app.deals.check_fairness(SYSTEM, UUID(draw["deal_id"]))
    # Check the seed matches the commitment, but its shuffle is not the pack that was dealt
    assert check["fair"] is False


def test_client_a_stacked_pack_must_hold_every_card_once():
    table = Table("high_card_pool", seats=[1, 2, 3])
    table.packs.append(stack()[:51] + stack()[:1])
    # Check the application refuses to deal from a pack that is not a whole pack
    with pytest.raises(ValueError, match="52 cards"):
        table.start()
    assert table.events("Committed") == []


def test_client_checks_conservation_on_the_applications_own_wallets():
    table = Table("high_card_pool", seats=[1, 2, 3])
    # Check chips that reach a wallet behind the client's back break its G10 check
    table.app.wallets.grant(SYSTEM, UUID(table.wallets[1]), 5)
    with pytest.raises(AssertionError):
        table.check()


def test_client_every_variant_opens_with_its_defaults():
    for name, variant in VARIANTS.items():
        table = Table(name, seats=list(range(1, variant.min_players + 1)))
        # Check a fresh table waits for its first deal
        assert table.state.dealer is None and table.state.pot == 0
        assert table.balances == dict.fromkeys(range(1, variant.min_players + 1), 1000)
