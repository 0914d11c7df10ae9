"""The documents stay true to the code."""

from pathlib import Path

from ledger.rules.catalog import RULES
from tests.rules_table import render, rule_to_tests

ROOT = Path(__file__).resolve().parents[2]
BUILT = ["G1", "G2", "G3", "G4", "G8", "G10"] + [f"C{i}" for i in range(1, 10)]


def test_docs_rules_md_is_the_current_rule_to_test_table():
    assert (ROOT / "docs" / "rules.md").read_text() == render()


def test_every_built_rule_is_named_by_at_least_one_test():
    found = rule_to_tests()
    assert [rule for rule in BUILT if not found.get(rule)] == []
    assert set(BUILT) <= set(RULES)


def test_readme_opens_with_the_two_commands():
    head = (ROOT / "README.md").read_text().split("\n\n", 2)[1]
    assert "make run" in head and "make test" in head
