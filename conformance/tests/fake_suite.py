"""A small scenario suite on disk and an implementation that answers it by scenario id (for CLI and plugin tests).

Scenario ids say what the implementation :data:`implementation` does: ``ok-*`` answers the golden, ``bad-*``
a transcript that differs at ``$.scenario``, ``skip-*`` declines, ``err-*`` raises.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from misbehaving_adapter import transcript

from toolcanon_conformance.implementation import ImplementationInfo, Outcome, Ran, Skipped

SUITE: dict[str, list[str]] = {
    "ok-plain": ["R-SNAP-1"],
    "ok-nested": ["R-SNAP-1", "R-NEST-2"],
    "bad-meta": ["R-NEST-2"],
    "skip-set": ["R-SNAP-3"],
    "err-hook": ["R-WRAP-1"],
    "ok-mcp": ["R-MCP-1"],
}


def scenario(scenario_id: str, rules: list[str]) -> dict[str, Any]:
    return {
        "formatVersion": 1,
        "id": scenario_id,
        "rules": rules,
        "description": f"the {scenario_id} case",
        "requires": ["mcp"] if "mcp" in scenario_id else [],
        "tools": {
            "t": {
                "parameters": {},
                "output": {"schema": {"type": "string"}, "render": {"kind": "text"}},
                "body": {"kind": "return", "value": "x"},
            }
        },
        "steps": [{"id": "c1", "call": {"name": "t", "arguments": {}}}],
    }


def write_suite(root: Path, suite: dict[str, list[str]] | None = None) -> tuple[Path, Path]:
    """Scenario files and goldens for ``suite`` under ``root``; returns the two directories."""
    scenarios, goldens = root / "scenarios", root / "goldens"
    scenarios.mkdir(parents=True)
    goldens.mkdir(parents=True)
    for scenario_id, rules in (SUITE if suite is None else suite).items():
        (scenarios / f"{scenario_id}.json").write_text(json.dumps(scenario(scenario_id, rules)))
        (goldens / f"{scenario_id}.json").write_text(transcript({"id": scenario_id}))
    return scenarios, goldens


class ByName:
    """Answers each scenario as its id says."""

    def start(self) -> ImplementationInfo:
        return ImplementationInfo("by-name", "python", "0.1", ("wrappers",), issues="https://example.org/issues")

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        scenario_id: str = scenario["id"]
        if scenario_id.startswith("bad-"):
            return Ran(transcript({"id": scenario_id + "-not"}))
        if scenario_id.startswith("skip-"):
            return Skipped("sets are not expressible here")
        if scenario_id.startswith("err-"):
            raise NotImplementedError("wrapper hooks")
        return Ran(transcript(scenario))

    def stop(self) -> None:
        pass


implementation = ByName()


class WaitsOnNested(ByName):
    """As :class:`ByName`, but waits for ever on ``ok-nested``."""

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        if scenario["id"] == "ok-nested":
            threading.Event().wait()
        return super().run(seq, scenario)


waits_on_nested = WaitsOnNested()
