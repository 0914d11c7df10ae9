"""The provably fair shuffle of docs/fairness.md, exactly, and its verification (G2)."""

from __future__ import annotations

import functools
import hashlib
import hmac
import operator
import secrets
import struct
from collections.abc import Iterator
from dataclasses import dataclass

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
        for (i, _limit), r in zip(_DRAWS, words, strict=False):
            j = r % (i + 1)
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


@dataclass(frozen=True)
class PackStep:
    """One thing the log says happened to the pack, in order (G3).

    `kind` is `take` (the top card leaves the pack: dealt, turned or discarded), `burn` (the top
    card is shown, then put at the bottom), `return` (cards put at the bottom, `positions`) or
    `show` (a card already dealt is shown face up). `position` is the card's place in the
    shuffled pack (0 = top); `card` is what the log says it is, when the log shows it.
    """

    kind: str
    position: int = -1
    card: str | None = None
    version: int = 0
    positions: tuple[int, ...] = ()


@dataclass(frozen=True)
class FairnessReport:
    """The outcome of checking one finished deal against its commitment."""

    fair: bool
    checks: list[dict[str, object]]
    pack: list[str]

    def failures(self) -> list[str]:
        return [str(check["detail"]) for check in self.checks if not check["ok"]]


def verify_deal(
    *,
    server_seed: str,
    commitment_hex: str,
    client_seed: str,
    nonce: int,
    commitment_version: int,
    steps: list[PackStep],
) -> FairnessReport:
    """Check a finished deal: the seed matches the commitment, and replaying the pack steps on the
    recomputed pack gives every card the log shows, from the right place, after the commitment."""
    checks: list[dict[str, object]] = []
    try:
        recomputed = commitment(server_seed)
    except InvalidInput as error:
        recomputed = f"invalid seed ({error.detail})"
    checks.append({
        "check": "commitment",
        "ok": recomputed == commitment_hex,
        "detail": f"SHA-256(seed) = {recomputed}; committed {commitment_hex}",
    })
    try:
        pack = shuffled_notation(server_seed, client_seed, nonce)
    except InvalidInput as error:
        pack = []
        checks.append({"check": "pack", "ok": False, "detail": error.detail})
    remaining = list(range(52))
    for step in steps:
        if step.kind in ("take", "burn"):
            top = remaining.pop(0) if remaining else None
            checks.append({
                "check": f"card {step.position} from the top",
                "ok": step.position == top,
                "detail": f"the log takes position {step.position}; the top of the pack is {top}",
            })
            if step.kind == "burn" and top is not None:
                remaining.append(top)
        if step.kind == "return":
            remaining.extend(step.positions)
            continue
        if step.card is not None:
            expected = pack[step.position] if 0 <= step.position < len(pack) else None
            checks.append({
                "check": f"card {step.position}",
                "ok": expected == step.card,
                "detail": f"pack position {step.position} is {expected}; log shows {step.card}",
            })
        checks.append({
            "check": f"card {step.position} after commitment",
            "ok": step.version > commitment_version,
            "detail": f"card event version {step.version}, commitment version "
                      f"{commitment_version}",
        })
    return FairnessReport(fair=all(check["ok"] for check in checks), checks=checks, pack=pack)
