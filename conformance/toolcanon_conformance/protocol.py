"""The adapter protocol: NDJSON messages between the kit and an adapter, their schemas, and the adapter loop.

One JSON object per line. The kit writes commands to the adapter's standard input and reads one answer per
``start`` and ``run`` from its standard output (``docs/protocol.md``, section "Adapter protocol")::

    → {"cmd": "start", "version": 1}
    ← {"version": 1, "implementation": {"name": …, "language": …, "version": …, "capabilities": […]}}
    → {"cmd": "run", "seq": 0, "scenario": {…}}
    ← {"seq": 0, "transcript": "<canonical JSON text>"}
      | {"seq": 0, "skipped": true, "message": …, "issue_url": …}
      | {"seq": 0, "errored": true, "context": {…}}
    → {"cmd": "stop"}

The kit side encodes commands and parses answers (raising :mod:`toolcanon_conformance.exceptions`); the
adapter side is :func:`serve`, which turns any :class:`Implementation` into a protocol-speaking process.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterable, Mapping
from functools import cache
from typing import IO, Any, Literal, TypeAlias

from toolcanon_conformance._schemas import load_schema
from toolcanon_conformance._schemas import schema_errors as _schema_errors
from toolcanon_conformance.deepjson import NESTING_LIMIT, TooDeep, loads
from toolcanon_conformance.exceptions import InvalidResponse, VersionMismatch
from toolcanon_conformance.implementation import (
    Errored,
    Implementation,
    ImplementationInfo,
    Outcome,
    Ran,
    Skipped,
    checked_outcome,
)

__all__ = [
    "PROTOCOL_VERSION",
    "SCHEMA_NAMES",
    "MessageKind",
    "UnknownCapability",
    "decode_line",
    "encode",
    "info_from_wire",
    "info_to_wire",
    "known_capabilities",
    "outcome_to_wire",
    "parse_run_response",
    "parse_start_response",
    "resolve_capabilities",
    "run_command",
    "schema",
    "schema_errors",
    "serve",
    "start_command",
    "stop_command",
    "unknown_capabilities",
    "unknown_capabilities_message",
]

#: The version of the protocol this kit speaks. An adapter answering another version is refused.
PROTOCOL_VERSION = 1

MessageKind: TypeAlias = Literal["command", "start-response", "run-response"]

#: The schema file (package data under ``schemas/``) of each kind of message.
SCHEMA_NAMES: dict[MessageKind, str] = {
    "command": "protocol-command.schema.json",
    "start-response": "protocol-start-response.schema.json",
    "run-response": "protocol-run-response.schema.json",
}


# --- schemas -------------------------------------------------------------------------------------------


def schema(kind: MessageKind) -> dict[str, Any]:
    """The JSON Schema of one kind of protocol message."""
    return load_schema(SCHEMA_NAMES[kind])


def schema_errors(kind: MessageKind, message: object) -> list[str]:
    """Every violation of ``message`` against the schema of ``kind``, as ``path: reason`` lines."""
    return _schema_errors(SCHEMA_NAMES[kind], message)


@cache
def known_capabilities() -> tuple[str, ...]:
    """The optional capabilities of the scenario format, as ``scenario.schema.json`` lists them (its only list)."""
    names: list[str] = load_schema("scenario.schema.json")["$defs"]["capability"]["enum"]
    return tuple(sorted(names))


class UnknownCapability(ValueError):
    """A ``--require`` capability that is no capability of the scenario format: a usage error."""

    def __init__(self, capability: str, closest: Iterable[str]) -> None:
        self.capability = capability
        self.closest = tuple(closest)
        hint = f"closest: {', '.join(self.closest)}" if self.closest else f"known: {', '.join(known_capabilities())}"
        super().__init__(f"--require {capability}: no such capability ({hint})")


def resolve_capabilities(requested: Iterable[str]) -> tuple[str, ...]:
    """The ``requested`` capabilities (``--require``), read ignoring case, each once, in order; raises
    :class:`UnknownCapability` for a name the scenario format does not know, before anything runs."""
    from toolcanon_conformance.selection import closest, resolve_names

    known = known_capabilities()
    return resolve_names(requested, known, lambda name, word: UnknownCapability(name, closest(word.lower(), known)))


def unknown_capabilities(capabilities: Iterable[str]) -> list[str]:
    """The names among ``capabilities`` that are no capability of the scenario format, in their order."""
    known = set(known_capabilities())
    return [name for name in capabilities if name not in known]


# --- encoding ------------------------------------------------------------------------------------------


def encode(message: Mapping[str, Any]) -> str:
    """One protocol line (without its newline): compact, ASCII-only JSON, NaN refused."""
    return json.dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode_line(line: str) -> dict[str, Any]:
    """Parse one line an adapter wrote; anything but a JSON object raises :class:`InvalidResponse`.

    An answer is nested at most :data:`~toolcanon_conformance.deepjson.NESTING_LIMIT` levels (a transcript
    of any depth travels as a string); deeper is refused as soon as the parser gets there.
    """
    try:
        message = loads(line, parse_constant=_refuse_constant, max_depth=NESTING_LIMIT)
    except TooDeep as error:
        from toolcanon_conformance.diff import format_path  # imported here: adapters import this module

        where = format_path(error.path[:2])
        raise InvalidResponse(f"nested deeper than {error.limit} levels, in {where}", line=line) from None
    except ValueError as error:
        raise InvalidResponse(f"not JSON: {error}", line=line) from None
    if not isinstance(message, dict):
        raise InvalidResponse(f"not a JSON object but {type(message).__name__}", line=line)
    return message


def start_command(version: int = PROTOCOL_VERSION) -> dict[str, Any]:
    """The ``start`` command."""
    return {"cmd": "start", "version": version}


def run_command(seq: int, scenario: Mapping[str, Any]) -> dict[str, Any]:
    """The ``run`` command of one scenario."""
    return {"cmd": "run", "seq": seq, "scenario": scenario}


def stop_command() -> dict[str, Any]:
    """The ``stop`` command."""
    return {"cmd": "stop"}


def info_to_wire(info: ImplementationInfo) -> dict[str, Any]:
    """The ``implementation`` object of a start response."""
    wire: dict[str, Any] = {
        "name": info.name,
        "language": info.language,
        "version": info.version,
        "capabilities": list(info.capabilities),
    }
    if info.homepage is not None:
        wire["homepage"] = info.homepage
    if info.issues is not None:
        wire["issues"] = info.issues
    return wire


def info_from_wire(wire: Mapping[str, Any]) -> ImplementationInfo:
    """The :class:`ImplementationInfo` of an ``implementation`` object (already checked)."""
    return ImplementationInfo(
        name=wire["name"],
        language=wire["language"],
        version=wire["version"],
        capabilities=tuple(wire["capabilities"]),
        homepage=wire.get("homepage"),
        issues=wire.get("issues"),
    )


def outcome_to_wire(seq: int, outcome: Outcome) -> dict[str, Any]:
    """The run response carrying ``outcome``."""
    if isinstance(outcome, Ran):
        return {"seq": seq, "transcript": outcome.transcript}
    if isinstance(outcome, Skipped):
        skipped: dict[str, Any] = {"seq": seq, "skipped": True, "message": outcome.message}
        if outcome.issue_url is not None:
            skipped["issue_url"] = outcome.issue_url
        return skipped
    return {"seq": seq, "errored": True, "context": dict(outcome.context)}


# --- parsing answers (kit side) ------------------------------------------------------------------------


def _is_str(value: object) -> bool:
    return isinstance(value, str)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_start_response(
    message: dict[str, Any], *, validate: bool = False, line: str | None = None
) -> ImplementationInfo:
    """Check a start response and return the implementation's metadata.

    The version is checked first, so that an adapter of another protocol version is named as such even when
    the rest of its answer has another shape. ``validate`` also checks the message against its JSON Schema,
    and refuses a capability the scenario format does not know (:func:`unknown_capabilities`).
    """
    version = message.get("version")
    if version != PROTOCOL_VERSION or not _is_int(version):
        raise VersionMismatch(PROTOCOL_VERSION, version)
    if validate:
        _raise_schema_errors("start-response", message, line)
    wire = message.get("implementation")
    if not isinstance(wire, dict):
        raise InvalidResponse("start response without an implementation object", line=line)
    for key in ("name", "language", "version"):
        if not _is_str(wire.get(key)):
            raise InvalidResponse(f"implementation.{key} is not a string", line=line)
    capabilities = wire.get("capabilities")
    if not isinstance(capabilities, list) or not all(_is_str(item) for item in capabilities):
        raise InvalidResponse("implementation.capabilities is not a list of strings", line=line)
    unknown = unknown_capabilities(capabilities)
    if validate and unknown:
        raise InvalidResponse(unknown_capabilities_message(unknown), line=line)
    for key in ("homepage", "issues"):
        if key in wire and not _is_str(wire[key]):
            raise InvalidResponse(f"implementation.{key} is not a string", line=line)
    return info_from_wire(wire)


def unknown_capabilities_message(unknown: Iterable[str]) -> str:
    """What to say of capability names the scenario format does not know (a typo skips scenarios unsaid)."""
    names = ", ".join(repr(name) for name in unknown)
    return f"unknown capability {names}: the known ones are {', '.join(known_capabilities())}"


def parse_run_response(
    message: dict[str, Any], seq: int, *, validate: bool = False, line: str | None = None
) -> Outcome:
    """Check a run response to the command numbered ``seq`` and return its outcome.

    A response for another ``seq``, or one that is not exactly one of transcript / skipped / errored, raises
    :class:`InvalidResponse`: such an answer is never taken for a pass. ``validate`` also checks the message
    against its JSON Schema (unknown keys are then refused too).
    """
    if message.get("seq") != seq or not _is_int(message.get("seq")):
        raise InvalidResponse(f"answered seq {message.get('seq')!r} to the run command seq {seq}", line=line)
    if validate:
        _raise_schema_errors("run-response", message, line)
    kinds = [key for key in ("transcript", "skipped", "errored") if key in message]
    if len(kinds) != 1:
        raise InvalidResponse("not exactly one of transcript, skipped, errored", line=line)
    if kinds == ["transcript"]:
        transcript = message["transcript"]
        if not _is_str(transcript):
            raise InvalidResponse("transcript is not a string of canonical JSON text", line=line)
        return Ran(transcript)
    if kinds == ["skipped"]:
        if message["skipped"] is not True or not _is_str(message.get("message")):
            raise InvalidResponse("skipped without skipped: true and a message", line=line)
        issue_url = message.get("issue_url")
        if issue_url is not None and not _is_str(issue_url):
            raise InvalidResponse("issue_url is not a string", line=line)
        return Skipped(message["message"], issue_url)
    context = message.get("context")
    if message["errored"] is not True or not isinstance(context, dict):
        raise InvalidResponse("errored without errored: true and a context object", line=line)
    return Errored(context)


def _raise_schema_errors(kind: MessageKind, message: object, line: str | None) -> None:
    errors = schema_errors(kind, message)
    if errors:
        raise InvalidResponse(f"violates the {kind} schema: " + "; ".join(errors), line=line)


# --- the adapter loop (adapter side) -------------------------------------------------------------------


def serve(
    implementation: Implementation,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
) -> int:
    """Speak the protocol for ``implementation`` until ``stop`` or the end of input; return an exit status.

    Only protocol lines reach ``stdout``: while the implementation runs, anything it prints goes to standard
    error. An exception raised by the implementation answers ``errored`` with its traceback. A line that is not
    a command is reported on standard error and ends the loop with status 2.
    """
    source = sys.stdin if stdin is None else stdin
    sink = sys.stdout if stdout is None else stdout

    def answer(message: Mapping[str, Any]) -> None:
        try:
            line = encode(message)
        except (ValueError, TypeError, RecursionError) as error:
            # An outcome that is not JSON (NaN, an object, a cycle, a depth the encoder cannot reach).
            context = {"kind": "invalid-outcome", "message": f"the outcome cannot be written as JSON: {error}"}
            line = encode({"seq": message.get("seq"), "errored": True, "context": context})
        sink.write(line + "\n")
        sink.flush()

    started = False
    for line in source:
        if not line.strip():
            continue
        try:
            command = loads(line)
        except ValueError:
            command = None
        if not _is_command(command):
            print(f"toolcanon adapter: not a protocol command: {line.strip()[:200]}", file=sys.stderr)
            return 2
        if command["cmd"] == "start":
            with contextlib.redirect_stdout(sys.stderr):
                info = implementation.start()
            started = True
            answer({"version": PROTOCOL_VERSION, "implementation": info_to_wire(info)})
        elif command["cmd"] == "run":
            seq: int = command["seq"]
            if not started:
                answer(outcome_to_wire(seq, Errored({"message": "run before start"})))
                continue
            answer(outcome_to_wire(seq, _run_guarded(implementation, seq, command["scenario"])))
        else:
            break
    with contextlib.redirect_stdout(sys.stderr):
        implementation.stop()
    return 0


def _is_command(command: object) -> bool:
    """What ``protocol-command.schema.json`` says, checked by hand: the adapter's loop must start and run fast."""
    if type(command) is not dict:
        return False
    kind = command.get("cmd")
    if kind == "start":
        version = command.get("version")
        return command.keys() == {"cmd", "version"} and type(version) is int and version >= 1
    if kind == "run":
        seq, scenario = command.get("seq"), command.get("scenario")
        return (
            command.keys() == {"cmd", "seq", "scenario"}
            and type(seq) is int
            and seq >= 0
            and type(scenario) is dict
            and "formatVersion" in scenario
            and "id" in scenario
        )
    return kind == "stop" and command.keys() == {"cmd"}


def _run_guarded(implementation: Implementation, seq: int, scenario: dict[str, Any]) -> Outcome:
    try:
        with contextlib.redirect_stdout(sys.stderr):
            outcome = implementation.run(seq, scenario)
    except Exception as error:
        return Errored.raised(error)
    return checked_outcome(outcome)
