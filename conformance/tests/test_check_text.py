"""The text of ``toolcanon check``: what needs attention last, the verdict the last line, the rest folded.

Each run's text is its name, one line each for the table by rule, the known failures and the skips (``--show``
prints them whole), the golden count, then the failures with their differences and the verdict line;
``--failures-only`` (and ``-q``) keeps only the last two. The output docs/kit.md shows is what the kit prints.
"""

from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from broken_implementations import BUGS, Bug
from fake_suite import write_suite

from toolcanon_conformance.adapters.reference import ReferenceImplementation
from toolcanon_conformance.check_text import fold_line_of_known, fold_line_of_skips, parse_parts
from toolcanon_conformance.cli import main
from toolcanon_conformance.implementation import ImplementationInfo, Outcome
from toolcanon_conformance.runner import ScenarioResult

ROOT = Path(__file__).resolve().parents[2]
KIT_GUIDE = ROOT / "docs" / "kit.md"
SECONDS = re.compile(r" in [0-9.]+ s\b")
TABLE_HEADER = re.compile(r"^rule +passed +failed +errored +skipped +known$")
FOLD_LINES = re.compile(r"^(rules: |\d+ skipped: |\d+ known failures?, |goldens: )")
ADAPTER = f"{sys.executable} {Path(__file__).parent / 'misbehaving_adapter.py'} good"


@pytest.fixture
def suite(tmp_path: Path) -> list[str]:
    scenarios, goldens = write_suite(tmp_path)
    return ["--scenarios", str(scenarios), "--goldens", str(goldens)]


def _check(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, list[str]]:
    """``toolcanon check ARGUMENTS`` in this process: its status and the lines of its standard output."""
    capsys.readouterr()
    status = main(["check", *arguments])
    return status, SECONDS.sub(" in 0.00 s", capsys.readouterr().out).rstrip("\n").split("\n")


def _index(lines: list[str], pattern: str) -> int:
    return next(index for index, line in enumerate(lines) if re.search(pattern, line))


# --- the order of a run's text ----------------------------------------------------------------------------


def test_with_every_part_shown_the_failures_come_after_the_table_and_the_skips_and_the_verdict_is_last(
    suite: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines = _check(capsys, "--impl", "fake_suite:implementation", *suite, "--show", "rules,skips")
    assert status == 1
    table = _index(lines, TABLE_HEADER.pattern)
    skips = lines.index("Skipped (2):")
    failures = lines.index("Not passing (2):")
    last_row = max(index for index, line in enumerate(lines) if line.startswith("R-"))
    last_skip = skips + 2
    assert lines[last_skip] == "  skip-set: sets are not expressible here"
    assert table < last_row < skips < last_skip < failures
    assert lines[-1].startswith("FAIL: 2 passed, 1 failed, 1 errored, 2 skipped of 6 scenarios")
    assert not any(line.startswith(("FAIL", "PASS")) for line in lines[:-1])
    assert lines[failures + 1].startswith("  bad-meta failed [R-NEST-2]")
    assert not any(FOLD_LINES.match(line) and not line.startswith("goldens: ") for line in lines)


def test_show_takes_a_list_is_repeatable_and_all_is_every_part(
    suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "baseline.json"
    known = ["--impl", "fake_suite:implementation", *suite, "--baseline", str(baseline)]
    baseline.write_text(json.dumps({"formatVersion": 1, "knownFailures": [{"scenario": "bad-meta"}]}))
    _, everything = _check(capsys, *known, "--show", "all")
    _, listed = _check(capsys, *known, "--show", "known", "--show", "SKIPS, rules")
    assert listed == everything
    known_list = everything.index("Known failures, listed in the baseline (1):")
    assert everything[known_list + 1] == "  bad-meta"
    assert everything.index("Skipped (2):") < everything.index("Not passing (1):")
    assert parse_parts("rules,all") == ["rules", "rules", "skips", "known", "optional"]


def test_folded_the_known_failures_are_one_line_above_the_failures(
    suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"formatVersion": 1, "knownFailures": [{"scenario": "bad-meta"}]}))
    _, lines = _check(capsys, "--impl", "fake_suite:implementation", *suite, "--baseline", str(baseline))
    assert lines[2] == "1 known failure, excused by the baseline; --show known lists them"
    assert "  bad-meta" not in lines and lines.index("Not passing (1):") > 2


def test_the_known_failures_say_their_kind_folded_and_listed(
    suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "baseline.json"
    entry = {"scenario": "bad-meta", "kind": "deviation", "reason": "r", "intent": {"source": "a.ts", "quote": "q"}}
    baseline.write_text(json.dumps({"formatVersion": 1, "knownFailures": [entry]}))
    known = ["--impl", "fake_suite:implementation", *suite, "--baseline", str(baseline)]
    _, folded = _check(capsys, *known)
    assert folded[2] == "1 known failure (1 deviation), excused by the baseline; --show known lists them"
    _, listed = _check(capsys, *known, "--show", "known")
    assert listed[listed.index("Known failures, listed in the baseline (1):") + 1] == "  bad-meta (deviation) — r"


def test_the_fold_line_counts_each_kind() -> None:
    def known(kind: str | None) -> ScenarioResult:
        return ScenarioResult("s", (), "failed", baseline="known-failure", baseline_kind=kind)  # type: ignore[arg-type]

    results = [known("host-limit"), known("deviation"), known("host-limit"), known(None)]
    assert fold_line_of_known(results) == (
        "4 known failures (1 deviation, 2 host limits, 1 unclassified), excused by the baseline; "
        "--show known lists them"
    )
    assert fold_line_of_known([known(None)]) == "1 known failure, excused by the baseline; --show known lists them"


def test_baseline_problems_come_after_the_failures_and_before_the_verdict(
    suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "baseline.json"
    entries = [{"scenario": "ok-plain"}, {"scenario": "no-such-one"}]
    baseline.write_text(json.dumps({"formatVersion": 1, "knownFailures": entries}))
    status, lines = _check(capsys, "--impl", "fake_suite:implementation", *suite, "--baseline", str(baseline))
    assert status == 1
    problems = lines.index("Baseline problems:")
    stale = lines.index(
        "  baseline: stale (ok-plain is listed as a known failure but passes: remove it from the baseline)"
    )
    assert lines.index("Not passing (3):") < stale < problems == len(lines) - 4
    assert lines[problems + 1] == "  no-such-one: the baseline lists 'no-such-one', which is no scenario"
    assert lines[-1].startswith("FAIL (1 baseline problem; 1 stale baseline entry): ")


def test_under_fail_on_skip_the_skips_are_listed_with_the_failures(
    suite: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    for layout in ((), ("--failures-only",)):
        status, lines = _check(capsys, "--impl", "fake_suite:implementation", *suite, "--fail-on-skip", *layout)
        assert status == 1
        skips = lines.index("Skipped (2), failing the run under --fail-on-skip:")
        assert lines.index("Not passing (2):") < skips < len(lines) - 1
        assert lines[skips + 1 : skips + 3] == [
            "  ok-mcp: missing capability mcp",
            "  skip-set: sets are not expressible here",
        ]
        assert not any(line.startswith("2 skipped: ") for line in lines)


# --- the fold lines ---------------------------------------------------------------------------------------


def test_the_fold_lines_count_what_the_report_holds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = ["ok-plain", "bad-meta", "ok-mcp", "ok-mcp-again", "ok-approval", "ok-approval-mcp", "skip-set", "skip-map"]
    scenarios, goldens = write_suite(tmp_path, {scenario_id: ["R-SNAP-1"] for scenario_id in ids})
    for scenario_id, requires in (("ok-approval", ["approval"]), ("ok-approval-mcp", ["approval", "mcp"])):
        file = scenarios / f"{scenario_id}.json"
        file.write_text(json.dumps(json.loads(file.read_text()) | {"requires": requires}))
    report = tmp_path / "report.json"
    arguments = ["--impl", "fake_suite:implementation", "--scenarios", str(scenarios), "--goldens", str(goldens)]
    _, lines = _check(capsys, *arguments, "--report", str(report))
    assert lines[1:3] == [
        "rules: 1 of 1 with a failure or an error; --show rules prints the table",
        "6 skipped: 4 need a capability it does not declare (mcp 3, approval 2), 2 declined by the implementation; "
        "--show skips lists them",
    ]
    (run,) = json.loads(report.read_text())["implementations"]
    skipped = [scenario for scenario in run["scenarios"] if scenario["status"] == "skipped"]
    unsent = [scenario for scenario in skipped if scenario.get("missingCapabilities")]
    needing = {name: sum(name in s["missingCapabilities"] for s in unsent) for name in ("mcp", "approval")}
    assert (len(skipped), len(unsent), needing) == (6, 4, {"mcp": 3, "approval": 2})
    assert run["summary"]["skipped"] == 6


def test_the_rules_line_counts_the_rows_marked_in_the_table(
    suite: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    _, folded = _check(capsys, "--impl", "fake_suite:implementation", *suite, "--report", str(report))
    _, shown = _check(capsys, "--impl", "fake_suite:implementation", *suite, "--show", "rules")
    rows = [line for line in shown if re.match(r"R-[A-Z]+-\d+ ", line)]
    marked = [row for row in rows if row.endswith("✗")]
    rules = json.loads(report.read_text())["implementations"][0]["rules"]
    assert (len(rows), len(marked)) == (len(rules), sum(1 for r in rules if r["failed"] or r["errored"])) == (5, 2)
    assert folded[1] == f"rules: {len(marked)} of {len(rows)} with a failure or an error; --show rules prints the table"
    _, passing = _check(capsys, "--impl", "fake_suite:implementation", *suite, "-k", "ok-")
    assert passing[1] == "rules: none of 3 with a failure or an error; --show rules prints the table"


def _skip(scenario_id: str, *missing: str) -> ScenarioResult:
    message = f"missing capability {', '.join(missing)}" if missing else "declined"
    return ScenarioResult(scenario_id, (), "skipped", message=message, missing_capabilities=missing)


def test_the_skips_line_counts_each_capability_by_the_scenarios_that_need_it() -> None:
    skipped = [_skip("a", "timeout"), _skip("b", "approval", "timeout"), _skip("c", "approval"), _skip("d")]
    assert fold_line_of_skips(skipped) == (
        "4 skipped: 3 need a capability it does not declare (approval 2, timeout 2), 1 declined by the "
        "implementation; --show skips lists them"
    )
    assert fold_line_of_skips([_skip("a", "mcp")]) == (
        "1 skipped: 1 needs a capability it does not declare (mcp 1); --show skips lists them"
    )
    assert fold_line_of_skips([_skip("a"), _skip("b")]) == (
        "2 skipped: 2 declined by the implementation; --show skips lists them"
    )


# --- failures only, -q ------------------------------------------------------------------------------------


def test_failures_only_prints_the_failures_and_the_verdict_and_nothing_else(
    suite: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines = _check(capsys, "--impl", "fake_suite:implementation", *suite, "--failures-only")
    assert status == 1
    assert lines[0] == "Not passing (2):" and lines[-2] == ""
    assert lines[-1].startswith("FAIL: 2 passed, 1 failed, 1 errored, 2 skipped of 6 scenarios")
    assert "  bad-meta failed [R-NEST-2]: the transcript differs from the golden" in lines
    assert '    expected: "bad-meta"' in lines and '    actual:   "bad-meta-not"' in lines
    assert not [line for line in lines if TABLE_HEADER.match(line) or FOLD_LINES.match(line) or "Skipped" in line]
    assert "by-name 0.1 (python)" not in lines
    _, passing = _check(capsys, "--impl", "fake_suite:implementation", *suite, "--failures-only", "-k", "ok-")
    assert len(passing) == 1 and passing[0].startswith("PASS: 2 passed")


def test_quiet_prints_what_failures_only_prints(suite: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    _, failures_only = _check(capsys, "--impl", "fake_suite:implementation", *suite, "--failures-only")
    _, quiet = _check(capsys, "--impl", "fake_suite:implementation", *suite, "-q")
    assert quiet == failures_only and '    actual:   "bad-meta-not"' in quiet
    _, twice = _check(capsys, "--impl", "fake_suite:implementation", *suite, "-qq")
    assert twice == failures_only[-1:]


@pytest.mark.parametrize("other", ["--failures-only", "-q", "-qq"])
def test_show_with_failures_only_or_quiet_is_a_usage_error(
    other: str, suite: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--impl", "fake_suite:implementation", *suite, "--show", "rules", other]) == 2
    captured = capsys.readouterr()
    name = "--failures-only" if other == "--failures-only" else "-q"
    assert (captured.out, captured.err) == (
        "",
        f"toolcanon check: --show prints what {name} leaves out: give one or the other\n",
    )


def test_show_refuses_a_part_it_does_not_know(suite: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["check", *suite, "--show", "rules,tables"])
    assert stopped.value.code == 2
    assert (
        "argument --show: 'tables' is not a part: choose from rules, skips, known, optional, all"
        in capsys.readouterr().err
    )


# --- several implementations ------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", [[], ["--failures-only"]])
def test_side_by_side_each_runs_failures_come_before_its_verdict_and_the_verdict_lines_end_the_output(
    layout: list[str], suite: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines = _check(capsys, "--impl", "fake_suite:implementation", "--impl-cmd", ADAPTER, *suite, *layout)
    assert status == 1
    first, second = lines.index("[1/2] --impl fake_suite:implementation"), lines.index(f"[2/2] --impl-cmd {ADAPTER}")
    failures = lines.index("Not passing (2):")
    verdicts = [index for index, line in enumerate(lines) if re.match(r"(FAIL|PASS)\b", line)]
    assert first == 0 and first < failures < verdicts[0] < second < verdicts[1]
    assert lines[verdicts[0]].startswith("FAIL: 2 passed") and lines[verdicts[1]].startswith("PASS: 5 passed")
    assert lines[-3:-2] == ["2 implementations:"] and verdicts[1] == len(lines) - 5
    assert lines[-2].startswith("  #1 by-name 0.1    FAIL: 2 passed")
    assert lines[-1].startswith("  #2 misbehaving 0  PASS: 5 passed")
    folded = [line for line in lines if FOLD_LINES.match(line)]
    assert len(folded) == (0 if layout else 2 * 3)  # rules, skips and goldens of each
    assert not any(TABLE_HEADER.match(line) for line in lines)


# --- the output docs/kit.md shows -------------------------------------------------------------------------

#: The bug the guide's adapter has, in one scenario only.
GUIDE_BUG: Bug = next(bug for bug in BUGS if bug.name == "value-replacement-not-rerendered")


class GuideAdapter:
    """An adapter as docs/kit.md shows it: the reference under another name, without some capabilities, and
    with :data:`GUIDE_BUG` in ``post-accept-value`` when ``buggy``."""

    def __init__(self, name: str, version: str, *, buggy: bool, without: tuple[str, ...] = ()) -> None:
        self.name, self.version, self.buggy, self.without = name, version, buggy, without
        self.reference = ReferenceImplementation()

    def start(self) -> ImplementationInfo:
        info = self.reference.start()
        capabilities = tuple(capability for capability in info.capabilities if capability not in self.without)
        return ImplementationInfo(self.name, info.language, self.version, capabilities)

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        if self.buggy and scenario["id"] == "post-accept-value":
            with GUIDE_BUG.inject():
                return self.reference.run(seq, scenario)
        return self.reference.run(seq, scenario)

    def stop(self) -> None:
        self.reference.stop()


@pytest.fixture
def guide_adapters(monkeypatch: pytest.MonkeyPatch) -> None:
    """``my_adapter:implementation`` and ``other_adapter:implementation``, the guide's two adapters."""
    for module_name, adapter in (
        ("my_adapter", GuideAdapter("my-adapter", "0.3.0", buggy=True, without=("approval", "timeout"))),
        ("other_adapter", GuideAdapter("other-adapter", "1.4.2", buggy=False)),
    ):
        module = types.ModuleType(module_name)
        module.implementation = adapter  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, module_name, module)


def _shown(command: str) -> list[str]:
    """The lines docs/kit.md shows under ``$ <command>``, timings as ``0.00 s``."""
    for block in re.findall(r"^```\n(.*?)^```$", KIT_GUIDE.read_text("utf-8"), re.M | re.S):
        first, _, rest = block.partition("\n")
        if first == f"$ {command}":
            return SECONDS.sub(" in 0.00 s", rest).rstrip("\n").split("\n")
    raise AssertionError(f"docs/kit.md shows no output of `{command}`")


@pytest.mark.usefixtures("guide_adapters")
@pytest.mark.parametrize(
    "arguments",
    [
        "--impl my_adapter:implementation",
        "--impl my_adapter:implementation -k post-accept --failures-only",
        "--impl my_adapter:implementation --impl other_adapter:implementation -k post-accept",
    ],
)
def test_the_guide_shows_what_check_prints(arguments: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, lines = _check(capsys, *arguments.split())
    assert status == 1
    assert lines == _shown(f"toolcanon check {arguments}"), "update docs/kit.md"
