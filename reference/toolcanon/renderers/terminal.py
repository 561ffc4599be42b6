"""``terminal_*``: PTY sessions' texts, byte-capped, plus the final re-bounding of content (renderers.md §17)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.renderers._blocks import TextContent, single_text, text_content
from toolcanon.renderers._dsl import (
    Node,
    array,
    boolean,
    const,
    enum,
    integer,
    null,
    obj,
    one_of,
    optional,
    required,
    string,
)
from toolcanon.renderers._ecma import js_property, js_string, retain_text_head, retain_text_tail, utf8_length

__all__ = [
    "DEFAULT_MAX_RESULT_BYTES",
    "MIN_MAX_RESULT_BYTES",
    "TERMINAL_FAMILIES",
    "TERMINAL_SCHEMAS",
    "TRUNCATED",
    "bound_terminal_text",
    "finalize_content",
    "status_text",
    "terminal_outputs",
]

DEFAULT_MAX_RESULT_BYTES: Final = 262144
MIN_MAX_RESULT_BYTES: Final = 64
TRUNCATED: Final = "\n[output truncated]"
_TRUNCATED_BYTES: Final = utf8_length(TRUNCATED)

_STATUS: Final[Node] = one_of(
    obj({"kind": required(const("string", "running"))}),
    obj(
        {
            "kind": required(const("string", "exited")),
            "exitCode": required(one_of(integer(), null())),
            "signal": required(one_of(string(), null())),
        }
    ),
)
_SNAPSHOT_PROPERTIES: Final[dict[str, Node]] = {
    "sessionId": required(string()),
    "name": optional(string()),
    "type": required(string()),
    "pid": optional(integer()),
    "status": required(_STATUS),
}

TERMINAL_SCHEMAS: Final[dict[str, Node]] = {
    "terminal_open": obj({**_SNAPSHOT_PROPERTIES, "motd": required(string())}),
    "terminal_send": one_of(
        obj({"kind": required(const("string", "background")), "jobId": required(string())}),
        obj(
            {
                "kind": required(const("string", "foreground")),
                "viewport": required(string()),
                "waitReason": required(enum("stdin_read", "inferred_idle", "timeout", "session_exit")),
                "sessionStatus": required(_STATUS),
                "truncated": required(boolean()),
            }
        ),
    ),
    "terminal_read": obj(
        {
            "text": required(string()),
            "totalLines": required(integer()),
            "lineBegin": required(integer()),
            "lineEnd": required(integer()),
            "truncated": required(boolean()),
        }
    ),
    "terminal_signal": obj({"delivered": required(const("boolean", True)), "targetPgid": required(integer())}),
    "terminal_close": obj({"sessionId": required(string()), "outcome": required(enum("closed", "already-closing"))}),
    "terminal_list": array(obj(_SNAPSHOT_PROPERTIES)),
}

TERMINAL_FAMILIES: Final = tuple(TERMINAL_SCHEMAS)


def bound_terminal_text(text: str, max_bytes: int) -> str:
    """Within ``max_bytes`` UTF-8 bytes: a head plus :data:`TRUNCATED`, or the marker's tail on a tiny cap."""
    if utf8_length(text) <= max_bytes:
        return text
    if max_bytes >= _TRUNCATED_BYTES:
        return retain_text_head(text, max_bytes - _TRUNCATED_BYTES).text + TRUNCATED
    return retain_text_tail(TRUNCATED, max_bytes).text


def _fit_tail(content: str, metadata: str, already_truncated: bool, max_bytes: int) -> str:
    """Keep the metadata; drop the oldest content first (its UTF-8 tail survives) and mark the cut."""
    full = content + metadata + (TRUNCATED if already_truncated else "")
    if utf8_length(full) <= max_bytes:
        return full
    trailer = metadata + TRUNCATED
    budget = max_bytes - utf8_length(trailer)
    if budget <= 0:
        return retain_text_tail(trailer, max_bytes).text
    return retain_text_tail(content, budget).text + trailer


def status_text(status: Any) -> str:
    """``running`` or ``exited code=<code|null> signal=<signal|null>``."""
    if status["kind"] == "running":
        return "running"
    return f"exited code={js_string(status['exitCode'])} signal={js_string(status['signal'])}"


def _render_open(args: Any, value: Any, max_bytes: int) -> str:
    name = f" ({value['name']})" if "name" in value else ""
    prefix = f"started terminal session {value['sessionId']}{name} [type: {value['type']}]\n"
    motd: str = value["motd"]
    full = prefix + (motd or "(no startup output)")
    if utf8_length(full) <= max_bytes:
        return full
    budget = max_bytes - utf8_length(prefix) - _TRUNCATED_BYTES
    if budget <= 0:
        return retain_text_head(prefix + TRUNCATED, max_bytes).text
    return prefix + retain_text_tail(motd, budget).text + TRUNCATED


def _render_send(args: Any, value: Any, max_bytes: int) -> str:
    if value["kind"] == "background":
        return f"started background job {value['jobId']}"
    metadata = f"\n[wait: {value['waitReason']}]\n[session: {status_text(value['sessionStatus'])}]"
    return _fit_tail(value["viewport"] or "(no new output)", metadata, bool(value["truncated"]), max_bytes)


def _render_read(args: Any, value: Any, max_bytes: int) -> str:
    lines = f"{js_string(value['lineBegin'])}-{js_string(value['lineEnd'])} of {js_string(value['totalLines'])}"
    content = value["text"] or "(no retained output)"
    return _fit_tail(content, f"\n[lines: {lines}]", bool(value["truncated"]), max_bytes)


def _render_signal(args: Any, value: Any, max_bytes: int) -> str:
    return f"delivered {js_property(args, 'signal')} to foreground process group {js_string(value['targetPgid'])}"


def _render_close(args: Any, value: Any, max_bytes: int) -> str:
    if value["outcome"] == "closed":
        return f"closed terminal session {value['sessionId']}"
    return f"terminal session {value['sessionId']} was already closing"


def _render_list(args: Any, value: Any, max_bytes: int) -> str:
    if not value:
        return "(no terminal sessions)"
    lines = []
    for session in value:
        name = f" ({session['name']})" if "name" in session else ""
        pid = f" pid={js_string(session['pid'])}" if "pid" in session else ""
        lines.append(f"{session['sessionId']}{name} [{session['type']}] {status_text(session['status'])}{pid}")
    # bounded like a read page with no metadata line: the earliest sessions are dropped first
    return _fit_tail("\n".join(lines), "", False, max_bytes)


_RENDERERS: Final[dict[str, Callable[[Any, Any, int], str]]] = {
    "terminal_open": _render_open,
    "terminal_send": _render_send,
    "terminal_read": _render_read,
    "terminal_signal": _render_signal,
    "terminal_close": _render_close,
    "terminal_list": _render_list,
}


def _send_presentation_meta(args: Any, value: Any) -> Any:
    if value["kind"] == "background":
        return None
    return {
        "viewport": value["viewport"],
        "waitReason": value["waitReason"],
        "sessionStatus": value["sessionStatus"],
        "truncated": value["truncated"],
    }


def finalize_content(content: Sequence[Any], *, max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES) -> list[Any]:
    """Re-bound a final content of exactly one text block (successes and ``Error:`` failures alike)."""
    text = single_text(content)
    if text is None:
        return list(content)
    return text_content(bound_terminal_text(text, max_result_bytes))


def terminal_outputs(*, max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES) -> dict[str, Output]:
    """The six ``terminal_*`` output declarations, keyed by tool name."""
    if max_result_bytes < MIN_MAX_RESULT_BYTES:
        raise ValueError(f"max_result_bytes must be at least {MIN_MAX_RESULT_BYTES}")
    outputs: dict[str, Output] = {}
    for family, render_text in _RENDERERS.items():

        def render(args: Any, value: Any, render_text: Callable[[Any, Any, int], str] = render_text) -> TextContent:
            return text_content(render_text(args, value, max_result_bytes))

        meta = _send_presentation_meta if family == "terminal_send" else None
        outputs[family] = Output(schema=TERMINAL_SCHEMAS[family], render=render, presentation_meta=meta)
    return outputs
