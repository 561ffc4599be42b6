"""Scenario files: load, validate against the format's JSON Schema, and list a directory in a stable order.

A scenario is one JSON file (``docs/protocol.md``, "Scenario format"). Loading checks it twice: first against
``schemas/scenario.schema.json`` (Draft 2020-12, with ``jsonschema``), then for what a schema cannot say (unique
step ids, references to earlier steps, ``ignore`` and ``optional`` paths that parse and do not overlap). Any
problem is a :class:`ScenarioError` naming the file and the JSON path of the offending place. A scenario nests
at most :data:`~toolcanon_conformance.deepjson.NESTING_LIMIT` levels: the validator recurses, and so does the
JSON reader of many an adapter.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from toolcanon_conformance.deepjson import NESTING_LIMIT, TooDeep, first_too_deep, loads
from toolcanon_conformance.diff import Path as JsonPath
from toolcanon_conformance.diff import format_path, is_under, parse_path
from toolcanon_conformance.generate import holds_generator_tags, tag_problems
from toolcanon_conformance.locations import scenarios_dir

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

__all__ = [
    "FORMAT_VERSION",
    "STEP_KINDS",
    "Scenario",
    "ScenarioError",
    "iter_exotic_tags",
    "load_scenario",
    "load_scenarios",
    "scenario_from_data",
    "scenario_schema",
    "transcript_schema",
]

FORMAT_VERSION: Final = 1
"""The scenario and transcript format version this kit reads and writes."""

STEP_KINDS: Final = (
    "call",
    "probe",
    "persist",
    "modelStep",
    "replay",
    "schemas",
    "executionMode",
    "removeHook",
    "reopen",
)
"""The members that name what a step does (a step holds one of them beside its id)."""
_LOGGING_STEP_KINDS: Final = frozenset({"persist", "modelStep", "reopen"})

_NESTED_CALL_ID: Final = re.compile(r"^(?P<outer>.+):code:[1-9][0-9]*$")


class ScenarioError(ValueError):
    """A scenario file that cannot be used: unreadable, not JSON, or not a valid scenario.

    ``source`` names the file (or ``<scenario>`` for data that came from elsewhere), ``json_path`` the place in
    it (``$`` for the whole document), ``reason`` what is wrong there.
    """

    def __init__(self, source: str, json_path: str, reason: str) -> None:
        self.source = source
        self.json_path = json_path
        self.reason = reason
        super().__init__(f"{source}: {json_path}: {reason}")


@dataclass(frozen=True, slots=True)
class Scenario:
    """A validated scenario: its identity, what it exercises, and the parsed document an adapter receives."""

    id: str
    rules: tuple[str, ...]
    requires: tuple[str, ...]
    description: str
    data: dict[str, Any]
    source: Path | None = None


@cache
def _schema(name: str) -> dict[str, Any]:
    text = resources.files("toolcanon_conformance").joinpath("schemas", name).read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def scenario_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file."""
    return _schema("scenario.schema.json")


def transcript_schema() -> dict[str, Any]:
    """The JSON Schema of a transcript (what an adapter answers for a scenario)."""
    return _schema("transcript.schema.json")


@cache
def _validator() -> Draft202012Validator:
    # imported here: adapters import this module for the format's constants, and should start fast
    import jsonschema

    return jsonschema.Draft202012Validator(scenario_schema())


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (write an exotic tag instead)")


def load_scenario(path: Path | str) -> Scenario:
    """Read and validate one scenario file."""
    path = Path(path)
    source = str(path)
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ScenarioError(source, "$", f"cannot be read: {error}") from None
    try:
        data = loads(text, parse_constant=_refuse_constant, max_depth=NESTING_LIMIT)
    except TooDeep as error:
        raise ScenarioError(source, format_path(error.path), _too_deep(error.limit)) from None
    except ValueError as error:
        raise ScenarioError(source, "$", f"is not JSON: {error}") from None
    digest = text_digest(text)
    if digest in _VALID_TEXTS or digest in _bundled_valid_texts():
        return _scenario(data, path)
    scenario = scenario_from_data(data, source, path)
    _VALID_TEXTS.add(digest)
    return scenario


#: The digests of scenario texts found valid: a text read again (every check of a process reads the suite)
#: parses to the same data, which validation would find valid again; the schema check is most of a load.
_VALID_TEXTS: set[bytes] = set()

#: The kit's list of the bundled scenario texts that passed every check, with the digest of the schema they were
#: checked against (``python tools/validated_scenarios.py`` writes it; ``test_scenarios.py`` keeps it current).
VALIDATED_SCENARIOS = "validated-scenarios.json"


def text_digest(text: str) -> bytes:
    """The digest by which a scenario text is known to have passed every check."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def schema_digest() -> str:
    """The digest of the scenario schema's text, which the list of validated texts was made with."""
    schema = resources.files("toolcanon_conformance").joinpath("schemas", "scenario.schema.json").read_bytes()
    return hashlib.sha256(schema).hexdigest()


@cache
def _bundled_valid_texts() -> frozenset[bytes]:
    """The bundled scenario texts checked when the kit was made: a command that loads the whole suite need not
    check each again (most of the load). Empty when the list is missing or was made with another schema."""
    try:
        listed = json.loads(
            resources.files("toolcanon_conformance").joinpath("data", VALIDATED_SCENARIOS).read_text("utf-8")
        )
        if listed["schema"] != schema_digest():
            return frozenset()
        return frozenset(bytes.fromhex(digest) for digest in listed["texts"])
    except (OSError, ValueError, KeyError, TypeError):
        return frozenset()


def _too_deep(limit: int) -> str:
    return (
        f"nested deeper than {limit} levels: scenarios are checked by a recursive validator and read by "
        "adapters with their language's standard JSON parser"
    )


def load_scenarios(directory: Path | str | None = None) -> list[Scenario]:
    """Every ``*.json`` scenario of a directory (default: the kit's own), ordered by file name.

    Raises :class:`ScenarioError` for the first invalid file, and for two files declaring one id.
    """
    folder = Path(directory) if directory is not None else scenarios_dir()
    scenarios: list[Scenario] = []
    seen: dict[str, Path] = {}
    for path in sorted(folder.glob("*.json"), key=lambda p: p.name):
        scenario = load_scenario(path)
        if scenario.id in seen:
            raise ScenarioError(str(path), "$.id", f"{scenario.id!r} is already the id of {seen[scenario.id].name}")
        seen[scenario.id] = path
        scenarios.append(scenario)
    return scenarios


def scenario_from_data(data: Any, source: str = "<scenario>", path: Path | None = None) -> Scenario:
    """Validate a parsed scenario document and wrap it."""
    from jsonschema.exceptions import best_match

    too_deep = first_too_deep(data, NESTING_LIMIT)
    if too_deep is not None:
        raise ScenarioError(source, format_path(too_deep), _too_deep(NESTING_LIMIT))
    error = best_match(_validator().iter_errors(data))
    if error is not None:
        raise ScenarioError(source, error.json_path, error.message)
    for json_path, reason in _semantic_problems(data):
        raise ScenarioError(source, json_path, reason)
    return _scenario(data, path)


def _scenario(data: Any, path: Path | None) -> Scenario:
    return Scenario(
        id=data["id"],
        rules=tuple(data.get("rules", ())),
        requires=tuple(data.get("requires", ())),
        description=data.get("description", ""),
        data=data,
        source=path,
    )


def _semantic_problems(data: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """What the schema cannot check: generator tags, unique step ids and references that must name earlier steps."""
    for path, reason in tag_problems(data):
        yield format_path(path), reason
    if "generated-values" not in data.get("requires", ()) and holds_generator_tags(data):
        yield "$.requires", "a scenario holding generator tags requires generated-values"
    steps: Sequence[Mapping[str, Any]] = data["steps"]
    kinds: dict[str, str] = {}
    call_ids: set[str] = set()
    concurrency_safe = {
        name
        for key, fixture in data.get("tools", {}).items()
        if isinstance(fixture, Mapping) and "concurrencySafe" in fixture
        for name in (key, fixture.get("name", key))
    }
    for index, step in enumerate(steps):
        here = f"$.steps[{index}]"
        step_id = step["id"]
        if step_id in kinds:
            yield f"{here}.id", f"step id {step_id!r} is used twice"
        if "call" in step:
            call_ids.add(step["call"].get("callId", step_id))
        elif "probe" in step:
            if kinds.get(step["probe"]["step"]) != "call":
                yield f"{here}.probe.step", f"{step['probe']['step']!r} is not an earlier call step"
            path = step["probe"]["path"]
            if isinstance(path, dict) and (
                path.get("$generate") != "repeat" or type(path.get("item")) not in {str, int}
            ):
                yield f"{here}.probe.path", "a generated path is a repeat of one key or index"
        elif "persist" in step:
            persisted = step["persist"]["steps"]
            raw = step["persist"].get("rawArguments", {})
            for position, name in enumerate(persisted):
                if kinds.get(name) != "call":
                    yield f"{here}.persist.steps[{position}]", f"{name!r} is not an earlier call step"
                elif name not in raw and any(True for _ in iter_exotic_tags(_call_of(steps, name)["arguments"])):
                    yield (
                        f"{here}.persist.rawArguments",
                        f"the arguments of {name!r} hold exotic tags: give their raw text",
                    )
            for name in raw:
                if name not in persisted:
                    yield f"{here}.persist.rawArguments", f"{name!r} is not one of the persisted steps"
        elif "modelStep" in step:
            model_call_ids = [call["callId"] for call in step["modelStep"]["calls"]]
            call_ids.update(model_call_ids)
            for position, call_id in enumerate(model_call_ids):
                if call_id in model_call_ids[:position]:
                    yield f"{here}.modelStep.calls[{position}].callId", f"call id {call_id!r} is used twice in the step"
            # the agent loop runs concurrency-safe calls in a pool, whose interleaving no golden can pin
            for position, call in enumerate(step["modelStep"]["calls"]):
                if call["name"] in concurrency_safe:
                    yield (
                        f"{here}.modelStep.calls[{position}].name",
                        f"a model step calls exclusive tools only: {call['name']!r} declares concurrencySafe",
                    )
        elif "replay" in step and kinds.get(step["replay"]["persist"]) not in _LOGGING_STEP_KINDS:
            yield (
                f"{here}.replay.persist",
                f"{step['replay']['persist']!r} is not an earlier persist, modelStep or reopen step",
            )
        elif "reopen" in step:
            if kinds.get(step["reopen"]["persist"]) not in _LOGGING_STEP_KINDS:
                yield (
                    f"{here}.reopen.persist",
                    f"{step['reopen']['persist']!r} is not an earlier persist, modelStep or reopen step",
                )
            for position, name in enumerate(step["reopen"]["steps"]):
                if kinds.get(name) != "call":
                    yield f"{here}.reopen.steps[{position}]", f"{name!r} is not an earlier call step"
                elif any(True for _ in iter_exotic_tags(_call_of(steps, name)["arguments"])):
                    yield f"{here}.reopen.steps[{position}]", f"the arguments of {name!r} hold exotic tags"
        elif "removeHook" in step and step["removeHook"]["hook"] >= len(data.get("hooks", ())):
            yield f"{here}.removeHook.hook", f"{step['removeHook']['hook']} is not the index of a hook"
        kinds[step_id] = next(key for key in STEP_KINDS if key in step)
    yield from _path_problems(data)

    def names_a_call(name: str) -> bool:
        nested = _NESTED_CALL_ID.match(name)
        return (
            kinds.get(name) == "call"
            or name in call_ids
            or bool(nested and nested.group("outer") in call_ids | set(kinds))
        )

    for index, hook in enumerate(data.get("hooks", ())):
        for position, name in enumerate(hook.get("steps", ())):
            if not names_a_call(name):
                yield f"$.hooks[{index}].steps[{position}]", f"{name!r} names no call step, model call or nested call"
        action = hook["action"]
        depth = 0
        while action.get("kind") == "dispose-tool-then":
            action = action["then"]
            depth += 1
        if action.get("kind") in ("return-result-of", "look-alike") and kinds.get(action.get("step"), "call") != "call":
            where = f"$.hooks[{index}].action" + ".then" * depth + ".step"
            yield where, f"{action['step']!r} is not a call step"
    for position, name in enumerate(data.get("spill", {}).get("fail", {}).get("calls", ())):
        if not names_a_call(name):
            yield f"$.spill.fail.calls[{position}]", f"{name!r} names no call step, model call or nested call"


def _path_problems(data: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """``ignore`` and ``optional`` paths that do not parse, and optional paths that overlap another one or an
    ignore path: a place is host-specific or left open by the contract, not both, and each belongs to one entry."""
    ignored: list[tuple[str, JsonPath]] = []
    for index, text in enumerate(data.get("ignore", ())):
        try:
            ignored.append((text, parse_path(text)))
        except ValueError as error:
            yield f"$.ignore[{index}]", str(error)
    optional: list[tuple[str, JsonPath]] = []
    for index, entry in enumerate(data.get("optional", ())):
        here = f"$.optional[{index}].path"
        try:
            path = parse_path(entry["path"])
        except ValueError as error:
            yield here, str(error)
            continue
        if not path:
            yield here, "the whole transcript cannot be optional"
            continue
        for kind, others in (("optional", optional), ("ignore", ignored)):
            clash = next((text for text, other in others if is_under(path, other) or is_under(other, path)), None)
            if clash is not None:
                yield here, f"{entry['path']!r} overlaps the {kind} path {clash!r}"
        optional.append((entry["path"], path))


def _call_of(steps: Sequence[Mapping[str, Any]], step_id: str) -> Mapping[str, Any]:
    call: Mapping[str, Any] = next(step["call"] for step in steps if step["id"] == step_id)
    return call


def iter_exotic_tags(value: Any) -> Iterator[Mapping[str, Any]]:
    """Every exotic tag (``{"$exotic": KIND, ...}``) inside a parsed JSON value, in document order."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "$exotic" in item:
                yield item
                continue
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
