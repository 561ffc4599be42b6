"""The twins of every scenario keep their case's outcome on the reference, and catch engine-specific bugs."""

from __future__ import annotations

import inspect
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from broken_implementations import BUGS, Broken

from toolcanon import _fused, _schema_deep, jsonvalue
from toolcanon_conformance.adapters.inprocess import InProcess
from toolcanon_conformance.adapters.reference import ReferenceImplementation
from toolcanon_conformance.cli import main
from toolcanon_conformance.implementation import Ran
from toolcanon_conformance.locations import scenarios_dir
from toolcanon_conformance.scenario import load_scenario, scenario_from_data
from toolcanon_conformance.twins import (
    ARGUMENT_TWINS,
    OUTPUT_TWINS,
    SAMPLE,
    THRESHOLDS,
    Layer,
    Twin,
    TwinPlan,
    check_twins,
    extract_cases,
    relation_problems,
    shifted_message,
    twin_plans,
)

SCENARIO_IDS = sorted(path.stem for path in scenarios_dir().glob("*.json"))
SAMPLE_CASE_SIZE = SAMPLE.max_case_size


@cache
def _scenario(scenario_id: str) -> dict[str, Any]:
    return load_scenario(scenarios_dir() / f"{scenario_id}.json").data


@cache
def _reference() -> InProcess:
    return InProcess(ReferenceImplementation())


def _plan(scenario_id: str, **options: Any) -> TwinPlan | None:
    plans = twin_plans([_scenario(scenario_id)], **options)
    return plans[0] if plans else None


def _check(plan: TwinPlan, implementation: Any) -> list[str]:
    report = check_twins(implementation, [plan])
    result = report.results[0]
    assert result.status != "errored", result.message
    return [str(problem) for problem in result.problems]


def test_the_thresholds_are_the_references() -> None:
    constants = {
        "fused-items": inspect.signature(_fused.FusedNormalization).parameters["threshold"].default,
        "fused-table": _fused._UNROLLED_PROPERTIES,
        "fused-schema-depth": _fused._MAX_SCHEMA_DEPTH,
        "closure-height": _schema_deep.CLOSURE_HEIGHT,
        "snapshot-depth": jsonvalue._FAST_DEPTH,
    }
    assert {threshold.name: threshold.value for threshold in THRESHOLDS} == constants


def test_every_threshold_is_crossed_by_twins_and_each_twin_crosses_one() -> None:
    names = {threshold.name for threshold in THRESHOLDS}
    crossed = {name for twin in (*OUTPUT_TWINS, *ARGUMENT_TWINS) for name in twin.crosses}
    assert crossed == names
    assert all(twin.crosses for twin in OUTPUT_TWINS)
    for twin in OUTPUT_TWINS:
        depth = sum(layer.size for layer in twin.layers if layer.kind in ("nest", "chain"))
        wide = max((layer.size for layer in twin.layers if layer.kind.startswith("wide")), default=0)
        if "snapshot-depth" in twin.crosses:
            assert depth > jsonvalue._FAST_DEPTH
        if "closure-height" in twin.crosses:
            assert depth > _schema_deep.CLOSURE_HEIGHT
        if "fused-items" in twin.crosses:
            assert wide >= 64
        if "fused-table" in twin.crosses:
            assert any(
                layer.kind == "wide-object" and layer.size > _fused._UNROLLED_PROPERTIES for layer in twin.layers
            )


def test_a_twin_wraps_schema_and_value_alike() -> None:
    twin = Twin("t", (Layer("wide-object", 2), Layer("chain", 2), Layer("nest", 1)), ())
    assert twin.prefixes() == [("p0", "k", "k", 0), ("p1", "k", "k", 0)]
    chain = {"type": "object", "properties": {"k": {"$generate": "nest", "depth": 1, "in": "object", "key": "items",
                                                     "with": {"type": "array"}, "leaf": {"type": "integer"}}},
             "required": ["k"], "additionalProperties": False}  # fmt: skip
    chain = {"type": "object", "properties": {"k": chain}, "required": ["k"], "additionalProperties": False}
    assert twin.wrap_schema({"type": "integer"}, dsl=False) == {
        "type": "object",
        "properties": {"$generate": "object", "count": 2, "key": "p", "value": chain},
        "required": ["p0", "p1"],
        "additionalProperties": False,
    }
    assert twin.wrap_value(5) == {
        "$generate": "object",
        "count": 2,
        "key": "p",
        "value": {"$generate": "nest", "depth": 2, "in": "object", "key": "k", "leaf": {
            "$generate": "nest", "depth": 1, "in": "array", "leaf": 5}},
    }  # fmt: skip


def test_shifted_message_writes_each_violation_under_each_copy() -> None:
    message = 'tool "c0" returned invalid output: missing required property "value.a"; "value.b[0]" must be a string'
    assert shifted_message(message, [(0,), (1,)], "output", "c0-w") == (
        'tool "c0-w" returned invalid output: missing required property "value[0].a"; "value[0].b[0]" must be a '
        'string; missing required property "value[1].a"; "value[1].b[0]" must be a string'
    )
    closed = 'tool "c0" returned invalid output: "value" must match exactly one oneOf branch (matched 2); "value.x" is '
    closed += "not a declared property (additionalProperties: false)"
    assert shifted_message(closed, [("k", "k")], "output", "d") == (
        'tool "d" returned invalid output: "value.k.k" must match exactly one oneOf branch (matched 2); "value.k.k.x" '
        "is not a declared property (additionalProperties: false)"
    )
    lossless = 'tool "c0" returned invalid output: value is not lossless JSON'
    assert shifted_message(lossless, [(0,), (1,)], "output", "t") == 'tool "t" returned invalid output: ' + (
        "value is not lossless JSON"
    )


def test_shifted_message_writes_arguments_from_the_empty_root() -> None:
    message = 'invalid arguments: "arguments" must be an object'
    assert shifted_message(message, [("k", 0, 0)], "arguments", "x") == 'invalid arguments: "k[0][0]" must be an object'
    message = 'invalid arguments: missing required property "a"; "b.c" must be one of ["x"]'
    assert shifted_message(message, [("k", "p0")], "arguments", "x") == (
        'invalid arguments: missing required property "k.p0.a"; "k.p0.b.c" must be one of ["x"]'
    )
    whole = "tool execution arguments must be losslessly JSON-serializable"
    assert shifted_message(whole, [("k",)], "arguments", "x") == whole
    assert shifted_message('invalid arguments: "a; b" must be a string', [("k",)], "arguments", "x") is None


def test_cases_come_from_bodies_arguments_and_hooks() -> None:
    cases = extract_cases(_scenario("norm-fused-threshold"))
    origins = {case.origin for case in cases}
    assert "$.tools.ints.body.value" in origins
    assert "$.hooks[0].action.value" in origins
    assert any(case.target == "arguments" for case in cases)
    returned = extract_cases(_scenario("val-deep-fallback-inside"))
    assert {case.origin for case in returned if case.target == "output"} >= {"$.steps[0].call.arguments.v"}


def _sampled(scenario_id: str) -> TwinPlan | None:
    plans = SAMPLE.plans([_scenario(scenario_id)])
    return plans[0] if plans else None


@pytest.mark.parametrize("scenario_id", SCENARIO_IDS)
def test_the_twins_of_a_scenario_keep_its_outcomes_on_the_reference(scenario_id: str) -> None:
    # each case gets one of its twins, the next in turn: over the suite every twin runs on about a hundred cases
    plan = _sampled(scenario_id)
    if plan is None:
        return  # no value of this scenario is normalized against a schema
    if SCENARIO_IDS.index(scenario_id) % 8 == 0:  # the generator is one: a part of its documents stands for all
        scenario_from_data(plan.scenario, f"twins of {scenario_id}")
    assert _check(plan, _reference()) == []


@pytest.mark.thorough
@pytest.mark.parametrize("scenario_id", SCENARIO_IDS)
def test_every_twin_of_a_scenario_keeps_its_outcomes_on_the_reference(scenario_id: str) -> None:
    plan = _plan(scenario_id)
    if plan is None:
        return
    scenario_from_data(plan.scenario, f"twins of {scenario_id}")
    assert _check(plan, _reference()) == []


def test_the_sample_crosses_every_threshold() -> None:
    crossed: set[str] = set()
    for plan in SAMPLE.plans([_scenario(scenario_id) for scenario_id in SCENARIO_IDS]):
        crossed.update(name for pair in plan.pairs for name in pair.twin.crosses)
    assert crossed == {threshold.name for threshold in THRESHOLDS}


CAUGHT = (
    ("fused-skips-additional-properties", "val-nonascii-keys", "wide-array"),
    ("fused-takes-arrays-for-objects", "twin-fused-array-for-object", "wide-array"),
    ("fused-accepts-booleans-as-integers", "val-integer-and-bool", "wide-object"),
    ("deep-schema-engine-stops-at-200-levels", "args-invalid", "nested-401"),
)
"""Bugs of one engine, each with a scenario and the twin of its cases that catches it: the case alone stays on the
sound engines."""


@pytest.mark.parametrize(("bug_name", "scenario_id", "twin_name"), CAUGHT, ids=[bug for bug, _, _ in CAUGHT])
def test_the_twins_catch_a_bug_of_one_engine(bug_name: str, scenario_id: str, twin_name: str) -> None:
    bug = next(bug for bug in BUGS if bug.name == bug_name)
    chosen = {
        "output_twins": [twin for twin in OUTPUT_TWINS if twin.name == twin_name],
        "argument_twins": [twin for twin in ARGUMENT_TWINS if twin.name == twin_name],
    }
    plan = _plan(scenario_id, max_case_size=SAMPLE_CASE_SIZE, **chosen)
    assert plan is not None
    assert _check(plan, _reference()) == []
    problems = _check(plan, InProcess(Broken(bug)))
    assert problems, f"the {twin_name} twins of {scenario_id} do not catch {bug_name}"


def _run(plan: TwinPlan) -> str:
    reference = InProcess(ReferenceImplementation())
    reference.start()
    try:
        outcome = reference.run(1, plan.scenario)
    finally:
        reference.stop()
    assert isinstance(outcome, Ran)
    transcript = outcome.transcript
    return transcript


@pytest.mark.parametrize(
    ("value", "change", "what"),
    [
        ([1, "x"], lambda result: result["error"].update(message=result["error"]["message"].rsplit("; ", 1)[0]),
         "the error's message"),
        ([1, "x"], lambda result: result["error"].update(info={"name": "Error"}), "the error's info"),
        ({"b": 1, "a": 2}, lambda result: result["value"][1].update(b=result["value"][1].pop("b")),
         "the copy at value[1], at the value's keys"),
        ({"b": 1, "a": 2}, lambda result: result["value"].append(result["value"][0]), "the value's shape"),
        ({"b": 1, "a": 2}, lambda result: result.update(isError=True, error={"message": "no"}), "the outcome"),
    ],
)  # fmt: skip
def test_the_relation_fails_a_twin_that_parts_from_its_case(value: Any, change: Any, what: str) -> None:
    schema = {"type": "array", "items": {"type": "integer"}} if isinstance(value, list) else {"type": "object"}
    scenario = {
        "formatVersion": 1,
        "id": "s",
        "tools": {"t": {"parameters": {}, "output": {"rawSchema": schema, "render": {"kind": "json"}},
                        "body": {"kind": "return", "value": value}}},
        "steps": [{"id": "t", "call": {"name": "t", "arguments": {}}}],
    }  # fmt: skip
    twin = Twin("wide", (Layer("wide-array", 3),), ())
    plans = twin_plans([scenario], output_twins=[twin], argument_twins=[])
    assert len(plans) == 1 and len(plans[0].pairs) == 1
    transcript = _run(plans[0])
    assert relation_problems(plans[0], transcript) == []
    document = json.loads(transcript)
    change(document["steps"][plans[0].pairs[0].step]["result"])
    assert [problem.what for problem in relation_problems(plans[0], json.dumps(document))] == [what]


# --- toolcanon twins ---------------------------------------------------------------------------------------

BROKEN_FILE = Path(__file__).resolve().parent / "broken_implementations.py"
MISBEHAVING = Path(__file__).resolve().parent / "misbehaving_adapter.py"


def test_the_command_passes_the_reference_and_fails_a_broken_walk(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["twins", "--sample", "-k", "val-object-order"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("toolcanon ") and "PASS: 1 passed, 0 failed, 0 errored, 0 skipped: " in out
    broken = f"{BROKEN_FILE}:fused_skips_additional_properties"
    assert main(["twins", "--impl", broken, "-k", "val-nonascii-keys"]) == 1
    out = capsys.readouterr().out
    assert "twins of val-nonascii-keys failed: 3 of " in out
    assert "c3-wide-array (twin of val-nonascii-keys $.tools.undeclared.body.value): the outcome: expected " in out
    assert "is not a declared property (additionalProperties: false), got a success" in out
    assert out.rstrip().splitlines()[-1].startswith("FAIL: 0 passed, 1 failed, 0 errored, 0 skipped: ")


@pytest.mark.parametrize(
    ("arguments", "line"),
    [
        (
            ["-k", "no-such-scenario"],
            "no value of the selected scenarios is normalized against a schema: nothing to twin",
        ),
        (["--rule", "R-NOPE-1"], "--rule R-NOPE-1: no such rule"),
        (["--impl", "a:b", "--impl-cmd", "c"], "one implementation at a time: --impl a:b and --impl-cmd c given"),
        (["--impl-cmd", f"{sys.executable} {MISBEHAVING} wrong-version", "-k", "val-object-order"], "cannot start"),
    ],
)
def test_the_command_says_a_usage_error_in_one_line(
    arguments: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["twins", *arguments]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("toolcanon twins: ") and line in captured.err
    assert len(captured.err.strip().splitlines()) == 1
