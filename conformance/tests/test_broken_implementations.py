"""The kit fails every deliberately broken implementation, on a scenario of the rule its bug violates."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from broken_implementations import BUGS, NEW_FORMAT_BUGS, Broken, Bug

from toolcanon_conformance.adapters.inprocess import InProcess
from toolcanon_conformance.adapters.reference import ReferenceImplementation
from toolcanon_conformance.locations import goldens_dir
from toolcanon_conformance.runner import ScenarioResult, golden_directory, run_suite, select
from toolcanon_conformance.scenario import load_scenarios

BROKEN_DEADLINE = 10.0
"""Seconds a scenario of generated values may run on a broken implementation (the slowest takes under 1 s on
the reference)."""

LIGHT_DEADLINE = 3.0
"""Seconds any other scenario may run on a broken implementation: each takes milliseconds on the reference (a
timeout scenario waits about 100 ms), so a bug that makes one wait for ever costs 3 s, not 10."""


@pytest.fixture(scope="module")
def scenarios() -> list[dict[str, Any]]:
    return [scenario.data for scenario in load_scenarios()]


@pytest.fixture(scope="module")
def reference_statuses() -> dict[str, str]:
    """By scenario id, the reference's status: each scenario runs once, however many bugs its rules have."""
    return {}


def test_there_are_at_least_fifteen_bugs() -> None:
    assert len(BUGS) >= 15
    assert len({bug.name for bug in BUGS}) == len(BUGS)


def _light_then_generated(scenarios: list[dict[str, Any]]) -> list[tuple[list[dict[str, Any]], float]]:
    generated = [scenario for scenario in scenarios if "generated-values" in scenario.get("requires", ())]
    light = [scenario for scenario in scenarios if scenario not in generated]
    return [(batch, deadline) for batch, deadline in ((light, LIGHT_DEADLINE), (generated, BROKEN_DEADLINE)) if batch]


@pytest.mark.parametrize("bug", BUGS, ids=[bug.name for bug in BUGS])
def test_the_kit_fails_the_broken_implementation_naming_the_rule(
    bug: Bug, scenarios: list[dict[str, Any]], reference_statuses: dict[str, str]
) -> None:
    chosen = select(scenarios, rules=[bug.rule])
    if not chosen:
        pytest.fail(f"no scenario exercises {bug.rule}, so nothing can catch {bug.name}", pytrace=False)
    goldens = golden_directory(goldens_dir())
    caught: list[ScenarioResult] = []
    # the scenarios of ordinary values first: those of generated values (100,000 levels deep, a million items)
    # run only when no other scenario of the rule catches the bug
    for batch, deadline in _light_then_generated(chosen):
        unknown = [scenario for scenario in batch if scenario["id"] not in reference_statuses]
        for result in run_suite(InProcess(ReferenceImplementation()), unknown, goldens).results:
            reference_statuses[result.scenario] = result.status
        # a bug may make a scenario wait for ever: the deadline toolcanon fuzz gives by default ends it as errored
        broken = run_suite(InProcess(Broken(bug), timeout=deadline), batch, goldens)
        caught = [
            result
            for result in broken.results
            if reference_statuses[result.scenario] == "passed"
            and result.status == "failed"
            and bug.rule in result.rules
        ]
        if caught:
            break
    assert caught, f"{bug.name} passes every scenario of {bug.rule} that the reference passes"
    assert bug.rule in caught[0].explain()


PRINCIPLES = range(1, 12)
"""The principles of CONTRIBUTING.md's checklist for a new scenario."""
ROOT = Path(__file__).resolve().parents[2]


def test_every_principle_of_the_checklist_has_a_bug_of_its_own() -> None:
    checklist = (ROOT / "CONTRIBUTING.md").read_text("utf-8")
    section = checklist.split("### The checklist for a new scenario", 1)[1].split("\n## ", 1)[0]
    written = {int(number) for number in re.findall(r"^(\d+)\. \*\*", section, flags=re.MULTILINE)}
    assert written == set(PRINCIPLES)
    covered = {bug.principle for bug in BUGS}
    assert covered - {None} <= set(PRINCIPLES)
    missing = [principle for principle in PRINCIPLES if principle not in covered]
    assert not missing, f"no deliberately broken implementation stands for principle(s) {missing}"


def test_the_bugs_of_the_generator_principle_are_hunted_by_generated_scenarios() -> None:
    # principle 7: what catches such a bug is the generator, so a hunt over generated scenarios must look for it
    hunts = (ROOT / "conformance" / "tests" / "test_properties.py").read_text("utf-8")
    generated = [bug.name for bug in BUGS if bug.principle == 7]
    assert generated
    assert [name for name in generated if f'broken("{name}")' not in hunts] == []


def test_the_bugs_of_the_expressible_principle_are_caught_by_the_formats_extensions() -> None:
    # principle 6: a case the format could not state is a gap in the format, so what catches its bug is a scenario
    # of the extension, which the other scenarios of its rule could not replace
    expressible = {bug.name for bug in BUGS if bug.principle == 6}
    assert expressible == set(NEW_FORMAT_BUGS)
    known = {scenario.id for scenario in load_scenarios()}
    assert [name for name, ids in NEW_FORMAT_BUGS.items() if not ids <= known] == []


@pytest.mark.parametrize("bug", [bug for bug in BUGS if bug.name in NEW_FORMAT_BUGS], ids=lambda bug: bug.name)
def test_an_expressible_bug_passes_every_scenario_but_the_formats_extensions(
    bug: Bug, scenarios: list[dict[str, Any]], reference_statuses: dict[str, str]
) -> None:
    others = [
        scenario
        for scenario in select(scenarios, rules=[bug.rule])
        if scenario["id"] not in NEW_FORMAT_BUGS[bug.name] and "generated-values" not in scenario.get("requires", ())
    ]
    goldens = golden_directory(goldens_dir())
    unknown = [scenario for scenario in others if scenario["id"] not in reference_statuses]
    for result in run_suite(InProcess(ReferenceImplementation()), unknown, goldens).results:
        reference_statuses[result.scenario] = result.status
    broken = run_suite(InProcess(Broken(bug), timeout=LIGHT_DEADLINE), others, goldens)
    caught = [
        result.scenario
        for result in broken.results
        if reference_statuses[result.scenario] == "passed" and result.status != "passed"
    ]
    assert caught == [], f"{bug.name} is caught by scenarios the format could state before: {caught}"
