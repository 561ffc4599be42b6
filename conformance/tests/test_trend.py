"""The trend of a check of several implementations, as ``toolcanon report FILE --format trend`` prints it: a bar
and the counts of each run in run order, what changed from the run before, and each rule family's counts with a
star where they changed. (The HTML report draws the same trend; ``test_report_html.py`` opens it in a browser.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from toolcanon_conformance.cli import DEFAULT_IMPLEMENTATION, main
from toolcanon_conformance.report import render
from toolcanon_conformance.trend import OUTCOMES, trend, trend_text

BROKEN = "test_report_html:broken"
RULE = "R-POST-4"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The reference, the broken reference excused by a baseline whose entries predate their rule, the reference."""
    folder = tmp_path_factory.mktemp("trend")
    written, baseline, saved = folder / "written.json", folder / "baseline.json", folder / "report.json"
    main(["check", "-qq", "--impl", BROKEN, "--rule", RULE, "--write-baseline", str(written)])
    entries = json.loads(written.read_text(encoding="utf-8"))["knownFailures"]
    assert entries, "the broken implementation fails some scenario of the rule"
    change = {"release": "0.2.0", "source": "reference/toolcanon/registry.py", "quote": "re-render the value"}
    for entry in entries:
        entry |= {"kind": "predates", "reason": "a release before the re-rendering", "change": change}
    baseline.write_text(json.dumps({"formatVersion": 1, "knownFailures": entries}), encoding="utf-8")
    implementations = ["--impl", DEFAULT_IMPLEMENTATION, "--impl", BROKEN, "--baseline", str(baseline)]
    assert main(["check", "-qq", *implementations, "--impl", DEFAULT_IMPLEMENTATION, "--rule", RULE,
                 "--report", str(saved)]) == 0  # fmt: skip
    loaded: dict[str, Any] = json.loads(saved.read_text(encoding="utf-8"))
    return loaded


def _shown(scenario: dict[str, Any]) -> str:
    """The outcome a scenario is counted as."""
    baseline = scenario.get("baseline", {})
    if baseline.get("verdict") == "known-failure":
        return "predates" if baseline.get("kind") == "predates" else "known"
    return "stale" if baseline.get("verdict") == "stale" else str(scenario["status"])


def _predating(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in report["implementations"][1]["scenarios"] if _shown(s) == "predates"]


def test_each_run_is_a_bar_of_its_counts_and_says_what_changed(report: dict[str, Any]) -> None:
    predating = [s["id"] for s in _predating(report)]
    lines = trend_text(report).splitlines()
    assert lines[0] == "Trend of 3 implementations, in run order"
    runs = [line for line in lines if re.match(r"  #\d ", line)]
    assert len(runs) == 3
    for line, run in zip(runs, report["implementations"], strict=True):
        bar = re.search(r"  ([█≈«✗!↻–]+)  ", line)
        assert bar is not None and len(bar.group(1)) == 40, line
        shown = [_shown(scenario) for scenario in run["scenarios"]]
        assert line.endswith(", ".join(f"{shown.count(outcome)} {outcome}" for outcome in OUTCOMES))
        share = max(1, round(40 * shown.count("predates") / len(shown))) if "predates" in shown else 0
        assert bar.group(1).count("«") == share
    text = "\n".join(lines)
    assert f"changed from #1: {', '.join(f'{scenario} passed → predates' for scenario in predating)}" in text
    assert f"changed from #2: {', '.join(f'{scenario} predates → passed' for scenario in predating)}" in text


def test_each_rule_family_is_starred_where_it_changed(report: dict[str, Any]) -> None:
    lines = trend_text(report).splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith("By rule family"))
    assert lines[start + 1].split() == ["family", "#1", "#2", "#3"]
    families = {line.split()[0]: line.split()[1:4] for line in lines[start + 2 :]}
    touched = {rule.rsplit("-", 1)[0] for scenario in _predating(report) for rule in scenario["rules"]}
    assert "R-POST" in touched
    for family, cells in families.items():
        assert [cell.endswith("*") for cell in cells] == [False, family in touched, family in touched], family
        assert ("«" in cells[1]) is (family in touched) and "«" not in cells[0] + cells[2]
        assert cells[0] == cells[2].rstrip("*")  # the reference, before and after
    assert {family.slug for family in trend(report).families} == set(families)


def test_the_report_command_prints_the_trend(
    report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "report.json"
    saved.write_text(json.dumps(report), encoding="utf-8")
    assert main(["report", str(saved), "--format", "trend"]) == 0
    assert capsys.readouterr().out == render(report, "trend") == trend_text(report)
