"""The toolcontract command: check, report, cases, --schema, and the delegated subcommands."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest
from fake_suite import write_suite

from toolcontract_conformance.cli import main
from toolcontract_conformance.report import validate_report

SCRIPT = Path(__file__).with_name("misbehaving_adapter.py")


@pytest.fixture
def suite(tmp_path: Path) -> list[str]:
    scenarios, goldens = write_suite(tmp_path)
    return ["--scenarios", str(scenarios), "--goldens", str(goldens)]


def test_check_prints_a_table_by_rule_and_fails(
    suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    status = main(["check", "--impl", "fake_suite:implementation", *suite, "--report", str(report)])
    out = capsys.readouterr().out
    assert status == 1
    assert "by-name 0.1 (python)" in out
    assert "R-NEST-2         1        1        0        0        0  ✗" in out
    assert "bad-meta failed [R-NEST-2]" in out and "$.scenario: value" in out
    assert "err-hook errored [R-WRAP-1]: NotImplementedError: wrapper hooks" in out
    assert "Skipped (2):\n  ok-mcp: missing capability mcp\n  skip-set: sets are not expressible here" in out
    assert out.rstrip().splitlines()[-1].startswith("FAIL: 2 passed, 1 failed, 1 errored, 2 skipped of 6 scenarios")
    validate_report(json.loads(report.read_text()))


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
    assert "Known failures, listed in the baseline (2):" in capsys.readouterr().out
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
    from toolcontract_conformance._schemas import schema_errors

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
    monkeypatch.setitem(sys.modules, "toolcontract_conformance.render_cli", None)
    assert main(["render", "--help"]) == 2
    assert "toolcontract render: not available" in capsys.readouterr().err


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
