"""Durable session events: an append-only JSON Lines log on disk, the agent-loop step that writes it, replay."""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, BinaryIO, Final

from toolcanon.errors import ABORTED_BEFORE_DISPATCH
from toolcanon.execution import Call
from toolcanon.jsonvalue import MAX_SAFE_INTEGER, JsonValue, NotLosslessJson, canonical_json, snapshot_json
from toolcanon.result import ABSENT, ToolFailure, ToolResult, aborted_result
from toolcanon.signal import AbortSignal

if TYPE_CHECKING:
    from toolcanon.registry import Registry

__all__ = [
    "CODE_DISPATCH",
    "CODE_DISPATCH_START",
    "KNOWN_EVENT_TYPES",
    "TOOL_CALL",
    "TOOL_RESULT",
    "InvalidEventError",
    "MalformedLogError",
    "ModelToolCall",
    "Replay",
    "SessionDataError",
    "SessionEvent",
    "SessionLog",
    "SessionLogError",
    "StepOutcome",
    "TornLine",
    "derive_messages",
    "parse_model_arguments",
    "replay",
    "run_tool_calls",
    "tool_result_data",
    "tool_result_message",
]

TOOL_CALL: Final = "tool/call"
TOOL_RESULT: Final = "tool/result"
CODE_DISPATCH_START: Final = "tool/code-dispatch-start"
CODE_DISPATCH: Final = "tool/code-dispatch"

#: The event types a log may hold (the original harness's vocabulary, its ``KNOWN_SESSION_EVENT_TYPES``). A reader
#: refuses a line of any other type unless its envelope marks it ``"ignorable": true``: such a log was written by
#: a newer harness, and skipping an event it needs would rebuild a wrong session.
KNOWN_EVENT_TYPES: Final = frozenset(
    {
        "agent-preset/selected", "agent/inbox/spliced", "approval/asked", "approval/decided", "approval/policy",
        "assistant/chunk", "assistant/message", "command/done", "command/run", "compaction/end",
        "compaction/prune", "compaction/start", "compaction/summary", "feedback/record", "goal/change",
        "hook/invoked", "hook/result", "llm/retry", "llm/retry-started", "permission/preset", "plan/mode",
        "request/context", "request/header", "sandbox/mode", "schedule/change", "session/end-seed",
        "session/title", "session/title-llm-request", "step/end", "step/start", "subagent/descriptor",
        "team/member", "team/message/delivered", "team/message/queued", "team/task", "todo/write",
        "tool-workflow/agent-end", "tool-workflow/agent-start", "tool-workflow/run-end",
        "tool-workflow/run-start", TOOL_CALL, CODE_DISPATCH, CODE_DISPATCH_START, TOOL_RESULT, "turn/end",
        "turn/start", "user/message", "web/deepseek-search-llm-request",
    }
)  # fmt: skip
_TOOL_NOT_STARTED: Final = "TOOL_NOT_STARTED"


# --- events and errors ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionEvent:
    """One durable event: its 1-based sequence number (its line number), its type and its frozen data."""

    seq: int
    type: str
    data: JsonValue


@dataclass(frozen=True, slots=True)
class TornLine:
    """An incomplete last line (no newline): its 1-based line number, byte offset and the bytes present."""

    line: int
    offset: int
    length: int

    def __str__(self) -> str:
        return f"line {self.line} (byte offset {self.offset}) is torn: {self.length} bytes without a newline"


class SessionLogError(Exception):
    """Base class of the session log's errors."""


class SessionDataError(SessionLogError, ValueError):
    """An event's data is not lossless JSON (``session event "<type>" carries non-JSON-serializable data``)."""

    def __init__(self, event_type: str) -> None:
        self.event_type = event_type
        super().__init__(f'session event "{event_type}" carries non-JSON-serializable data')


class InvalidEventError(SessionLogError, ValueError):
    """An event that breaks its type's shape or a durability invariant; nothing was written."""


class MalformedLogError(SessionLogError):
    """A complete line of a log that is not a valid event; names the line (1-based) and its byte offset."""

    def __init__(self, path: str, line: int, offset: int, reason: str) -> None:
        self.path = path
        self.line = line
        self.offset = offset
        self.reason = reason
        super().__init__(f"{path}: line {line} (byte offset {offset}): {reason}")


# --- event data --------------------------------------------------------------------------------------


def tool_result_message(call_id: str, result: ToolResult, message_id: str) -> dict[str, Any]:
    """The identified user-role message a result becomes in the model history (digest 9.2)."""
    return {
        "source": {"kind": "tool", "callId": call_id},
        "content": [
            {"type": "tool-result", "toolCallId": call_id, "content": result.content, "isError": result.is_error}
        ],
        "role": "user",
        "id": message_id,
    }


def tool_result_data(turn: int, step: int, call_id: str, result: ToolResult, message_id: str) -> dict[str, Any]:
    """``tool/result`` data: the message, ``error`` (the info only, when there is one) and ``meta`` (when present).

    Nothing else of the result is persisted: never the value, the failure message as a field, the additional
    contexts or the conclude-turn flag.
    """
    data: dict[str, Any] = {
        "turn": turn,
        "step": step,
        "message": tool_result_message(call_id, result, message_id),
    }
    if isinstance(result, ToolFailure) and result.error.info is not None:
        data["error"] = {"name": result.error.info.name, "code": result.error.info.code}
    if result.meta is not ABSENT:
        data["meta"] = result.meta
    return data


def _is_id(value: object) -> bool:
    return type(value) is str and value != ""


def _is_count(value: object) -> bool:
    return type(value) is int


def _result_message_problem(data: dict[str, Any]) -> str | None:
    """What the writer and the reader alike require of a ``tool/result``'s message, as the original's load checks
    it ("only the event-specific invariants needed to safely replay a message"): an identified user message whose
    source names its call and whose content is that call's one tool-result block (whatever that block holds)."""
    message = data.get("message")
    if not isinstance(message, dict) or not _is_id(message.get("id")):
        return '"tool/result" needs a message with a non-empty id'
    if message.get("role") != "user":
        return '"tool/result" message must have role "user"'
    source = message.get("source")
    if not isinstance(source, dict) or source.get("kind") != "tool" or not _is_id(source.get("callId")):
        return '"tool/result" message source must be {kind: "tool", callId}'
    content = message.get("content")
    block = content[0] if isinstance(content, list) and len(content) == 1 else None
    # the block's own content is not checked: the registry logs render output that is no list as it is (R-LOG-2)
    if not (isinstance(block, dict) and block.get("type") == "tool-result"):
        return '"tool/result" message must hold one tool-result block'
    if block.get("toolCallId") != source["callId"]:
        return '"tool/result" tool-result block must name the source\'s callId'
    return None


def _result_problem(data: dict[str, Any]) -> str | None:
    """What the writer requires of a ``tool/result``: the message replay requires, and an ``error`` that is
    ``{name, code}`` when present (replay does not read it)."""
    message_problem = _result_message_problem(data)
    if message_problem is not None:
        return message_problem
    error = data.get("error", ABSENT)
    if error is not ABSENT and not (
        isinstance(error, dict) and type(error.get("name")) is str and type(error.get("code")) is str
    ):
        return '"tool/result" error must be {name, code}'
    return None


_DISPATCH_IDS: Final = ("rootCallId", "parentCallId", "subCallId")


def _named_id(data: dict[str, Any], key: str) -> str | None:
    """The call id ``data`` holds at ``key``, or ``None`` when it holds no non-empty string there (a read line's
    id may be any JSON value, or absent, and then names no call)."""
    value = data.get(key)
    return value if _is_id(value) else None


def _dispatch_ids_problem(event_type: str, data: dict[str, Any]) -> str | None:
    """What the writer and the reader alike require of a code-dispatch event: its three call ids."""
    for key in _DISPATCH_IDS:
        if not _is_id(data.get(key)):
            return f'"{event_type}" needs a non-empty {key}'
    return None


def _shape_problem(event_type: str, data: Any) -> str | None:
    """Why ``data`` is not a valid body for ``event_type`` (unknown types need only be objects)."""
    if not isinstance(data, dict):
        return f'"{event_type}" data must be an object'
    if event_type == TOOL_CALL:
        if not (_is_count(data.get("turn")) and _is_count(data.get("step"))):
            return '"tool/call" needs integer turn and step'
        if not _is_id(data.get("callId")) or type(data.get("name")) is not str:
            return '"tool/call" needs a non-empty callId and a name'
        if type(data.get("arguments")) is not str:
            return '"tool/call" arguments must be the raw argument text (a string)'
    elif event_type == TOOL_RESULT:
        if not (_is_count(data.get("turn")) and _is_count(data.get("step"))):
            return '"tool/result" needs integer turn and step'
        return _result_problem(data)
    elif event_type in (CODE_DISPATCH_START, CODE_DISPATCH):
        missing = _dispatch_ids_problem(event_type, data)
        if missing is not None:
            return missing
        if type(data.get("name")) is not str or "arguments" not in data:
            return f'"{event_type}" needs a name and arguments'
        if event_type == CODE_DISPATCH and (type(data.get("isError")) is not bool or "content" not in data):
            return '"tool/code-dispatch" needs isError and content'
    return None


def _replay_shape_problem(event_type: str, data: Any) -> str | None:
    """Why a line's ``data`` cannot be replayed: only what deriving the messages reads.

    The writer refuses every event :func:`_shape_problem` refuses; a reader checks less, as the original's load
    validates "only the event-specific invariants needed to safely replay a message"
    (``packages/core/session/src/index.ts``): of a ``tool/result``, its message (:func:`_result_message_problem`). A
    ``tool/call`` and a code-dispatch event give no message, so none of their fields is read as a shape (their
    ids still take part in the invariants, where an id that is no non-empty string names no call), nor is a
    ``tool/result``'s ``error`` or its turn and step but as the step that pairs it with its call (any JSON value).
    """
    if not isinstance(data, dict):
        return f'"{event_type}" data must be an object'
    if event_type == TOOL_RESULT:
        return _result_message_problem(data)
    return None


def _step_of(data: Any) -> tuple[str, str]:
    """The turn and step an event names, as JSON text: a read line's may be any JSON value, or absent."""
    turn = canonical_json(data["turn"]) if "turn" in data else ""
    step = canonical_json(data["step"]) if "step" in data else ""
    return turn, step


class _Invariants:
    """The durability invariants a log keeps (digest 9.7), checked on append and again on replay."""

    __slots__ = ("_called", "_open_calls", "_sub_roots")

    def __init__(self) -> None:
        self._called: set[tuple[tuple[str, str], str]] = set()
        self._open_calls: set[str] = set()
        self._sub_roots: dict[str, str] = {}

    def problem(self, event_type: str, data: Any, *, replaying: bool = False) -> str | None:
        shape = (_replay_shape_problem if replaying else _shape_problem)(event_type, data)
        if shape is not None:
            return shape
        if event_type == TOOL_RESULT:
            call_id = data["message"]["source"]["callId"]
            error = data.get("error")
            # a crash-repair record, as the original's invariant recognises one: its code and a failed block
            synthetic = (
                isinstance(error, dict)
                and error.get("code") == _TOOL_NOT_STARTED
                and data["message"]["content"][0].get("isError") is True
            )
            if not synthetic and (_step_of(data), call_id) not in self._called:
                return f'"tool/result" for "{call_id}" has no prior "tool/call" in the same step'
        elif event_type in (CODE_DISPATCH_START, CODE_DISPATCH):
            root, parent, sub = (_named_id(data, key) for key in _DISPATCH_IDS)
            # the log has no turn events: a dispatch is "inside an open turn" while its root call is open
            if root is None or parent is None:
                return f'"{event_type}" names no {"root" if root is None else "parent"} call'
            if root not in self._open_calls:
                named = f'"{event_type}" of "{sub}"' if sub is not None else f'"{event_type}"'
                return f'{named} falls outside its root call "{root}"'
            if parent != root and self._sub_roots.get(parent) != root:
                return f'"{event_type}" parent "{parent}" is neither the root nor a recorded sub-call of it'
            if sub is not None and self._sub_roots.get(sub, root) != root:
                return f'"{event_type}" sub-call "{sub}" cannot change its root'
        return None

    def record(self, event_type: str, data: Any) -> None:
        if event_type == TOOL_CALL:
            call_id = _named_id(data, "callId")
            if call_id is not None:
                self._called.add((_step_of(data), call_id))
                self._open_calls.add(call_id)
        elif event_type == TOOL_RESULT:
            self._open_calls.discard(data["message"]["source"]["callId"])
        elif event_type in (CODE_DISPATCH_START, CODE_DISPATCH):
            # problem() has refused a dispatch whose root is no id; a sub-call that is none records nothing
            sub = _named_id(data, "subCallId")
            if sub is not None:
                self._sub_roots[sub] = data["rootCallId"]


# --- reading -----------------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_int(text: str) -> int | float:
    """An integer literal as ECMAScript's ``JSON.parse`` reads it: beyond the safe range, the nearest double."""
    if text == "-0":
        return -0.0  # negative zero, which is not lossless JSON: keep it visible as such
    digits = len(text) - text.startswith("-")
    if digits < 16:
        return int(text)
    if digits == 16 and abs(number := int(text)) <= MAX_SAFE_INTEGER:
        return number
    return float(text)


_scanstring: Final[Callable[[str, int, bool], tuple[str, int]]] = json.decoder.scanstring  # type: ignore[attr-defined]
_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")
_NUMBER: Final = re.compile(r"-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?")
_LITERALS: Final = {"true": True, "false": False, "null": None}


def _loads_deep(text: str) -> Any:
    """An iterative JSON parser, for lines nested deeper than the recursive standard parser can go."""
    stack: list[tuple[Any, str | None]] = []
    position = _WHITESPACE.match(text, 0).end()  # type: ignore[union-attr]
    while True:
        if position >= len(text):
            raise ValueError("unexpected end of JSON text")
        char = text[position]
        value: Any
        if char in "{[":
            position = _WHITESPACE.match(text, position + 1).end()  # type: ignore[union-attr]
            container: Any = {} if char == "{" else []
            closing = "}" if char == "{" else "]"
            if position < len(text) and text[position] == closing:
                value, position = container, position + 1
            else:
                key = None
                if char == "{":
                    key, position = _object_key(text, position)
                stack.append((container, key))
                continue
        elif char == '"':
            value, position = _scanstring(text, position + 1, True)
        elif char in "-0123456789":
            match = _NUMBER.match(text, position)
            if match is None:
                raise ValueError(f"invalid number at {position}")
            value = float(match.group()) if match.group(1) or match.group(2) else _parse_int(match.group())
            position = match.end()
        else:
            for literal, literal_value in _LITERALS.items():
                if text.startswith(literal, position):
                    value, position = literal_value, position + len(literal)
                    break
            else:
                raise ValueError(f"unexpected character at {position}")
        while True:
            position = _WHITESPACE.match(text, position).end()  # type: ignore[union-attr]
            if not stack:
                if position != len(text):
                    raise ValueError(f"extra data at {position}")
                return value
            container, key = stack[-1]
            if key is None:
                container.append(value)
            else:
                container[key] = value
            closing = "}" if key is not None else "]"
            if position < len(text) and text[position] == ",":
                position = _WHITESPACE.match(text, position + 1).end()  # type: ignore[union-attr]
                if key is not None:
                    key, position = _object_key(text, position)
                    stack[-1] = (container, key)
                break
            if position < len(text) and text[position] == closing:
                stack.pop()
                value, position = container, position + 1
                continue
            raise ValueError(f"expected ',' or '{closing}' at {position}")


def _object_key(text: str, position: int) -> tuple[str, int]:
    if position >= len(text) or text[position] != '"':
        raise ValueError(f"expected a property name at {position}")
    key, position = _scanstring(text, position + 1, True)
    position = _WHITESPACE.match(text, position).end()  # type: ignore[union-attr]
    if position >= len(text) or text[position] != ":":
        raise ValueError(f"expected ':' at {position}")
    return key, _WHITESPACE.match(text, position + 1).end()  # type: ignore[union-attr]


def _loads(text: str) -> Any:
    """Strict JSON as ``JSON.parse`` reads it (no NaN/Infinity literals; numbers are doubles), any depth."""
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=_parse_int)
    except RecursionError:
        return _loads_deep(text)


def parse_model_arguments(raw: str) -> JsonValue:
    """Parse a model's raw argument text as the agent loop does (digest 2.6).

    ``""`` becomes ``{}``; valid JSON is parsed; anything else stays the raw string (a ``define_tool`` then
    rejects it with ``"arguments" must be an object``). Numbers are read as ``JSON.parse`` reads them: ``-0`` is
    negative zero (which the argument snapshot rejects) and an integer beyond the safe range is the nearest
    double.
    """
    if raw == "":
        return {}
    try:
        return _loads(raw)
    except ValueError:
        return raw


def _read_events(data: bytes, path: str) -> tuple[list[SessionEvent], TornLine | None, _Invariants]:
    events: list[SessionEvent] = []
    invariants = _Invariants()
    pieces = data.split(b"\n")
    offset = 0
    for index, piece in enumerate(pieces[:-1]):
        line = index + 1
        try:
            event = _parse_line(piece, line, invariants)
        except ValueError as problem:
            raise MalformedLogError(path, line, offset, str(problem)) from None
        events.append(event)
        offset += len(piece) + 1
    tail = pieces[-1]
    torn = TornLine(len(pieces), offset, len(tail)) if tail else None
    return events, torn, invariants


def _parse_line(piece: bytes, line: int, invariants: _Invariants) -> SessionEvent:
    if not piece:
        raise ValueError("empty line")
    try:
        text = piece.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not valid UTF-8") from None
    try:
        parsed = _loads(text)
    except ValueError as problem:
        raise ValueError(f"not valid JSON ({problem})") from None
    try:
        envelope = snapshot_json(parsed)
    except NotLosslessJson:
        raise ValueError("not lossless JSON") from None
    if not isinstance(envelope, dict):
        raise ValueError("an event must be a JSON object")
    seq, event_type = envelope.get("seq"), envelope.get("type")
    if type(seq) is not int or seq != line:
        shown = canonical_json(seq) if "seq" in envelope else "absent"
        raise ValueError(f"seq must be {line} (the line number), not {shown}")
    if type(event_type) is not str or not event_type:
        raise ValueError('"type" must be a non-empty string')
    if "data" not in envelope:
        raise ValueError('an event needs "data"')
    if event_type not in KNOWN_EVENT_TYPES and envelope.get("ignorable") is not True:
        raise ValueError(f"event type {canonical_json(event_type)} is unknown to this reader and not marked ignorable")
    broken = invariants.problem(event_type, envelope["data"], replaying=True)
    if broken is not None:
        raise ValueError(broken)
    invariants.record(event_type, envelope["data"])
    return SessionEvent(seq, event_type, envelope["data"])


def derive_messages(events: Iterable[SessionEvent]) -> list[JsonValue]:
    """The model messages a log holds: each ``tool/result`` projects to its ``message``, verbatim (9.4).

    ``tool/call`` and the code-dispatch events project to nothing; so do event types this module does not know.
    """
    return [event.data["message"] for event in events if event.type == TOOL_RESULT]


@dataclass(frozen=True, slots=True)
class Replay:
    """What a log yields: its events, the derived model messages, and the torn last line if there was one."""

    events: tuple[SessionEvent, ...]
    messages: tuple[JsonValue, ...]
    torn: TornLine | None


def replay(path: str | os.PathLike[str]) -> Replay:
    """Read a log and derive the model messages from it alone.

    A torn last line is reported in :attr:`Replay.torn` and skipped; any other malformed line raises
    :class:`MalformedLogError` naming it. A missing file raises ``FileNotFoundError``.
    """
    location = os.fspath(path)
    events, torn, _ = _read_events(Path(location).read_bytes(), location)
    return Replay(tuple(events), tuple(derive_messages(events)), torn)


# --- writing -----------------------------------------------------------------------------------------


class SessionLog:
    """An append-only JSON Lines log of durable events on disk.

    Each line is one event, ``{"seq": n, "type": ..., "data": {...}}`` (``seq`` is the line number), written with
    :func:`~toolcanon.jsonvalue.canonical_json` and a ``"\\n"``, in UTF-8. The events are ``tool/call`` (the
    raw argument text as the model sent it), ``tool/result`` (the tool-result message, the error's ``info`` and
    the metadata; never the value) and the nested-dispatch events ``tool/code-dispatch-start`` and
    ``tool/code-dispatch``.

    **Durability.** :meth:`append` writes the whole line and flushes it to the operating system before it
    returns, so an appended event survives a crash of the writing process. :meth:`close` fsyncs the file (and,
    for a log this object created, its directory), so once ``close`` returns the log survives a crash of the
    machine. A line counts only once its newline is written: a crash can leave at most the last line torn;
    :func:`replay` reports it (line number, byte offset) and skips it, keeping every earlier event, and
    :meth:`open` cuts it off before appending. One writer per file.

    Open it with :meth:`open`; use it as a context manager or call :meth:`close`. ``append`` is the event sink
    the nested-dispatch bridge accepts.
    """

    def __init__(self, path: Path, file: BinaryIO, seq: int, invariants: _Invariants, created: bool) -> None:
        """Use :meth:`open`."""
        self.path = path
        self._file: BinaryIO | None = file
        self._seq = seq
        self._invariants = invariants
        self._created = created
        self._broken = False
        self.repaired: TornLine | None = None
        """The torn last line cut off when the log was opened, if any."""

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> SessionLog:
        """Open (creating it if needed) the log at ``path`` for appending.

        An existing log is read first: a malformed line raises :class:`MalformedLogError` (nothing is appended to
        a corrupt log), and a torn last line is cut off and reported in :attr:`repaired`.
        """
        location = Path(path)
        created = not location.exists()
        file = open(location, "a+b")  # noqa: SIM115 - owned by the SessionLog, closed by close()
        try:
            file.seek(0)
            events, torn, invariants = _read_events(file.read(), os.fspath(location))
            if torn is not None:
                file.truncate(torn.offset)
                file.flush()
                os.fsync(file.fileno())
            file.seek(0, os.SEEK_END)
        except BaseException:
            file.close()
            raise
        log = cls(location, file, len(events), invariants, created)
        log.repaired = torn
        return log

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has run."""
        return self._file is None

    def append(self, event_type: str, data: Any, *, ignorable: bool = False) -> SessionEvent:
        """Append one event: snapshot its data, check it, write its line and flush it; return the event.

        An event of a type outside :data:`KNOWN_EVENT_TYPES` needs ``ignorable=True``, which marks its envelope
        ``"ignorable": true`` so that readers skip it rather than refuse the log. Raises
        :class:`SessionDataError` for data that is not lossless JSON and :class:`InvalidEventError` for an event
        that breaks its shape or a durability invariant, or of an unknown type not marked ignorable; in each case
        nothing is written.
        """
        file = self._file
        if file is None:
            raise ValueError(f"the session log {self.path} is closed")
        if self._broken:
            raise OSError(f"the session log {self.path} failed an earlier write and accepts no more events")
        if not _is_id(event_type):
            raise InvalidEventError("an event type must be a non-empty string")
        if event_type not in KNOWN_EVENT_TYPES and not ignorable:
            raise InvalidEventError(
                f"event type {canonical_json(event_type)} is unknown to the log's readers: "
                "append it with ignorable=True"
            )
        try:
            frozen = snapshot_json(data)
        except NotLosslessJson:
            raise SessionDataError(event_type) from None
        problem = self._invariants.problem(event_type, frozen)
        if problem is not None:
            raise InvalidEventError(problem)
        seq = self._seq + 1
        envelope: dict[str, Any] = {"seq": seq, "type": event_type, "data": frozen}
        if ignorable:
            envelope["ignorable"] = True
        line = canonical_json(envelope) + "\n"
        try:
            file.write(line.encode("utf-8"))
            file.flush()
        except BaseException:
            # a partial line may be on disk now; appending after it would corrupt the log
            self._broken = True
            raise
        self._seq = seq
        self._invariants.record(event_type, frozen)
        return SessionEvent(seq, event_type, frozen)

    def append_tool_call(self, *, turn: int, step: int, call_id: str, name: str, arguments: str) -> SessionEvent:
        """Append ``tool/call`` ``{turn, step, callId, name, arguments}``; ``arguments`` is the raw model text."""
        data = {"turn": turn, "step": step, "callId": call_id, "name": name, "arguments": arguments}
        return self.append(TOOL_CALL, data)

    def append_tool_result(
        self, *, turn: int, step: int, call_id: str, result: ToolResult, message_id: str
    ) -> SessionEvent:
        """Append ``tool/result`` for a final result (see :func:`tool_result_data`)."""
        return self.append(TOOL_RESULT, tool_result_data(turn, step, call_id, result, message_id))

    def close(self) -> None:
        """Flush and fsync the log (and the directory of a log this object created), then close it."""
        file, self._file = self._file, None
        if file is None:
            return
        try:
            file.flush()
            os.fsync(file.fileno())
        finally:
            file.close()
        if self._created:
            _fsync_directory(self.path.parent)

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<SessionLog {os.fspath(self.path)!r} events={self._seq}>"


def _fsync_directory(directory: Path) -> None:
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:  # not every platform opens directories
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


# --- the agent-loop step -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelToolCall:
    """One tool call as the model emitted it: its id, the tool name and the raw argument text."""

    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """What one step's tool calls produced, in model order.

    ``additional_contexts`` are the results' contexts, in order, for the next step's inbox (they are not part
    of the tool-result messages); ``concludes_turn`` is true when any result concluded the turn.
    """

    results: tuple[ToolResult, ...]
    messages: tuple[JsonValue, ...]
    additional_contexts: tuple[JsonValue, ...]
    concludes_turn: bool


def _fresh_message_id(call_id: str) -> str:
    return str(uuid.uuid4())


async def run_tool_calls(
    registry: Registry,
    log: SessionLog,
    calls: Iterable[ModelToolCall],
    *,
    turn: int,
    step: int,
    agent: Any = None,
    signal: AbortSignal | None = None,
    message_id: Callable[[str], str] = _fresh_message_id,
) -> StepOutcome:
    """Execute a model's tool calls one after another and append their durable events in model order.

    For each call: ``tool/call`` (the raw text) is appended when the call starts; the arguments are parsed by
    :func:`parse_model_arguments`; the registry executes the call; ``tool/result`` is appended. A call not yet
    started when ``signal`` is aborted is never dispatched: it gets a ``tool/call`` and a
    ``tool/result`` marked ``ABORTED_BEFORE_DISPATCH``. ``message_id(call_id)`` names each result message
    (a fresh UUID by default).
    """
    results: list[ToolResult] = []
    messages: list[JsonValue] = []
    contexts: list[JsonValue] = []
    for call in calls:
        started = signal is None or not signal.aborted
        log.append_tool_call(turn=turn, step=step, call_id=call.call_id, name=call.name, arguments=call.arguments)
        if started:
            arguments = parse_model_arguments(call.arguments)
            result = await registry.execute(Call(call.call_id, call.name, arguments, signal=signal, agent=agent))
        else:
            result = aborted_result(ABORTED_BEFORE_DISPATCH)
        event = log.append_tool_result(
            turn=turn, step=step, call_id=call.call_id, result=result, message_id=message_id(call.call_id)
        )
        results.append(result)
        messages.append(event.data["message"])
        if result.additional_contexts is not ABSENT:
            contexts.extend(result.additional_contexts)
    return StepOutcome(tuple(results), tuple(messages), tuple(contexts), any(r.concludes_turn is True for r in results))
