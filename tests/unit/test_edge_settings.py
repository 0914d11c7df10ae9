"""The settings REDDOG_HEAD_SECONDS and REDDOG_BODY_SECONDS give a server's deadlines
(`api.edge`, docs/operations.md "The server's edge")."""

from __future__ import annotations

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
