"""The shape of the code, checked: the packages of `ledger` are layers whose imports point one
way (those made only for the type checker included) and never in a circle, `ledger` knows
nothing of HTTP or the command line, each package says in one line what it holds, events are
told apart by their classes, and the services' functions stay short.

Every check is a function of the tree's root, so `test_the_checks_find_what_is_planted_in_a_copy`
runs the same functions over a copy of the tree with faults planted in it, and sees each of
them reported, and nothing else."""

from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ledger", "api")
#: The layers, lowest first. A module may import modules of its own package and of packages
#: below its own, never above nor beside. `ledger.settings` sits beside the core, just above
#: it (it reads the core's errors); `api` may import any of `ledger`, which never imports it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("ledger", "ledger.core"),  # `ledger` itself: its `__init__`, which imports nothing
    ("ledger.settings",),
    ("ledger.rules",),
    ("ledger.domain",),
    ("ledger.store",),
    ("ledger.readmodels",),
    ("ledger.integrity",),
    ("ledger.transparency",),
    ("ledger.app",),
    ("ledger.history", "ledger.ops", "ledger.sim"),
    ("api",),
)
RANKS = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}
TOP_LEVEL_FILES = {"__init__.py", "settings.py"}
MAX_SERVICE_FUNCTION_LINES = 60


# The checks, each over the tree at `root`.
@functools.cache
def _parsed(path: Path, stamp: tuple[int, int]) -> ast.Module:
    return ast.parse(path.read_text())


def parse(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for all the checks (again once the file changes)."""
    stat = path.stat()
    return _parsed(path, (stat.st_mtime_ns, stat.st_size))


@functools.cache
def nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of a parsed module, in the order `ast.walk` gives them, walked once for all
    the checks (each check looks at every node of every module, some several times)."""
    return list(ast.walk(tree))


def modules(root: Path) -> dict[str, Path]:
    """Every module of `ledger` and `api` under `root`, by dotted name."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    typing_only: bool  # under `if TYPE_CHECKING:`

    def __str__(self) -> str:
        return (f"{self.source}:{self.line} imports {self.target}"
                + (" (under TYPE_CHECKING)" if self.typing_only else ""))


@functools.cache
def _typing_only_nodes(tree: ast.Module) -> set[int]:
    return {id(node) for block in nodes(tree)
            if isinstance(block, ast.If) and ast.unparse(block.test) in (
                "TYPE_CHECKING", "typing.TYPE_CHECKING")
            for statement in block.body for node in ast.walk(statement)}


def imports_of(path: Path, name: str, known: set[str]) -> list[Import]:
    """The project modules a module imports, wherever the import is: at the top, in a
    function, or under `if TYPE_CHECKING:` (marked so)."""
    tree = parse(path)
    typing_only = _typing_only_nodes(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in nodes(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            # `from a.b import c`: the module a.b.c where there is one, else a.b itself.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        for target in targets:
            while target and target not in known:  # `import a.b.c` of a name inside a module
                target = target.rpartition(".")[0]
            if target and target != name:
                found.append(Import(name, target, node.lineno, id(node) in typing_only))
    return found


def all_imports(root: Path) -> list[Import]:
    found = modules(root)
    return [i for name, path in found.items() for i in imports_of(path, name, set(found))]


def unit_of(module: str) -> str | None:
    """The layer's package (or `ledger.settings`) that holds a module, if any."""
    units = [u for u in RANKS if module == u or module.startswith(u + ".")]
    return max(units, key=len) if units else None


def back_imports(root: Path) -> list[Import]:
    """Imports of a package beside or above the importer's own in `LAYERS`."""
    wrong = []
    for found in all_imports(root):
        source, target = unit_of(found.source), unit_of(found.target)
        if source is None or target is None:
            continue  # a module outside every layer: `stray_entries` names it
        if source != target and RANKS[target] >= RANKS[source]:
            wrong.append(found)
    return wrong


def cycles(root: Path) -> list[tuple[str, ...]]:
    """The sets of modules that import each other in a circle (Tarjan's strongly connected
    components of more than one module), each sorted, every import counted."""
    edges: dict[str, set[str]] = {name: set() for name in modules(root)}
    for found in all_imports(root):
        edges[found.source].add(found.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(tuple(sorted(component)))

    for start in sorted(edges):
        if start not in index:
            connect(start)
    return sorted(components)


def a_circle(root: Path, component: tuple[str, ...]) -> list[Import]:
    """One circle of imports through the modules of a component, to show in a failure."""
    inside = [i for i in all_imports(root) if i.source in component and i.target in component]
    start = component[0]
    paths: dict[str, list[Import]] = {start: []}
    frontier = [start]
    while frontier:
        node = frontier.pop(0)
        for found in (i for i in inside if i.source == node):
            if found.target == start:
                return [*paths[node], found]
            if found.target not in paths:
                paths[found.target] = [*paths[node], found]
                frontier.append(found.target)
    return []


def stray_entries(root: Path) -> list[str]:
    """What the top of `ledger/` holds besides `__init__.py`, `settings.py` and the layers'
    packages."""
    layers = {u.rpartition(".")[2] for u in RANKS if u.startswith("ledger.")}
    stray = []
    for entry in sorted((root / "ledger").iterdir()):
        if entry.name == "__pycache__" or entry.name.startswith("."):
            continue
        if entry.is_dir():
            if not (entry / "__init__.py").exists() or entry.name not in layers:
                stray.append(entry.name + "/")
        elif entry.name not in TOP_LEVEL_FILES:
            stray.append(entry.name)
    return stray


def undocumented_packages(root: Path) -> list[str]:
    """The packages of `ledger` whose `__init__.py` does not open with a one-line docstring."""
    found = []
    for init in sorted((root / "ledger").rglob("__init__.py")):
        docstring = ast.get_docstring(parse(init))
        if not docstring or "\n" in docstring.strip():
            found.append(".".join(init.parent.relative_to(root).parts))
    return found


@dataclass(frozen=True)
class EventNames:
    bare: frozenset[str]  # "Recorded", "BetPlaced": `@event` names and the engine's operations
    qualified: frozenset[str]  # "Checkpoints.Recorded": every event class of an aggregate
    aggregates: frozenset[str]  # "Checkpoints.": the prefix of each aggregate's event classes


def event_names() -> EventNames:
    """The names of the stored event classes, from the domain's aggregates themselves."""
    from eventsourcing.domain import Aggregate

    import ledger.domain
    from ledger.domain.base import LedgerAggregate
    from ledger.rules.operations import KINDS

    qualified, aggregates = set(), set()
    for info in pkgutil.iter_modules(ledger.domain.__path__):
        module = importlib.import_module(f"ledger.domain.{info.name}")
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, LedgerAggregate)
                    and value.__module__ == module.__name__):
                aggregates.add(f"{value.__qualname__}.")
                qualified.update(cls.__qualname__ for cls in vars(value).values()
                                 if isinstance(cls, type) and issubclass(cls, Aggregate.Event))
    bare = set(KINDS) | {name.rpartition(".")[2] for name in qualified}
    for path in modules(ROOT).values():
        for node in nodes(parse(path)):
            if (isinstance(node, ast.Call) and ast.unparse(node.func) == "event" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                bare.add(node.args[0].value)
    return EventNames(frozenset(bare), frozenset(qualified), frozenset(aggregates))


def _names_an_event(text: str, names: EventNames) -> bool:
    tail = text.rsplit(":", 1)[-1]  # a stored topic: "module:Aggregate.Event"
    return text in names.bare or tail in names.qualified or tail in names.aggregates


def _class_name_attribute(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in ("__qualname__", "__name__")
               for n in ast.walk(node))


def _only_separators(node: ast.AST) -> bool:
    """A string built of class names and nothing but dots and colons: a topic, or a prefix."""
    texts = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant)
             and isinstance(n.value, str)]
    return bool(texts) and all(set(t) <= {".", ":"} for t in texts)


def dispatch_by_name(root: Path, names: EventNames) -> list[tuple[str, int, str]]:
    """Where a module tells events apart by name rather than by class: a string naming an event
    (`"BetPlaced"`, `"Checkpoints.Recorded"`, a stored topic, an aggregate's `"Checkpoints."`),
    or a class's `__qualname__` / `__name__` compared, matched with `startswith` / `endswith`,
    or made into a topic or prefix. Docstrings, `@event("Name")`, assertions and the operations
    module (which names the engine's operations) are not counted."""
    found = []
    for name, path in modules(root).items():
        tree = parse(path)
        skipped = {id(node.args[0]) for node in nodes(tree) if isinstance(node, ast.Call)
                   and ast.unparse(node.func) == "event" and node.args}
        skipped |= {id(node.value) for node in nodes(tree) if isinstance(node, ast.Expr)
                    and isinstance(node.value, ast.Constant)}
        asserted = {id(n) for node in nodes(tree) if isinstance(node, ast.Assert)
                    for n in ast.walk(node.test)}  # a check that names agree dispatches nothing
        for node in nodes(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in skipped and name != "ledger.rules.operations"
                    and _names_an_event(node.value, names)):
                found.append((name, node.lineno, repr(node.value)))
            matching = (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr in ("startswith", "endswith"))
            built = (isinstance(node, ast.JoinedStr) or isinstance(node, ast.BinOp)
                     and isinstance(node.op, ast.Add)) and _only_separators(node)
            compared = isinstance(node, ast.Compare) and id(node) not in asserted
            if (matching or built or compared) and _class_name_attribute(node):
                found.append((name, node.lineno, ast.unparse(node)))
    return sorted(set(found))


def long_service_functions(root: Path) -> tuple[int, list[str]]:
    """How many functions the services (`ledger/app`) have, and those longer than the cap."""
    count, long = 0, []
    for path in sorted((root / "ledger" / "app").glob("*.py")):
        for node in nodes(parse(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                count += 1
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_SERVICE_FUNCTION_LINES:
                    long.append(f"{path.name}:{node.name} ({length})")
    return count, long


# The tree as it is.
def test_every_import_of_a_ledger_package_points_down_the_layers():
    wrong = back_imports(ROOT)
    assert not wrong, "imports against the layers: " + "; ".join(map(str, wrong))


def test_no_modules_import_each_other_in_a_circle():
    found = cycles(ROOT)
    assert not found, "import cycles: " + "; ".join(
        " -> ".join(map(str, a_circle(ROOT, component))) for component in found)


def test_the_top_of_ledger_holds_only_its_layers_init_and_settings():
    assert not stray_entries(ROOT)


def test_every_package_of_ledger_says_what_it_holds_in_one_line():
    assert not undocumented_packages(ROOT)


def test_events_are_told_apart_by_class_never_by_name():
    names = event_names()
    assert {"BetPlaced", "Wagered", "Granted", "SeedRevealed"} <= names.bare
    assert {"Checkpoints.Recorded", "Wallet.Granted", "HighCardTable.BetPlaced"} <= (
        names.qualified)
    found = dispatch_by_name(ROOT, names)
    assert not found, "readers dispatch on classes, not names: " + ", ".join(
        f"{name}:{line} {text}" for name, line, text in found)


def test_no_function_of_the_services_is_longer_than_sixty_lines():
    count, long = long_service_functions(ROOT)
    assert count > 100 and not long, long  # the count: the check reads the services


def test_ledger_imports_nothing_of_http_or_the_command_line():
    for name, path in modules(ROOT).items():
        if not name.startswith("ledger"):
            continue
        tree = parse(path)
        names = {alias.name.split(".")[0] for node in nodes(tree)
                 if isinstance(node, ast.Import) for alias in node.names}
        names |= {(node.module or "").split(".")[0] for node in nodes(tree)
                  if isinstance(node, ast.ImportFrom) and not node.level}
        assert not names & {"flask", "flask_smorest", "marshmallow", "werkzeug", "click", "api"}, (
            name)


# The checks, shown to work.
PLANTED = {
    # A circle inside one package, one way only for the type checker.
    "ledger/store/planted_a.py": "from ledger.store import planted_b\n",
    "ledger/store/planted_b.py": ("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                  "    from ledger.store.planted_a import Thing\n"),
    # The core reaching up to the application, the domain up to the read models (only for the
    # type checker), operations into the HTTP API.
    "ledger/core/planted.py": "def late():\n    from ledger.app.application import X\n",
    "ledger/domain/planted.py": ("import typing\n\nif typing.TYPE_CHECKING:\n"
                                 "    from ledger.readmodels.fold import Fold\n"),
    "ledger/ops/planted.py": "import api.cli\n",
    # Events told apart by name.
    "ledger/readmodels/planted.py": (
        "from ledger.domain.wallet import Wallet\n\n"
        "def recorded(stored):\n"
        "    return stored.topic.endswith(\"Checkpoints.Recorded\")\n\n"
        "PREFIXES = tuple(f\"{cls.__qualname__}.\" for cls in (Wallet,))\n\n"
        "def granted(event):\n"
        "    return type(event).__name__ == WANTED\n"),
    # A module at the top, a package outside the layers and without its docstring.
    "ledger/stray.py": "",
    "ledger/extra/__init__.py": "VALUE = 1\n",
    "ledger/rules/highcard/__init__.py": '"""Two lines:\n\nnot one."""\n',
}


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    for relative, text in PLANTED.items():
        path = tmp_path / relative
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    return tmp_path


def _imports(found: list[Import]) -> set[tuple[str, str, bool]]:
    return {(i.source, i.target, i.typing_only) for i in found}


def test_the_checks_find_what_is_planted_in_a_copy(planted):
    """What the copy's checks report beyond the tree's own findings (the tree's own faults
    are reported in the copy too, unchanged) is exactly what was planted."""
    assert _imports(back_imports(planted)) - _imports(back_imports(ROOT)) == {
        ("ledger.core.planted", "ledger.app.application", False),
        ("ledger.domain.planted", "ledger.readmodels.fold", True),
        ("ledger.ops.planted", "api.cli", False),
    }
    assert _imports(back_imports(ROOT)) <= _imports(back_imports(planted))
    assert cycles(planted) == sorted([*cycles(ROOT), ("ledger.store.planted_a",
                                                      "ledger.store.planted_b")])
    circle = a_circle(planted, ("ledger.store.planted_a", "ledger.store.planted_b"))
    assert [(i.source, i.typing_only) for i in circle] == [
        ("ledger.store.planted_a", False), ("ledger.store.planted_b", True)]
    assert stray_entries(planted) == [*stray_entries(ROOT), "extra/", "stray.py"]
    assert undocumented_packages(planted) == sorted(
        [*undocumented_packages(ROOT), "ledger.extra", "ledger.rules.highcard"])
    names = event_names()
    assert set(dispatch_by_name(planted, names)) - set(dispatch_by_name(ROOT, names)) == {
        ("ledger.readmodels.planted", 4, "'Checkpoints.Recorded'"),
        ("ledger.readmodels.planted", 6, "f'{cls.__qualname__}.'"),
        ("ledger.readmodels.planted", 9, "type(event).__name__ == WANTED"),
    }


def test_an_import_is_followed_wherever_it_is_written(tmp_path):
    """Relative imports, imports in functions, `import a.b.c.Name` and `from a import b` of a
    module b: each is an import of the module it names."""
    known = {"ledger.store", "ledger.store.a", "ledger.store.b", "ledger.core.cards"}
    source = tmp_path / "a.py"
    source.write_text("from . import b\nfrom .b import name\nimport ledger.core.cards.Card\n"
                      "def f():\n    from ledger.core import cards\n")
    assert sorted((i.target, i.line) for i in imports_of(source, "ledger.store.a", known)) == [
        ("ledger.core.cards", 3), ("ledger.core.cards", 5), ("ledger.store.b", 1),
        ("ledger.store.b", 2)]


# Other rules of the tree.
def test_every_audit_read_is_gated_right_under_its_route():
    """`audit_read` sits directly under `blp.route`, above the arguments and the response, so
    its slot covers reading the one and writing the other (api/gate.py)."""
    gated, misplaced = [], []
    for name, path in modules(ROOT).items():
        for node in nodes(parse(path)):
            if isinstance(node, ast.FunctionDef):
                names = [ast.unparse(d) for d in node.decorator_list]
                if "audit_read" in names:
                    gated.append(node.name)
                    at = names.index("audit_read")
                    if at == 0 or not names[at - 1].startswith("blp.route("):
                        misplaced.append(f"{name}.{node.name}")
    assert len(gated) >= 13 and not misplaced, misplaced


def test_account_names_are_parsed_only_in_the_transfers_module():
    found = []
    for name, path in modules(ROOT).items():
        if name == "ledger.core.transfers":
            continue
        for node in nodes(parse(path)):
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
    for name, path in modules(ROOT).items():
        if name in FAMILY_ROOMS or name.startswith(("ledger.rules.", "ledger.domain.")):
            continue
        for node in nodes(parse(path)):
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
