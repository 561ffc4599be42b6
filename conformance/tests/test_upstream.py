"""The reference reproduces the transcripts the contract's first implementation answered, byte for byte.

``fixtures/upstream/`` holds 166 scenarios and, per folder, ``upstream-transcripts.jsonl``: one line per scenario
in file-name order. Every line must come out identical, except the differences listed here, each with its
reason (``docs/edge-cases.md``, "Differences from the first implementation's transcripts"). A listed
difference that no longer shows is an error too, so the list never goes stale.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from toolcanon import canonical_json
from toolcanon_conformance.adapters.reference import implementation
from toolcanon_conformance.exotic import first_inexpressible
from toolcanon_conformance.implementation import Ran, Skipped
from toolcanon_conformance.locations import upstream_dir


@dataclass(frozen=True)
class UpstreamCase:
    """One upstream scenario and the line its first implementation answered."""

    scenario: dict[str, Any]
    line: str


def _cases() -> list[UpstreamCase]:
    cases: list[UpstreamCase] = []
    for folder in ("scenarios", "random"):
        base = upstream_dir() / folder
        files = sorted(base.glob("*.json")) or sorted((base / "scenarios").glob("*.json"))
        # split on "\n" only: the lines hold U+2028 unescaped, as JSON.stringify writes it
        lines = (base / "upstream-transcripts.jsonl").read_text("utf-8").rstrip("\n").split("\n")
        assert len(files) == len(lines), folder
        cases.extend(
            UpstreamCase(json.loads(path.read_text("utf-8")), line) for path, line in zip(files, lines, strict=True)
        )
    return cases


CASES = _cases()

NOT_EXPRESSIBLE_IN_PYTHON = {
    "exotics-args": "undefined",
    "exotic-bodies": "throwing-getter",
    "projectors": "undefined",
}
"""Scenarios the first implementation ran but Python cannot express (the kind named first in the file): the
reference answers not applicable, and the rest of the scenario (the steps that need no such value) is compared."""

PYTHON_RUNS_WHAT_UPSTREAM_SKIPPED = {
    "skip-tuple": "a tuple is a Python value (rejected as not lossless JSON); JavaScript has no tuple",
}
"""Scenarios the first implementation could not express but Python can: the reference runs them."""

VALUE_DIFFERENCES = {
    (
        "exotics-args",
        "steps.unsafe-integer",
    ): "2**53 is rejected in Python arguments; JavaScript accepts it as an ordinary number",
    (
        "exotic-bodies",
        "steps.unsafe-integer",
    ): "2**53 is rejected in a Python value; JavaScript accepts it as an ordinary number",
}
"""Transcript places that differ by decision (the value itself differs between the languages)."""


def _prune_inexpressible(scenario: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """The scenario without the tools and steps that need a value Python cannot express; the dropped step ids."""
    tools = {name: tool for name, tool in scenario["tools"].items() if first_inexpressible({"t": tool}) is None}
    dropped: set[str] = set()
    steps = []
    for step in scenario["steps"]:
        needs = {step.get("probe", {}).get("step"), *step.get("persist", {}).get("steps", ())}
        call = step.get("call")
        if (
            (call is not None and (call["name"] not in tools and call["name"] in scenario["tools"]))
            or (call is not None and first_inexpressible(call["arguments"]) is not None)
            or needs & dropped
        ):
            dropped.add(step["id"])
        else:
            steps.append(step)
    return {**scenario, "tools": tools, "steps": steps}, dropped


def _at(document: dict[str, Any], path: str) -> Any:
    node: Any = document
    for part in path.split("."):
        node = node[part]
    return node


def _remove_at(document: dict[str, Any], path: str) -> None:
    *parents, last = path.split(".")
    node: Any = document
    for part in parents:
        node = node[part]
    del node[last]


def _compare(scenario_id: str, ours: str, theirs: dict[str, Any]) -> None:
    """Byte comparison, after checking (and then removing from both) each listed value difference."""
    mine = json.loads(ours)
    for (listed, path), reason in VALUE_DIFFERENCES.items():
        if listed == scenario_id:
            assert _at(mine, path) != _at(theirs, path), f"{path} no longer differs ({reason}): update the list"
            _remove_at(mine, path)
            _remove_at(theirs, path)
    assert canonical_json(mine) == canonical_json(theirs)


@pytest.mark.parametrize("case", CASES, ids=[case.scenario["id"] for case in CASES])
def test_reproduces_upstream(case: UpstreamCase) -> None:
    scenario_id = case.scenario["id"]
    theirs = json.loads(case.line)
    assert theirs["scenario"] == scenario_id, "the transcript lines are out of step with the scenario files"
    outcome = implementation.run(0, case.scenario)

    if scenario_id in PYTHON_RUNS_WHAT_UPSTREAM_SKIPPED:
        assert theirs.get("skipped") is True
        assert isinstance(outcome, Ran), outcome
        return
    if "skipped" in theirs:
        assert outcome == Skipped(theirs["message"])
        return
    if scenario_id in NOT_EXPRESSIBLE_IN_PYTHON:
        assert outcome == Skipped(f"not expressible: {NOT_EXPRESSIBLE_IN_PYTHON[scenario_id]}")
        pruned, dropped = _prune_inexpressible(case.scenario)
        assert dropped, "nothing to prune: the scenario should not be listed as not expressible"
        outcome = implementation.run(0, pruned)
        theirs["steps"] = {key: step for key, step in theirs["steps"].items() if key not in dropped}
    assert isinstance(outcome, Ran), outcome
    if scenario_id in NOT_EXPRESSIBLE_IN_PYTHON or any(listed == scenario_id for listed, _ in VALUE_DIFFERENCES):
        _compare(scenario_id, outcome.transcript, theirs)
    else:
        assert outcome.transcript == case.line


def test_every_listed_difference_names_an_upstream_scenario() -> None:
    ids = {case.scenario["id"] for case in CASES}
    listed = {*NOT_EXPRESSIBLE_IN_PYTHON, *PYTHON_RUNS_WHAT_UPSTREAM_SKIPPED, *(name for name, _ in VALUE_DIFFERENCES)}
    assert listed <= ids


def test_upstream_folder_is_complete() -> None:
    assert len(CASES) == 166
    assert Path(upstream_dir() / "README.md").is_file()
