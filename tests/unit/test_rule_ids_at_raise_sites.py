"""Every refusal names its rule where it is raised: `grep -rn <ID> ledger` lands on the raise.

Each `RuleViolation(...)` in `ledger/` and `api/` is read from its source: its rule must be a
string literal there, a choice between literals (`"FW3" if ... else BET_RULE[v.name]`), a
look-up in a dict literal of the same module (`BET_RULE[v.name]`, `FUNDING_RULE.get(name, "G8")`),
whose values are then literals of that module, or in a dict literal that the module imports by
name from a module of its own package (the high-card actions import `BET_RULE` from
`ledger.rules.highcard.limits`), whose values are literals of that module, or a parameter whose
type is a `Literal[...]` of them written in that module (`rule: Overdraft`,
`Overdraft = Literal["C2", "C6", "G8"]`).
A raise in a method (each high-card action is a class whose `verify` raises) is read the same
way as one in a function.
Anything else (a rule passed in as any string, read from a variant's data, built at run time)
fails here, naming the file and line.

Then docs/rules.md's side: every rule whose tests prove a refusal (a test name that says
"refused", "refuses", "refusal") must be among the rules so written, and every rule so written
must be one docs/rules.md lists.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from ledger.rules.highcard import actions, limits
from ledger.rules.variants import VARIANTS, Funding

ROOT = Path(__file__).resolve().parents[2]
RULES_MD = ROOT / "docs" / "rules.md"
ROW = re.compile(r"^\| (?P<id>[A-Z]+\d+) \| (?P<what>[^|]*) \| (?P<tests>.*) \|$")


def documented_rules() -> dict[str, str]:
    """Rule ID -> the tests column of its row in docs/rules.md."""
    rows = (ROW.match(line) for line in RULES_MD.read_text().splitlines())
    return {row["id"]: row["tests"] for row in rows if row}


def literal_strings(node: ast.expr | None, aliases: dict[str, set[str]]) -> set[str] | None:
    """The strings of `Literal["a", "b"]` (or of a module-level alias of one), else None."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
            and node.value.id == "Literal"):
        return None
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if all(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items):
        return {i.value for i in items}  # type: ignore[attr-defined]
    return None


def literal_aliases(tree: ast.Module) -> dict[str, set[str]]:
    """Module-level `NAME = Literal["a", "b"]`: the strings of each such alias."""
    found: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name):
            strings = literal_strings(node.value, {})
            if strings is not None:
                found[node.targets[0].id] = strings
    return found


def literal_maps(tree: ast.Module) -> dict[str, set[str]]:
    """Module-level `NAME = {...: "literal", ...}`: the string values of each such dict."""
    found: dict[str, set[str]] = {}
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and isinstance(value, ast.Dict) and value.values and all(
                isinstance(v, ast.Constant) and isinstance(v.value, str) for v in value.values):
            found[target.id] = {v.value for v in value.values}  # type: ignore[union-attr]
    return found


def module_source(module: str) -> str | None:
    """The source of a module of this tree by its dotted name; None when there is none."""
    path = ROOT.joinpath(*module.split(".")).with_suffix(".py")
    return path.read_text() if path.is_file() else None


def imported_maps(tree: ast.Module, package: str,
                  source_of: Callable[[str], str | None]) -> dict[str, set[str]]:
    """Dict literals a module imports by name from a module of its own package `package`
    (`from ledger.rules.highcard.limits import BET_RULE`, or `from .limits import BET_RULE`):
    the string values of each as that module writes them. A name imported from any other
    package, or that is not such a dict literal there, is not one."""
    found: dict[str, set[str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or node.module is None or node.level > 1:
            continue
        module = f"{package}.{node.module}" if node.level else node.module
        if module.rpartition(".")[0] != package or (source := source_of(module)) is None:
            continue
        maps = literal_maps(ast.parse(source))
        for alias in node.names:
            if alias.name in maps:
                found[alias.asname or alias.name] = maps[alias.name]
    return found


def rules_of(arg: ast.expr, maps: dict[str, set[str]],
             params: dict[str, set[str]] | None = None) -> set[str] | None:
    """The rule IDs a raise site's first argument can be, when they are literals of its
    module; None when they are not. `params`: the enclosing function's parameters typed as
    literals."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return {arg.value}
    if isinstance(arg, ast.Name) and params and arg.id in params:
        return params[arg.id]
    if isinstance(arg, ast.IfExp):
        body, orelse = rules_of(arg.body, maps, params), rules_of(arg.orelse, maps, params)
        return None if body is None or orelse is None else body | orelse
    if isinstance(arg, ast.Subscript) and isinstance(arg.value, ast.Name):
        return maps.get(arg.value.id)
    if (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute)
            and arg.func.attr == "get" and isinstance(arg.func.value, ast.Name)
            and arg.func.value.id in maps and len(arg.args) == 2):
        default = rules_of(arg.args[1], maps, params)
        return None if default is None else maps[arg.func.value.id] | default
    return None


def raise_sites(source: str, package: str = "",
                source_of: Callable[[str], str | None] = module_source,
                ) -> list[tuple[int, set[str] | None]]:
    """(line, rule IDs or None) of every `RuleViolation(...)` built in a module's source;
    `package`: the module's package (dotted), whose modules' dict literals it may import."""
    tree = ast.parse(source)
    maps = {**imported_maps(tree, package, source_of), **literal_maps(tree)} if package else (
        literal_maps(tree))
    aliases = literal_aliases(tree)
    params_at: dict[int, dict[str, set[str]]] = {}  # call node id -> its function's literals
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            typed = {a.arg: strings for a in function.args.args + function.args.kwonlyargs
                     if (strings := literal_strings(a.annotation, aliases)) is not None}
            for inner in ast.walk(function):
                params_at[id(inner)] = typed
    return [(node.lineno, rules_of(node.args[0], maps, params_at.get(id(node)))
             if node.args else None)
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "RuleViolation"]


def all_raise_sites() -> dict[str, list[tuple[int, set[str] | None]]]:
    sites = {}
    for folder in ("ledger", "api"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            package = ".".join(path.relative_to(ROOT).parts[:-1])
            found = raise_sites(path.read_text(), package)
            if found:
                sites[str(path.relative_to(ROOT))] = found
    return sites


def test_every_refusal_names_its_rule_by_literals_of_its_own_module():
    unresolved = [f"{path}:{line}" for path, sites in all_raise_sites().items()
                  for line, rules in sites if rules is None]
    assert unresolved == []


def test_every_rule_a_refusal_names_is_listed_in_the_rules_document():
    documented = documented_rules()
    named = {rule for sites in all_raise_sites().values() for _, rules in sites
             for rule in rules or ()}
    assert sorted(named - set(documented)) == []


def test_every_rule_proved_by_a_refusal_is_written_where_it_is_raised():
    named = {rule for sites in all_raise_sites().values() for _, rules in sites
             for rule in rules or ()}
    refused = {rule for rule, tests in documented_rules().items()
               if re.search(r"refused|refuses", tests)}
    assert refused, "docs/rules.md lists no refusal tests"
    assert sorted(refused - named) == []


def test_a_rule_read_from_elsewhere_is_caught():
    source = (
        "BET = {'a': 'H5'}\n"
        "def f(v, rule):\n"
        "    raise RuleViolation(BET[v], 'x')\n"
        "def g(v):\n"
        "    raise RuleViolation(v.rules['bet'], 'x')\n"
        "def h(rule):\n"
        "    raise RuleViolation(rule, 'x')\n"
        "def i(v):\n"
        "    raise RuleViolation('FW3' if v else BET.get(v, 'G8'), 'x')\n"
        "Why = Literal['C2', 'C6']\n"
        "def j(rule: Why, other: str):\n"
        "    raise RuleViolation(rule, 'x')\n"
        "def k(rule: Why, other: str):\n"
        "    raise RuleViolation(other, 'x')\n"
        "class Buy(Action):\n"
        "    def verify(self, v):\n"
        "        raise RuleViolation(v.rules['buy'], 'x')\n"
        "    def can(self, rule: Why):\n"
        "        raise RuleViolation(rule if self else BET[self.variant.name], 'x')\n"
        "    def __call__(self):\n"
        "        raise RuleViolation('FW2', 'x')\n"
    )
    assert raise_sites(source) == [(3, {"H5"}), (5, None), (7, None), (9, {"FW3", "H5", "G8"}),
                                   (12, {"C2", "C6"}), (14, None), (17, None),
                                   (19, {"C2", "C6", "H5"}), (21, {"FW2"})]


def test_a_table_imported_from_a_module_of_the_same_package_counts_and_no_other():
    sources = {"pkg.sub.rules": "BET = {'a': 'H5'}\nBUILT = dict(a='H6')\n",
               "pkg.other": "FAR = {'a': 'S3'}\n", "pkg.sub.deeper.rules": "DEEP = {'a': 'P1'}\n"}
    source = (
        "from pkg.sub.rules import BET\n"
        "from .rules import BET as TABLE, BUILT\n"
        "from pkg.other import FAR\n"
        "from pkg.sub.deeper.rules import DEEP\n"
        "def f(v):\n"
        "    raise RuleViolation(BET[v], 'x')\n"
        "def g(v):\n"
        "    raise RuleViolation(TABLE.get(v, 'G8'), 'x')\n"
        "def h(v):\n"
        "    raise RuleViolation(BUILT[v], 'x')\n"
        "def i(v):\n"
        "    raise RuleViolation(FAR[v], 'x')\n"
        "def j(v):\n"
        "    raise RuleViolation(DEEP[v], 'x')\n"
    )
    assert raise_sites(source, "pkg.sub", sources.get) == [
        (6, {"H5"}), (8, {"H5", "G8"}), (10, None), (12, None), (14, None)]
    assert raise_sites(source) == [(6, None), (8, None), (10, None), (12, None), (14, None)]


def test_the_high_card_actions_name_the_rules_of_the_tables_they_share_with_the_limits():
    """The rule IDs a table's configuration and its actions both refuse by are written once,
    in the limits, and read there for the actions' raise sites."""
    tree = ast.parse((ROOT / "ledger/rules/highcard/actions.py").read_text())
    shared = imported_maps(tree, "ledger.rules.highcard", module_source)
    assert set(shared) == {"PLAYERS_RULE", "BET_RULE", "FUNDING_RULE"}
    assert not set(shared) & set(literal_maps(tree))
    assert actions.BET_RULE is limits.BET_RULE


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_the_rule_ids_written_at_the_raise_sites_agree_with_each_variants_rules(name):
    v = VARIANTS[name]
    assert limits.PLAYERS_RULE[name] == v.rules["players"]
    assert limits.BET_RULE[name] == v.rules["bet"]
    if v.funding is Funding.ANTE:
        assert name not in limits.FUNDING_RULE
    else:
        assert limits.FUNDING_RULE[name] == v.rules["funding"]
    assert actions.TURN_RULE[name] == v.rules["turn"]
    if v.funding is Funding.ANTE:
        assert limits.ANTE_RULE[name] == v.rules["ante"]
    else:
        assert actions.LEAVE_RULE[name] == v.rules.get("banker", v.rules["end"])
