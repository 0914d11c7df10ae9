"""One client of the load tests, run as its own process: `python -m tests.e2e.load_client CONFIG`.

CONFIG is a JSON file written by the harness (`tests/e2e/load_harness.py`). The client talks to
real `reddog serve` processes over HTTP with the standard library alone (so a hundred of them
start quickly and share nothing with the server), and appends one JSON line per HTTP attempt to
its records file: what it sent (method, path, body, Idempotency-Key), to which server, and what
came back (status, content type, answer) or why nothing did (`error`, `failure`).

Roles:

- `casino`: plays a casino table round after round: now and then an operator grant to its own
  wallet and a look at the table, then a deal; a deal left deciding is stood or raised. Two
  `casino` clients may share one table (through different servers): they then race to deal and
  to decide, and one of each race is refused by the rules.
- `table`: seats its players at a multi-seat table, then takes the table's legal actions (next
  deal, bank, bets, dealer's choice) as whichever player each belongs to, for a number of steps.
- `granter`: an operator granting chips to one wallet that other granters grant to at once.
- `verifier`: an auditor looping `POST /verification` over one range or several, for a time.
- `reader`: audit and player reads in a loop (reports as JSON and CSV, recall, the feed with
  and without filters and over a time window, statements, a wallet as of now, tables) until
  the harness's stop file appears.

Every command but a verifier's carries an Idempotency-Key. An attempt that gets no answer
(refused, reset, timed out: the outcome is unknown) is sent again, the same request with the
same key, until a server answers; so is a 409 "kept losing races", a 429 and a 5xx (which the
tests then report). Pauses between attempts only pace the retries; nothing here waits for
anything but an answer.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import socket
import sys
import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode, urlsplit

#: How long one attempt may wait for its answer.
REQUEST_SECONDS = 30.0
#: How long a command keeps being retried without a definite answer before the client gives up.
RETRY_SECONDS = 60.0
#: Attempts of one command that got 409 (lost races), 429 or 5xx before the client gives up.
MAX_REFUSED = 10


class Gave(Exception):
    """The client gave up on a command (no definite answer in time); the run is broken."""


class Connection:
    """A keep-alive HTTP connection to one server, opened again after any failure."""

    def __init__(self, base: str, timeout: float = REQUEST_SECONDS) -> None:
        self.base = base
        self.timeout = timeout
        parts = urlsplit(base)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self._conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, headers: dict[str, str], body: bytes | None
                ) -> tuple[int, str, dict[str, str], bytes]:
        if self._conn is None:
            self._conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            self._conn.request(method, path, body=body, headers=headers)
            response = self._conn.getresponse()
            data = response.read()
        except BaseException:
            self.close()
            raise
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        return (response.status, response.getheader("Content-Type", ""),
                {k.lower(): v for k, v in response.getheaders()}, data)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def failure_kind(error: BaseException) -> str:
    """Why an attempt got no answer: `refused` (nothing reached a server: not applied), or
    `in_flight` and `timeout` (the server may have applied it: the outcome is unknown)."""
    if isinstance(error, ConnectionRefusedError):
        return "refused"
    if isinstance(error, (socket.timeout, TimeoutError)):
        return "timeout"
    return "in_flight"


class Client:
    """Sends requests, retries commands with their key, records every attempt."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.name: str = config["name"]
        self.servers = [Connection(base, config.get("timeout", REQUEST_SECONDS))
                        for base in config["servers"]]
        self.mode: str = config.get("server_mode", "fixed")
        self.server_index: int = config.get("server", 0)
        self.rng = random.Random(config.get("seed", self.name))
        self.records = open(config["records"], "a", encoding="utf-8")  # noqa: SIM115
        self.sequence = 0
        self.commands = 0
        self.pace = config.get("pace", 0.0)

    def server(self) -> Connection:
        """The server of the next request: a fixed one, or the servers in turn."""
        if self.mode == "alternate":
            self.server_index = (self.server_index + 1) % len(self.servers)
        return self.servers[self.server_index % len(self.servers)]

    def record(self, entry: dict[str, Any]) -> None:
        self.sequence += 1
        entry.update(client=self.name, seq=self.sequence)
        self.records.write(json.dumps(entry, separators=(",", ":")) + "\n")
        self.records.flush()

    def attempt(self, method: str, path: str, key: str | None, body: Any, idem: str | None,
                op: str, keep_answer: bool = True, command: int | None = None
                ) -> tuple[int | None, Any, dict[str, str]]:
        """One HTTP attempt, recorded; (None, error text, {}) when no answer came."""
        headers = {"Accept": "application/json"}
        data = None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        if idem is not None:
            headers["Idempotency-Key"] = idem
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        server = self.server()
        started = time.time()
        entry: dict[str, Any] = {"op": op, "method": method, "path": path, "idem": idem,
                                 "body": body, "server": server.base, "command": command,
                                 "t0": round(started, 4)}
        try:
            status, content_type, headers_in, raw = server.request(method, path, headers, data)
        except (OSError, http.client.HTTPException) as error:
            entry.update(status=None, error=f"{type(error).__name__}: {error}",
                         failure=failure_kind(error), t1=round(time.time(), 4))
            self.record(entry)
            return None, entry["error"], {}
        try:
            answer = json.loads(raw) if raw and "json" in content_type else raw.decode()[:2000]
        except ValueError:
            answer = raw.decode(errors="replace")[:2000]
        entry.update(status=status, content_type=content_type, t1=round(time.time(), 4))
        if keep_answer or status >= 300:
            entry["answer"] = answer
        else:
            entry["summary"] = summarize(answer)
        if "retry-after" in headers_in:
            entry["retry_after"] = headers_in["retry-after"]
        self.record(entry)
        return status, answer, headers_in

    def get(self, path: str, key: str, op: str) -> tuple[int, Any]:
        """A player's read, sent again (paced) until a server answers it."""
        deadline = time.monotonic() + RETRY_SECONDS
        pause = 0.02
        while True:
            status, answer, _ = self.attempt("GET", path, key, None, None, op)
            if status is not None and status < 500:
                return status, answer
            if time.monotonic() > deadline:
                raise Gave(f"{self.name}: no answer to GET {path} within {RETRY_SECONDS}s: "
                           f"{answer}")
            time.sleep(pause)  # pacing the retries
            pause = min(pause * 2, 0.5)

    def command(self, method: str, path: str, key: str, body: Any, idem: str, op: str
                ) -> tuple[int, Any]:
        """Send a command until it has a definite answer; the same key on every attempt."""
        self.commands += 1
        number = self.commands
        deadline = time.monotonic() + RETRY_SECONDS
        refused = 0
        pause = 0.02
        while True:
            status, answer, headers = self.attempt(method, path, key, body, idem, op,
                                                   command=number)
            if status is not None and status < 500 and status not in (409, 429):
                return status, answer
            if status is not None:
                refused += 1
                conflict_of_races = status == 409 and "races" in str(answer)
                if refused >= MAX_REFUSED or (status == 409 and not conflict_of_races):
                    return status, answer
            if time.monotonic() > deadline:
                raise Gave(f"{self.name}: no answer to {op} {path} (key {idem}) within "
                           f"{RETRY_SECONDS}s: {answer}")
            wait = float(headers.get("retry-after", 0) or 0) if status == 429 else 0
            time.sleep(max(min(wait, 0.5), pause))  # pacing the retries
            pause = min(pause * 2, 0.5)

    def close(self) -> None:
        for server in self.servers:
            server.close()
        self.records.close()


def summarize(answer: Any) -> Any:
    """What a reader keeps of a large answer: its keys, the projection status, entry counts."""
    if not isinstance(answer, dict):
        return None
    summary: dict[str, Any] = {"keys": sorted(answer)[:20]}
    if isinstance(answer.get("projection"), dict):
        summary["projection"] = answer["projection"]
    for name in ("entries", "deals", "transfers", "groups"):
        if isinstance(answer.get(name), list):
            summary[name] = len(answer[name])
    for name in ("next", "end", "closing_balance", "totals"):
        if name in answer:
            summary[name] = answer[name]
    return summary


# Casino players.
def play_casino(client: Client) -> None:
    """Rounds of: maybe a grant, maybe a look at the table, a deal, a decision."""
    config = client.config
    table, wallet = config["table_id"], config["wallet_id"]
    player, operator = config["player_key"], config["operator_key"]
    bets = config.get("bets", [10, 50, 100])
    for round_ in range(config["rounds"]):
        tag = f"{client.name}-{round_}"
        if round_ % 7 == 3:
            client.command("POST", f"/wallets/{wallet}/grants", operator,
                           {"amount": config.get("grant", 200)}, f"grant-{tag}", "grant")
        if round_ % 3 == 0:
            client.get(f"/tables/{table}", player, "read_table")
        status, answer = client.command("POST", f"/tables/{table}/deals", player,
                                        {"bet": client.rng.choice(bets)}, f"deal-{tag}", "deal")
        if status == 201:
            deal = answer
        elif status == 422:  # another client's deal is in progress (G8), or a low balance
            status, view = client.get(f"/tables/{table}", player, "read_table")
            deal = view.get("current_deal") if status == 200 else None
            if not deal:
                continue
        else:
            continue
        if deal.get("phase") == "deciding":
            decide(client, deal, f"decide-{tag}")
        if client.pace:
            time.sleep(client.pace)  # pacing the loop
    finish_casino(client)


def decide(client: Client, deal: dict[str, Any], idem: str) -> None:
    """Stand, or now and then raise when the wallet covers it."""
    raise_it = "raise" in deal.get("legal_actions", []) and client.rng.random() < 0.3
    action = "raise" if raise_it else "stand"
    client.command("POST", f"/deals/{deal['id']}/{action}", client.config["player_key"], None,
                   idem, action)


def finish_casino(client: Client) -> None:
    """Leave no deal deciding: stand on the table's current deal if it waits for the player."""
    table = client.config["table_id"]
    for attempt in range(5):
        status, view = client.get(f"/tables/{table}", client.config["player_key"], "read_table")
        deal = view.get("current_deal") if status == 200 else None
        if not deal or deal.get("phase") != "deciding":
            return
        client.command("POST", f"/deals/{deal['id']}/stand", client.config["player_key"], None,
                       f"finish-{client.name}-{attempt}", "stand")


# Multi-seat tables.
def play_table(client: Client) -> None:
    """Seat every player, then take legal actions for `steps` steps."""
    config = client.config
    table = config["table_id"]
    operator = config["operator_key"]
    keys = {p["player_id"]: p["key"] for p in config["players"]}
    for p in config["players"]:
        client.command("POST", f"/tables/{table}/seats", p["key"],
                       {"seat": p["seat"], "wallet_id": p["wallet_id"]},
                       f"seat-{client.name}-{p['seat']}", "seat")
    status, view = client.get(f"/tables/{table}", operator, "read_table")
    for step in range(config["steps"]):
        if status != 200:
            raise Gave(f"{client.name}: the operator cannot read table {table}: {view}")
        action = choose(view["legal_actions"], client.rng)
        if action is None:
            break
        who = keys.get(action.get("player_id") or "", operator)
        path, body, op = table_command(table, action, client.rng)
        client.command("POST", path, who, body, f"{op}-{client.name}-{step}", op)
        # A player's answer shows only their own limits: look again as the operator.
        status, view = client.get(f"/tables/{table}", operator, "read_table")
        if client.pace:
            time.sleep(client.pace)  # pacing the loop


def choose(actions: list[dict[str, Any]], rng: random.Random) -> dict[str, Any] | None:
    """A legal action that moves the game on (never closing the table or splitting the pot)."""
    usable = [a for a in actions if a["action"] in ("deal", "fund_bank", "bet", "choose")
              and ("min" not in a or "max" not in a or a["min"] <= a["max"])]
    return usable[0] if usable else None


def table_command(table: str, action: dict[str, Any], rng: random.Random
                  ) -> tuple[str, dict[str, Any] | None, str]:
    """The request that takes a legal action: (path, body, op)."""
    kind = action["action"]
    path = f"/tables/{table}"
    if kind == "deal":
        return f"{path}/next-deal", {}, "next_deal"
    if kind == "fund_bank":
        low, high = action["min"], action.get("max") or action["min"]
        return f"{path}/bank", {"amount": min(2 * low, high)}, "bank"
    if kind == "bet":
        low, high = action["min"], action.get("max") or action["min"]
        return f"{path}/bets", {"seat": action["seat"],
                                "amount": rng.choice([low, min(2 * low, high)])}, "bet"
    if kind == "choose":
        return f"{path}/dealer-choice", {"choice": "pass"}, "choose"
    raise ValueError(f"unexpected action {action}")


# Operators granting to one shared wallet.
def grant_loop(client: Client) -> None:
    """Grants to one wallet that other granters (through other servers) grant to at once:
    every grant is valid, so they only race for the wallet's next version."""
    config = client.config
    wallet = config["wallet_id"]
    for number in range(config["grants"]):
        client.command("POST", f"/wallets/{wallet}/grants", config["operator_key"],
                       {"amount": client.rng.randint(1, 9)}, f"bonus-{client.name}-{number}",
                       "grant")
        if client.pace:
            time.sleep(client.pace)  # pacing the loop


# Readers.
def read_loop(client: Client) -> None:
    """Audit and player reads, in turn, until the stop file appears (or the deadline)."""
    config = client.config
    auditor = config["auditor_key"]
    players = config["players"]  # [{player_id, key, wallet_id, table_id}]
    today = time.strftime("%Y-%m-%d", time.gmtime())
    tomorrow = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 86400))
    deadline = time.monotonic() + config.get("seconds", 120)

    def reads() -> list[tuple[str, str, str]]:
        p = client.rng.choice(players)
        after = client.rng.choice([0, 0, 100, 1000])
        return [
            ("report", "/reports?" + urlencode({"since": today, "until": tomorrow,
                                                "group_by": client.rng.choice(
                                                    ["player", "table", "variant"])}), auditor),
            ("recall", f"/players/{p['player_id']}/recall?count=10", p["key"]),
            ("recall", f"/players/{p['player_id']}/recall", auditor),
            ("feed", f"/events?after={after}&limit=50", auditor),
            ("feed_player", f"/events?player={p['player_id']}&limit=50", auditor),
            ("feed_table", f"/events?table={p['table_id']}&type=Settled&limit=50", auditor),
            ("feed_type", f"/events?type=Wagered&type=Granted&after={after}&limit=50", auditor),
            ("feed_time", "/events?" + urlencode({
                "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 5)),
                "until": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 60)),
                "limit": 50}), auditor),
            ("report_csv", "/reports?" + urlencode({"since": today, "until": tomorrow,
                                                    "format": "csv"}), auditor),
            # Now to the microsecond: a whole second could fall before the wallet was opened.
            ("as_of", f"/wallets/{p['wallet_id']}/as-of?" + urlencode({
                "at": datetime.now(UTC).isoformat()}), p["key"]),
            ("statement", f"/wallets/{p['wallet_id']}/statement", auditor),
            ("statement", f"/wallets/{p['wallet_id']}/statement?limit=20", p["key"]),
            ("read_table", f"/tables/{p['table_id']}", auditor),
        ]

    while not os.path.exists(config["stop_file"]) and time.monotonic() < deadline:
        op, path, key = client.rng.choice(reads())
        status, _, headers = client.attempt("GET", path, key, None, None, op, keep_answer=False)
        if status == 429:
            time.sleep(min(float(headers.get("retry-after", 1)), 0.2))  # pacing, as asked
        elif status is None:
            time.sleep(0.1)  # the server is down (crash test): pace the loop
        elif client.pace:
            time.sleep(client.pace)


# Auditors looping verification runs.
def verify_loop(client: Client) -> None:
    """`POST /verification` over each of `ranges` in turn (one range: the same every time) with
    one auditor key for `seconds`, as fast as the servers answer: no Idempotency-Key and no
    pause for a Retry-After, as a careless or hostile loop sends them."""
    config = client.config
    ranges = config["ranges"]
    deadline = time.monotonic() + config["seconds"]
    sent = 0
    while time.monotonic() < deadline:
        first, last = ranges[sent % len(ranges)]
        sent += 1
        client.attempt("POST", "/verification", config["auditor_key"],
                       {"from": first, "to": last}, None, "verify")


ROLES = {"casino": play_casino, "table": play_table, "granter": grant_loop,
         "reader": read_loop, "verifier": verify_loop}


def main(path: str) -> int:
    with open(path, encoding="utf-8") as source:
        config = json.load(source)
    client = Client(config)
    try:
        ROLES[config["role"]](client)
    except Gave as error:
        print(error, file=sys.stderr)
        return 3
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
