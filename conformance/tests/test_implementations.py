"""The implementations under test in ``implementations/``: pinned, documented, and strict about their deviations.

Running an implementation needs its own toolchain (``nox -s upstream``); these tests check only what its folder
promises without running it: exact dependency pins, a baseline whose every entry has a reason, is narrowed to
paths and has its paragraph in ``docs/edge-cases.md``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toolcanon_conformance.baseline import Baseline
from toolcanon_conformance.protocol import known_capabilities
from toolcanon_conformance.scenario import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
IMPLEMENTATIONS = sorted(path for path in (ROOT / "implementations").iterdir() if path.is_dir())
DEVIATIONS_HEADING = re.compile(r"^## \d+\. Where the original implementation deviates$", re.MULTILINE)


#: The scenarios an implementation answers errored as a whole, where no transcript exists to narrow an entry to paths.
ERRORED_AS_A_WHOLE = {
    "nest-content-not-a-list": "the original's run_code run never settles after its bridge's unhandled rejection",
}


def _deviations_section() -> str:
    text = (ROOT / "docs" / "edge-cases.md").read_text(encoding="utf-8")
    match = DEVIATIONS_HEADING.search(text)
    assert match is not None, "docs/edge-cases.md has no section 'Where the original implementation deviates'"
    following = text.find("\n## ", match.end())
    return text[match.end() : following if following != -1 else len(text)]


def test_there_is_an_implementation_under_test() -> None:
    assert [path.name for path in IMPLEMENTATIONS] == ["typescript-dsh-tools"]


@pytest.mark.parametrize("folder", IMPLEMENTATIONS, ids=lambda path: path.name)
def test_every_dependency_is_pinned_exactly_and_locked(folder: Path) -> None:
    manifest = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((folder / "package-lock.json").read_text(encoding="utf-8"))
    locked = lock["packages"]
    for name, version in manifest["dependencies"].items():
        assert re.fullmatch(r"\d+\.\d+\.\d+(-[\w.]+)?", version), f"{name} is not pinned exactly: {version}"
        assert locked[f"node_modules/{name}"]["version"] == version, f"{name}: the lock file has another version"


@pytest.mark.parametrize("folder", IMPLEMENTATIONS, ids=lambda path: path.name)
def test_baseline_entries_are_strict_reasoned_and_documented(folder: Path) -> None:
    baseline = Baseline.load(folder / "baseline.json")
    scenario_ids = {scenario.id for scenario in load_scenarios()}
    section = _deviations_section()
    for entry in baseline.entries.values():
        assert entry.scenario in scenario_ids, f"{entry.scenario} is no scenario"
        assert entry.paths or entry.scenario in ERRORED_AS_A_WHOLE, (
            f"{entry.scenario}: an entry must name the paths where the deviation shows"
        )
        assert len(entry.reason) > 40, f"{entry.scenario}: an entry needs its reason"
        assert f"`{entry.scenario}`" in section, f"{entry.scenario} has no paragraph in docs/edge-cases.md"


@pytest.mark.parametrize("folder", IMPLEMENTATIONS, ids=lambda path: path.name)
def test_readme_maps_every_capability(folder: Path) -> None:
    readme = (folder / "README.md").read_text(encoding="utf-8")
    missing = [name for name in known_capabilities() if f"`{name}`" not in readme]
    assert not missing, f"{folder.name}/README.md does not map the capabilities {missing}"
