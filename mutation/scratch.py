"""The scratch project a suite's mutation run happens in: the reference as ``src/toolcanon``, the suite's
tests, and a ``pyproject.toml`` whose ``[tool.mutmut]`` says what to mutate and how to run the tests.

mutmut runs the tests in its ``mutants/`` copy of the project with ``mutants/src`` first on ``sys.path``; the
checkout's layout (``reference/toolcanon``, installed editable) would shadow that copy, so the run is made
in a project of the layout mutmut expects, in a venv where the reference is not installed at all.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

from mutation.errors import UsageError
from mutation.targets import PACKAGE

__all__ = ["PLUGIN", "SUITES", "Checkout", "Suite", "build", "mutmut_settings", "pyproject_text", "toml_value"]

Suite: TypeAlias = Literal["scenarios", "unit"]
SUITES: Final[tuple[Suite, ...]] = ("scenarios", "unit")

PLUGIN: Final = "toolcanon_mutation_plugin"
"""The pytest plugin of every run (``mutation/suite/toolcanon_mutation_plugin.py``), at the project root."""

_SUITE_FILES: Final = Path(__file__).resolve().parent / "suite"

#: Unit tests that cannot run against mutmut's copy: this one reads the package's files from the checkout's
#: layout and imports it in a fresh interpreter, which finds no reference (it is installed nowhere).
_UNIT_IGNORED: Final = ("reference/tests/test_standalone.py",)


@dataclass(frozen=True, slots=True)
class Checkout:
    """The folders of the repository a scratch project is made from."""

    root: Path

    @property
    def package(self) -> Path:
        """The reference's package folder."""
        return self.root / "reference" / PACKAGE

    @property
    def scenarios(self) -> Path:
        """The conformance scenarios."""
        return self.root / "fixtures" / "scenarios"

    @property
    def goldens(self) -> Path:
        """The golden transcripts."""
        return self.root / "snapshots" / "scenarios"

    @property
    def unit_tests(self) -> Path:
        """The reference's unit tests."""
        return self.root / "reference" / "tests"

    def pytest_options(self) -> dict[str, Any]:
        """The checkout's pytest settings, but for where the tests are."""
        import tomllib

        settings = tomllib.loads((self.root / "pyproject.toml").read_text(encoding="utf-8"))
        options = dict(settings.get("tool", {}).get("pytest", {}).get("ini_options", {}))
        options.pop("testpaths", None)
        return options


def mutmut_settings(suite: Suite, modules: Sequence[str]) -> dict[str, Any]:
    """The ``[tool.mutmut]`` table of a suite's project, mutating ``modules`` only."""
    if suite not in SUITES:
        raise UsageError(f"no suite {suite!r} (choose from {', '.join(SUITES)})")
    unit = suite == "unit"
    return {
        "source_paths": ["src"],
        "only_mutate": [f"src/{PACKAGE}/{module}.py" for module in modules],
        "also_copy": [f"{PLUGIN}.py", *(["conftest.py", "reference/tests"] if unit else [])],
        "pytest_add_cli_args": ["-p", PLUGIN, *(f"--ignore={path}" for path in (_UNIT_IGNORED if unit else ()))],
        "pytest_add_cli_args_test_selection": ["reference/tests" if unit else "tests"],
        # the project is no repository, and no cache of an earlier run is kept: nothing to detect changes of
        "use_git_change_detection": False,
        "on_dependency_change": "ignore",
        "track_dependencies": False,
        # a mutant whose tests take 5 times their unmutated time plus 15 s is a timeout (mutmut's default is 15
        # times, plus 15 s). The 15 s stay above the scenario suite's own deadline of 10 s per scenario, so a
        # scenario that hangs fails as timed out before mutmut ends the run; a slowed suite still times out.
        "timeout_multiplier": 5,
        "timeout_constant": 3,
    }


def toml_value(value: Any) -> str:
    """A TOML value of a string, boolean, integer or a list of them (a JSON string is a TOML basic string)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def pyproject_text(mutmut: dict[str, Any], pytest_options: dict[str, Any]) -> str:
    """The scratch project's ``pyproject.toml``."""
    lines = ["# Made by python -m mutation: a scratch project, remade on every run.", "", "[tool.mutmut]"]
    lines += [f"{key} = {toml_value(value)}" for key, value in mutmut.items()]
    lines += ["", "[tool.pytest.ini_options]"]
    lines += [f"{key} = {toml_value(value)}" for key, value in pytest_options.items()]
    return "\n".join(lines) + "\n"


def build(where: Path, suite: Suite, checkout: Checkout, modules: Sequence[str]) -> Path:
    """Make (anew) the scratch project of ``suite`` under ``where``; its folder."""
    project = where / suite
    shutil.rmtree(project, ignore_errors=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(checkout.package, project / "src" / PACKAGE, ignore=ignore)
    shutil.copy2(_SUITE_FILES / f"{PLUGIN}.py", project / f"{PLUGIN}.py")
    pytest_options: dict[str, Any] = {"addopts": "-p no:cacheprovider", "xfail_strict": True}
    if suite == "scenarios":
        tests = project / "tests"
        tests.mkdir()
        shutil.copy2(_SUITE_FILES / "test_scenarios.py", tests / "test_scenarios.py")
        locations = {"scenarios": str(checkout.scenarios), "goldens": str(checkout.goldens)}
        (tests / "locations.json").write_text(json.dumps(locations, indent=2) + "\n", encoding="utf-8")
    else:
        shutil.copytree(checkout.unit_tests, project / "reference" / "tests", ignore=ignore)
        shutil.copy2(checkout.root / "conftest.py", project / "conftest.py")
        pytest_options = checkout.pytest_options()
        # the tests find the checkout's data folders beside their own (reference/tests/../../fixtures): in
        # mutmut's copy they are links to the checkout's, which the tests only read
        mutants = project / "mutants"
        mutants.mkdir()
        for folder in ("fixtures", "snapshots"):
            (mutants / folder).symlink_to(checkout.root / folder, target_is_directory=True)
    text = pyproject_text(mutmut_settings(suite, modules), pytest_options)
    (project / "pyproject.toml").write_text(text, encoding="utf-8")
    return project
