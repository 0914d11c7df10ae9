"""The `reddog` command line: deck, simulate, verify, keys, reports, hand histories, and the
input every option takes."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from api.cli import main
from tests.unit.test_fairness import VECTOR_1, VECTOR_2


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.mark.parametrize("vector", [VECTOR_1, VECTOR_2], ids=["table-1", "lobby"])
def test_G2_deck_prints_the_pack_of_a_seed_top_first_on_one_line(runner, vector):
    seed, client_seed, nonce, _commitment, pack = vector
    result = runner.invoke(main, ["deck", seed, client_seed, str(nonce)])
    assert result.exit_code == 0 and result.output == pack + "\n"


def test_deck_refuses_a_seed_that_is_not_64_hex_characters(runner):
    result = runner.invoke(main, ["deck", "abc", "table-1", "1"])
    assert result.exit_code == 2 and "server_seed" in result.output


def test_simulate_json_reports_the_counts_and_is_repeatable_with_a_seed(runner):
    args = ["simulate", "--variant", "casino", "--deals", "300", "--seed", "1234",
            "--store", "memory", "--json"]
    first = json.loads(runner.invoke(main, args).stdout)
    second = json.loads(runner.invoke(main, args).stdout)
    for volatile in ("seconds", "deals_per_second", "events_per_second"):
        first.pop(volatile), second.pop(volatile)
    assert first == second
    openings = ["consecutive", "pair", "trips"] + [f"spread_{s}" for s in range(1, 12)]
    assert sum(first[k] for k in openings) == first["deals"] == 300
    assert first["initial_staked"] == 300 * 100
    assert first["rtp_per_initial"] == pytest.approx(
        (first["initial_staked"] + first["returned"] - first["wagered"]) / first["initial_staked"])
    assert first["rtp_per_wagered"] == pytest.approx(first["returned"] / first["wagered"])


def test_simulate_with_never_raises_stakes_only_opening_bets(runner):
    args = ["simulate", "--deals", "200", "--strategy", "never", "--store", "memory", "--json"]
    result = json.loads(runner.invoke(main, args).stdout)
    assert result["wagered"] == result["initial_staked"] == 200 * 100


def test_keys_create_prints_a_key_once_and_refuses_a_player_key_without_a_player(runner, tmp_path):
    store = f"sqlite:///{tmp_path}/k.sqlite3"
    made = runner.invoke(main, ["keys", "create", "--role", "auditor", "--store", store])
    assert made.exit_code == 0 and made.output.startswith("rdl_")
    refused = runner.invoke(main, ["keys", "create", "--role", "player", "--store", store])
    assert refused.exit_code == 2 and "player_id" in refused.output


def test_keys_create_records_an_expiry_and_a_rate_limit_and_list_shows_the_label(runner,
                                                                                tmp_path):
    store = f"sqlite:///{tmp_path}/k.sqlite3"
    made = runner.invoke(main, ["keys", "create", "--role", "player", "--player", "alice",
                                "--label", "alice's phone", "--expires-in-days", "7",
                                "--rate-limit", "2.5", "--store", store])
    assert made.exit_code == 0, made.output
    key, record = made.stdout.strip(), json.loads(made.stderr)
    assert key.startswith("rdl_") and key not in made.stderr
    assert record["rate_limit"] == 2.5 and record["expires_at"] and record["issued_by"] == "system"
    listed = runner.invoke(main, ["keys", "list", "--store", store])
    assert listed.exit_code == 0
    [line] = listed.stdout.splitlines()
    assert line.startswith(record["key_id"]) and '"alice\'s phone"' in line
    assert "player=alice" in line and "last_used=-" in line and key not in listed.output


def test_keys_list_filters_and_hides_revoked_keys_unless_all_and_revoke_refuses_twice(runner,
                                                                                     tmp_path):
    store = f"sqlite:///{tmp_path}/k.sqlite3"
    ids = {}
    for name, role, player in (("ops", "operator", None), ("audit", "auditor", None),
                               ("alice", "player", "alice"), ("bob", "player", "bob")):
        args = ["keys", "create", "--role", role, "--label", name, "--store", store]
        made = runner.invoke(main, args + (["--player", player] if player else []))
        ids[name] = json.loads(made.stderr)["key_id"]
    revoked = runner.invoke(main, ["keys", "revoke", ids["bob"], "--store", store])
    assert revoked.exit_code == 0 and json.loads(revoked.stdout)["status"] == "revoked"
    again = runner.invoke(main, ["keys", "revoke", ids["bob"], "--store", store])
    assert again.exit_code == 1 and "already revoked" in again.output
    unknown = runner.invoke(main, ["keys", "revoke", "00000000-0000-0000-0000-000000000000",
                                   "--store", store])
    assert unknown.exit_code == 1 and "no API key" in unknown.output

    def listed(*options: str) -> set[str]:
        result = runner.invoke(main, ["keys", "list", "--json", *options, "--store", store])
        assert result.exit_code == 0, result.output
        answer = json.loads(result.stdout)
        assert answer["projection"]["behind"] == 0
        return {k["label"] for k in answer["keys"]}

    assert listed() == {"ops", "audit", "alice"}
    assert listed("--all") == {"ops", "audit", "alice", "bob"}
    assert listed("--role", "player", "--all") == {"alice", "bob"}
    assert listed("--player", "bob") == set() and listed("--player", "bob", "--all") == {"bob"}


@pytest.mark.parametrize("args, option", [
    (["create", "--role", "admin"], "--role"),
    (["create", "--role", "player"], "--player"),
    (["create", "--role", "player", "--player", "a|b"], "--player"),
    (["create", "--role", "auditor", "--player", "alice"], "--player"),
    (["create", "--role", "auditor", "--label", "a|b"], "--label"),
    (["create", "--role", "auditor", "--expires-in-days", "0"], "--expires-in-days"),
    (["create", "--role", "auditor", "--expires-in-days", "soon"], "--expires-in-days"),
    (["create", "--role", "auditor", "--rate-limit", "-1"], "--rate-limit"),
    (["create", "--role", "auditor", "--rate-limit", "fast"], "--rate-limit"),
    (["list", "--role", "admin"], "--role"),
    (["list", "--player", "x y"], "--player"),
    (["revoke", "not-a-key-id"], "KEY_ID"),
])
def test_keys_commands_exit_2_naming_the_bad_option(runner, tmp_path, args, option):
    result = runner.invoke(main, ["keys", *args, "--store", f"sqlite:///{tmp_path}/k.sqlite3"])
    assert result.exit_code == 2 and option in result.output, result.output


@pytest.mark.slow
def test_G10_a_2000_deal_sqlite_session_passes_verify(runner, tmp_path):
    """A long session (about 22,700 events: snapshots, and a checkpoint every 1,000) verifies."""
    store = f"sqlite:///{tmp_path}/session.sqlite3"
    simulated = runner.invoke(main, ["simulate", "--deals", "2000", "--seed", "5000",
                                     "--store", store, "--json"])
    assert simulated.exit_code == 0, simulated.output
    verified = runner.invoke(main, ["verify", "--store", store, "--json"])
    summary = json.loads(verified.stdout)
    assert verified.exit_code == 0 and summary["ok"], summary["failures"][:5]
    assert summary["deals_checked"] == 2000
    assert summary["positions"] > 20_000, summary


def test_verify_exits_non_zero_and_names_what_failed(runner, tmp_path):
    import sqlite3

    store = f"sqlite:///{tmp_path}/v.sqlite3"
    assert runner.invoke(main, ["simulate", "--deals", "20", "--store", store]).exit_code == 0
    assert runner.invoke(main, ["verify", "--store", store]).exit_code == 0
    with sqlite3.connect(f"{tmp_path}/v.sqlite3") as db:
        rowid, state = db.execute(
            "SELECT rowid, state FROM stored_events WHERE topic LIKE '%Wallet.Debited'"
        ).fetchone()
        text = bytes(state).decode()
        assert '"amount":100,' in text
        db.execute("UPDATE stored_events SET state = ? WHERE rowid = ?",
                   (text.replace('"amount":100,', '"amount":110,').encode(), rowid))
    result = runner.invoke(main, ["verify", "--store", store])
    assert result.exit_code == 1
    assert "FAILED position" in result.output and "wallet" in result.output


@pytest.mark.parametrize("variant", ["polish", "six_spot", "fort_wayne"])
def test_simulate_plays_a_multi_seat_variant_and_the_store_verifies(runner, tmp_path, variant):
    store = f"sqlite:///{tmp_path}/{variant}.sqlite3"
    result = runner.invoke(main, ["simulate", "--variant", variant, "--players", "4",
                                  "--turns", "120", "--seed", "77", "--store", store, "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["turns"] >= 120 and summary["wins"] <= summary["turns"]
    assert summary["win_rate"] == pytest.approx(summary["wins"] / summary["turns"])
    # Check the output shows how often each rarer rule was reached, and which rules were
    for key in ("partial_payouts", "banks_covered", "turns_skipped_covered", "stitch_rounds",
                "banks_emptied", "redeals", "centre_cards_bought", "bets_at_max"):
        assert isinstance(summary[key], int)
    assert "G7" in summary["rules_reached"]
    verified = runner.invoke(main, ["verify", "--store", store, "--json"])
    assert verified.exit_code == 0, verified.stdout
    assert json.loads(verified.stdout)["deals_checked"] >= summary["deals"]


SEED = "1e2fc081475efdfce8605e329764e46ca4843aaa5661b616aaa13112f2847834"
A_UUID = "d6fa2d3c-1bb6-4439-a5ba-3782afd5f9e7"
REPORT = ["report", "--since", "2026-03-01", "--until", "2026-03-02", "--store", "memory"]
#: Each command line with `{}` where one option or argument goes, and how click names it.
NAMED_VALUES = [
    (["deck", "{}", "table-1", "1"], "'SERVER_SEED'"),
    (["deck", SEED, "{}", "1"], "'CLIENT_SEED'"),
    (["deck", SEED, "table-1", "{}"], "'NONCE'"),
    (["simulate", "--deals", "1", "--store", "memory", "--seed", "{}"], "'--seed'"),
    (["simulate", "--deals", "1", "--store", "memory", "--variant", "{}"], "'--variant'"),
    (["simulate", "--deals", "1", "--store", "memory", "--strategy", "{}"], "'--strategy'"),
    (["replay", "{}", "--store", "memory"], "'DEAL_ID'"),
    (["statement", "{}", "--store", "memory"], "'WALLET_ID'"),
    (["history", "export", "{}", "--store", "memory"], "'DEAL_ID'"),
    ([*REPORT, "--table", "{}"], "'--table'"),
    ([*REPORT, "--variant", "{}"], "'--variant'"),
    ([*REPORT, "--player", "{}"], "'--player'"),
    ([*REPORT, "--group-by", "{}"], "'--group-by'"),
]


@pytest.mark.parametrize("bad", ["alice\n", "al\x00ice", "-", "#", "a|b", f"{A_UUID}\n",
                                 f"{SEED}\n", "1\n", "casino\n"])
@pytest.mark.parametrize(("args", "named"), NAMED_VALUES,
                         ids=[f"{a[0]} {n}" for a, n in NAMED_VALUES])
def test_an_id_seed_or_name_with_a_newline_control_character_or_marker_exits_2_naming_it(
        runner, args, named, bad):
    result = runner.invoke(main, [bad if arg == "{}" else arg for arg in args])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for {named}" in result.output


#: The free-text options, which take any printable text: they refuse what is not text at all.
FREE_TEXT = [
    (["keys", "create", "--role", "auditor", "--store", "memory", "--label", "{}"], "'--label'"),
    (["disputes", "resolve", A_UUID, "--upheld", "--store", "memory", "--finding", "{}"],
     "'--finding'"),
]


@pytest.mark.parametrize("bad", ["\udcff", "ok\udced\udca0\udc80"],
                         ids=["byte-ff", "encoded-surrogate"])
@pytest.mark.parametrize(("args", "named"), NAMED_VALUES + FREE_TEXT,
                         ids=[f"{a[0]} {n}" for a, n in NAMED_VALUES + FREE_TEXT])
def test_an_argument_whose_bytes_are_not_utf_8_exits_2_naming_it(runner, args, named, bad):
    """Python reads argument bytes that are not UTF-8 as lone surrogates (`surrogateescape`):
    no pattern passes them, free text included, so none reaches a hash, a JSON writer or a
    store."""
    result = runner.invoke(main, [bad if arg == "{}" else arg for arg in args])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for {named}" in result.output


def test_the_same_options_take_well_formed_values(runner):
    assert runner.invoke(main, ["deck", SEED, "table-1", "7"]).exit_code == 0
    report = runner.invoke(main, [*REPORT, "--table", A_UUID.upper(), "--variant", "polish",
                                  "--player", "alice.b-1", "--group-by", "player"])
    assert report.exit_code == 0, report.output
    assert json.loads(report.stdout)["empty"] is True
    missing = runner.invoke(main, ["replay", A_UUID, "--store", "memory"])
    assert missing.exit_code == 1 and "Invalid value" not in missing.output


def test_a_report_the_service_refuses_exits_2_naming_the_option(runner):
    result = runner.invoke(main, ["report", "--since", "2026-03-02", "--until", "2026-03-01",
                                  "--store", "memory"])
    assert result.exit_code == 2 and "Invalid value for '--until'" in result.output


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[str, dict]:  # type: ignore[type-arg]
    """A finished casino deal's hand history in a file, and the replay the store gives (the
    balances, which only the store's wallets know, aside)."""
    from uuid import UUID

    from ledger.app.access import SYSTEM
    from ledger.app.application import LedgerApplication
    from ledger.history.hands import export_history
    from ledger.integrity.verify import read_log
    from ledger.sim.bots import simulate_casino

    app = LedgerApplication.for_store("memory")
    simulate_casino(app, 1, seed="3c" * 16, bet=50)
    deal = next(UUID(str(e.originator_id)) for _p, e in read_log(app)
                if type(e).__name__ == "SeedRevealed")
    path = tmp_path_factory.mktemp("rdhh") / "deal.rdhh"
    path.write_text(export_history(app, deal))
    return str(path), app.deals.deal_log(SYSTEM, deal).replay()


def test_history_import_replays_a_file_or_stdin(runner, exported):
    path, replay = exported
    from_file = runner.invoke(main, ["history", "import", path, "--json"])
    assert from_file.exit_code == 0 and json.loads(from_file.stdout) == replay
    with open(path, "rb") as source:
        from_stdin = runner.invoke(main, ["history", "import", "-", "--json"], input=source)
    assert from_stdin.exit_code == 0 and json.loads(from_stdin.stdout) == replay


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_history_import_of_dev_zero_is_refused_at_once_exiting_2_naming_the_argument(runner):
    started = time.monotonic()
    result = runner.invoke(main, ["history", "import", "/dev/zero"])
    assert result.exit_code == 2
    assert "Invalid value for 'SOURCE': line 1: longer than 65536 bytes" in result.output
    assert time.monotonic() - started < 10


def test_history_import_of_a_file_of_one_huge_line_exits_2_naming_the_argument(runner, tmp_path):
    path = tmp_path / "huge.rdhh"
    path.write_bytes(b"RDHH/1\n" + b"#" * (1 << 20))
    result = runner.invoke(main, ["history", "import", str(path)])
    assert result.exit_code == 2 and "Invalid value for 'SOURCE': line 2: longer" in result.output


def test_history_import_of_a_malformed_history_exits_2_naming_the_line(runner, exported,
                                                                       tmp_path):
    path = tmp_path / "bad.rdhh"
    text = Path(exported[0]).read_text()
    path.write_text(text.replace("nonce: 1\n", "nonce: 1x\n"))
    result = runner.invoke(main, ["history", "import", str(path)])
    assert result.exit_code == 2
    assert "Invalid value for 'SOURCE': line 5: nonce must be a whole number" in result.output


def test_long_commands_report_progress_on_stderr_when_it_is_not_a_terminal(runner, tmp_path):
    store = f"sqlite:///{tmp_path}/p.sqlite3"
    simulated = runner.invoke(main, ["simulate", "--deals", "12", "--store", store, "--json"])
    assert simulated.exit_code == 0
    assert "casino deals: 12/12 (100%)" in simulated.stderr
    json.loads(simulated.stdout)  # the result alone on stdout
    verified = runner.invoke(main, ["verify", "--store", store, "--json"])
    positions = json.loads(verified.stdout)["positions"]
    assert re.search(rf"verifying positions: [\d,]+/{positions:,}", verified.stderr), verified.stderr
    folded = runner.invoke(main, ["project", "--store", store])
    assert folded.exit_code == 0 and "folding:" in folded.stderr
