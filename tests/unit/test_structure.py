"""The shape of the code, checked: imports point one way and never in a circle, `ledger` knows
nothing of HTTP or the command line, and modules and service functions stay small."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ledger", "api")
MAX_MODULE_LINES = 400
MAX_SERVICE_FUNCTION_LINES = 60


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def imports_of(path: Path, name: str, known: set[str]) -> set[str]:
    """The project modules a module imports when it runs (not those under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text())
    skipped = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
               and "TYPE_CHECKING" in ast.unparse(block.test) for node in ast.walk(block)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        found.update(t for t in targets if t in known and t != name)
    return found


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports_of(path, name, set(found)) for name, path in found.items()}


def test_no_module_of_ledger_or_api_imports_itself_through_others():
    edges = graph()
    cycles = []

    def visit(node: str, path: list[str], done: set[str]) -> None:
        for target in sorted(edges[node]):
            if target in path:
                cycles.append(path[path.index(target):] + [target])
            elif target not in done:
                visit(target, [*path, target], done)
        done.add(node)

    done: set[str] = set()
    for start in sorted(edges):
        if start not in done:
            visit(start, [start], done)
    # Check the check: it would see a circle if there were one.
    assert "ledger.app.base" in edges["ledger.app.application"] or any(
        "ledger.app.base" in edges[m] for m in edges["ledger.app.application"])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles[:5])


def test_ledger_imports_nothing_of_http_or_the_command_line():
    for name, path in modules().items():
        if not name.startswith("ledger"):
            continue
        tree = ast.parse(path.read_text())
        names = {alias.name.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.Import) for alias in node.names}
        names |= {(node.module or "").split(".")[0] for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom) and not node.level}
        assert not names & {"flask", "flask_smorest", "marshmallow", "werkzeug", "click", "api"}, (
            name)


@pytest.mark.parametrize("name", sorted(modules()))
def test_no_module_is_longer_than_four_hundred_lines(name):
    lines = len(modules()[name].read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{name} has {lines} lines"


def test_no_function_of_the_services_is_longer_than_sixty_lines():
    long = []
    for path in sorted((ROOT / "ledger" / "services").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if length > MAX_SERVICE_FUNCTION_LINES:
                    long.append(f"{path.name}:{node.name} ({length})")
    assert not long, long


def event_names() -> set[str]:
    """The name of every stored event class: the engine's operations and every `@event`."""
    from ledger.rules.operations import KINDS

    names = set(KINDS)
    for path in modules().values():
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and ast.unparse(node.func) == "event" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                names.add(node.args[0].value)
    return names


def string_literals(path: Path) -> list[tuple[int, str]]:
    """Every string literal of a module with its line, except `@event("Name")` arguments."""
    tree = ast.parse(path.read_text())
    declared = {id(node.args[0]) for node in ast.walk(tree) if isinstance(node, ast.Call)
                and ast.unparse(node.func) == "event" and node.args}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in declared]


def test_every_audit_read_is_gated_right_under_its_route():
    """`audit_read` sits directly under `blp.route`, above the arguments and the response, so
    its slot covers reading the one and writing the other (api/gate.py)."""
    gated, misplaced = [], []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                names = [ast.unparse(d) for d in node.decorator_list]
                if "audit_read" in names:
                    gated.append(node.name)
                    at = names.index("audit_read")
                    if at == 0 or not names[at - 1].startswith("blp.route("):
                        misplaced.append(f"{name}.{node.name}")
    assert len(gated) >= 13 and not misplaced, misplaced


def test_no_event_is_named_by_a_string_outside_the_operations_module():
    names = event_names()
    assert {"BetPlaced", "Wagered", "Granted", "SeedRevealed"} <= names
    found = [f"{name}:{line} {text!r}" for name, path in modules().items()
             if name != "ledger.rules.operations"
             for line, text in string_literals(path) if text in names]
    assert not found, "readers dispatch on classes, not names: " + ", ".join(found)


def test_account_names_are_parsed_only_in_the_transfers_module():
    found = []
    for name, path in modules().items():
        if name == "ledger.core.transfers":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("startswith", "partition", "split")
                    and any(isinstance(arg, ast.Constant) and str(arg.value).startswith(
                        ("wallet:", "stake:", "pot:")) for arg in node.args)):
                found.append(f"{name}:{node.lineno} {ast.unparse(node)}")
    assert not found, ", ".join(found)


#: Where the two families of tables may be told apart: the deal log and the engines.
#: (The bots of `ledger.sim.bots` play each family's own game, so they choose one too.)
FAMILY_ROOMS = {"ledger.app.deals", "ledger.app.casino", "ledger.app.tables",
                "ledger.core.validation", "ledger.sim.bots"}


def test_no_family_branch_outside_the_deal_log_and_the_engines():
    found = []
    for name, path in modules().items():
        if name in FAMILY_ROOMS or name.startswith(("ledger.rules.", "ledger.domain.")):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            text = ast.unparse(node) if isinstance(node, ast.Compare | ast.Call) else ""
            if isinstance(node, ast.Compare) and ("CASINO_VARIANT" in text or "'casino'" in text
                                                 or "casino.VARIANT" in text):
                found.append(f"{name}:{node.lineno} {text}")
            if (isinstance(node, ast.Call) and text.startswith("isinstance(")
                    and ("HighCardTable)" in text or "CasinoTable)" in text)):
                found.append(f"{name}:{node.lineno} {text}")
    assert not found, "branch on the family in ledger.app.deals: " + ", ".join(found)


def test_the_package_metadata_is_an_spdx_license_and_the_postgres_driver_an_extra():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and (ROOT / project["license-files"][0]).exists()
    assert not any("psycopg" in dependency or "[postgres]" in dependency
                   for dependency in project["dependencies"])
    assert any(d.startswith("psycopg") for d in project["optional-dependencies"]["postgres"])


def test_a_postgres_store_without_its_driver_names_the_extra(monkeypatch):
    import importlib.util

    from ledger.core.errors import ConfigurationError
    from ledger.store.locate import locate

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "psycopg" else find_spec(name, *a))
    with pytest.raises(ConfigurationError, match=r"reddog-ledger\[postgres\]"):
        locate("postgresql://postgres@127.0.0.1:5432/test")
    assert locate("sqlite:///:memory:").kind == "sqlite"  # the embedded store needs no driver


@pytest.mark.parametrize("args", [
    ["backup", "--store", "postgresql://postgres@127.0.0.1/test", "--to", "x"],
    ["migrate", "--from", "sqlite:///x.sqlite3", "--to", "postgresql://postgres@127.0.0.1/test"],
])
def test_store_commands_without_the_postgres_driver_say_so_without_a_traceback(monkeypatch, args):
    import importlib.util

    from click.testing import CliRunner

    from api.cli import main

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "psycopg" else find_spec(name, *a))
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1 and "reddog-ledger[postgres]" in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
