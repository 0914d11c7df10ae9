"""The pages' scripts build markup only with `html```/`svg``` of common.js, which puts every
value in as a Text node or an attribute's value: no script parses a string as markup
(`innerHTML`, `outerHTML`, `insertAdjacentHTML`, `document.write`, `DOMParser`, ranges' fragments),
but the one place in common.js that parses a template's own text; no template puts a value in
an inline handler; and accounts are taken apart in one place, common.js's `parseAccount`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGES = Path(__file__).resolve().parents[2] / "api" / "static" / "pages"
SCRIPTS = sorted(PAGES.glob("*.js"))
#: What turns a string into markup, in any script.
PARSES_MARKUP = re.compile(r"\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write(ln)?|"
                           r"DOMParser|createContextualFragment|setHTMLUnsafe|parseHTMLUnsafe|"
                           r"srcdoc)\b")
#: The one line allowed: html`` parsing a template's own strings and markers (never a value).
TEMPLATE_PARSE = "  template.innerHTML = inSvg ? `<svg>${markup}</svg>` : markup;"
#: A value in an inline event handler attribute of a template (html`` throws on it too).
VALUE_IN_HANDLER = re.compile(r"""\son[a-z]+\s*=\s*["']?[^"'>]*\$\{""", re.IGNORECASE)
#: An account name taken apart by hand: splitting or slicing at its colon, or naming one.
ACCOUNT_PARSE = re.compile(r"""split\(\s*(":"|/:)|indexOf\(\s*":"\s*\)|["'`](wallet|pot|stake):""")


def test_the_pages_have_their_scripts():
    names = {path.name for path in SCRIPTS}
    assert {"common.js", "replay.js", "find.js", "wallet.js"} <= names
    assert len([name for name in names if name.startswith("replay")]) >= 4  # replay.js split


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_no_script_parses_a_string_as_markup(path):
    found = [(number, line.strip()) for number, line in enumerate(path.read_text().splitlines(), 1)
             if PARSES_MARKUP.search(line) and not line.startswith(TEMPLATE_PARSE)]
    assert found == [], f"{path.name} parses a string as markup: {found}"


def test_the_one_markup_parse_is_html_templates_own_text():
    lines = (PAGES / "common.js").read_text().splitlines()
    assert sum(line.startswith(TEMPLATE_PARSE) for line in lines) == 1
    assert "const html = (strings, ...values)" in "\n".join(lines)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_no_template_puts_a_value_in_an_inline_handler_and_none_escapes_by_hand(path):
    text = path.read_text()
    assert not VALUE_IN_HANDLER.search(text), path.name
    assert not re.search(r"\besc\(", text), f"{path.name} escapes by hand: use html``"


@pytest.mark.parametrize("path", [p for p in SCRIPTS if p.name != "common.js"],
                         ids=lambda p: p.name)
def test_accounts_are_taken_apart_only_by_parse_account(path):
    found = [line.strip() for line in path.read_text().splitlines() if ACCOUNT_PARSE.search(line)]
    assert found == [], f"{path.name} reads an account's name itself: {found}"


def test_the_checks_catch_what_they_forbid():
    assert PARSES_MARKUP.search('box.innerHTML = `<p>${name}</p>`;')
    assert PARSES_MARKUP.search('list.insertAdjacentHTML("beforeend", rows);')
    assert VALUE_IN_HANDLER.search('html`<img onerror="${x}">`')
    assert ACCOUNT_PARSE.search('const [kind, id] = account.split(":");')
    assert ACCOUNT_PARSE.search("const mine = `wallet:${id}`;")
