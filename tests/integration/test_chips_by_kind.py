"""The projection's chips by account kind equal what `verify` finds by replaying every transfer:
each transfer counted once, whichever aggregates record it; the kinds sum to zero."""

from __future__ import annotations

from collections import Counter

from ledger.core.transfers import parse_account
from ledger.integrity.verify import verify_store
from ledger.readmodels.chips import chips_by_kind
from ledger.sim.bots import Run, simulate


def test_chips_by_kind_equal_the_replayed_balances_of_every_account(app):
    simulate(app, Run("casino", deals=30), seed="c4")
    simulate(app, Run("polish", turns=40), players=3, seed="b1")
    simulate(app, Run("six_spot_banking", deals=3), players=3, seed="d2")
    app.project()
    report = verify_store(app)
    assert report.ok, report.failures
    replayed: Counter[str] = Counter()
    for account, balance in report.balances.items():
        replayed[parse_account(account).kind] += balance
    folded = chips_by_kind(app.projection.store)
    assert folded == {kind: balance for kind, balance in replayed.items()}
    assert sum(folded.values()) == 0 and folded["operator"] < 0 < folded["wallet"]
    assert {"house", "stake", "pot"} <= set(folded)
