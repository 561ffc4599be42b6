"""The protocol's messages, their schemas, and the adapter loop ``serve``."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from toolcanon_conformance import protocol
from toolcanon_conformance._schemas import load_schema, schema_names
from toolcanon_conformance.exceptions import InvalidResponse, VersionMismatch
from toolcanon_conformance.implementation import Errored, ImplementationInfo, Outcome, Ran, Skipped

INFO = ImplementationInfo("fake", "python", "1.0", ("wrappers", "nested"), homepage="https://example.org")


class Fake:
    """An implementation that answers by the scenario's id, and records its life."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def start(self) -> ImplementationInfo:
        self.events.append("start")
        print("chatter on stdout")  # must not reach the protocol stream
        return INFO

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        self.events.append(f"run {seq}")
        print("more chatter")
        if scenario["id"] == "raises":
            raise RuntimeError("the registry exploded")
        if scenario["id"] == "declines":
            return Skipped("cannot express a cycle", "https://example.org/issues/1")
        if scenario["id"] == "nonsense":
            return "not an outcome"  # type: ignore[return-value]
        return Ran('{"scenario":"' + scenario["id"] + '"}')

    def stop(self) -> None:
        self.events.append("stop")


def serve_lines(*commands: dict[str, Any] | str) -> tuple[int, list[dict[str, Any]], Fake]:
    fake = Fake()
    stdin = io.StringIO("".join((c if isinstance(c, str) else json.dumps(c)) + "\n" for c in commands))
    stdout = io.StringIO()
    status = protocol.serve(fake, stdin, stdout)
    return status, [json.loads(line) for line in stdout.getvalue().splitlines()], fake


def scenario(scenario_id: str) -> dict[str, Any]:
    return {"formatVersion": 1, "id": scenario_id}


def test_every_shipped_schema_is_a_valid_schema() -> None:
    from jsonschema import Draft202012Validator

    names = schema_names()
    assert {"protocol-command.schema.json", "report.schema.json", "baseline.schema.json"} <= set(names)
    for name in names:
        Draft202012Validator.check_schema(load_schema(name))


def test_serve_speaks_the_whole_lifecycle() -> None:
    status, answers, fake = serve_lines(
        protocol.start_command(),
        protocol.run_command(0, scenario("ok")),
        protocol.run_command(1, scenario("declines")),
        protocol.run_command(2, scenario("raises")),
        protocol.run_command(3, scenario("nonsense")),
        protocol.stop_command(),
    )
    assert status == 0
    assert fake.events == ["start", "run 0", "run 1", "run 2", "run 3", "stop"]
    assert answers[0] == {"version": 1, "implementation": protocol.info_to_wire(INFO)}
    assert answers[1] == {"seq": 0, "transcript": '{"scenario":"ok"}'}
    assert answers[2] == {
        "seq": 1,
        "skipped": True,
        "message": "cannot express a cycle",
        "issue_url": "https://example.org/issues/1",
    }
    assert answers[3]["errored"] is True and "the registry exploded" in answers[3]["context"]["traceback"]
    assert answers[4]["errored"] is True and "not an outcome" in answers[4]["context"]["message"]
    assert protocol.schema_errors("start-response", answers[0]) == []
    for answer in answers[1:]:
        assert protocol.schema_errors("run-response", answer) == []


def test_serve_stops_at_the_end_of_input() -> None:
    status, answers, fake = serve_lines(protocol.start_command())
    assert status == 0 and len(answers) == 1 and fake.events == ["start", "stop"]


def test_serve_refuses_a_line_that_is_not_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    status, answers, _ = serve_lines(protocol.start_command(), "hello")
    assert status == 2 and len(answers) == 1
    assert "not a protocol command: hello" in capsys.readouterr().err


def test_serve_answers_errored_to_a_run_before_start() -> None:
    _, answers, _ = serve_lines(protocol.run_command(5, scenario("ok")))
    assert answers == [{"seq": 5, "errored": True, "context": {"message": "run before start"}}]


def test_parse_start_response() -> None:
    wire = {"version": 1, "implementation": protocol.info_to_wire(INFO)}
    assert protocol.parse_start_response(wire, validate=True) == INFO
    with pytest.raises(VersionMismatch) as raised:
        protocol.parse_start_response({"version": 2, "implementation": {}})
    assert raised.value.context()["kind"] == "version-mismatch"
    with pytest.raises(VersionMismatch):
        protocol.parse_start_response({"implementation": protocol.info_to_wire(INFO)})
    with pytest.raises(InvalidResponse, match="capabilities"):
        protocol.parse_start_response(
            {"version": 1, "implementation": {**protocol.info_to_wire(INFO), "capabilities": "all"}}
        )
    with pytest.raises(InvalidResponse, match="schema"):
        protocol.parse_start_response(
            {"version": 1, "implementation": protocol.info_to_wire(INFO), "x": 1}, validate=True
        )


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ({"seq": 4, "transcript": "{}"}, "answered seq 4"),
        ({"seq": True, "transcript": "{}"}, "answered seq True"),
        ({"seq": 3}, "not exactly one"),
        ({"seq": 3, "transcript": {}}, "not a string"),
        ({"seq": 3, "skipped": False, "message": "x"}, "skipped without"),
        ({"seq": 3, "skipped": True}, "skipped without"),
        ({"seq": 3, "errored": True, "context": "x"}, "errored without"),
        ({"seq": 3, "skipped": True, "message": "x", "issue_url": 5}, "issue_url"),
    ],
)
def test_parse_run_response_refuses(message: dict[str, Any], reason: str) -> None:
    with pytest.raises(InvalidResponse, match=reason):
        protocol.parse_run_response(message, 3)


def test_parse_run_response_accepts_each_kind() -> None:
    assert protocol.parse_run_response({"seq": 3, "transcript": "{}"}, 3) == Ran("{}")
    assert protocol.parse_run_response({"seq": 3, "skipped": True, "message": "m"}, 3) == Skipped("m")
    assert protocol.parse_run_response({"seq": 3, "errored": True, "context": {}}, 3, validate=True) == Errored({})


def test_decode_line() -> None:
    assert protocol.decode_line('{"a": 1}') == {"a": 1}
    for line in ("garbage", "[1]", '{"a": NaN}', ""):
        with pytest.raises(InvalidResponse):
            protocol.decode_line(line)


def test_encode_is_one_ascii_line() -> None:
    line = protocol.encode(protocol.run_command(0, {"id": "é\n\ud800"}))
    assert line.isascii() and "\n" not in line
    assert json.loads(line)["scenario"]["id"] == "é\n\ud800"
    with pytest.raises(ValueError):
        protocol.encode({"x": float("nan")})


def test_commands_follow_their_schema() -> None:
    for command in (protocol.start_command(), protocol.run_command(0, scenario("x")), protocol.stop_command()):
        assert protocol.schema_errors("command", command) == []
    assert protocol.schema_errors("command", {"cmd": "dance"})


@pytest.mark.parametrize(
    "command",
    [
        {"cmd": "start", "version": 1},
        {"cmd": "start", "version": 0},
        {"cmd": "start", "version": True},
        {"cmd": "start"},
        {"cmd": "run", "seq": 0, "scenario": {"formatVersion": 1, "id": "x"}},
        {"cmd": "run", "seq": -1, "scenario": {"formatVersion": 1, "id": "x"}},
        {"cmd": "run", "seq": 1, "scenario": {"id": "x"}},
        {"cmd": "run", "seq": 1, "scenario": [], "extra": 1},
        {"cmd": "stop"},
        {"cmd": "stop", "now": True},
        {"cmd": "jump"},
        ["cmd", "stop"],
    ],
)
def test_the_adapter_loop_accepts_exactly_the_schemas_commands(command: object) -> None:
    """The adapter side checks commands by hand (for speed); it must agree with the JSON Schema."""
    from toolcanon_conformance.protocol import _is_command, schema_errors

    assert _is_command(command) == (not schema_errors("command", command))


def test_decode_line_at_any_depth() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    transcript = json.dumps({"formatVersion": 1, "steps": deep})  # a deep transcript travels as a string
    assert protocol.decode_line(json.dumps({"seq": 0, "transcript": transcript}))["transcript"] == transcript
    for line, where in (
        ('{"seq": 0, "errored": true, "context": {"a": ' + deep + "}}", "$.context.a"),
        ('{"seq": 0, "transcript": "{}", "x": ' + deep + "}", "$.x[0]"),
        ("[" * 10_000_000, "$[0][0]"),
    ):
        with pytest.raises(InvalidResponse) as raised:
            protocol.decode_line(line)
        assert raised.value.reason == f"nested deeper than 64 levels, in {where}"
    assert protocol.decode_line('{"a":' * 64 + "1" + "}" * 64)  # 64 levels: the limit itself


def test_the_known_capabilities_are_the_scenario_formats() -> None:
    from toolcanon_conformance.scenario import scenario_schema

    assert set(protocol.known_capabilities()) == set(scenario_schema()["$defs"]["capability"]["enum"])
    assert {"timeout", "wrappers", "first-party-renderers"} <= set(protocol.known_capabilities())
    assert protocol.unknown_capabilities(["wrappers", "wrapers", "nested", "Nested"]) == ["wrapers", "Nested"]


def test_an_unknown_capability_is_refused_only_with_validation() -> None:
    wire = {"version": 1, "implementation": {**protocol.info_to_wire(INFO), "capabilities": ["wrappers", "gards"]}}
    assert protocol.parse_start_response(wire).capabilities == ("wrappers", "gards")
    with pytest.raises(InvalidResponse) as raised:
        protocol.parse_start_response(wire, validate=True)
    assert raised.value.reason == (
        "unknown capability 'gards': the known ones are " + ", ".join(protocol.known_capabilities())
    )


class Unwritable(Fake):
    """Answers outcomes that no JSON encoder can write."""

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        if scenario["id"] == "nan":
            return Errored({"value": float("nan")})
        return super().run(seq, scenario)


def test_serve_answers_errored_for_an_outcome_it_cannot_write() -> None:
    stdin = io.StringIO(
        "\n".join(
            json.dumps(command) for command in (protocol.start_command(), protocol.run_command(0, scenario("nan")))
        )
        + "\n"
    )
    stdout = io.StringIO()
    assert protocol.serve(Unwritable(), stdin, stdout) == 0
    answer = json.loads(stdout.getvalue().splitlines()[1])
    assert answer["seq"] == 0 and answer["errored"] is True
    assert answer["context"]["kind"] == "invalid-outcome"
    assert "cannot be written as JSON" in answer["context"]["message"]


def test_serve_reads_a_command_of_any_depth() -> None:
    deep = {"formatVersion": 1, "id": "ok", "x": "[" * 5000 + "]" * 5000}
    command = json.dumps(protocol.run_command(0, deep)).replace(
        '"x": "' + "[" * 5000 + "]" * 5000 + '"', '"x": ' + "[" * 5000 + "]" * 5000
    )
    status, answers, _ = serve_lines(protocol.start_command(), command)
    assert status == 0 and answers[1] == {"seq": 0, "transcript": '{"scenario":"ok"}'}
