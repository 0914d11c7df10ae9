"""JSON written by `orjson` (compiled), byte for byte as the standard `json` module writes it.

Two writers of JSON stand behind the seals of events (`ledger.core.digests`): the library's
transcoder, which writes the JSON a new event is stored as, and digested in (`json`, compact,
UTF-8), once, when the event is created; and the canonical JSON of an event of the first
release's sealed form (`ledger.core.digests.canonical`: `json` with sorted keys, compact, ASCII
only), which a verifier writes again to check it. Both are defined by what `json` writes: the
digests stored since the first release, and an auditor's own recomputation with `json.dumps`,
depend on those exact bytes. `orjson` writes the same bytes for the values events
hold, several times faster, but not for every value: it writes some floats differently (`1e-05`
as `0.00001`, NaN as `null`), text outside ASCII raw, an enum by its value, and it refuses
integers past 64 bits and keys that are not text. So each writer here either writes exactly
what `json` writes or steps aside for `json` itself:

- `canonical_json(obj, default)` returns None (and `canonical` uses `json`) when the value
  holds a float or an enum that is neither text nor an integer, text outside printable ASCII,
  or anything `orjson` refuses;
- `FastJSONTranscoder.encode` uses the library's `json` path in the same cases, and always
  once a transcoding is registered for a kind `json` writes itself (a subclass of text, a
  number, a dict, a list, or an enum), which orjson would hand to the transcoding instead.
  It wraps each id and time as the library does (`{"_type_": ..., "_data_": ...}`); a time of
  no zone or of UTC it leaves inside the wrapping for orjson to write, which writes it as
  `isoformat()` does (with an offset of whole seconds it would not: that one is written by its
  transcoding, as is any time whose transcoding is not the library's own).

Reading stays with the library's `json` decoder: `orjson` parses faster, but turning its
objects back into UUIDs and times in Python costs more than it saves.
`tests/unit/test_fastjson.py` compares both writers with `json` on random values and on every
event and snapshot of every variant.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime, time
from enum import Enum
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.persistence import DatetimeAsISO, JSONTranscoder

_CANONICAL_OPTIONS = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
                      | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS)
#: A stored event's times are written by orjson itself, as `isoformat()` writes them, inside the
#: library's wrapping (`FastJSONTranscoder._prepared`): no datetime passes through to `default`.
_STORED_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS
#: Zones of a time orjson writes exactly as `datetime.isoformat()` does (with an offset of whole
#: seconds it would not: it drops the seconds).
_ISO_ZONES = (None, UTC)

#: Kinds both write alike and hold nothing to look into.
_PLAIN = frozenset({str, int, bool, type(None), UUID, datetime})
_CONTAINERS = frozenset({dict, list, tuple})
#: Kinds orjson writes as `json` does, with nothing to wrap or look into.
_SCALARS = frozenset({str, int, bool, type(None)})


class _Refused(Exception):
    """A value `json` writes in a way this module does not copy."""


def _as_json_writes(obj: Any) -> Any:
    """What `json` writes for a subclass of text or of an integer (`StrEnum`, `IntEnum`): the
    plain value. Other subclasses of JSON's types are left to `json`."""
    if isinstance(obj, str):
        return str.__str__(obj)
    if isinstance(obj, int):
        return int.__int__(obj)
    raise _Refused


def _kind_differs(kind: type) -> bool:
    """Whether orjson may write a value of this kind otherwise than `json`: a float, or an enum
    that is not text or an integer (orjson writes any enum by its value; `json` writes one of
    text or of an integer as that, and hands any other to `default`)."""
    return kind is float or (issubclass(kind, Enum)
                             and (issubclass(kind, float) or not issubclass(kind, (str, int))))


def _json_may_differ(values: Any) -> bool:
    """Whether any of `values`, or anything in them, is of a kind orjson may write otherwise
    than `json` (the kinds of a collection are gathered by C code, not by a loop)."""
    others = set(map(type, values)) - _PLAIN
    if not others:
        return False
    for kind in others:
        if kind not in _CONTAINERS and _kind_differs(kind):
            return True
    if others.isdisjoint(_CONTAINERS):
        return False
    for value in values:
        kind = type(value)
        if kind is dict:
            if _json_may_differ(value.values()):
                return True
        elif (kind is list or kind is tuple) and _json_may_differ(value):
            return True
    return False


@functools.cache
def _written_like_json(default: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`default` for orjson: what `json` would write for a value orjson hands over (a time, a
    dataclass, a subclass of text or of an integer, anything `default` writes)."""

    def written(value: Any) -> Any:
        if isinstance(value, (str, int, float, dict, list, tuple)):
            return _as_json_writes(value)
        form = default(value)
        if _json_may_differ((form,)):
            raise _Refused
        return form

    return written


def canonical_json(obj: Any, default: Callable[[Any], Any]) -> bytes | None:
    """`json.dumps(obj, sort_keys=True, separators=(",", ":"), default=default).encode()`, or
    None where it cannot be sure to write the same bytes."""
    if _json_may_differ(obj.values() if type(obj) is dict else (obj,)):
        return None
    try:
        data = orjson.dumps(obj, default=_written_like_json(default), option=_CANONICAL_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):
        return None
    # `json` escapes everything outside printable ASCII (DEL included); orjson writes it raw.
    if not data.isascii() or b"\x7f" in data:
        return None
    return data


class FastJSONTranscoder(JSONTranscoder):
    """The library's JSON transcoder, writing the same bytes with `orjson`."""

    def __init__(self) -> None:
        super().__init__()
        self._json_only = False

    def register(self, transcoding: Any) -> None:
        super().register(transcoding)
        if issubclass(transcoding.type, (str, int, float, dict, list, tuple, Enum)):
            # `json` writes these itself and never asks the transcoding; orjson would.
            self._json_only = True

    def _prepared(self, value: Any) -> Any:
        """What orjson is given for `value`: the value itself where it holds only text,
        integers, booleans and None (orjson writes those as `json` does), else a copy with
        each value of a registered kind (a UUID, a time) wrapped as the library wraps it, here
        rather than handed back by orjson one at a time. A container none of whose values is
        wrapped is given as it is, not copied (a new event's state holds one time to wrap, and
        its data the nested dicts and lists of its transfers and cards, which hold none)."""
        kind = type(value)
        if kind is dict:
            if _SCALARS.issuperset(map(type, value.values())):
                return value
            return self._replaced(value, value.items(), dict)
        transcoding = self.types.get(kind)
        if transcoding is not None:  # wrapped as the library's `_encode_obj` wraps it
            if kind is datetime and type(transcoding) is DatetimeAsISO and (
                    value.tzinfo in _ISO_ZONES):
                # orjson writes the time itself, as `isoformat()` does (a Python call saved).
                return {"_type_": transcoding.name, "_data_": value}
            data = transcoding.encode(value)
            return {"_type_": transcoding.name,
                    "_data_": data if type(data) in _SCALARS else self._prepared(data)}
        if kind is UUID or issubclass(kind, (date, time)):
            # Not registered: orjson would write it as text, the library refuses it. (A time
            # of a kind of its own: its transcoding's, or the library's, to write or refuse.)
            raise _Refused
        if kind is list or kind is tuple:
            if _SCALARS.issuperset(map(type, value)):
                return value
            return self._replaced(value, enumerate(value), list)
        if kind is float or (kind not in _PLAIN and _kind_differs(kind)):
            raise _Refused
        return value

    def _replaced(self, container: Any, items: Iterable[tuple[Any, Any]],
                  copy: Callable[[Any], Any]) -> Any:
        """`container` with each of its `items` (key or index, value) `_prepared`: itself where
        none is replaced, else a `copy` of it holding the replacements."""
        copied = None
        for at, item in items:
            if type(item) not in _SCALARS and (prepared := self._prepared(item)) is not item:
                if copied is None:
                    copied = copy(container)
                copied[at] = prepared
        return container if copied is None else copied

    @staticmethod
    def _default(obj: Any) -> Any:
        # What orjson hands back: `_prepared` wrapped every value of a registered kind already,
        # so here only a subclass of text or of an integer is written (as `json` writes it).
        if isinstance(obj, (str, int)):
            return _as_json_writes(obj)
        raise _Refused

    def encode(self, obj: Any) -> bytes:
        if self._json_only:
            return super().encode(obj)
        try:
            data = orjson.dumps(self._prepared(obj), default=self._default,
                                option=_STORED_OPTIONS)
        except (_Refused, orjson.JSONEncodeError, TypeError, RecursionError):
            return super().encode(obj)
        # orjson's bytes keep the whole buffer it wrote into (about 4 KB, for 500 bytes of
        # JSON), and a stored event's bytes live as long as the store (in memory) or a cache:
        # a copy of the exact size (0.1 µs) holds what `json` would.
        return bytes(memoryview(data))
