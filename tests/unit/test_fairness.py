"""The provably fair shuffle against the test vectors of fairness.md (G1, G2)."""

import hashlib
import hmac
import struct

import pytest

from ledger.core import fairness
from ledger.core.cards import Card, canonical_pack, format_cards
from ledger.core.errors import InvalidInput
from ledger.core.fairness import (
    PackStep,
    commitment,
    shuffled_notation,
    shuffled_pack,
    verify_deal,
)

VECTOR_1 = (
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
    "table-1",
    1,
    "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd",
    ("7d 8c 2d Qh 5h 9s 6h Ts Ad 6s 8s 9c Jd Qd 6d As 4d 3c 7s 3s 9d 5d Ks 7h Qc 8h 2s Ah "
    "Td 9h 5c Jh 3d 5s 3h Ac Jc Qs 4s Kh 6c Kd 4c Tc Js 7c Kc 2c 4h 8d Th 2h"),
)
VECTOR_2 = (
    "ab" * 32,
    "lobby",
    7,
    "9a2db2e23f1504cd056606553ac049c5e718e8f9ce9233876df1a7a1821af885",
    ("Jc 7c 4s 3c Ad 5d 5c 2c 6c 9s Ac 4c 8c 9c Qd 3h 4h 6d 3d Kc 9d 3s Qh 2s Jh 6h 9h 5h "
    "Td 8h 2d Js Qs Th Ks 7s As 7h 5s Kd Tc Ts Jd 8d Kh 6s 8s 2h Qc Ah 4d 7d"),
)


@pytest.mark.parametrize("vector", [VECTOR_1, VECTOR_2], ids=["table-1", "lobby"])
def test_G2_shuffle_matches_the_published_test_vector(vector):
    server_seed, client_seed, nonce, expected_commitment, expected_pack = vector
    assert commitment(server_seed) == expected_commitment
    assert format_cards(shuffled_pack(server_seed, client_seed, nonce)) == expected_pack


@pytest.mark.parametrize("vector", [VECTOR_1, VECTOR_2], ids=["table-1", "lobby"])
def test_G2_the_pack_in_notation_is_the_shuffled_pack_written_card_by_card(vector):
    server_seed, client_seed, nonce, _commitment, expected_pack = vector
    assert " ".join(shuffled_notation(server_seed, client_seed, nonce)) == expected_pack
    for nonce in range(1, 40):  # each asked for before and after its pack is remembered
        named = shuffled_notation(server_seed, f"c{nonce}", nonce)
        assert named == [str(card) for card in shuffled_pack(server_seed, f"c{nonce}", nonce)]
        assert named == shuffled_notation(server_seed, f"c{nonce}", nonce)
    with pytest.raises(InvalidInput):
        shuffled_notation(server_seed, client_seed, 0)


def test_G1_canonical_pack_runs_clubs_to_spades_two_to_ace():
    pack = canonical_pack()
    assert len(set(pack)) == 52
    assert [str(pack[i]) for i in (0, 12, 13, 51)] == ["2c", "Ac", "2d", "As"]
    assert all(card.index == i for i, card in enumerate(pack))


def test_G1_cards_read_and_write_rank_then_suit():
    assert str(Card.parse("Td")) == "Td"
    assert Card.parse("As").rank > Card.parse("Ks").rank
    for bad in ["", "1c", "Ax", "10h", None, "Asd"]:
        with pytest.raises(ValueError):
            Card.parse(bad)


def test_G2_a_different_nonce_or_client_seed_gives_a_different_pack():
    seed = VECTOR_1[0]
    base = shuffled_pack(seed, "table-1", 1)
    assert shuffled_pack(seed, "table-1", 2) != base
    assert shuffled_pack(seed, "table-2", 1) != base
    assert sorted(base) == sorted(canonical_pack())


@pytest.mark.parametrize("client_seed", ["", "x" * 65, "has space", "é"])
def test_G2_client_seed_outside_the_alphabet_is_refused(client_seed):
    with pytest.raises(InvalidInput):
        shuffled_pack(VECTOR_1[0], client_seed, 1)


def test_G2_verification_accepts_the_true_pack_and_names_a_swapped_card():
    seed, client_seed, nonce, committed, pack_text = VECTOR_1
    pack = pack_text.split()
    steps = [PackStep("take", i, pack[i], i + 2) for i in range(3)]
    report = verify_deal(
        server_seed=seed, commitment_hex=committed, client_seed=client_seed, nonce=nonce,
        commitment_version=1, steps=steps,
    )
    assert report.fair and report.pack == pack
    rigged = [steps[0], PackStep("take", 1, pack[5], 3), steps[2]]
    report = verify_deal(
        server_seed=seed, commitment_hex=committed, client_seed=client_seed, nonce=nonce,
        commitment_version=1, steps=rigged,
    )
    assert not report.fair
    assert any("position 1" in failure for failure in report.failures())


def test_G2_verification_refuses_a_seed_that_does_not_match_the_commitment():
    seed, client_seed, nonce, _committed, _pack = VECTOR_1
    report = verify_deal(
        server_seed=seed, commitment_hex=VECTOR_2[3], client_seed=client_seed, nonce=nonce,
        commitment_version=1, steps=[],
    )
    assert not report.fair


def test_G2_a_card_drawn_before_the_commitment_fails_verification():
    seed, client_seed, nonce, committed, pack_text = VECTOR_1
    first = pack_text.split()[0]
    report = verify_deal(
        server_seed=seed, commitment_hex=committed, client_seed=client_seed, nonce=nonce,
        commitment_version=3, steps=[PackStep("take", 0, first, 2)],
    )
    assert not report.fair


def test_G3_burned_cards_go_to_the_bottom_and_a_skipped_card_is_caught():
    seed, client_seed, nonce, committed, pack_text = VECTOR_1
    pack = pack_text.split()
    # Deal 51 cards, burn the top one to the bottom, then take it again last.
    steps = [PackStep("burn", 0, pack[0], 2)] + [
        PackStep("take", i, None, 3 + i) for i in range(1, 52)
    ] + [PackStep("take", 0, pack[0], 60), PackStep("show", 7, pack[7], 61)]
    kwargs = {"server_seed": seed, "commitment_hex": committed, "client_seed": client_seed,
                  "nonce": nonce, "commitment_version": 1}
    assert verify_deal(steps=steps, **kwargs).fair
    skipped = [PackStep("take", 1, pack[1], 2)]
    report = verify_deal(steps=skipped, **kwargs)
    assert not report.fair and "top of the pack is 0" in report.failures()[0]


def stream_shuffle(server_seed, client_seed, nonce, draws):
    """docs/fairness.md's shuffle written plainly over `random_stream` (the reference)."""
    order = list(range(52))
    stream = fairness.random_stream(server_seed, client_seed, nonce)
    for i, limit in draws:
        r = next(stream)
        while r >= limit:  # drawn again
            r = next(stream)
        j = r % (i + 1)
        order[i], order[j] = order[j], order[i]
    return [str(canonical_pack()[k]) for k in order]


def test_G2_the_shuffle_is_the_stream_shuffle_for_many_seeds():
    for n in range(1, 300):
        server_seed = hashlib.sha256(f"seed {n}".encode()).hexdigest()
        assert shuffled_notation(server_seed, "many", n) == stream_shuffle(
            server_seed, "many", n, fairness._DRAWS)


def test_G2_a_word_drawn_again_takes_the_next_words_of_the_stream(monkeypatch):
    # Real draws redraw a word about once in 2**32 / 51 shuffles: halving the bounds makes
    # about half the words drawn again, past the blocks computed first.
    halved = tuple((i, 2**31) for i, _limit in fairness._DRAWS)
    monkeypatch.setattr(fairness, "_DRAWS", halved)
    monkeypatch.setattr(fairness, "_LOWEST_LIMIT", 2**31)
    fairness._shuffled.cache_clear()
    try:
        for n in range(1, 40):
            server_seed = hashlib.sha256(f"redraw {n}".encode()).hexdigest()
            assert shuffled_notation(server_seed, "again", n) == stream_shuffle(
                server_seed, "again", n, halved)
    finally:
        fairness._shuffled.cache_clear()


@pytest.mark.parametrize("key_size", [0, 32, 64, 65, 100])
def test_G2_the_shuffles_blocks_are_hmac_sha256(key_size):
    key = bytes(range(key_size))
    blocks = fairness._Blocks(key, "c:3:")
    words = blocks.words(2) + blocks.words(1)
    expected = b"".join(hmac.digest(key, f"c:3:{counter}".encode(), "sha256")
                        for counter in range(3))
    assert words == struct.unpack(">24I", expected)


def test_G2_G3_a_verifier_asking_only_for_failures_gets_the_same_failures_and_no_passed_check():
    seed, client_seed, nonce, committed, pack_text = VECTOR_1
    pack = pack_text.split()
    kwargs = {"server_seed": seed, "commitment_hex": committed, "client_seed": client_seed,
              "nonce": nonce, "commitment_version": 2}
    honest = [PackStep("burn", 0, pack[0], 3), PackStep("take", 1, pack[1], 4),
              PackStep("return", version=5, positions=(1,)), PackStep("show", 1, pack[1], 6)]
    rigged = [PackStep("take", 0, pack[3], 3), PackStep("take", 2, pack[2], 1),
              PackStep("show", 60, "AS", 5)]
    for steps in (honest, rigged, []):
        told = verify_deal(steps=steps, **kwargs)
        failed = verify_deal(steps=steps, explain=False, **kwargs)
        assert failed.fair == told.fair and failed.pack == told.pack
        assert failed.checks == [check for check in told.checks if not check["ok"]]
        assert failed.failures() == told.failures()
    assert verify_deal(steps=honest, **kwargs).fair
    assert len(verify_deal(steps=rigged, **kwargs).failures()) == 4
    bad_seed = verify_deal(steps=rigged, explain=False, **{**kwargs, "server_seed": "zz"})
    assert not bad_seed.fair and bad_seed.pack == []
    assert [check["check"] for check in bad_seed.checks][:2] == ["commitment", "pack"]
