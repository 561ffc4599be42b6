"""``toolcanon smoke``: is an implementation wired up at all? The handshake, then one trivial scenario.

The scenario is :data:`SMOKE_SCENARIO`, ``pre-default-allow``: one tool returning its argument, called once
without any policy, which every implementation must get right and which needs no optional capability. An
adapter that passes it starts, answers ``run`` with a well-formed transcript and stops: what is left is the
contract itself, for ``toolcanon check``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from toolcanon_conformance.display import PLAIN, Style
from toolcanon_conformance.implementation import Implementation, ImplementationInfo
from toolcanon_conformance.runner import ScenarioResult, golden_directory, run_suite

__all__ = ["SMOKE_SCENARIO", "SmokeResult", "smoke", "smoke_text"]

#: The id of the scenario ``toolcanon smoke`` runs.
SMOKE_SCENARIO = "pre-default-allow"


@dataclass(frozen=True, slots=True)
class SmokeResult:
    """What the implementation said about itself, and how it did on :data:`SMOKE_SCENARIO`."""

    info: ImplementationInfo
    result: ScenarioResult

    @property
    def passed(self) -> bool:
        """True when the scenario passed (a skip is no pass: the scenario needs no capability)."""
        return self.result.status == "passed"


def smoke(
    implementation: Implementation,
    *,
    scenarios_dir: Path | None = None,
    goldens_dir: Path | None = None,
    warn: Callable[[str], None] | None = None,
) -> SmokeResult:
    """Start ``implementation``, run :data:`SMOKE_SCENARIO` (the kit's own, by default), stop it.

    Raises the adapter's :class:`~toolcanon_conformance.exceptions.AdapterError` when it cannot start, and
    :class:`~toolcanon_conformance.scenario.ScenarioError` or :class:`FileNotFoundError` when the scenario
    cannot be read. ``warn`` receives a warning for capability names the scenario format does not know
    (default: printed on standard error).
    """
    from toolcanon_conformance.locations import goldens_dir as kit_goldens
    from toolcanon_conformance.locations import scenarios_dir as kit_scenarios
    from toolcanon_conformance.scenario import load_scenario

    scenario = load_scenario((scenarios_dir or kit_scenarios()) / f"{SMOKE_SCENARIO}.json")
    goldens = golden_directory(goldens_dir or kit_goldens())
    suite = run_suite(implementation, [scenario.data], goldens, warn=warn or _warn_on_stderr)
    return SmokeResult(suite.implementation, suite.results[0])


def _warn_on_stderr(message: str) -> None:
    print(f"toolcanon smoke: warning: {message}", file=sys.stderr)


def smoke_text(outcome: SmokeResult, style: Style = PLAIN) -> str:
    """What was started, the scenario, and ``PASS`` or ``FAIL`` with why, for the terminal."""
    info, result = outcome.info, outcome.result
    lines = [
        f"started: {info.name} {info.version} ({info.language})",
        f"capabilities: {', '.join(info.capabilities) or 'none'}",
        f"scenario: {result.scenario} [{', '.join(result.rules)}]",
    ]
    if outcome.passed:
        lines.append(f"{style.good('PASS')}: the transcript equals the golden ({result.seconds:.2f} s)")
    else:
        lines.append(f"{style.bad('FAIL')}: {result.explain()}")
    return "\n".join(lines)
