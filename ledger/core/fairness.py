"""The provably fair shuffle of docs/fairness.md, exactly, and its verification (G2)."""

from __future__ import annotations

import functools
import hashlib
import hmac
import operator
import secrets
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

from ledger.core.cards import CANONICAL_PACK, Card
from ledger.core.errors import InvalidInput
from ledger.core.keyedhash import KeyedSha256
from ledger.core.validation import CLIENT_SEED, SERVER_SEED

_TWO_32 = 2**32
#: The notation of each card of the canonical pack, in pack order.
_CARD_NAMES = tuple(str(card) for card in CANONICAL_PACK)


def new_server_seed() -> str:
    """Return 32 random bytes from `secrets` as 64 lowercase hex characters."""
    return secrets.token_bytes(32).hex()


def check_server_seed(server_seed: str) -> str:
    """Return the seed if it is 64 lowercase hex characters; raise InvalidInput otherwise."""
    return SERVER_SEED.check(server_seed)


def check_client_seed(client_seed: str) -> str:
    """Return the client seed if it is 1-64 characters of A-Z a-z 0-9 _ -."""
    return CLIENT_SEED.check(client_seed)


def table_client_seed(client_seed: str | None) -> str:
    """The client seed a table opens with: the one given, checked, or else 16 random hex
    characters from `secrets`."""
    return check_client_seed(client_seed or secrets.token_hex(8))


def commitment(server_seed: str) -> str:
    """Return SHA-256 of the 32 seed bytes as 64 lowercase hex characters."""
    return hashlib.sha256(bytes.fromhex(check_server_seed(server_seed))).hexdigest()


#: A block of HMAC-SHA256 as eight big-endian unsigned 32-bit integers.
_WORDS = struct.Struct(">8I")


def random_stream(server_seed: str, client_seed: str, nonce: int) -> Iterator[int]:
    """Yield the unsigned 32-bit integers of HMAC-SHA256 blocks, counter 0, 1, 2, ..."""
    key = bytes.fromhex(server_seed)
    prefix = f"{client_seed}:{nonce}:"
    counter = 0
    while True:
        # The one-shot `hmac.digest`: the same bytes as `hmac.new(...).digest()`, without
        # building an HMAC object for each block (a shuffle takes about seven blocks).
        block = hmac.digest(key, f"{prefix}{counter}".encode("ascii"), "sha256")
        yield from _WORDS.unpack(block)
        counter += 1


def shuffled_pack(server_seed: str, client_seed: str, nonce: int) -> list[Card]:
    """Return the pack for (seed, client seed, nonce), top card first."""
    return list(_shuffled(*_shuffle_inputs(server_seed, client_seed, nonce))[0])


def shuffled_notation(server_seed: str, client_seed: str, nonce: int) -> list[str]:
    """`shuffled_pack` as each card's notation (`str(card)`), without writing every card: a
    verifier checks every deal's pack."""
    return list(_shuffled(*_shuffle_inputs(server_seed, client_seed, nonce))[1])


def _shuffle_inputs(server_seed: str, client_seed: str, nonce: int) -> tuple[str, str, int]:
    """The inputs of a shuffle, checked: InvalidInput for any that is not allowed."""
    check_server_seed(server_seed)
    check_client_seed(client_seed)
    if not isinstance(nonce, int) or isinstance(nonce, bool) or nonce < 1:
        raise InvalidInput("nonce must be a whole number from 1", field="nonce")
    return server_seed, client_seed, nonce


#: The Fisher-Yates draws of a shuffle of the pack: each place i from its last down to 1, with
#: the bound a 32-bit word must be under for `word % (i + 1)` to be unbiased (words at or above
#: it are drawn again).
_DRAWS = tuple((i, _TWO_32 - (_TWO_32 % (i + 1))) for i in range(len(CANONICAL_PACK) - 1, 0, -1))


@functools.lru_cache(maxsize=1024)
def _shuffled(server_seed: str, client_seed: str, nonce: int) -> tuple[tuple[Card, ...],
                                                                       tuple[str, ...]]:
    """The shuffle itself, as the cards and as their notation, remembered for the deals in
    play: a deal's every command needs its pack, and a table's deal lasts many commands. The
    places of the canonical pack are shuffled, so each card's notation is looked up, not
    written again."""
    # `random_stream`'s words, its first blocks computed together: the 51 draws take seven
    # blocks unless a word is drawn again (at most 51 in 2**32 each), and then more follow.
    blocks = _Blocks(bytes.fromhex(server_seed), f"{client_seed}:{nonce}:")
    words = blocks.words(_FIRST_BLOCKS)
    order = list(range(len(CANONICAL_PACK)))
    if max(words[:len(_DRAWS)]) < _LOWEST_LIMIT:  # no word is drawn again: one word a place
        for (i, places), r in zip(_PLACES, words, strict=False):
            j = r % places
            order[i], order[j] = order[j], order[i]
    else:
        at = 0
        for i, limit in _DRAWS:
            while True:
                if at == len(words):
                    words += blocks.words(1)
                r = words[at]
                at += 1
                if r < limit:
                    break
            j = r % (i + 1)
            order[i], order[j] = order[j], order[i]
    place = operator.itemgetter(*order)
    return place(CANONICAL_PACK), place(_CARD_NAMES)


#: Each place of the draws with the count of places it draws from (`i + 1`), worked out once.
_PLACES = tuple((i, i + 1) for i, _limit in _DRAWS)
#: The blocks a shuffle computes at once: 56 words for its 51 draws.
_FIRST_BLOCKS = 7
#: Under this bound, a word is never drawn again at any place.
_LOWEST_LIMIT = min(limit for _i, limit in _DRAWS)
class _Blocks:
    """HMAC-SHA256 (RFC 2104) of `prefix + counter` under one key, for counters 0, 1, 2, ... in
    turn: the same bytes as `hmac.digest` (`random_stream`), with the key's inner and outer
    padded hashes taken once for all the blocks of a shuffle rather than once a block."""

    def __init__(self, key: bytes, prefix: str) -> None:
        self.mac = KeyedSha256(key)
        self.prefix = prefix
        self.counter = 0

    def words(self, blocks: int) -> tuple[int, ...]:
        """The unsigned 32-bit big-endian words of the next `blocks` blocks."""
        prefix = self.prefix
        digests = self.mac.digests([f"{prefix}{counter}".encode("ascii")
                                    for counter in range(self.counter, self.counter + blocks)])
        self.counter += blocks
        return struct.unpack(f">{8 * blocks}I", digests)


class PackStep(NamedTuple):
    """One thing the log says happened to the pack, in order (G3).

    `kind` is `take` (the top card leaves the pack: dealt, turned or discarded), `burn` (the top
    card is shown, then put at the bottom), `return` (cards put at the bottom, `positions`) or
    `show` (a card already dealt is shown face up). `position` is the card's place in the
    shuffled pack (0 = top); `card` is what the log says it is, when the log shows it. (A named
    tuple: a verifier makes a few for every deal of the log.)
    """

    kind: str
    position: int = -1
    card: str | None = None
    version: int = 0
    positions: tuple[int, ...] = ()


@dataclass(frozen=True)
class FairnessReport:
    """The outcome of checking one finished deal against its commitment: every check, or where
    only the failures were asked for (`verify_deal(explain=False)`), the checks that failed."""

    fair: bool
    checks: list[dict[str, object]]
    pack: list[str]

    def failures(self) -> list[str]:
        return [str(check["detail"]) for check in self.checks if not check["ok"]]


#: Each check of `verify_deal` in words, from what it compared: (its name, its detail).
_WORDS_OF: dict[str, Callable[..., tuple[str, str]]] = {
    "commitment": lambda recomputed, committed: (
        "commitment", f"SHA-256(seed) = {recomputed}; committed {committed}"),
    "pack": lambda detail: ("pack", detail),
    "top": lambda position, top: (
        f"card {position} from the top",
        f"the log takes position {position}; the top of the pack is {top}"),
    "card": lambda position, expected, card: (
        f"card {position}", f"pack position {position} is {expected}; log shows {card}"),
    "after": lambda position, version, committed: (
        f"card {position} after commitment",
        f"card event version {version}, commitment version {committed}"),
}


def verify_deal(
    *,
    server_seed: str,
    commitment_hex: str,
    client_seed: str,
    nonce: int,
    commitment_version: int,
    steps: list[PackStep],
    explain: bool = True,
) -> FairnessReport:
    """Check a finished deal: the seed matches the commitment, and replaying the pack steps on the
    recomputed pack gives every card the log shows, from the right place, after the commitment.
    `explain=False` (a verifier of the whole log, which reports only what fails): the report's
    checks are those that failed, the same checks made the same way, and only they are put in
    words."""
    # What each check compared, kept only where it is to be put in words: every check when
    # explaining; else those that failed (a verifier of the whole log checks every deal, and
    # almost every check passes). Either way the deal is fair when every check kept passed.
    made: list[tuple[str, bool, tuple[object, ...]]] = []
    try:
        recomputed = commitment(server_seed)
    except InvalidInput as error:
        recomputed = f"invalid seed ({error.detail})"
    if not (ok := recomputed == commitment_hex) or explain:
        made.append(("commitment", ok, (recomputed, commitment_hex)))
    try:
        pack = shuffled_notation(server_seed, client_seed, nonce)
    except InvalidInput as error:
        pack = []
        made.append(("pack", False, (error.detail,)))
    remaining = list(range(52))
    for kind, position, card, version, positions in steps:
        if kind == "take" or kind == "burn":
            top = remaining.pop(0) if remaining else None
            if not (ok := position == top) or explain:
                made.append(("top", ok, (position, top)))
            if kind == "burn" and top is not None:
                remaining.append(top)
        elif kind == "return":
            remaining.extend(positions)
            continue
        if card is not None:
            expected = pack[position] if 0 <= position < len(pack) else None
            if not (ok := expected == card) or explain:
                made.append(("card", ok, (position, expected, card)))
        if not (ok := version > commitment_version) or explain:
            made.append(("after", ok, (position, version, commitment_version)))
    checks: list[dict[str, object]] = []
    for kind, ok, compared in made:
        name, detail = _WORDS_OF[kind](*compared)
        checks.append({"check": name, "ok": ok, "detail": detail})
    return FairnessReport(fair=all(ok for _kind, ok, _compared in made), checks=checks,
                          pack=pack)
