"""The project's names: the distributions, import packages, command and pytest plugin carry them, and the name
the project had before 0.2.0 survives only in the CHANGELOG's entry that records the rename."""

from __future__ import annotations

import importlib
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The name before 0.2.0, spelled in two parts so that this file does not say it.
OLD_NAME = "tool" + "contract"

#: The CHANGELOG section that records the rename, the one place the old name may stand.
RENAME_HEADING = "### Renamed"


def test_the_distributions_carry_the_new_names() -> None:
    assert metadata.distribution("toolcanon").metadata["Name"] == "toolcanon"
    assert metadata.distribution("toolcanon-conformance").metadata["Name"] == "toolcanon-conformance"
    requires = metadata.requires("toolcanon-conformance") or []
    assert any(requirement.startswith("toolcanon") and "conformance" not in requirement for requirement in requires)


@pytest.mark.parametrize("package", ["toolcanon", "toolcanon_conformance"])
def test_the_import_packages_carry_the_new_names(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__file__ is not None
    assert Path(module.__file__).resolve().parent.name == package


def test_the_command_and_the_pytest_plugin_carry_the_new_names() -> None:
    scripts = {entry.name: entry.value for entry in metadata.entry_points(group="console_scripts")}
    assert scripts.get("toolcanon") == "toolcanon_conformance.cli:main"
    plugins = {entry.name: entry.value for entry in metadata.entry_points(group="pytest11")}
    assert plugins.get("toolcanon_conformance") == "toolcanon_conformance.plugin"
    assert not [name for name in (*scripts, *plugins) if OLD_NAME in name.lower()]


def _tree() -> list[Path]:
    """Every file of the checkout git tracks, and the untracked ones it does not ignore."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout: the tree's file list is git's")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    return [ROOT / name for name in listed.decode("utf-8").split("\0") if name and (ROOT / name).is_file()]


def _changelog_outside_the_rename_entry(text: str) -> str:
    """The CHANGELOG without its rename entry: from its heading to the next heading of that level or above."""
    lines = text.splitlines(keepends=True)
    starts = [index for index, line in enumerate(lines) if line.rstrip() == RENAME_HEADING]
    assert len(starts) == 1, f"the CHANGELOG has {len(starts)} {RENAME_HEADING!r} sections, not one"
    start = starts[0]
    end = next(
        (index for index in range(start + 1, len(lines)) if lines[index].startswith(("# ", "## ", "### "))),
        len(lines),
    )
    assert OLD_NAME in "".join(lines[start:end]).lower(), "the rename entry does not name the old name"
    return "".join(lines[:start] + lines[end:])


def test_nothing_in_the_tree_but_the_rename_entry_says_the_old_name() -> None:
    saying: list[str] = []
    for path in _tree():
        relative = path.relative_to(ROOT).as_posix()
        if OLD_NAME in relative.lower():
            saying.append(f"{relative} (its path)")
            continue
        data = path.read_bytes()
        if relative == "CHANGELOG.md":
            data = _changelog_outside_the_rename_entry(data.decode("utf-8")).encode("utf-8")
        if OLD_NAME.encode() in data.lower():
            saying.append(relative)
    assert not saying, f"the old name stands in: {saying}"
