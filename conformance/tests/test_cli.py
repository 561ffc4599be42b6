"""The toolcanon command: check, report, cases, --schema, and the delegated subcommands."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fake_suite import ByName, write_suite
from misbehaving_adapter import HANGING_NOTICE

from toolcanon_conformance.cli import main
from toolcanon_conformance.implementation import ImplementationInfo, Outcome, Skipped
from toolcanon_conformance.report import validate_report

HERE = Path(__file__).parent
SCRIPT = HERE / "misbehaving_adapter.py"


@pytest.fixture
def suite(tmp_path: Path) -> list[str]:
    scenarios, goldens = write_suite(tmp_path)
    return ["--scenarios", str(scenarios), "--goldens", str(goldens)]


def test_check_folds_the_table_and_the_skips_and_ends_with_the_failures_and_the_verdict(
    suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    status = main(["check", "--impl", "fake_suite:implementation", *suite, "--report", str(report)])
    out = capsys.readouterr().out
    assert status == 1
    lines = out.rstrip().splitlines()
    assert lines[:6] == [
        "by-name 0.1 (python)",
        "rules: 2 of 5 with a failure or an error; --show rules prints the table",
        "2 skipped: 1 needs a capability it does not declare (mcp 1), 1 declined by the implementation; "
        "--show skips lists them",
        "goldens: reference: 6",
        "",
        "Not passing (2):",
    ]
    assert "bad-meta failed [R-NEST-2]" in out and "$.scenario: value" in out
    assert "err-hook errored [R-WRAP-1]: NotImplementedError: wrapper hooks" in out
    assert "R-NEST-2         1" not in out and "Skipped (" not in out
    assert lines[-3:-1] == ["  NotImplementedError: wrapper hooks", ""]  # the last failure's traceback
    assert lines[-1].startswith("FAIL: 2 passed, 1 failed, 1 errored, 2 skipped of 6 scenarios")
    validate_report(json.loads(report.read_text()))


def test_an_in_process_implementation_that_waits_for_ever_is_errored_at_its_deadline_and_the_run_goes_on(
    suite: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["check", "--impl", "fake_suite:waits_on_nested", *suite, "--timeout", "0.2", "-k", "ok-"])
    out = capsys.readouterr().out
    assert status == 1
    assert "ok-nested errored [R-SNAP-1, R-NEST-2]: no answer to run seq 1 within 0.2 s" in out
    assert out.rstrip().splitlines()[-1].startswith("FAIL: 1 passed, 0 failed, 1 errored, 1 skipped of 3 scenarios")


def test_check_selects_by_pattern_and_rule(suite: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--impl", "fake_suite:implementation", *suite, "-k", "ok-"]) == 0
    assert "PASS: 2 passed, 0 failed, 0 errored, 1 skipped of 3 scenarios" in capsys.readouterr().out
    assert (
        main(["check", "--impl", "fake_suite:implementation", *suite, "--rule", "R-NEST-2", "--rule", "R-MCP-1"]) == 1
    )
    assert "of 3 scenarios" in capsys.readouterr().out
    assert main(["check", "--impl", "fake_suite:implementation", *suite, "-k", "nothing-matches"]) == 2
    assert "no scenario matches" in capsys.readouterr().err


def test_a_written_baseline_makes_the_next_run_pass(
    suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "baseline.json"
    assert main(["check", "--impl", "fake_suite:implementation", *suite, "--write-baseline", str(baseline)]) == 1
    written = json.loads(baseline.read_text())
    assert written["knownFailures"] == [
        {"scenario": "bad-meta", "paths": ["$.scenario"]},
        {"scenario": "err-hook", "reason": "NotImplementedError: wrapper hooks"},
    ]
    capsys.readouterr()
    assert main(["check", "--impl", "fake_suite:implementation", *suite, "--baseline", str(baseline)]) == 0
    out = capsys.readouterr().out
    assert "\n2 known failures, excused by the baseline; --show known lists them\n" in out
    assert (
        out.rstrip()
        .splitlines()[-1]
        .startswith(
            "PASS (2 known failures excused by the baseline): 2 passed, 0 failed, 0 errored, 2 skipped, 2 known of 6"
        )
    )
    stale = {"formatVersion": 1, "knownFailures": [*written["knownFailures"], {"scenario": "ok-plain"}]}
    baseline.write_text(json.dumps(stale))
    assert main(["check", "--impl", "fake_suite:implementation", *suite, "--baseline", str(baseline)]) == 1
    assert "ok-plain is listed as a known failure but passes" in capsys.readouterr().out


def test_check_through_a_subprocess_adapter(suite: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    command = f"{sys.executable} {SCRIPT} good"
    # This adapter answers every scenario with its golden, bad-* and err-* included.
    assert main(["check", "--impl-cmd", command, "--validate-protocol", "--timeout", "5", *suite]) == 0
    out = capsys.readouterr().out
    assert "misbehaving 0 (python)" in out
    assert "PASS: 5 passed, 0 failed, 0 errored, 1 skipped of 6 scenarios" in out


def test_check_reports_an_adapter_that_cannot_start(suite: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--impl-cmd", f"{sys.executable} {SCRIPT} wrong-version", *suite]) == 2
    assert "protocol version mismatch" in capsys.readouterr().err
    assert main(["check", "--impl", "no_such_module_here:x", *suite]) == 2
    assert "cannot import 'no_such_module_here'" in capsys.readouterr().err


def test_check_refuses_a_bad_baseline(suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "b.json").write_text("{}")
    assert main(["check", "--impl", "fake_suite:implementation", *suite, "--baseline", str(tmp_path / "b.json")]) == 2
    assert "not a baseline" in capsys.readouterr().err


def test_report_renders_a_saved_report(suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "r.json"
    main(["check", "--impl", "fake_suite:implementation", *suite, "--report", str(saved)])
    capsys.readouterr()
    assert main(["report", str(saved), "--format", "md"]) == 0
    assert capsys.readouterr().out.startswith("# Conformance report: by-name 0.1 (python)")
    assert main(["report", str(saved), "--format", "html", "-o", str(tmp_path / "r.html")]) == 0
    assert 'id="matrix"' in (tmp_path / "r.html").read_text()
    assert main(["report", str(saved), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(saved.read_text())
    (tmp_path / "bad.json").write_text('{"formatVersion": 1}')
    assert main(["report", str(tmp_path / "bad.json")]) == 2
    assert "not a conformance report" in capsys.readouterr().err


def test_check_writes_markdown_and_html_reports_by_suffix(suite: list[str], tmp_path: Path) -> None:
    main(["check", "--impl", "fake_suite:implementation", *suite, "--report", str(tmp_path / "r.md")])
    main(["check", "--impl", "fake_suite:implementation", *suite, "--report", str(tmp_path / "r.html")])
    assert (tmp_path / "r.md").read_text().startswith("# Conformance report")
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")


def test_cases_lists_scenarios_and_rules(suite: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    scenarios_only = suite[:2]
    assert main(["cases", *scenarios_only]) == 0
    out = capsys.readouterr().out
    assert out.startswith("6 scenarios\n") and "ok-mcp     R-MCP-1 (requires mcp)" in out
    assert re.search(r"^  R-SNAP-1 +2 scenario\(s\)  The snapshot MUST accept", out, re.MULTILINE)
    assert re.search(r"^  R-REG-1 +0 scenario\(s\)", out, re.MULTILINE)  # a rule no listed scenario exercises
    assert main(["cases", *scenarios_only, "--rule", "R-NEST-2", "--format", "json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [s["id"] for s in listing["scenarios"]] == ["bad-meta", "ok-nested"]
    assert [(r["rule"], r["scenarios"]) for r in listing["rules"]] == [("R-NEST-2", ["bad-meta", "ok-nested"])]
    from toolcanon_conformance._schemas import schema_errors

    assert schema_errors("cases.schema.json", listing) == []


@pytest.mark.parametrize(
    ("command", "title"),
    [("check", "A conformance report"), ("report", "A conformance report"), ("cases", "The scenarios and the rules")],
)
def test_schema_prints_the_json_schema_of_each_output(
    command: str, title: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "--schema"]) == 0
    assert json.loads(capsys.readouterr().out)["title"].startswith(title)


def test_a_missing_scenario_directory_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cases", "--scenarios", str(tmp_path / "nowhere")]) in (0, 2)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x.json").write_text('{"formatVersion": 1}')
    assert main(["cases", "--scenarios", str(bad)]) == 2
    assert "x.json" in capsys.readouterr().err


def test_delegated_subcommands_report_a_missing_module(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "toolcanon_conformance.render_cli", None)
    assert main(["render", "--help"]) == 2
    assert "toolcanon render: not available" in capsys.readouterr().err


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "check" in capsys.readouterr().err


def test_check_draws_a_progress_bar_on_a_terminal(suite: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    main(["check", "--impl", "fake_suite:implementation", *suite])
    drawn = terminal.getvalue()
    assert "\r\x1b[2K[" in drawn and " 6/6 (2 failing) " in drawn and drawn.endswith("\r\x1b[2K")


# --- several implementations ------------------------------------------------------------------------------


def test_check_runs_several_implementations_side_by_side(
    suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    adapter = f"{sys.executable} {SCRIPT} good"
    status = main(
        ["check", "--impl", "fake_suite:implementation", "--impl-cmd", adapter, *suite, "--report", str(report)]
    )
    out = capsys.readouterr().out
    assert status == 1  # the first fails, the second passes: 0 only when every run passes
    assert out.startswith("[1/2] --impl fake_suite:implementation\nby-name 0.1 (python)\n")
    assert f"\n\n[2/2] --impl-cmd {adapter}\nmisbehaving 0 (python)\n" in out
    assert out.count("\nrules: ") == 2 and "passed   failed  errored  skipped    known" not in out
    summary = out.rstrip().splitlines()[-3:]
    assert summary[0] == "2 implementations:"
    assert summary[1].startswith("  #1 by-name 0.1    FAIL: 2 passed, 1 failed, 1 errored, 2 skipped of 6 scenarios")
    assert summary[2].startswith("  #2 misbehaving 0  PASS: 5 passed, 0 failed, 0 errored, 1 skipped of 6 scenarios")
    written = json.loads(report.read_text())
    validate_report(written)
    assert [run["selectedBy"] for run in written["implementations"]] == [
        {"option": "--impl", "value": "fake_suite:implementation"},
        {"option": "--impl-cmd", "value": adapter},
    ]
    assert [run["verdict"] for run in written["implementations"]] == ["fail", "pass"] and not written["ok"]
    assert main(["check", "--impl", "fake_suite:implementation", "--impl-cmd", adapter, *suite, "-k", "ok-"]) == 0


def test_a_baseline_belongs_to_the_implementation_given_before_it(
    suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "baseline.json"
    assert main(["check", "--impl", "fake_suite:implementation", *suite, "--write-baseline", str(baseline)]) == 1
    report = tmp_path / "report.json"
    twice = ["--impl", "fake_suite:implementation", "--impl", "fake_suite:implementation", "--baseline", str(baseline)]
    assert main(["check", *twice, *suite, "--report", str(report)]) == 1
    first, second = json.loads(report.read_text())["implementations"]
    assert "baselineFile" not in first and first["verdict"] == "fail"
    assert second["baselineFile"] == str(baseline) and second["verdict"] == "pass"
    capsys.readouterr()
    both = ["--impl", "fake_suite:implementation", "--baseline", str(baseline)] * 2
    assert main(["check", *both, *suite]) == 0
    assert (
        capsys.readouterr().out.count("PASS (2 known failures excused by the baseline)") == 4
    )  # each run, then the summary
    # one implementation: the baseline may stand anywhere
    assert main(["check", "--baseline", str(baseline), "--impl", "fake_suite:implementation", *suite]) == 0
    capsys.readouterr()
    assert main(["check", "--baseline", str(baseline), *twice[:4], *suite]) == 2
    assert "comes before every --impl/--impl-cmd" in capsys.readouterr().err
    assert main(["check", *twice, "--baseline", str(baseline), *suite]) == 2
    assert "has two --baseline files" in capsys.readouterr().err


def test_write_baseline_pairs_the_same_way(suite: list[str], tmp_path: Path) -> None:
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    adapter = f"{sys.executable} {SCRIPT} good"
    arguments = ["--impl", "fake_suite:implementation", "--write-baseline", str(first), "--impl-cmd", adapter]
    assert main(["check", *arguments, "--write-baseline", str(second), *suite]) == 1
    assert [entry["scenario"] for entry in json.loads(first.read_text())["knownFailures"]] == ["bad-meta", "err-hook"]
    assert json.loads(second.read_text())["knownFailures"] == []
    assert main(["check", *arguments, "--write-baseline", str(first), *suite]) == 2  # one file, written twice


# --- no green by accident ---------------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--impl-cmd", "--impl"])
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_implementation_is_a_usage_error(
    suite: list[str], option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", option, value, *suite]) == 2
    assert f"toolcanon check: {option} is empty" in capsys.readouterr().err


def test_an_adapter_command_that_cannot_be_split_is_a_usage_error(
    suite: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--impl-cmd", 'node "adapter.mjs', *suite]) == 2
    assert "No closing quotation" in capsys.readouterr().err


class DeclaresNothing:
    """Declares no capability and declines whatever it is sent."""

    def start(self) -> ImplementationInfo:
        return ImplementationInfo("declines", "python", "0", ())

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        return Skipped("not implemented")

    def stop(self) -> None:
        pass


def test_a_run_in_which_nothing_passed_fails(
    suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    assert main(["check", "--impl", "test_cli:DeclaresNothing", *suite, "--report", str(report)]) == 1
    verdict = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert verdict.startswith("NOTHING PASSED (it declares no capability): 0 passed, 0 failed, 0 errored, 6 skipped")
    assert json.loads(report.read_text())["implementations"][0]["verdict"] == "nothing-passed"
    assert main(["check", "--impl", "fake_suite:implementation", *suite, "-k", "skip-"]) == 1
    assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith("NOTHING PASSED: 0 passed")


def test_fail_on_skip_and_require(suite: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    ok = ["check", "--impl", "fake_suite:implementation", *suite, "-k", "ok-"]
    assert main([*ok, "--fail-on-skip"]) == 1
    assert (
        "\nFAIL (1 skipped, with --fail-on-skip): 2 passed, 0 failed, 0 errored, 1 skipped of 3"
        in capsys.readouterr().out
    )
    assert main([*ok, "--require", "mcp", "--require", "wrappers"]) == 1
    lines = capsys.readouterr().out.rstrip().splitlines()
    assert lines[-1].startswith("FAIL (does not declare the required capability mcp): 2 passed, 0 failed")
    assert main([*ok, "--require", "wrappers"]) == 0
    assert main([*ok, "--require", ""]) == 2


# --- output paths, before anything runs -------------------------------------------------------------------


class Counting(ByName):
    """The by-name implementation, counting the scenarios it is sent."""

    ran = 0

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        Counting.ran += 1
        return super().run(seq, scenario)


@pytest.mark.parametrize("option", ["--report", "--write-baseline"])
def test_unwritable_outputs_are_refused_before_any_scenario_runs(
    suite: list[str], tmp_path: Path, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-file").write_text("")
    Counting.ran = 0
    for target, problem in [
        (tmp_path / "missing" / "out.json", f"the folder {tmp_path / 'missing'} does not exist"),
        (tmp_path / "a-file" / "out.json", f"{tmp_path / 'a-file'} is not a folder"),
        (tmp_path, "that is a folder"),
    ]:
        assert main(["check", "--impl", "test_cli:Counting", *suite, option, str(target)]) == 2
        captured = capsys.readouterr()
        assert captured.err == f"toolcanon check: {option} {target}: {problem}\n" and captured.out == ""
    assert Counting.ran == 0


# --- Ctrl-C -----------------------------------------------------------------------------------------------


class Interrupted(ByName):
    """The by-name implementation, interrupted (Ctrl-C) during its fourth scenario, ``ok-nested``."""

    stopped = False

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        if scenario["id"] == "ok-nested":
            raise KeyboardInterrupt
        return super().run(seq, scenario)

    def stop(self) -> None:
        Interrupted.stopped = True


@pytest.mark.parametrize("suffix", [".json", ".html"])
def test_ctrl_c_stops_the_adapter_and_writes_a_partial_report(
    suite: list[str], tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / f"report{suffix}"
    Interrupted.stopped = False
    second = ["--impl-cmd", f"{sys.executable} {SCRIPT} good"]
    status = main(["check", "--impl", "test_cli:Interrupted", *second, *suite, "--report", str(report)])
    captured = capsys.readouterr()
    assert status == 130 and Interrupted.stopped
    assert captured.err == (
        "toolcanon check: interrupted after 3 of 6 scenarios of implementation 1 of 2 "
        f"(--impl test_cli:Interrupted); partial report written to {report}\n"
    )
    assert captured.out == ""
    if suffix == ".html":
        assert "INTERRUPTED (after 3 of 6 scenarios)" in report.read_text()
        return
    written = json.loads(report.read_text())
    validate_report(written)
    assert written["partial"] is True and written["ok"] is False
    assert written["notRun"] == [{"option": "--impl-cmd", "value": second[1]}]
    [run] = written["implementations"]
    assert run["verdict"] == "interrupted" and run["selected"] == 6
    assert [scenario["id"] for scenario in run["scenarios"]] == ["bad-meta", "err-hook", "ok-mcp"]


def test_ctrl_c_under_format_json_prints_the_partial_report(
    suite: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    Interrupted.stopped = False
    status = main(["check", "--impl", "test_cli:Interrupted", *suite, "--format", "json", "-q"])
    captured = capsys.readouterr()
    assert status == 130 and Interrupted.stopped
    assert captured.err.endswith("interrupted after 3 of 6 scenarios; partial report written to standard output\n")
    written = json.loads(captured.out)
    validate_report(written)
    assert written["partial"] is True and written["ok"] is False
    [run] = written["implementations"]
    assert [scenario["id"] for scenario in run["scenarios"]] == ["bad-meta", "err-hook", "ok-mcp"]


class InterruptedAtStart(ByName):
    """The by-name implementation, interrupted (Ctrl-C) before it answers start."""

    def start(self) -> ImplementationInfo:
        raise KeyboardInterrupt


@pytest.mark.parametrize("suffix", [".json", ".md", ".html"])
def test_ctrl_c_before_any_implementation_started(
    suite: list[str], tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / f"report{suffix}"
    arguments = ["--impl", "test_cli:InterruptedAtStart", "--impl", "fake_suite:implementation"]
    assert main(["check", *arguments, *suite, "--report", str(report)]) == 130
    assert capsys.readouterr().err.startswith("toolcanon check: interrupted after 0 of 6 scenarios of implementation 1")
    text = report.read_text()
    assert "fake_suite:implementation" in text and "by-name" not in text
    if suffix == ".json":
        written = json.loads(text)
        validate_report(written)
        assert written["implementations"] == [] and [item["value"] for item in written["notRun"]] == [
            "test_cli:InterruptedAtStart",
            "fake_suite:implementation",
        ]


def test_ctrl_c_on_a_real_run(suite: list[str], tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    command = [
        sys.executable,
        "-c",
        # Ctrl-C as a terminal delivers it: a command run in the background of a script (`cmd &`) inherits
        # SIGINT ignored, and Python then leaves it ignored. SIGUSR1 makes the kit print where each thread
        # is: what the test shows when the kit does not stop.
        "import faulthandler, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "faulthandler.register(signal.SIGUSR1); from toolcanon_conformance.cli import main; sys.exit(main())",
        "check",
        "--impl-cmd",
        f"{sys.executable} {SCRIPT} hang",
        "--timeout",
        "30",
        *suite,
        "--report",
        str(report),
    ]
    notice = tmp_path / "hanging"
    environment = {**os.environ, HANGING_NOTICE: str(notice)}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    _wait_for_the_hang(notice, process)  # the adapter has been sent the first scenario and hangs on it
    masks = {
        line.split(":")[0]: int(line.split(":")[1], 16)
        for line in Path(f"/proc/{process.pid}/status").read_text().splitlines()
        if line.startswith(("SigIgn", "SigBlk"))
    }
    assert not any(mask & (1 << (signal.SIGINT - 1)) for mask in masks.values()), masks
    began = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGUSR1)
        time.sleep(1)
        process.kill()
        _, err = process.communicate()
        raise AssertionError(f"the kit went on 60 s after the interrupt; where it was:\n{err[-6000:]}") from None
    assert process.returncode == 130, err
    assert time.monotonic() - began < 25  # the hung adapter is stopped, not waited for (its timeout is 30 s)
    assert err.splitlines()[-1].startswith("toolcanon check: interrupted after 0 of 6 scenarios; partial report")
    assert json.loads(report.read_text())["partial"] is True


def _wait_for_the_hang(notice: Path, process: subprocess.Popen[str]) -> None:
    """Return once the misbehaving adapter has written ``notice``: it hangs on a scenario the kit sent."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if notice.is_file() and notice.read_text(encoding="utf-8").strip():
            return
        if process.poll() is not None:
            raise AssertionError(f"the kit ended ({process.returncode}) before its adapter hung")
        time.sleep(0.02)
    raise AssertionError("the adapter did not hang on a scenario within 60 s")


# --- strings the contract allows, on a pipe ---------------------------------------------------------------


#: ``toolcanon check ARGS --report FILE`` for each of the last three arguments in turn, in one process (its
#: output encoding is what is tested: one start-up serves the three formats), each run's output ending in a line
#: that gives its exit status.
_CHECK_EACH_REPORT = """
import sys
from toolcanon_conformance.cli import main
for report in sys.argv[-3:]:
    status = main([*sys.argv[1:-3], "--report", report])
    print(f"--- exit {status}", flush=True)
"""


@pytest.mark.parametrize("encoding", [None, "utf-8", "ascii"])
def test_check_prints_and_reports_lone_surrogates(tmp_path: Path, encoding: str | None) -> None:
    from test_report import surrogate_suite

    scenarios, goldens = surrogate_suite(tmp_path / "suite")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    environment.pop("PYTHONIOENCODING", None)
    if encoding is not None:
        environment["PYTHONIOENCODING"] = encoding
    names = ["r.json", "r.md", "r.html"]
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _CHECK_EACH_REPORT,
            "check",
            "--impl",
            "test_report:Surrogates",
            "--scenarios",
            str(scenarios),
            "--goldens",
            str(goldens),
            "--show",
            "skips",
            *(str(tmp_path / name) for name in names),
        ],
        capture_output=True,
        timeout=120,
        check=False,
        env=environment,
    )
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    runs = re.split(r"^--- exit (\d+)\n", done.stdout.decode("ascii" if encoding == "ascii" else "utf-8"), flags=re.M)
    assert len(runs) == 2 * len(names) + 1 and runs[-1] == ""
    for name, out, status in zip(names, runs[0::2], runs[1::2], strict=False):
        assert status == "1", out
        assert "lone failed [R-SNAP-1]" in out and "cannot say \\udfff here" in out
        assert "x" * 80 + '\\ud800" (characters 4921–5003 of 5003)' in out.replace("\\u2013", "–")
        assert "x" * 200 not in out
        assert "\\ud800" in (tmp_path / name).read_text(encoding="utf-8")
    assert main(["report", str(tmp_path / "r.json")]) == 0
