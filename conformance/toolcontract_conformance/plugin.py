"""The kit's pytest plugin: every scenario as a test of the implementation under test.

``pytest --pyargs toolcontract_conformance [--impl MODULE:ATTR | --impl-cmd "CMD"] [--baseline FILE]``
collects ``toolcontract_conformance/test_conformance.py``: one test per scenario id, marked with each rule id
it exercises (``-m R-POST-4``). A test passes when the transcript equals the golden byte for byte, fails with
the first differing JSON path and the rules otherwise, and is skipped only when the implementation declines
the scenario (a declared missing capability, or its own ``skipped`` answer, with its message). Without
``--impl`` or ``--impl-cmd`` the bundled reference is checked, in-process.

The session ends with the verdict ``toolcontract check`` gives the same run, judged by the same code
(:func:`~toolcontract_conformance.report.run_json`, under the same ``--require`` and ``--fail-on-skip``), in one
line of the terminal summary; a verdict other than PASS (nothing passed, a required capability missing, a skip
under ``--fail-on-skip``) fails a session whose tests all passed.

The plugin is loaded by every pytest run in an environment where the kit is installed, so it only adds
options and fixtures; it does nothing until its test module is collected. It also makes the renderer
toolkit's ``native_snapshot`` fixture available to any test suite.
"""

from __future__ import annotations

import importlib
import itertools
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from toolcontract_conformance.adapters.inprocess import InProcess
from toolcontract_conformance.adapters.subprocess import Subprocess
from toolcontract_conformance.baseline import Baseline, BaselineError
from toolcontract_conformance.display import visible
from toolcontract_conformance.exceptions import AdapterError
from toolcontract_conformance.golden_source import golden_source_of
from toolcontract_conformance.implementation import Implementation, ImplementationInfo
from toolcontract_conformance.report import Policy, Run, run_json, verdict_line
from toolcontract_conformance.runner import (
    DEFAULT_MAX_FAILURES,
    GoldenLookup,
    ScenarioResult,
    SuiteResult,
    Watchdog,
    apply_baseline,
    capability_warning,
    golden_directory,
    run_scenario,
)

__all__ = ["ConformanceSession", "toolcontract_conformance"]

_DEFAULT_IMPLEMENTATION = "toolcontract_conformance.adapters.reference:implementation"
_RENDERER_TOOLKIT = "toolcontract_conformance.renderer_toolkit"
_SCENARIOS_KEY = pytest.StashKey[list[dict[str, Any]]]()
_SESSION_KEY = pytest.StashKey["ConformanceSession"]()
_SELECTED_KEY = pytest.StashKey[int]()
_VERDICT_KEY = pytest.StashKey[dict[str, Any]]()
_FIXTURE = "toolcontract_conformance"


def pytest_addoption(parser: pytest.Parser) -> None:
    """The conformance options."""
    group = parser.getgroup("toolcontract", "conformance to the canonical tool output contract")
    group.addoption("--impl", metavar="MODULE:ATTR", help="the implementation under test, a Python object")
    group.addoption("--impl-cmd", metavar="CMD", help="the implementation under test, a protocol adapter command")
    group.addoption("--baseline", metavar="FILE", help="a baseline file of known failures")
    group.addoption("--impl-timeout", type=float, metavar="S", help="seconds per scenario (--impl-cmd default: 30)")
    group.addoption(
        "--max-failures",
        type=int,
        default=DEFAULT_MAX_FAILURES,
        metavar="N",
        help=f"declare the implementation unresponsive after N scenarios in a row time out or crash "
        f"(default {DEFAULT_MAX_FAILURES}, 0: never)",
    )
    group.addoption(
        "--require",
        action="append",
        default=[],
        metavar="CAPABILITY",
        help="fail the session if the implementation does not declare CAPABILITY (repeatable)",
    )
    group.addoption("--fail-on-skip", action="store_true", help="fail the session if any scenario was skipped")
    group.addoption("--validate-protocol", action="store_true", help="check every protocol message")
    group.addoption("--scenarios-dir", metavar="DIR", help="scenario files (default: the kit's own)")
    group.addoption("--goldens-dir", metavar="DIR", help="golden transcripts (default: the kit's own)")


def pytest_configure(config: pytest.Config) -> None:
    """Check the options, declare the marker, and bring in the renderer toolkit's fixtures."""
    if config.getoption("impl") and config.getoption("impl_cmd"):
        raise pytest.UsageError("--impl and --impl-cmd are exclusive: name one implementation under test")
    config.addinivalue_line("markers", "conformance: a conformance scenario (toolcontract_conformance)")
    _register_renderer_toolkit(config)


def _register_renderer_toolkit(config: pytest.Config) -> None:
    if config.pluginmanager.has_plugin(_RENDERER_TOOLKIT):
        return
    try:
        module = importlib.import_module(_RENDERER_TOOLKIT)
    except ModuleNotFoundError as error:
        if error.name == _RENDERER_TOOLKIT:
            return
        config.issue_config_time_warning(
            pytest.PytestConfigWarning(f"native_snapshot is unavailable: cannot import {_RENDERER_TOOLKIT}: {error}"),
            stacklevel=2,
        )
        return
    except ImportError as error:
        config.issue_config_time_warning(
            pytest.PytestConfigWarning(f"native_snapshot is unavailable: cannot import {_RENDERER_TOOLKIT}: {error}"),
            stacklevel=2,
        )
        return
    if not config.pluginmanager.is_registered(module):
        config.pluginmanager.register(module, _RENDERER_TOOLKIT)


def _scenarios(config: pytest.Config) -> list[dict[str, Any]]:
    if _SCENARIOS_KEY not in config.stash:
        from toolcontract_conformance.scenario import ScenarioError, load_scenarios

        try:
            config.stash[_SCENARIOS_KEY] = [s.data for s in load_scenarios(config.getoption("scenarios_dir"))]
        except (ScenarioError, FileNotFoundError) as error:
            raise pytest.UsageError(f"cannot load the conformance scenarios: {error}") from None
    return config.stash[_SCENARIOS_KEY]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One test per scenario, wherever a test asks for ``toolcontract_scenario``."""
    if "toolcontract_scenario" not in metafunc.fixturenames:
        return
    config = metafunc.config
    scenarios = _scenarios(config)
    rules = sorted({str(rule) for scenario in scenarios for rule in scenario.get("rules", ())})
    for rule in rules:
        config.addinivalue_line("markers", f"{rule}: scenarios exercising contract rule {rule}")
    metafunc.parametrize(
        "toolcontract_scenario",
        [
            pytest.param(
                scenario,
                id=str(scenario["id"]),
                marks=[pytest.mark.conformance, *(getattr(pytest.mark, str(r)) for r in scenario.get("rules", ()))],
            )
            for scenario in scenarios
        ],
    )


@dataclass
class ConformanceSession:
    """The implementation under test for a pytest session, started once, and what judges its answers.

    After ``watchdog.max_failures`` scenarios in a row time out or crash, the implementation is unresponsive:
    every later test fails at once with that reason, without running. ``results`` holds every scenario's
    judged result, in the order run, from which :meth:`verdict` judges the session under ``policy``.
    """

    implementation: Implementation
    goldens: GoldenLookup
    baseline: Baseline | None = None
    watchdog: Watchdog = field(default_factory=Watchdog)
    policy: Policy = field(default_factory=Policy)
    results: list[ScenarioResult] = field(default_factory=list)
    _info: ImplementationInfo | None = None
    _start_error: str | None = None
    _seq: Iterator[int] = field(default_factory=itertools.count)
    _started: str = ""
    _began: float = 0.0

    @property
    def info(self) -> ImplementationInfo:
        """The implementation's metadata; starts it on first use (a failure fails the test)."""
        if self._start_error is not None:
            pytest.fail(self._start_error, pytrace=False)
        if self._info is None:
            self._started = datetime.now(UTC).isoformat(timespec="seconds")
            self._began = time.perf_counter()
            try:
                self._info = self.implementation.start()
            except AdapterError as error:
                self._start_error = f"cannot start {self.implementation!r}: {error}"
                pytest.fail(self._start_error, pytrace=False)
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
        """The session's run as the JSON report has it, judged under ``policy`` as ``toolcontract check`` judges
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


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Before any scenario runs, set up the implementation and the baseline: what is wrong with either (a bad
    baseline file, a ``--impl`` that cannot be imported) is one usage error, not one error per scenario."""
    if any(_FIXTURE in getattr(item, "fixturenames", ()) for item in items):
        config.stash[_SESSION_KEY] = _conformance_session(config)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Count the scenarios selected to run (after ``-k``, ``-m`` and the like)."""
    session.config.stash[_SELECTED_KEY] = sum(_FIXTURE in getattr(item, "fixturenames", ()) for item in session.items)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int | pytest.ExitCode) -> None:
    """Judge the session's run; a verdict other than PASS fails a session that would otherwise pass."""
    conformance = session.config.stash.get(_SESSION_KEY, None)
    if conformance is None:
        return
    stopped = bool(session.shouldstop or session.shouldfail) or exitstatus == pytest.ExitCode.INTERRUPTED
    entry = conformance.verdict(session.config.stash.get(_SELECTED_KEY, None) if stopped else None)
    if entry is None:
        return
    session.config.stash[_VERDICT_KEY] = entry
    if entry["verdict"] != "pass" and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int | pytest.ExitCode, config: pytest.Config
) -> None:
    """The verdict line: ``toolcontract: NAME VERSION (LANGUAGE): NOTHING PASSED: 0 passed, …``."""
    entry = config.stash.get(_VERDICT_KEY, None)
    if entry is None:
        return
    implementation = entry["implementation"]
    line = f"toolcontract: {implementation['name']} {implementation['version']} ({implementation['language']}): "
    passed = entry["verdict"] == "pass"
    terminalreporter.write_line(visible(line + verdict_line(entry)), green=passed, red=not passed, bold=True)


@pytest.fixture(scope="session")
def toolcontract_conformance(request: pytest.FixtureRequest) -> Iterator[ConformanceSession]:
    """The session's :class:`ConformanceSession`: the implementation named by the options, and its judge."""
    config = request.config
    if _SESSION_KEY not in config.stash:
        config.stash[_SESSION_KEY] = _conformance_session(config)
    session = config.stash[_SESSION_KEY]
    yield session
    session.stop()


def _conformance_session(config: pytest.Config) -> ConformanceSession:
    timeout: float | None = config.getoption("impl_timeout")
    implementation: Implementation
    if config.getoption("impl_cmd"):
        implementation = Subprocess(
            config.getoption("impl_cmd"),
            timeout=30.0 if timeout is None else timeout,
            validate_protocol=bool(config.getoption("validate_protocol")),
        )
    else:
        target = config.getoption("impl") or _DEFAULT_IMPLEMENTATION
        implementation = InProcess(target, timeout=timeout)
        try:
            implementation.resolve()
        except AdapterError as error:
            raise pytest.UsageError(f"--impl {target}: {error}") from None
    baseline = _baseline(config)
    goldens_option = config.getoption("goldens_dir")
    if goldens_option:
        goldens = golden_directory(goldens_option)
    else:
        from toolcontract_conformance.locations import goldens_dir

        goldens = golden_directory(goldens_dir())
    max_failures: int = config.getoption("max_failures")
    if max_failures < 0:
        raise pytest.UsageError(f"--max-failures {max_failures}: give 0 (never give up) or more")
    return ConformanceSession(implementation, goldens, baseline, Watchdog(max_failures), _policy(config))


def _policy(config: pytest.Config) -> Policy:
    required: list[str] = config.getoption("require")
    for capability in required:
        if not capability.strip():
            raise pytest.UsageError("--require is empty: name the capability")
    return Policy(tuple(dict.fromkeys(required)), bool(config.getoption("fail_on_skip")))


def _baseline(config: pytest.Config) -> Baseline | None:
    file: str | None = config.getoption("baseline")
    if not file:
        return None
    try:
        baseline = Baseline.load(Path(file))
    except BaselineError as error:
        raise pytest.UsageError(str(error)) from None
    problems = baseline.unknown_scenarios({str(scenario["id"]) for scenario in _scenarios(config)})
    if problems:
        raise pytest.UsageError("; ".join(problem.message for problem in problems))
    return baseline
