"""The client seed of a multi-seat table: shared, so set by an operator between deals only."""

from __future__ import annotations

from uuid import UUID

import pytest

from ledger.app.access import SYSTEM, Principal
from ledger.core.errors import Forbidden, RuleViolation
from ledger.domain.access import Role
from ledger.sim.bots import simulate_table


def polish_table(app) -> UUID:  # type: ignore[no-untyped-def]
    simulate_table(app, "polish", 3, deals=1, seed="3a" * 16)
    app.project()
    entries = app.audit.event_feed(SYSTEM, limit=500, types={"Opened"})["entries"]
    return UUID(next(e["aggregate_id"] for e in entries if e["aggregate_type"] == "HighCardTable"))


def test_G2_only_an_operator_changes_a_shared_client_seed_and_fairness_still_checks(app):
    table_id = polish_table(app)
    finished = next(e["payload"]["deal_id"] for e in app.audit.event_feed(
        SYSTEM, limit=500, types={"DealEnded"})["entries"])
    with pytest.raises(Forbidden):
        app.deals.change_client_seed(Principal("k", Role.PLAYER, "sim-polish-1"), table_id, "mine")
    view = app.deals.change_client_seed(SYSTEM, table_id, "operator-set")
    assert view["client_seed"] == "operator-set"
    # Check a deal finished before the change still checks out as fair.
    assert app.deals.check_fairness(SYSTEM, UUID(finished))["fair"]
    table = app.deals.table(SYSTEM, table_id)
    if table["phase"] == "funding":
        app.play.fund_bank(SYSTEM, table_id, table["legal_actions"][0]["min"])
    started = app.play.start_deal(SYSTEM, table_id)
    assert started["current_deal"]["client_seed"] == "operator-set"
    with pytest.raises(RuleViolation) as refused:
        app.deals.change_client_seed(SYSTEM, table_id, "too-late")
    assert refused.value.rule == "G2"
