"""``bash``: a background job id, or stdout/stderr with sandbox, timeout and exit markers (renderers.md §7)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import (
    Node,
    boolean,
    const,
    integer,
    null,
    number,
    obj,
    one_of,
    optional,
    required,
    string,
)
from toolcanon.renderers._ecma import js_string

__all__ = ["BASH_SCHEMA", "ESCALATION_MARKER", "bash_output", "render_bash"]

ESCALATION_MARKER: Final = (
    "[sandbox: escalation available — retry this exact command once with sandbox_permissions "
    "(the narrowest wider mode that suffices) + justification; the approval prompt asks the user]"
)

_STREAM: Final[Node] = obj(
    {"text": required(string()), "truncated": required(boolean()), "spillPath": optional(string())}
)

BASH_SCHEMA: Final[Node] = one_of(
    obj({"kind": required(const("string", "background")), "jobId": required(string())}),
    obj(
        {
            "kind": required(const("string", "foreground")),
            "exitCode": required(one_of(integer(), null())),
            "signal": required(one_of(string(), null())),
            "timedOut": required(boolean()),
            "aborted": required(boolean()),
            "timeoutMs": required(number()),
            "stdout": required(_STREAM),
            "stderr": required(_STREAM),
            "sandbox": optional(
                obj(
                    {
                        "mode": required(string()),
                        "denied": required(boolean()),
                        "enforcement": optional(string()),
                        "runnerFailed": optional(boolean()),
                    }
                )
            ),
        }
    ),
)


def _stream_text(stream: Any) -> str:
    if not stream["truncated"]:
        text: str = stream["text"]
        return text
    # ECMAScript's ??, as the original writes it: only an absent or null path is unavailable; an empty one prints.
    spill = stream.get("spillPath")
    if spill is None:
        spill = "(unavailable)"
    return f"{stream['text']}\n[output truncated; full output: {spill}]"


def _markers(value: Any, escalation_available: bool) -> list[str]:
    markers: list[str] = []
    sandbox = value.get("sandbox")
    if sandbox is not None and sandbox["denied"]:
        markers.append(f"[sandbox: file access denied under {sandbox['mode']} mode]")
        if escalation_available:
            markers.append(ESCALATION_MARKER)
    if value["timedOut"]:
        markers.append(f"[timed out after {js_string(value['timeoutMs'])}ms]")
    if value["signal"] is not None:
        markers.append(f"[killed by signal: {value['signal']}]")
    elif value["exitCode"] != 0:
        markers.append(f"[exit code: {js_string(value['exitCode'])}]")
    return markers


def render_bash(args: Any, value: Any, *, escalation_available: bool = False) -> TextContent:
    """``started background job <id>``, or the streams followed by one marker line each."""
    if value["kind"] == "background":
        return text_content(f"started background job {value['jobId']}")
    body = _stream_text(value["stdout"])
    stderr = _stream_text(value["stderr"])
    if stderr:
        if body and not body.endswith("\n"):
            body += "\n"
        body += "[stderr]\n" + stderr
    if not body:
        body = "(no output)"
    markers = _markers(value, escalation_available)
    if not markers:
        return text_content(body)
    if not body.endswith("\n"):
        body += "\n"
    return text_content(body + "\n".join(markers))


def bash_output(*, escalation_available: bool = False) -> Output:
    """The ``bash`` output declaration; ``escalation_available`` is true when the executor confines commands."""

    def render(args: Any, value: Any) -> TextContent:
        return render_bash(args, value, escalation_available=escalation_available)

    return Output(schema=BASH_SCHEMA, render=render)
