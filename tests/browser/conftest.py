"""Browser tests: Debian's chromium driven by Playwright against a real `reddog serve`.

They skip, saying why, where Playwright or chromium is missing, except with `CI=true`, where
`.ci/run` installs chromium and a missing browser fails the run. Set REDDOG_SCREENSHOTS to a
directory (`docs/screenshots`) to have the tests save a picture of each page at each size.
"""

from __future__ import annotations

import os
import queue
import re
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from tests.e2e.load_harness import free_port, process_env, reddog_command, stop_process
from tests.e2e.test_server import call

CHROMIUM = Path(os.environ.get("REDDOG_CHROMIUM", "/usr/bin/chromium"))
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
STARTUP_SECONDS = 30
#: How long a page may take to show what another player did (it polls twice a second).
UPDATE_MS = 3000


def _browser_or_skip() -> None:
    missing = None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing = "Playwright is not installed (pip install -e '.[test]')"
    if missing is None and not CHROMIUM.exists():
        missing = f"no chromium at {CHROMIUM} (apt-get install -y chromium)"
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true needs the browser tests: {missing}")
        pytest.skip(f"browser tests skipped: {missing}")


#: How long an `expect` waits for its condition before it fails.
EXPECT_MS = 15_000


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Chromium, headless, for the whole session of this worker."""
    _browser_or_skip()
    from playwright.sync_api import expect, sync_playwright

    # What a test waits for (a condition, never a time) may take more than Playwright's 5 s on
    # this two-core machine while two workers' browsers and servers run beside each other.
    expect.set_options(timeout=EXPECT_MS)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield chromium
        chromium.close()


class Server:
    """A running `reddog serve --demo` on a SQLite file (`store`), the operator key it
    printed, and what it printed (`printed`: its lines so far)."""

    def __init__(self, base: str, operator: str, store: str = "",
                 printed: list[str] | None = None) -> None:
        self.base = base
        self.operator = operator
        self.store = store
        self.printed = printed if printed is not None else []

    def api(self, method: str, path: str, key: str | None = None, body: Any = None) -> Any:
        """One API call, asserting success; the answer's body."""
        status, answer, _ = call(self.base, method, path, key or self.operator, body)
        assert status < 300, (method, path, status, answer)
        return answer

    def api_text(self, path: str, key: str | None = None) -> str:
        """A GET answered with text (a hand history), asserting success."""
        request = urllib.request.Request(self.base + path, headers={
            "Authorization": f"Bearer {key or self.operator}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.read().decode()

    def player(self, grant: int, name: str | None = None) -> dict[str, Any]:
        """A new player: wallet, grant and player key."""
        player_id = name or f"p-{uuid4().hex[:10]}"
        wallet = self.api("POST", "/wallets", body={"player_id": player_id})
        if grant:
            wallet = self.api("POST", f"/wallets/{wallet['id']}/grants", body={"amount": grant})
        key = self.api("POST", "/keys", body={"role": "player", "player_id": player_id})["key"]
        return {"player_id": player_id, "wallet": wallet, "key": key}


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server per worker; each test makes players and tables of its own."""
    _browser_or_skip()
    directory = tmp_path_factory.mktemp("browser-server")
    port = free_port()
    store = f"sqlite:///{directory / 'x.sqlite3'}"
    # REDDOG_BROWSER_SERVE: more arguments for `reddog serve` (`--workers 2`: the pages against
    # a server of two workers, whose loops process folds the read models for both).
    command = [*reddog_command(), "serve", "--store", store, "--port", str(port), "--demo",
               *os.environ.get("REDDOG_BROWSER_SERVE", "").split()]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=process_env(), cwd=directory)
    lines: queue.Queue = queue.Queue()
    output: list[str] = []

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    try:
        operator = _banner(process, lines, output)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:  # the banner is printed before waitress listens
            try:
                if call(base, "GET", "/health")[0] == 200:
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"server not listening: {''.join(output)}")
                time.sleep(0.05)
        yield Server(base, operator, store, output)
    finally:
        stop_process(process)


def _banner(process: subprocess.Popen, lines: queue.Queue, output: list[str]) -> str:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline and process.poll() is None:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        if match := re.match(r"^operator\s+key: (rdl_\S+)$", line.strip()):
            return match[1]
    pytest.fail(f"server printed no operator key: {''.join(output)}")


@pytest.fixture(params=list(SIZES))
def size(request: pytest.FixtureRequest) -> str:
    """Each page test runs at desktop (1280×800) and phone (390×844) sizes, but for the few
    long flows marked `at_one_size`."""
    return request.param


def at_one_size(size: str) -> pytest.MarkDecorator:
    """Run a long flow at one size: one whose steps are clicks the size does not change (rapid
    repeated clicks making one command each), and that takes ten to twenty seconds a run. Every
    page's layout at both sizes is checked by `test_accessibility` (44 px targets, no sideways
    scroll), and the other flows run at both; the flows marked so are spread over the sizes."""
    assert size in SIZES
    return pytest.mark.parametrize("size", [size])


@pytest.fixture
def open_page(browser: Any, server: Server, size: str) -> Iterator[Any]:
    """Open a page in a fresh browser context (its own sessionStorage), signed in with a key."""
    contexts: list[Any] = []
    errors: list[str] = []

    def open_page(path: str, key: str | None = None, watch_links: bool = False) -> Any:
        context = browser.new_context(viewport=SIZES[size])
        contexts.append(context)
        page = context.new_page()
        if watch_links:  # record its POSTs and the links it held (`followed_links`)
            page.add_init_script(_WATCH_LINKS)
        page.on("pageerror", lambda error: errors.append(f"{page.url}: {error}"))
        if key is not None:
            sign_in(page, server.base, key, path)
        else:
            page.goto(server.base + path)
        return page

    yield open_page
    for context in contexts:
        context.close()
    assert not errors, f"the pages threw: {errors}"


#: Put in a page before its scripts: each POST the page sends is recorded with the `links` of
#: the last API answer the page received that had them (a table's or a deal's), read before the
#: page itself sees the answer.
_WATCH_LINKS = """(() => {
  const fetched = window.fetch.bind(window);
  if (location.protocol !== "http:") return;
  let last = null;  // kept across the tab's pages and reloads, as the posts are
  try { last = JSON.parse(sessionStorage.getItem("test-links")); } catch (error) { last = null; }
  const keep = (posts) => sessionStorage.setItem("test-posts", JSON.stringify(posts));
  window.fetch = async (path, options = {}) => {
    if ((options.method || "GET").toUpperCase() === "POST") {
      const posts = JSON.parse(sessionStorage.getItem("test-posts") || "[]");
      keep([...posts, {path: String(path), method: "POST", links: last}]);
    }
    const response = await fetched(path, options);
    try {
      const body = await response.clone().json();
      if (body && typeof body === "object" && body.links) {
        last = body.links;
        sessionStorage.setItem("test-links", JSON.stringify(last));
      }
    } catch (error) { /* a 304 or a text answer: no links */ }
    return response;
  };
})();"""


def followed_links(page: Any, unlinked: tuple[str, ...] = ()) -> list[str]:
    """Assert each POST the page (opened with `watch_links`) sent in its tab is the request that
    one of the `links` of the last answer it had received names (path and method), not an
    address it built itself; the paths matching a pattern of `unlinked` are actions no link
    names (taking a seat). The linked actions taken, in order."""
    taken = []
    for post in page.evaluate("JSON.parse(sessionStorage.getItem('test-posts') || '[]')"):
        path = post["path"].split("?")[0]
        if any(re.fullmatch(pattern, path) for pattern in unlinked):
            continue
        named = {name for name, link in (post["links"] or {}).items()
                 if link.get("href") == path and link.get("method") == post["method"]}
        assert named, f"POST {path} is not a request the last answer's links name: {post['links']}"
        taken.append(named.pop())
    return taken


def sign_in(page: Any, base: str, key: str, path: str) -> None:
    """Sign in with a key through the sign-in page's form, which then opens `path`."""
    from urllib.parse import quote

    from playwright.sync_api import expect

    page.goto(f"{base}/sign-in?next={quote(path, safe='')}")
    page.get_by_label("Your key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator(".signed-in")).to_be_visible()


def shoot(page: Any, name: str, size: str) -> None:
    """Check the page fits its window without sideways scrolling, then save a picture of it
    when REDDOG_SCREENSHOTS names a directory; a sign-in link on it is painted over (it is a
    key, even of a throwaway store)."""
    fits_without_sideways_scroll(page)
    directory = os.environ.get("REDDOG_SCREENSHOTS")
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(directory) / f"{name}-{size}.png"), full_page=True,
                        mask=[page.locator("#sign-in-link")])


def fits_without_sideways_scroll(page: Any) -> None:
    """Assert the page is no wider than its window: nothing scrolls sideways at this size."""
    widths = page.evaluate("""() => ({
        page: document.documentElement.scrollWidth,
        window: document.documentElement.clientWidth,
        wide: [...document.querySelectorAll('body *')]
            .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
            .slice(0, 5).map((e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
                + (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ')[0] : '')),
    })""")
    assert widths["page"] <= widths["window"], (
        f"{page.url} is {widths['page']} px wide in a {widths['window']} px window; "
        f"too wide: {widths['wide']}")
