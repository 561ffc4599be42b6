"""Twins past every threshold: a scenario's values, nested deeper and widened, must keep their outcome.

The reference runs one semantics on several engines, each taking over past a threshold of its own
(:data:`THRESHOLDS`): the generated walk once a tool has normalized enough items, its table loop for wide
objects and its schema depth, the iterative validator for tall schemas, the iterative snapshot for deep values.
An implementation may have engines and thresholds of its own. Whatever they are, a value and its schema wrapped
in more levels, or copied many times into one array or object, must give the same outcome *modulo paths*:

- a success whose value holds, at each copy's place, the value itself (its key order included);
- or the same failure (the same error name and code) whose violations are the value's own, each path written
  under the copy's prefix, copy after copy in walk order (R-VAL-8); a value that is not lossless JSON, or
  arguments that are not, fail with their one message whatever the copies;
- a schema that does not register does not register wrapped either, with the same error.

:func:`twin_plans` reads each scenario's *cases* (a tool's output schema with a value it normalizes: a body's
``return`` value, a ``return-arg`` argument, an ``accept-value`` hook's value; a define_tool tool's parameters with
a call's arguments) and builds one scenario per source scenario holding every case as it is and its twins
(:data:`OUTPUT_TWINS`, :data:`ARGUMENT_TWINS`); :func:`relation_problems` checks an implementation's transcript of
that scenario against the relation, and :func:`check_twins` does both for an implementation. The twin
scenarios need no golden: the case's own outcome, from the same implementation, is the oracle.
"""

from __future__ import annotations

import json
import re
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

from toolcanon_conformance.deepjson import NESTING_LIMIT, first_too_deep, loads
from toolcanon_conformance.display import PLAIN, Style
from toolcanon_conformance.generate import MAX_SIZE
from toolcanon_conformance.implementation import Errored, Implementation, ImplementationInfo, Ran, Skipped

__all__ = [
    "ARGUMENT_TWINS",
    "EVERY_TWIN",
    "OUTPUT_TWINS",
    "PORTABLE_EXOTIC_KINDS",
    "SAMPLE",
    "THRESHOLDS",
    "Case",
    "Layer",
    "Problem",
    "Sample",
    "Threshold",
    "Twin",
    "TwinPlan",
    "TwinReport",
    "TwinResult",
    "check_twins",
    "extract_cases",
    "relation_problems",
    "shifted_message",
    "twin_plans",
    "twins_text",
]

PathElement: TypeAlias = str | int
Prefix: TypeAlias = tuple[PathElement, ...]
Target: TypeAlias = Literal["output", "arguments"]


@dataclass(frozen=True, slots=True)
class Threshold:
    """One place where the reference switches engines; ``constant`` names where it is defined."""

    name: str
    value: int
    constant: str
    what: str


THRESHOLDS: Final[tuple[Threshold, ...]] = (
    Threshold(
        "fused-items",
        64,
        "toolcanon._fused.FusedNormalization (threshold)",
        "a tool takes the generated walk once it has normalized this many items (1 per value, plus the length of "
        "a root list or dict)",
    ),
    Threshold(
        "fused-table",
        32,
        "toolcanon._fused._UNROLLED_PROPERTIES",
        "the generated walk checks an object of more properties by a loop over a table",
    ),
    Threshold(
        "fused-schema-depth",
        64,
        "toolcanon._fused._MAX_SCHEMA_DEPTH",
        "a schema with containers nested deeper gets no generated walk: the step-by-step path decides",
    ),
    Threshold(
        "closure-height",
        100,
        "toolcanon._schema_deep.CLOSURE_HEIGHT",
        "a schema taller than this is validated by the iterative engine, which hands the closures the subtrees "
        "short enough",
    ),
    Threshold(
        "snapshot-depth",
        400,
        "toolcanon.jsonvalue._FAST_DEPTH",
        "a value nested deeper is copied, checked and frozen by the iterative walk",
    ),
)
"""The reference's engine switches, each a twin crosses (``conformance/tests/test_twins.py`` keeps the values
equal to the reference's constants)."""

PORTABLE_EXOTIC_KINDS: Final = frozenset(
    {
        "nan",
        "infinity",
        "negative-infinity",
        "negative-zero",
        "cycle",
        "opaque-object",
        "function",
        "lone-surrogate",
        "dict-subclass",
        "list-subclass",
    }
)
"""The exotic kinds both columns of the format express (Python and JavaScript): a case holding another kind is
left out, so that a twin scenario is never skipped whole for one value."""

MAX_CASE_SIZE: Final = 2_000
"""The default bound of :func:`twin_plans`: a case whose value or schema expands to more values than this is left
out, being large or deep already, past the thresholds by itself (a wide twin of it would cost sixty-five times
as much)."""

_COPIES: Final = 65
_NOT_LOSSLESS: Final = "value is not lossless JSON"
_ARGUMENTS_NOT_LOSSLESS: Final = "tool execution arguments must be losslessly JSON-serializable"
_INVALID_ARGUMENTS: Final = "invalid arguments: "
_OUTPUT_PREFIX: Final = re.compile(r'tool "(?P<name>[^"]*)" returned invalid output: ')
_VIOLATION_FORMS: Final = (
    re.compile(r'(?P<head>)"(?P<path>.*)"(?P<tail> must match exactly one oneOf branch \(matched \d+\))'),
    re.compile(r'(?P<head>)"(?P<path>.*)"(?P<tail> is not a declared property \(additionalProperties: false\))'),
    re.compile(r'(?P<head>missing required property )"(?P<path>.*)"(?P<tail>)'),
    re.compile(r'(?P<head>)"(?P<path>.*)"(?P<tail> must be .*)'),
)
# the forms whose path names the node itself (R-VAL-1: the arguments root is written "arguments" there)
_NODE_FORMS: Final = frozenset({0, 3})


# --- twins ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Layer:
    """One wrapping: ``nest`` (``size`` arrays), ``chain`` (``size`` closed objects of one required key ``k``),
    ``wide-array`` (an array of ``size`` copies) or ``wide-object`` (a closed object of ``size`` required
    properties ``p0`` … holding one copy each)."""

    kind: Literal["nest", "chain", "wide-array", "wide-object"]
    size: int

    def prefixes(self) -> list[Prefix]:
        """The path from this layer's outside to each copy inside it."""
        if self.kind == "nest":
            return [(0,) * self.size]
        if self.kind == "chain":
            return [("k",) * self.size]
        if self.kind == "wide-array":
            return [(index,) for index in range(self.size)]
        return [(f"p{index}",) for index in range(self.size)]

    def wrap_schema(self, schema: Any, dsl: bool) -> Any:
        """``schema`` (a raw schema, or a DSL node when ``dsl``) wrapped in this layer."""
        if self.kind == "nest":
            array = {"type": "array"}
            return {
                "$generate": "nest",
                "depth": self.size,
                "in": "object",
                "key": "items",
                "with": array,
                "leaf": schema,
            }
        if self.kind == "wide-array":
            return {"type": "array", "items": schema}
        names = [name for (name,) in self.prefixes()] if self.kind == "wide-object" else ["k"]
        if dsl:
            # in the DSL a property is required by its own node, which a generator tag cannot carry
            child = {**schema, "required": True} if "$generate" not in schema else schema
            properties: Any = {"k": child}
            if self.kind == "wide-object":
                properties = {"$generate": "object", "count": self.size, "key": "p", "value": child}
            wrapped: Any = {"type": "object", "properties": properties, "additionalProperties": False}
        else:
            properties = {"k": schema}
            if self.kind == "wide-object":
                properties = {"$generate": "object", "count": self.size, "key": "p", "value": schema}
            wrapped = {"type": "object", "properties": properties, "required": names, "additionalProperties": False}
        if self.kind == "chain" and self.size > 1:
            return Layer("chain", self.size - 1).wrap_schema(wrapped, dsl)
        return wrapped

    def wrap_value(self, value: Any) -> Any:
        """``value`` wrapped in this layer (generator tags stand for the copies)."""
        if self.kind == "nest":
            return {"$generate": "nest", "depth": self.size, "in": "array", "leaf": value}
        if self.kind == "chain":
            return {"$generate": "nest", "depth": self.size, "in": "object", "key": "k", "leaf": value}
        if self.kind == "wide-array":
            return {"$generate": "repeat", "count": self.size, "item": value}
        return {"$generate": "object", "count": self.size, "key": "p", "value": value}


@dataclass(frozen=True, slots=True)
class Twin:
    """A case wrapped in ``layers`` (outermost first), crossing the thresholds named in ``crosses``."""

    name: str
    layers: tuple[Layer, ...]
    crosses: tuple[str, ...]

    def prefixes(self) -> list[Prefix]:
        """The path from the twin's root to each copy of the case's value, in walk order."""
        found: list[Prefix] = [()]
        for layer in self.layers:
            found = [outer + inner for outer in found for inner in layer.prefixes()]
        return found

    def wrap_schema(self, schema: Any, dsl: bool) -> Any:
        """The case's schema wrapped in every layer."""
        for layer in reversed(self.layers):
            schema = layer.wrap_schema(schema, dsl)
        return schema

    def wrap_value(self, value: Any) -> Any:
        """The case's value wrapped in every layer."""
        for layer in reversed(self.layers):
            value = layer.wrap_value(value)
        return value


OUTPUT_TWINS: Final[tuple[Twin, ...]] = (
    Twin("wide-array", (Layer("wide-array", _COPIES),), ("fused-items",)),
    Twin("wide-object", (Layer("wide-object", _COPIES),), ("fused-items", "fused-table")),
    Twin("wide-nested-40", (Layer("wide-array", _COPIES), Layer("nest", 40)), ("fused-items",)),
    Twin("wide-nested-70", (Layer("wide-array", _COPIES), Layer("nest", 70)), ("fused-items", "fused-schema-depth")),
    Twin("wide-chain-3", (Layer("wide-object", 33), Layer("chain", 3)), ("fused-table",)),
    Twin("nested-101", (Layer("nest", 101),), ("fused-schema-depth", "closure-height")),
    Twin("nested-401", (Layer("nest", 401),), ("fused-schema-depth", "closure-height", "snapshot-depth")),
    Twin("chain-nested-401", (Layer("chain", 3), Layer("nest", 401)), ("closure-height", "snapshot-depth")),
    Twin("nested-chain-401", (Layer("nest", 401), Layer("chain", 3)), ("closure-height", "snapshot-depth")),
)
"""The twins of an output case: wide ones take the generated walk at their first call; deep ones the iterative
validator and snapshot; ``wide-object``'s 65 properties and ``wide-chain-3``'s 33 the walk's table loop."""

ARGUMENT_TWINS: Final[tuple[Twin, ...]] = (
    Twin("wide-object", (Layer("wide-object", _COPIES),), ()),
    Twin("nested-101", (Layer("nest", 101),), ("closure-height",)),
    Twin("nested-401", (Layer("nest", 401),), ("closure-height", "snapshot-depth")),
    Twin("chain-nested-401", (Layer("chain", 3), Layer("nest", 401)), ("closure-height", "snapshot-depth")),
)
"""The twins of an arguments case, under a parameter ``k`` (arguments never take the generated walk)."""


# --- cases -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Case:
    """A schema and a value it judges, read from a scenario: ``origin`` is where the value stands there.

    ``target`` ``output``: ``schema`` is a raw output schema (a DSL node when ``dsl``); ``arguments``: a
    define_tool property map, its arguments ``value``.
    """

    scenario: str
    origin: str
    target: Target
    schema: Any
    dsl: bool
    value: Any


def _is_registry_fixture(fixture: Any) -> bool:
    return (
        isinstance(fixture, Mapping)
        and "body" in fixture
        and fixture.get("register", True) is not False
        and not fixture.get("registerError")
    )


def _output_schema(fixture: Mapping[str, Any]) -> tuple[Any, bool] | None:
    output = fixture.get("output")
    if not isinstance(output, Mapping):
        return None
    if "rawSchema" in output:
        return output["rawSchema"], False
    if "schema" in output:
        return output["schema"], True
    if "rawParameters" in fixture:
        return None  # a raw definition without an output schema fails its output check
    return {"type": "json"}, True


def extract_cases(scenario: Mapping[str, Any]) -> list[Case]:
    """Every case of ``scenario``, in document order, each once (the same schema and value read twice is one)."""
    scenario_id = str(scenario["id"])
    tools = scenario.get("tools", {})
    fixtures: dict[str, Mapping[str, Any]] = {}
    for key, fixture in tools.items():
        if _is_registry_fixture(fixture):
            fixtures.setdefault(str(fixture.get("name", key)), fixture)
    calls = [
        (index, step["id"], step["call"])
        for index, step in enumerate(scenario.get("steps", ()))
        if isinstance(step.get("call"), Mapping)
    ]
    found: list[Case] = []
    for key, fixture in tools.items():
        if not _is_registry_fixture(fixture):
            continue
        name = str(fixture.get("name", key))
        output = _output_schema(fixture)
        body = fixture["body"]
        if output is not None and body.get("kind") == "return":
            found.append(Case(scenario_id, f"$.tools.{key}.body.value", "output", output[0], output[1], body["value"]))
        if output is not None and body.get("kind") == "return-arg":
            for index, _, call in calls:
                arguments = call.get("arguments")
                if call.get("name") == name and isinstance(arguments, Mapping) and body["arg"] in arguments:
                    origin = f"$.steps[{index}].call.arguments.{body['arg']}"
                    found.append(Case(scenario_id, origin, "output", output[0], output[1], arguments[body["arg"]]))
        if "rawParameters" not in fixture:
            parameters = fixture.get("parameters", {})
            for index, _, call in calls:
                if call.get("name") == name and "arguments" in call:
                    origin = f"$.steps[{index}].call.arguments"
                    found.append(Case(scenario_id, origin, "arguments", parameters, True, call["arguments"]))
    for index, hook in enumerate(scenario.get("hooks", ())):
        action = hook.get("action", {})
        if hook.get("stage") != "post-execute" or action.get("kind") != "accept-value":
            continue
        named = hook.get("steps")
        for _, step_id, call in calls:
            fixture = fixtures.get(str(call.get("name")))
            output = _output_schema(fixture) if fixture is not None else None
            if output is not None and (named is None or step_id in named):
                origin = f"$.hooks[{index}].action.value"
                found.append(Case(scenario_id, origin, "output", output[0], output[1], action["value"]))
    unique: dict[str, Case] = {}
    for case in found:
        unique.setdefault(json.dumps([case.target, case.dsl, case.schema, case.value], ensure_ascii=False), case)
    return list(unique.values())


def _size(node: Any) -> int:
    """How many values ``node`` expands to, generator tags counted as they expand (capped above the bound)."""
    if isinstance(node, list):
        return min(1 + sum(_size(item) for item in node), MAX_SIZE + 1)
    if isinstance(node, str):
        return 1 + len(node)
    if not isinstance(node, dict):
        return 1
    kind = node.get("$generate")
    if kind == "nest":
        level = 1 + sum(_size(item) for item in node.get("with", {}).values())
        return min(int(node["depth"]) * level + _size(node["leaf"]), MAX_SIZE + 1)
    if kind == "repeat":
        return min(1 + int(node["count"]) * _size(node["item"]), MAX_SIZE + 1)
    if kind == "object":
        return min(1 + int(node["count"]) * (1 + _size(node["value"])), MAX_SIZE + 1)
    if kind == "string":
        return int(node["length"])
    if isinstance(node, dict) and not node:
        return 1
    return min(1 + sum(_size(item) for item in node.values()), MAX_SIZE + 1)


def _exotic_kinds(node: Any) -> Iterator[str]:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "$exotic" in item:
                yield str(item["$exotic"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _comparable(case: Case, max_size: int) -> bool:
    if _size(case.value) > max_size or _size(case.schema) > max_size:
        return False
    if any(kind not in PORTABLE_EXOTIC_KINDS for kind in _exotic_kinds([case.schema, case.value])):
        return False
    if case.target == "arguments":
        if not isinstance(case.schema, dict) or "$generate" in case.schema:
            return False
        # the arguments root and an empty key under it are both written "arguments" (R-VAL-1): no prefix undoes that
        if isinstance(case.value, dict) and ("" in case.value or "arguments" in case.value):
            return False
        return "" not in case.schema and "arguments" not in case.schema
    return isinstance(case.schema, dict)


# --- plans --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pair:
    """One twin of one case: the steps (and tools) ``base`` and ``twin`` of the plan's scenario."""

    case: Case
    twin: Twin
    base: str
    step: str


@dataclass(frozen=True, slots=True)
class TwinPlan:
    """The twin scenario of one source scenario, and the pairs of steps whose outcomes the relation ties."""

    source: str
    scenario: dict[str, Any]
    pairs: tuple[Pair, ...]
    cases: tuple[Case, ...]


_RENDER: Final = {"kind": "constant", "content": [{"type": "text", "text": "twin"}]}


def _fixture(case: Case, schema: Any, value: Any) -> tuple[dict[str, Any], Any]:
    """The tool of a case (or of a twin) and the arguments its call sends."""
    if case.target == "output":
        output = {"schema" if case.dsl else "rawSchema": schema, "render": _RENDER}
        return {"parameters": {}, "output": output, "body": {"kind": "return", "value": value}}, {}
    return {"parameters": schema, "output": {"render": _RENDER}, "body": {"kind": "return", "value": "ran"}}, value


def _argument_node(parameters: Any) -> dict[str, Any]:
    return {"type": "object", "properties": parameters, "additionalProperties": True}


def _twin_fixture(case: Case, twin: Twin) -> tuple[dict[str, Any], Any]:
    if case.target == "output":
        return _fixture(case, twin.wrap_schema(case.schema, case.dsl), twin.wrap_value(case.value))
    parameters = {"k": twin.wrap_schema(_argument_node(case.schema), True)}
    return _fixture(case, parameters, {"k": twin.wrap_value(case.value)})


def twin_plans(
    scenarios: Iterable[Mapping[str, Any]],
    *,
    output_twins: Sequence[Twin] = OUTPUT_TWINS,
    argument_twins: Sequence[Twin] = ARGUMENT_TWINS,
    max_case_size: int = MAX_CASE_SIZE,
    twins_per_case: int | None = None,
    max_cases: int | None = None,
) -> list[TwinPlan]:
    """One plan per scenario that has a case to twin (:func:`extract_cases`), in the scenarios' order.

    Left out: cases larger than ``max_case_size`` values (schema or value), cases holding exotic kinds outside
    :data:`PORTABLE_EXOTIC_KINDS`, arguments with a key ``""`` or ``arguments`` (whose paths no prefix tells
    apart from the root's), and twins that would nest the scenario document deeper than its limit.
    ``twins_per_case`` ``n`` gives each case only ``n`` of its twins, the next ``n`` in turn from one case to the
    next (starting from a turn its scenario's id gives), so that a sample still crosses every threshold;
    ``max_cases`` keeps only the first cases of each scenario. A scenario's twins that would expand past the
    format's bound are split over several plans (``twins-<id>``, ``twins-<id>.2``, …).
    """
    plans: list[TwinPlan] = []
    for scenario in scenarios:
        source = str(scenario["id"])
        cases = [case for case in extract_cases(scenario) if _comparable(case, max_case_size)][:max_cases]
        builder = _PlanBuilder(source)
        turn = zlib.crc32(source.encode("utf-8", "surrogatepass"))
        for case in cases:
            chosen = list(output_twins if case.target == "output" else argument_twins)
            if twins_per_case is not None and chosen:
                start = turn % len(chosen)
                chosen = (chosen[start:] + chosen[:start])[:twins_per_case]
                turn += twins_per_case
            base = _fixture(case, case.schema, case.value)
            if _too_deep(*base):
                continue
            twins = [(twin, _twin_fixture(case, twin)) for twin in chosen]
            twins = [(twin, fixture) for twin, fixture in twins if not _too_deep(*fixture)]
            chosen = [twin for twin, _ in twins]
            fixtures = [base, *(fixture for _, fixture in twins)]
            size = sum(_size([fixture, arguments]) for fixture, arguments in fixtures)
            if size > _PLAN_SIZE or not chosen:
                continue
            if builder.size + size > _PLAN_SIZE:
                plans.extend(builder.plan())
                builder = _PlanBuilder(source, builder.part + 1)
            builder.add(case, chosen, fixtures, size)
        plans.extend(builder.plan())
    return plans


_PLAN_SIZE: Final = MAX_SIZE // 2
"""The most a plan's scenario may expand to (the format's bound, halved for what the estimate leaves out)."""


def _too_deep(fixture: Any, arguments: Any) -> bool:
    # a fixture stands 2 levels deep in its scenario, a call's arguments 4
    return (
        first_too_deep(fixture, NESTING_LIMIT - 2) is not None
        or first_too_deep(arguments, NESTING_LIMIT - 4) is not None
    )


class _PlanBuilder:
    """The tools, steps and pairs of one plan, as cases are added."""

    def __init__(self, source: str, part: int = 1) -> None:
        self.source = source
        self.part = part
        self.tools: dict[str, Any] = {}
        self.steps: list[dict[str, Any]] = []
        self.pairs: list[Pair] = []
        self.cases: list[Case] = []
        self.size = 0

    def add(self, case: Case, twins: Sequence[Twin], fixtures: Sequence[tuple[Any, Any]], size: int) -> None:
        base = f"c{len(self.cases)}"
        self.cases.append(case)
        self.size += size
        keys = [base, *(f"{base}-{twin.name}" for twin in twins)]
        for key, (fixture, arguments) in zip(keys, fixtures, strict=True):
            self.tools[key] = fixture
            self.steps.append({"id": key, "call": {"name": key, "arguments": arguments}})
        self.pairs.extend(Pair(case, twin, base, key) for twin, key in zip(twins, keys[1:], strict=True))

    def plan(self) -> list[TwinPlan]:
        if not self.pairs:
            return []
        suffix = "" if self.part == 1 else f".{self.part}"
        document = {
            "formatVersion": 1,
            "id": f"twins-{self.source}{suffix}",
            "description": f"The values of {self.source} and their twins past every threshold.",
            "requires": ["generated-values"],
            "tools": self.tools,
            "steps": self.steps,
        }
        return [TwinPlan(self.source, document, tuple(self.pairs), tuple(self.cases))]


# --- the relation ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Problem:
    """A twin whose outcome is not its case's modulo paths: ``step`` the twin's, ``what`` where they part."""

    step: str
    origin: str
    what: str
    expected: str
    actual: str

    def __str__(self) -> str:
        return f"{self.step} (twin of {self.origin}): {self.what}: expected {self.expected}, got {self.actual}"


def _path_text(root: str, prefix: Prefix, path: str, target: Target, node_form: bool) -> str:
    """A violation's ``path`` text under ``prefix``: ``value`` + prefix + the rest, or for arguments the
    prefix written from the empty root, then the path (the root itself is written ``arguments``)."""
    if target == "output":
        return root + _suffix(prefix) + path[len(root) :]
    first, rest = prefix[0], prefix[1:]
    head = str(first) + _suffix(rest)
    if node_form and path == "arguments":
        return head
    return f"{head}.{path}"


def _suffix(prefix: Prefix) -> str:
    return "".join(f"[{element}]" if type(element) is int else f".{element}" for element in prefix)


def _violations(text: str) -> list[tuple[int, re.Match[str]]] | None:
    parsed = []
    for violation in text.split("; "):
        for index, form in enumerate(_VIOLATION_FORMS):
            match = form.fullmatch(violation)
            if match is not None:
                parsed.append((index, match))
                break
        else:
            return None
    return parsed


def shifted_message(message: str, prefixes: Sequence[Prefix], target: Target, name: str) -> str | None:
    """The message the twin of a case whose message is ``message`` must give: the tool renamed ``name``, each
    violation's path under each prefix, copy after copy; ``None`` when the message's violations cannot be read
    (a key holding ``"; "``)."""
    if target == "output":
        match = _OUTPUT_PREFIX.match(message)
        if match is None:
            return message
        head, text = f'tool "{name}" returned invalid output: ', message[match.end() :]
        if text == _NOT_LOSSLESS:
            return head + text
    else:
        if not message.startswith(_INVALID_ARGUMENTS):
            return message
        head, text = _INVALID_ARGUMENTS, message[len(_INVALID_ARGUMENTS) :]
    parsed = _violations(text)
    if parsed is None:
        return None
    shifted = [
        match["head"]
        + '"'
        + _path_text("value", prefix, match["path"], target, form in _NODE_FORMS)
        + '"'
        + match["tail"]
        for prefix in prefixes
        for form, match in parsed
    ]
    return head + "; ".join(shifted)


def _at(value: Any, prefix: Prefix) -> tuple[bool, Any]:
    for element in prefix:
        if type(element) is int:
            if not isinstance(value, list) or element >= len(value):
                return False, None
        elif not isinstance(value, dict) or element not in value:
            return False, None
        value = value[element]
    return True, value


def _first_difference(expected: Any, actual: Any) -> str | None:
    """Where two parsed JSON values part (types, key order and lengths counted), iteratively; ``None`` if equal."""
    stack: list[tuple[Any, Any, str]] = [(expected, actual, "")]
    while stack:
        left, right, where = stack.pop()
        if type(left) is not type(right):
            return where or "the value"
        if isinstance(left, dict):
            if list(left) != list(right):
                return f"{where or 'the value'}'s keys"
            stack.extend((left[key], right[key], f"{where}.{key}") for key in reversed(list(left)))
        elif isinstance(left, list):
            if len(left) != len(right):
                return f"{where or 'the value'}'s length"
            stack.extend(
                (item, other, f"{where}[{index}]") for index, (item, other) in enumerate(zip(left, right, strict=True))
            )
        elif left != right:
            return where or "the value"
    return None


def _shape_difference(twin: Twin, value: Any) -> str | None:
    """Where the twin's value holds more than its copies (a wider container than the twin built)."""
    layers: list[tuple[Any, int]] = [(value, 0)]
    while layers:
        node, depth = layers.pop()
        if depth == len(twin.layers):
            continue
        layer = twin.layers[depth]
        expected = layer.size if layer.kind.startswith("wide") else 1
        if not isinstance(node, (list, dict)) or len(node) != expected:
            return f"a container of the {layer.kind} layer"
        if layer.kind in ("nest", "chain"):
            inner = node
            for _ in range(layer.size):
                if not isinstance(inner, (list, dict)) or len(inner) != 1:
                    return f"a level of the {layer.kind} layer"
                inner = inner[0] if isinstance(inner, list) else next(iter(inner.values()))
            layers.append((inner, depth + 1))
        else:
            layers.extend((item, depth + 1) for item in (node if isinstance(node, list) else node.values()))
    return None


def _short(value: Any) -> str:
    """A value for a problem's text: a string as it is, anything else as JSON, cut when long."""
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False) if _depth_below(value, 50) else "<a deep value>"
    return text if len(text) <= 300 else text[:150] + " … " + text[-100:]


def _depth_below(value: Any, limit: int) -> bool:
    return first_too_deep(value, limit) is None


def relation_problems(plan: TwinPlan, transcript: str) -> list[Problem]:
    """Every pair of ``plan`` whose twin's outcome in ``transcript`` is not its case's modulo paths."""
    document = loads(transcript)
    steps = document.get("steps", {}) if isinstance(document, dict) else {}
    registrations = document.get("registrations", {}) if isinstance(document, dict) else {}
    problems: list[Problem] = []
    for pair in plan.pairs:

        def problem(what: str, expected: Any, actual: Any, pair: Pair = pair) -> None:
            problems.append(Problem(pair.step, f"{pair.case.scenario} {pair.case.origin}", what, expected, actual))

        base_registration = registrations.get(pair.base)
        twin_registration = registrations.get(pair.step)
        if base_registration is not None or twin_registration is not None:
            if _registration_kind(base_registration) != _registration_kind(twin_registration):
                problem("registration", _registration_kind(base_registration), _registration_kind(twin_registration))
            continue
        base = steps.get(pair.base, {}).get("result")
        twin = steps.get(pair.step, {}).get("result")
        if not isinstance(base, dict) or not isinstance(twin, dict):
            problem("a result", _short(base), _short(twin))
            continue
        if base.get("isError") != twin.get("isError"):
            expected = base.get("error", {}).get("message") if base.get("isError") else "a success"
            actual = twin.get("error", {}).get("message") if twin.get("isError") else "a success"
            problem("the outcome", _short(expected), _short(actual))
            continue
        if base.get("isError"):
            _error_problems(pair, base, twin, problem)
        else:
            _value_problems(pair, base.get("value"), twin.get("value"), problem)
    return problems


def _registration_kind(registration: Any) -> str:
    if registration is None:
        return "registered"
    error = registration.get("registerError") if isinstance(registration, dict) else None
    if isinstance(error, dict):
        return f"refused ({error.get('name')}, {error.get('code')})"
    return _short(registration)


def _error_problems(pair: Pair, base: dict[str, Any], twin: dict[str, Any], problem: Callable[..., None]) -> None:
    base_error, twin_error = base.get("error", {}), twin.get("error", {})
    if base_error.get("info") != twin_error.get("info"):
        problem("the error's info", _short(base_error.get("info")), _short(twin_error.get("info")))
    message = base_error.get("message")
    if not isinstance(message, str):
        if message != twin_error.get("message"):
            problem("the error's message", _short(message), _short(twin_error.get("message")))
        return
    prefixes = pair.twin.prefixes()
    if pair.case.target == "arguments":
        prefixes = [("k", *prefix) for prefix in prefixes]
    expected = shifted_message(message, prefixes, pair.case.target, pair.step)
    if expected is None:
        return  # violations that cannot be told apart: nothing to compare
    actual = twin_error.get("message")
    if expected != actual:
        problem("the error's message", _short(_around(expected, actual)), _short(_around(actual, expected)))


def _around(text: Any, other: Any) -> Any:
    """``text`` from a little before where it parts from ``other``, so a long message shows its difference."""
    if not isinstance(text, str) or not isinstance(other, str):
        return text
    start = next(
        (index for index, (a, b) in enumerate(zip(text, other, strict=False)) if a != b), min(len(text), len(other))
    )
    return text if start < 120 else "…" + text[start - 60 :]


def _value_problems(pair: Pair, base: Any, twin: Any, problem: Callable[..., None]) -> None:
    if pair.case.target == "arguments":
        if base != twin:
            problem("the value", _short(base), _short(twin))
        return
    shape = _shape_difference(pair.twin, twin)
    if shape is not None:
        problem("the value's shape", "the copies alone", f"more or less at {shape}")
        return
    for prefix in pair.twin.prefixes():
        found, copy = _at(twin, prefix)
        if not found:
            problem("the value", "a copy at " + _suffix(prefix), "none")
            return
        difference = _first_difference(base, copy)
        if difference is not None:
            problem(f"the copy at value{_suffix(prefix)}, at {difference}", _short(base), _short(copy))
            return


# --- running -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TwinResult:
    """How one source scenario's twins did: ``passed`` (the relation holds), ``failed``, ``skipped``, ``errored``."""

    source: str
    status: Literal["passed", "failed", "skipped", "errored"]
    pairs: int
    problems: tuple[Problem, ...] = ()
    message: str = ""
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class TwinReport:
    """Every plan's result, for one implementation."""

    implementation: ImplementationInfo
    results: tuple[TwinResult, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True when no relation is broken and no twin scenario errored."""
        return all(result.status in ("passed", "skipped") for result in self.results)

    def count(self, status: str) -> int:
        """How many source scenarios ended with ``status``."""
        return sum(1 for result in self.results if result.status == status)


def run_plan(implementation: Implementation, seq: int, plan: TwinPlan) -> TwinResult:
    """Run one plan's scenario on a started implementation and check the relation on its transcript."""
    began = time.perf_counter()
    try:
        outcome = implementation.run(seq, dict(plan.scenario))
    except Exception as error:  # an in-process implementation that raises: errored, as the runner has it
        outcome = Errored.raised(error)
    seconds = time.perf_counter() - began
    pairs = len(plan.pairs)
    if isinstance(outcome, Skipped):
        return TwinResult(plan.source, "skipped", pairs, message=outcome.message, seconds=seconds)
    if not isinstance(outcome, Ran):
        context = outcome.context if isinstance(outcome, Errored) else {}
        message = str(context.get("message") or context.get("kind") or "errored without a message")
        return TwinResult(plan.source, "errored", pairs, message=message, seconds=seconds)
    try:
        problems = relation_problems(plan, outcome.transcript)
    except ValueError as error:
        return TwinResult(plan.source, "errored", pairs, message=f"the transcript is not JSON: {error}")
    status: Literal["passed", "failed"] = "failed" if problems else "passed"
    return TwinResult(plan.source, status, pairs, tuple(problems), seconds=seconds)


def check_twins(
    implementation: Implementation,
    plans: Sequence[TwinPlan],
    *,
    progress: Callable[[TwinResult], None] | None = None,
) -> TwinReport:
    """Start ``implementation``, run every plan (:func:`twin_plans`) and stop it.

    A plan needing a capability the implementation does not declare (``generated-values``) is skipped unsent.
    Raises the adapter's :class:`~toolcanon_conformance.exceptions.AdapterError` when it cannot start.
    """
    info = implementation.start()
    results = []
    try:
        for seq, plan in enumerate(plans, start=1):
            missing = [need for need in plan.scenario["requires"] if need not in info.capabilities]
            if missing:
                result = TwinResult(plan.source, "skipped", len(plan.pairs), message="missing capability " + missing[0])
            else:
                result = run_plan(implementation, seq, plan)
            results.append(result)
            if progress is not None:
                progress(result)
    finally:
        implementation.stop()
    return TwinReport(info, tuple(results))


@dataclass(frozen=True, slots=True)
class Sample:
    """Options of :func:`twin_plans` that keep a part of the twins (``None``: no bound)."""

    max_case_size: int = MAX_CASE_SIZE
    twins_per_case: int | None = None
    max_cases: int | None = None

    def plans(self, scenarios: Iterable[Mapping[str, Any]]) -> list[TwinPlan]:
        """:func:`twin_plans` of ``scenarios`` with these options."""
        return twin_plans(
            scenarios, max_case_size=self.max_case_size, twins_per_case=self.twins_per_case, max_cases=self.max_cases
        )


SAMPLE: Final = Sample(max_case_size=50, twins_per_case=1, max_cases=3)
"""A quick sample (``toolcanon twins --sample``, the suite's own test): the first three cases of each scenario of
at most 50 values, one twin each, in turn."""
EVERY_TWIN: Final = Sample()
"""Every twin of every case of at most :data:`MAX_CASE_SIZE` values."""


def twins_text(report: TwinReport, style: Style = PLAIN, *, shown: int = 3) -> str:
    """What ``toolcanon twins`` prints: the implementation, every scenario whose twins part from its values (its
    first ``shown`` problems), and the verdict last."""
    info = report.implementation
    lines = [f"{info.name} {info.version} ({info.language})"]
    broken = [result for result in report.results if result.status in ("failed", "errored")]
    if broken:
        lines += ["", f"Not keeping their outcomes ({len(broken)}):"]
    for result in broken:
        if result.status == "errored":
            lines.append(f"  twins of {result.source} errored: {result.message}")
            continue
        lines.append(f"  twins of {result.source} failed: {len(result.problems)} of {result.pairs} twins part")
        lines.extend(f"    {problem}" for problem in result.problems[:shown])
        if len(result.problems) > shown:
            lines.append(f"    (and {len(result.problems) - shown} more)")
    twins = sum(result.pairs for result in report.results if result.status != "skipped")
    seconds = sum(result.seconds for result in report.results)
    counts = ", ".join(f"{report.count(status)} {status}" for status in ("passed", "failed", "errored", "skipped"))
    verdict = style.good("PASS") if report.ok else style.bad("FAIL")
    sources = len(report.results)
    lines += ["", f"{verdict}: {counts}: {twins} twins of {sources} source scenarios in {seconds:.2f} s"]
    return "\n".join(lines)
