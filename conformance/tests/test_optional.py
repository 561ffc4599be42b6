"""Optional paths: a difference where the contract leaves the bytes open passes, counted and listed apart from
the required results; ``must`` still holds its type; the format refuses a malformed or overlapping entry."""

from __future__ import annotations

import copy
import json
import re
import sys
import types
from collections.abc import Callable
from typing import Any

import pytest
from test_check_text import SECONDS, _shown

from toolcanon_conformance.adapters.inprocess import InProcess
from toolcanon_conformance.adapters.reference import ReferenceImplementation
from toolcanon_conformance.cli import main
from toolcanon_conformance.diff import parse_path, values_at
from toolcanon_conformance.implementation import ImplementationInfo, Outcome, Ran
from toolcanon_conformance.locations import goldens_dir
from toolcanon_conformance.optional import optional_paths
from toolcanon_conformance.report import render, report_json, validate_report
from toolcanon_conformance.runner import golden_directory, judge, run_suite
from toolcanon_conformance.scenario import ScenarioError, load_scenarios, scenario_from_data

GOLDEN = (
    '{"formatVersion":1,"scenario":"s","steps":{"c":{"result":{"isError":true,"error":{"message":"no"},'
    '"content":[{"type":"text","text":"Error: no"}]},"phases":{"pre":1}}}}'
)
MESSAGE = "$.steps.c.result.error.message"
TEXT = "$.steps.c.result.content[0].text"
DENIALS = ("pre-deny-non-string-reason", "guard-deny-non-string-reason")
SCENARIOS = {scenario.id: scenario for scenario in load_scenarios()}


def _scenario(*entries: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"formatVersion": 1, "id": "s", "rules": ["R-PRE-8"], "optional": list(entries), **extra}


def _open(path: str, must: str | None = None) -> dict[str, Any]:
    return {"path": path, "why": "the contract leaves it open"} | ({"must": must} if must else {})


def _judged(transcript: str, *entries: dict[str, Any], **extra: Any) -> Any:
    return judge(_scenario(*entries, **extra), transcript, GOLDEN.encode())


# --- judging -----------------------------------------------------------------------------------------


def test_an_optional_difference_passes_and_is_kept_apart() -> None:
    transcript = GOLDEN.replace('"message":"no"', '"message":"nope"')
    assert judge(_scenario(), transcript, GOLDEN.encode()).status == "failed"
    result = _judged(transcript, _open(MESSAGE, "string"), _open(TEXT))
    assert (result.status, result.differences) == ("passed", ())
    [found] = result.optional_differences
    assert (found.difference.where, found.difference.expected, found.difference.actual) == (MESSAGE, '"no"', '"nope"')
    assert found.optional.why == "the contract leaves it open" and "optional: the contract" in str(found)
    assert _judged(GOLDEN, _open(MESSAGE)).optional_differences == ()


def test_a_difference_under_an_optional_path_is_optional_and_one_beside_it_is_not() -> None:
    under = GOLDEN.replace('"error":{"message":"no"}', '"error":{"message":{"a":[1]}}')
    [found] = _judged(under, _open("$.steps.c.result.error")).optional_differences
    assert found.difference.kind == "type" and found.optional.where == "$.steps.c.result.error"
    beside = GOLDEN.replace('"message":"no"}', '"message":"no","info":{"name":"E","code":"C"}}')
    result = _judged(beside, _open(MESSAGE))
    assert result.status == "failed" and [d.where for d in result.differences] == ["$.steps.c.result.error.info"]


def test_a_required_difference_beside_an_optional_one_still_fails() -> None:
    both = GOLDEN.replace('"message":"no"', '"message":"nope"').replace('"pre":1', '"pre":2')
    result = _judged(both, _open(MESSAGE, "string"))
    assert result.status == "failed" and result.optional_differences == ()
    assert [d.where for d in result.differences] == ["$.steps.c.phases.pre"]


@pytest.mark.parametrize("key", ["optional", "ignore"])
def test_a_form_only_difference_beside_an_open_one_still_fails(key: str) -> None:
    spaced = GOLDEN.replace('"message":"no"', '"message":"nope"').replace('"pre":1', '"pre": 1')
    entries = {"optional": [_open(MESSAGE)], "ignore": [MESSAGE]}[key]
    result = judge({"formatVersion": 1, "id": "s", key: entries}, spaced, GOLDEN.encode())
    assert result.status == "failed"
    [difference] = result.differences
    assert (difference.kind, difference.where) == ("format", "$.steps.c.phases.pre")
    assert difference.detail.endswith("(the ignored values left out)")
    escaped = GOLDEN.replace('"message":"no"', '"message":"nope"').replace('"Error: no"', '"Error: n\\u006f"')
    assert judge({"formatVersion": 1, "id": "s", key: entries}, escaped, GOLDEN.encode()).status == "failed"


@pytest.mark.parametrize(
    ("message", "kind", "detail"),
    [
        ("5", "type", "must be a string, not a number"),
        ('{"a":1}', "type", "must be a string, not an object"),
        ("null", "type", "must be a string, not null"),
        ('["no"]', "type", "must be a string, not an array"),
    ],
)
def test_must_fails_a_value_of_another_type(message: str, kind: str, detail: str) -> None:
    transcript = GOLDEN.replace('"message":"no"', f'"message":{message}')
    result = _judged(transcript, _open(MESSAGE, "string"))
    assert result.status == "failed" and result.optional_differences == ()
    [difference] = result.differences
    assert (difference.where, difference.kind, difference.expected, difference.actual) == (
        MESSAGE,
        kind,
        '"no"',
        message,
    )
    assert difference.detail.startswith(detail)
    assert _judged(transcript, _open(MESSAGE)).status == "passed"  # without must, any value is open


def test_must_fails_a_missing_value_and_holds_on_equal_bytes() -> None:
    missing = GOLDEN.replace('"error":{"message":"no"}', '"error":{}')
    [difference] = _judged(missing, _open(MESSAGE, "string")).differences
    assert (difference.kind, difference.expected, difference.actual) == ("missing", '"no"', None)
    assert _judged(missing, _open(MESSAGE)).status == "passed"
    numbered = GOLDEN.replace('"message":"no"', '"message":5')
    held = judge(_scenario(_open(MESSAGE, "string")), numbered, numbered.encode())
    assert held.status == "failed" and held.differences[0].kind == "type"
    assert judge(_scenario(_open(MESSAGE, "number")), numbered, numbered.encode()).status == "passed"


@pytest.mark.parametrize(
    ("message", "status"),
    [('"no"', "passed"), ('"no, not here"', "passed"), ('"n"', "failed"), ('"yes"', "failed"), ("5", "failed")],
)
def test_a_prefix_leaves_only_the_rest_of_a_string_open(message: str, status: str) -> None:
    transcript = GOLDEN.replace('"message":"no"', f'"message":{message}')
    result = _judged(transcript, {"path": MESSAGE, "why": "the rest is the host's", "prefix": "no"})
    assert result.status == status, result.differences
    if status == "failed":
        [difference] = result.differences
        assert difference.where == MESSAGE
        detail = difference.detail or ""
        assert ('must begin with "no"' in detail) if message != "5" else ("must be a string" in detail)


def test_a_prefix_holds_on_equal_bytes() -> None:
    golden = GOLDEN.replace('"message":"no"', '"message":"other"')
    result = judge(_scenario({"path": MESSAGE, "why": "open", "prefix": "no"}), golden, golden.encode())
    assert result.status == "failed" and 'must begin with "no"' in (result.differences[0].detail or "")


def test_values_at_reads_a_type_and_its_text() -> None:
    found = values_at(GOLDEN.encode(), [parse_path(MESSAGE), parse_path(TEXT), parse_path("$.steps.c.x"), ()])
    assert found[:3] == [("string", '"no"'), ("string", '"Error: no"'), None]
    assert found[3] is not None and found[3][0] == "object"


# --- the format ----------------------------------------------------------------------------------------


def _valid() -> dict[str, Any]:
    return copy.deepcopy(SCENARIOS["guard-deny-non-string-reason"].data)


@pytest.mark.parametrize(
    ("entries", "words"),
    [
        ([], "should be non-empty"),
        ([{"path": MESSAGE}], "'why' is a required property"),
        ([{"why": "open"}], "'path' is a required property"),
        ([{"path": MESSAGE, "why": "open", "must": "text"}], "'text' is not one of"),
        ([{"path": MESSAGE, "why": "open", "type": "string"}], "Additional properties"),
        ([{"path": MESSAGE, "why": ""}], "should be non-empty"),
        ([MESSAGE], "is not of type 'object'"),
        ([{"path": MESSAGE, "why": "open", "prefix": "x", "must": "number"}], "should not be valid"),
        ([{"path": MESSAGE, "why": "open", "prefix": ""}], "should be non-empty"),
    ],
)
def test_the_schema_refuses_a_malformed_optional_entry(entries: list[Any], words: str) -> None:
    data = _valid() | {"optional": entries}
    with pytest.raises(ScenarioError, match=re.escape(words)) as refused:
        scenario_from_data(data)
    assert refused.value.json_path.startswith("$.optional")


@pytest.mark.parametrize(
    ("optional", "ignore", "where", "words"),
    [
        ([MESSAGE], [MESSAGE], "$.optional[0].path", f"overlaps the ignore path {MESSAGE!r}"),
        ([MESSAGE], ["$.steps.c.result"], "$.optional[0].path", "overlaps the ignore path '$.steps.c.result'"),
        (["$.steps.c"], [MESSAGE], "$.optional[0].path", f"overlaps the ignore path {MESSAGE!r}"),
        ([MESSAGE, "$.steps.c.result.error"], [], "$.optional[1].path", "overlaps the optional path"),
        ([MESSAGE, MESSAGE], [], "$.optional[1].path", "overlaps the optional path"),
        (["$"], [], "$.optional[0].path", "the whole transcript cannot be optional"),
        (["$.steps..c"], [], "$.optional[0].path", "not a JSON path"),
        ([MESSAGE], ["$.steps[x]"], "$.ignore[0]", "not a JSON path"),
    ],
)
def test_an_optional_path_that_overlaps_or_does_not_parse_is_a_scenario_error(
    optional: list[str], ignore: list[str], where: str, words: str
) -> None:
    data = _valid() | {"optional": [_open(path) for path in optional]} | ({"ignore": ignore} if ignore else {})
    with pytest.raises(ScenarioError, match=re.escape(words)) as refused:
        scenario_from_data(data)
    assert refused.value.json_path == where
    beside = _valid() | {"optional": [_open(MESSAGE)], "ignore": ["$.steps.c.result.content[0].text"]}
    assert scenario_from_data(beside).data["optional"] == [_open(MESSAGE)]


# --- the bundled scenarios ------------------------------------------------------------------------------


@pytest.mark.parametrize("scenario_id", [sid for sid, s in SCENARIOS.items() if "optional" in s.data])
def test_every_optional_path_is_in_the_golden_with_its_type(scenario_id: str) -> None:
    golden = (goldens_dir() / f"{scenario_id}.json").read_bytes()
    entries = optional_paths(SCENARIOS[scenario_id].data)
    for entry, found in zip(entries, values_at(golden, [entry.path for entry in entries]), strict=True):
        assert found is not None, f"{entry.where} is not in the golden"
        assert entry.must is None or found[0] == entry.must, f"the golden's {entry.where} is {found[0]}"


@pytest.mark.parametrize("scenario_id", DENIALS)
def test_each_non_string_denial_reason_leaves_its_message_and_text_open(scenario_id: str) -> None:
    data = SCENARIOS[scenario_id].data
    reasons = {step: hook["action"]["reason"] for hook in data["hooks"] for step in hook["steps"]}
    expected = {}
    for step, reason in reasons.items():
        if isinstance(reason, str) or (isinstance(reason, dict) and "$exotic" in reason):
            continue
        expected[("steps", step, "result", "error", "message")] = None
        expected[("steps", step, "result", "content", 0, "text")] = "string"
    assert {entry.path: entry.must for entry in optional_paths(data)} == expected


def _rewritten(rewrite: Callable[[dict[str, Any]], None]) -> ReferenceImplementation:
    """The reference, each failure of its transcripts rewritten by ``rewrite`` (its ``result``)."""

    class Rewritten(ReferenceImplementation):
        def start(self) -> ImplementationInfo:
            info = super().start()
            return ImplementationInfo("text-reasons", info.language, "1.0.0", info.capabilities)

        def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
            outcome = super().run(seq, scenario)
            if not isinstance(outcome, Ran):
                return outcome
            transcript = json.loads(outcome.transcript)
            for step in transcript["steps"].values():
                if "error" in step.get("result", {}):
                    rewrite(step["result"])
            return Ran(json.dumps(transcript, separators=(",", ":"), ensure_ascii=False))

    return Rewritten()


def _text_reasons(result: dict[str, Any]) -> None:
    """A message that is not a string answered as the text its content carries."""
    if not isinstance(result["error"]["message"], str):
        result["error"]["message"] = result["content"][0]["text"].removeprefix("Error: ")


def _numbered_texts(result: dict[str, Any]) -> None:
    """A content text carrying a numeric reason answered as that number."""
    if isinstance(result["error"]["message"], int | float) and not isinstance(result["error"]["message"], bool):
        result["content"][0]["text"] = result["error"]["message"]


def _run(implementation: ReferenceImplementation) -> Any:
    chosen = [SCENARIOS[scenario_id].data for scenario_id in DENIALS]
    return run_suite(InProcess(implementation), chosen, golden_directory(goldens_dir()))


def test_messages_as_text_pass_the_denial_scenarios_with_optional_differences() -> None:
    suite = _run(_rewritten(_text_reasons))
    assert [result.status for result in suite.results] == ["passed", "passed"], [r.explain() for r in suite.results]
    counts = {result.scenario: len(result.optional_differences) for result in suite.results}
    assert counts == {"pre-deny-non-string-reason": 9, "guard-deny-non-string-reason": 4}
    found = suite.results[0].optional_differences[0]
    assert (found.difference.where, found.difference.expected, found.difference.actual) == (
        "$.steps.number.result.error.message",
        "5",
        '"5"',
    )


def test_a_content_text_that_is_not_a_string_fails_the_denial_scenarios() -> None:
    suite = _run(_rewritten(_numbered_texts))
    assert [result.status for result in suite.results] == ["failed", "failed"] and not suite.ok
    first = suite.results[0].differences[0]
    assert (first.where, first.kind, first.expected, first.actual) == (
        "$.steps.number.result.content[0].text",
        "type",
        '"Error: 5"',
        "5",
    )


# --- the reports --------------------------------------------------------------------------------------


def test_the_reports_count_and_list_the_optional_differences_apart() -> None:
    suite = _run(_rewritten(_text_reasons))
    report = report_json(suite)
    validate_report(report)
    validate_report(json.loads(render(report, "json")))
    [run] = report["implementations"]
    assert run["verdict"] == "pass" and run["summary"]["passed"] == 2 and run["summary"]["optional"] == 2
    entry = next(scenario for scenario in run["scenarios"] if scenario["id"] == DENIALS[1])
    assert entry["optionalDifferenceCount"] == 4 and "differences" not in entry
    assert entry["optionalDifferences"][0] == {
        "path": "$.steps.number.result.error.message",
        "kind": "type",
        "expected": "5",
        "actual": '"5"',
        "detail": "number ≠ string",
        "optionalPath": "$.steps.number.result.error.message",
        "why": SCENARIOS[DENIALS[1]].data["optional"][0]["why"],
    }
    markdown = render(report, "md")
    assert "## Optional differences (2)" in markdown and "Nothing fails the run." in markdown
    assert (
        '  - at `$.steps.number.result.error.message` (type, number ≠ string): expected `5`, actual `"5"`' in markdown
    )
    page = render(report, "html")
    assert '<section id="optional">\n<h2>Optional differences (2)</h2>' in page
    assert '<a href="#optional">2 scenarios with optional differences</a>' in page
    assert page.count('class="scenario passed-box" id="o') == 2
    plain = report_json(_run(ReferenceImplementation()))
    assert plain["implementations"][0]["summary"]["optional"] == 0
    assert "Optional differences" not in render(plain, "md") + render(plain, "html")


@pytest.fixture
def text_reasons(monkeypatch: pytest.MonkeyPatch) -> None:
    """``text_reasons:implementation``, the adapter docs/kit.md shows passing with optional differences."""
    module = types.ModuleType("text_reasons")
    module.implementation = _rewritten(_text_reasons)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "text_reasons", module)


def _check(capsys: pytest.CaptureFixture[str], arguments: str) -> tuple[int, list[str]]:
    capsys.readouterr()
    status = main(["check", *arguments.split()])
    return status, SECONDS.sub(" in 0.00 s", capsys.readouterr().out).rstrip("\n").split("\n")


@pytest.mark.usefixtures("text_reasons")
def test_the_terminal_folds_the_optional_differences_to_a_line_and_shows_them_whole(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, folded = _check(capsys, "--impl text_reasons:implementation -k non-string-reason")
    assert status == 0
    assert folded[2] == (
        "optional: 2 scenarios differ only where the contract leaves the bytes open; --show optional lists them"
    )
    assert folded[-1].startswith("PASS: 2 passed, 0 failed") and "Optional differences" not in "\n".join(folded)
    _, quiet = _check(capsys, "--impl text_reasons:implementation -k non-string-reason -q")
    assert len(quiet) == 1 and quiet[0].startswith("PASS: 2 passed")
    _, everything = _check(capsys, "--impl text_reasons:implementation -k non-string-reason --show all")
    assert not any(line.startswith("optional: ") for line in everything)
    shown = everything.index("Optional differences, where the contract leaves the bytes open (2 scenarios):")
    assert everything[shown + 1] == "  guard-deny-non-string-reason [R-GUARD-2, R-PRE-8]: 4 optional differences"
    status, lines = _check(capsys, "--impl text_reasons:implementation -k guard-deny-non-string --show optional")
    assert status == 0
    assert lines == _shown(
        "toolcanon check --impl text_reasons:implementation -k guard-deny-non-string --show optional"
    )


def test_a_scenario_without_optional_paths_is_judged_as_before() -> None:
    assert judge({"formatVersion": 1, "id": "s"}, GOLDEN, GOLDEN.encode()).optional_differences == ()
    other = GOLDEN.replace('"pre":1', '"pre":2')
    assert judge({"formatVersion": 1, "id": "s"}, other, GOLDEN.encode()).status == "failed"
