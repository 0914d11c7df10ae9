"""The workers' shares of the connections (`api.spread`): who may take a new one, and who
closes one to even them out."""

from api.spread import ABSENT_SECONDS, FREE, Spread


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def two_workers() -> tuple[Spread, Clock, int, int]:
    clock = Clock()
    spread = Spread(4, clock)
    first = spread.assign([])
    second = spread.assign([first])
    return spread, clock, first, second


def test_each_worker_gets_its_own_slot_and_a_reaped_workers_slot_is_given_again():
    spread, _clock, first, second = two_workers()
    assert (first, second) == (0, 1)
    assert spread.assign([first, second]) == 2
    spread.free(first)
    assert spread.assign([second, 2]) == 0
    assert spread.assign([0, 1, 2, 3]) == FREE  # none free: that worker takes all it is offered
    assert spread.may_accept(FREE, 1000) and not spread.over_share(FREE, 1000)


def test_only_a_worker_holding_no_more_than_every_serving_worker_takes_a_connection():
    spread, _clock, first, second = two_workers()
    # A worker still starting (it has not turned its loop yet) holds no one back.
    assert spread.may_accept(first, 5)
    # Once both serve, the one holding more waits and the one holding fewer takes.
    assert spread.may_accept(second, 3)
    assert not spread.may_accept(first, 5)
    assert spread.may_accept(second, 4)
    assert not spread.may_accept(first, 5)
    assert spread.may_accept(second, 5) and spread.may_accept(first, 5)  # even: either takes


def test_a_worker_that_has_not_turned_its_loop_lately_or_was_reaped_holds_no_one_back():
    spread, clock, first, second = two_workers()
    assert spread.may_accept(second, 0)
    assert not spread.may_accept(first, 3)
    clock.now += ABSENT_SECONDS / 2
    assert not spread.may_accept(first, 3)  # the other is still serving
    clock.now += ABSENT_SECONDS  # stopped, or stuck: its last turn is too long ago
    assert spread.may_accept(first, 3)
    assert spread.may_accept(second, 0)  # it turns again
    assert not spread.may_accept(first, 3)
    spread.free(second)  # the master reaped it
    assert spread.may_accept(first, 3)


def test_a_worker_holding_two_or_more_than_a_serving_worker_closes_a_connection():
    spread, clock, first, second = two_workers()
    assert spread.may_accept(first, 8)
    assert not spread.over_share(first, 8)  # alone: nobody to hand connections to
    spread.held(second, 0)  # a worker that started late turns its loop, holding none
    assert spread.over_share(first, 8) and not spread.over_share(second, 0)
    spread.may_accept(second, 6)
    assert spread.over_share(first, 8)
    spread.may_accept(second, 7)
    assert not spread.over_share(first, 8)  # one more is as even as eight connections allow
    clock.now += 2 * ABSENT_SECONDS
    spread.may_accept(second, 0)
    clock.now += 2 * ABSENT_SECONDS  # the other stopped turning: no one to hand them to
    assert not spread.over_share(first, 8)
