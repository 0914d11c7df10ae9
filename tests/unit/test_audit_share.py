"""The audit gate's share of the process's time (api/gate.py, `REDDOG_AUDIT_SHARE`): while play
goes on (a request that is not an audit read began or ended within the last second), after an
audit read that used c seconds of CPU the gate opens again c × (1 − share) / share later; a read
that would wait past its budget is told to come back, as one that finds no slot. With no play
going on, audit reads run back to back."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from api.gate import AuditGate, Clocks
from ledger.core.errors import Busy, InvalidInput
from ledger.settings import Settings


@dataclass
class Clock(Clocks):
    """The gate's clocks: a wall clock that moves when slept, and a thread CPU clock that
    moves when a read works."""

    wall: float = 1000.0
    used: float = 0.0
    slept: list[float] = field(default_factory=list)

    def now(self) -> float:
        return self.wall

    def cpu(self) -> float:
        return self.used

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.wall += seconds

    def work(self, cpu: float, wall: float | None = None) -> None:
        self.used += cpu
        self.wall += cpu if wall is None else wall


@pytest.fixture
def clock() -> Clock:
    return Clock()


def read(audit: AuditGate, clock: Clock, cpu: float, wall: float | None = None,
         playing: bool = True) -> None:
    """An audit read using `cpu` seconds; `playing`: with play requests beside it."""
    if playing:
        audit.played()
    with audit.turn():
        clock.work(cpu, wall)
        if playing:
            audit.played()


def test_after_a_read_the_gate_rests_in_proportion_to_the_cpu_it_used(clock: Clock) -> None:
    audit = AuditGate(1, 8, 2.0, share=0.25, clocks=clock)
    read(audit, clock, 0.1)
    assert clock.slept == []  # the first read waits for nothing
    read(audit, clock, 0.2)
    assert clock.slept == [0.3]  # 0.1 s of CPU at a quarter share: 0.3 s of rest
    clock.wall += 1.0  # the rest (0.6 s) passed while no read asked
    read(audit, clock, 0.05)
    assert clock.slept == [0.3]


def test_rest_counts_cpu_not_the_time_a_read_waited_for_the_store(clock: Clock) -> None:
    audit = AuditGate(1, 8, 2.0, share=0.5, clocks=clock)
    read(audit, clock, 0.01, wall=0.5)  # mostly waiting on I/O, the GIL free
    read(audit, clock, 0.01)
    assert clock.slept == [0.01]  # its 0.01 s of CPU, not the 0.5 s it took


def test_reads_ending_together_owe_their_rests_one_after_the_other(clock: Clock) -> None:
    """Two slots: reads in two threads ending at the same moment (each thread's CPU clock its
    own, so their ends are told to the gate directly) owe the sum of their rests."""
    audit = AuditGate(2, 8, 5.0, share=0.5, clocks=clock)
    audit.played()
    audit._rest_after(0.2)
    audit._rest_after(0.3)
    read(audit, clock, 0.0)
    assert clock.slept == [0.5]


def test_a_read_that_would_wait_past_its_budget_is_busy_with_retry_after(clock: Clock) -> None:
    audit = AuditGate(1, 8, 0.5, share=0.1, clocks=clock)
    read(audit, clock, 0.2)  # 1.8 s of rest, past the 0.5 s budget
    with pytest.raises(Busy) as busy:
        read(audit, clock, 0.01)
    assert busy.value.retry_after == 1 and "share" in str(busy.value)
    assert clock.slept == []
    assert clock.used == pytest.approx(0.2)  # the refused read did no work


def test_at_a_share_of_one_the_gate_never_rests(clock: Clock) -> None:
    audit = AuditGate(1, 8, 2.0, share=1.0, clocks=clock)
    for _ in range(5):
        read(audit, clock, 0.5)
    assert clock.slept == []


def test_with_no_play_going_on_audit_reads_run_back_to_back_and_owe_nothing(
        clock: Clock) -> None:
    audit = AuditGate(1, 8, 2.0, share=0.25, clocks=clock)
    for _ in range(3):
        read(audit, clock, 0.4, playing=False)
    assert clock.slept == []
    read(audit, clock, 0.1)  # play comes: the reads before owe it nothing, this one does
    assert clock.slept == []
    read(audit, clock, 0.1)
    assert clock.slept == [0.3]


def test_play_stops_and_a_second_later_the_rest_owed_is_waived(clock: Clock) -> None:
    audit = AuditGate(1, 8, 2.0, share=0.05, clocks=clock)
    read(audit, clock, 0.1)  # 1.9 s of rest owed, play going on
    clock.wall += 1.05  # then no play request for more than a second, 0.85 s still owed
    read(audit, clock, 0.0, playing=False)
    assert clock.slept == []


def test_the_share_is_a_quarter_unless_set_and_held_between_five_percent_and_one() -> None:
    assert Settings.from_env({}).audit_share == 0.25
    assert Settings.from_env({"REDDOG_AUDIT_SHARE": "0.5"}).audit_share == 0.5
    for bad in ("0", "0.01", "1.5", "a quarter"):
        with pytest.raises(InvalidInput) as refused:
            Settings.from_env({"REDDOG_AUDIT_SHARE": bad})
        assert refused.value.field == "REDDOG_AUDIT_SHARE"
