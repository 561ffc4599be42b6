"""The kit's scenarios: valid, covering every rule and every catalogue behaviour, and golden for the reference.

A golden (``snapshots/scenarios/<id>.json``) is the reference's transcript of the scenario, byte for byte,
with no trailing newline (exactly the canonical JSON text an adapter answers). Regenerate one with
``pytest conformance/tests/test_scenarios.py --snapshot-update`` and review the diff against the contract.
A scenario the reference cannot express names another golden source (``"golden": {"source": ...}``): the
reference skips it, and ``python tools/record_goldens.py`` records its golden from that implementation.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from catalogue import behaviours, catalogue
from syrupy.assertion import SnapshotAssertion

from toolcanon_conformance import deepjson
from toolcanon_conformance import scenario as scenario_module
from toolcanon_conformance.adapters.reference import implementation
from toolcanon_conformance.golden import GoldenFileExtension
from toolcanon_conformance.golden_source import REFERENCE, golden_source_of
from toolcanon_conformance.implementation import Ran, Skipped
from toolcanon_conformance.locations import goldens_dir, scenarios_dir
from toolcanon_conformance.rules import load_rules, parse_contract
from toolcanon_conformance.scenario import (
    ScenarioError,
    _bundled_valid_texts,
    load_scenario,
    load_scenarios,
    scenario_from_data,
    text_digest,
    transcript_schema,
)

REPOSITORY = Path(__file__).resolve().parents[2]
SCENARIOS = load_scenarios()
IDS = [scenario.id for scenario in SCENARIOS]
REFERENCE_IDS = [scenario.id for scenario in SCENARIOS if golden_source_of(scenario.data) == REFERENCE]
RECORDED_IDS = [scenario.id for scenario in SCENARIOS if golden_source_of(scenario.data) != REFERENCE]

CATALOGUE = catalogue()
"""Every behaviour and hook action the scenario schema defines, by where it appears. The projector ``undefined`` returns
JavaScript's ``undefined``, which the reference (Python) cannot express: only scenarios whose golden is recorded
from the original use it."""


@cache
def _outcome(scenario_id: str) -> Ran | Skipped:
    scenario = next(s for s in SCENARIOS if s.id == scenario_id)
    outcome = implementation.run(0, scenario.data)
    assert isinstance(outcome, Ran | Skipped), outcome
    return outcome


def _transcript(scenario_id: str) -> str:
    outcome = _outcome(scenario_id)
    assert isinstance(outcome, Ran), f"the reference declined {scenario_id}: {outcome}"
    return outcome.transcript


@pytest.mark.parametrize("scenario_id", REFERENCE_IDS)
def test_reference_transcript_is_the_golden(scenario_id: str, snapshot: SnapshotAssertion) -> None:
    """The reference runs the scenario (declining it fails here) and its transcript is the golden's bytes."""
    golden = snapshot.use_extension(GoldenFileExtension)
    assert golden(name=f"scenarios/{scenario_id}.json") == _transcript(scenario_id).encode("utf-8")


TRANSCRIPT_VALIDATOR = jsonschema.Draft202012Validator(transcript_schema())


@pytest.mark.parametrize("scenario_id", REFERENCE_IDS)
def test_transcript_matches_its_schema(scenario_id: str) -> None:
    TRANSCRIPT_VALIDATOR.validate(_pruned(deepjson.loads(_transcript(scenario_id)), deepjson.NESTING_LIMIT))


def _pruned(value: Any, depth: int) -> Any:
    """``value`` with every container nested deeper than ``depth`` levels replaced by ``null``.

    A transcript nests at any depth (a deep value, content or metadata), while the schema validator recurses
    and describes what fails by its repr; the schema says nothing of those parts (any JSON), so nothing is lost.
    """
    root: list[Any] = [None]
    work: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 1)]
    while work:
        node, target, slot, level = work.pop()
        if isinstance(node, dict | list) and level > depth:
            node = None
        elif isinstance(node, dict):
            copied: Any = dict.fromkeys(node)
            work.extend((item, copied, key, level + 1) for key, item in node.items())
            node = copied
        elif isinstance(node, list):
            copied = [None] * len(node)
            work.extend((item, copied, index, level + 1) for index, item in enumerate(node))
            node = copied
        target[slot] = node
    return root[0]


@pytest.mark.parametrize("scenario_id", RECORDED_IDS)
def test_a_recorded_golden_exists_and_the_reference_skips_its_scenario(scenario_id: str) -> None:
    """A scenario whose golden comes from the original has that golden, and the reference cannot express it."""
    path = goldens_dir() / f"{scenario_id}.json"
    assert path.is_file(), f"no golden: record it with python tools/record_goldens.py {scenario_id}"
    golden = path.read_bytes()
    assert not golden.endswith(b"\n")
    transcript = json.loads(golden.decode("utf-8"))
    TRANSCRIPT_VALIDATOR.validate(transcript)
    assert transcript["scenario"] == scenario_id
    outcome = _outcome(scenario_id)
    assert isinstance(outcome, Skipped), f"the reference runs {scenario_id}: its golden is the reference's"
    assert outcome.message.startswith("not expressible: ")


def test_the_javascript_only_scenarios_have_goldens_from_the_original() -> None:
    assert len(RECORDED_IDS) >= 6
    assert {golden_source_of(s.data) for s in SCENARIOS if s.id in RECORDED_IDS} == {"typescript-dsh-tools"}
    assert all(scenario_id.startswith("js-") for scenario_id in RECORDED_IDS)


def test_the_golden_key_names_a_source_and_a_reason() -> None:
    data = json.loads((scenarios_dir() / f"{REFERENCE_IDS[0]}.json").read_text("utf-8"))
    assert golden_source_of(data) == REFERENCE
    marked = scenario_from_data({**data, "golden": {"source": "typescript-dsh-tools", "reason": "undefined"}})
    assert golden_source_of(marked.data) == "typescript-dsh-tools"
    refused: list[Any] = [
        {"source": "typescript-dsh-tools"},
        {"source": "elsewhere", "reason": "r"},
        {"source": "typescript-dsh-tools", "reason": ""},
        {"source": "typescript-dsh-tools", "reason": "r", "when": "now"},
        "typescript-dsh-tools",
    ]
    for golden in refused:
        with pytest.raises(ScenarioError) as raised:
            scenario_from_data({**data, "golden": golden})
        assert raised.value.json_path.startswith("$.golden"), raised.value


def test_every_golden_has_its_scenario() -> None:
    goldens = {path.stem for path in goldens_dir().glob("*.json")}
    assert goldens <= set(IDS), f"goldens without a scenario: {sorted(goldens - set(IDS))}"


def test_scenario_files_are_named_by_id_and_many() -> None:
    for scenario in SCENARIOS:
        assert scenario.source is not None and scenario.source.stem == scenario.id
    assert len(SCENARIOS) >= 150
    assert scenarios_dir().is_dir()


def test_rules_json_is_the_contract() -> None:
    parsed = parse_contract((REPOSITORY / "docs" / "contract.md").read_text("utf-8"))
    assert parsed == load_rules(), "conformance/toolcanon_conformance/data/rules.json is out of date"


def test_every_rule_is_exercised_and_every_cited_rule_exists() -> None:
    known = {rule.id for rule in load_rules()}
    cited = {rule for scenario in SCENARIOS for rule in scenario.rules}
    assert known - cited == set(), f"rules no scenario exercises: {sorted(known - cited)}"
    assert cited - known == set(), f"scenarios cite unknown rules: {sorted(cited - known)}"


def test_every_catalogue_behaviour_and_hook_action_is_used() -> None:
    used: dict[str, set[str]] = {place: set() for place in CATALOGUE}
    for scenario in SCENARIOS:
        for place, kind in behaviours(scenario.data):
            used[place].add(kind)
    missing = {place: sorted(kinds - used[place]) for place, kinds in CATALOGUE.items() if kinds - used[place]}
    assert not missing, f"behaviours no scenario uses: {missing}"


#: The capability each hook stage asks of an implementation (docs/protocol.md, "Hooks").
STAGE_CAPABILITY = {"guard": "guards", "execute": "wrappers", "post-execute": "post-execute"}


def test_every_scenario_requires_the_capabilities_of_its_hook_stages() -> None:
    # An implementation without a stage must be able to skip the scenario by its requires, not fail it.
    lacking = {
        scenario.id: sorted(missing)
        for scenario in SCENARIOS
        if (
            missing := {
                STAGE_CAPABILITY[hook["stage"]]
                for hook in scenario.data.get("hooks", ())
                if hook["stage"] in STAGE_CAPABILITY
            }
            - set(scenario.data.get("requires", ()))
        )
    }
    assert not lacking, f"scenarios using a hook stage without requiring its capability: {lacking}"


# --- loading: nesting is bounded, and a scenario beyond the bound is a ScenarioError --------------------------


def scenario_with_arguments(arguments: Any) -> dict[str, Any]:
    data = json.loads((scenarios_dir() / f"{IDS[0]}.json").read_text("utf-8"))
    data["steps"] = [{"id": "c1", "call": {"name": next(iter(data["tools"])), "arguments": arguments}}]
    data.pop("hooks", None)
    return data


def nested_list(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [300, 100_000])
def test_a_scenario_file_nested_too_deep_is_a_scenario_error(tmp_path: Path, depth: int) -> None:
    text = json.dumps(scenario_with_arguments({"a": "DEEP"})).replace('"DEEP"', "[" * depth + "]" * depth)
    (tmp_path / "deep.json").write_text(text)
    with pytest.raises(ScenarioError) as raised:
        load_scenarios(tmp_path)
    assert raised.value.source == str(tmp_path / "deep.json")
    assert raised.value.json_path == "$.steps[0].call.arguments.a" + "[0]" * 59
    assert raised.value.reason.startswith("nested deeper than 64 levels: scenarios are checked by a recursive")


def test_scenario_data_nested_too_deep_is_a_scenario_error() -> None:
    with pytest.raises(ScenarioError, match="nested deeper than 64 levels"):
        scenario_from_data(scenario_with_arguments({"a": nested_list(300)}))
    assert scenario_from_data(scenario_with_arguments({"a": nested_list(58)})).id == IDS[0]


# --- model steps: what their calls and logs may be named by -------------------------------------------------

_TOOL = {"t": {"parameters": {}, "output": {"render": {"kind": "json"}}, "body": {"kind": "return", "value": 1}}}


def _model_step_scenario(calls: list[str], *later: dict[str, Any], hooks: Any = ()) -> dict[str, Any]:
    model_calls = [{"callId": call_id, "name": "t", "arguments": "{}"} for call_id in calls]
    return {
        "formatVersion": 1,
        "id": "model-step-references",
        "requires": ["model-step", "persistence"],
        "tools": _TOOL,
        "hooks": list(hooks),
        "steps": [{"id": "step", "modelStep": {"calls": model_calls, "agent": "agent-1"}}, *later],
    }


def test_a_model_step_without_an_agent_is_refused() -> None:
    data = _model_step_scenario(["a"])
    del data["steps"][0]["modelStep"]["agent"]
    with pytest.raises(ScenarioError, match="agent"):
        scenario_from_data(data)


def test_a_model_step_calling_a_concurrency_safe_tool_is_refused() -> None:
    data = _model_step_scenario(["a", "b"])
    safe = {**_TOOL["t"], "name": "safe", "concurrencySafe": {"kind": "constant", "value": True}}
    data["tools"] = {**_TOOL, "s": safe}
    data["steps"][0]["modelStep"]["calls"][1]["name"] = "safe"
    with pytest.raises(ScenarioError) as refused:
        scenario_from_data(data)
    assert refused.value.json_path == "$.steps[0].modelStep.calls[1].name"
    assert "a model step calls exclusive tools only: 'safe' declares concurrencySafe" in str(refused.value)


def test_a_replay_and_a_hook_may_name_a_model_step_and_its_call() -> None:
    hook = {"stage": "pre-execute", "steps": ["b"], "action": {"kind": "deny", "reason": "no"}}
    data = _model_step_scenario(["a", "b"], {"id": "again", "replay": {"persist": "step"}}, hooks=[hook])
    scenario_from_data(data)
    steps = json.loads(implementation.run(0, data).transcript)["steps"]  # type: ignore[union-attr]
    denied = [event for event in steps["step"]["events"] if event["type"] == "tool/result"][1]
    assert denied["data"]["message"]["content"][0]["content"] == [{"type": "text", "text": "Error: no"}]
    assert [message["id"] for message in steps["again"]["messages"]] == ["a:result", "b:result"]


@pytest.mark.parametrize(
    ("data", "json_path", "reason"),
    [
        (_model_step_scenario(["a", "a"]), "$.steps[0].modelStep.calls[1].callId", "call id 'a' is used twice"),
        (
            _model_step_scenario(["a"], {"id": "again", "replay": {"persist": "nowhere"}}),
            "$.steps[1].replay.persist",
            "'nowhere' is not an earlier persist, modelStep or reopen step",
        ),
        (
            _model_step_scenario(["a"], hooks=[{"stage": "pre-execute", "steps": ["z"], "action": {"kind": "allow"}}]),
            "$.hooks[0].steps[0]",
            "'z' names no call step, model call or nested call",
        ),
    ],
    ids=["call id twice", "replay of no log", "hook naming no call"],
)
def test_a_model_step_reference_that_names_nothing_is_a_scenario_error(
    data: dict[str, Any], json_path: str, reason: str
) -> None:
    with pytest.raises(ScenarioError) as raised:
        scenario_from_data(data)
    assert raised.value.json_path == json_path
    assert raised.value.reason.startswith(reason)


def _reopening_scenario(*later: dict[str, Any], **top: Any) -> dict[str, Any]:
    call = {"id": "c", "call": {"name": "t", "arguments": {}}}
    return {
        "formatVersion": 1,
        "id": "reopen-references",
        "requires": ["persistence"],
        "tools": _TOOL,
        "steps": [call, {"id": "log", "persist": {"steps": ["c"]}}, *later],
        **top,
    }


@pytest.mark.parametrize(
    ("data", "json_path", "reason"),
    [
        (
            _reopening_scenario({"id": "r", "reopen": {"persist": "c", "steps": []}}),
            "$.steps[2].reopen.persist",
            "'c' is not an earlier persist, modelStep or reopen step",
        ),
        (
            _reopening_scenario({"id": "r", "reopen": {"persist": "log", "steps": ["log"]}}),
            "$.steps[2].reopen.steps[0]",
            "'log' is not an earlier call step",
        ),
        (
            _reopening_scenario(spill={"maxBytes": 0, "fail": {"how": "raise", "calls": ["c", "nowhere"]}}),
            "$.spill.fail.calls[1]",
            "'nowhere' names no call step, model call or nested call",
        ),
        (
            _reopening_scenario(
                hooks=[{"stage": "execute", "action": {"kind": "look-alike", "step": "log"}}],
                requires=["persistence", "wrappers"],
            ),
            "$.hooks[0].action.step",
            "'log' is not a call step",
        ),
    ],
    ids=["reopen of no log", "reopen appending no call", "spill failing on no call", "look-alike of no call"],
)
def test_a_reference_of_the_formats_extensions_that_names_nothing_is_a_scenario_error(
    data: dict[str, Any], json_path: str, reason: str
) -> None:
    with pytest.raises(ScenarioError) as raised:
        scenario_from_data(data)
    assert raised.value.json_path == json_path
    assert raised.value.reason.startswith(reason)


def test_the_formats_extensions_exclude_one_another_where_they_would_clash() -> None:
    # a changeListener beside changeListeners, an error both coded and plain: which the adapter builds is unsaid
    with pytest.raises(ScenarioError):
        scenario_from_data(
            _reopening_scenario(
                changeListener={"raiseOn": [], "message": "m"}, changeListeners=[{"raiseOn": [], "message": "m"}]
            )
        )
    raising = {
        **_TOOL["t"],
        "body": {"kind": "raise", "message": "m", "code": "E", "error": {"name": "N", "code": "C"}},
    }
    with pytest.raises(ScenarioError):
        scenario_from_data({**_reopening_scenario(), "tools": {"t": raising}})


def test_a_file_read_again_is_validated_again_once_its_text_changes(tmp_path: Path) -> None:
    # Loading skips the schema check for a text already found valid; a changed text is checked anew.
    source = SCENARIOS[0].source
    assert source is not None
    file = tmp_path / "scenario.json"
    file.write_text(source.read_text("utf-8"), "utf-8")
    assert load_scenario(file).id == SCENARIOS[0].id
    assert load_scenario(file).data == SCENARIOS[0].data
    broken = json.loads(file.read_text("utf-8"))
    broken["steps"] = "not steps"
    file.write_text(json.dumps(broken), "utf-8")
    with pytest.raises(ScenarioError, match=r"\$\.steps"):
        load_scenario(file)


# --- the kit's list of validated scenario texts ------------------------------------------------------------


def test_the_list_of_validated_scenario_texts_is_current() -> None:
    done = subprocess.run(
        [sys.executable, str(REPOSITORY / "tools" / "validated_scenarios.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_a_listed_text_changed_is_checked_in_full(tmp_path: Path) -> None:
    bundled = next(iter(sorted(scenarios_dir().glob("*.json"))))
    assert text_digest(bundled.read_text("utf-8")) in _bundled_valid_texts()
    changed = json.loads(bundled.read_text("utf-8"))
    changed["formatVersion"] = 2
    copy = tmp_path / bundled.name
    copy.write_text(json.dumps(changed), encoding="utf-8")
    with pytest.raises(ScenarioError, match="formatVersion"):
        load_scenario(copy)


def test_a_list_made_with_another_schema_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    _bundled_valid_texts.cache_clear()
    monkeypatch.setattr(scenario_module, "schema_digest", lambda: "0" * 64)
    try:
        assert _bundled_valid_texts() == frozenset()
    finally:
        _bundled_valid_texts.cache_clear()


def test_the_keys_renderer_reports_a_value_of_any_depth() -> None:
    """The catalogue's helpers hold no recursion: the key order of a value thousands of levels deep is reported."""
    depth = 5000
    data = {
        "formatVersion": 1,
        "id": "keys-deep",
        "requires": ["generated-values"],
        "tools": {
            "t": {
                "parameters": {},
                "output": {"render": {"kind": "keys"}},
                "body": {
                    "kind": "return",
                    "value": {"$generate": "nest", "depth": depth, "in": "object", "key": "k", "leaf": 1},
                },
            }
        },
        "hooks": [],
        "steps": [{"id": "c", "call": {"name": "t", "arguments": {}}}],
    }
    scenario_from_data(data)
    outcome = implementation.run(0, data)
    assert isinstance(outcome, Ran), outcome
    text = deepjson.loads(outcome.transcript)["steps"]["c"]["result"]["content"][0]["text"]
    report = deepjson.loads(text)
    assert report["arguments"] == []
    node, levels = report["value"], 0
    while node is not None:
        [[key, node]] = node
        assert key == "k"
        levels += 1
    assert levels == depth
