"""The names of every mutant mutmut makes of a module, listed before any is run (to draw the sample from).

mutmut names a mutant ``<module>.<function key>__mutmut_<n>``, numbering the mutants of each function in the
order its operators meet the function's nodes: the same code gives the same names.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from mutation.targets import PACKAGE

__all__ = ["list_mutants"]


def list_mutants(project: Path, modules: Sequence[str]) -> dict[str, list[str]]:
    """Every mutant name of each of ``modules``, as mutmut makes them in ``project`` (a scratch project)."""
    from mutmut.configuration import reset_config
    from mutmut.mutation.file_mutation import mutate_file_contents
    from mutmut.utils.format_utils import get_mutant_name

    names: dict[str, list[str]] = {}
    with contextlib.chdir(project):  # mutmut reads its settings from the project's pyproject.toml
        reset_config()
        for module in modules:
            relative = Path("src") / PACKAGE / f"{module}.py"
            mutated = mutate_file_contents(str(relative), relative.read_text(encoding="utf-8"))
            names[module] = [get_mutant_name(relative, name) for name in mutated.mutant_names]
        reset_config()
    return names
