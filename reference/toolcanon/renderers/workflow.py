"""``workflow`` and ``ralph``: a completion sentence and the run's JSON result, capped (renderers.md §20)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.jsonvalue import canonical_json
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, any_json, integer, obj, required, string
from toolcanon.renderers._ecma import js_property, js_string, utf16_length, utf16_slice
from toolcanon.renderers._options import positive_integer

__all__ = [
    "DEFAULT_RALPH_MAX_RESULT_CHARS",
    "DEFAULT_WORKFLOW_MAX_RESULT_CHARS",
    "WORKFLOW_SCHEMA",
    "ralph_output",
    "render_ralph",
    "render_workflow",
    "workflow_output",
]

DEFAULT_WORKFLOW_MAX_RESULT_CHARS: Final = 50000
DEFAULT_RALPH_MAX_RESULT_CHARS: Final = 16384
_RALPH_NOTICE: Final = "\n… [truncated]"

WORKFLOW_SCHEMA: Final[Node] = obj(
    {"runId": required(string()), "agentsStarted": required(integer()), "result": required(any_json())}
)


def _workflow_name(args: Any) -> str:
    meta = args.get("meta") if isinstance(args, dict) else None
    if not isinstance(meta, dict):
        # Reading ``args.meta.name`` throws in the original when ``meta`` is missing.
        raise TypeError("Cannot read properties of undefined (reading 'name')")
    return js_property(meta, "name")


def render_workflow(args: Any, value: Any, *, max_result_chars: int = DEFAULT_WORKFLOW_MAX_RESULT_CHARS) -> TextContent:
    """``workflow "<name>" completed (<n> agents).`` then ``Return value:`` and the pretty JSON result."""
    result = canonical_json(value["result"], indent=2)
    length = utf16_length(result)
    if length > max_result_chars:
        result = (
            utf16_slice(result, 0, max_result_chars) + f"\n… [truncated: {length - max_result_chars} more characters]"
        )
    count = value["agentsStarted"]
    agents = "agent" if count == 1 else "agents"
    return text_content(
        f'workflow "{_workflow_name(args)}" completed ({js_string(count)} {agents}).\nReturn value:\n{result}'
    )


def _rounds(count: Any) -> str:
    one = type(count) in (int, float) and count == 1
    return f"{js_string(count)} round" if one else f"{js_string(count)} rounds"


_RALPH_SENTENCES: Final = {
    "complete": "Ralph worker reported completion after {rounds}.",
    "blocked": "Ralph worker reported a blocker after {rounds}.",
    "budget-limited": "Ralph reached its {rounds} limit; the worker reported work remaining.",
}


def render_ralph(args: Any, value: Any, *, max_result_chars: int = DEFAULT_RALPH_MAX_RESULT_CHARS) -> TextContent:
    """The outcome sentence by ``result.status``, then ``Final report:`` and the pretty JSON report; capped.

    As in the original, a ``null`` result, or one whose ``status`` is none of the three outcomes, makes the
    renderer raise with JavaScript's message (the tool itself only ever returns one of the three).
    """
    result = value["result"]
    if result is None:
        raise TypeError("Cannot read properties of null (reading 'roundsStarted')")
    record = result if isinstance(result, dict) else {}
    sentence = _RALPH_SENTENCES.get(record["status"]) if isinstance(record.get("status"), str) else None
    if sentence is None:
        raise TypeError("Cannot read properties of undefined (reading 'length')")
    rounds = _rounds(record["roundsStarted"]) if "roundsStarted" in record else "undefined rounds"
    report = "undefined" if "report" not in record else canonical_json(record["report"], indent=2)
    text = f"{sentence.format(rounds=rounds)}\nFinal report:\n{report}"
    if utf16_length(text) > max_result_chars:
        notice_length = utf16_length(_RALPH_NOTICE)
        if max_result_chars <= notice_length:
            text = utf16_slice(_RALPH_NOTICE, 0, max_result_chars)
        else:
            text = utf16_slice(text, 0, max_result_chars - notice_length) + _RALPH_NOTICE
    return text_content(text)


def workflow_output(*, max_result_chars: int = DEFAULT_WORKFLOW_MAX_RESULT_CHARS) -> Output:
    """The ``workflow`` output declaration (the workflow's name comes from ``args.meta.name``)."""

    max_result_chars = positive_integer("max_result_chars", max_result_chars)

    def render(args: Any, value: Any) -> TextContent:
        return render_workflow(args, value, max_result_chars=max_result_chars)

    return Output(schema=WORKFLOW_SCHEMA, render=render)


def ralph_output(*, max_result_chars: int = DEFAULT_RALPH_MAX_RESULT_CHARS) -> Output:
    """The ``ralph`` output declaration (same value shape as ``workflow``)."""

    max_result_chars = positive_integer("max_result_chars", max_result_chars)

    def render(args: Any, value: Any) -> TextContent:
        return render_ralph(args, value, max_result_chars=max_result_chars)

    return Output(schema=WORKFLOW_SCHEMA, render=render)
