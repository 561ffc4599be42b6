"""The message catalogue of docs/contract.md against the goldens: every message a golden holds matches a template,
and every template is pinned by a golden or marked as not pinned yet."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from message_catalogue import (
    LISTS,
    OWN,
    ROOT,
    SIMPLE,
    Catalogue,
    Extracted,
    Findings,
    Matcher,
    Template,
    _literal_ends,
    check,
    extract,
    load_catalogue,
    parse_catalogue,
    placeholders_of,
)

from toolcanon_conformance.deepjson import loads
from toolcanon_conformance.rules import load_rules

SCENARIOS = ROOT / "fixtures" / "scenarios"
GOLDENS = ROOT / "snapshots" / "scenarios"


@cache
def golden_findings() -> tuple[Findings, int, int]:
    """What checking every golden found, how many goldens were read, and how many messages they hold."""
    catalogue = load_catalogue()
    findings = Findings()
    goldens = messages = 0
    for path in sorted(SCENARIOS.glob("*.json")):
        scenario = json.loads(path.read_text(encoding="utf-8"))
        golden = GOLDENS / f"{scenario['id']}.json"
        if not golden.exists():
            continue
        transcript = loads(golden.read_text(encoding="utf-8"))
        goldens += 1
        messages += sum(1 for _ in extract(scenario, transcript))
        check(catalogue, scenario, transcript, findings)
    return findings, goldens, messages


def _shown(item: Extracted) -> str:
    return f"{item.scenario} {item.path}: {item.message!r}"


def test_the_catalogue_documents_its_placeholders_and_rules() -> None:
    catalogue = load_catalogue()
    known = {*SIMPLE, *OWN, *LISTS}
    assert set(catalogue.placeholders) == known, "the section's placeholder table and the test's patterns differ"
    rules = {rule.id for rule in load_rules()} | {"format"}
    problems = []
    seen: set[str] = set()
    for template in catalogue.templates:
        where = f"line {template.line} {template.text!r}"
        problems += [
            f"{where}: unknown placeholder <{name}>" for name in placeholders_of(template.text) if name not in known
        ]
        problems += [f"{where}: unknown rule {rule}" for rule in template.rules if rule not in rules]
        problems += [
            f"{where}: items of <{name}>, not a list placeholder" for name in template.items_of if name not in LISTS
        ]
        if template.text in seen:
            problems.append(f"{where}: listed twice")
        seen.add(template.text)
    given = {name for template in catalogue.templates for name in template.items_of}
    problems += [f"no family gives the items of <{name}>" for name in LISTS if name not in given]
    assert not problems, "\n".join(problems)


def test_every_golden_message_matches_a_template() -> None:
    findings, goldens, messages = golden_findings()
    assert goldens > 200 and messages > 900, (goldens, messages)
    assert findings.matched + findings.own + len(findings.unmatched) == messages
    listed = "\n".join(_shown(item) for item in findings.unmatched)
    assert not findings.unmatched, f"{len(findings.unmatched)} golden message(s) match no template:\n{listed}"


def test_every_template_is_pinned_by_a_golden_or_marked_not_pinned() -> None:
    findings, _, _ = golden_findings()
    stale = [t for t in load_catalogue().templates if t.pinned and t not in findings.used]
    now_pinned = [t for t in load_catalogue().templates if not t.pinned and t in findings.used]
    problems = [f"line {t.line}: no golden holds {t.text!r}: mark it 'not pinned yet'" for t in stale]
    problems += [f"line {t.line}: a golden holds {t.text!r}: mark it 'pinned'" for t in now_pinned]
    assert not problems, "\n".join(problems)


# --- the checker itself, on hand-made transcripts ------------------------------------------------------------

NOTICE = "(Omitted 9 bytes. Full formatted result stored at: s. Use the read tool to view it.)"
IMAGE_TAIL = "raw image data remains available to programmatic callers]"
FAMILY = "### Family\n\n| template | rules | goldens | source |\n|---|---|---|---|\n"

SCENARIO: dict[str, Any] = {
    "formatVersion": 1,
    "id": "made-up",
    "description": "frobnicated",
    "spill": {"maxBytes": 10},
    "tools": {
        "t": {"parameters": {}, "output": {"render": {"kind": "json"}}, "body": {"kind": "raise", "message": "boom"}},
        "m": {"mcp": {"response": {"content": [{"type": "text", "text": "hello"}, {"type": "video"}]}}},
    },
    "hooks": [{"stage": "pre-execute", "steps": ["deny"], "action": {"kind": "deny", "reason": [1, "x"]}}],
    "steps": [{"id": "mcp", "call": {"name": "mcp__fixture__m", "arguments": {}}}],
}


def _failure(message: object, text: str | None = None) -> dict[str, Any]:
    shown = text if text is not None else f"Error: {message}"
    return {"isError": True, "error": {"message": message}, "content": [{"type": "text", "text": shown}]}


def _tool_result(text: str) -> dict[str, Any]:
    block = {"type": "tool-result", "toolCallId": "c", "content": [{"type": "text", "text": text}], "isError": True}
    return {"source": {"kind": "tool", "callId": "c"}, "content": [block], "role": "user", "id": "c:result"}


TRANSCRIPT: dict[str, Any] = {
    "formatVersion": 1,
    "scenario": "made-up",
    "registrations": {"bad": {"registerError": {"name": "Error", "message": 'tool "bad" timeoutMs is a frobnicator'}}},
    "steps": {
        "c": {
            "result": _failure('unknown tool "t"'),
            "seen": [{"at": "body", "signal": {"reason": "aborted by the caller"}}],
        },
        "boom": {"result": _failure("boom")},
        "deny": {"result": _failure([1, "x"], "Error: 1,x")},
        "cut": {"result": _failure("tool call aborted", "Error: tool ")},
        "p": {
            "result": {"isError": False, "value": 1, "content": [{"type": "text", "text": "1"}]},
            "nested": [{"received": {"error": "tool call aborted"}, "result": _failure("tool call aborted")}],
        },
        "schemas": {
            "error": {"name": "Error", "message": 'tool "x" parameters must be lossless JSON before schema projection'}
        },
        "log": {
            "events": [
                {
                    "type": "tool/result",
                    "data": {"turn": 1, "step": 1, "message": _tool_result("Error: the frobnicator jammed")},
                },
                {
                    "type": "tool/code-dispatch",
                    "data": {"isError": True, "content": [{"type": "text", "text": "Error: boom"}]},
                },
            ]
        },
        "again": {"messages": [_tool_result("Error: tool call aborted before dispatch")]},
        "mcp": {
            "result": {
                "isError": False,
                "value": {},
                "content": [{"type": "text", "text": "hello\n[unsupported MCP content type: video]"}],
            }
        },
        "long": {
            "result": {
                "isError": False,
                "value": "x",
                "content": [
                    {
                        "type": "text",
                        "text": "ab\n\n" + NOTICE,
                    }
                ],
            }
        },
    },
}


def test_the_extractor_reads_these_paths_and_no_other() -> None:
    found = [(item.path, item.message, item.expect) for item in extract(SCENARIO, TRANSCRIPT)]
    assert found == [
        ("$.registrations.bad.registerError.message", 'tool "bad" timeoutMs is a frobnicator', None),
        ("$.steps.c.result.error.message", 'unknown tool "t"', None),
        ("$.steps.c.result.content[0].text", 'unknown tool "t"', None),
        ("$.steps.c.seen[0].signal.reason", "aborted by the caller", "reason"),
        ("$.steps.boom.result.error.message", "boom", None),
        ("$.steps.boom.result.content[0].text", "boom", None),
        ("$.steps.deny.result.error.message", [1, "x"], None),
        ("$.steps.cut.result.error.message", "tool call aborted", None),  # its cut content is not the message
        ("$.steps.p.nested[0].received.error", "tool call aborted", None),
        ("$.steps.p.nested[0].result.error.message", "tool call aborted", None),
        ("$.steps.p.nested[0].result.content[0].text", "tool call aborted", None),
        ("$.steps.schemas.error.message", 'tool "x" parameters must be lossless JSON before schema projection', None),
        ("$.steps.log.events[0].data.message.content[0].content[0].text", "the frobnicator jammed", None),
        ("$.steps.log.events[1].data.content[0].text", "boom", None),
        ("$.steps.again.messages[0].content[0].content[0].text", "tool call aborted before dispatch", None),
        ("$.steps.mcp.result.content[0].text", "hello\n[unsupported MCP content type: video]", "projection"),
        ("$.steps.long.result.content[0].text", NOTICE, None),
    ]


def test_a_made_up_message_is_reported_with_its_scenario_and_path() -> None:
    findings = check(load_catalogue(), SCENARIO, TRANSCRIPT)
    assert [_shown(item) for item in findings.unmatched] == [
        "made-up $.registrations.bad.registerError.message: 'tool \"bad\" timeoutMs is a frobnicator'",
        "made-up $.steps.log.events[0].data.message.content[0].content[0].text: 'the frobnicator jammed'",
    ]
    assert findings.own == 4  # boom (message, content, dispatch log) and the denial reason [1, "x"]
    assert findings.matched == 11


def test_the_scenarios_own_text_is_told_apart_from_the_contracts() -> None:
    catalogue = load_catalogue()
    steps = {
        "own": {"result": _failure("boom")},
        "described": {"result": _failure("frobnicated")},  # the description describes; it never runs
        "value": {"result": _failure({"not": "held"}, "Error: [object Object]")},
    }
    findings = check(catalogue, SCENARIO, {"scenario": "made-up", "steps": steps})
    assert findings.own == 2
    assert [item.path for item in findings.unmatched] == [
        "$.steps.described.result.error.message",
        "$.steps.described.result.content[0].text",
        "$.steps.value.result.error.message",
    ]


def _used(catalogue: Catalogue, message: str, expect: str | None = None) -> set[str] | None:
    used = Matcher(catalogue, ["hello", "image"]).match(message, expect)
    return None if used is None else {template.text for template in used}


def test_composed_messages_name_every_template_they_are_made_of() -> None:
    catalogue = load_catalogue()
    assert _used(
        catalogue, "unsupported JSON schema: schema.items must be a schema object; schema.title must be a string"
    ) == {
        "unsupported JSON schema: <schema-violations>",
        "<p> must be a schema object",
        "<p>.title must be a string",
    }
    assert _used(catalogue, 'invalid arguments: "a" must be one of [1,2]; missing required property "b"') == {
        "invalid arguments: <violations>",
        '"<p>" must be one of <json>',
        'missing required property "<p>"',
    }
    assert _used(catalogue, "hello\n[image content]") == {"<feedback>", "[<own> content]"}
    assert _used(
        catalogue,
        "[image unavailable: unknown media type; no attachment store is mounted; " + IMAGE_TAIL,
        "projection",
    ) == {
        "[image unavailable: <mime>; <image-reason>; " + IMAGE_TAIL,
        "no attachment store is mounted",
    }
    assert _used(catalogue, "code run failed (abort): aborted by the caller") == {
        "code run failed (abort): <reason>",
        "aborted by the caller",
    }
    # one item that is no violation fails the whole message; text that only looks like JSON is not <json>
    assert _used(catalogue, 'invalid arguments: "a" must be a string; the frobnicator jammed') is None
    assert _used(catalogue, 'invalid arguments: the frobnicator jammed; "a" must be a string') is None
    assert _used(catalogue, "[not json at all]", "projection") is None
    assert _used(catalogue, "code run failed (abort): the frobnicator jammed") is None


def test_a_template_s_literal_ends_are_the_text_around_its_placeholders() -> None:
    # what the matcher's quick refusal rests on: every text a template makes begins and ends with them
    assert _literal_ends("code run failed (<kind>): <reason>") == ("code run failed (", "")
    assert _literal_ends("<p> must be a schema object") == ("", " must be a schema object")
    assert _literal_ends("aborted by the caller") == ("aborted by the caller", "aborted by the caller")
    assert _literal_ends("a\\nb <p> c <q>\\n") == ("a\nb ", "\n")
    matcher = Matcher(load_catalogue(), [])
    template = next(t for t in load_catalogue().templates if t.text == "code run failed (abort): <reason>")
    assert matcher.explain(template, "code run failed (abort): aborted by the caller") is not None
    assert matcher.explain(template, "code run failed (abort) aborted by the caller") is None


def _catalogue(rows: str) -> str:
    return f"## Message catalogue\n\n| placeholder | stands for |\n|---|---|\n| `<text>` | any text |\n\n{rows}\n"


def test_a_row_that_does_not_parse_is_refused() -> None:
    good = _catalogue(FAMILY + "| `a <text>` | R-REG-1 | pinned | x |")
    parsed = parse_catalogue(good)
    assert parsed.placeholders == {"text": "any text"}
    assert parsed.templates == (Template("a <text>", "Family", ("R-REG-1",), True, (), 11),)
    for row in ("| `a` | R-REG-1 | maybe | x |", "| `a` | R-REG-1 | pinned |", "| a | R-REG-1 | pinned | x |"):
        with pytest.raises(ValueError, match="line 11"):
            parse_catalogue(
                _catalogue(f"### Family\n\n| template | rules | goldens | source |\n|---|---|---|---|\n{row}")
            )
    with pytest.raises(ValueError, match="no section"):
        parse_catalogue("# nothing here\n")
