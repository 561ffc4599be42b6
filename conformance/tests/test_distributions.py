"""The two distributions built from this repository: their metadata agrees, and each declares what it imports."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
REFERENCE, KIT = ROOT / "reference", ROOT / "conformance"

#: The distribution that provides each third-party module the kit imports.
PROVIDERS = {"jsonschema": "jsonschema", "hypothesis": "hypothesis", "pytest": "pytest", "_pytest": "pytest"}
PROVIDERS |= {"syrupy": "syrupy", "toolcanon": "toolcanon"}


def _project(folder: Path) -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return project


def _version(folder: Path) -> str:
    """The ``__version__`` the distribution's version is read from (its ``tool.hatch.version`` path)."""
    config = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
    source = (folder / config["tool"]["hatch"]["version"]["path"]).read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"$', source, re.MULTILINE)
    assert found is not None, f"{folder.name}: no __version__ line"
    return found.group(1)


def _requirements(folder: Path) -> dict[str, Requirement]:
    return {(r := Requirement(text)).name: r for text in _project(folder).get("dependencies", [])}


def test_the_reference_has_no_dependency() -> None:
    assert _project(REFERENCE)["name"] == "toolcanon"
    assert _project(REFERENCE)["dependencies"] == []


def test_the_kit_requires_a_compatible_reference() -> None:
    """The goldens are the reference's transcripts: the kit admits this reference and no next minor version."""
    required = _requirements(KIT)["toolcanon"].specifier
    version = _version(REFERENCE)
    assert required.contains(version)
    major, minor, *_ = (int(part) for part in version.split("."))
    assert not required.contains(f"{major}.{minor + 1}.0")
    assert not required.contains(f"{major + 1}.0.0")


def test_the_kit_declares_every_third_party_module_it_imports() -> None:
    imported: set[str] = set()
    for path in (KIT / "toolcanon_conformance").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name.partition(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
                imported.add(node.module.partition(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"toolcanon_conformance"}
    undeclared = {name for name in third_party if PROVIDERS.get(name) not in _requirements(KIT)}
    assert not undeclared, f"imported by the kit, provided by no dependency it declares: {sorted(undeclared)}"


def test_the_kit_installs_the_command_and_the_pytest_plugin() -> None:
    project = _project(KIT)
    assert project["name"] == "toolcanon-conformance"
    assert project["scripts"] == {"toolcanon": "toolcanon_conformance.cli:main"}
    assert project["entry-points"]["pytest11"] == {"toolcanon_conformance": "toolcanon_conformance.plugin"}


@pytest.mark.parametrize("folder", [REFERENCE, KIT], ids=lambda folder: folder.name)
def test_each_distribution_carries_the_license_readme_and_links(folder: Path) -> None:
    project = _project(folder)
    assert (folder / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    assert (folder / project["readme"]).is_file()
    assert project["license"] == "MIT"
    home = "https://github.com/toolcanon/toolcanon"
    assert project["urls"] == {
        "Homepage": home,
        "Documentation": f"{home}/tree/main/docs",
        "Issues": f"{home}/issues",
        "Changelog": f"{home}/blob/main/CHANGELOG.md",
    }
    assert project["requires-python"] == ">=3.11"


def test_the_reference_adapter_announces_the_project_links_at_start() -> None:
    """Its start answer names the homepage and the issue tracker of the distributions, in the protocol's schema."""
    from toolcanon_conformance.adapters.reference import implementation
    from toolcanon_conformance.protocol import PROTOCOL_VERSION, info_to_wire, schema_errors

    wire = info_to_wire(implementation.start())
    urls = _project(KIT)["urls"]
    assert (wire["homepage"], wire["issues"]) == (urls["Homepage"], urls["Issues"])
    assert schema_errors("start-response", {"version": PROTOCOL_VERSION, "implementation": wire}) == []
