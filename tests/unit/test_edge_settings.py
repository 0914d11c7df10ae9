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


def test_sigterm_wakes_the_waiting_loop_at_once_rather_than_after_its_second():
    """`reddog serve` alone waits up to a second at a time in poll(), which Python resumes after
    a signal's handler: the handler pulls the loop's trigger, so the poll the signal came in
    returns with the trigger's byte to read and the stop begins then."""
    import os
    import signal
    import sys
    import threading
    import urllib.request

    from api.edge import Edge, serve_until_stopped

    def app(_environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    edge = Edge(app, 1, Limits.of(Settings.from_env({})), host="127.0.0.1", port=0)
    trigger = edge.servers[0].trigger
    sent: list[int] = []  # the signal, once sent
    woken: list[bool] = []  # for each read of the trigger's byte: whether the signal was sent
    read = trigger.handle_read
    trigger.handle_read = lambda: (woken.append(bool(sent)), read())[1]
    main = threading.main_thread().ident

    def stop_while_polling() -> None:
        with urllib.request.urlopen(edge.addresses[0], timeout=10) as answer:
            assert answer.read() == b"ok"
        # Once the answer is written the loop goes back to its wait: the signal comes in it.
        while sys._current_frames()[main].f_code.co_name != "poll2":
            threading.Event().wait(0.001)
        sent.append(signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGTERM)

    saved = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
    sender = threading.Thread(target=stop_while_polling)
    try:
        sender.start()
        serve_until_stopped(edge)
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
        sender.join(10)
    assert sent and woken[-1] is True
