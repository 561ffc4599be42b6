"""Reports: the JSON form follows its schema; Markdown and HTML show the rules, the matrix and the first diffs,
several implementations side by side; verdicts; lone surrogates and long strings in every output."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from fake_suite import scenario as fake_scenario
from test_runner import GOLDEN, Scripted, goldens, scenario

from toolcontract_conformance.adapters.inprocess import InProcess
from toolcontract_conformance.baseline import Baseline
from toolcontract_conformance.implementation import Errored, ImplementationInfo, Outcome, Ran, Skipped
from toolcontract_conformance.report import (
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
from toolcontract_conformance.runner import SuiteResult, run_suite

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
    assert "first difference at `$.steps.c1.result.value` (value)" in text
    assert "- `needs-mcp` [R-MCP-1]\n  - missing capability mcp" in text
    assert "- `known` [R-WRAP-1] — baseline: known-failure" in text


def test_the_html_report_is_one_self_contained_page(report: dict[str, Any]) -> None:
    page = render(report, "html")
    assert page.startswith("<!DOCTYPE html>") and 'id="matrix"' in page
    for reference in ("<script", "<link", "src=", "url(", "@import", "http://", "//fonts"):
        assert reference not in page
    assert "post-&lt;wrong&gt;" in page and "a &lt;b&gt;value&lt;/b&gt; &amp; more" in page
    assert page.count('class="cell ') == 8  # one cell per (scenario, rule) pair


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
    assert verdict_line(entry).startswith("FAIL: 1 passed, 0 failed, 0 errored, 0 skipped, 1 stale of 2")


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
    assert "## #1 scripted 1: what did not pass\n\n### Failures\n" in text
    assert "## #2 declares 1: what did not pass\n\n### Failures\n\n- `snap-ok`" in text


def test_html_puts_implementations_side_by_side(side_by_side: dict[str, Any]) -> None:
    page = render(side_by_side, "html")
    assert 'id="side-by-side"' in page and 'id="rules-side-by-side"' in page
    for index in (0, 1):
        assert f'id="i{index}-matrix"' in page and f'id="i{index}-verdict"' in page
    assert 'id="matrix"' not in page
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
    from toolcontract_conformance.runner import golden_directory

    scenarios_dir, goldens_dir = surrogate_suite(tmp_path_factory.mktemp("surrogates"))
    from toolcontract_conformance.scenario import load_scenarios

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
    shown = unescape(text) if form == "html" else text
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
        "toolcontract_conformance",
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

    from toolcontract_conformance.adapters.subprocess import Subprocess
    from toolcontract_conformance.runner import golden_directory
    from toolcontract_conformance.scenario import load_scenarios

    scenarios_dir, goldens_dir = write_suite(tmp_path / "suite", {"ok-plain": ["R-SNAP-1"], "bad-meta": ["R-NEST-2"]})
    adapter = Subprocess(f"{sys.executable} {HERE / 'misbehaving_adapter.py'} crash-marked", timeout=30)
    scenarios = [s.data for s in load_scenarios(scenarios_dir)]
    report = report_json(run_suite(adapter, scenarios, golden_directory(goldens_dir)))
    crashed = {s["id"]: s for s in report["implementations"][0]["scenarios"]}["bad-meta"]
    assert crashed["status"] == "errored" and "segmentation fault in bad-meta" in crashed["stderr"]
    for form in ("md", "html"):
        assert "adapter: segmentation fault in bad-meta" in render(report, form)


# --- HTML in a browser -----------------------------------------------------------------------------------

PROBE = """<script>
const matrix = document.getElementById("matrix");
const box = matrix.getBoundingClientRect();
const cells = [...matrix.querySelectorAll("td.cell")];
const colour = (selector) => getComputedStyle(matrix.querySelector(selector)).backgroundColor;
document.body.setAttribute("data-probe", JSON.stringify({
  width: box.width, height: box.height, rows: matrix.tBodies[0].rows.length,
  cells: cells.length, visible: cells.filter((c) => c.getBoundingClientRect().width > 0).length,
  rules: [...matrix.querySelectorAll("th.rule")].map((th) => th.textContent),
  failed: colour("td.cell.failed"), passed: colour("td.cell.passed"),
  firstDiff: document.querySelector("#failed .diff pre.actual").textContent,
}));
</script>"""

SIDE_BY_SIDE_PROBE = """<script>
const side = document.getElementById("side-by-side");
const rows = [...side.tBodies[0].rows];
const cells = [...side.querySelectorAll("td.cell")];
const box = side.getBoundingClientRect();
const target = document.querySelector(rows[0].cells[3].querySelector("a").getAttribute("href"));
document.body.setAttribute("data-probe", JSON.stringify({
  width: box.width, height: box.height,
  columns: [...side.tHead.rows[0].cells].map((th) => th.textContent),
  rows: rows.length, cells: cells.length,
  visible: cells.filter((c) => c.getBoundingClientRect().width > 0 && c.getBoundingClientRect().height > 0).length,
  snap: [...rows[0].cells].map((td) => td.textContent),
  colours: [...rows[0].cells].slice(2).map((td) => getComputedStyle(td).backgroundColor),
  linked: target === null ? null : target.closest("section").id + " " + target.querySelector("pre.actual").textContent,
  ruleRows: document.getElementById("rules-side-by-side").tBodies[0].rows.length,
  matrices: [...document.querySelectorAll("table.matrix")].map((table) => table.id),
  verdicts: [...document.querySelectorAll("#verdicts .verdict")].map((v) => getComputedStyle(v).backgroundColor),
}));
</script>"""


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(
        "headless Chromium is needed to check the HTML report, and no chromium browser is installed "
        "(apt-get install chromium)",
        pytrace=False,
    )


def _probe(page_text: str, probe: str, tmp_path: Path) -> dict[str, Any]:
    """Open the page in headless Chromium with ``probe`` appended and return what it recorded."""
    browser = _chromium()
    page = tmp_path / "report.html"
    page.write_text(page_text.replace("</body>", probe + "</body>"), encoding="utf-8")
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    shown = subprocess.run(
        [browser, *flags, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert 'data-probe="' in shown.stdout, shown.stderr[-2000:]
    found: dict[str, Any] = json.loads(unescape(shown.stdout.split('data-probe="', 1)[1].split('"', 1)[0]))
    return found


def test_chromium_renders_the_matrix(report: dict[str, Any], tmp_path: Path) -> None:
    probe = _probe(render(report, "html"), PROBE, tmp_path)
    assert probe["rows"] == 7 and probe["cells"] == 8 and probe["visible"] == 8
    assert probe["width"] > 100 and probe["height"] > 100
    assert sorted(probe["rules"]) == ["(no rule)", "R-MCP-1", "R-POST-4", "R-SNAP-1", "R-SNAP-2", "R-WRAP-1"]
    assert probe["rules"][-1] == "(no rule)"
    assert probe["failed"] == "rgb(198, 40, 40)" and probe["passed"] == "rgb(46, 125, 50)"
    assert probe["firstDiff"] == "2"


def test_chromium_renders_two_implementations_side_by_side(side_by_side: dict[str, Any], tmp_path: Path) -> None:
    probe = _probe(render(side_by_side, "html"), SIDE_BY_SIDE_PROBE, tmp_path)
    assert probe["columns"] == ["scenario", "rules", "#1 scripted 1", "#2 declares 1"]
    assert probe["rows"] == 7 and probe["cells"] == 14 and probe["visible"] == 14
    assert probe["width"] > 300 and probe["height"] > 100
    assert probe["snap"] == ["snap-ok", "R-SNAP-1, R-SNAP-2", "✓", "✗ $.steps.c1.result.value (value)"]
    assert probe["colours"] == ["rgb(46, 125, 50)", "rgb(198, 40, 40)"]
    assert probe["linked"] == "i1-failed 2"  # the cell links to the first difference of that implementation
    assert probe["ruleRows"] == 6
    assert probe["matrices"] == ["i0-matrix", "i1-matrix"]
    assert probe["verdicts"] == ["rgb(198, 40, 40)", "rgb(198, 40, 40)"]
