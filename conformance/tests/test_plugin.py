"""The pytest plugin: ``pytest --pyargs toolcanon_conformance --impl …`` runs one test per scenario."""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_suite import write_suite

HERE = Path(__file__).parent
SCRIPT = HERE / "misbehaving_adapter.py"


def pytest_run(tmp_path: Path, *arguments: str, folders: bool = True) -> tuple[int, str]:
    """Run ``pytest --pyargs toolcanon_conformance`` in this process, on the fake suite under ``tmp_path``
    (given as ``--scenarios`` and ``--goldens`` unless not ``folders``)."""
    scenarios, goldens = write_suite(tmp_path / "suite")
    command = [
        "--pyargs",
        "toolcanon_conformance",
        "-p",
        "no:cacheprovider",
        "-q",
        "-rsxX",
        "--rootdir",
        str(tmp_path),
        *(["--scenarios", str(scenarios), "--goldens", str(goldens)] if folders else []),
        *arguments,
    ]
    output = io.StringIO()
    # The inner session collects garbage several times; freezing what exists first keeps each collection to the
    # inner session's own objects (in a worker of the whole suite, a full collection takes ~0.1 s).
    gc.freeze()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        status = pytest.main(command)
    return int(status), output.getvalue()


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str]:
    return pytest_run(tmp_path_factory.mktemp("plugin"), "--impl", "fake_suite:implementation")


def test_one_test_per_scenario(full_run: tuple[int, str]) -> None:
    status, output = full_run
    assert status == 1, output
    assert "2 failed, 2 passed, 2 skipped" in output
    assert "test_scenario[bad-meta]" in output and "test_scenario[err-hook]" in output


def test_a_failure_names_the_path_and_the_rules(full_run: tuple[int, str]) -> None:
    output = full_run[1]
    assert "bad-meta failed [R-NEST-2]: the transcript differs from the golden" in output
    assert "$.scenario: value" in output
    assert "err-hook errored [R-WRAP-1]: NotImplementedError: wrapper hooks" in output


def test_skips_carry_the_reason(full_run: tuple[int, str]) -> None:
    output = full_run[1]
    assert "missing capability mcp" in output
    assert "sets are not expressible here" in output


def test_rule_markers_select_scenarios(tmp_path: Path) -> None:
    status, output = pytest_run(tmp_path, "--impl", "fake_suite:implementation", "-m", "R-SNAP-1", "--strict-markers")
    assert status == 0, output
    assert "2 passed, 4 deselected" in output


def test_a_baseline_turns_known_failures_into_xfails(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text(
        json.dumps({"formatVersion": 1, "knownFailures": [{"scenario": "bad-meta"}, {"scenario": "err-hook"}]})
    )
    status, output = pytest_run(tmp_path, "--impl", "fake_suite:implementation", "--baseline", str(baseline))
    assert status == 0, output
    assert "2 passed, 2 skipped, 2 xfailed" in output


def test_through_a_subprocess_adapter(tmp_path: Path) -> None:
    status, output = pytest_run(
        tmp_path, "--impl-cmd", f"{sys.executable} {SCRIPT} crash-marked", "--validate-protocol", "-k", "ok- or bad"
    )
    assert status == 1, output
    assert "1 failed, 2 passed, 1 skipped" in output
    assert "bad-meta errored [R-NEST-2]: the adapter exited with code 139" in output
    assert "segmentation fault in bad-meta" in output


def test_an_adapter_that_cannot_start_stops_the_session_with_status_2(tmp_path: Path) -> None:
    status, output = pytest_run(
        tmp_path, "--impl-cmd", f"{sys.executable} {SCRIPT} wrong-version", "-k", "ok-plain or ok-nested"
    )
    assert status == 2, output  # as toolcanon check's exit status for an implementation that cannot start
    assert output.count("toolcanon: cannot start Subprocess(") == 1
    assert "protocol version mismatch: the kit speaks version 1, the adapter answered 2" in output
    assert "passed" not in output and "failed" not in output


def test_impl_and_impl_cmd_are_exclusive(tmp_path: Path) -> None:
    status, output = pytest_run(tmp_path, "--impl", "a:b", "--impl-cmd", "c")
    assert status == 2 and "exclusive" in output


def test_a_bad_baseline_is_one_usage_error(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"formatVersion": 1, "knownFailures": [{"scenario": "no-such-scenario"}]}')
    status, output = pytest_run(tmp_path, "--impl", "fake_suite:implementation", "--baseline", str(baseline))
    assert status == 2, output
    assert output.count("no-such-scenario") == 1
    assert "ERROR: the baseline lists 'no-such-scenario', which is no scenario" in output
    assert "passed" not in output and "failed" not in output


def test_a_baseline_that_is_not_json_is_one_usage_error(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text("[" * 100_000)
    status, output = pytest_run(tmp_path, "--impl", "fake_suite:implementation", "--baseline", str(baseline))
    assert status == 2, output
    assert output.count("cannot read the baseline: nested deeper than 64 levels") == 1


def test_an_impl_that_cannot_be_imported_is_one_usage_error(tmp_path: Path) -> None:
    status, output = pytest_run(tmp_path, "--impl", "no_such_module_anywhere:implementation")
    assert status == 2, output
    assert output.count("ERROR: --impl no_such_module_anywhere:implementation: cannot import") == 1
    assert "No module named 'no_such_module_anywhere'" in output
    assert "test_scenario[" not in output


def test_a_hang_on_every_scenario_fails_the_rest_at_once(tmp_path: Path) -> None:
    command = f"{sys.executable} {SCRIPT} hang"
    status, output = pytest_run(tmp_path, "--impl-cmd", command, "--impl-timeout", "0.3", "--max-failures", "2")
    assert status == 1, output
    assert "5 failed, 1 skipped" in output
    assert output.count("no answer to run seq") >= 2
    assert "ok-plain errored [R-SNAP-1]: not run: the implementation is unresponsive: 2 scenarios in a row" in output


def test_an_unknown_capability_is_a_warning(tmp_path: Path) -> None:
    status, output = pytest_run(tmp_path, "--impl-cmd", f"{sys.executable} {SCRIPT} unknown-capability", "-k", "ok-")
    assert status == 0, output
    assert "misbehaving declares an unknown capability 'wrapers'" in output
    status, output = pytest_run(
        tmp_path / "strict",
        "--impl-cmd",
        f"{sys.executable} {SCRIPT} unknown-capability",
        "--validate-protocol",
        "-k",
        "ok-",
    )
    assert status == 2, output  # refused at start, as by toolcanon check
    assert "unknown capability 'wrapers': the known ones are" in output


# --- the session's verdict, as toolcanon check gives it -----------------------------------------------


def test_a_session_in_which_nothing_passed_fails(tmp_path: Path) -> None:
    status, output = pytest_run(tmp_path, "--impl", "fake_suite:implementation", "-k", "skip- or ok-mcp")
    assert status == 1, output
    assert "2 skipped" in output
    assert "toolcanon: by-name 0.1 (python): NOTHING PASSED: 0 passed, 0 failed, 0 errored, 2 skipped of 2" in output


def test_a_session_of_known_failures_only_fails(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"formatVersion": 1, "knownFailures": [{"scenario": "bad-meta"}]}))
    arguments = ("--impl", "fake_suite:implementation", "--baseline", str(baseline), "-k", "bad-meta")
    status, output = pytest_run(tmp_path, *arguments)
    assert status == 1, output
    assert (
        "1 xfailed" in output and ": NOTHING PASSED: 0 passed, 0 failed, 0 errored, 0 skipped, 1 known of 1" in output
    )


def test_a_passing_session_says_so(tmp_path: Path) -> None:
    status, output = pytest_run(tmp_path, "--impl", "fake_suite:implementation", "-k", "ok-")
    assert status == 0, output
    assert "toolcanon: by-name 0.1 (python): PASS: 2 passed, 0 failed, 0 errored, 1 skipped of 3 scenarios" in output


def test_a_failing_session_gives_the_verdict_too(full_run: tuple[int, str]) -> None:
    status, output = full_run
    assert status == 1
    assert "toolcanon: by-name 0.1 (python): FAIL: 2 passed, 1 failed, 1 errored, 2 skipped of 6 scenarios" in output


def test_fail_on_skip(tmp_path: Path) -> None:
    status, output = pytest_run(tmp_path, "--impl", "fake_suite:implementation", "-k", "ok-", "--fail-on-skip")
    assert status == 1, output
    assert "2 passed, 1 skipped" in output  # the tests keep their outcomes; the session fails
    assert ": FAIL (1 skipped, with --fail-on-skip): 2 passed, 0 failed, 0 errored, 1 skipped of 3" in output
    status, output = pytest_run(
        tmp_path / "none", "--impl", "fake_suite:implementation", "-k", "ok-p", "--fail-on-skip"
    )
    assert status == 0, output


def test_required_capabilities(tmp_path: Path) -> None:
    arguments = ("--impl", "fake_suite:implementation", "-k", "ok-plain")
    status, output = pytest_run(tmp_path, *arguments, "--require", "mcp", "--require", "wrappers", "--require", "spill")
    assert status == 1, output
    assert ": FAIL (does not declare the required capabilities mcp, spill): 1 passed" in output
    status, output = pytest_run(tmp_path / "declared", *arguments, "--require", "wrappers")
    assert status == 0, output
    status, output = pytest_run(tmp_path / "blank", *arguments, "--require", " ")
    assert status == 2 and "--require is empty: name the capability" in output


def test_a_session_stopped_early_is_interrupted(tmp_path: Path) -> None:
    status, output = pytest_run(tmp_path, "--impl", "fake_suite:implementation", "-x", "-k", "bad-meta or ok-plain")
    assert status == 1, output
    assert ": INTERRUPTED (after 1 of 2 scenarios): 0 passed, 1 failed" in output


def test_an_implementation_that_never_started_gives_no_verdict(tmp_path: Path) -> None:
    status, output = pytest_run(tmp_path, "--impl-cmd", f"{sys.executable} {SCRIPT} wrong-version", "-k", "ok-plain")
    assert status == 2, output
    assert "toolcanon: cannot start" in output and "toolcanon: misbehaving" not in output


# --- one vocabulary with toolcanon check --------------------------------------------------------------


def test_rule_selects_ignoring_case_and_deselects_the_rest(tmp_path: Path) -> None:
    status, output = pytest_run(tmp_path, "--impl", "fake_suite:implementation", "--rule", "r-snap-1")
    assert status == 0, output
    assert "2 passed, 4 deselected" in output
    assert ": PASS: 2 passed, 0 failed, 0 errored, 0 skipped of 2 scenarios" in output
    status, output = pytest_run(
        tmp_path / "two", "--impl", "fake_suite:implementation", "--rule", "R-SNAP-1", "--rule", "r-mcp-1"
    )
    assert status == 0, output
    assert "2 passed, 1 skipped, 3 deselected" in output


def test_an_unknown_rule_is_one_usage_error_naming_the_closest(tmp_path: Path) -> None:
    status, output = pytest_run(tmp_path, "--impl", "fake_suite:implementation", "--rule", "r-post-44")
    assert status == 2, output
    assert output.count("ERROR: --rule r-post-44: no such rule (closest: R-POST-4, R-POST-8, R-POST-7)") == 1
    assert "test_scenario[" not in output


def test_the_timeout_is_timeout_as_in_check(tmp_path: Path) -> None:
    command = f"{sys.executable} {SCRIPT} hang"
    status, output = pytest_run(tmp_path, "--impl-cmd", command, "--timeout", "0.3", "--max-failures", "1", "-x")
    assert status == 1, output
    assert "no answer to run seq 0 within 0.3 s" in output
    status, output = pytest_run(tmp_path / "both", "--impl-cmd", command, "--timeout", "1", "--impl-timeout", "2")
    assert status == 2 and "--timeout 1.0 and --impl-timeout 2.0: give one" in output


def test_the_startup_timeout_as_in_check(tmp_path: Path) -> None:
    command = f"{sys.executable} {SCRIPT} start-hang"
    status, output = pytest_run(tmp_path, "--impl-cmd", command, "--startup-timeout", "0.5", "-k", "ok-plain")
    assert status == 2, output
    assert "toolcanon: cannot start" in output and "0.5 s" in output


def test_the_old_folder_names_still_work_with_a_deprecation_warning(tmp_path: Path) -> None:
    scenarios, goldens = write_suite(tmp_path / "old")
    status, output = pytest_run(
        tmp_path,
        "--impl",
        "fake_suite:implementation",
        "-k",
        "ok-plain",
        "--scenarios-dir",
        str(scenarios),
        "--goldens-dir",
        str(goldens),
        folders=False,
    )
    assert status == 0, output
    assert "1 passed" in output
    assert "PytestDeprecationWarning: toolcanon: --scenarios-dir is deprecated: give --scenarios" in output
    assert "PytestDeprecationWarning: toolcanon: --goldens-dir is deprecated: give --goldens" in output
    status, output = pytest_run(
        tmp_path / "strict", "-W", "error", "--impl", "fake_suite:implementation", "--scenarios-dir", str(scenarios)
    )
    assert status == 2, output
    assert "ERROR: toolcanon: --scenarios-dir is deprecated: give --scenarios" in output
    assert "INTERNALERROR" not in output


def test_the_old_and_new_folder_names_must_agree(tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    status, output = pytest_run(tmp_path, "--impl", "fake_suite:implementation", "--scenarios-dir", str(other))
    assert status == 2, output
    assert f"and --scenarios-dir {other}: give --scenarios alone" in output


TIMEOUT_PLUGIN = """
def pytest_addoption(parser):
    parser.getgroup("timeout").addoption("--timeout", type=float, dest="timeout", help="per test, as pytest-timeout")


def pytest_configure(config):
    print("other plugin's timeout:", config.getoption("timeout"))
"""


def test_timeout_is_left_to_a_plugin_that_has_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "other_timeout_plugin.py").write_text(TIMEOUT_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    command = f"{sys.executable} {SCRIPT} hang"
    arguments = ("-p", "other_timeout_plugin", "--impl-cmd", command, "--max-failures", "1", "-x")
    status, output = pytest_run(tmp_path, *arguments, "--timeout", "7", "--impl-timeout", "0.3")
    assert status == 1, output
    assert "other plugin's timeout: 7.0" in output
    assert "no answer to run seq 0 within 0.3 s" in output


# --- inert in an unrelated test suite --------------------------------------------------------------------

UNRELATED = """
import sys


def test_unrelated():
    loaded = sorted(name for name in sys.modules if name.startswith("toolcanon"))
    assert loaded == ["toolcanon_conformance", "toolcanon_conformance.plugin"], loaded
"""

NEEDS_SNAPSHOT = """
def test_renders(native_snapshot):
    pass
"""


def _unrelated_run(tmp_path: Path, test: str, *arguments: str, hide_syrupy: bool) -> subprocess.CompletedProcess[str]:
    """``pytest -W error`` in a fresh process on one unrelated test file (syrupy made unimportable, if asked)."""
    (tmp_path / "test_unrelated.py").write_text(test)
    path = [os.environ.get("PYTHONPATH", "")]
    if hide_syrupy:
        shadow = tmp_path / "shadow"
        shadow.mkdir()
        (shadow / "syrupy.py").write_text("raise ModuleNotFoundError(\"No module named 'syrupy'\", name='syrupy')\n")
        path.insert(0, str(shadow))
        arguments = ("-p", "no:syrupy", *arguments)
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    command = [sys.executable, "-m", "pytest", "-W", "error", "-p", "no:cacheprovider", "-p", "no:randomly"]
    return subprocess.run(
        [*command, "--rootdir", str(tmp_path), *arguments, str(tmp_path / "test_unrelated.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
        env=environment,
    )


@pytest.mark.parametrize("hide_syrupy", [True, False])
def test_an_unrelated_suite_sees_no_warning_and_no_kit(tmp_path: Path, hide_syrupy: bool) -> None:
    done = _unrelated_run(tmp_path, UNRELATED, hide_syrupy=hide_syrupy)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "warning" not in (done.stdout + done.stderr).lower()
    assert "INTERNALERROR" not in done.stdout + done.stderr


def test_native_snapshot_without_syrupy_says_what_it_needs(tmp_path: Path) -> None:
    done = _unrelated_run(tmp_path, NEEDS_SNAPSHOT, hide_syrupy=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "native_snapshot needs syrupy: pip install syrupy" in done.stdout


def test_native_snapshot_is_the_renderer_toolkits(tmp_path: Path) -> None:
    test = (
        "from toolcanon_conformance.renderer_toolkit import NativeSnapshot\n\n\n"
        "def test_renders(native_snapshot):\n    assert isinstance(native_snapshot, NativeSnapshot)\n"
    )
    done = _unrelated_run(tmp_path, test, hide_syrupy=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_plugins_default_max_failures_is_the_runners() -> None:
    from toolcanon_conformance import plugin
    from toolcanon_conformance.runner import DEFAULT_MAX_FAILURES

    assert plugin._DEFAULT_MAX_FAILURES == DEFAULT_MAX_FAILURES


def test_a_selection_of_no_scenario_is_a_usage_error(tmp_path: Path) -> None:
    status, output = pytest_run(tmp_path, "--impl", "fake_suite:implementation", "-k", "no-scenario-has-this-id")
    assert status == 2, output  # as toolcanon check; pytest alone gives 5
    assert "toolcanon: ERROR: no scenario selected" in output
