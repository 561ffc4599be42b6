"""The conformance session the pytest plugin runs: the implementation under test, started once, and its judge.

Imported by the plugin only once a session asks for conformance (its test module is collected), so that a
pytest run of an unrelated test suite imports none of the kit's machinery.
"""

from __future__ import annotations

import itertools
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import pytest

from toolcanon_conformance.baseline import Baseline
from toolcanon_conformance.exceptions import AdapterError
from toolcanon_conformance.golden_source import golden_source_of
from toolcanon_conformance.implementation import Implementation, ImplementationInfo
from toolcanon_conformance.report import Policy, Run, run_json
from toolcanon_conformance.runner import (
    GoldenLookup,
    ScenarioResult,
    SuiteResult,
    Watchdog,
    apply_baseline,
    capability_warning,
    run_scenario,
)

__all__ = ["START_FAILED", "ConformanceSession"]

#: The exit status of a session whose implementation could not be started (as ``toolcanon check``'s).
START_FAILED = 2


@dataclass
class ConformanceSession:
    """The implementation under test for a pytest session, started once, and what judges its answers.

    When the implementation cannot be started, the session stops there with exit status :data:`START_FAILED`
    (``pytest.exit``): no scenario can run. After ``watchdog.max_failures`` scenarios in a row time out or
    crash, the implementation is unresponsive: every later test fails at once with that reason, without
    running. ``results`` holds every scenario's judged result, in the order run, from which :meth:`verdict`
    judges the session under ``policy``.
    """

    implementation: Implementation
    goldens: GoldenLookup
    baseline: Baseline | None = None
    watchdog: Watchdog = field(default_factory=Watchdog)
    policy: Policy = field(default_factory=Policy)
    results: list[ScenarioResult] = field(default_factory=list)
    _info: ImplementationInfo | None = None
    _seq: Iterator[int] = field(default_factory=itertools.count)
    _started: str = ""
    _began: float = 0.0

    @property
    def info(self) -> ImplementationInfo:
        """The implementation's metadata; starts it on first use (a failure ends the session, status 2)."""
        if self._info is None:
            self._started = datetime.now(UTC).isoformat(timespec="seconds")
            self._began = time.perf_counter()
            try:
                self._info = self.implementation.start()
            except AdapterError as error:
                pytest.exit(f"toolcanon: cannot start {self.implementation!r}: {error}", returncode=START_FAILED)
            warning = capability_warning(self._info)
            if warning is not None:
                warnings.warn(pytest.PytestWarning(warning), stacklevel=2)
        return self._info

    def check(self, scenario: dict[str, Any]) -> None:
        """Run one scenario and pass, fail, skip or xfail (baseline) the current test accordingly."""
        info = self.info
        if self.watchdog.gives_up_on(scenario, info):
            result = self.watchdog.not_run(scenario)
        else:
            golden = self.goldens(str(scenario["id"]))
            result = run_scenario(self.implementation, info, next(self._seq), scenario, golden)
            self.watchdog.record(result)
        result = apply_baseline(replace(result, golden_source=golden_source_of(scenario)), self.baseline)
        self.results.append(result)
        if result.baseline == "known-failure":
            pytest.xfail(f"known failure (baseline){': ' + result.baseline_note if result.baseline_note else ''}")
        if result.baseline in ("stale", "unlisted"):
            pytest.fail(result.explain(), pytrace=False)
        if result.status == "skipped":
            pytest.skip(result.message + (f" ({result.issue_url})" if result.issue_url else ""))
        if result.status != "passed":
            pytest.fail(result.explain(), pytrace=False)

    def stop(self) -> None:
        """Stop the implementation if it was started."""
        if self._info is not None:
            self.implementation.stop()

    def verdict(self, selected: int | None = None) -> dict[str, Any] | None:
        """The session's run as the JSON report has it, judged under ``policy`` as ``toolcanon check`` judges
        it (``None`` when the implementation never started). ``selected``: how many scenarios were to run, when
        the session stopped before all of them did."""
        if self._info is None:
            return None
        suite = SuiteResult(
            self._info,
            tuple(self.results),
            seconds=time.perf_counter() - self._began,
            started=self._started,
            unresponsive=self.watchdog.unresponsive,
        )
        return run_json(Run(suite, selected=selected), self.policy)
