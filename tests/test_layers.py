"""The layers of DESIGN.md section 1, and the packages' own rules (their `__init__` docstrings):

- protocol/ is pure: no I/O, no reactor, no terminal, and it imports neither client/ nor lobby/;
- protocol/deck/ imports nothing of the rules or the lockstep (only itself and protocol.kdf),
  and the rest of the project takes the deck from the package, never from its modules;
- client/screen/ (the terminal) is imported only by the entry points, from the package;
- client/net/ (the links) imports nothing else of client/: not the game, the bots or the screen;
- client/bots/ imports neither the screen nor the links (but for the bot processes' module);
- the links and the bots are taken from their packages outside their own tests;
- lobby/ takes from client/ only client/net/, the adapters both sides share (the key files and
  the sealed links);
- no module imports, even inside a function, a module that imports it back (no import circle);
- no package draws secrets or shuffles from `random`.

Each rule is checked on the real tree and, to show that it can fail, on the tree with one
forbidden import added.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("protocol", "client", "lobby")
IMPURE_MODULES = {
    "asyncio", "client", "lobby", "os", "pathlib", "prompt_toolkit", "random", "select",
    "selectors", "shutil", "socket", "subprocess", "sys", "tempfile", "time", "twisted",
}  # fmt: skip
IMPURE_CALLS = {"open", "print", "input"}
# The simulator's command line is the one place in protocol/ that reads a clock and prints.
ALLOWED = {("simulate.py", "time"), ("simulate.py", "sys"), ("simulate.py", "print")}
DECK = "protocol.deck"
DECK_MAY_IMPORT = {DECK, "protocol.kdf"}
SCREEN = "client.screen"
# The modules that run a bean-client command: the only ones that may show a terminal.
ENTRY_POINTS = {"client.cli", "client.resume", "client.offline", "client.local_table"}
NET = "client.net"
BOTS = "client.bots"
# Where a bot reaches the links: the module that starts bots as processes.
BOTS_MAY_USE_NET = {"client.bots.process"}
# The game bench switches the links to plain ones by a module global, the one test-only hook.
PATCHES_MODULES = {"scripts.bench_bot"}
# The deck's own unit tests read its modules; every other caller uses the package.
DECK_UNIT_TESTS = {"tests.deck_harness", "tests.test_group"} | {
    f"tests.{path.stem}" for path in (ROOT / "tests").glob("test_deck_*.py")
}


def python_files(package):
    return sorted((ROOT / package).glob("**/*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def the_tree(*folders: str) -> dict[str, str]:
    """Module name -> source, for every module in the folders."""
    return {
        module_name(path): path.read_text() for folder in folders for path in python_files(folder)
    }


def imports(module: str, source: str) -> Iterator[str]:
    """The full names of the modules this source imports, anywhere in it (relative imports
    resolved; `from package import name` yields `package.name` when that is a module)."""
    package = module if _is_package(module) else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            yield target
            yield from (f"{target}.{alias.name}" for alias in node.names)


def _is_package(module: str) -> bool:
    return (ROOT / module.replace(".", "/") / "__init__.py").exists()


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def edges(tree: Mapping[str, str]) -> dict[str, set[str]]:
    """Module -> the modules of the tree it imports."""
    return {
        module: {name for name in imports(module, source) if name in tree and name != module}
        for module, source in tree.items()
    }


# --- the rules, each returning what breaks it ---------------------------------------------------


def impure_protocol_modules(tree: Mapping[str, str]) -> list[str]:
    found = []
    for module, source in tree.items():
        if not within(module, "protocol"):
            continue
        syntax = ast.parse(source)
        used = {name.split(".")[0] for name in imports(module, source)} & IMPURE_MODULES
        calls = {
            node.func.id
            for node in ast.walk(syntax)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        } & IMPURE_CALLS
        filename = module.rpartition(".")[2] + ".py"
        found += [
            f"{module} uses {name}"
            for name in sorted(used | calls)
            if (filename, name) not in ALLOWED
        ]
    return found


def deck_imports_outside_itself(tree: Mapping[str, str]) -> list[str]:
    return [
        f"{module} imports {name}"
        for module, source in tree.items()
        if within(module, DECK)
        for name in imports(module, source)
        if within(name, "protocol") and not any(within(name, ok) for ok in DECK_MAY_IMPORT)
    ]


def reaches_into(tree: Mapping[str, str], package: str, allowed: set[str]) -> list[str]:
    """Modules outside the package that import one of its modules rather than the package."""
    return [
        f"{module} imports {name}"
        for module, source in tree.items()
        if not within(module, package) and module not in allowed
        for name in imports(module, source)
        if within(name, package) and name != package and name in tree
    ]


def screen_importers(tree: Mapping[str, str]) -> list[str]:
    return [
        f"{module} imports {name}"
        for module, source in tree.items()
        if not within(module, SCREEN) and module not in ENTRY_POINTS
        and not within(module, "tests")
        for name in imports(module, source)
        if within(name, SCREEN)
    ]  # fmt: skip


def imports_of(
    tree: Mapping[str, str], importers: str, forbidden: str, allowed: str | None = None
) -> list[str]:
    """Modules within `importers` that import a module within `forbidden` (but for `allowed`)."""
    return [
        f"{module} imports {name}"
        for module, source in tree.items()
        if within(module, importers)
        for name in imports(module, source)
        if within(name, forbidden) and name in tree
        and not within(name, importers) and not (allowed and within(name, allowed))
    ]  # fmt: skip


def bots_reach_the_screen_or_links(tree: Mapping[str, str]) -> list[str]:
    bots = {m: s for m, s in tree.items() if m not in BOTS_MAY_USE_NET}
    return imports_of(tree, BOTS, SCREEN) + imports_of(bots, BOTS, NET)


def outside_tests(tree: Mapping[str, str]) -> dict[str, str]:
    return {m: s for m, s in tree.items() if not within(m, "tests")}


def import_circles(tree: Mapping[str, str]) -> list[str]:
    """Every module that can reach itself through imports, with one such circle."""
    graph = edges(tree)
    circles = []
    for start in sorted(graph):
        path = _path_back(graph, start)
        if path:
            circles.append(" -> ".join(path))
    return circles


def _path_back(graph: Mapping[str, set[str]], start: str) -> list[str] | None:
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        module = frontier.pop()
        for imported in sorted(graph[module]):
            if imported == start:
                path = [module]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [start, *reversed(path[:-1]), start]
            if imported not in came_from:
                came_from[imported] = module
                frontier.append(imported)
    return None


RULES = {
    "protocol is pure": impure_protocol_modules,
    "the deck imports only itself and the kdf": deck_imports_outside_itself,
    "the deck is taken from its package": lambda tree: reaches_into(tree, DECK, DECK_UNIT_TESTS),
    "the screen is taken from its package": lambda tree: reaches_into(
        outside_tests(tree), SCREEN, set()
    ),
    "only entry points import the screen": screen_importers,
    "the links import nothing else of the client": lambda tree: imports_of(tree, NET, "client"),
    "the bots import neither the screen nor the links": bots_reach_the_screen_or_links,
    "the links are taken from their package": lambda tree: reaches_into(
        outside_tests(tree), NET, PATCHES_MODULES
    ),
    "the bots are taken from their package": lambda tree: reaches_into(
        outside_tests(tree), BOTS, PATCHES_MODULES
    ),
    "the lobby takes only the links from the client": lambda tree: imports_of(
        tree, "lobby", "client", NET
    ),
    "no import circle": import_circles,
}

# One forbidden import per rule, added to a real module: each must be caught.
BREAKS = {
    "protocol is pure": ("protocol.rules", "import socket\n"),
    "the deck imports only itself and the kdf": (
        "protocol.deck.group",
        "from protocol.rules import State\n",
    ),
    "the deck is taken from its package": (
        "protocol.lockstep",
        "from protocol.deck.group import RISTRETTO255\n",
    ),
    "the screen is taken from its package": (
        "client.offline",
        "from client.screen.render import show\n",
    ),
    "only entry points import the screen": (
        "client.game",
        "from client.screen import GameScreen\n",
    ),
    "the links import nothing else of the client": (
        "client.net.mesh",
        "from client.gamefile import GameFile\n",
    ),
    "the bots import neither the screen nor the links": (
        "client.bots.player",
        "from client.net import Mesh\n",
    ),
    "the links are taken from their package": (
        "client.session",
        "from client.net.mesh import Mesh\n",
    ),
    "the bots are taken from their package": (
        "lobby.rooms",
        "from client.bots.strategies import GreedyBot\n",
    ),
    "the lobby takes only the links from the client": (
        "lobby.rooms",
        "from client.game import PeerGame\n",
    ),
    "no import circle": ("client.session", "def later():\n    from client.cli import main\n"),
}


@pytest.fixture(scope="module")
def tree():
    return the_tree(*PACKAGES, "scripts", "tests")


@pytest.mark.parametrize("rule", RULES)
def test_the_tree_keeps_the_rule(tree, rule):
    assert RULES[rule](tree) == []


@pytest.mark.parametrize("rule", RULES)
def test_a_forbidden_import_breaks_the_rule(tree, rule):
    module, line = BREAKS[rule]
    broken = dict(tree)
    broken[module] = tree[module] + "\n" + line
    found = RULES[rule](broken)
    assert found and all(module in problem or "->" in problem for problem in found), found


def test_every_package_says_what_it_offers_and_must_never_import():
    for init in (path for package in PACKAGES for path in (ROOT / package).glob("**/__init__.py")):
        docstring = ast.get_docstring(ast.parse(init.read_text()))
        assert docstring, f"{init.relative_to(ROOT)} has no docstring"
    for package in (DECK, SCREEN, NET, BOTS, "lobby"):
        init = ROOT / package.replace(".", "/") / "__init__.py"
        docstring = ast.get_docstring(ast.parse(init.read_text()))
        assert "offers" in docstring and "never import" in docstring, package


@pytest.mark.parametrize("package", PACKAGES)
def test_nothing_imports_random(package):
    for path in python_files(package):
        names = {name.split(".")[0] for name in imports(module_name(path), path.read_text())}
        assert "random" not in names, path
