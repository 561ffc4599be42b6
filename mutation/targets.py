"""What is mutated: the reference's core modules, and how ``--module`` names select them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Final

from mutation.errors import UsageError

__all__ = ["PACKAGE", "SCHEMA_GROUP", "core_modules", "module_of", "select_modules"]

PACKAGE: Final = "toolcanon"
"""The mutated package (``reference/toolcanon`` in the checkout, ``src/toolcanon`` in a scratch project)."""

SCHEMA_GROUP: Final = "schema"
"""``--module schema`` takes ``schema`` and every ``_schema_*`` module."""

_BEFORE_SCHEMA: Final = ("jsonvalue",)
_AFTER_SCHEMA: Final = ("_fused", "registry", "result", "session")


def core_modules(package: Path) -> tuple[str, ...]:
    """The mutated modules of the package folder, in table order: ``jsonvalue``, ``schema`` and each
    ``_schema_*`` found there (a new one is taken without a change here), ``_fused``, ``registry``, ``result``,
    ``session``. A module of that list missing from the folder is an error."""
    schema = sorted(path.stem for path in package.glob("_schema_*.py"))
    modules = (*_BEFORE_SCHEMA, SCHEMA_GROUP, *schema, *_AFTER_SCHEMA)
    missing = [name for name in modules if not (package / f"{name}.py").is_file()]
    if missing:
        raise UsageError(f"{package}: no module {', '.join(missing)}")
    return modules


def select_modules(requested: Iterable[str], modules: tuple[str, ...]) -> tuple[str, ...]:
    """The modules ``--module`` names (all when none), in table order; ``schema`` stands for its group."""
    wanted: set[str] = set()
    for name in requested:
        if name == SCHEMA_GROUP:
            wanted.update(module for module in modules if _in_schema_group(module))
        elif name in modules:
            wanted.add(name)
        else:
            raise UsageError(f"--module {name}: not a mutated module (choose from {', '.join(modules)})")
    return tuple(module for module in modules if not wanted or module in wanted)


def _in_schema_group(module: str) -> bool:
    return module == SCHEMA_GROUP or module.startswith("_schema_")


def module_of(mutant: str) -> str:
    """The module of a mutant name: ``toolcanon._fused.x_walk__mutmut_3`` is in ``_fused``."""
    parts = mutant.split(".")
    if len(parts) < 3 or parts[0] != PACKAGE or "__mutmut_" not in parts[-1]:
        raise ValueError(f"{mutant!r} is not the name of a mutant of {PACKAGE}")
    return ".".join(parts[1:-1])
