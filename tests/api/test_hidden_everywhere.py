"""G2, H3, S2, SS2, P3, X4: hidden information reaches nobody, through any channel, mid-deal.

A crawler asks every GET operation of the OpenAPI document (with every id the world has and
every query parameter the document names), `/metrics`, the pages, and a refused command of
every kind, as every role and with no key, mid-deal at a table of every variant; it keeps the
status, every header and the body of each answer, and every line of the access log.

Hidden cards and sealed bets are found by difference (`tests/api/hidden_worlds.py`): each world
is built twice, the two builds the same in all that the viewer may see and different in what
it may not (the cards in the pack and in hands it may not look at; other players' sealed bets).
Everything the viewer gets must be the same, byte for byte, from both: a hidden card or amount
that changed any answer, header, ETag, metric or log line would show as a difference. Seeds are
found by their exact text: no unrevealed server seed appears anywhere, in either case.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import pytest
from freezegun import freeze_time

from ledger.core.cards import CANONICAL_PACK
from ledger.rules.variants import VARIANT_NAMES
from tests.api.hidden_worlds import (
    NOW,
    OUTSIDER,
    PLAYERS,
    SEALED,
    TABLE_ID,
    VIEWERS,
    World,
    build,
    build_casino,
    first_pack,
    hidden_places,
    other_pack,
    other_sealed,
    wallet_id,
)

HIGH_CARD = VARIANT_NAMES[1:]
DAY = NOW[:10]
#: Query values the crawler gives each parameter the document names (besides none at all).
PAGES = ("/", "/pages/table", "/pages/casino", "/pages/audit", "/pages/wallet",
         "/pages/replay", "/pages/verification", "/pages/reports")


def _values(world: World, deals: list[UUID], name: str, schema: dict[str, Any],
            path: str) -> list[str]:
    wallets = [str(wallet_id(p)) for p in (*PLAYERS, OUTSIDER)]
    players = [*PLAYERS, OUTSIDER]
    known: dict[str, list[str]] = {
        "table": [str(TABLE_ID)], "wallet": wallets, "player": players,
        "player_id": players, "deal": [str(d) for d in deals],
        "since": [DAY], "until": [f"{DAY}T23:59:59+00:00"], "at": [f"{NOW}+00:00"],
        "type": ["BetPlaced", "Debited", "CardDealt", "Anted", "Wagered"],
        "after": ["0"], "after_version": ["0"], "limit": ["500"], "count": ["50"],
        "include_inactive": ["true"], "disputed": ["false"],
        # The public log's: its first and last leaf, its size, its first position.
        "leaf": [str(_tree_size(world) - 1), "0"], "size": [str(_tree_size(world))],
        "from": ["1"], "to": [str(_tree_size(world))], "position": ["1"],
    }
    if name == "variant":  # the world's, and one it has no table of
        return [world.variant, "casino" if world.variant != "casino" else "polish"]
    if "enum" in schema:
        return [str(v) for v in schema["enum"]]
    if name == "version":  # every version since the deal began, and one more
        aggregate = UUID(path.split("/")[2])
        return [str(v) for v in range(_since_the_deal(world, deals, aggregate),
                                      world.ledger.repository.get(aggregate).version + 2)]
    return known.get(name, [])


def _since_the_deal(world: World, deals: list[UUID], aggregate: UUID) -> int:
    """The first version of the aggregate to ask for as of: a wallet's first, the table's as
    its deal in progress began (its earlier states hold nothing the deal hides)."""
    if aggregate != TABLE_ID:
        return 1
    from ledger.domain.casino import SealedSeed

    sealed = world.ledger.repository.get(SealedSeed.create_id(deals[-1]))
    return sealed.table_version or 1


def _tree_size(world: World) -> int:
    assert world.ledger.public is not None
    return world.ledger.public.tree.size


def _deals(world: World) -> list[UUID]:
    from ledger.domain.casino import SealedSeed
    from ledger.integrity.verify import read_log

    return [UUID(str(e.deal_id)) for _p, e in read_log(world.ledger)
            if isinstance(e, SealedSeed.Sealed)]


def crawl_targets(world: World, document: dict[str, Any]) -> Iterator[str]:
    """Every GET of the document, once per id of its path parameters and once per value of
    each of its query parameters."""
    deals = _deals(world)  # read from the log once for the crawl, not once a parameter
    ids = {
        "table_id": [str(TABLE_ID)],
        "deal_id": [str(d) for d in deals],
        "wallet_id": [str(wallet_id(p)) for p in (*PLAYERS, OUTSIDER)],
        "player_id": [*PLAYERS, OUTSIDER],
        "key_id": list(world.key_ids.values()),
        "dispute_id": ["00000000-0000-4000-8000-000000000000"],
        # The public log's tiles (the partial ones its size makes, and the first full one,
        # which a small tree has not) and its signed checkpoint.
        "path": [f"0/000.p/{_tree_size(world)}", f"entries/000.p/{_tree_size(world)}", "0/000"],
        "size": [str(_tree_size(world))],
    }
    for path, operations in document["paths"].items():
        get = operations.get("get")
        if get is None:
            continue
        parameters = get.get("parameters", []) + operations.get("parameters", [])
        paths = [path]
        for parameter in parameters:
            if parameter["in"] == "path":
                name = parameter["name"]
                paths = [p.replace("{" + name + "}", value) for p in paths
                         for value in ids[name]]
        for concrete in paths:
            yield concrete
            firsts = []
            for parameter in parameters:
                if parameter["in"] != "query":
                    continue
                schema = parameter.get("schema", {})
                items = schema.get("items", schema) if schema.get("type") == "array" else schema
                values = _values(world, deals, parameter["name"], items, concrete)
                for value in values:
                    yield f"{concrete}?{parameter['name']}={value}"
                firsts += [f"{parameter['name']}={values[0]}"] if values else []
            if len(firsts) > 1:  # and every parameter at once (a proof needs both its sizes)
                yield f"{concrete}?{'&'.join(firsts)}"
    yield from PAGES


@contextmanager
def access_log() -> Iterator[list[str]]:
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            fields = {k: v for k, v in getattr(record, "fields", {}).items()
                      if k != "duration_ms"}  # the time it took, which no frozen clock fixes
            lines.append(json.dumps([record.getMessage(), fields], default=str))

    logger = logging.getLogger("reddog.access")
    handler, level = Keep(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def refused_commands(world: World) -> list[tuple[str, dict[str, Any]]]:
    """A command of every kind that the rules or roles refuse now: refused, it records nothing,
    but its answer could still give away what it met."""
    table = f"/tables/{TABLE_ID}"
    deal = world.table.state.deal if world.table is not None else None
    done = [*deal.acted, *deal.bets] if deal else []
    seat = done[0] if done else 9  # a seat whose turn is over (or no seat at all)
    body_of = {"bets": {"seat": seat, "amount": 1_000_000}, "bank": {"amount": 1_000_000},
               "centre-card": {"seat": seat}, "passes": {"seat": seat}, "ready": {"seat": seat},
               "dealer-choice": {"choice": "pass"}, "seats": {"seat": 9, "wallet_id": str(
                   wallet_id(OUTSIDER))}}
    commands = [(f"{table}/{name}", body) for name, body in body_of.items()]
    commands += [(f"{table}/next-deal", {}), (f"{table}/close", {}), (f"{table}/pot-split", {}),
                 (f"{table}/deals", {"bet": 10}), (f"{table}/client-seed", {"client_seed": "x"})]
    deal = _deals(world)[-1]  # the deal in progress (a finished one may be disputed)
    commands.append((f"/deals/{deal}/disputes", {"message": "peek"}))
    if world.table is not None:  # at a casino table the operator may stand or raise
        commands += [(f"/deals/{deal}/stand", {}), (f"/deals/{deal}/raise", {})]
    return commands


def answers(world: World, viewer: str) -> dict[str, Any]:
    """What the viewer gets from the world: every crawled answer and the access log."""
    client = world.app.test_client()
    headers = {**world.keys[viewer], "X-Request-Id": "crawler"}
    document = client.get("/openapi.json").get_json()
    seen: dict[str, Any] = {}
    with freeze_time(NOW), access_log() as log:
        assert world.ledger.public is not None
        world.ledger.public.catch_up()  # the tree of the whole log, and a checkpoint of it
        world.ledger.public.sign()
        for target in crawl_targets(world, document):
            response = client.get(target, headers=headers)
            seen[f"GET {target}"] = _answer(response, hashed=_hashed(target))
            if response.headers.get("ETag"):
                again = client.get(target, headers={
                    **headers, "If-None-Match": response.headers["ETag"]})
                seen[f"GET {target} (If-None-Match)"] = _answer(again)
        for path, body in refused_commands(world):
            response = client.post(path, json=body, headers=headers)
            assert response.status_code >= 400, (viewer, path, response.get_json())
            seen[f"POST {path}"] = _answer(response)
    seen["access log"] = log
    return seen


def _hashed(target: str) -> bool:
    """Whether an answer is made of the public tree's hashes: its checkpoints, tiles, proofs,
    leaves and a receipt's proofs and checkpoint."""
    return target.startswith("/log/") or target.split("?")[0].endswith("/receipt")


#: A hash as the public log writes one: 32 bytes in base64 (a root, a proof's step, a
#: commitment) or a signature line's base64.
HASH_TEXT = re.compile(r"(?:—|\\u2014) \S+ [A-Za-z0-9+/=]{60,}|[A-Za-z0-9+/]{43}=")


def _masked(response: Any) -> str:
    """An answer of the public log with every hash in it masked, its length kept.

    Its hashes are SHA-256 over salted commitments to stored events (docs/transparency.md):
    the salts are secret, so a hash tells nothing of what the event holds, but any hidden
    card or amount changes it. What is compared is everything else: which answers there are,
    their statuses, headers and shapes, the sizes and leaves they name, and, in a receipt,
    every byte of every event opened (none of which the viewer may not see). The hashes
    themselves are tested for the 52-way guess in tests/integration/test_public_log.py."""
    if response.mimetype == "application/octet-stream":
        return f"<{len(response.data)} bytes of hashes>"
    return HASH_TEXT.sub(lambda m: "#" * len(m.group(0)), response.get_data(as_text=True))


#: The public tree's root that a statement, report or recall carries (`log.root`).
LOG_ROOT = re.compile(r'"root":"[A-Za-z0-9+/]{43}="')


def _answer(response: Any, hashed: bool = False) -> tuple[int, list[tuple[str, str]], str]:
    body = _masked(response) if hashed else LOG_ROOT.sub('"root":"#"', response.get_data(
        as_text=True))
    headers = response.headers
    if response.mimetype == "text/plain" and "# TYPE" in body:
        # The metrics: each series' `_created` is the wall clock when the process first
        # counted it, which the frozen clock does not reach; it says nothing of the store.
        # Likewise the request durations.
        body = "\n".join(line for line in body.splitlines() if "_created" not in line
                         and "duration_seconds" not in line)
        headers = {k: v for k, v in headers.items() if k != "Content-Length"}
    return response.status_code, sorted(headers.items()), body


def assert_no_difference(first: dict[str, Any], second: dict[str, Any], what: str) -> None:
    assert first.keys() == second.keys()
    differing = [name for name in first if first[name] != second[name]]
    assert not differing, f"{what} changes {len(differing)} answers, first {differing[:5]}: " \
        f"{_first_difference(first[differing[0]], second[differing[0]])}"


def _first_difference(a: Any, b: Any) -> str:
    """Where two answers (or two logs) first differ: the body first, where the rest follows."""
    if isinstance(a, tuple) and a[2] != b[2]:
        a, b = a[2], b[2]
    text_a, text_b = (x if isinstance(x, str) else json.dumps(x) for x in (a, b))
    at = next((i for i, (x, y) in enumerate(zip(text_a, text_b)) if x != y),
              min(len(text_a), len(text_b)))
    return (f"...{text_a[max(at - 150, 0):at + 60]}... against "
            f"...{text_b[max(at - 150, 0):at + 60]}...")


def assert_no_seed(world: World, seen: dict[str, Any], viewer: str) -> None:
    text = json.dumps(seen)
    for seed in world.secrets_in_play():
        assert seed not in text and seed.upper() not in text, f"{viewer} sees a sealed seed"


@pytest.mark.slow
@pytest.mark.parametrize("variant", HIGH_CARD)
def test_G2_X4_no_role_learns_a_hidden_card_sealed_bet_or_seed_from_any_channel(variant):
    pack = first_pack(variant)
    probe = build(variant, pack, SEALED)
    sealed_bets = probe.table.state.variant.betting.value == "sealed"  # type: ignore[union-attr]
    # Viewers who may not see the same things share a pair of builds, which they crawl in
    # turn, so both builds meet the same requests in the same order.
    pairs: dict[tuple[Any, ...], list[str]] = {}
    for viewer in VIEWERS:
        places = tuple(hidden_places(probe, viewer))
        assert len(places) > 10, "the crawl must come while cards are still hidden"
        amounts = tuple(sorted(other_sealed(probe, viewer).items())) if sealed_bets else ()
        pairs.setdefault((places, amounts), []).append(viewer)
    first = probe
    for (places, amounts), viewers in pairs.items():
        first = first or build(variant, pack, SEALED)
        second = build(variant, other_pack(pack, list(places)), dict(amounts) or SEALED)
        # Check the builds differ where the viewers may not look.
        assert [pack[p] for p in places] != [other_pack(pack, list(places))[p] for p in places]
        for viewer in viewers:
            seen = answers(first, viewer)
            assert_no_seed(first, seen, viewer)
            assert_no_difference(seen, answers(second, viewer),
                                 f"{variant}: what {viewer} may not see")
        first = None


@pytest.mark.slow
def test_G2_no_role_sees_the_casino_seed_or_any_card_still_in_the_pack():
    world = build_casino()
    deal = world.ledger.repository.get(_deals(world)[0])
    shown = {str(card["card"]) for card in deal.cards}
    assert len(shown) == 2
    unseen = {str(card) for card in CANONICAL_PACK} - shown
    for viewer in VIEWERS:
        seen = answers(world, viewer)
        assert_no_seed(world, seen, viewer)
        for name, answer in seen.items():
            if name == "access log":
                continue
            cards = set(_card_strings(answer[2]))
            assert not cards & unseen, (viewer, name, cards & unseen)


def _card_strings(body: str) -> Iterator[str]:
    try:
        document = json.loads(body)
    except ValueError:
        return
    stack = [document]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and len(value) == 2:
            yield value
