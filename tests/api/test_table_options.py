"""Table options over HTTP: `POST /tables` refuses, for every variant, an option the variant does
not use and limits that contradict each other, with a 422 naming the option and the rule, and
records nothing (the pure checks are tests/unit/test_table_options.py).

Every test runs on the memory, SQLite and PostgreSQL stores (tests/api/conftest.py).
"""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

from ledger.app.application import LedgerApplication
from tests.api.conftest import Casino, Keys
from tests.api.helpers import assert_problem, memory_only, records_nothing

#: Per variant, an option it does not use and the rule that leaves it out (rules.md).
FOREIGN = {
    "high_card_pool": ("bank_min", 100, "H2"),
    "banked_red_dog": ("ante", 10, "H11"),
    "shoot": ("bank_fixed", 200, "S1"),
    "slippery_sam": ("centre_price", 5, "FW2"),
    "fort_wayne": ("ante", 10, "SS1"),
    "polish": ("ante", 10, "P1"),
    "six_spot": ("bank_fixed", 200, "X1"),
    "six_spot_banking": ("ante", 10, "XB1"),
}


def open_table(client: FlaskClient, keys: Keys, body: dict[str, Any]) -> Any:
    return client.post("/tables", headers=keys.operator, json=body)


def test_H2_H11_S1_FW2_SS1_P1_X1_XB1_C2_every_variant_refuses_an_option_it_does_not_use(
        client: FlaskClient, keys: Keys, ledger: LedgerApplication, casino: Casino) -> None:
    for variant, (option, value, rule) in FOREIGN.items():
        with records_nothing(ledger):
            response = open_table(client, keys, {"variant": variant, "limits": {option: value}})
            problem = assert_problem(response, 422, rule=rule, field=option)
        assert f"does not use {option}" in problem["detail"], problem
    # Check a casino table, whose limits its rules fix (C2), refuses a bank option by its name
    wallet = casino.open_wallet("alice")
    with records_nothing(ledger):
        response = open_table(client, keys, {"variant": "casino", "wallet_id": wallet["id"],
                                             "limits": {"bank_min": 100}})
        assert_problem(response, 422, rule="C2", field="bank_min")
        response = open_table(client, keys, {"variant": "casino", "wallet_id": wallet["id"],
                                             "limits": {}})
        assert_problem(response, 422, rule="C2", field="limits")
    # Check the control: the same variants open with the options they do use
    for variant in FOREIGN:
        assert open_table(client, keys, {"variant": variant}).status_code == 201, variant
    assert open_table(client, keys, {"variant": "casino",
                                     "wallet_id": wallet["id"]}).status_code == 201


def test_H5_P1_XB3_contradictory_limits_are_refused_naming_the_option_and_record_nothing(
        client: FlaskClient, keys: Keys, ledger: LedgerApplication) -> None:
    refused = [
        # Found by trying it: this opened, its minimum bet silently set to 10
        ("high_card_pool", {"min_bet": 500, "max_bet": 10}, "H5", "min_bet"),
        ("high_card_pool", {"ante": 500, "max_bet": 10}, "H5", "max_bet"),
        ("polish", {"bank_fixed": 700, "bank_max": 600}, "P1", "bank_fixed"),
        ("polish", {"bank_min": 300, "bank_max": 200}, "P1", "bank_max"),
        ("six_spot_banking", {"min_bet": 60, "bank_max": 50}, "XB3", "min_bet"),
    ]
    for variant, limits, rule, option in refused:
        with records_nothing(ledger):
            response = open_table(client, keys, {"variant": variant, "limits": limits})
            assert_problem(response, 422, rule=rule, field=option)
    opened = open_table(client, keys, {"variant": "high_card_pool",
                                       "limits": {"ante": 20, "max_bet": 300}})
    assert opened.status_code == 201, opened.get_json()
    # Check the table's answer shows the minimum bet is the ante, as H5 says
    assert {"ante": 20, "min_bet": 20, "max_bet": 300}.items() <= opened.get_json()[
        "limits"].items()


@memory_only
def test_the_document_says_which_variants_use_each_option(client: FlaskClient) -> None:
    options = client.get("/openapi.json").get_json()["components"]["schemas"][
        "TableLimitsArgs"]["properties"]
    # Check each option's description lists the variants whose tables take it, and only those
    assert options["ante"]["description"].endswith("Used by high_card_pool, six_spot")
    assert options["bank_fixed"]["description"].endswith("Used by polish, six_spot_banking")
    assert options["centre_price"]["description"].endswith("Used by fort_wayne")
    assert "high_card_pool" not in options["min_bet"]["description"].split("Used by")[1]
    assert options["max_bet"]["description"].endswith("Used by every multi-seat variant")
