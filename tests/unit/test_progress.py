"""Long commands report progress where no terminal shows a bar: a line every few seconds on
stderr, and one at the end."""

from __future__ import annotations

import io

from api.cli_common import ProgressLines


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_line_at_most_every_interval_with_count_share_rate_and_time_left():
    clock, out = Clock(), io.StringIO()
    lines = ProgressLines(1000, "verifying positions", every=5.0, out=out, clock=clock)
    for _ in range(4):  # 4 s: nothing yet
        clock.now += 1.0
        lines.update(100)
    assert out.getvalue() == ""
    clock.now += 1.0
    lines.update(100)  # 5 s, 500 done: 100/s, 5 s left
    clock.now += 1.0
    lines.update(100)  # only a second since the last line
    assert out.getvalue().splitlines() == [
        "verifying positions: 500/1,000 (50%), 100/s, about 5 s left"]
    clock.now += 4.0
    lines.update(400)
    lines.say()  # the end
    assert out.getvalue().splitlines()[-1] == "verifying positions: 1,000/1,000 (100%), 100/s"
