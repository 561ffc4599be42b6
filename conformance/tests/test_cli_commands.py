"""The toolcanon commands a CI owner reaches for: --version, smoke, info, cases --export, the JSON report on
standard output, badges, -q, colour, and one selection vocabulary (-k, --rule) with one set of exit codes."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_suite import ByName, write_suite

from toolcanon_conformance.cli import main
from toolcanon_conformance.implementation import ImplementationInfo, Outcome, Ran, Skipped
from toolcanon_conformance.locations import goldens_dir, scenarios_dir
from toolcanon_conformance.report import validate_report
from toolcanon_conformance.smoke import SMOKE_SCENARIO

HERE = Path(__file__).parent
SCRIPT = HERE / "misbehaving_adapter.py"
REFERENCE_ADAPTER = f"{sys.executable} -m toolcanon_conformance.adapters.reference"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(autouse=True)
def _no_colour_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def suite(tmp_path: Path) -> list[str]:
    scenarios, goldens = write_suite(tmp_path)
    return ["--scenarios", str(scenarios), "--goldens", str(goldens)]


class Terminal(io.StringIO):
    """Standard output on a terminal."""

    def isatty(self) -> bool:
        return True


# --- --version --------------------------------------------------------------------------------------------


def test_version_names_the_kit_the_reference_and_the_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    import toolcanon

    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    first, second = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"toolcanon \d+\.\d+\.\d+\S*", first)
    assert second == (f"reference implementation: toolcanon {toolcanon.__version__}; adapter protocol version 1")


def test_version_falls_back_to_the_package_version(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    import toolcanon_conformance
    from toolcanon_conformance import versions

    def no_metadata(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", no_metadata)
    monkeypatch.setattr(toolcanon_conformance, "__version__", "9.8.7", raising=False)
    assert versions.kit_version() == "9.8.7"
    assert versions.version_text().startswith("toolcanon 9.8.7\n")


# --- smoke ------------------------------------------------------------------------------------------------


def test_smoke_passes_the_reference_in_process_and_as_an_adapter(capsys: pytest.CaptureFixture[str]) -> None:
    for arguments in ([], ["--impl-cmd", REFERENCE_ADAPTER]):
        assert main(["smoke", *arguments]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0].startswith("started: toolcanon ") and lines[0].endswith(" (python)")
        assert lines[1].startswith("capabilities: guards, wrappers, ")
        assert lines[2] == f"scenario: {SMOKE_SCENARIO} [R-PRE-1, R-WRAP-1]"
        assert lines[3].startswith("PASS: the transcript equals the golden")


def test_the_smoke_scenario_needs_no_capability() -> None:
    scenario = json.loads((scenarios_dir() / f"{SMOKE_SCENARIO}.json").read_text("utf-8"))
    assert scenario["requires"] == [] and (goldens_dir() / f"{SMOKE_SCENARIO}.json").is_file()


class Declines:
    """Declares no capability and declines whatever it is sent."""

    def start(self) -> ImplementationInfo:
        return ImplementationInfo("declines", "python", "0", ())

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        return Skipped("not implemented")

    def stop(self) -> None:
        pass


class Wrong(Declines):
    """Answers a transcript that is not the golden."""

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        return Ran('{"formatVersion":1,"scenario":"pre-default-allow","steps":{}}')


@pytest.mark.parametrize(
    ("target", "shown"),
    [
        ("test_cli_commands:Wrong", "pre-default-allow failed [R-PRE-1, R-WRAP-1]: the transcript differs"),
        ("test_cli_commands:Declines", "pre-default-allow skipped: not implemented"),
    ],
)
def test_smoke_fails_a_wrong_answer_and_a_skip(target: str, shown: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["smoke", "--impl", target]) == 1
    out = capsys.readouterr().out
    assert "started: declines 0 (python)\ncapabilities: none\n" in out
    assert f"FAIL: {shown}" in out


def test_smoke_and_info_of_an_implementation_that_cannot_start(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("smoke", "info"):
        assert main([command, "--impl-cmd", f"{sys.executable} {SCRIPT} wrong-version"]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.startswith(f"toolcanon {command}: cannot start Subprocess(")
        assert "protocol version mismatch" in captured.err
    assert main(["smoke", "--impl-cmd", f"{sys.executable} {SCRIPT} start-hang", "--startup-timeout", "0.5"]) == 2
    assert "toolcanon smoke: cannot start" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["smoke", "info"])
def test_smoke_and_info_take_one_implementation(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--impl", "a:b", "--impl-cmd", "c"]) == 2
    assert f"toolcanon {command}: one implementation at a time: --impl a:b and --impl-cmd c given" in (
        capsys.readouterr().err
    )
    assert main([command, "--impl-cmd", " "]) == 2
    assert "--impl-cmd is empty" in capsys.readouterr().err


# --- info -------------------------------------------------------------------------------------------------


def test_info_prints_the_start_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", "--impl", "fake_suite:implementation"]) == 0
    assert capsys.readouterr().out == (
        "name:         by-name\n"
        "version:      0.1\n"
        "language:     python\n"
        "capabilities: wrappers\n"
        "issues:       https://example.org/issues\n"
        "protocol:     in-process\n"
    )
    assert main(["info", "--impl-cmd", f"{sys.executable} {SCRIPT} good", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "selectedBy": {"option": "--impl-cmd", "value": f"{sys.executable} {SCRIPT} good"},
        "implementation": {"name": "misbehaving", "language": "python", "version": "0", "capabilities": ["wrappers"]},
        "protocolVersion": 1,
    }


def test_info_stops_what_it_started() -> None:
    class Stops(ByName):
        stopped = False

        def stop(self) -> None:
            Stops.stopped = True

    from toolcanon_conformance.info import describe

    describe(Stops(), "--impl", "x:y")
    assert Stops.stopped


# --- cases --export ---------------------------------------------------------------------------------------


def test_cases_export_copies_scenarios_goldens_and_schemas(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out"
    assert main(["cases", "--export", str(target), "--rule", "r-pre-1", "-k", "default"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1  # how many files went where, not every path
    assert re.fullmatch(
        rf"wrote 1 scenarios, 1 goldens and \d+ schemas to {re.escape(str(target))} \(scenarios/, goldens/, schemas/\)",
        out[0],
    )
    assert (target / "scenarios/pre-default-allow.json").read_bytes() == (
        scenarios_dir() / "pre-default-allow.json"
    ).read_bytes()
    assert (target / "goldens/pre-default-allow.json").read_bytes() == (
        goldens_dir() / "pre-default-allow.json"
    ).read_bytes()
    schemas = {path.name for path in (target / "schemas").iterdir()}
    assert {"scenario.schema.json", "transcript.schema.json", "protocol-command.schema.json"} <= schemas
    assert [path.name for path in (target / "scenarios").iterdir()] == ["pre-default-allow.json"]


def test_cases_export_the_whole_suite_and_check_it_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "all"
    assert main(["cases", "--export", str(target)]) == 0
    capsys.readouterr()
    exported = sorted(path.name for path in (target / "scenarios").iterdir())
    assert exported == sorted(path.name for path in scenarios_dir().glob("*.json"))
    assert sorted(path.name for path in (target / "goldens").iterdir()) == sorted(
        path.name for path in goldens_dir().glob("*.json") if path.name in exported
    )
    arguments = ["--scenarios", str(target / "scenarios"), "--goldens", str(target / "goldens"), "-k", "snap-"]
    assert main(["check", *arguments]) == 0


def test_cases_export_refuses_a_folder_that_is_not_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "README").write_text("mine")
    assert main(["cases", "--export", str(target), "-k", "pre-default"]) == 2
    assert capsys.readouterr().err == (
        f"toolcanon cases: --export {target}: {target} is not empty (--force writes into it anyway)\n"
    )
    assert sorted(path.name for path in target.iterdir()) == ["README"]
    assert main(["cases", "--export", str(target), "-k", "pre-default", "--force"]) == 0
    assert (target / "README").read_text() == "mine" and (target / "scenarios/pre-default-allow.json").is_file()
    (tmp_path / "file").write_text("")
    assert main(["cases", "--export", str(tmp_path / "file")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_cases_export_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cases", "--force"]) == 2
    assert "--force goes with --export DIR" in capsys.readouterr().err
    assert main(["cases", "--export", str(tmp_path / "x"), "-k", "no-such-scenario-anywhere"]) == 2
    assert "no scenario matches the selection" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    assert main(["cases", "--export", str(tmp_path / "y"), "--rule", "R-NOPE-1"]) == 2
    assert "--rule R-NOPE-1: no such rule" in capsys.readouterr().err


# --- the JSON report on standard output, and read back from standard input -------------------------------


def test_check_format_json_prints_the_report_on_stdout(
    suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "r.json"
    arguments = ["check", "--impl", "fake_suite:implementation", *suite, "--format", "json", "--report", str(saved)]
    assert main(arguments) == 1
    captured = capsys.readouterr()
    assert captured.out == saved.read_text(encoding="utf-8")
    validate_report(json.loads(captured.out))
    assert "R-NEST-2" in captured.err and captured.err.rstrip().splitlines()[-1].startswith("FAIL: 2 passed")
    assert main([*arguments[:-2], "--format", "json", "-q"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["ok"] is False
    assert captured.err.startswith("Not passing (2):\n") and captured.err.splitlines()[-1].startswith("FAIL: 2 passed")
    assert main([*arguments[:-2], "--format", "json", "-qq"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["ok"] is False
    assert captured.err.splitlines() == [captured.err.strip()] and captured.err.startswith("FAIL: 2 passed")


def test_report_reads_standard_input(
    suite: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["check", "--impl", "fake_suite:implementation", *suite, "--format", "json"])
    report = capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.StringIO(report))
    assert main(["report", "-", "--format", "md"]) == 0
    assert capsys.readouterr().out.startswith("# Conformance report: by-name 0.1 (python)")
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"formatVersion": 2}'))
    assert main(["report", "-"]) == 2
    assert capsys.readouterr().err.startswith("toolcanon report: standard input: ")


def test_the_report_pipes_from_check_to_report() -> None:
    check = [sys.executable, "-m", "toolcanon_conformance.cli", "check", "-k", "snap-key", "--format", "json", "-q"]
    code = "import sys; from toolcanon_conformance.cli import main; sys.exit(main())"
    produced = subprocess.run(
        [sys.executable, "-c", code, *check[3:]], capture_output=True, text=True, timeout=120, check=False
    )
    assert produced.returncode == 0, produced.stderr
    assert produced.stderr.startswith("PASS: 1 passed, 0 failed")
    badge = subprocess.run(
        [sys.executable, "-c", code, "report", "-", "--format", "badge"],
        input=produced.stdout,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert badge.returncode == 0, badge.stderr
    assert json.loads(badge.stdout) == {
        "schemaVersion": 1,
        "label": "toolcanon",
        "message": "1/1 passed",
        "color": "brightgreen",
    }


# --- badges -----------------------------------------------------------------------------------------------


def _saved_report(arguments: list[str], tmp_path: Path, name: str = "r.json") -> Path:
    saved = tmp_path / name
    main(["check", *arguments, "--report", str(saved)])
    return saved


def _badge(capsys: pytest.CaptureFixture[str], *arguments: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["report", *arguments, "--format", "badge"]) == 0
    badge: dict[str, Any] = json.loads(capsys.readouterr().out)
    return badge


def test_badge_colours_and_messages(suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake = ["--impl", "fake_suite:implementation", *suite]
    failing = _saved_report(fake, tmp_path, "fail.json")
    assert _badge(capsys, str(failing)) == {
        "schemaVersion": 1,
        "label": "toolcanon",
        "message": "2/6 passed",
        "color": "red",
    }
    passing = _saved_report([*fake, "-k", "ok-"], tmp_path, "pass.json")
    assert _badge(capsys, str(passing), "--label", "conformance") == {
        "schemaVersion": 1,
        "label": "conformance",
        "message": "2/3 passed",
        "color": "brightgreen",
    }
    baseline = tmp_path / "baseline.json"
    main(["check", *fake, "--write-baseline", str(baseline)])
    excused = _saved_report([*fake, "--baseline", str(baseline)], tmp_path, "excused.json")
    assert _badge(capsys, str(excused))["message"] == "2/6 passed, 2 known"
    assert _badge(capsys, str(excused))["color"] == "yellowgreen"
    nothing = _saved_report([*fake, "-k", "skip-"], tmp_path, "nothing.json")
    assert _badge(capsys, str(nothing)) | {"label": ""} == {
        "schemaVersion": 1,
        "label": "",
        "message": "0/1 passed",
        "color": "red",
    }


def test_badge_of_an_interrupted_run() -> None:
    from toolcanon_conformance.badge import badge

    run = {"verdict": "interrupted", "summary": {"passed": 3, "total": 3, "knownFailures": 0}}
    assert badge(run) == {"schemaVersion": 1, "label": "toolcanon", "message": "interrupted", "color": "lightgrey"}


def test_badge_picks_one_implementation_of_several(
    suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    adapter = f"{sys.executable} {SCRIPT} good"
    saved = _saved_report(["--impl", "fake_suite:implementation", "--impl-cmd", adapter, *suite], tmp_path)
    capsys.readouterr()
    assert main(["report", str(saved), "--format", "badge"]) == 2
    assert capsys.readouterr().err == (
        "toolcanon report: the report holds 2 implementations (#1 by-name, #2 misbehaving): give --impl-index N "
        "or --impl-name NAME, one badge per implementation\n"
    )
    assert _badge(capsys, str(saved), "--impl-index", "2") == _badge(capsys, str(saved), "--impl-name", "misbehaving")
    assert _badge(capsys, str(saved), "--impl-index", "2")["message"] == "5/6 passed"
    assert _badge(capsys, str(saved), "--impl-index", "1")["color"] == "red"
    for wrong, said in [
        (["--impl-index", "3"], "--impl-index 3: the report holds 2 implementation(s): #1 by-name, #2 misbehaving"),
        (["--impl-name", "nobody"], "--impl-name nobody: no implementation(s) of that name in the report"),
        (["--impl-index", "1", "--impl-name", "by-name"], "--impl-index and --impl-name both pick"),
    ]:
        assert main(["report", str(saved), "--format", "badge", *wrong]) == 2
        assert said in capsys.readouterr().err
    assert main(["report", str(saved), "--impl-index", "1"]) == 2
    assert "--impl-index goes with --format badge" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["report", str(saved), "--format", "badge", "--impl-index", "0"])
    output = tmp_path / "badge.json"
    assert main(["report", str(saved), "--format", "badge", "--impl-index", "2", "-o", str(output)]) == 0
    assert json.loads(output.read_text())["message"] == "5/6 passed"


# --- -q and colour ----------------------------------------------------------------------------------------


def test_quiet_twice_prints_only_the_verdict_lines(suite: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--impl", "fake_suite:implementation", *suite, "-qq"]) == 1
    captured = capsys.readouterr()
    assert captured.out.count("\n") == 1 and captured.out.startswith("FAIL: 2 passed, 1 failed, 1 errored")
    adapter = f"{sys.executable} {SCRIPT} good"
    assert main(["check", "--impl", "fake_suite:implementation", "--impl-cmd", adapter, *suite, "-q", "--quiet"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("  #1 by-name 0.1    FAIL: 2 passed") and lines[1].startswith("  #2 misbehaving 0  PASS")


@pytest.mark.parametrize("quiet", ["-q", "-qq"])
def test_quiet_draws_no_progress_bar(quiet: str, suite: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    main(["check", "--impl", "fake_suite:implementation", *suite, quiet])
    assert terminal.getvalue() == ""


def _check_on_a_terminal(suite: list[str], monkeypatch: pytest.MonkeyPatch, *options: str) -> str:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    main(["check", "--impl", "fake_suite:implementation", *suite, *options])
    return terminal.getvalue()


def test_colour_on_a_terminal_only(
    suite: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    coloured = _check_on_a_terminal(suite, monkeypatch, "--show", "rules")
    last = coloured.rstrip().splitlines()[-1]
    assert last.startswith("\x1b[31;1mFAIL\x1b[0m: 2 passed")
    assert "\x1b[31;1m✗\x1b[0m" in coloured and "\x1b[31;1mNot passing (2):\x1b[0m" in coloured
    monkeypatch.undo()
    main(["check", "--impl", "fake_suite:implementation", *suite, "--show", "rules"])
    plain = capsys.readouterr().out
    assert "\x1b[" not in plain
    assert ANSI.sub("", coloured).splitlines()[:-1] == plain.splitlines()[:-1]


@pytest.mark.parametrize(
    ("environment", "tty", "coloured"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": "1"}, True, False),
        ({"NO_COLOR": ""}, True, True),  # only a non-empty NO_COLOR counts
        ({"FORCE_COLOR": "1"}, False, True),
        ({"FORCE_COLOR": ""}, False, False),
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),
        ({"TERM": "dumb"}, True, False),
    ],
)
def test_colour_follows_no_color_and_force_color(
    suite: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    environment: dict[str, str],
    tty: bool,
    coloured: bool,
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    if tty:
        out = _check_on_a_terminal(suite, monkeypatch)
    else:
        main(["check", "--impl", "fake_suite:implementation", *suite])
        out = capsys.readouterr().out
    assert ("\x1b[" in out) is coloured


def test_smoke_is_coloured_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main(["smoke"]) == 0
    assert "\x1b[32;1mPASS\x1b[0m: the transcript equals the golden" in terminal.getvalue()


# --- one selection vocabulary -----------------------------------------------------------------------------


def test_k_is_repeatable_and_any_pattern_matches(suite: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cases", *suite[:2], "-k", "OK-PLAIN", "-k", "skip", "--format", "json"]) == 0
    assert [s["id"] for s in json.loads(capsys.readouterr().out)["scenarios"]] == ["ok-plain", "skip-set"]
    assert main(["check", "--impl", "fake_suite:implementation", *suite, "-k", "ok-plain", "-k", "ok-nested"]) == 0
    assert "PASS: 2 passed, 0 failed, 0 errored, 0 skipped of 2 scenarios" in capsys.readouterr().out


def test_rule_ignores_case(suite: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cases", *suite[:2], "--rule", "r-nest-2", "--format", "json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [s["id"] for s in listing["scenarios"]] == ["bad-meta", "ok-nested"]
    assert [rule["rule"] for rule in listing["rules"]] == ["R-NEST-2"]
    assert main(["check", "--impl", "fake_suite:implementation", *suite, "--rule", "r-snap-1", "-k", "plain"]) == 0
    assert "of 1 scenarios" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["check", "cases"])
def test_an_unknown_rule_is_one_usage_error_naming_the_closest(
    command: str, suite: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    arguments = suite if command == "check" else suite[:2]
    assert main([command, *arguments, "--rule", "r-post-44"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert (
        captured.err == f"toolcanon {command}: --rule r-post-44: no such rule (closest: R-POST-4, R-POST-8, R-POST-7)\n"
    )
    assert main([command, *arguments, "--rule", "nothing-like-it"]) == 2
    assert capsys.readouterr().err == f"toolcanon {command}: --rule nothing-like-it: no such rule\n"


def test_a_rule_only_a_custom_scenario_names_is_known(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenarios, _goldens = write_suite(tmp_path, {"ok-own": ["R-OWN-1"]})
    assert main(["cases", "--scenarios", str(scenarios), "--rule", "r-own-1", "--format", "json"]) == 0
    assert [s["id"] for s in json.loads(capsys.readouterr().out)["scenarios"]] == ["ok-own"]


def test_selection_module() -> None:
    from toolcanon_conformance.selection import UnknownRule, resolve_rules, select

    scenarios: list[dict[str, Any]] = [
        {"id": "Alpha", "rules": ["R-A-1"]},
        {"id": "beta", "rules": ["R-B-1", "R-A-2"]},
        {"id": "gamma"},
    ]
    assert select(scenarios) == scenarios
    assert [s["id"] for s in select(scenarios, ["ALP", "gam"])] == ["Alpha", "gamma"]
    assert [s["id"] for s in select(scenarios, (), ["R-A-2"])] == ["beta"]
    assert [s["id"] for s in select(scenarios, ["a"], ["R-A-1", "R-A-2"])] == ["Alpha", "beta"]
    assert resolve_rules(["r-a-1", "R-A-1", " r-b-1 "], ["R-A-1", "R-B-1"]) == ("R-A-1", "R-B-1")
    with pytest.raises(UnknownRule) as raised:
        resolve_rules(["R-A-3"], ["R-A-1", "R-B-1"])
    assert raised.value.rule == "R-A-3" and raised.value.closest[0] == "R-A-1"


# --- the same exit codes ----------------------------------------------------------------------------------


def test_exit_codes_are_the_same_for_every_command(suite: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    bad = f"{sys.executable} {SCRIPT} wrong-version"
    assert [main(["check", "--impl", "fake_suite:implementation", *suite, "-k", "ok-"]), main(["smoke"])] == [0, 0]
    assert [
        main(["check", "--impl", "fake_suite:implementation", *suite]),
        main(["smoke", "--impl", "test_cli_commands:Wrong"]),
    ] == [1, 1]
    assert [
        main(["check", "--impl-cmd", bad, *suite]),
        main(["smoke", "--impl-cmd", bad]),
        main(["info", "--impl-cmd", bad]),
    ] == [2, 2, 2]
    usage = [main(["check", *suite, "--rule", "R-X-1"]), main(["cases", "--rule", "R-X-1"]), main(["report"])]
    assert usage == [2, 2, 2]
    capsys.readouterr()


def test_a_verdict_line_never_reads_as_a_contradiction(
    suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = ["check", "--impl", "fake_suite:implementation", *suite, "-qq"]
    baseline = tmp_path / "baseline.json"
    main([*fake, "--write-baseline", str(baseline)])
    capsys.readouterr()
    assert main([*fake, "--baseline", str(baseline)]) == 0
    excused = capsys.readouterr().out
    # The failures the baseline excused are counted as known, not failed, and the line says why it passes.
    assert excused.startswith("PASS (2 known failures excused by the baseline): 2 passed, 0 failed, 0 errored")
    listed = json.loads(baseline.read_text())
    baseline.write_text(json.dumps({**listed, "knownFailures": [*listed["knownFailures"], {"scenario": "ok-plain"}]}))
    assert main([*fake, "--baseline", str(baseline)]) == 1
    stale = capsys.readouterr().out
    # A FAIL whose counts show nothing failed or errored names what failed the run.
    assert stale.startswith("FAIL (1 stale baseline entry): 1 passed, 0 failed, 0 errored, 2 skipped, 2 known, 1 stale")


@pytest.mark.parametrize(
    ("arguments", "refusal"),
    [
        (["check", "--max-failures", "-1"], "argument --max-failures: '-1' is not a count (0 or more)"),
        (["check", "--max-failures", "two"], "argument --max-failures: 'two' is not a count (0 or more)"),
        (["report", "--impl-index", "0", "-"], "argument --impl-index: '0' is not a position (1 or more)"),
        (["fuzz", "--examples", "0"], "argument --examples: '0' is not a count (1 or more)"),
    ],
)
def test_a_number_out_of_range_is_a_usage_error(
    arguments: list[str], refusal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        status = main(arguments)
    except SystemExit as stopped:  # argparse's own exit, for the options main parses itself
        status = int(str(stopped.code))
    assert status == 2
    assert refusal in capsys.readouterr().err
