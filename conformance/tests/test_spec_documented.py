"""docs/protocol.md documents every name the format's JSON Schemas define, and its worked examples use every one.

The convention: a name is documented when it is a backticked name in the first cell of a table row of the
section of docs/protocol.md that describes it (the text from its heading to the next heading). A kind's
parameters are backticked in the second cell of its own row. Every kind, hook action, step, capability, exotic
tag and generator also appears in at least one worked example of docs/protocol-examples.md
(``test_spec_examples.py`` checks that each yields what it shows).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from catalogue import PLACES, behaviours, definition, kinds, resolve, scenario_schema, step_kinds
from test_spec_examples import EXAMPLES, SPEC, Example

from toolcanon_conformance._schemas import load_schema

HEADING = re.compile(r"^(#{2,6}) (.+?)\s*$", re.M)
NAME = re.compile(r"`([^`]+)`")
#: The hook stages, whose behaviours are actions.
STAGES = frozenset(definition("hook")["properties"]["stage"]["enum"])


def sections(text: str) -> dict[str, str]:
    """Each heading's text, up to the next heading."""
    headings = list(HEADING.finditer(text))
    bounds = [*(match.start() for match in headings[1:]), len(text)]
    return {match.group(2): text[match.end() : end] for match, end in zip(headings, bounds, strict=True)}


def rows(section: str) -> dict[str, str]:
    """The table rows of a section, by each backticked name of their first cell."""
    found: dict[str, str] = {}
    for line in section.splitlines():
        cells = line.split("|")
        if len(cells) < 3 or not line.startswith("|"):
            continue
        for name in NAME.findall(cells[1]):
            found.setdefault(name, line)
    return found


# --- what the schemas define --------------------------------------------------------------------------


def _properties(node: dict[str, Any]) -> list[str]:
    return list(resolve(node).get("properties", {}))


def _all_properties(node: Any) -> Iterator[str]:
    """Every member name a schema declares, anywhere in it."""
    if isinstance(node, dict):
        for key, item in node.items():
            if key == "properties" and isinstance(item, dict):
                yield from item
            yield from _all_properties(item)
    elif isinstance(node, list):
        for item in node:
            yield from _all_properties(item)


def expected() -> Iterator[tuple[str, str, list[str]]]:
    """``(section, name, parameters)`` for every name the docs must document."""
    scenario = scenario_schema()
    for name in scenario["properties"]:
        yield "Top-level keys", name, []
    tool = definition("tool")
    for name in [*tool["properties"], *tool["properties"]["output"]["properties"]]:
        yield "Fixture tools", name, []
    for name in tool["properties"]["mcp"]["properties"]:
        yield "MCP fixtures", name, []
    catalogue = {
        "Renderers": "renderer",
        "Metadata projectors": "projector",
        "Bodies": "body",
        "Content finalizers": "finalizer",
        "Pre-execute actions": "preExecuteAction",
        "Guard actions": "guardAction",
        "Execute actions": "executeAction",
        "Post-execute actions": "postExecuteAction",
        "Result-observer actions": "observerAction",
    }
    for section, defined in catalogue.items():
        for name, parameters in kinds(defined):
            yield section, name, parameters
    program = next(b for b in definition("body")["allOf"] if b["if"]["properties"]["kind"].get("const") == "program")
    for name in program["then"]["properties"]["calls"]["items"]["properties"]:
        yield "Programs", name, []
    hook = definition("hook")
    for name in [*hook["properties"], *hook["properties"]["stage"]["enum"]]:
        yield "Hooks", name, []
    for name in _properties(definition("approval")):
        yield "Approval and agents", name, []
    for name in scenario["properties"]["spill"]["properties"]:
        yield "Spill", name, []
    step = definition("step")
    for form in step["oneOf"]:
        yield "Steps", form["required"][0], []
    for branch in step["allOf"]:
        then = branch["then"]["properties"]
        for member, node in then.items():
            if member == branch["if"]["required"][0]:
                yield from (("Step members", name, []) for name in node.get("properties", {}))
            elif member != "id":
                yield "Step members", member, []  # beside the step's own key: abort
    for name in definition("capability")["enum"]:
        yield "Capabilities", name, []
    for name in [*definition("exoticKind")["enum"], *definition("exotic")["properties"]]:
        yield "Exotic values", name, []
    for name in [*definition("generatorKind")["enum"], *definition("generate")["properties"]]:
        yield "Generated values", name, []
    for name in definition("context")["properties"]:
        yield "Additional contexts", name, []
    for name in scenario["properties"]["golden"]["properties"]:
        yield "Goldens", name, []
    for name in dict.fromkeys(_all_properties(load_schema("transcript.schema.json"))):
        yield "Transcript", name, []
    command = load_schema("protocol-command.schema.json")
    for message in command["$defs"].values():
        yield "Commands", message["properties"]["cmd"]["const"], []
    for name in dict.fromkeys(_all_properties(command)):
        yield "Commands", name, []
    for name in dict.fromkeys(_all_properties(load_schema("protocol-start-response.schema.json"))):
        yield "Answers to start", name, []
    for name in dict.fromkeys(_all_properties(load_schema("protocol-run-response.schema.json"))):
        yield "Answers to run", name, []


def undocumented(text: str) -> list[str]:
    """Every name (or kind parameter) the schemas define that the text does not document."""
    by_section = {title: rows(body) for title, body in sections(text).items()}
    problems = []
    for section, name, parameters in expected():
        table = by_section.get(section)
        if table is None:
            problems.append(f"no section {section!r}")
            continue
        row = table.get(name)
        if row is None:
            problems.append(f"{section}: `{name}` has no row")
            continue
        listed = set(NAME.findall(row.split("|")[2]))  # the parameters column
        listed |= {word.rstrip("?") for found in list(listed) for word in re.split(r"[\s,{}]+", found)}
        problems.extend(f"{section}: `{name}` does not list `{p}`" for p in parameters if p not in listed)
    return list(dict.fromkeys(problems))


def test_every_name_of_the_schemas_is_documented() -> None:
    assert undocumented(SPEC.read_text(encoding="utf-8")) == []


def test_a_missing_row_is_reported() -> None:
    text = SPEC.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `truncate` |"))
    assert undocumented(text.replace(row + "\n", "")) == ["Content finalizers: `truncate` has no row"]


def test_a_missing_parameter_is_reported() -> None:
    text = SPEC.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `field` |"))
    assert "`prefix?`" in row
    assert undocumented(text.replace(row, row.replace("`prefix?`", "prefix"))) == [
        "Renderers: `field` does not list `prefix`"
    ]


def test_a_missing_capability_is_reported() -> None:
    text = SPEC.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `spill` | the generic spill policy"))
    assert undocumented(text.replace(row + "\n", "")) == ["Capabilities: `spill` has no row"]


# --- what the examples use ----------------------------------------------------------------------------


def _used(example: Example) -> Iterator[tuple[str, str]]:
    """``(what, name)`` for every kind, action, step, capability and exotic tag an example's scenario uses."""
    scenario = example.scenario
    for capability in scenario.get("requires", ()):
        yield "capability", capability
    for place, kind in behaviours(scenario):
        yield (f"{place} action" if place in STAGES else place), kind
    stack: list[Any] = [scenario]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "$exotic" in node:
                yield "exotic tag", node["$exotic"]
            if "$generate" in node:
                yield "generator tag", node["$generate"]
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def unexemplified(examples: list[Example]) -> list[str]:
    """Every kind, action, step, capability and exotic tag that no worked example uses."""
    used = {pair for example in examples for pair in _used(example)}
    wanted = [("capability", name) for name in definition("capability")["enum"]]
    wanted += [("step", name) for name in step_kinds()]
    wanted += [("exotic tag", name) for name in definition("exoticKind")["enum"]]
    wanted += [("generator tag", name) for name in definition("generatorKind")["enum"]]
    for place, defined in PLACES.items():
        what = f"{place} action" if place in STAGES else place
        wanted += [(what, name) for name, _ in kinds(defined)]
    return [f"no example uses the {what} {name}" for what, name in wanted if (what, name) not in used]


def test_every_kind_has_a_worked_example() -> None:
    assert unexemplified(EXAMPLES) == []


@pytest.mark.parametrize("left_out", ["keep", "bigint"])
def test_a_kind_without_an_example_is_reported(left_out: str) -> None:
    examples = [example for example in EXAMPLES if left_out not in repr(example.scenario)]
    assert len(examples) < len(EXAMPLES)
    assert any(problem.endswith(f" {left_out}") for problem in unexemplified(examples))
