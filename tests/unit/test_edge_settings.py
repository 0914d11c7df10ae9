"""The settings REDDOG_HEAD_SECONDS and REDDOG_BODY_SECONDS give a server's deadlines
(`api.edge`, docs/operations.md "The server's edge")."""

from __future__ import annotations

from itertools import pairwise

import pytest

from api.edge import Limits
from ledger.core.errors import InvalidInput
from ledger.settings import Settings


def test_the_deadlines_are_ten_and_thirty_seconds_unless_set():
    assert Limits.of(Settings.from_env({})) == Limits(head_seconds=10.0, body_seconds=30.0)
    given = Settings.from_env({"REDDOG_HEAD_SECONDS": "4", "REDDOG_BODY_SECONDS": "2.5"})
    assert Limits.of(given) == Limits(head_seconds=4.0, body_seconds=2.5)


@pytest.mark.parametrize("name", ["REDDOG_HEAD_SECONDS", "REDDOG_BODY_SECONDS"])
@pytest.mark.parametrize("value", ["0", "0.5", "-3", "ten"])
def test_a_deadline_under_a_second_or_not_a_number_is_refused_naming_it(name, value):
    with pytest.raises(InvalidInput) as refused:
        Settings.from_env({name: value})
    assert refused.value.field == name


def test_a_busy_loop_beats_at_most_four_times_a_second_and_an_idle_one_at_every_turn(monkeypatch):
    import api.edge as edge_module
    from api.edge import BEAT_SECONDS, Edge

    clock = [1000.0]
    turn = [1 / 64]  # each turn of the loop: a busy loop's, then an idle one's (exact in binary)

    def one_turn(**_kwargs):
        clock[0] += turn[0]

    class Clock:  # the edge module's `time`, its monotonic clock stepped by the loop's turns
        def __getattr__(self, name: str) -> object:
            return getattr(real_time, name)

        @staticmethod
        def monotonic() -> float:
            return clock[0]

    real_time = edge_module.time
    monkeypatch.setattr(edge_module, "time", Clock())
    monkeypatch.setattr(edge_module.wasyncore, "loop", one_turn)
    edge = Edge(lambda environ, start: [], 1, Limits(head_seconds=10.0, body_seconds=30.0),
                host="127.0.0.1", port=0)
    beats: list[float] = []
    turns = [0]

    def alive() -> bool:
        turns[0] += 1
        if turns[0] == 129:  # two busy seconds (128 turns), then idle turns of a second each
            turn[0] = 1.0
        return turns[0] <= 133

    try:
        edge.run(alive=alive, tick=lambda: beats.append(clock[0]))
    finally:
        edge.threads.shutdown(timeout=1)
        edge_module.wasyncore.close_all(edge.map)
    busy = [at for at in beats if at < 1002.0]
    assert len(busy) == round(2.0 / BEAT_SECONDS)  # not one a turn (128 turns)
    assert all(later - earlier >= BEAT_SECONDS - 1e-9 for earlier, later in pairwise(busy))
    assert len(beats) - len(busy) == 5  # idle: one at each turn of a second
