"""Fuzz target ``protocol``: the kit's reading of an adapter's answer line (``toolcanon_conformance.protocol``).

The input is one line as the subprocess adapter receives it (bytes, decoded with replacement, line ending
stripped). ``decode_line`` must return an object or raise :class:`InvalidResponse`; ``parse_start_response``
may add :class:`VersionMismatch`; ``parse_run_response`` must return an outcome or raise
:class:`InvalidResponse`. Every error's ``context()`` must be JSON-compatible, and checking the schema too
(``validate=True``) may only refuse more answers, never fewer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from fuzz import seeds
from fuzz.mutation import JSON_TOKENS
from fuzz.target import ACCEPTED, PropertyViolation, Target, rejected
from toolcanon_conformance import protocol
from toolcanon_conformance.exceptions import AdapterError, InvalidResponse, VersionMismatch
from toolcanon_conformance.implementation import Errored, ImplementationInfo, Outcome, Skipped, checked_outcome

__all__ = ["TARGET", "check"]


def _refused(error: AdapterError) -> str:
    try:
        protocol.encode(error.context())
    except (TypeError, ValueError) as problem:
        raise PropertyViolation(f"{type(error).__name__}.context() is not JSON ({problem})") from None
    return rejected(error)


def _both_ways(parse: Callable[[bool], object]) -> str:
    """Parse without and with the schema: the schema may refuse more, never less."""
    try:
        parse(False)
    except (VersionMismatch, InvalidResponse) as error:
        outcome = _refused(error)
        try:
            parse(True)
        except (VersionMismatch, InvalidResponse) as strict_error:
            _refused(strict_error)
        else:
            raise PropertyViolation(f"validate=True accepts an answer validate=False refuses ({error})") from None
        return outcome
    try:
        parse(True)
    except (VersionMismatch, InvalidResponse) as error:
        return _refused(error)
    return ACCEPTED


def _check_outcome(outcome: Outcome) -> None:
    if checked_outcome(outcome) is not outcome:
        raise PropertyViolation(f"parse_run_response returned a malformed outcome {outcome!r}")


def check(data: bytes) -> str:
    """Decode one answer line and parse it as a start response and as a run response."""
    line = data.decode("utf-8", errors="replace").rstrip("\r\n")
    try:
        message = protocol.decode_line(line)
    except InvalidResponse as error:
        return _refused(error)
    if not isinstance(message, dict):
        raise PropertyViolation(f"decode_line returned {type(message).__name__}")
    started = _both_ways(lambda validate: protocol.parse_start_response(message, validate=validate, line=line))
    seq = message.get("seq")
    seq = seq if type(seq) is int else 0

    def run(validate: bool) -> object:
        outcome = protocol.parse_run_response(message, seq, validate=validate, line=line)
        _check_outcome(outcome)
        return outcome

    ran = _both_ways(run)
    return ACCEPTED if ACCEPTED in (started, ran) else ran  # a valid answer of either kind is accepted


def _answers() -> Iterator[dict[str, Any]]:
    info = ImplementationInfo("toolcanon", "python", "0.1.0", ("sessions", "mcp"), "https://example.org", "x")
    yield {"version": protocol.PROTOCOL_VERSION, "implementation": protocol.info_to_wire(info)}
    yield {"version": 2, "implementation": protocol.info_to_wire(info)}
    for seq, text in enumerate(seeds.golden_texts()[:40]):
        yield {"seq": seq, "transcript": json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)}
    yield protocol.outcome_to_wire(3, Skipped("needs the mcp capability", "https://example.org/issues/1"))
    yield protocol.outcome_to_wire(4, Errored({"kind": "raised", "message": "RuntimeError: boom", "traceback": ""}))
    yield protocol.outcome_to_wire(5, Errored(InvalidResponse("not JSON", line="{").context()))


def _seeds() -> Iterator[bytes]:
    for answer in _answers():
        yield protocol.encode(answer).encode("ascii") + b"\n"


TARGET = Target(
    name="protocol",
    summary="toolcanon_conformance.protocol.decode_line and parse_*_response on a fuzzed answer line",
    check=check,
    seeds=_seeds,
    tokens=JSON_TOKENS,
)
