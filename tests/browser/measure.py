"""Measure how the multi-seat page keeps current: `python -m tests.browser.measure`.

Starts `reddog serve` on a temporary SQLite store, seats three players at a polish table and
prints (1) the cost of one poll, `GET /tables/{id}` answered 200 and answered 304 (median and
95th percentile, bytes), and (2) how long after a player's command another player's page, in
chromium, shows it (median and worst of N commands). The figures are in docs/pages.md.
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from tests.e2e.load_harness import free_port, process_env, reddog_command
from tests.e2e.test_server import call

ROUNDS = 300
COMMANDS = 40


def timed_get(base: str, path: str, key: str, etag: str | None = None) -> tuple[float, int, int]:
    headers = {"Authorization": f"Bearer {key}"}
    if etag:
        headers["If-None-Match"] = etag
    request = urllib.request.Request(base + path, headers=headers)
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        body, status = error.read(), error.code
    return (time.perf_counter() - started) * 1000, status, len(body)


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    return (f"median {statistics.median(ordered):.1f} ms, p95 "
            f"{ordered[int(len(ordered) * 0.95) - 1]:.1f} ms, max {ordered[-1]:.1f} ms")


def main() -> None:
    directory = Path(tempfile.mkdtemp(prefix="reddog-measure-"))
    port = free_port()
    process = subprocess.Popen(
        [*reddog_command(), "serve", "--store", f"sqlite:///{directory / 'x.sqlite3'}", "--port",
         str(port), "--demo"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=process_env(), cwd=directory)
    try:
        operator = None
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("operator  key: "):
                operator = line.split(": ", 1)[1].strip()
            if line.startswith("API docs"):
                break
        base = f"http://127.0.0.1:{port}"
        while True:
            try:
                call(base, "GET", "/health")
                break
            except OSError:
                time.sleep(0.05)

        def api(method: str, path: str, key: str | None = None, body: object = None) -> dict:
            status, answer, _ = call(base, method, path, key or operator, body)
            assert status < 300, (path, status, answer)
            return answer

        table = api("POST", "/tables", body={"variant": "polish"})
        keys = []
        for seat in (1, 2, 3):
            wallet = api("POST", "/wallets", body={"player_id": f"m{seat}"})
            api("POST", f"/wallets/{wallet['id']}/grants", body={"amount": 100_000})
            api("POST", f"/tables/{table['id']}/seats", body={"seat": seat,
                                                               "wallet_id": wallet["id"]})
            keys.append(api("POST", "/keys", body={"role": "player", "player_id": f"m{seat}"})[
                "key"])
        path = f"/tables/{table['id']}"
        full, unchanged = [], []
        headers = call(base, "GET", path, keys[0])[2]
        etag = headers["ETag"]
        size_full = size_304 = 0
        for _ in range(ROUNDS):
            ms, status, size_full = timed_get(base, path, keys[0])
            full.append(ms)
            ms, status, size_304 = timed_get(base, path, keys[0], etag)
            assert status == 304
            unchanged.append(ms)
        print(f"poll answered 200 ({size_full} bytes): {summary(full)}")
        print(f"poll answered 304 ({size_304} bytes): {summary(unchanged)}")
        print(f"update seen by another page: {page_delays(base, table['id'], keys, api)}")
    finally:
        process.terminate()
        process.wait(timeout=10)


def page_delays(base: str, table_id: str, keys: list[str], api) -> str:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect, sync_playwright

    delays, after_answer = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium")
        # CSP bypassed here only, so the wait can be a per-frame check of the page's text
        # (Playwright's `expect` retries at 100, 250, 500 and 1,000 ms: too coarse to time).
        page = browser.new_page(bypass_csp=True)
        page.goto(f"{base}/sign-in?next=/pages/table%3Ftable%3D{table_id}")
        page.get_by_label("Your key").fill(keys[1])
        page.get_by_role("button", name="Sign in").click()
        expect(page.locator("article.seat")).to_have_count(3)
        for i in range(COMMANDS):
            # A seed change is a command any player's page sees (a new table version). Players
            # act at any moment of the page's poll cycle: wait a random part of it first (a
            # command sent just after the page's last poll waits the whole interval).
            time.sleep(random.uniform(0, 0.5))
            started = time.perf_counter()
            view = api("POST", f"/tables/{table_id}/client-seed", body={"client_seed": f"s{i}"})
            answered = time.perf_counter()
            page.wait_for_function(
                "v => document.querySelector('#updated').textContent.includes(v)",
                arg=f"Table version {view['version']},", polling="raf", timeout=5000)
            delays.append((time.perf_counter() - started) * 1000)
            after_answer.append((time.perf_counter() - answered) * 1000)
        browser.close()
    return (f"{len(delays)} commands, from sending: {summary(delays)}; from the command's "
            f"answer: {summary(after_answer)}")


if __name__ == "__main__":
    sys.exit(main())
