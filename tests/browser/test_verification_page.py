"""The verification page in chromium: a run on a range passes with its figures and is listed
as the last run; the same range again records nothing and says so; the checkpoints are listed;
a bad range is refused visibly; players get 403."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.browser.conftest import fits_without_sideways_scroll, shoot
from tests.browser.play import casino_deals, caught_up

pytestmark = pytest.mark.browser
#: A checkpoint is written once the log has grown this far (ledger.integrity.checkpoints).
CHECKPOINT_EVERY = 1000
CHECKPOINT_SECONDS = 30
RANGE = 120


def _expect():
    from playwright.sync_api import expect

    return expect


@pytest.fixture(scope="module")
def checkpointed(server) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Enough casino deals that the log has a checkpoint; an auditor key."""
    key = server.api("POST", "/keys", body={"role": "auditor", "label": "verification page"})
    player = server.player(grant=10_000)
    while server.api("GET", "/verification", key["key"])["head"] < CHECKPOINT_EVERY + 20:
        casino_deals(server, player, 10, bet=10)
    # The server writes the checkpoint in a thread of its own once a command passes the mark.
    deadline = time.monotonic() + CHECKPOINT_SECONDS
    while server.api("GET", "/verification", key["key"])["checkpoint_count"] < 1:
        assert time.monotonic() < deadline, "no checkpoint written past the mark"
        time.sleep(0.05)  # poll the condition, not a guess at how long a checkpoint takes
    caught_up(server, key["key"])
    return {"key": key["key"], "player": player}


def test_a_run_on_a_range_passes_with_its_figures_and_the_checkpoints_are_listed(
        open_page, server, size, checkpointed):
    expect = _expect()
    key = checkpointed["key"]
    # The runs are a read model, which follows the log: each look waits until it has folded
    # the whole log.
    caught_up(server, key)
    before = server.api("GET", "/verification", key)
    page = open_page("/pages/verification", key)
    rows = page.locator("#checkpoints tbody tr[data-position]")
    expect(rows).to_have_count(len(before["checkpoints"]))
    newest = before["checkpoints"][0]
    first = rows.first
    expect(first.locator("code")).to_have_text(newest["digest"])
    expect(first).to_contain_text(f"{newest['first']}–{newest['last']}")
    fits_without_sideways_scroll(page)
    # Run over the last RANGE positions of the log, as the page shows it.
    head = before["head"]
    page.get_by_label("From position").fill(str(head - RANGE + 1))
    page.get_by_label("To position").fill(str(head))
    page.get_by_role("button", name="Run verification").click()
    expect(page.locator("#status")).to_contain_text(
        f"Verified positions {head - RANGE + 1} to {head}: everything holds.")
    # The last run shown becomes this one (the run shown before it, say the last parameter's,
    # also passed, and stays until the page has read the runs again): its range, then its figures.
    expect(page.locator("#last-result")).to_contain_text(
        f"positions {head - RANGE + 1:,} to {head:,}")
    expect(page.locator("#last-result")).to_contain_text("passed")
    caught_up(server, key)
    after = server.api("GET", "/verification", key)
    run = after["last"]
    assert (run["ok"], run["first"], run["last"], run["positions"]) == (
        True, head - RANGE + 1, head, RANGE)
    assert run["deals_checked"] > 0 and run["transfers"] > 0
    figures = page.locator("#figures")
    for field in ("positions", "events", "transfers", "deals_checked", "checkpoints"):
        expect(figures.locator(f"[data-field='{field}']")).to_have_text(f"{run[field]:,}")
    expect(page.locator("#runs tbody tr").first).to_have_attribute("data-run", run["id"])
    # Check the run names who ran it by the key's label and role, and its time plainly: no key
    # id, no fraction of a second.
    assert (run["by_label"], run["by_role"]) == ("verification page", "auditor")
    expect(figures.locator("[data-field='by']")).to_have_text("verification page (auditor)")
    expect(figures.locator("[data-field='finished_at']")).to_have_text(
        re.compile(r"^\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d:\d\d \S+$"))
    expect(page.locator("#limits")).not_to_contain_text("`")
    assert after["run_count"] == before["run_count"] + 1
    shoot(page, "verification", size)
    # The same range again finds the same: the page says so, and nothing new is recorded.
    page.get_by_role("button", name="Run verification").click()
    expect(page.locator("#status")).to_contain_text("nothing new was recorded")
    expect(page.locator("#status")).to_contain_text("by verification page (auditor)")
    assert server.api("GET", "/verification", key)["run_count"] == after["run_count"]
    # A range past the log's end is refused with the limit named; nothing is recorded. (Once
    # the run before has re-read the runs and drawn them, its button enabled again: drawing
    # them sets the fields' `max` to the log's end, which would undo the removal below.)
    expect(page.get_by_role("button", name="Run verification")).to_be_enabled()
    page.get_by_label("To position").fill(str(after["head"] + 10))
    page.get_by_label("To position").evaluate("(input) => input.removeAttribute('max')")
    page.get_by_role("button", name="Run verification").click()
    expect(page.locator("#status.error")).to_have_attribute("data-status", "422")
    expect(page.locator("#status.error")).to_contain_text("to must be at most")
    assert server.api("GET", "/verification", key)["run_count"] == after["run_count"]
    fits_without_sideways_scroll(page)


def test_a_player_is_refused(open_page, server, size, checkpointed):
    expect = _expect()
    page = open_page("/pages/verification", checkpointed["player"]["key"])
    expect(page.locator("#status.error")).to_have_attribute("data-status", "403")
    expect(page.locator("#checkpoints tbody tr[data-position]")).to_have_count(0)
    fits_without_sideways_scroll(page)
