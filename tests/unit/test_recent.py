"""The repository's cache of held aggregates (`ledger.store.repository.Recent`): bounded, the
least recently used dropped first, and answering as the library's caches do."""

from __future__ import annotations

import uuid

import pytest

from ledger.store.repository import Recent, _Held


def ids(count: int) -> list[uuid.UUID]:
    return [uuid.uuid5(uuid.NAMESPACE_URL, f"recent-{n}") for n in range(count)]


def test_past_its_size_the_least_recently_used_goes_first() -> None:
    one, two, three, four = ids(4)
    recent = Recent(maxsize=3)
    for version, key in enumerate((one, two, three), start=1):
        recent.put(key, _Held(version))
    assert recent.get(one).version == 1  # now the most recently used: two is the least
    recent.put(four, _Held(4))
    assert len(recent) == 3
    with pytest.raises(KeyError):
        recent.get(two)
    assert [recent.get(key).version for key in (one, three, four)] == [1, 3, 4]


def test_putting_a_held_id_again_replaces_it_and_makes_it_the_most_recent() -> None:
    one, two, three = ids(3)
    recent = Recent(maxsize=2)
    recent.put(one, _Held(1))
    recent.put(two, _Held(1))
    recent.put(one, _Held(2))  # replaced, and now newer than two
    recent.put(three, _Held(1))
    assert recent.get(one).version == 2
    with pytest.raises(KeyError):
        recent.get(two)


def test_evicting_drops_what_it_answers_and_an_absent_id_is_a_key_error() -> None:
    one, two = ids(2)
    recent = Recent(maxsize=2)
    recent.put(one, _Held(5))
    assert recent.get(one, evict=True).version == 5
    for evict in (False, True):
        with pytest.raises(KeyError):
            recent.get(one, evict=evict)
        with pytest.raises(KeyError):
            recent.get(two, evict=evict)


def test_a_size_of_zero_or_less_holds_without_limit() -> None:
    keys = ids(50)
    for size in (0, -1):
        recent = Recent(maxsize=size)
        for key in keys:
            recent.put(key, _Held(1))
        assert len(recent) == 50
        assert all(recent.get(key).version == 1 for key in keys)
