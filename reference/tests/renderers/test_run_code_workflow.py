"""``run_code``'s depth-capped JSON and ``workflow`` / ``ralph`` (renderers.md §12, §20)."""

from __future__ import annotations

from typing import Any

import pytest

from toolcanon.errors import ToolOutputError
from toolcanon.jsonvalue import canonical_json
from toolcanon.renderers import render_native
from toolcanon.renderers.run_code import pretty_json


@pytest.mark.parametrize(
    "value",
    [None, 0, "s", [], {}, [1, [2, {"a": [3]}]], {"a": {"b": {"c": {"d": {"e": 1}}}}}, [[[[[1]]]]]],
)
def test_pretty_equals_indent_2_up_to_five_levels(value: Any) -> None:
    """§12.3: identical to ``JSON.stringify(v, null, 2)`` for values with at most 5 container levels."""
    assert pretty_json(value) == canonical_json(value, indent=2)


def test_pretty_is_iterative_on_deep_values() -> None:
    """§12 [T]: 5000-deep nesting renders without recursion, under 11,000 characters."""
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    text = render_native("run_code", {"logs": [], "result": deep})[0]["text"]
    assert text.startswith("[\n  [\n    [") and len(text) < 11_000


def test_workflow_name_comes_from_args() -> None:
    """§20: ``args.meta.name``; a missing ``meta`` makes render throw, a missing name prints undefined."""
    value = {"runId": "r", "agentsStarted": 1, "result": None}
    with pytest.raises(ToolOutputError):
        render_native("workflow", value, {})
    assert render_native("workflow", value, {"meta": {}})[0]["text"].startswith('workflow "undefined" completed')


@pytest.mark.parametrize(
    ("status", "sentence"),
    [
        ("complete", "Ralph worker reported completion after 1 round."),
        ("blocked", "Ralph worker reported a blocker after 1 round."),
        ("budget-limited", "Ralph reached its 1 round limit; the worker reported work remaining."),
    ],
)
def test_ralph_sentences(status: str, sentence: str) -> None:
    """§20: the outcome sentence follows ``result.status``."""
    value = {"runId": "r", "agentsStarted": 1, "result": {"status": status, "roundsStarted": 1, "report": {}}}
    assert render_native("ralph", value)[0]["text"] == f"{sentence}\nFinal report:\n{{}}"


def test_ralph_cap() -> None:
    """§20: bounded by ``text[:max-14] + "\\n… [truncated]"``, or the notice's prefix when max <= 14."""
    value = {"runId": "r", "agentsStarted": 1, "result": {"status": "complete", "roundsStarted": 2, "report": {}}}
    assert render_native("ralph", value, config={"max_result_chars": 20})[0]["text"] == "Ralph \n… [truncated]"
    assert render_native("ralph", value, config={"max_result_chars": 5})[0]["text"] == "\n… [t"


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (None, "Cannot read properties of null (reading 'roundsStarted')"),
        ({"status": "other", "roundsStarted": 1}, "Cannot read properties of undefined (reading 'length')"),
        ({"roundsStarted": 1}, "Cannot read properties of undefined (reading 'length')"),
        ("complete", "Cannot read properties of undefined (reading 'length')"),
        ([], "Cannot read properties of undefined (reading 'length')"),
    ],
)
def test_ralph_refuses_what_is_not_an_outcome(result: Any, message: str) -> None:
    """§20: a result that is none of the three outcomes fails the call, with the original's message."""
    with pytest.raises(ToolOutputError) as caught:
        render_native("ralph", {"runId": "r", "agentsStarted": 1, "result": result})
    assert caught.value.message == f'tool "ralph" returned invalid output: output.render failed: {message}'


@pytest.mark.parametrize(
    ("rounds", "phrase"),
    [
        (1, "1 round"),
        (1.0, "1 round"),
        (True, "true rounds"),
        ([1, 2], "1,2 rounds"),
        ({"a": 1}, "[object Object] rounds"),
    ],
)
def test_ralph_rounds_print_as_a_template_literal(rounds: Any, phrase: str) -> None:
    """§20: ``${roundsStarted} round${=== 1 ? "" : "s"}``: strict equality, JavaScript's ``String``."""
    value = {"runId": "r", "agentsStarted": 1, "result": {"status": "complete", "roundsStarted": rounds}}
    assert render_native("ralph", value)[0]["text"] == (
        f"Ralph worker reported completion after {phrase}.\nFinal report:\nundefined"
    )
