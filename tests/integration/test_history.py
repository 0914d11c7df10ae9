"""Hand histories (RDHH/1): every deal exports and imports back to the replay the store gives."""

from __future__ import annotations

import io
import itertools
import json
import sys
from uuid import UUID, uuid4

import pytest

from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.core.errors import InvalidInput, RuleViolation
from ledger.history.hands import export_history, import_history
from ledger.history.rdhh import MAGIC, MAX_HISTORY_BYTES, MAX_LINE_BYTES, MAX_LINES
from ledger.integrity.verify import read_log
from ledger.rules.casino import OpeningKind
from ledger.rules.variants import VARIANTS
from ledger.sim.bots import simulate_casino, simulate_table
from tests.seeds import opening, seed_where


def finished_deals(app) -> list[UUID]:  # type: ignore[no-untyped-def]
    deals = []
    for _position, event in read_log(app):
        if type(event).__name__ == "SeedRevealed":
            data = getattr(event, "data", None)
            deals.append(UUID(data["deal_id"]) if data else event.originator_id)
    return deals


def without_balances(replay: dict) -> dict:
    """A replay without what the service adds from the wallets: `balance_before`, `balances`."""
    return {**replay,
            "seats": [{k: v for k, v in s.items() if k != "balance_before"}
                      for s in replay["seats"]],
            "steps": [{k: v for k, v in s.items() if k != "balances"} for s in replay["steps"]]}


@pytest.mark.parametrize("variant", ["casino", *VARIANTS])
def test_every_finished_deal_exports_and_imports_to_an_identical_replay(app, variant):
    if variant == "casino":
        simulate_casino(app, 12, seed="1a" * 16, bet=50)
    else:
        simulate_table(app, variant, 4, deals=3, seed="1b" * 16)
    offline = LedgerApplication.for_store("memory")
    deals = finished_deals(app)
    assert deals
    for deal_id in deals:
        text = export_history(app, deal_id)
        assert text.startswith(MAGIC + "\n") and text.endswith("end\n")
        replay = app.deals.replay(SYSTEM, deal_id)
        # Check the document alone, read by an application with an empty store, replays the same
        # (the balances, which only the store's wallets know, aside).
        assert import_history(offline, text) == without_balances(replay)
        # Check the replay ends in the state the table (or deal) recorded at that version.
        last = replay["steps"][-1]
        if variant != "casino":
            recorded = app.audit.state_at(SYSTEM, UUID(replay["table_id"]),
                                    version=last["event"]["version"])["state"]
            assert last["state"] == recorded


def test_an_unfinished_deal_has_no_hand_history(app):
    wallet_id = UUID(app.wallets.open_wallet(SYSTEM, "p-h")["id"])
    app.wallets.grant(SYSTEM, wallet_id, 1000)
    table_id = UUID(app.casino.open_casino_table(SYSTEM, wallet_id, client_seed="hh",
                                          accepts_supplied_seeds=True)["id"])
    deal = app.deals.deal(SYSTEM, table_id, 100, server_seed=seed_where(
        "hh", 1, opening(OpeningKind.SPREAD)))
    # Check a deal waiting for Stand or Raise, its seed still sealed, cannot be exported.
    with pytest.raises(RuleViolation) as refused:
        export_history(app, UUID(deal["id"]))
    assert refused.value.rule == "G2"


@pytest.mark.parametrize("text", ["", "RDHH/0\nend\n", "RDHH/1\nevent: {nope}\nend\n",
                                  "RDHH/1\nvariant: casino\nend\n", "RDHH/1\nevent: {}\n"])
def test_a_malformed_hand_history_is_refused_as_invalid_input(text):
    with pytest.raises(InvalidInput):
        import_history(LedgerApplication.for_store("memory"), text)


# Importing untrusted documents: bounded, strict, and importing nothing the document names.

@pytest.fixture(scope="module")
def histories() -> dict[str, str]:
    """One finished casino deal and one finished multi-seat deal, exported as text."""
    app = LedgerApplication.for_store("memory")
    simulate_casino(app, 2, seed="2a" * 16, bet=50)
    casino = finished_deals(app)
    simulate_table(app, "polish", 3, deals=2, seed="2b" * 16)
    table = finished_deals(app)[len(casino):]
    return {"casino": export_history(app, casino[0]), "casino-2": export_history(app, casino[1]),
            "table": export_history(app, table[-1])}


def refusal(source) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidInput) as refused:
        import_history(LedgerApplication.for_store("memory"), source)
    return refused.value.detail


class Endless(io.RawIOBase):
    """A stream that never ends, like /dev/zero: `head`, then `fill` forever; counts what is
    read from it."""

    def __init__(self, fill: bytes, head: bytes = b"") -> None:
        self.pending, self.fill, self.read_bytes = head, fill, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        while len(self.pending) < len(buffer):
            self.pending += self.fill * 1024
        size = len(buffer)
        buffer[:size] = self.pending[:size]
        self.pending = self.pending[size:]
        self.read_bytes += size
        return size


def test_a_stream_of_zero_bytes_like_dev_zero_is_refused_after_reading_one_bounded_line():
    zeros = Endless(b"\0")
    detail = refusal(io.BufferedReader(zeros))
    assert detail.startswith("line 1: longer than 65536 bytes")
    assert zeros.read_bytes <= MAX_LINE_BYTES + 2 * io.DEFAULT_BUFFER_SIZE


def test_a_single_endless_line_after_the_magic_is_refused_at_the_line_bound():
    endless = Endless(b"x", head=f"{MAGIC}\n# ".encode())
    assert refusal(io.BufferedReader(endless)).startswith("line 2: longer than")
    assert endless.read_bytes <= MAX_LINE_BYTES + 2 * io.DEFAULT_BUFFER_SIZE


def test_a_file_of_a_single_huge_line_is_refused(tmp_path):
    path = tmp_path / "huge.rdhh"
    path.write_bytes(MAGIC.encode() + b"x" * (4 * MAX_LINE_BYTES))
    with path.open("rb") as source:
        assert refusal(source).startswith("line 1: longer than")
        assert source.tell() <= MAX_LINE_BYTES + 2 * io.DEFAULT_BUFFER_SIZE


def test_endless_lines_are_refused_once_there_are_more_than_the_most_lines():
    taken = []

    def comments():  # type: ignore[no-untyped-def]
        yield MAGIC
        for n in itertools.count():
            taken.append(n)
            yield "# more"

    assert refusal(comments()) == f"line {MAX_LINES + 1}: a hand history has at most " \
                                  f"{MAX_LINES} lines"
    assert len(taken) == MAX_LINES


def test_endless_long_lines_are_refused_once_the_document_passes_the_size_bound():
    lines = itertools.chain([MAGIC.encode()], itertools.repeat(b"#" * (MAX_LINE_BYTES - 1)))
    detail = refusal(lines)
    assert "a hand history is at most" in detail
    assert int(detail.split()[1].rstrip(":")) <= MAX_HISTORY_BYTES // (MAX_LINE_BYTES - 1) + 2


def test_the_first_line_is_checked_before_any_other_is_read():
    read = []

    def lines():  # type: ignore[no-untyped-def]
        read.append(1)
        yield "RDHH/2"
        read.append(2)
        yield "end"

    assert refusal(lines()) == f"line 1: a hand history starts with the line {MAGIC}"
    assert read == [1]


def test_a_history_imports_alike_from_text_bytes_a_binary_or_text_stream_and_lines(histories):
    offline = LedgerApplication.for_store("memory")
    for text in (histories["casino"], histories["table"]):
        expected = import_history(offline, text)
        for source in (text.encode(), io.BytesIO(text.encode()), io.StringIO(text),
                       text.splitlines(), text.encode().splitlines(keepends=True),
                       text.replace("\n", "\r\n")):
            assert import_history(offline, source) == expected


def write_canary(tmp_path, monkeypatch) -> str:  # type: ignore[no-untyped-def]
    """A module that, if it is ever imported, leaves a file behind."""
    name = f"rdhh_canary_{uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(
        f"open({str(tmp_path / 'imported')!r}, 'w').close()\nclass Event: pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


@pytest.mark.parametrize("where", ["event", "originator", "table-before", "table-state"])
def test_a_topic_naming_another_module_is_refused_without_importing_it(
        histories, tmp_path, monkeypatch, where):
    canary = write_canary(tmp_path, monkeypatch)
    if where == "event":
        text = histories["casino"].replace("ledger.domain.casino:CasinoDeal.Wagered",
                                           f"{canary}:Event")
    elif where == "originator":
        text = histories["casino"].replace('"originator_topic":"ledger.domain.casino:CasinoDeal"',
                                           f'"originator_topic":"{canary}:Event"')
    elif where == "table-before":
        text = histories["table"].replace('"topic":"eventsourcing.domain:Snapshot"',
                                          f'"topic":"{canary}:Event"')
    else:
        text = histories["table"].replace('"topic":"ledger.domain.highcard:HighCardTable"',
                                          f'"topic":"{canary}:Event"')
    assert text != histories["casino" if where in ("event", "originator") else "table"]
    detail = refusal(text)
    assert detail.startswith("line ")
    assert canary not in sys.modules and not (tmp_path / "imported").exists()


def test_an_event_class_of_another_aggregate_is_refused_as_an_unknown_event_type(histories):
    # A wallet's event is a class of the ledger, but never part of a hand history.
    text = histories["casino"].replace("ledger.domain.casino:CasinoDeal.Stood",
                                       "ledger.domain.wallet:Wallet.Debited")
    text = text.replace("ledger.domain.casino:CasinoDeal.Wagered",
                        "ledger.domain.wallet:Wallet.Debited")
    assert "unknown event type" in refusal(text)
    table = histories["table"].replace("ledger.domain.highcard:HighCardTable.CardDealt",
                                       "ledger.domain.casino:CasinoDeal.CardDealt")
    assert "unknown event type" in refusal(table)


def test_the_events_of_another_deal_under_this_deals_header_are_refused(histories):
    header = [line for line in histories["casino"].splitlines() if not line.startswith("event:")]
    other = [line for line in histories["casino-2"].splitlines() if line.startswith("event:")]
    text = "\n".join(header[:-1] + other + ["end"]) + "\n"
    detail = refusal(text)
    assert detail.startswith(f"line {len(header)}: an event of ")
    assert "not of the deal" in detail


def test_a_multi_seat_event_naming_another_deal_is_refused(histories):
    lines = histories["table"].splitlines()
    number, line = next((n, line) for n, line in enumerate(lines, 1)
                        if "HighCardTable.CardDealt" in line)
    deal = json.loads(line.removeprefix("event: "))["state"]["data"]["deal_id"]
    lines[number - 1] = line.replace(deal, str(uuid4()))
    assert refusal("\n".join(lines)).startswith(f"line {number}: an event of deal ")


def test_a_deal_id_that_is_not_the_tables_deal_at_the_nonce_is_refused(histories):
    text = histories["casino"]
    deal = text.split("deal: ", 1)[1].split("\n", 1)[0]
    assert refusal(text.replace(deal, str(uuid4()))).startswith("line 4: deal ")


def replace_line(text: str, prefix: str, line: str) -> str:
    return "\n".join(line if old.startswith(prefix) else old for old in text.split("\n"))


@pytest.mark.parametrize(("prefix", "line", "number"), [
    ("variant:", "variant: Casino", 2),
    ("variant:", "variant: casino#", 2),
    ("variant:", "variant: roulette", 2),
    ("table:", "table: not-a-uuid", 3),
    ("table:", "table: {d6fa2d3c-1bb6-4439-a5ba-3782afd5f9e7}", 3),
    ("nonce:", "nonce: 01", 5),
    ("nonce:", "nonce: +1", 5),
    ("nonce:", "nonce: 1.0", 5),
    ("nonce:", "nonce: \u0661", 5),
    ("client-seed:", "client-seed: sim|ulation", 6),
    ("client-seed:", "client-seed: sim#", 6),
    ("commitment:", "commitment: " + "A" * 64, 7),
    ("server-seed:", "server-seed: " + "0" * 63, 8),
    ("started:", "started: 2026-01-01T00:00:00", 9),
    ("seat 1:", "seat 1: -alice wallet=91b9aabb-52eb-425f-804f-00a15ba3930b", 10),
    ("seat 1:", "seat 1: a|b wallet=91b9aabb-52eb-425f-804f-00a15ba3930b", 10),
    ("seat 1:", "seat 1: #alice wallet=91b9aabb-52eb-425f-804f-00a15ba3930b", 10),
    ("seat 1:", "seat 1: al\x00ice wallet=91b9aabb-52eb-425f-804f-00a15ba3930b", 10),
    ("seat 1:", "seat 01: alice wallet=91b9aabb-52eb-425f-804f-00a15ba3930b", 10),
    ("seat 1:", "seat 1: alice wallet=nope", 10),
    ("seat 1:", "seat 1: alice", 10),
    ("variant:", "player: alice", 2),
    ("variant:", "variant: casino\nvariant: casino", 3),
])
def test_every_header_value_is_checked_and_a_bad_one_refused_naming_its_line(
        histories, prefix, line, number):
    text = replace_line(histories["casino"], prefix, line)
    assert text != histories["casino"]
    assert refusal(text).startswith(f"line {number}: ")


def test_a_trailing_newline_cannot_hide_in_a_header_value(histories):
    # "alice\n" ends its line, so the history reads on to a line that is not a header.
    text = replace_line(histories["casino"], "seat 1:", "seat 1: alice\n wallet=x")
    assert refusal(text).startswith("line 10: ")


@pytest.mark.parametrize(("prefix", "line", "contradicted"), [
    ("client-seed:", "client-seed: other", "commitment's client_seed"),
    ("commitment:", "commitment: " + "ab" * 32, "commitment's commitment"),
    ("server-seed:", "server-seed: " + "cd" * 32, "seed revealed"),
    ("started:", "started: 2020-01-01T00:00:00+00:00", "started"),
    ("seat 1:", "seat 1: mallory wallet=91b9aabb-52eb-425f-804f-00a15ba3930b", "player_id"),
])
def test_a_casino_history_whose_events_contradict_its_header_is_refused_naming_the_line(
        histories, prefix, line, contradicted):
    text = replace_line(histories["casino"], prefix, line)
    detail = refusal(text)
    number = int(detail.split()[1].rstrip(":"))
    assert text.split("\n")[number - 1].startswith("event: ") and contradicted in detail


@pytest.mark.parametrize(("prefix", "line", "contradicted"), [
    ("variant:", "variant: shoot", "table-before is a 'polish' table"),
    ("seat 1:", "seat 1: mallory wallet=91b9aabb-52eb-425f-804f-00a15ba3930b", "seats"),
    ("table:", f"table: {UUID(int=7)}", "deal"),
])
def test_a_table_history_whose_snapshot_contradicts_its_header_is_refused(
        histories, prefix, line, contradicted):
    assert contradicted in refusal(replace_line(histories["table"], prefix, line))


def test_a_casino_history_with_a_table_snapshot_or_two_seats_is_refused(histories):
    casino = histories["casino"].split("\n")
    snapshot = next(line for line in histories["table"].split("\n")
                    if line.startswith("table-before:"))
    with_snapshot = "\n".join(casino[:10] + [snapshot] + casino[10:])
    assert refusal(with_snapshot).startswith("line 11: a casino deal has no table-before")
    two_seats = "\n".join(casino[:10] + [casino[9].replace("seat 1", "seat 2")] + casino[10:])
    assert refusal(two_seats).startswith("line 11: a casino deal has one seat")


@pytest.mark.parametrize("change", [
    lambda state: state.update(extra=1),
    lambda state: state.pop("card"),
    lambda state: state.update(card={"nested": [1, 2]}),
    lambda state: state.update(timestamp="yesterday"),
])
def test_an_event_with_other_attributes_than_its_class_is_refused(histories, change):
    lines = histories["casino"].split("\n")
    number = next(n for n, line in enumerate(lines, 1) if "CasinoDeal.CardDealt" in line)
    item = json.loads(lines[number - 1].removeprefix("event: "))
    change(item["state"])
    lines[number - 1] = "event: " + json.dumps(item)
    assert refusal("\n".join(lines)).startswith(f"line {number}: ")


@pytest.mark.parametrize("history", ["casino", "table"])
@pytest.mark.parametrize(("value", "must_be"), [
    (chr(0xD800), "text UTF-8 can encode"), (chr(0xDFFF), "text UTF-8 can encode"),
    (2**64, "a whole number from"), (-(2**63) - 1, "a whole number from"),
], ids=["lone-high-surrogate", "lone-low-surrogate", "2**64", "below-64-bits"])
def test_a_surrogate_escape_or_a_number_past_64_bits_anywhere_in_an_event_is_refused_naming_it(
        histories, history, value, must_be):
    """A JSON `\\ud800` escape decodes to a lone surrogate, which no replay could print: every
    string and every whole number of every event line, the state's own and those nested in it,
    is held to the limits before the event is read, the refusal naming the line and the place."""
    lines = histories[history].split("\n")
    events = [n for n, line in enumerate(lines, 1) if line.startswith("event: ")]
    checked = 0
    for number in events:
        item = json.loads(lines[number - 1].removeprefix("event: "))
        for place in leaves(item, kind=str if isinstance(value, str) else int):
            spoiled = json.loads(json.dumps(item))
            holder = spoiled
            for key in place[:-1]:
                holder = holder[key]
            holder[place[-1]] = value
            text = "\n".join([*lines[:number - 1], "event: " + json.dumps(spoiled),
                              *lines[number:]])
            detail = refusal(text)
            assert detail.startswith(
                f"line {number}: {'.'.join(map(str, place))} must be {must_be}"), detail
            checked += 1
    assert checked >= len(events), "the places checked were not found"


def leaves(value, kind: type, place: tuple = ()) -> list[tuple]:  # type: ignore[type-arg]
    """The places in a decoded JSON value holding a value of `kind` (never a bool)."""
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in leaves(item, kind, (*place, key))]
    if isinstance(value, list):
        return [found for i, item in enumerate(value) for found in leaves(item, kind, (*place, i))]
    return [place] if isinstance(value, kind) and not isinstance(value, bool) else []


def test_events_out_of_order_or_anything_after_end_are_refused(histories):
    lines = histories["casino"].split("\n")
    swapped = lines[:11] + [lines[12], lines[11]] + lines[13:]
    assert refusal("\n".join(swapped)).startswith("line 12: event version 3, expected 2")
    assert refusal(histories["casino"] + "event: {}\n").startswith("line 20: nothing but")
    unrevealed = [line for line in lines if "SeedRevealed" not in line]
    assert "never reveals" in refusal("\n".join(unrevealed))


def test_every_attribute_of_an_event_a_history_may_hold_has_its_type_checked():
    from ledger.history.rdhh import CASINO_EVENTS, SNAPSHOTS, TABLE_EVENTS, _fields, _types

    for cls in [*CASINO_EVENTS.values(), *TABLE_EVENTS.values(), *SNAPSHOTS.values()]:
        assert set(_types(cls)) == _fields(cls), cls
