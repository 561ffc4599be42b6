"""The scenario format's catalogue as its JSON Schema defines it, and the one walk over what a scenario uses.

Shared by the tests that hold the scenarios (every behaviour used) and the protocol document (every behaviour
documented and shown in an example) to the schema, so that a kind added to the schema is checked by both.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

from toolcanon_conformance._schemas import load_schema

#: Where a behaviour appears (a hook stage for hook actions) and the schema definition of its kinds.
PLACES = {
    "renderer": "renderer",
    "projector": "projector",
    "body": "body",
    "finalizer": "finalizer",
    "pre-execute": "preExecuteAction",
    "guard": "guardAction",
    "execute": "executeAction",
    "post-execute": "postExecuteAction",
    "result-observer": "observerAction",
}


@cache
def scenario_schema() -> dict[str, Any]:
    return load_schema("scenario.schema.json")


def definition(name: str) -> dict[str, Any]:
    """A definition of the scenario schema, by its name under ``$defs``."""
    found: dict[str, Any] = scenario_schema()["$defs"][name]
    return found


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with its ``$ref``s followed."""
    while "$ref" in node:
        node = definition(node["$ref"].rsplit("/", 1)[1])
    return node


def kinds(name: str) -> Iterator[tuple[str, list[str]]]:
    """Each kind of a catalogue definition and its parameters (every member beside ``kind``)."""
    node = definition(name)
    kind = node["properties"]["kind"]
    names = kind["enum"] if "enum" in kind else [kind["const"]]
    if "allOf" not in node:  # one kind, its members beside it
        yield names[0], [member for member in node["properties"] if member != "kind"]
        return
    for each in names:
        members: list[str] = []
        for branch in node["allOf"]:
            condition = branch["if"]["properties"]["kind"]
            if condition.get("const") == each or each in condition.get("enum", ()):
                then = resolve(branch["then"])
                members.extend(member for member in then.get("properties", {}) if member != "kind")
        yield each, members


def step_kinds() -> list[str]:
    """The step forms, by the key that names each."""
    return [form["required"][0] for form in definition("step")["oneOf"]]


def catalogue() -> dict[str, set[str]]:
    """Every kind of behaviour and step the schema allows, by where it appears."""
    found = {place: {kind for kind, _ in kinds(name)} for place, name in PLACES.items()}
    found["step"] = set(step_kinds())
    return found


def behaviours(scenario: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """``(place, kind)`` for every behaviour, hook action and step a scenario uses (places as in :data:`PLACES`)."""
    for tool in scenario["tools"].values():
        output = tool.get("output", {})
        if "render" in output:
            yield "renderer", output["render"]["kind"]
        if "presentationMeta" in output:
            yield "projector", output["presentationMeta"]["kind"]
        if "finalizeContent" in tool:
            yield "finalizer", tool["finalizeContent"]["kind"]
        body: dict[str, Any] | None = tool.get("body")
        while body is not None:
            yield "body", body["kind"]
            body = body.get("then")
    for hook in scenario.get("hooks", ()):
        action: dict[str, Any] | None = hook["action"]
        while action is not None:
            yield hook["stage"], action["kind"]
            action = action.get("then")
    steps = set(step_kinds())
    for step in scenario["steps"]:
        yield "step", next(key for key in step if key in steps)
