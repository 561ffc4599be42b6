"""The generator reaches everything: drawn scenarios hold every behaviour, step, member, capability, tag, threshold
and rule the format and the contract have.

The catalogue comes from where each thing is defined (the scenario schema, the contract's rules, the thresholds
module), so a kind, member or rule added there fails this test until the generator draws it; what the generator
cannot draw for the reference to judge is listed with the reason.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from catalogue import catalogue, definition, resolve, scenario_schema
from fixed_draws import draws_of_the_seed_alone
from hypothesis import Phase, given, seed, settings

from toolcanon_conformance.properties import default_settings
from toolcanon_conformance.reach import RULE_FEATURES, reached
from toolcanon_conformance.rules import load_rules
from toolcanon_conformance.strategies import REFERENCE_EXOTIC_KINDS, SCENARIO_CAPABILITIES, scenarios
from toolcanon_conformance.thresholds import SIDES, THRESHOLDS

ROUNDS, DRAWN = 120, 25
"""At most so many rounds of a seed each, and the scenarios each draws: a long round mutates what it drew before
and draws fewer kinds than short rounds (everything is reached within 728 scenarios in rounds of 25, 992 in
rounds of 50, 1,811 in rounds of 150). The rounds stop once everything is reached: the rounds left are the margin
for a new member that is rarer still."""

NOT_DRAWN = {
    "behaviour:projector:undefined": "Python has no undefined: the reference answers such a scenario skipped",
    "rule:R-SNAP-7": "its values (throwing getters and proxy traps) are JavaScript's, which the reference skips",
    "rule:R-SNAP-8": "its values (null-prototype objects, another realm's) are JavaScript's, which the reference skips",
    "member:scenario.rules": "a scenario's documentation: saved failures get theirs from where they differ",
    "member:scenario.ignore": "host-specific text is documented per scenario in docs/edge-cases.md",
    "member:scenario.optional": "what the contract leaves open is decided per scenario, with its reason",
    "member:scenario.golden": "a golden recorded from another implementation: the reference judges these",
}
"""What generated scenarios never hold, and why: each must be in the catalogue and never drawn."""

# Members of the format that are always present when their part is (not options a scenario chooses).
_ALWAYS = {
    "scenario": {"formatVersion", "id", "description", "requires", "tools", "hooks", "steps"},
    "tool": {"output", "body"},
    "mcp": {"response"},
    "call": {"name", "arguments"},
    "persist": {"steps"},
}


def _members(node: dict[str, Any], where: str) -> set[str]:
    return {f"member:{where}.{name}" for name in resolve(node)["properties"] if name not in _ALWAYS.get(where, ())}


def _step_member(form: str) -> dict[str, Any]:
    for branch in definition("step")["allOf"]:
        if branch["if"]["required"] == [form]:
            found: dict[str, Any] = branch["then"]["properties"]
            return found
    raise AssertionError(form)


_JSON_TYPES = ("null", "boolean", "number", "string", "array", "object")


def _branch(name: str, kind: str) -> dict[str, Any]:
    """The members of one kind of a catalogue definition (its ``allOf`` branch, ``$ref``s followed)."""
    for branch in definition(name)["allOf"]:
        condition = branch["if"]["properties"]["kind"]
        if condition.get("const") == kind or kind in condition.get("enum", ()):
            return resolve(branch["then"])
    raise AssertionError(kind)


@cache
def expected() -> frozenset[str]:
    """Everything generated scenarios should reach, from where each is defined."""
    found: set[str] = set()
    for place, kinds in catalogue().items():
        prefix = "step" if place == "step" else f"behaviour:{place}"
        found.update(f"{prefix}:{kind}" for kind in kinds)
    schema = scenario_schema()
    found.update(f"member:scenario.{name}" for name in schema["properties"] if name not in _ALWAYS["scenario"])
    tool = definition("tool")
    found |= _members(tool, "tool")
    found |= _members(tool["properties"]["output"], "output")
    found |= _members(tool["properties"]["mcp"], "mcp")
    found |= {
        f"member:concurrencySafe.kind={kind}"
        for kind in tool["properties"]["concurrencySafe"]["properties"]["kind"]["enum"]
    }
    found |= _members(definition("approval"), "approval")
    call = _step_member("call")
    found |= _members(call["call"], "call") | {"member:call.abort"}
    found |= _members(_step_member("persist")["persist"], "persist")
    found |= {"member:modelStep.abort"}
    found |= {
        f"member:probe.target={target}" for target in _step_member("probe")["probe"]["properties"]["target"]["enum"]
    }
    damage = resolve(_step_member("replay")["replay"]["properties"]["damage"])
    found |= {f"member:damage.how={how}" for how in damage["properties"]["how"]["enum"]}
    damage = resolve(_step_member("reopen")["reopen"]["properties"]["damage"])
    found |= {f"member:reopen.damage.how={how}" for how in damage["properties"]["how"]["enum"]}
    found |= {f"member:bare={stage}" for stage in schema["properties"]["bare"]["items"]["enum"]}
    spill = schema["properties"]["spill"]["properties"]
    found |= {f"member:spill.maxBytes={spill['maxBytes']['minimum']}", "member:spill.fail.calls"}
    found |= {f"member:spill.fail.how={how}" for how in spill["fail"]["properties"]["how"]["enum"]}
    found |= {
        f"member:raise.{name}" for name in definition("raiseAction")["properties"] if name not in ("kind", "message")
    }
    found |= {f"member:look-alike.{name}" for name in _branch("executeAction", "look-alike")["properties"]} - {
        "member:look-alike.kind"
    }
    found |= {
        f"member:not-callable.value={kind}"
        for kind in _branch("projector", "not-callable")["properties"]["value"]["type"]
    }
    found |= {f"member:json.indent={kind}" for kind in _branch("renderer", "json")["properties"]["indent"]["type"]}
    # a description is any JSON value (its schema names no type)
    assert "type" not in tool["properties"]["description"]
    found |= {f"member:tool.description={kind}" for kind in _JSON_TYPES}
    found |= {f"capability:{name}" for name in definition("capability")["enum"]}
    found |= {f"exotic:{kind}" for kind in REFERENCE_EXOTIC_KINDS}
    found |= {f"generate:{kind}" for kind in definition("generatorKind")["enum"]}
    found |= {f"threshold:{threshold.name}:{side}" for threshold in THRESHOLDS for side in SIDES}
    found |= {f"rule:{rule.id}" for rule in load_rules()}
    return frozenset(found)


@cache
def drawn() -> frozenset[str]:
    """What rounds of :data:`DRAWN` scenarios, each of a fixed seed, reach: until everything to reach is, at most
    :data:`ROUNDS` of them."""
    found: set[str] = set()

    @settings(default_settings(DRAWN), derandomize=False, database=None, phases=(Phase.generate,))
    @given(scenarios())
    def draw(scenario: dict[str, Any]) -> None:
        found.update(reached(scenario))

    with draws_of_the_seed_alone():
        for round_seed in range(ROUNDS):
            seed(20261202 + round_seed)(draw)()
            if expected() - set(NOT_DRAWN) <= found:
                break
    return frozenset(found)


def test_generated_scenarios_reach_the_whole_catalogue() -> None:
    missing = expected() - drawn() - set(NOT_DRAWN)
    assert not missing, f"generated scenarios never reach: {sorted(missing)}"


def test_what_is_never_drawn_is_in_the_catalogue_and_never_drawn() -> None:
    assert set(NOT_DRAWN) <= expected()
    assert not set(NOT_DRAWN) & drawn()


def test_every_rule_is_reached_through_features_of_its_own() -> None:
    assert set(RULE_FEATURES) == {rule.id for rule in load_rules()}
    assert all(RULE_FEATURES.values())


def test_the_capabilities_drawn_are_the_formats() -> None:
    assert set(SCENARIO_CAPABILITIES) == set(definition("capability")["enum"])
    assert list(SCENARIO_CAPABILITIES) == definition("capability")["enum"]


def test_a_drawn_scenario_names_what_it_reaches() -> None:
    # one known document: its features are the ones its parts say, no more
    document = json.loads(
        json.dumps(
            {
                "formatVersion": 1,
                "id": "reach",
                "requires": ["spill", "timeout"],
                "tools": {
                    "echo": {
                        "parameters": {"text": {"type": "string", "required": True}},
                        "output": {"schema": {"type": "string"}, "render": {"kind": "text", "prefix": ""}},
                        "body": {"kind": "return-arg", "arg": "text", "default": ""},
                        "timeoutMs": 2147483648,
                    },
                    "deep": {
                        "parameters": {},
                        "output": {"schema": {"type": "json"}, "render": {"kind": "json"}},
                        "body": {
                            "kind": "return",
                            "value": {"$generate": "nest", "depth": 401, "in": "array", "leaf": 1},
                        },
                    },
                },
                "hooks": [],
                "spill": {"maxBytes": 3},
                "timeout": {},
                "steps": [{"id": "c", "call": {"name": "echo", "arguments": {"text": "ab😀"}}}],
            }
        )
    )
    features = reached(document)
    assert "threshold:spill-bound:above" not in features  # 6 bytes: 3 past the bound, not just past it
    document["steps"][0]["call"]["arguments"]["text"] = "ab\ud800"  # 5 bytes (a lone surrogate is 3)
    features = reached(document)
    assert {
        "threshold:timer-delay:above",
        "threshold:snapshot-depth:at",
        "member:tool.timeoutMs=past-timer",
        "member:scenario.spill",
        "capability:spill",
        "rule:R-WRAP-3",
        "generate:nest",
    } <= features
    assert "threshold:spill-bound:above" not in features
    document["spill"]["maxBytes"] = 4
    assert "threshold:spill-bound:above" in reached(document)
