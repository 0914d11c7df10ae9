"""Load, concurrency and crash tests: real `reddog serve` processes played by client processes.

Each test starts its servers on a store of its own, makes keys with `reddog keys create`, sets
up wallets and tables through the API, and then runs playing clients and readers at once
(`tests/e2e/load_client.py`), each recording every request and its answer. Afterwards it checks
the records (no 5xx; every 409 a conflict problem and no command lost; every casino wallet
holding what its clients' own answers say, every table dealing as many deals as were answered)
and the store (`reddog verify --read-models --json`, once the read models have caught up).

The sizes are parameters: REDDOG_LOAD_PLAYERS, REDDOG_LOAD_READERS, REDDOG_LOAD_ROUNDS (casino
rounds per player), REDDOG_LOAD_STEPS (actions per multi-seat table), REDDOG_LOAD_KILLS,
REDDOG_LOAD_GRANTERS and REDDOG_LOAD_GRANTS (operators granting to one shared wallet, and how
often each) raise them for a benchmark; the defaults keep the three tests near two minutes on
two cores.
REDDOG_LOAD_TIMEOUT (seconds a player waits for an answer, 30) makes impatient players.
The SQLite servers run with group commit (`REDDOG_GROUP_COMMIT`, docs/performance.md) on; the
crash test runs with it on and off.
"""

from __future__ import annotations

import itertools
import json
import os
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.load_harness import (
    Clients,
    Follower,
    Player,
    Records,
    ServerProcess,
    Setup,
    WitnessProcess,
    create_keys,
    feed,
    group_commit_figures,
    ok,
    process_env,
    report_days,
    sequence_gaps,
    statement_balances,
    verify,
    wait_for_projection,
    wait_until,
)

PLAYERS = int(os.environ.get("REDDOG_LOAD_PLAYERS", "8"))
READERS = int(os.environ.get("REDDOG_LOAD_READERS", "16"))
ROUNDS = int(os.environ.get("REDDOG_LOAD_ROUNDS", "25"))
STEPS = int(os.environ.get("REDDOG_LOAD_STEPS", "40"))
KILLS = int(os.environ.get("REDDOG_LOAD_KILLS", "2"))
#: Operators granting to one shared wallet at once (PostgreSQL), and grants each.
GRANTERS = int(os.environ.get("REDDOG_LOAD_GRANTERS", "4"))
GRANTS = int(os.environ.get("REDDOG_LOAD_GRANTS", "40"))
#: How long a player waits for an answer before it sends the command again (same key).
TIMEOUT = float(os.environ.get("REDDOG_LOAD_TIMEOUT", "30"))
#: Multi-seat variants played by the first clients (a bank, bets, next deals, dealer's choice).
MULTI_SEAT = ("polish", "shoot")
SEATS = 3
CLIENT_SECONDS = 150.0

pytestmark = pytest.mark.load


@pytest.fixture
def processes() -> Iterator[list[Any]]:
    """Everything a test starts; stopped (and its clients ended) whatever happens."""
    started: list[Any] = []
    yield started
    for thing in reversed(started):
        if isinstance(thing, Clients):
            thing.end_all()
        else:
            thing.stop()


def report(capsys: pytest.CaptureFixture[str], title: str, figures: dict[str, Any]) -> None:
    """Print the run's figures into the test output, captured or not."""
    with capsys.disabled():
        print(f"\n[{title}] {json.dumps(figures)}")


class Load:
    """One test's load: keys, players, tables, clients, and what they recorded."""

    def __init__(self, tmp_path: Path, store: str, servers: list[ServerProcess],
                 processes: list[Any]) -> None:
        self.tmp_path = tmp_path
        self.store = store
        self.servers = servers
        self.env = process_env()
        self.clients = Clients(tmp_path / "clients", self.env)
        processes.append(self.clients)
        self.casino: list[Player] = []
        self.tables: dict[str, list[Player]] = {}
        self.bonus: Player | None = None

    def prepare(self, players: int) -> None:
        """Keys from the CLI, then wallets and tables through the API: the first players
        share multi-seat tables of SEATS seats, the others have a casino table each."""
        multi = [f"m{t}-{s}" for t in range(min(len(MULTI_SEAT), players // 4)) for s in
                 range(SEATS)]
        solo = [f"p{i}" for i in range(players - len(multi) // SEATS)]
        keys = create_keys(self.store, self.env,
                           [("operator", None), ("auditor", None),
                            *[("player", p) for p in multi + solo]], self.tmp_path)
        self.operator, self.auditor = keys[0], keys[1]
        by_id = dict(zip(multi + solo, keys[2:], strict=True))
        for server in self.servers:
            server.start()
        setup = Setup(self.servers[0].base, self.operator)
        for t, variant in enumerate(MULTI_SEAT[:len(multi) // SEATS]):
            players_here = [Player(f"m{t}-{s}", by_id[f"m{t}-{s}"]) for s in range(SEATS)]
            table = setup.multi_seat(variant, players_here, f"m{t}")
            self.tables[table] = players_here
        for player_id in solo:
            player = Player(player_id, by_id[player_id])
            setup.casino(player)
            self.casino.append(player)

    def bases(self) -> list[str]:
        return [s.base for s in self.servers]

    def start_players(self, rounds: int, steps: int, pairs: int = 0,
                      server_mode: str = "fixed", **options: Any) -> None:
        """One client per casino player and per multi-seat table; with `pairs`, that many
        casino tables get a second client sending everything to the server after the first
        client's own (the first one, with `alternate`, goes to the servers in turn). `options`
        go into every player's config (`timeout`, `pace`: see load_client.py)."""
        common = {"servers": self.bases(), "operator_key": self.operator,
                  "auditor_key": self.auditor, "server_mode": server_mode, **options}
        for i, (table, players) in enumerate(self.tables.items()):
            self.clients.start(f"table{i}", {
                **common, "role": "table", "table_id": table, "steps": steps, "server": i,
                "players": [p.public() for p in players]})
        for i, player in enumerate(self.casino):
            config = {**common, "role": "casino", "table_id": player.table_id,
                      "wallet_id": player.wallet_id, "player_key": player.key,
                      "rounds": rounds, "server": i}
            self.clients.start(f"casino{i}", config)
            if i < pairs:
                self.clients.start(f"casino{i}b", {**config, "server": i + 1,
                                                   "server_mode": "fixed"})

    def start_granters(self, granters: int, grants: int) -> None:
        """Operators granting to one shared wallet at once, each through the servers in turn."""
        if not granters:
            return
        self.bonus = Player("bonus", "")
        Setup(self.servers[0].base, self.operator).wallet(self.bonus)
        for i in range(granters):
            self.clients.start(f"granter{i}", {
                "role": "granter", "servers": self.bases(), "server": i,
                "server_mode": "alternate", "operator_key": self.operator,
                "wallet_id": self.bonus.wallet_id, "grants": grants})

    def start_readers(self, readers: int) -> None:
        everyone = [p.public() for p in self.casino] + [
            p.public() for players in self.tables.values() for p in players]
        for i in range(readers):
            self.clients.start(f"reader{i}", {
                "role": "reader", "servers": self.bases(), "server": i,
                "server_mode": "alternate" if len(self.servers) > 1 else "fixed",
                "auditor_key": self.auditor, "players": everyone, "seconds": CLIENT_SECONDS})

    def finish(self) -> Records:
        """Wait for the players, then stop the readers; the records of all."""
        players = [n for n in self.clients.names() if n not in self.clients.names("reader")]
        self.clients.wait(players, CLIENT_SECONDS)
        self.clients.stop_readers()
        return self.clients.records()

    def outputs(self) -> str:
        return "\n".join(s.output() for s in self.servers)

    # Checks after the load.
    def check_records(self, records: Records, since: float = 0.0) -> None:
        errors = records.server_errors(since)
        assert not errors, f"{len(errors)} 5xx answers, first: {errors[:3]}\n{self.outputs()}"
        bad = records.bad_conflicts()
        assert not bad, f"409 answers that are not conflict problems: {bad[:3]}"
        unanswered = records.unanswered()
        assert not unanswered, f"commands without a definite answer: {unanswered[:3]}"
        problems = records.reader_problems()
        assert not problems, f"{len(problems)} bad reads, first: {problems[:3]}"

    def check_casino(self, records: Records) -> dict[str, int]:
        """Each casino wallet holds, and each table dealt, what the clients' answers say; the
        deals the log committed at each table are exactly those answered."""
        base = self.servers[0].base
        checked = {"wallets": 0, "deals": 0}
        for player in self.casino:
            committed = {e["aggregate_id"] for e in feed(
                base, self.auditor, f"table={player.table_id}&type=Committed")}
            answered = records.answered_deals(player.table_id)
            unanswered = records.attempts_around(player.table_id, committed - answered)
            assert committed == answered, (
                f"{player.player_id}: deals in the log that no deal command was answered with: "
                f"{unanswered}; answered deals not in the log: {answered - committed}")
            expected = records.expected_casino(player)
            wallet = _ok(base, f"/wallets/{player.wallet_id}", self.operator)
            table = _ok(base, f"/tables/{player.table_id}", self.operator)
            actual = {"balance": wallet["balance"], "granted": wallet["granted"],
                      "deals": table["deals"]}
            assert actual == expected, (player.player_id, actual, expected)
            checked["wallets"] += 1
            checked["deals"] += table["deals"]
        return checked

    def check_reads(self, records: Records) -> dict[str, int]:
        """What the reads say after the load: every statement adds up to its wallet's balance,
        and the report by player agrees with the casino clients' answers. During it, no client
        was shown an older version of anything than it had already seen."""
        base = self.servers[0].base
        stale = records.stale_reads()
        assert not stale, f"{len(stale)} stale answers, first: {stale[:3]}"
        everyone = self.casino + [p for players in self.tables.values() for p in players]
        for player in everyone:
            wallet = _ok(base, f"/wallets/{player.wallet_id}", self.operator)
            balances = statement_balances(base, self.auditor, player.wallet_id)
            assert balances == {"closing": wallet["balance"], "listed": wallet["balance"]}, (
                player.player_id, balances, wallet)
        report = _ok(base, f"/reports?{report_days()}&group_by=player", self.auditor)
        groups = {g["key"]: g for g in report["groups"]}
        for player in self.casino:
            expected = records.expected_report(player)
            line = groups.get(player.player_id, {})
            assert {k: line.get(k) for k in expected} == expected, (player.player_id, line,
                                                                     expected)
        return {"statements": len(everyone), "report_lines": len(self.casino)}

    def check_multi_seat(self, records: Records) -> dict[str, int]:
        """At each multi-seat table: every seat, bank and bet answered was recorded once, and
        the chips of its players' wallets, pot and stake add up to what was granted."""
        base = self.servers[0].base
        checked = {"tables": 0, "bets": 0}
        for table_id, players in self.tables.items():
            answered = {op: sum(1 for last, _ in records.final_answers(op)
                                if last["path"].startswith(f"/tables/{table_id}/"))
                        for op in ("seat", "bank", "bet")}
            logged = {op: sum(1 for _ in feed(base, self.auditor,
                                              f"table={table_id}&type={event}"))
                      for op, event in (("seat", "Seated"), ("bank", "BankFunded"),
                                        ("bet", "BetPlaced"))}
            assert logged == answered, (table_id, logged, answered)
            table = _ok(base, f"/tables/{table_id}", self.operator)
            wallets = [_ok(base, f"/wallets/{p.wallet_id}", self.operator) for p in players]
            assert sum(w["balance"] for w in wallets) + table["pot"] + (table["stake"] or 0) == (
                sum(w["granted"] for w in wallets)), (table, wallets)
            checked["tables"] += 1
            checked["bets"] += answered["bet"]
        return checked

    def catch_up(self) -> dict[str, Any]:
        """Wait for the read models to fold the whole log (the filtered feed reads them)."""
        started = time.monotonic()
        projection = wait_for_projection(self.servers[0].base, self.auditor)
        return {"projection": projection, "catch_up_s": round(time.monotonic() - started, 2)}

    def verify(self) -> dict[str, Any]:
        """`reddog verify --read-models --json` passes: tamper evidence, conservation,
        fairness, and read models equal to a fresh fold."""
        started = time.monotonic()
        code, summary, output = verify(self.store, self.env, self.tmp_path)
        assert code == 0 and summary.get("ok"), f"reddog verify failed:\n{output[-4000:]}"
        assert summary["read_models_compared"], "reddog verify did not compare the read models"
        return {"verify_s": round(time.monotonic() - started, 2),
                "positions": summary["positions"], "deals_checked": summary["deals_checked"]}

    def check_bonus(self, records: Records) -> dict[str, int]:
        """The shared wallet was granted exactly the grants answered 201, however many
        attempts lost races (409) on the way."""
        if self.bonus is None:
            return {}
        wallet = _ok(self.servers[0].base, f"/wallets/{self.bonus.wallet_id}", self.operator)
        granted = self.bonus.granted + records.granted(self.bonus.wallet_id)
        assert (wallet["granted"], wallet["balance"]) == (granted, granted), (wallet, granted)
        return {"shared_wallet_grants": wallet["version"] - 2}

    def check_all(self, records: Records) -> dict[str, Any]:
        """Every check after the load, in order; the figures of the run."""
        self.check_records(records)
        return {**records.summary(), **self.catch_up(), **self.check_casino(records),
                **self.check_multi_seat(records), **self.check_bonus(records),
                **self.check_reads(records), **self.verify()}


def _ok(base: str, path: str, key: str) -> Any:
    return ok(base, "GET", path, key)


def sqlite_server(tmp_path: Path, name: str = "server", group_commit: str = "on",
                  workers: int = 1) -> tuple[str, ServerProcess]:
    """A server on a SQLite file of the test's own, with group commit on or off
    (`REDDOG_GROUP_COMMIT`, docs/performance.md), of one process or of `workers` workers."""
    store = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    env = process_env(REDDOG_GROUP_COMMIT=group_commit)
    return store, ServerProcess(name, store, tmp_path / f"{name}.log", env, workers=workers)


def grouped(server: ServerProcess, key: str, group_commit: str, wrote: bool = True
            ) -> dict[str, float]:
    """The server's group commit figures since it (last) started (`key`: a staff key): with
    group commit on, its saves went through groups (some, when it `wrote`), never more
    transactions than saves; off, none."""
    figures = group_commit_figures(server.base, key)
    if group_commit == "off":
        assert not figures, figures
        return {}
    assert figures["group_commits"] <= figures["group_saves"], figures
    assert figures["group_saves"] > 0 or not wrote, figures
    return {**figures, "saves_per_commit": round(
        figures["group_saves"] / max(figures["group_commits"], 1), 2)}


@pytest.mark.parametrize("workers", [1, 2], ids=["one-process", "two-workers"])
def test_eight_players_and_sixteen_readers_on_one_sqlite_server_lose_and_invent_nothing(
        tmp_path, processes, capsys, workers):
    """Two workers share one folder of the read models (`SharedLoop`): it folds the saves of
    both, and `reddog verify --read-models` finds them equal to a fold from nothing."""
    if workers > 1:
        pytest.importorskip("gunicorn")
    started = time.monotonic()
    store, server = sqlite_server(tmp_path, group_commit="on", workers=workers)
    processes.append(server)
    load = Load(tmp_path, store, [server], processes)
    load.prepare(PLAYERS)
    load.start_players(ROUNDS, STEPS, timeout=TIMEOUT)
    load.start_readers(READERS)
    records = load.finish()
    played = time.monotonic() - started

    figures = {**load.check_all(records), **grouped(server, load.auditor, "on"), "load_s": round(played, 1),
               "total_s": round(time.monotonic() - started, 1)}
    report(capsys, f"sqlite, 1 server of {workers} process(es), group commit", figures)


@pytest.mark.parametrize("workers", [1, 2], ids=["one-process", "two-workers"])
def test_two_postgres_servers_and_a_projection_process_race_on_shared_tables_and_verify_with_gaps(
        postgres_schema, processes, tmp_path, capsys, workers):  # the schema outlives them
    """Under `--workers 2` each server also runs its loops process and its readers process,
    which serves the audit readers' reads."""
    if workers > 1:
        pytest.importorskip("gunicorn")
    started = time.monotonic()
    env = process_env(REDDOG_PROJECTIONS="off")
    servers = [ServerProcess(f"server{i}", postgres_schema, tmp_path / f"server{i}.log", env,
                             workers=workers) for i in range(2)]
    processes.extend(servers)
    load = Load(tmp_path, postgres_schema, servers, processes)
    load.prepare(PLAYERS)  # the keys' process makes the chain key before any server starts
    follower = Follower(postgres_schema, tmp_path / "follower.log", env).start()
    processes.append(follower)
    # Half the casino tables are played by two clients at once, one through each server;
    # every other client sends its requests to the two servers in turn.
    load.start_players(ROUNDS, STEPS, pairs=len(load.casino) // 2, server_mode="alternate",
                       timeout=TIMEOUT)
    load.start_granters(GRANTERS, GRANTS)
    load.start_readers(READERS)
    records = load.finish()
    played = time.monotonic() - started

    figures = load.check_all(records)
    schema = postgres_schema.rsplit("schema=", 1)[1]
    gaps = sequence_gaps(postgres_schema.split("?")[0], schema)
    assert follower.process is not None and follower.process.poll() is None, follower.output()
    report(capsys, f"postgres, 2 servers of {workers} process(es) + project --follow", {
        **figures, "sequence": gaps, "load_s": round(played, 1),
        "total_s": round(time.monotonic() - started, 1)})


def witnessed_server(tmp_path: Path, processes: list[Any], group_commit: str, workers: int = 1
                     ) -> tuple[str, ServerProcess, list[WitnessProcess], Any]:
    """A SQLite server whose public log two witness processes cosign: the log's signing key is
    made first, so the witnesses know it before the server names them (REDDOG_WITNESSES)."""
    from ledger.core import tlog

    signer = tlog.Signer.generate("reddog.invalid/load")
    key_file = tmp_path / "ledger.sqlite3.signing-key"
    key_file.write_text(signer.text() + "\n")
    key_file.chmod(0o600)
    env = process_env()
    witnesses = [WitnessProcess(f"witness.test/w{i}", tmp_path / f"witness{i}",
                                signer.verifier().text(), env).start() for i in (1, 2)]
    processes.extend(witnesses)
    store, server = sqlite_server(tmp_path, group_commit=group_commit, workers=workers)
    server.env["REDDOG_WITNESSES"] = " ".join(w.setting for w in witnesses)
    return store, server, witnesses, signer.verifier()


def check_public_log(server: ServerProcess, operator: str, witnesses: list[WitnessProcess],
                     log_key: Any) -> dict[str, Any]:
    """After kills and restarts: a checkpoint of the whole log, signed on demand, is cosigned
    by both witnesses (each cosigns only what is consistent with what it cosigned before,
    across the kills), and every checkpoint the log signed is consistent with the next."""
    import base64

    from ledger.core import tlog

    signed = ok(server.base, "POST", "/log/checkpoints", operator, status=201)
    size = signed["size"]

    def note(size: int) -> str:
        with urllib.request.urlopen(f"{server.base}/log/checkpoints/{size}",
                                    timeout=10) as answer:
            return answer.read().decode()

    def cosigned() -> bool:
        text = note(size)
        for witness in witnesses:
            try:
                tlog.verify_cosignature(text, tlog.Verifier.from_text(witness.verifier))
            except tlog.NoteError:
                return False
        return True

    wait_until(cosigned, 30, "both witnesses cosigning the newest checkpoint")
    sizes, least = [], 0
    while True:
        page = ok(server.base, "GET", f"/log/checkpoints?from={least}", operator)
        sizes += page["sizes"]
        if page["next"] is None:
            break
        least = page["next"]
    roots = {}
    for each in sizes:
        roots[each] = tlog.open_checkpoint(note(each), log_key).root
    for old, new in itertools.pairwise(sizes):
        proof = ok(server.base, "GET", f"/log/proof/consistency?from={old}&to={new}", operator)
        tlog.verify_consistency(old, new, roots[old], roots[new],
                                [base64.b64decode(h) for h in proof["proof"]])
    return {"checkpoints_signed": len(sizes), "tree_size": size}


@pytest.mark.parametrize(("group_commit", "workers"), [("on", 1), ("off", 1), ("on", 2)],
                         ids=["group-commit-on", "group-commit-off", "two-workers"])
def test_a_server_killed_mid_load_and_restarted_applies_every_retried_command_exactly_once(
        group_commit, workers, tmp_path, processes, capsys):
    """Under `--workers 2`, every process of the server is killed at once (its loops and
    readers processes too) and the server started again."""
    started = time.monotonic()
    store, server, witnesses, log_key = witnessed_server(tmp_path, processes, group_commit,
                                                         workers)
    processes.append(server)
    load = Load(tmp_path, store, [server], processes)
    load.prepare(PLAYERS)
    load.start_players(ROUNDS, STEPS, timeout=TIMEOUT)
    load.start_readers(max(READERS // 4, 1))
    players = [n for n in load.clients.names() if n not in load.clients.names("reader")]

    kills = []
    for kill in range(KILLS):
        # Kill once the clients have made some progress since the last restart.
        target = load.clients.count_records() + 150
        wait_until(lambda target=target: load.clients.count_records() >= target
                   or not load.clients.running(players), 60, "the load making progress")
        if not load.clients.running(players):
            break
        server.kill()
        killed_at = time.time()
        server.restart()
        kills.append({"killed_at": killed_at, "back_after_s": round(time.time() - killed_at, 2)})
    assert kills, "the players finished before the server could be killed: raise ROUNDS"
    records = load.finish()
    played = time.monotonic() - started

    figures = {**load.check_all(records),  # `reddog verify`: the tree equals the log too
               **check_public_log(server, load.operator, witnesses, log_key)}
    unknown = records.unknown_outcomes()
    assert unknown, "no command was in flight at any kill: the test tested nothing"
    figures = {**figures, "kills": len(kills), "restart_s": [k["back_after_s"] for k in kills],
               "applied_before_kill": applied_before_kill(records, kills),
               **grouped(server, load.auditor, group_commit, wrote=False),
               "load_s": round(played, 1), "total_s": round(time.monotonic() - started, 1)}
    report(capsys, f"sqlite, {workers} process(es) killed and restarted, group commit "
                   f"{group_commit}", figures)


def applied_before_kill(records: Records, kills: list[dict[str, Any]]) -> int:
    """Of the commands whose outcome a kill made unknown, how many the server had applied
    before it died (a deal answer's `updated_at` says when it was recorded)."""
    from datetime import datetime

    count = 0
    for attempts in records.commands().values():
        if not any(a["status"] is None and a.get("failure") != "refused" for a in attempts):
            continue
        answer = attempts[-1].get("answer")
        if isinstance(answer, dict) and "updated_at" in answer:
            recorded = datetime.fromisoformat(answer["updated_at"]).timestamp()
            if any(recorded < k["killed_at"] for k in kills if k["killed_at"] > attempts[0]["t0"]):
                count += 1
    return count
