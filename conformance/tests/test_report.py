"""Reports: the JSON form follows its schema; Markdown and HTML put what fails first, then the rules by contract
section, several implementations side by side; verdicts; lone surrogates and long strings in every output.
The HTML pages of real checks, opened in a browser, are ``test_report_html.py``'s."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html import unescape
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from fake_suite import scenario as fake_scenario
from test_runner import GOLDEN, Scripted, goldens, scenario

from toolcanon_conformance.adapters.inprocess import InProcess
from toolcanon_conformance.baseline import Baseline
from toolcanon_conformance.implementation import Errored, ImplementationInfo, Outcome, Ran, Skipped
from toolcanon_conformance.report import (
    Policy,
    ReportError,
    Run,
    golden_sources_line,
    read_report,
    render,
    report_json,
    report_markdown,
    run_json,
    validate_report,
    verdict_line,
)
from toolcanon_conformance.runner import SuiteResult, run_suite

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def suite() -> SuiteResult:
    scenarios = [
        scenario("snap-ok", rules=["R-SNAP-1", "R-SNAP-2"]),
        scenario("post-<wrong>", "wrong-value", rules=["R-POST-4"], description="a <b>value</b> & more"),
        scenario("wrap-error", "error", rules=["R-WRAP-1"]),
        scenario("exotic-set", "skip", rules=["R-SNAP-2"]),
        scenario("known", "wrong-value", rules=["R-WRAP-1"]),
        scenario("needs-mcp", rules=["R-MCP-1"], requires=["mcp"]),
        scenario("no-rule", rules=[]),
    ]
    baseline = Baseline.from_json({"formatVersion": 1, "knownFailures": [{"scenario": "known"}]})
    return run_suite(InProcess(Scripted()), scenarios, goldens, baseline=baseline)


@pytest.fixture(scope="module")
def report(suite: SuiteResult) -> dict[str, Any]:
    return report_json(suite)


def test_the_json_report_follows_its_schema(report: dict[str, Any]) -> None:
    validate_report(report)
    validate_report(json.loads(render(report, "json")))
    assert report["formatVersion"] == 2 and report["ok"] is False and report["partial"] is False
    [run] = report["implementations"]
    assert run["verdict"] == "fail" and run["ok"] is False
    # a known failure counts only as known, so that the counts never contradict the verdict
    assert run["summary"] == {
        "total": 7,
        "passed": 2,
        "failed": 1,
        "errored": 1,
        "skipped": 2,
        "knownFailures": 1,
        "stale": 0,
        "baselineProblems": 0,
        "optional": 0,
    }
    failed = next(s for s in run["scenarios"] if s["id"] == "post-<wrong>")
    assert failed["differences"][0] == {
        "path": "$.steps.c1.result.value",
        "kind": "value",
        "expected": "1",
        "actual": "2",
        "detail": "",
    }
    assert next(s for s in run["scenarios"] if s["id"] == "needs-mcp")["missingCapabilities"] == ["mcp"]
    rules = {tally["rule"]: tally for tally in run["rules"]}
    assert rules["R-WRAP-1"]["errored"] == 1 and rules["R-WRAP-1"]["known"] == 1
    assert rules["R-SNAP-2"]["scenarios"] == ["snap-ok", "exotic-set"]


def test_a_malformed_report_is_refused(report: dict[str, Any]) -> None:
    with pytest.raises(ReportError, match="implementations"):
        validate_report({**report, "implementations": {}})
    with pytest.raises(ReportError, match="formatVersion"):
        validate_report({**report, "formatVersion": 3})


def _format_1(report: dict[str, Any]) -> dict[str, Any]:
    """The report as format version 1 wrote it: one implementation, its fields at the top."""
    [run] = report["implementations"]
    statuses = [scenario["status"] for scenario in run["scenarios"]]
    return {
        "formatVersion": 1,
        "kit": report["kit"],
        "implementation": run["implementation"],
        "started": run["started"],
        "seconds": run["seconds"],
        "ok": run["ok"],
        "summary": {
            "total": len(statuses),
            **{status: statuses.count(status) for status in ("passed", "failed", "errored", "skipped")},
            "knownFailures": run["summary"]["knownFailures"],
            "baselineProblems": 0,
        },
        "rules": run["rules"],
        "scenarios": [_before_v2(scenario) for scenario in run["scenarios"]],
        "baselineProblems": [],
    }


def _before_v2(scenario: dict[str, Any]) -> dict[str, Any]:
    """A scenario's entry without what format version 1 did not have: its golden source and stderr."""
    return {key: value for key, value in scenario.items() if key not in ("goldenSource", "stderr")}


def test_a_format_1_report_is_still_read(report: dict[str, Any]) -> None:
    old = _format_1(report)
    validate_report(old)
    current = read_report(old)
    validate_report(current)
    assert current["formatVersion"] == 2
    [run] = current["implementations"]
    assert run["scenarios"] == old["scenarios"] and run["verdict"] == "fail"
    [original] = report["implementations"]
    without_stderr = {
        **original,
        "scenarios": [{k: v for k, v in s.items() if k != "stderr"} for s in original["scenarios"]],
    }
    assert report_markdown(current) == report_markdown({**report, "implementations": [without_stderr]})
    with pytest.raises(ReportError, match="summary"):
        read_report({**old, "summary": {}})


def test_a_format_1_pass_in_which_nothing_passed_is_judged_again(report: dict[str, Any]) -> None:
    old = _format_1(report)
    skipped = [s for s in old["scenarios"] if s["status"] == "skipped"]
    old |= {"ok": True, "scenarios": skipped}
    assert read_report(old)["implementations"][0]["verdict"] == "nothing-passed"


def test_the_markdown_report(report: dict[str, Any]) -> None:
    text = report_markdown(report)
    assert text.startswith("# Conformance report: scripted 1 (python)")
    assert "**FAIL: 2 passed, 1 failed, 1 errored, 2 skipped, 1 known of 7 scenarios" in text
    assert "| R-POST-4 | 0 | 1 | 0 | 0 | 0 |" in text
    assert "  - difference at `$.steps.c1.result.value` (value)\n    - expected: `1`\n    - actual: `2`\n" in text
    assert "- `needs-mcp` [R-MCP-1]\n  - missing capability mcp" in text
    assert "- `known` [R-WRAP-1] — baseline: known-failure" in text
    assert "- `exotic-set` [R-SNAP-2]\n  - cannot express a set\n  - issue: <https://example.org/i/2>\n" in text
    # a report written without a command line says how to run a scenario alone, not with which implementation
    assert "  - run alone: add `--id 'post-<wrong>'` to the check's options\n" in text


def test_markdown_puts_what_fails_first(report: dict[str, Any]) -> None:
    text = report_markdown(report)
    summary = text.index("1 failure, 1 error:\n\n- ✗ `post-<wrong>` [R-POST-4]: `$.steps.c1.result.value` (value)\n")
    assert text.index("- ! `wrap-error` [R-WRAP-1]: unsupported hook\n") > summary
    failures, errors = text.index("\n## Failures (1)\n"), text.index("\n## Errors (1)\n")
    table = text.index("\n## Rules, by contract section\n")
    known, skipped = text.index("\n## Known failures, excused by the baseline (1)\n"), text.index("\n## Skipped (2)\n")
    about = text.index("\n## About this run\n")
    assert summary < failures < errors < table < known < skipped < about
    # the rules stand under their contract sections, in the contract's order, rules of no section last
    sections = [line for line in text.splitlines() if line.startswith("| **")]
    assert sections == [
        "| **R-SNAP — Lossless snapshot and canonical text** | | | | | |",
        "| **R-WRAP — Around wrappers** | | | | | |",
        "| **R-POST — Post-execute decisions** | | | | | |",
        "| **R-MCP — The MCP bridge** | | | | | |",
        "| **Scenarios that name no rule** | | | | | |",
    ]
    assert "| **R-WRAP — Around wrappers** | | | | | |\n| R-WRAP-1 | 0 | 0 | 1 | 0 | 1 |\n" in text


def test_the_html_report_is_one_self_contained_page(report: dict[str, Any]) -> None:
    page = render(report, "html")
    assert page.startswith("<!DOCTYPE html>") and 'id="matrix"' in page
    for reference in ("<script", "<link", "src=", "url(", "@import", "http://", "//fonts"):
        assert reference not in page
    assert "post-&lt;wrong&gt;" in page and "a &lt;b&gt;value&lt;/b&gt; &amp; more" in page
    # one square per (scenario, rule) pair, the passed ones not links
    assert page.count('<span class="chip passed"') + page.count('<a class="chip ') == 8
    assert page.count('<a class="chip ') == 5  # the failure, the error, the known failure, the two skips
    # a skip keeps its reason and its issue as a link; an issue that is not a web address is no link
    skipped = page.split('id="skipped"', 1)[1]
    assert "cannot express a set" in skipped
    assert '<div class="issue">issue: <a href="https://example.org/i/2" rel="noreferrer">' in skipped
    [run] = report["implementations"]
    hostile = {**run, "scenarios": [{**s, "issue_url": "javascript:alert(1)"} for s in run["scenarios"]]}
    page = render({**report, "implementations": [hostile]}, "html")
    assert 'href="javascript' not in page and "<code>javascript:alert(1)</code>" in page


def test_html_puts_what_fails_first(report: dict[str, Any]) -> None:
    page = render(report, "html")
    order = ['id="verdict"', 'id="summary"', 'id="failed"', 'id="errored"', 'id="matrix"', 'id="known"']
    order += ['id="skipped"', 'id="about"']
    positions = [page.index(marker) for marker in order]
    assert positions == sorted(positions)
    summary = page.split('id="summary"', 1)[1].split("</nav>", 1)[0]
    assert "<p>1 failure, 1 error</p>" in summary
    [run] = report["implementations"]
    ids = [s["id"] for s in run["scenarios"]]
    failed, errored = ids.index("post-<wrong>"), ids.index("wrap-error")
    assert f'<a href="#s{failed}">' in summary and f'<a href="#s{errored}">' in summary
    assert summary.index(f"#s{failed}") < summary.index(f"#s{errored}")
    assert f'id="s{failed}"' in page.split('id="failed"', 1)[1].split("</section>", 1)[0]
    # the rules stand under the contract's sections
    matrix = page.split('id="matrix"', 1)[1].split("</table>", 1)[0]
    assert '<tbody id="rules-R-SNAP"><tr class="section"><th colspan="2" scope="rowgroup">R-SNAP — Lossless' in matrix
    assert matrix.index("rules-R-SNAP") < matrix.index("rules-R-WRAP") < matrix.index("rules-none")


# --- golden sources --------------------------------------------------------------------------------------

RECORDED = {"source": "typescript-dsh-tools", "reason": "JavaScript-only values"}


@pytest.fixture(scope="module")
def sourced() -> dict[str, Any]:
    scenarios = [
        scenario("a"),
        scenario("b", "skip"),
        scenario("js-1", "skip", golden=RECORDED),
        scenario("js-2", golden=RECORDED),
        scenario("c"),
    ]
    suite = run_suite(InProcess(Scripted()), scenarios, goldens)
    assert [result.golden_source for result in suite.results] == [
        "reference",
        "reference",
        "typescript-dsh-tools",
        "typescript-dsh-tools",
        "reference",
    ]
    return report_json(suite)


def test_the_json_report_counts_the_golden_sources(sourced: dict[str, Any]) -> None:
    validate_report(sourced)
    [run] = sourced["implementations"]
    assert run["goldenSources"] == {"reference": 3, "typescript-dsh-tools": 2}
    assert list(run["goldenSources"]) == ["reference", "typescript-dsh-tools"]
    assert [s["goldenSource"] for s in run["scenarios"]][1:3] == ["reference", "typescript-dsh-tools"]
    assert golden_sources_line(run) == "goldens: reference: 3, typescript-dsh-tools: 2"


def test_markdown_and_html_say_where_the_goldens_come_from(sourced: dict[str, Any]) -> None:
    text = report_markdown(sourced)
    assert "\n- goldens: reference: 3, typescript-dsh-tools: 2\n" in text
    assert "- `js-1` [R-A-1] — golden from typescript-dsh-tools\n  - cannot express a set" in text
    assert "- `b` [R-A-1]\n" in text
    page = render(sourced, "html")
    assert "<dt>goldens</dt><dd>reference: 3, typescript-dsh-tools: 2</dd>" in page
    assert "[R-A-1] — golden from typescript-dsh-tools</span>" in page
    side = report_json([Run(run_suite(InProcess(Scripted()), [scenario("js-1", golden=RECORDED)], goldens))] * 2)
    assert "| goldens | typescript-dsh-tools: 1 | typescript-dsh-tools: 1 |" in report_markdown(side)


def test_a_report_written_without_sources_counts_the_reference(sourced: dict[str, Any]) -> None:
    [run] = sourced["implementations"]
    older = {**run, "scenarios": [{k: v for k, v in s.items() if k != "goldenSource"} for s in run["scenarios"]]}
    del older["goldenSources"]
    report = {**sourced, "implementations": [older]}
    validate_report(report)
    assert golden_sources_line(read_report(report)["implementations"][0]) == "goldens: reference: 5"
    assert "- goldens: reference: 5\n" in report_markdown(report)


# --- verdicts --------------------------------------------------------------------------------------------


class Declares(Scripted):
    """The scripted implementation, declaring the given capabilities."""

    def __init__(self, *capabilities: str) -> None:
        super().__init__()
        self.capabilities = capabilities

    def start(self) -> ImplementationInfo:
        return ImplementationInfo("declares", "python", "1", self.capabilities)


def _judged(
    *scenarios: dict[str, Any],
    policy: Policy | None = None,
    capabilities: tuple[str, ...] = ("wrappers",),
    baseline: Baseline | None = None,
    selected: int | None = None,
) -> dict[str, Any]:
    suite = run_suite(InProcess(Declares(*capabilities)), list(scenarios), goldens, baseline=baseline)
    policy = policy or Policy()
    entry = run_json(Run(suite, selected=selected), policy)
    validate_report(report_json(Run(suite, selected=selected), policy=policy))
    return entry


def test_a_run_in_which_nothing_passed_is_not_a_pass() -> None:
    everything_skipped = _judged(scenario("a", "skip"), scenario("b", requires=["mcp"]))
    assert everything_skipped["verdict"] == "nothing-passed" and not everything_skipped["ok"]
    assert verdict_line(everything_skipped).startswith("NOTHING PASSED: 0 passed, 0 failed, 0 errored, 2 skipped")
    no_capability = _judged(scenario("a", requires=["mcp"]), capabilities=())
    assert verdict_line(no_capability).startswith("NOTHING PASSED (it declares no capability): 0 passed")
    baseline = Baseline.from_json({"formatVersion": 1, "knownFailures": [{"scenario": "k"}]})
    only_known = _judged(scenario("k", "wrong-value"), baseline=baseline)
    assert only_known["verdict"] == "nothing-passed"


def test_a_pass_with_known_failures_says_the_baseline_excused_them() -> None:
    baseline = Baseline.from_json({"formatVersion": 1, "knownFailures": [{"scenario": "k"}]})
    entry = _judged(scenario("a"), scenario("k", "wrong-value"), baseline=baseline)
    assert entry["verdict"] == "pass"
    assert verdict_line(entry).startswith(
        "PASS (1 known failure excused by the baseline): 1 passed, 0 failed, 0 errored, 0 skipped, 1 known of 2"
    )
    stale = Baseline.from_json({"formatVersion": 1, "knownFailures": [{"scenario": "a"}]})
    entry = _judged(scenario("a"), scenario("b"), baseline=stale)
    assert verdict_line(entry).startswith(
        "FAIL (1 stale baseline entry): 1 passed, 0 failed, 0 errored, 0 skipped, 1 stale of 2"
    )


def test_every_report_shows_the_kind_a_known_failure_names() -> None:
    intent = {"source": "src/a.ts", "quote": "q"}
    baseline = Baseline.from_json(
        {
            "formatVersion": 1,
            "knownFailures": [
                {"scenario": "d", "kind": "deviation", "reason": "contradicts q", "intent": intent},
                {"scenario": "h", "kind": "host-limit", "reason": "Node 22: past 1,600 levels"},
                {"scenario": "u"},
            ],
        }
    )
    scenarios = [scenario("a"), *(scenario(name, "wrong-value", rules=["R-WRAP-1"]) for name in "dhu")]
    suite = run_suite(InProcess(Scripted()), scenarios, goldens, baseline=baseline)
    report = report_json(suite)
    validate_report(report)
    by_id = {s["id"]: s for s in report["implementations"][0]["scenarios"]}
    assert by_id["d"]["baseline"] == {"verdict": "known-failure", "note": "contradicts q", "kind": "deviation"}
    assert by_id["h"]["baseline"]["kind"] == "host-limit" and "kind" not in by_id["u"]["baseline"]
    markdown = report_markdown(report)
    assert "- `d` [R-WRAP-1] — baseline: known-failure, deviation (contradicts q)" in markdown
    assert "- `h` [R-WRAP-1] — baseline: known-failure, host-limit (Node 22: past 1,600 levels)" in markdown
    assert "- `u` [R-WRAP-1] — baseline: known-failure\n" in markdown
    page = render(report, "html")
    assert "<div>baseline: known-failure, deviation contradicts q</div>" in page
    assert "<div>baseline: known-failure, host-limit Node 22: past 1,600 levels</div>" in page


def test_required_capabilities_and_fail_on_skip() -> None:
    required = _judged(scenario("a"), policy=Policy(require=("mcp", "wrappers", "spill")))
    assert required["verdict"] == "fail"
    assert verdict_line(required).startswith("FAIL (does not declare the required capabilities mcp, spill): 1 passed")
    assert _judged(scenario("a"), policy=Policy(require=("wrappers",)))["verdict"] == "pass"
    skipping = _judged(scenario("a"), scenario("b", "skip"), policy=Policy(fail_on_skip=True))
    assert verdict_line(skipping).startswith("FAIL (1 skipped, with --fail-on-skip): 1 passed")
    assert _judged(scenario("a"), policy=Policy(fail_on_skip=True))["verdict"] == "pass"


def test_an_interrupted_run_is_marked_partial() -> None:
    entry = _judged(scenario("a"), selected=5)
    assert entry["verdict"] == "interrupted" and entry["selected"] == 5
    assert verdict_line(entry).startswith("INTERRUPTED (after 1 of 5 scenarios): 1 passed")
    suite = run_suite(InProcess(Scripted()), [scenario("a")], goldens)
    report = report_json([Run(suite, ("--impl", "x:y"))], not_run=[("--impl-cmd", "node a.mjs")])
    validate_report(report)
    assert report["partial"] is True and report["ok"] is False
    assert report["notRun"] == [{"option": "--impl-cmd", "value": "node a.mjs"}]
    assert "not run: `--impl-cmd node a.mjs`" in report_markdown(report)


# --- several implementations, side by side ---------------------------------------------------------------


@pytest.fixture(scope="module")
def side_by_side(suite: SuiteResult) -> dict[str, Any]:
    scenarios = [
        scenario("snap-ok", "wrong-value", rules=["R-SNAP-1", "R-SNAP-2"]),
        scenario("post-<wrong>", rules=["R-POST-4"]),
        scenario("wrap-error", rules=["R-WRAP-1"]),
        scenario("exotic-set", rules=["R-SNAP-2"]),
        scenario("known", rules=["R-WRAP-1"]),
        scenario("needs-mcp", rules=["R-MCP-1"], requires=["mcp"]),
        scenario("no-rule", "skip", rules=[]),
    ]
    other = run_suite(InProcess(Declares("wrappers", "mcp")), scenarios, goldens)
    runs = [
        Run(suite, ("--impl", "scripted:implementation"), "known.json"),
        Run(other, ("--impl-cmd", "node other.mjs")),
    ]
    return report_json(runs)


def test_the_json_report_lists_every_implementation(side_by_side: dict[str, Any]) -> None:
    validate_report(side_by_side)
    first, second = side_by_side["implementations"]
    assert first["selectedBy"] == {"option": "--impl", "value": "scripted:implementation"}
    assert first["baselineFile"] == "known.json" and "baselineFile" not in second
    assert [s["id"] for s in first["scenarios"]] == [s["id"] for s in second["scenarios"]]
    assert second["implementation"]["name"] == "declares" and second["verdict"] == "fail"
    assert side_by_side["ok"] is False


def test_markdown_puts_implementations_side_by_side(side_by_side: dict[str, Any]) -> None:
    text = report_markdown(side_by_side)
    assert text.startswith("# Conformance report: scripted 1 (python), declares 1 (python)\n")
    assert "- **#1 scripted 1**: **FAIL: 2 passed, 1 failed, 1 errored, 2 skipped, 1 known of 7 scenarios" in text
    assert "| | #1 scripted 1 | #2 declares 1 |" in text
    assert "| baseline | `known.json` | none |" in text
    assert "| R-POST-4 | ✗ 1 failed | ✓ 1 |" in text
    assert "| R-MCP-1 | 1 skipped | ✓ 1 |" in text
    assert "| Scenario | Rules | #1 scripted 1 | #2 declares 1 |" in text
    assert "| `snap-ok` | R-SNAP-1, R-SNAP-2 | ✓ | ✗ `$.steps.c1.result.value` (value): `1` → `2` |" in text
    assert "| `post-<wrong>` | R-POST-4 | ✗ `$.steps.c1.result.value` (value): `1` → `2` | ✓ |" in text
    assert "| `wrap-error` | R-WRAP-1 | ! errored: unsupported hook | ✓ |" in text
    assert "| `known` | R-WRAP-1 | ≈ `$.steps.c1.result.value` (value): `1` → `2` | ✓ |" in text
    assert "| `no-rule` | (no rule) | ✓ | – skipped: cannot express a set |" in text
    assert "| `needs-mcp` |" in text  # one of them passed it: listed
    summary = text.index("## Summary\n\n**#1 scripted 1**: 1 failure, 1 error:\n")
    second = text.index("**#2 declares 1**: 1 failure, 0 errors:\n\n- ✗ `snap-ok` [R-SNAP-1, R-SNAP-2]: ")
    first_failures = text.index("## #1 scripted 1: what fails the run\n\n### Failures (1)\n")
    second_failures = text.index("## #2 declares 1: what fails the run\n\n### Failures (1)\n\n- `snap-ok`")
    table = text.index("## Rules, by contract section\n")
    by_scenario = text.index("## By scenario, where the implementations do not all pass\n")
    skips = text.index("## #1 scripted 1: known failures and skips\n")
    assert summary < second < first_failures < second_failures < table < by_scenario < skips
    assert text.index("| | #1 scripted 1 | #2 declares 1 |") > skips
    assert "- run alone: `toolcanon check --impl scripted:implementation --baseline known.json --id" in text
    assert "- run alone: `toolcanon check --impl-cmd 'node other.mjs' --id snap-ok`" in text


def test_html_puts_implementations_side_by_side(side_by_side: dict[str, Any]) -> None:
    page = render(side_by_side, "html")
    assert 'id="side-by-side"' in page and page.count('id="matrix"') == 1
    for index in (0, 1):
        assert f'id="i{index}-verdict"' in page and f'id="i{index}-failing"' in page
    matrix = page.split('id="matrix"', 1)[1].split("</table>", 1)[0]
    head = matrix.split("<thead>", 1)[1].split("</thead>", 1)[0]
    assert '<th scope="col">#1 scripted 1</th><th scope="col">#2 declares 1</th>' in head
    assert page.index('id="i1-failing"') < page.index('id="matrix"') < page.index('id="i0-rest"')
    ids = [part.split('"', 1)[0] for part in page.split(' id="')[1:]]
    assert len(ids) == len(set(ids))  # every id once, so that every link lands where it should
    links = {part.split('"', 1)[0] for part in page.split('href="#')[1:]}
    assert links <= set(ids)
    assert '<a href="#i1-s0">✗ <code>$.steps.c1.result.value</code> (value)</a>' in page


# --- strings the contract allows -------------------------------------------------------------------------

LONG = "x" * 5000


class Surrogates:
    """Answers every scenario with a lone surrogate where the golden has another, after 5,000 characters."""

    def start(self) -> ImplementationInfo:
        return ImplementationInfo("surrogates", "python", "1", ("wrappers",))

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        if scenario["id"].startswith("skip"):
            return Skipped("cannot say \udfff here")
        return Ran(_surrogate_transcript(scenario["id"], "\\udbff"))

    def stop(self) -> None:
        pass


def _surrogate_transcript(scenario_id: str, escape: str) -> str:
    value = LONG + escape
    return f'{{"formatVersion":1,"scenario":"{scenario_id}","steps":{{"c1":{{"result":{{"value":"{value}"}}}}}}}}'


def surrogate_suite(root: Path) -> tuple[Path, Path]:
    """Two scenarios (``lone-\\ud800`` and a skipped one) whose goldens hold a lone surrogate after 5,000 x."""
    scenarios, goldens_dir = root / "scenarios", root / "goldens"
    scenarios.mkdir(parents=True)
    goldens_dir.mkdir(parents=True)
    for name in ("lone", "skip"):
        data = fake_scenario(name, ["R-SNAP-1"]) | {"description": "a lone \ud800 surrogate"}
        (scenarios / f"{name}.json").write_text(json.dumps(data), encoding="ascii")
        (goldens_dir / f"{name}.json").write_text(_surrogate_transcript(name, "\\ud800"), encoding="ascii")
    return scenarios, goldens_dir


@pytest.fixture(scope="module")
def surrogate_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from toolcanon_conformance.runner import golden_directory

    scenarios_dir, goldens_dir = surrogate_suite(tmp_path_factory.mktemp("surrogates"))
    from toolcanon_conformance.scenario import load_scenarios

    scenarios = [s.data for s in load_scenarios(scenarios_dir)]
    suite = run_suite(InProcess(Surrogates()), scenarios, golden_directory(goldens_dir))
    return report_json(suite)


def test_json_carries_lone_surrogates_as_escapes(surrogate_report: dict[str, Any]) -> None:
    text = render(surrogate_report, "json")
    text.encode("utf-8")  # a raw surrogate would raise here
    assert '\\\\ud800"' in text or '\\ud800\\"' in text
    again = json.loads(text)
    validate_report(again)
    first = again["implementations"][0]["scenarios"][0]
    assert first["description"] == "a lone \ud800 surrogate"
    difference = first["differences"][0]
    assert difference["expected"] == json.dumps(LONG + "\ud800", ensure_ascii=False)  # whole, not cut
    assert difference["actual"] == json.dumps(LONG + "\udbff", ensure_ascii=False)
    assert again["implementations"][0]["scenarios"][1]["message"] == "cannot say \udfff here"


@pytest.mark.parametrize("form", ["md", "html"])
def test_markdown_and_html_show_lone_surrogates_and_where_long_strings_part(
    surrogate_report: dict[str, Any], form: Any
) -> None:
    text = render(surrogate_report, form)
    text.encode("utf-8")
    assert "cannot say \\udfff here" in text
    assert form == "md" or "a lone \\ud800 surrogate" in text  # Markdown shows no description
    if form == "html":
        # the region around the difference, its first differing character marked, then the whole texts collapsed
        region = text.split('<pre class="expected">', 1)[1].split("</pre>", 1)[0]
        assert region == "…" + "x" * 80 + "<mark>\\ud800</mark>&quot;"
        assert unescape(re.sub("<[^>]+>", "", text.split('<pre class="actual">', 1)[1].split("</pre>", 1)[0])) == (
            "…" + "x" * 80 + '\\udbff"'
        )
        whole = text.split('<details class="whole"><summary>whole texts (5,003 and 5,003 characters)</summary>', 1)[1]
        assert whole.startswith('<span>expected</span><pre class="whole-expected">&quot;' + "x" * 5000 + "\\ud800")
        text = text.replace(whole, "")
    shown = unescape(re.sub("<[^>]+>", "", text))
    assert "x" * 80 + '\\ud800"' in shown and "x" * 80 + '\\udbff"' in shown
    assert "x" * 200 not in shown  # the region around the difference, not the whole string
    assert "characters 4921–5003 of 5003" in shown


def test_the_plugin_junit_report_carries_lone_surrogates(tmp_path: Path) -> None:
    scenarios_dir, goldens_dir = surrogate_suite(tmp_path / "suite")
    junit = tmp_path / "junit.xml"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "--pyargs",
        "toolcanon_conformance",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "-q",
        "--rootdir",
        str(tmp_path),
        "--impl",
        "test_report:Surrogates",
        "--scenarios-dir",
        str(scenarios_dir),
        "--goldens-dir",
        str(goldens_dir),
        f"--junitxml={junit}",
    ]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    environment.pop("PYTHONIOENCODING", None)
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, env=environment)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "UnicodeEncodeError" not in done.stdout + done.stderr
    root = ElementTree.parse(junit).getroot()
    failure = root.find(".//testcase[@name='test_scenario[lone]']/failure")
    assert failure is not None and failure.text is not None
    assert "$.steps.c1.result.value: value" in failure.text and "characters 4921–5003 of 5003" in failure.text
    assert "x" * 80 + '\\ud800"' in failure.text


# --- what the adapter wrote on standard error ------------------------------------------------------------

#: Standard error that would break each output if written as it is: a lone surrogate, a Markdown fence, markup
#: that closes the HTML block it stands in, a carriage return.
STDERR = "warning: \udc80 at ```js\n</pre></details><script>x()</script> & ``````\r\nlast line\n"


class Noisy:
    """Writes :data:`STDERR` on every scenario it does not pass: failed, errored or skipped."""

    def start(self) -> ImplementationInfo:
        return ImplementationInfo("noisy", "python", "1", ("wrappers",))

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        answer = scenario.get("answer", "golden")
        if answer == "golden":
            return Ran(GOLDEN % scenario["id"], stderr="only a passing scenario's chatter")
        if answer == "wrong-value":
            wrong = (GOLDEN % scenario["id"]).replace('"value":1', '"value":2')
            return Ran(wrong, stderr=scenario["id"] + ": " + STDERR)
        if answer == "skip":
            return Skipped("cannot express a set", stderr=scenario["id"] + ": " + STDERR)
        return Errored({"message": "unsupported hook", "stderr": scenario["id"] + ": " + STDERR})

    def stop(self) -> None:
        pass


@pytest.fixture(scope="module")
def noisy() -> dict[str, Any]:
    scenarios = [
        scenario("quiet"),
        scenario("wrong", "wrong-value"),
        scenario("broke", "error"),
        scenario("declined", "skip"),
    ]
    return report_json(run_suite(InProcess(Noisy()), scenarios, goldens))


def test_the_json_report_carries_stderr_of_every_scenario_that_did_not_pass(noisy: dict[str, Any]) -> None:
    validate_report(noisy)
    again = json.loads(render(noisy, "json"))
    validate_report(again)
    scenarios = {s["id"]: s for s in again["implementations"][0]["scenarios"]}
    assert "stderr" not in scenarios["quiet"]
    for name in ("wrong", "broke", "declined"):
        assert scenarios[name]["stderr"] == name + ": " + STDERR  # the lone surrogate and the \r come back
    assert read_report(again) == json.loads(render(noisy, "json"))


def test_markdown_shows_stderr_in_a_fence_no_line_of_it_can_close(noisy: dict[str, Any]) -> None:
    text = report_markdown(read_report(json.loads(render(noisy, "json"))))
    text.encode("utf-8")
    assert "only a passing" not in text
    for name in ("wrong", "broke", "declined"):
        block = (
            f"  - standard error:\n    ```````text\n    {name}: warning: \\udc80 at ```js\n"
            "    </pre></details><script>x()</script> & ``````\n    last line\n    ```````\n"
        )
        assert block in text, text


def test_html_shows_stderr_collapsed_and_escaped(noisy: dict[str, Any]) -> None:
    page = render(read_report(json.loads(render(noisy, "json"))), "html")
    page.encode("utf-8")
    assert "only a passing" not in page and "<script>" not in page
    for name in ("wrong", "broke", "declined"):
        shown = (
            f'<details class="stderr"><summary>standard error</summary><pre>{name}: warning: \\udc80 at ```js\n'
            "&lt;/pre&gt;&lt;/details&gt;&lt;script&gt;x()&lt;/script&gt; &amp; ``````\r\nlast line</pre></details>"
        )
        assert page.count(shown) == 1, name
    # the errored scenario's context leaves its stderr to that block
    context = page.split("<summary>context</summary><pre>", 1)[1].split("</pre>", 1)[0]
    assert "stderr" not in context and "unsupported hook" in context


def test_a_crashing_adapters_stderr_reaches_every_report(tmp_path: Path) -> None:
    from fake_suite import write_suite

    from toolcanon_conformance.adapters.subprocess import Subprocess
    from toolcanon_conformance.runner import golden_directory
    from toolcanon_conformance.scenario import load_scenarios

    scenarios_dir, goldens_dir = write_suite(tmp_path / "suite", {"ok-plain": ["R-SNAP-1"], "bad-meta": ["R-NEST-2"]})
    adapter = Subprocess(f"{sys.executable} {HERE / 'misbehaving_adapter.py'} crash-marked", timeout=30)
    scenarios = [s.data for s in load_scenarios(scenarios_dir)]
    report = report_json(run_suite(adapter, scenarios, golden_directory(goldens_dir)))
    crashed = {s["id"]: s for s in report["implementations"][0]["scenarios"]}["bad-meta"]
    assert crashed["status"] == "errored" and "segmentation fault in bad-meta" in crashed["stderr"]
    for form in ("md", "html"):
        assert "adapter: segmentation fault in bad-meta" in render(report, form)
