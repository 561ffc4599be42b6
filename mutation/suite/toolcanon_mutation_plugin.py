"""The pytest plugin of every mutation run (``-p toolcanon_mutation_plugin``), copied into the scratch project.

- It selects the tests mutmut names by node id itself. pytest cannot find some ids given on its command line
  (a parameter id holding ``[``, ``::`` or a newline, such as ``ids=repr`` makes), and stops the run as a usage
  error; here the files are collected and every test whose id is not named is deselected.
- It refuses to start unless ``toolcanon`` is imported from mutmut's mutated copy (``mutants/src``): a
  reference installed in the venv, or found elsewhere on ``sys.path``, would shadow the mutants, and every one
  of them would survive.
- Before each test it empties the reference's compiled-schema caches. mutmut forks each mutant's run from a
  process that already ran the tests unmutated; a validator compiled then, and found again in the cache,
  would hide a mutant of the compiler. A fresh process per mutant would compile with the mutant: so does this.
- It triples the recursion limit: mutmut's trampoline puts three frames where the reference has one, so a walk
  that stays within the default limit unmutated (a test 400 levels deep) would otherwise fail every run before
  a mutant is tried, and a fallback the reference takes on a RecursionError would be taken three times sooner.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_WANTED = pytest.StashKey[list[str]]()

_TRAMPOLINE_FRAMES = 3
"""Frames of a mutated function's call under mutmut's trampoline, for one of the reference's."""

_FIRST_LIMIT = sys.getrecursionlimit()
"""The limit before any run: mutmut runs pytest again in each mutant's forked process, which must not triple it
again."""


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Give the trampoline's frames room; collect the files of the node ids on the command line, remember the ids."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), _TRAMPOLINE_FRAMES * _FIRST_LIMIT))
    wanted = [argument for argument in config.args if "::" in argument]
    if not wanted:
        return
    config.stash[_WANTED] = wanted
    files = dict.fromkeys(argument.partition("::")[0] for argument in config.args)
    config.args[:] = list(files)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the named tests, in the order they were named."""
    wanted = config.stash.get(_WANTED, None)
    if wanted is None:
        return
    order = {nodeid: index for index, nodeid in enumerate(wanted)}
    kept = sorted((item for item in items if item.nodeid in order), key=lambda item: order[item.nodeid])
    dropped = [item for item in items if item.nodeid not in order]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


def pytest_sessionstart(session: pytest.Session) -> None:
    """Stop the run when the tests would not see the mutated copy."""
    import toolcanon

    where = Path(toolcanon.__file__).resolve()
    if "mutants" not in where.parts:
        raise pytest.UsageError(f"toolcanon is imported from {where}, not from mutmut's mutants/ copy")


def _empty_caches() -> None:
    from toolcanon._text_cache import TextKeyedCache

    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("toolcanon."):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, TextKeyedCache):
                value._entries.clear()
                value._held = 0


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    _empty_caches()
    yield
