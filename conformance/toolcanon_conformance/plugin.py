"""The kit's pytest plugin: every scenario as a test of the implementation under test.

``pytest --pyargs toolcanon_conformance [--impl MODULE:ATTR | --impl-cmd "CMD"] [--baseline FILE]``
collects ``toolcanon_conformance/test_conformance.py``: one test per scenario id, marked with each rule id
it exercises (``-m R-POST-4``; ``--rule r-post-4`` selects the same, ignoring case, and refuses an unknown id).
A test passes when the transcript equals the golden byte for byte, fails with the first differing JSON path
and the rules otherwise, and is skipped only when the implementation declines the scenario (a declared missing
capability, or its own ``skipped`` answer, with its message). Without ``--impl`` or ``--impl-cmd`` the bundled
reference is checked, in-process.

The options are ``toolcanon check``'s, under the same names: ``--timeout``, ``--startup-timeout``,
``--scenarios``, ``--goldens``, ``--rule``, ``--max-failures``, ``--require``, ``--fail-on-skip``,
``--validate-protocol``, ``--baseline``. ``--timeout`` is added only when no other plugin has it
(pytest-timeout has its own, per test); ``--impl-timeout`` is always there. ``--scenarios-dir`` and
``--goldens-dir`` still work, with a deprecation warning.

The session ends with the verdict ``toolcanon check`` gives the same run, judged by the same code
(:func:`~toolcanon_conformance.report.run_json`, under the same ``--require`` and ``--fail-on-skip``), in one
line of the terminal summary; a verdict other than PASS (nothing passed, a required capability missing, a skip
under ``--fail-on-skip``) fails a session whose tests all passed. Exit status: 0 pass, 1 a deviation, 2 the
implementation could not be started (the session stops there) or a usage error of the kit's options (one
``ERROR:`` line before any test runs; pytest's own usage errors keep its status 4).

The plugin is loaded by every pytest run in an environment where the kit is installed, so it stays inert
unless asked: it adds its options, a marker and the ``native_snapshot`` fixture (the renderer toolkit's,
imported when a test asks for it), and imports nothing of the kit, warns of nothing and runs nothing until its
test module is collected or ``--impl`` / ``--impl-cmd`` is given.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

if TYPE_CHECKING:
    from toolcanon_conformance.baseline import Baseline
    from toolcanon_conformance.plugin_session import ConformanceSession
    from toolcanon_conformance.report import Policy

__all__ = ["ConformanceSession", "native_snapshot", "toolcanon_conformance"]

_DEFAULT_IMPLEMENTATION = "toolcanon_conformance.adapters.reference:implementation"
_DEFAULT_MAX_FAILURES = 3  # runner.DEFAULT_MAX_FAILURES, not imported: the plugin imports nothing until asked
_GROUP = "toolcanon"
_SCENARIOS_KEY = pytest.StashKey[list[dict[str, Any]]]()
_SESSION_KEY = pytest.StashKey["ConformanceSession"]()
_SELECTED_KEY = pytest.StashKey[int]()
_VERDICT_KEY = pytest.StashKey[dict[str, Any]]()
_TIMEOUT_KEY = pytest.StashKey[bool]()
_CHECKED_KEY = pytest.StashKey[bool]()
_PROBLEM_KEY = pytest.StashKey[str]()
_NOTHING_SELECTED_KEY = pytest.StashKey[bool]()
_FIXTURE = "toolcanon_conformance"
#: The exit status of a usage error of the kit's options: ``toolcanon check``'s, not pytest's 4.
_USAGE_ERROR = 2
_SCENARIO_FIXTURE = "toolcanon_scenario"

#: The options renamed to ``toolcanon check``'s names: the old name, its destination, the name to use.
_DEPRECATED = (
    ("--scenarios-dir", "toolcanon_scenarios_dir", "--scenarios"),
    ("--goldens-dir", "toolcanon_goldens_dir", "--goldens"),
)


def __getattr__(name: str) -> Any:
    # ConformanceSession lives with the kit's machinery, imported on first use only.
    if name == "ConformanceSession":
        from toolcanon_conformance.plugin_session import ConformanceSession

        return ConformanceSession
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def pytest_addoption(parser: pytest.Parser) -> None:
    """The conformance options (``--timeout`` comes later, once it is known to be free)."""
    group = parser.getgroup(_GROUP, "conformance to the canonical tool output contract (toolcanon_conformance)")
    group.addoption("--impl", metavar="MODULE:ATTR", help="the implementation under test, a Python object")
    group.addoption("--impl-cmd", metavar="CMD", help="the implementation under test, a protocol adapter command")
    group.addoption("--baseline", metavar="FILE", help="a baseline file of known failures")
    group.addoption(
        "--rule",
        action="append",
        default=[],
        dest="toolcanon_rules",
        metavar="R-…",
        help="only scenarios exercising this rule, ignoring case (repeatable: any of them)",
    )
    group.addoption(
        "--impl-timeout",
        type=float,
        dest="toolcanon_impl_timeout",
        metavar="S",
        help="seconds per scenario (default 30; the bundled reference: no limit); the same as --timeout, which "
        "pytest-timeout, when installed, takes for its own",
    )
    group.addoption(
        "--startup-timeout",
        type=float,
        default=30.0,
        dest="toolcanon_startup_timeout",
        metavar="S",
        help="seconds for an --impl-cmd adapter to answer start (default: 30)",
    )
    group.addoption(
        "--max-failures",
        type=int,
        default=_DEFAULT_MAX_FAILURES,
        metavar="N",
        help=f"declare the implementation unresponsive after N scenarios in a row time out or crash "
        f"(default {_DEFAULT_MAX_FAILURES}, 0: never)",
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
    group.addoption(
        "--scenarios", dest="toolcanon_scenarios", metavar="DIR", help="scenario files (default: the kit's own)"
    )
    group.addoption(
        "--goldens", dest="toolcanon_goldens", metavar="DIR", help="golden transcripts (default: the kit's own)"
    )
    for old, dest, new in _DEPRECATED:
        group.addoption(old, dest=dest, metavar="DIR", help=f"deprecated: the old name of {new}")


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser) -> Generator[None]:
    """Add ``--timeout`` once every plugin and the initial conftests are loaded, if none of them has it."""
    try:
        return (yield)
    finally:
        early_config.stash[_TIMEOUT_KEY] = not _option_taken(parser, "--timeout")
        if early_config.stash[_TIMEOUT_KEY]:
            parser.getgroup(_GROUP).addoption(
                "--timeout",
                type=float,
                dest="toolcanon_timeout",
                metavar="S",
                help="seconds per scenario (default 30; the bundled reference: no limit; alias --impl-timeout)",
            )


def _option_taken(parser: pytest.Parser, name: str) -> bool:
    """Whether a plugin or conftest already added the option ``name`` (pytest has no public way to ask)."""
    groups = [getattr(parser, "_anonymous", None), *getattr(parser, "_groups", [])]
    return any(name in option.names() for group in groups if group is not None for option in group.options)


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker; when an implementation is named, check the options now."""
    config.addinivalue_line("markers", "conformance: a conformance scenario (toolcanon_conformance)")
    if config.getoption("impl") or config.getoption("impl_cmd"):
        try:
            _check_options(config)
        except pytest.UsageError as error:
            _usage_exit(error)


def _usage_exit(error: pytest.UsageError) -> NoReturn:
    """Stop the session on a usage error of the kit's options with ``toolcanon check``'s exit status."""
    pytest.exit(f"ERROR: {error}", returncode=_USAGE_ERROR)


def _check_options(config: pytest.Config) -> None:
    """The usage errors the options alone show, and the deprecated names used (once a session)."""
    if config.stash.get(_CHECKED_KEY, False):
        return
    config.stash[_CHECKED_KEY] = True
    if config.getoption("impl") and config.getoption("impl_cmd"):
        raise pytest.UsageError("--impl and --impl-cmd are exclusive: name one implementation under test")
    if config.getoption("max_failures") < 0:
        raise pytest.UsageError(f"--max-failures {config.getoption('max_failures')}: give 0 (never give up) or more")
    for capability in config.getoption("require"):
        if not capability.strip():
            raise pytest.UsageError("--require is empty: name the capability")
    _required(config)
    _timeout(config)
    for old, dest, new in _DEPRECATED:
        if config.getoption(dest) is not None:
            try:
                config.issue_config_time_warning(
                    pytest.PytestDeprecationWarning(f"toolcanon: {old} is deprecated: give {new}"), stacklevel=2
                )
            except pytest.PytestDeprecationWarning as error:
                # -W error: the warning raised here would be an internal error; it is a usage error.
                raise pytest.UsageError(str(error)) from None


def _required(config: pytest.Config) -> tuple[str, ...]:
    """The ``--require``d capabilities, spelled as the scenario format does; an unknown one is a usage error."""
    requested: list[str] = config.getoption("require")
    if not requested:
        return ()
    from toolcanon_conformance.protocol import UnknownCapability, resolve_capabilities

    try:
        return resolve_capabilities(requested)
    except UnknownCapability as error:
        raise pytest.UsageError(str(error)) from None


def _timeout(config: pytest.Config) -> float | None:
    """``--timeout`` (when it is the plugin's) or ``--impl-timeout``; a usage error when they disagree."""
    alias: float | None = config.getoption("toolcanon_impl_timeout")
    timeout: float | None = (
        config.getoption("toolcanon_timeout", None) if config.stash.get(_TIMEOUT_KEY, False) else None
    )
    if timeout is not None and alias is not None and timeout != alias:
        raise pytest.UsageError(f"--timeout {timeout} and --impl-timeout {alias}: give one")
    return timeout if timeout is not None else alias


def _directory(config: pytest.Config, dest: str, old_dest: str, name: str, old: str) -> str | None:
    """A folder option given under its name or its deprecated one; a usage error when they disagree."""
    value: str | None = config.getoption(dest)
    deprecated: str | None = config.getoption(old_dest)
    if value is not None and deprecated is not None and value != deprecated:
        raise pytest.UsageError(f"{name} {value} and {old} {deprecated}: give {name} alone")
    return value if value is not None else deprecated


def _scenarios(config: pytest.Config) -> list[dict[str, Any]]:
    if _SCENARIOS_KEY not in config.stash:
        from toolcanon_conformance.scenario import ScenarioError, load_scenarios

        folder = _directory(config, "toolcanon_scenarios", "toolcanon_scenarios_dir", "--scenarios", "--scenarios-dir")
        try:
            config.stash[_SCENARIOS_KEY] = [s.data for s in load_scenarios(folder)]
        except (ScenarioError, FileNotFoundError) as error:
            raise pytest.UsageError(f"cannot load the conformance scenarios: {error}") from None
    return config.stash[_SCENARIOS_KEY]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One test per scenario, wherever a test asks for ``toolcanon_scenario``."""
    if _SCENARIO_FIXTURE not in metafunc.fixturenames:
        return
    config = metafunc.config
    try:
        _check_options(config)  # once: at configure time already when --impl or --impl-cmd is given
        scenarios = _scenarios(config)
    except pytest.UsageError as error:
        # Raised here it would be a collection error; pytest_collection_modifyitems raises it as a usage error.
        config.stash[_PROBLEM_KEY] = str(error)
        return
    rules = sorted({str(rule) for scenario in scenarios for rule in scenario.get("rules", ())})
    for rule in rules:
        config.addinivalue_line("markers", f"{rule}: scenarios exercising contract rule {rule}")
    metafunc.parametrize(
        _SCENARIO_FIXTURE,
        [
            pytest.param(
                scenario,
                id=str(scenario["id"]),
                marks=[pytest.mark.conformance, *(getattr(pytest.mark, str(r)) for r in scenario.get("rules", ()))],
            )
            for scenario in scenarios
        ],
    )


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the scenarios of the ``--rule``s asked for; then, before any scenario runs, set up the
    implementation and the baseline: what is wrong with either (a bad baseline file, a ``--impl`` that cannot be
    imported) is one usage error, not one error per scenario."""
    try:
        _select_and_prepare(config, items)
    except pytest.UsageError as error:
        _usage_exit(error)


def _select_and_prepare(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _PROBLEM_KEY in config.stash:
        raise pytest.UsageError(config.stash[_PROBLEM_KEY])
    if not any(_FIXTURE in getattr(item, "fixturenames", ()) for item in items):
        return
    requested: list[str] = config.getoption("toolcanon_rules")
    if requested:
        from toolcanon_conformance.selection import UnknownRule, known_rules, resolve_rules

        try:
            rules = resolve_rules(requested, known_rules(_scenarios(config)))
        except UnknownRule as error:
            raise pytest.UsageError(str(error)) from None
        kept: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        for item in items:
            scenario = _scenario_of(item)
            exercised = () if scenario is None else scenario.get("rules", ())
            (kept if scenario is None or set(exercised) & set(rules) else dropped).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
    config.stash[_SESSION_KEY] = _conformance_session(config)


def _scenario_of(item: pytest.Item) -> dict[str, Any] | None:
    """The scenario a conformance test runs (``None`` for any other test)."""
    callspec = getattr(item, "callspec", None)
    scenario = None if callspec is None else callspec.params.get(_SCENARIO_FIXTURE)
    return scenario if isinstance(scenario, dict) else None


def pytest_collection_finish(session: pytest.Session) -> None:
    """Count the scenarios selected to run (after ``-k``, ``-m``, ``--rule`` and the like)."""
    if _SESSION_KEY in session.config.stash:
        selected = sum(_FIXTURE in getattr(item, "fixturenames", ()) for item in session.items)
        session.config.stash[_SELECTED_KEY] = selected


def pytest_sessionfinish(session: pytest.Session, exitstatus: int | pytest.ExitCode) -> None:
    """Judge the session's run; a verdict other than PASS fails a session that would otherwise pass."""
    conformance = session.config.stash.get(_SESSION_KEY, None)
    if conformance is None:
        return
    if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        # A selection that selects no scenario is a usage error, as in ``toolcanon check``.
        session.exitstatus = _USAGE_ERROR
        session.config.stash[_NOTHING_SELECTED_KEY] = True
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
    """The verdict line: ``toolcanon: NAME VERSION (LANGUAGE): NOTHING PASSED: 0 passed, …``."""
    if config.stash.get(_NOTHING_SELECTED_KEY, False):
        terminalreporter.write_line("toolcanon: ERROR: no scenario selected", red=True, bold=True)
        return
    entry = config.stash.get(_VERDICT_KEY, None)
    if entry is None:
        return
    from toolcanon_conformance.display import visible
    from toolcanon_conformance.report import verdict_line

    implementation = entry["implementation"]
    line = f"toolcanon: {implementation['name']} {implementation['version']} ({implementation['language']}): "
    passed = entry["verdict"] == "pass"
    terminalreporter.write_line(visible(line + verdict_line(entry)), green=passed, red=not passed, bold=True)


@pytest.fixture(scope="session")
def toolcanon_conformance(request: pytest.FixtureRequest) -> Iterator[ConformanceSession]:
    """The session's :class:`ConformanceSession`: the implementation named by the options, and its judge."""
    config = request.config
    if _SESSION_KEY not in config.stash:
        try:
            config.stash[_SESSION_KEY] = _conformance_session(config)
        except pytest.UsageError as error:
            _usage_exit(error)
    session = config.stash[_SESSION_KEY]
    yield session
    session.stop()


@pytest.fixture
def native_snapshot(request: pytest.FixtureRequest) -> Any:
    """The renderer toolkit's ``native_snapshot`` (:mod:`toolcanon_conformance.renderer_toolkit`), which
    needs syrupy: a test that asks for it without syrupy installed fails saying so."""
    try:
        from toolcanon_conformance.renderer_toolkit import NativeSnapshot
    except ModuleNotFoundError as error:
        if error.name is None or error.name.partition(".")[0] != "syrupy":
            raise
        pytest.fail("native_snapshot needs syrupy: pip install syrupy", pytrace=False)
    return NativeSnapshot(request.getfixturevalue("snapshot"))


def _conformance_session(config: pytest.Config) -> ConformanceSession:
    from toolcanon_conformance.adapters.inprocess import InProcess, default_timeout
    from toolcanon_conformance.adapters.subprocess import Subprocess
    from toolcanon_conformance.exceptions import AdapterError
    from toolcanon_conformance.implementation import Implementation
    from toolcanon_conformance.plugin_session import ConformanceSession
    from toolcanon_conformance.runner import Watchdog, golden_directory

    _check_options(config)
    timeout = _timeout(config)
    implementation: Implementation
    if config.getoption("impl_cmd"):
        try:
            implementation = Subprocess(
                config.getoption("impl_cmd"),
                timeout=30.0 if timeout is None else timeout,
                startup_timeout=config.getoption("toolcanon_startup_timeout"),
                validate_protocol=bool(config.getoption("validate_protocol")),
            )
        except ValueError as error:
            raise pytest.UsageError(f"--impl-cmd {config.getoption('impl_cmd')}: {error}") from None
    else:
        target = config.getoption("impl") or _DEFAULT_IMPLEMENTATION
        implementation = InProcess(target, timeout=default_timeout(target) if timeout is None else timeout)
        try:
            implementation.resolve()
        except AdapterError as error:
            raise pytest.UsageError(f"--impl {target}: {error}") from None
    baseline = _baseline(config)
    goldens_option = _directory(config, "toolcanon_goldens", "toolcanon_goldens_dir", "--goldens", "--goldens-dir")
    if goldens_option:
        goldens = golden_directory(goldens_option)
    else:
        from toolcanon_conformance.locations import goldens_dir

        goldens = golden_directory(goldens_dir())
    watchdog = Watchdog(config.getoption("max_failures"))
    return ConformanceSession(implementation, goldens, baseline, watchdog, _policy(config))


def _policy(config: pytest.Config) -> Policy:
    from toolcanon_conformance.report import Policy

    return Policy(_required(config), bool(config.getoption("fail_on_skip")))


def _baseline(config: pytest.Config) -> Baseline | None:
    from toolcanon_conformance.baseline import Baseline, BaselineError

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
