"""A report's CSV opens in a spreadsheet as text and numbers, never as a formula."""

from __future__ import annotations

import csv
import io

from ledger.app.reports import GROUP_DISPUTES, _empty_group, _finish, report_csv
from ledger.readmodels.fold import COUNTS


def group(key: str, net: int) -> dict:
    found = _empty_group(key)
    found["variants"] = {"casino"}
    found["banked_by"] = {"house"}
    found.update(paid_in=max(net, 0), paid_out=max(-net, 0), handle=100, house_handle=100,
                 hold=net)
    return _finish(found)


def test_cells_that_could_start_a_formula_are_written_as_text_and_numbers_stay_numbers():
    report = {"groups": [group("=HYPERLINK(\"x\")", -40), group("+1", 5), group("@sum", 0),
                         group("-alice", 0), group("table-1", 0)],
              "totals": group("all", -35)}
    rows = list(csv.DictReader(io.StringIO(report_csv(report))))
    # Check every key that a spreadsheet would evaluate starts with an apostrophe.
    assert [r["key"] for r in rows] == ["'=HYPERLINK(\"x\")", "'+1", "'@sum", "'-alice",
                                        "table-1", "all"]
    # Check a negative number is still written as a number.
    assert rows[0]["net"] == "-40" and rows[-1]["hold"] == "-35"
    assert set(COUNTS) <= set(rows[0])


def test_each_row_carries_its_disputes_and_the_totals_the_periods():
    disputed = {**group("table-1", 0), "disputes_opened": 2, "disputes_resolved": 1,
                "disputes_upheld": 1, "chips_adjusted": 40}
    report = {"groups": [disputed, group("table-2", 0)],
              "totals": {**group("all", 0), "disputes_opened": 3, "disputes_resolved": 1,
                         "disputes_upheld": 1, "chips_adjusted": 40}}
    rows = {r["key"]: r for r in csv.DictReader(io.StringIO(report_csv(report)))}
    assert [rows["table-1"][c] for c in GROUP_DISPUTES] == ["2", "1", "1", "40"]
    assert [rows["table-2"][c] for c in GROUP_DISPUTES] == ["", "", "", ""]
    assert rows["all"]["disputes_opened"] == "3"
