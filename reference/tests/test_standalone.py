"""The reference is a plain library: it imports the standard library and itself, nothing else (no dependency)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "toolcanon"


def _imported_roots(source: Path) -> set[str]:
    """The top-level names of every module ``source`` imports, at any depth of its code (not relative ones)."""
    roots: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"), str(source))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            roots.add(node.module.partition(".")[0])
    return roots


def test_every_module_imports_only_the_standard_library_and_the_package() -> None:
    foreign = {
        f"{path.relative_to(PACKAGE.parent)}: {root}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for root in _imported_roots(path)
        if root not in sys.stdlib_module_names and root != "toolcanon"
    }
    assert not foreign, sorted(foreign)


def test_importing_every_module_loads_nothing_from_outside_the_standard_library() -> None:
    """Run in a fresh interpreter, so what the test session loaded does not count."""
    program = """
import importlib, pkgutil, sys
before = set(sys.modules)
import toolcanon
for module in pkgutil.walk_packages(toolcanon.__path__, "toolcanon."):
    importlib.import_module(module.name)
print(sorted({name.partition(".")[0] for name in set(sys.modules) - before} - set(sys.stdlib_module_names)))
"""
    loaded = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['toolcanon']"


def test_the_registry_loads_no_renderer_family_until_one_is_asked_for() -> None:
    """``import toolcanon`` leaves the family modules (the HTML port among them) unloaded; reading
    ``toolcanon.renderers.FAMILIES`` loads them, and an unknown name is an ``AttributeError``."""
    program = """
import sys
import toolcanon
import toolcanon.renderers as renderers
families = [name for name in sys.modules if name.startswith("toolcanon.renderers.")]
print(sorted(set(families) - {"toolcanon.renderers._ecma"}))
loaded = len(renderers.FAMILIES) > 20
print(loaded, "toolcanon.renderers.web_fetch" in sys.modules, renderers.output_for is renderers.output_for)
try:
    renderers.nothing
except AttributeError as error:
    print(error)
"""
    printed = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
    assert printed.splitlines() == [
        "[]",
        "True True True",
        "module 'toolcanon.renderers' has no attribute 'nothing'",
    ]
