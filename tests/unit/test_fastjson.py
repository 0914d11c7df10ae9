"""`ledger.core.fastjson` writes, byte for byte, what the standard `json` module writes: the stored
JSON of every event and snapshot (the library's transcoder) and the canonical bytes digests are
of (`ledger.core.digests.canonical`). Where it cannot be sure to, it steps aside for `json`."""

from __future__ import annotations

import enum
import importlib
import json
import pkgutil
import tracemalloc
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any
from uuid import UUID, uuid4

import pytest
from eventsourcing.persistence import (
    DatetimeAsISO,
    DecimalAsStr,
    JSONTranscoder,
    Transcoding,
    TranscodingNotRegisteredError,
    UUIDAsHex,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import api
import ledger
from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.core import digests as chain
from ledger.core.digests import canonical, sealed_state
from ledger.core.fastjson import FastJSONTranscoder, canonical_json
from ledger.domain.highcard import HighCardStateAsDict
from ledger.rules.variants import VARIANTS
from ledger.settings import Settings
from ledger.sim.bots import simulate_casino, simulate_table
from ledger.store.snapshots import stored_snapshots


class Colour(enum.StrEnum):
    RED = "red"


class Rank(enum.IntEnum):
    ACE = 14


@dataclass
class Point:
    x: int
    y: Any


class PointAsDict(Transcoding):
    type = Point
    name = "point"

    def encode(self, obj: Point) -> dict[str, Any]:
        return {"x": obj.x, "y": obj.y}

    def decode(self, data: dict[str, Any]) -> Point:
        return Point(**data)


def transcoders() -> tuple[JSONTranscoder, FastJSONTranscoder]:
    pair = (JSONTranscoder(), FastJSONTranscoder())
    for transcoder in pair:
        for transcoding in (UUIDAsHex(), DatetimeAsISO(), DecimalAsStr(), PointAsDict()):
            transcoder.register(transcoding)
    return pair


def recipe(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"),
                      default=chain._plain).encode("utf-8")


leaves = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
          | st.uuids() | st.datetimes(timezones=st.none() | st.just(UTC))
          | st.sampled_from([Colour.RED, Rank.ACE]) | st.decimals(allow_nan=False))
values = st.recursive(
    leaves,
    lambda children: st.lists(children, max_size=4) | st.tuples(children, children)
    | st.dictionaries(st.text(max_size=6), children, max_size=4)
    | st.builds(Point, st.integers(), children),
    max_leaves=14,
)


# Both writers are held to `json` on the same random states: drawing them is most of the cost.
@settings(max_examples=400, deadline=None)
@given(state=st.dictionaries(st.text(max_size=8), values, max_size=8))
def test_the_transcoder_writes_the_bytes_the_library_writes_and_canonical_json_the_recipe(
        state):
    library, fast = transcoders()
    assert fast.encode(state) == library.encode(state)
    written = canonical_json(state, chain._plain)
    assert written is None or written == recipe(state), "canonical_json neither wrote the " \
        "recipe nor stepped aside"


def test_canonical_json_writes_plain_states_itself_and_steps_aside_where_json_differs(
        monkeypatch):
    monkeypatch.setitem(chain._FORMS, Point, lambda point: {"x": point.x, "y": point.y})
    plain = {"id": uuid4(), "at": datetime(2026, 5, 1, 12, tzinfo=UTC), "n": 2**63,
             "rank": Rank.ACE, "colour": Colour.RED, "cards": [{"r": 3, "s": None}],
             "pair": ("a", True), "text": "tab\there \"q\" \\ ~"}
    assert canonical_json(plain, chain._plain) == recipe(plain)
    for value in (0.00001, 1.5, float("nan"), float("inf"), "café", "del\x7f", 2**64,
                  {"deep": [1, {"x": 1e-7}]}, Point(1, 0.5)):
        state = {**plain, "value": value}
        assert canonical_json(state, chain._plain) is None, value
        assert canonical(state) == recipe(state)
    assert canonical_json({**plain, "value": Point(1, [2])}, chain._plain) == recipe(
        {**plain, "value": Point(1, [2])})
    assert canonical_json({1: "key not text"}, chain._plain) is None


def test_stored_json_takes_the_memory_its_length_needs_as_json_would():
    """A store in memory keeps every event's bytes: orjson's own bytes hold the buffer it wrote
    into (about 4 KB) whatever their length."""
    library, fast = transcoders()
    state = {"id": uuid4(), "note": "x" * 300, "cards": [{"rank": 3}] * 4}
    assert fast.encode(state) == library.encode(state)
    sizes = []
    for transcoder in (library, fast):
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            kept = [transcoder.encode(state) for _ in range(200)]
            sizes.append((tracemalloc.get_traced_memory()[0] - before) / len(kept))
        finally:
            tracemalloc.stop()
    assert sizes[1] < 1.2 * sizes[0], sizes


def test_the_transcoder_steps_aside_the_same_way_and_refuses_what_the_library_refuses():
    library, fast = transcoders()
    for value in (0.00001, float("nan"), {1: "x"}, {"p": Point(1, 1e-7)}, 2**70, "é\u2028",
                  [uuid4(), (uuid4(), Decimal("1.50"))], Rank.ACE, Colour.RED):
        assert fast.encode({"value": value}) == library.encode({"value": value}), value
    for transcoder in (library, fast):
        with pytest.raises(TranscodingNotRegisteredError):
            transcoder.encode({"value": object()})
    bare = FastJSONTranscoder()
    with pytest.raises(TranscodingNotRegisteredError):
        bare.encode({"id": uuid4()})


class Moment(datetime):
    """A time of a kind of its own (no transcoding for it)."""


def test_times_are_written_as_the_library_writes_them_and_refused_as_it_refuses_them():
    """orjson writes a time of no zone or of UTC itself, as `isoformat()` does; any other (an
    offset of whole seconds, which orjson would shorten) is written by the transcoding."""
    library, fast = transcoders()
    times = [datetime(2026, 12, 7, 1, 2, 3, 456789, tzinfo=UTC), datetime(2026, 12, 7, 1, 2, 3),
             datetime(1, 1, 1, tzinfo=UTC), datetime(2026, 12, 7, tzinfo=timezone(timedelta(0))),
             datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=5, minutes=30))),
             datetime(2026, 1, 1, tzinfo=timezone(timedelta(seconds=5))),
             datetime(2026, 1, 1, 0, 0, 0, 7, tzinfo=timezone(timedelta(hours=-3)))]
    for moment in times:
        state = {"timestamp": moment, "deep": {"at": [moment]}}
        assert fast.encode(state) == library.encode(state), moment
    assert b"+00:00:05" in fast.encode({"t": times[5]})
    for value in (date(2026, 12, 7), time(1, 2), Moment(2026, 12, 7, tzinfo=UTC)):
        assert outcome(fast, {"value": value}) == outcome(library, {"value": value}), value
        assert str(outcome(fast, {"value": value})).startswith("refused: ")
    with pytest.raises(TranscodingNotRegisteredError):
        FastJSONTranscoder().encode({"at": times[0]})


class Plain(enum.Enum):
    ONE = 1


class Ratio(float, enum.Enum):
    HALF = 0.5


class Flags(enum.Flag):
    A = 1


class Tag(str):
    """Text of a kind with a transcoding of its own: json writes it as text all the same."""


class TagAsText(Transcoding):
    type = Tag
    name = "tag"

    def encode(self, obj: Tag) -> str:
        return str.__str__(obj)

    def decode(self, data: str) -> Tag:
        return Tag(data)


def test_enums_json_would_write_otherwise_are_written_by_json(monkeypatch):
    monkeypatch.setitem(chain._FORMS, Plain, lambda member: member.name)
    for value in (Plain.ONE, Ratio.HALF, Flags.A, [1, {"x": Plain.ONE}], (Ratio.HALF,)):
        state = {"value": value}
        assert canonical_json(state, chain._plain) is None, value
        assert canonical(state) == recipe(state)
    library, fast = transcoders()  # no transcoding for them: as the library writes or refuses
    for value in (Plain.ONE, Ratio.HALF, Flags.A, [1, {"x": Plain.ONE}], (Ratio.HALF,)):
        state = {"value": value, "id": uuid4()}
        assert outcome(fast, state) == outcome(library, state), value
    assert str(outcome(fast, {"value": Plain.ONE})).startswith("refused: ")
    library, fast = transcoders()
    for transcoder in (library, fast):
        transcoder.register(PlainAsName())
    for value in (Plain.ONE, [Plain.ONE], {"deep": (Plain.ONE,)}):
        assert fast.encode({"value": value}) == library.encode({"value": value}), value


def outcome(transcoder: JSONTranscoder, state: dict[str, Any]) -> bytes | str:
    try:
        return transcoder.encode(state)
    except TranscodingNotRegisteredError as error:
        return f"refused: {error}"


class PlainAsName(Transcoding):
    type = Plain
    name = "plain"

    def encode(self, obj: Plain) -> str:
        return obj.name

    def decode(self, data: str) -> Plain:
        return Plain[data]


def test_a_transcoding_for_a_kind_json_writes_itself_sends_everything_to_json():
    library, fast = transcoders()
    for transcoder in (library, fast):
        transcoder.register(TagAsText())
    state = {"tag": Tag("x"), "id": uuid4(), "deep": [Tag("y")]}
    assert fast.encode(state) == library.encode(state)
    assert b'"tag":"x"' in fast.encode(state)


def test_the_ledger_has_no_enum_that_orjson_would_write_by_value_and_json_by_name():
    """orjson writes any enum by its value; json writes one that is text or an integer the
    same way, and hands any other enum to `default`."""
    for package in (ledger, api):
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            importlib.import_module(module.name)
    enums = [kind for kind in _subclasses(enum.Enum) if kind.__module__.split(".")[0]
             in ("ledger", "api")]
    assert enums, "the ledger's enums were not found"
    for kind in enums:
        assert issubclass(kind, (str, int)), kind


def _subclasses(kind: type) -> list[type]:
    found = []
    for sub in kind.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


@pytest.fixture(scope="module")
def played() -> LedgerApplication:
    app = LedgerApplication(Settings.from_env(store="memory"))
    simulate_casino(app, 8, seed="5a" * 16, bet=20)
    for index, variant in enumerate(VARIANTS):
        simulate_table(app, variant, 3, deals=2, seed=f"{index + 0x60:02x}" * 16)
    app.keys.issue_key("auditor", label="café ☕")
    app.verification.run_verification(SYSTEM)  # an event that holds a float (its seconds)
    tables = {n.originator_id for n in app.recorder.select_notifications(start=1, limit=100_000)
              if "Table" in n.topic or "Wallet" in n.topic}
    for table in tables:  # snapshots of every kind (a high-card table's engine state among them)
        app.take_snapshot(table)
    return app


def test_every_stored_event_and_snapshot_is_what_the_library_would_have_written(played):
    library, _ = transcoders()
    library.register(HighCardStateAsDict())
    mapper = played.mapper
    assert isinstance(mapper.transcoder, FastJSONTranscoder)
    notifications = played.recorder.select_notifications(start=1, limit=100_000)
    snapshots = list(stored_snapshots(played))
    assert len(notifications) > 500
    assert len(snapshots) >= 10
    assert any(b'"_type_":"high_card_state"' in snapshot.state for snapshot in snapshots)
    for stored in [*notifications, *snapshots]:
        state = mapper.transcoder.decode(stored.state)
        assert library.encode(state) == stored.state, stored.topic


def test_every_event_is_digested_by_the_fast_writer_unless_it_holds_a_float(played):
    mapper = played.mapper
    topics, aside = set(), 0
    for stored in played.recorder.select_notifications(start=1, limit=100_000):
        state = sealed_state(mapper, stored)
        plain = {k: v for k, v in state.items() if k != "chain_mac"}
        assert canonical(state) == recipe(plain)
        json_differs = (any(type(value) is float for value in _leaves(plain))
                        or not json.dumps(plain, default=str, ensure_ascii=False).isascii())
        assert (canonical_json(plain, chain._plain) is None) == json_differs, stored.topic
        aside += json_differs
        topics.add(stored.topic)
    assert aside >= 2 and len(topics) > 20  # the key's label, the verification's seconds
    assert played.verification.run_verification(SYSTEM)["ok"]


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def test_a_uuid_given_a_canonical_form_of_its_own_is_written_by_json(monkeypatch):
    monkeypatch.setitem(chain._FORMS, UUID, lambda uuid: uuid.hex)
    state = {"originator_id": uuid4(), "other": uuid4()}
    assert canonical(state) == recipe(state)
    assert state["other"].hex.encode() in canonical(state)
