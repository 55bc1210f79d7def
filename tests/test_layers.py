"""The layers of DESIGN.md section 1: protocol/ is pure and imports neither client/ nor lobby/;
no package draws secrets or shuffles from `random`."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
IMPURE_MODULES = {
    "asyncio", "client", "lobby", "os", "pathlib", "prompt_toolkit", "random", "select",
    "selectors", "shutil", "socket", "subprocess", "sys", "tempfile", "time", "twisted",
}  # fmt: skip
IMPURE_CALLS = {"open", "print", "input"}
# The simulator's command line is the one place in protocol/ that reads a clock and prints.
ALLOWED = {("simulate.py", "time"), ("simulate.py", "sys"), ("simulate.py", "print")}


def python_files(package):
    return sorted((ROOT / package).glob("**/*.py"))


def imported_modules(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]


@pytest.mark.parametrize("path", python_files("protocol"), ids=lambda p: p.name)
def test_protocol_modules_do_no_io_and_import_no_adapter(path):
    tree = ast.parse(path.read_text())
    used = set(imported_modules(tree)) & IMPURE_MODULES
    calls = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    } & IMPURE_CALLS
    offending = {name for name in used | calls if (path.name, name) not in ALLOWED}
    assert not offending, f"{path.name} uses {sorted(offending)}"


@pytest.mark.parametrize("package", ["protocol", "client", "lobby"])
def test_nothing_imports_random(package):
    for path in python_files(package):
        assert "random" not in set(imported_modules(ast.parse(path.read_text()))), path
