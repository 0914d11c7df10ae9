"""The accessibility checks of the browser tests: axe-core (the npm package pinned in
`tests/browser/package.json`, installed by `npm ci` into `tests/browser/node_modules`) run in a
page with the WCAG 2.2 A and AA rules, and the project's own promise of 44 px touch targets.

Like chromium, axe is needed only where it is checked: without it the check skips saying so,
except with `CI=true`, where it fails.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
#: The axe-core tags of WCAG 2.0, 2.1 and 2.2 at levels A and AA.
WCAG_22_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
#: The smallest touch target the pages promise (docs/pages.md, "Accessibility"), in CSS px.
TARGET_PX = 44

#: Runs axe over the whole document; each violation with the rule, its help and where it is.
_RUN_AXE = """async (tags) => {
  const result = await axe.run(document, {runOnly: {type: "tag", values: tags},
                                          resultTypes: ["violations"]});
  return result.violations.map((v) => ({
    rule: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map((n) => ({target: n.target.join(" "),
                                             why: n.failureSummary}))}));
}"""

#: Every visible control smaller than the promised target: buttons, fields, menus and the
#: header's links (a link inside a sentence is not a target of its own).
_SMALL_TARGETS = """(px) => [...document.querySelectorAll(
    'button, select, input:not([type=checkbox]):not([type=radio]):not([type=hidden]), '
    + 'header a, nav a, .tabs a, .actions a, td > a')]
  .filter((e) => e.offsetParent !== null || getComputedStyle(e).position === 'fixed')
  .map((e) => [e, e.getBoundingClientRect()])
  .filter(([e, r]) => r.width > 0 && (r.height < px - 0.5 || r.width < px - 0.5))
  .slice(0, 10)
  .map(([e, r]) => `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''} "${
    (e.textContent || e.getAttribute('aria-label') || e.name || '').trim().slice(0, 30)}" `
    + `${Math.round(r.width)}×${Math.round(r.height)}`)"""


def axe_source() -> str:
    """axe-core's script, or a skip (a failure with CI=true) saying how to install it."""
    if not AXE.exists():
        missing = f"no axe-core at {AXE} (npm ci --prefix tests/browser)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true needs the accessibility checks: {missing}")
        pytest.skip(f"accessibility checks skipped: {missing}")
    return AXE.read_text()


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """axe-core's WCAG 2.2 A and AA violations on the page as it is now. The script is put in
    by the browser's debugging protocol, which the page's Content-Security-Policy (no inline
    script) does not govern."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(axe_source())
    return page.evaluate(_RUN_AXE, WCAG_22_AA)


def small_targets(page: Any) -> list[str]:
    """The visible controls smaller than TARGET_PX on either side, described."""
    return page.evaluate(_SMALL_TARGETS, TARGET_PX)


def accessible(page: Any, targets: bool = True) -> None:
    """Assert axe finds no WCAG 2.2 A or AA violation on the page and, with `targets`, that
    every control is at least TARGET_PX square."""
    violations = axe_violations(page)
    assert not violations, f"{page.url}: axe-core found " + "; ".join(
        f"{v['rule']} ({v['impact']}: {v['help']}) at {[n['target'] for n in v['nodes']]}: "
        f"{v['nodes'][0]['why'] if v['nodes'] else ''}" for v in violations)
    small = small_targets(page) if targets else []
    assert not small, f"{page.url}: controls under {TARGET_PX} px: {small}"
