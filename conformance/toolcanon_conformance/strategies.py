"""Hypothesis strategies for lossless JSON values, schemas of the supported subset, and values valid for them.

Reusable by implementers and renderer authors (``pip install hypothesis``). Every strategy is a function that
returns a :class:`~hypothesis.strategies.SearchStrategy` (built once and cached where it takes no schema);
generated values are plain ``dict``/``list`` data.

:func:`scenarios` is drawn often and whole (``toolcanon fuzz`` runs it by the hundred per second), so its
parts are cheap for hypothesis: a behaviour's kind is one weighted choice, and its details (messages, values,
schemas) are built from one drawn seed by :mod:`toolcanon_conformance.seeded`, from the same alphabets as
the value strategies here; each tool, step and hook is one span, so shrinking deletes it whole.
"""

from __future__ import annotations

import copy
import random
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, Final, Protocol, TypeVar

from hypothesis import strategies as st

from toolcanon.jsonvalue import MAX_SAFE_INTEGER, JsonValue, canonical_json, thaw
from toolcanon.mcp import public_tool_name
from toolcanon.renderers import FAMILIES
from toolcanon.schema import Validator, compile_validator, compile_value_schema
from toolcanon_conformance import seeded, thresholds
from toolcanon_conformance.exotic import PYTHON_INEXPRESSIBLE
from toolcanon_conformance.generate import holds_generator_tags, utf16_length
from toolcanon_conformance.scenario import FORMAT_VERSION, iter_exotic_tags, scenario_schema

__all__ = [
    "CANARY",
    "EXOTIC_KINDS",
    "REFERENCE_EXOTIC_KINDS",
    "SCENARIO_CAPABILITIES",
    "Draw",
    "ScenarioBuilder",
    "exotic_values",
    "finite_floats",
    "json_strings",
    "lossless_values",
    "object_keys",
    "safe_integers",
    "scenarios",
    "subset_schemas",
    "values_for",
    "values_with_exotics",
]

SearchStrategy = st.SearchStrategy

# The alphabets of toolcanon_conformance.seeded: escapes, astral pairs, lone surrogates, index-like keys.
_SPECIAL_STRINGS: Final = seeded.SPECIAL_STRINGS
_SPECIAL_CHARS: Final = seeded.SPECIAL_CHARS
_INDEX_LIKE_KEYS: Final = seeded.INDEX_LIKE_KEYS
_ORDINARY_KEYS: Final = seeded.ORDINARY_KEYS
_SCALAR_TYPES: Final = seeded.SCALAR_TYPES


@cache
def safe_integers() -> SearchStrategy[int]:
    """Integers in the I-JSON safe range ``±(2**53-1)``, the only ints that are lossless JSON."""
    return st.one_of(
        st.integers(-1000, 1000),
        st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
        st.sampled_from((MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER)),
    )


@cache
def finite_floats() -> SearchStrategy[float]:
    """Finite floats, never ``-0.0`` (integral ones such as ``2.0`` and ``1e300`` included)."""
    return st.floats(allow_nan=False, allow_infinity=False).map(lambda number: 0.0 if number == 0 else number)


@cache
def json_strings() -> SearchStrategy[str]:
    """Any strings, weighted towards astral characters, lone surrogates and characters JSON must escape."""
    return st.one_of(
        st.sampled_from(_SPECIAL_STRINGS),
        st.text(st.sampled_from(_SPECIAL_CHARS), max_size=6),
        st.text(st.characters(exclude_categories=()), max_size=8),
    )


@cache
def object_keys() -> SearchStrategy[str]:
    """Object keys: array-index-like keys (``"10"``, ``"2"``), near-misses (``"01"``, ``"-1"``) and ordinary ones."""
    return st.one_of(
        st.sampled_from(_INDEX_LIKE_KEYS),
        st.sampled_from(_ORDINARY_KEYS),
        st.integers(0, 2**32).map(str),
        json_strings(),
    )


@cache
def lossless_values(max_leaves: int = 20) -> SearchStrategy[JsonValue]:
    """Lossless JSON values: ``None``, booleans, safe ints, finite floats (not ``-0.0``), strings with astral
    characters and lone surrogates, and nested lists and dicts whose keys mix index-like and ordinary keys.
    """
    scalars = st.one_of(st.none(), st.booleans(), safe_integers(), finite_floats(), json_strings())
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(object_keys(), children, max_size=4),
        ),
        max_leaves=max_leaves,
    )


@cache
def _scalar_values(type_name: str) -> SearchStrategy[JsonValue]:
    if type_name == "string":
        return json_strings()
    if type_name == "number":
        return st.one_of(safe_integers(), finite_floats())
    if type_name == "integer":
        integral_floats = st.one_of(
            st.integers(-(2**53), 2**53).map(float), st.sampled_from((1e300, -1e20, 2.0)).map(float)
        )
        return st.one_of(safe_integers(), integral_floats)
    if type_name == "boolean":
        return st.booleans()
    return st.none()


@cache
def _annotations() -> SearchStrategy[dict[str, Any]]:
    # Half the nodes carry none: annotations never change validation, and drawing them is costly.
    return st.one_of(
        st.just({}),
        st.fixed_dictionaries(
            {},
            optional={
                "description": json_strings(),
                "title": json_strings(),
                "default": lossless_values(max_leaves=3),
                "examples": st.lists(lossless_values(max_leaves=3), max_size=2),
            },
        ),
    )


@cache
def _enums(type_name: str) -> SearchStrategy[list[Any] | None]:
    return st.one_of(st.none(), st.lists(_scalar_values(type_name), min_size=1, max_size=4))


@st.composite
def _scalar_schema(draw: st.DrawFn, type_name: str) -> dict[str, Any]:
    values = _scalar_values(type_name)
    schema: dict[str, Any] = {"type": type_name, **draw(_annotations())}
    enum = draw(_enums(type_name))
    if enum is not None:
        schema["enum"] = enum
    if draw(st.booleans()):
        schema["const"] = enum[draw(st.integers(0, len(enum) - 1))] if enum else draw(values)
    return schema


@cache
def _scalar_schemas(*type_names: str) -> SearchStrategy[dict[str, Any]]:
    return st.one_of([_scalar_schema(type_name) for type_name in type_names])


@cache
def _property_names() -> SearchStrategy[list[str]]:
    return st.lists(object_keys(), max_size=4, unique=True)


_ADDITIONAL_PROPERTIES: Final = st.sampled_from((None, True, False))


@st.composite
def _object_schema(draw: st.DrawFn, children: SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    keys = draw(_property_names())
    schema: dict[str, Any] = {"type": "object", **draw(_annotations())}
    if bool(keys) or draw(st.booleans()):
        schema["properties"] = {key: draw(children) for key in keys}
    required = [key for key in keys if draw(st.booleans())]
    if required:
        schema["required"] = required
    additional = draw(_ADDITIONAL_PROPERTIES)
    if additional is not None:
        schema["additionalProperties"] = additional
    return schema


@st.composite
def _array_schema(draw: st.DrawFn, children: SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", **draw(_annotations())}
    if draw(st.booleans()):
        schema["items"] = draw(children)
    return schema


@st.composite
def _one_of_schema(
    draw: st.DrawFn, branches: dict[str, SearchStrategy[dict[str, Any]]], choices: SearchStrategy[list[str]]
) -> dict[str, Any]:
    """A oneOf whose branches come from distinct entries of ``branches`` (schemas grouped by what they accept)."""
    return {"oneOf": [draw(branches[group]) for group in draw(choices)], **draw(_annotations())}


def _compound_schemas(children: SearchStrategy[dict[str, Any]], disjoint: bool) -> SearchStrategy[dict[str, Any]]:
    objects = _object_schema(children)
    arrays = _array_schema(children)
    if disjoint:
        # Values of different groups never match each other's schemas (number and integer share a group).
        groups = {
            "string": _scalar_schemas("string"),
            "number": _scalar_schemas("number", "integer"),
            "boolean": _scalar_schemas("boolean"),
            "null": _scalar_schemas("null"),
            "object": objects,
            "array": arrays,
        }
    else:
        groups = {str(index): children for index in range(4)}
    choices = st.lists(st.sampled_from(sorted(groups)), min_size=2, max_size=4, unique=True)
    return st.one_of(objects, arrays, _one_of_schema(groups, choices))


@cache
def subset_schemas(max_leaves: int = 12, disjoint_one_of: bool = True) -> SearchStrategy[dict[str, Any]]:
    """Raw schemas of the supported subset (``schema_violations`` finds nothing in them).

    Scalar nodes with optional ``enum``/``const`` (the const drawn from the enum), any-JSON nodes, arrays with
    optional ``items``, objects with index-like and ordinary property names, optional ``required`` and
    ``additionalProperties`` absent/true/false, and ``oneOf`` with two to four branches; annotations anywhere.
    With ``disjoint_one_of`` (the default) the branches of a ``oneOf`` accept pairwise disjoint kinds of value,
    so every schema accepts some value and :func:`values_for` always finds one. Without it, branches may
    overlap (``oneOf [number, integer]``, ``oneOf [{}, …]``), which exercises exact-one counting but can make
    a schema unsatisfiable.
    """
    base = st.one_of(_scalar_schemas(*_SCALAR_TYPES), _annotations())
    return st.recursive(base, lambda children: _compound_schemas(children, disjoint_one_of), max_leaves=max_leaves)


def values_for(schema: JsonValue) -> SearchStrategy[JsonValue]:
    """Values valid against a schema of the supported subset.

    Each node's values are constructed (enum/const members, required plus optional properties, extra keys on
    open objects, items); a ``oneOf`` draws from its branches and keeps only values that match exactly one
    branch, so its schema must be satisfiable (see :func:`subset_schemas`).
    """
    if "oneOf" in schema:
        exactly_one = compile_validator(schema)
        return st.one_of([values_for(branch) for branch in schema["oneOf"]]).filter(exactly_one.is_valid)
    type_name = schema.get("type")
    if type_name is None:
        return lossless_values()
    if type_name == "array":
        items = values_for(schema["items"]) if "items" in schema else lossless_values(max_leaves=6)
        return st.lists(items, max_size=4)
    if type_name == "object":
        return _object_values(schema)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    return _scalar_values(type_name)


def _object_values(schema: JsonValue) -> SearchStrategy[JsonValue]:
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    present = {key: values_for(node) for key, node in properties.items() if key in required}
    optional = {key: values_for(node) for key, node in properties.items() if key not in required}
    declared = st.fixed_dictionaries(present, optional=optional)
    if schema.get("additionalProperties") is False:
        return declared
    extra_keys = object_keys().filter(lambda key: key not in properties)
    extras = st.dictionaries(extra_keys, lossless_values(max_leaves=4), max_size=2)
    return st.tuples(extras, declared).map(lambda pair: {**pair[0], **pair[1]})


# --- exotic values -------------------------------------------------------------------------------------

EXOTIC_KINDS: Final[tuple[str, ...]] = tuple(scenario_schema()["$defs"]["exoticKind"]["enum"])
"""Every exotic kind of the scenario format (``{"$exotic": KIND}``), in the format's order."""

REFERENCE_EXOTIC_KINDS: Final[tuple[str, ...]] = tuple(
    kind for kind in EXOTIC_KINDS if kind not in PYTHON_INEXPRESSIBLE
)
"""The exotic kinds the reference (Python) can express: the default of :func:`scenarios`, since a scenario holding
any other kind is skipped by the reference and so cannot be compared with it."""


def _exotic_kinds(kinds: Iterable[str] | None) -> tuple[str, ...]:
    chosen = EXOTIC_KINDS if kinds is None else tuple(dict.fromkeys(kinds))
    unknown = [kind for kind in chosen if kind not in EXOTIC_KINDS]
    if unknown:
        raise ValueError(f"not exotic kinds of the scenario format: {', '.join(map(repr, unknown))}")
    return chosen


@cache
def _exotic_tags(kinds: tuple[str, ...]) -> SearchStrategy[dict[str, str]]:
    if not kinds:
        return st.nothing()
    tags = st.sampled_from(kinds).map(lambda kind: {"$exotic": kind})
    if "throwing-getter" not in kinds:
        return tags
    with_message = json_strings().map(lambda message: {"$exotic": "throwing-getter", "message": message})
    return st.one_of(tags, with_message)


def exotic_values(kinds: Iterable[str] | None = None) -> SearchStrategy[dict[str, str]]:
    """Exotic tags ``{"$exotic": KIND}`` of the scenario format (``throwing-getter`` sometimes with a ``message``).

    ``kinds`` restricts them (default: every kind of the format, :data:`EXOTIC_KINDS`); an unknown kind is a
    ``ValueError``. Whether a kind is applicable to an implementation is its adapter's business: a Python
    adapter answers *skipped* for the JavaScript-only kinds.
    """
    return _exotic_tags(_exotic_kinds(kinds))


def _has_no_tag(value: Any) -> bool:
    return not any(True for _ in iter_exotic_tags(value))


@cache
def _plain_values(max_leaves: int) -> SearchStrategy[JsonValue]:
    # A drawn key may happen to be "$exotic", which a scenario would read as a tag.
    return lossless_values(max_leaves=max_leaves).filter(_has_no_tag)


@cache
def _plain_keys() -> SearchStrategy[str]:
    return object_keys().filter(lambda key: key != "$exotic")


def _insert(items: list[Any], position: int, item: Any) -> list[Any]:
    return [*items[:position], item, *items[position:]]


@cache
def _values_with_exotics(kinds: tuple[str, ...]) -> SearchStrategy[Any]:
    if not kinds:
        return st.nothing()
    tags = _exotic_tags(kinds)
    plain = _plain_values(4)
    in_list = st.tuples(st.lists(plain, max_size=2), st.integers(0, 2), tags).map(
        lambda parts: _insert(parts[0], parts[1], parts[2])
    )
    in_object = st.tuples(st.dictionaries(_plain_keys(), plain, max_size=2), _plain_keys(), tags).map(
        lambda parts: {**parts[0], parts[1]: parts[2]}
    )
    return st.one_of(tags, in_list, in_object)


def values_with_exotics(kinds: Iterable[str] | None = None) -> SearchStrategy[Any]:
    """Scenario values that hold at least one exotic tag: a bare tag, or a tag inside a list or an object of
    lossless values (``kinds`` as for :func:`exotic_values`)."""
    return _values_with_exotics(_exotic_kinds(kinds))


# --- the parts of a scenario ---------------------------------------------------------------------------

CANARY: Final = "canary-5f0c2b9e"
"""The string :func:`scenarios` places only in body value fields that the tool's renderer and metadata projector
drop (and that no hook or program exposes): by the contract it never reaches a persisted event."""

SCENARIO_CAPABILITIES: Final[tuple[str, ...]] = (
    "guards",
    "wrappers",
    "post-execute",
    "finalize-content",
    "approval",
    "cancellation",
    "persistence",
    "nested",
    "mcp",
    "spill",
    "timeout",
    "schemas",
    "first-party-renderers",
    "execution-mode",
    "generated-values",
    "model-step",
)
"""The optional capabilities generated scenarios may require, in the order of ``requires``."""

_UNKNOWN_TOOL: Final = "missing-tool"

# How a replay damages its log: lines 1 and 2 exist in every log (a persisted call writes at least two).
_DAMAGES: Final = (
    {"how": "torn-last-line"},
    {"how": "malformed-line", "line": 2},
    {"how": "drop", "line": 1},
    {"how": "duplicate", "line": 1},
    {"how": "reorder", "line": 1},
    {"how": "append", "events": [{"type": "x/note", "data": {}}]},
)

# A fixture's isConcurrencySafe: exactly true, truthy values that are not, a raise, an argument.
_CONCURRENCY_CHECKS: Final = (
    {"kind": "constant", "value": True},
    {"kind": "constant", "value": 1},
    {"kind": "constant", "value": "true"},
    {"kind": "raise", "message": "cannot tell"},
    {"kind": "raise", "message": "cannot tell", "code": "ENOENT"},
    {"kind": "return-arg", "arg": "a"},
)
_AGENT: Final = "agent-1"
# (DSL property map, the raw schema it compiles to: its values are arguments the tool accepts)
_PARAMETERS: Final[tuple[tuple[dict[str, Any], dict[str, Any]], ...]] = (
    ({}, {"type": "object"}),
    ({"text": {"type": "string"}}, {"type": "object", "properties": {"text": {"type": "string"}}}),
    (
        {"text": {"type": "string", "required": True}},
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    ),
    (
        {"n": {"type": "number"}, "flag": {"type": "boolean"}},
        {"type": "object", "properties": {"n": {"type": "number"}, "flag": {"type": "boolean"}}},
    ),
    (
        {"data": {"type": "json", "required": True}},
        {"type": "object", "properties": {"data": {}}, "required": ["data"]},
    ),
    (
        {"items": {"type": "array", "items": {"type": "integer"}}},
        {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "integer"}}}},
    ),
)
_ARGUMENT_NAMES: Final = ("text", "n", "flag", "data", "items", "absent")
_PROBE_PATH_ELEMENTS: Final = ("keep", "secret", "text", "data", "items", "a", 0, 1)
# Every path of up to two elements, the shortest first (a shrunk probe looks at the top).
_PROBE_PATHS: Final = (
    (),
    *((element,) for element in _PROBE_PATH_ELEMENTS),
    *((first, second) for first in _PROBE_PATH_ELEMENTS for second in _PROBE_PATH_ELEMENTS),
)
# The effects a terminal body may sit behind, innermost first: none, one or two (the fewer, the likelier).
_EFFECTS: Final = (
    (3, ()),
    (2, ("defer",)),
    (2, ("conclude",)),
    (1, ("mutate-then",)),
    *((1, (outer, inner)) for outer in ("defer", "conclude") for inner in ("defer", "conclude")),
)
_PROGRAM_RESULTS: Final = ((4, None), (2, "last"), (2, "received"), *((1, index) for index in range(4)))
_CONTEXT_IDS: Final = ("ctx-a", "ctx-b", "ctx-1")
# First-party families whose renderer reads only the value; each renders any value valid for its schema.
# (`read` is not one: the original's renderer re-reads `file_path` from the arguments and fails without it.)
# The first is where shrinking ends: glob's value and text are the smallest.
_FIRST_PARTY_FAMILIES: Final = ("glob", "grep", "bash", "write", "edit", "todo_write", "web_search", "lsp")
_MESSAGES: Final = ("boom", "denied by policy", "", "ünïcödé 😀", "two\nlines")
_ERROR_CLASSES: Final = ({"name": "QuotaError", "code": "QUOTA"}, {"name": "PolicyError", "code": "POLICY"})
# Codes an ordinary error carries as a string property, as a system error does: still no coded error, no info.
_PLAIN_CODES: Final = ("ENOENT", "EACCES", "ECONNRESET", "QUOTA")
# JSON.stringify's space beyond a few spaces: none (0, a negative number), a fraction (V8 breaks lines without
# indenting), truncated and clamped numbers, and strings cut to 10 UTF-16 code units, one through an astral
# character (S:render-json-indent-space).
_ODD_INDENTS: Final[tuple[Any, ...]] = (
    0,
    -1,
    0.5,
    2.7,
    11,
    1e21,
    "",
    "\t",
    "--",
    "abcdefghijklmnop",
    "😀😀😀😀😀",
    "a😀😀😀😀😀",
    "12",
)
# A not-callable presentationMeta: a scalar, or a container taken as it is (S:reg-presentation-meta-not-callable).
_NOT_CALLABLE: Final[tuple[Any, ...]] = (1, "x", True, {}, [], {"a": 1}, [1, "two", None], {"kind": "value"})
# Descriptions that are no text: registration never checks one, schemas lists it as it is.
_ODD_DESCRIPTIONS: Final[tuple[Any, ...]] = (None, 0, False, "", 1.5, True, [1, "x", None], {"text": "über", "0": {}})
_BARE_STAGES: Final = ("pre-execute", "guard", "execute", "post-execute")
_RAW_ARGUMENTS: Final = ('{"x":NaN}', "{", "not json", '{"text":"raw"}', "")
_HOOK_STAGES: Final = (("guards", "guard"), ("wrappers", "execute"), ("post-execute", "post-execute"))
_CANCELLING: Final = frozenset(
    {"abort-caller", "await-abort", "replace-signal-aborted", "abort-caller-after-next", "abort-replacement"}
    | {"report-signal"}
)


# A strategy made once and drawn from many times is far cheaper than a new one each time (hypothesis works out
# a new strategy's label and emptiness on its first draw): the builder asks for them through these caches.


@lru_cache(maxsize=4096)
def _weighted(*choices: tuple[int, Any]) -> SearchStrategy[Any]:
    return st.sampled_from([choice for weight, choice in choices for _ in range(weight)])


@lru_cache(maxsize=4096)
def _sampled(items: tuple[Any, ...]) -> SearchStrategy[Any]:
    return st.sampled_from(items)


@lru_cache(maxsize=4096)
def _integers(low: int, high: int) -> SearchStrategy[int]:
    return st.integers(low, high)


@lru_cache(maxsize=4096)
def _subsets(items: tuple[str, ...], max_size: int) -> SearchStrategy[list[str]]:
    """Lists of one to ``max_size`` distinct items."""
    return st.lists(st.sampled_from(items), min_size=1, max_size=max_size, unique=True)


@lru_cache(maxsize=64)
def _notification_numbers(count: int) -> SearchStrategy[list[int]]:
    """One to three distinct numbers among the first ``count`` (of a change listener's notifications)."""
    return st.lists(st.integers(1, count), min_size=1, max_size=3, unique=True)


_BOOLEANS: Final = st.booleans()


def _one_of(draw: Draw, items: Sequence[_Drawn]) -> _Drawn:
    """One of ``items``, the first when shrunk. Drawn as an index, which is a choice even among one item (a
    ``sampled_from`` of one item is none): a choice sequence keeps its meaning when a tool or step is deleted."""
    return items[draw(_integers(0, len(items) - 1))]


@lru_cache(maxsize=4096)
def _combined(*choices: tuple[tuple[int, Any], ...]) -> SearchStrategy[tuple[Any, ...]]:
    """Several weighted choices as one draw: every combination, weighing the product of its weights. The first
    choice varies slowest, so shrinking towards the first combination simplifies the last choices alone."""
    combinations: list[tuple[int, tuple[Any, ...]]] = [(1, ())]
    for options in choices:
        combinations = [(a * b, (*chosen, item)) for a, chosen in combinations for b, item in options if b]
    return _weighted(*combinations)


# A probe's target; whether its path ends at a container the call should hand out (else any path: hooks may
# change what it hands out); and whether below the top (a shallow freeze shows only there). One draw.
_PROBES: Final = _combined(
    ((3, "value"), (1, "content"), (1, "arguments")), ((4, True), (1, False)), ((1, False), (3, True))
)
_PARAMETER_MAPS: Final = tuple((1, index) for index in range(len(_PARAMETERS)))
_AGENTS: Final = ((4, False), (1, True))


def _programs(tools: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Every ``program`` behaviour of the tools' bodies, wrapped ones included."""
    for spec in tools.values():
        body = spec.get("body")
        while isinstance(body, dict):
            if body.get("kind") == "program":
                yield body
            body = body.get("then")


def _without_disposals(part: Any) -> Any:
    """``part`` with every ``dispose-tool-then`` behaviour replaced by its ``then``."""
    if isinstance(part, list):
        return [_without_disposals(item) for item in part]
    if not isinstance(part, dict):
        return part
    while part.get("kind") == "dispose-tool-then" and isinstance(part.get("then"), dict):
        part = part["then"]
    return {key: _without_disposals(value) for key, value in part.items()}


@lru_cache(maxsize=4096)
def _program_calls(targets: tuple[str, ...]) -> SearchStrategy[list[str]]:
    """The tools a program calls: one to three of ``targets``. Never a name the scenario does not register: what a
    program's call of such a name does is left to each implementation (``docs/edge-cases.md`` section 5), so a
    program with no tool to call calls none."""
    if not targets:
        return st.just([])
    return st.lists(_weighted(*((1, target) for target in targets)), min_size=1, max_size=3)


# Every part below is one choice for hypothesis: an integer naming the kind of behaviour (by weight) and the
# seed its details are built from (toolcanon_conformance.seeded). It shrinks towards 0: the first kind, the
# first and simplest, built from seed 0, with the simplest details. A part made once is drawn from again and
# again: each is cached.

_Builder = seeded.Build[Any]


@dataclass(frozen=True, slots=True, eq=False)  # compared and hashed by identity: each is made once
class _Part:
    """A scenario part drawn as one integer: which builder (a weighted choice) and the seed it builds from."""

    builders: tuple[_Builder, ...]
    integers: SearchStrategy[int]

    def draw(self, draw: Draw) -> Any:
        """Draw the integer and build the part."""
        seed, point = divmod(draw(self.integers), len(self.builders))
        return self.builders[point](seeded.generator(seed))


def _built(*choices: tuple[int, _Builder]) -> _Part:
    """One of the builders, chosen by weight, applied to a seed: both from one drawn integer."""
    builders = tuple(build for weight, build in choices for _ in range(weight))
    return _Part(builders, st.integers(0, (len(builders) << seeded.SEED_BITS) - 1))


def _seeded(build: _Builder) -> _Part:
    """The part ``build`` makes from a drawn seed."""
    return _built((1, build))


def _pair_of(first: _Builder, second: _Builder) -> _Builder:
    return lambda rng: (first(rng), second(rng))


@cache
def _paired(first: _Part, second: _Part) -> _Part:
    """Two parts as one draw: every pair of their builders (the first part's choice varies slowest, so shrinking
    still simplifies the second part alone), both built from the one seed."""
    return _built(*((1, _pair_of(a, b)) for a in first.builders for b in second.builders))


_NONE: Final = _seeded(lambda rng: None)


def _returning_choice(choice: Any) -> _Builder:
    return lambda rng: _copied(choice)


@lru_cache(maxsize=1024)
def _chosen(*choices: tuple[int, Any]) -> _Part:
    """One of ``choices`` (the weight, the choice), as exactly likely as its weight says: one drawn integer
    (unlike a ``sampled_from`` of repeated items, whose index hypothesis draws towards its ends), shrinking
    towards the first choice."""
    return _built(*((weight, _returning_choice(choice)) for weight, choice in choices))


def _either(*choices: tuple[int, _Builder]) -> _Builder:
    """A builder that picks one of the builders by weight with the seed's own generator."""
    return lambda rng: seeded.weighted(rng, choices)(rng)


#: Reasons of a denial that are not text: each becomes the failure's message as it is, and its content the
#: reason's ECMAScript ``String()`` (R-PRE-8); a guard's reason is never ``null`` (that is no reason).
_NON_TEXT_REASONS: Final[tuple[Any, ...]] = (5, {"a": 1}, [1, "x", [2, None]], True, 1e21, -0.5, None)


def _deny_reason(rng: random.Random, *, may_be_null: bool) -> Any:
    """Mostly a message, sometimes a JSON value that is not text."""
    if rng.random() < 0.75:
        return _message(rng)
    reasons = _NON_TEXT_REASONS if may_be_null else _NON_TEXT_REASONS[:-1]
    return copy.deepcopy(rng.choice(reasons))


def _message(rng: random.Random) -> str:
    return seeded.string(rng) if seeded.chance(rng, 0.25) else seeded.pick(rng, _MESSAGES)


def _contexts_of(rng: random.Random) -> list[dict[str, str]]:
    return [{"id": seeded.pick(rng, _CONTEXT_IDS), "text": _message(rng)} for _ in range(rng.randrange(3))]


def _text_blocks_of(rng: random.Random) -> list[dict[str, str]]:
    return [{"type": "text", "text": _message(rng)} for _ in range(rng.randrange(3))]


def _with_optional(rng: random.Random, part: dict[str, Any], **optional: _Builder) -> dict[str, Any]:
    """``part`` with each optional key, half of the time, built by its builder."""
    for name, build in optional.items():
        if seeded.chance(rng, 0.5):
            part[name] = build(rng)
    return part


def _plain_of(max_leaves: int) -> _Builder:
    return lambda rng: seeded.value(rng, max_leaves)


def _values_of(kinds: tuple[str, ...], max_leaves: int) -> _Builder:
    """Plain values, and (one time in four) values holding exotic tags of ``kinds``."""
    if not kinds:
        return _plain_of(max_leaves)
    return lambda rng: seeded.with_exotics(rng, kinds) if seeded.chance(rng, 0.25) else seeded.value(rng, max_leaves)


def _exotic_or_plain_of(kinds: tuple[str, ...]) -> _Builder:
    return (lambda rng: seeded.with_exotics(rng, kinds)) if kinds else _plain_of(2)


def _raising(kind: str) -> _Builder:
    def build(rng: random.Random) -> dict[str, Any]:
        part: dict[str, Any] = {"kind": kind, "message": _message(rng)}
        if seeded.chance(rng, 0.5):
            part["error"] = dict(seeded.pick(rng, _ERROR_CLASSES))
        elif seeded.chance(rng, 0.25):
            part["code"] = seeded.pick(rng, _PLAIN_CODES)
        return part

    return build


def _constant(**part: Any) -> _Builder:
    return lambda rng: _copied(part)


@cache
def _messages() -> _Part:
    return _seeded(_message)


@cache
def _descriptions() -> _Part:
    """A tool's description: mostly text, now and then any JSON value."""
    return _built((3, _message), (2, lambda rng: _copied(seeded.pick(rng, _ODD_DESCRIPTIONS))))


@cache
def _plain(max_leaves: int) -> _Part:
    return _seeded(_plain_of(max_leaves))


@cache
def _exotic(kinds: tuple[str, ...]) -> _Part:
    return _seeded(lambda rng: seeded.with_exotics(rng, kinds))


@cache
def _raises(kind: str) -> _Part:
    return _seeded(_raising(kind))


@cache
def _argument_values(parameters: int) -> _Part:
    schema = _PARAMETERS[parameters][1]
    return _seeded(lambda rng: seeded.value_for(schema, rng))


def _kept_value(rng: random.Random) -> Any:
    """What a canary tool shows: a container, more often than not (for freeze probes to reach into)."""
    form = rng.randrange(3)
    if form == 0:
        return seeded.value(rng, 3)
    if form == 1:
        return [seeded.value(rng, 3) for _ in range(rng.randint(1, 3))]
    return {seeded.key(rng): seeded.value(rng, 3) for _ in range(rng.randint(1, 3))}


@cache
def _kept_values() -> _Part:
    return _seeded(_kept_value)


@cache
def _invalid_arguments() -> _Part:
    """Arguments a tool may refuse: any object, or any value (most are not objects)."""

    def build(rng: random.Random) -> Any:
        if seeded.chance(rng, 0.5):
            return seeded.value(rng, 3)
        return {seeded.key(rng): seeded.value(rng, 3) for _ in range(rng.randrange(4))}

    return _seeded(build)


@cache
def _first_party_values(family: str) -> _Part:
    schema = thaw(compile_value_schema(FAMILIES[family].schema))
    return _seeded(lambda rng: seeded.value_for(schema, rng, _exactly_one))


# The oneOf nodes of the first-party schemas, which live as long as the module, and their validators.
_ONE_OF_VALIDATORS: dict[int, tuple[Any, Validator]] = {}


def _exactly_one(node: Any, value: Any) -> bool:
    entry = _ONE_OF_VALIDATORS.get(id(node))
    if entry is None or entry[0] is not node:
        entry = _ONE_OF_VALIDATORS[id(node)] = (node, compile_validator(node))
    return entry[1].is_valid(value)


def _returning(spec: dict[str, Any], value: Any) -> tuple[dict[str, Any], dict[str, Any], Any]:
    return spec, {"kind": "return", "value": value}, value


def _return_arg(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any], None]:
    terminal = _with_optional(
        rng, {"kind": "return-arg", "arg": seeded.pick(rng, _ARGUMENT_NAMES)}, default=_plain_of(3)
    )
    return {"schema": {"type": "json"}}, terminal, None


@cache
def _outputs() -> _Part:
    """An output schema (DSL or raw), the terminal body, and the value it returns (``None`` for ``return-arg``,
    which returns one of the call's arguments)."""

    def raw(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any], Any]:
        schema = seeded.schema(rng, 4)
        return _returning({"rawSchema": schema}, seeded.value_for(schema, rng))

    def array(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any], Any]:
        items = [seeded.value(rng, 3) for _ in range(rng.randrange(4))]
        return _returning({"schema": {"type": "array", "items": {"type": "json"}}}, items)

    return _built(
        (6, lambda rng: _returning({"schema": {"type": "json"}}, seeded.value(rng, 5))),
        (2, _return_arg),
        (4, lambda rng: _returning({"schema": {"type": "string"}}, seeded.string(rng))),
        (4, array),
        (4, raw),
    )


def _behind(terminal: dict[str, Any], effects: list[tuple[str, Any]]) -> dict[str, Any]:
    """The terminal body behind its effects (innermost first): defer, conclude, an abort."""
    body = terminal
    for effect, contexts in effects:
        if effect == "defer":
            body = {"kind": "defer", "contexts": contexts, "then": body}
        elif effect == "abort-then-await":
            # await-abort waits for ever unless something aborts its signal first.
            body = {"kind": "abort-caller", "then": {"kind": "await-abort", "then": body}}
        else:
            body = {"kind": effect, "then": body}
    return body


def _effects_of(chosen: tuple[str, ...]) -> _Builder:
    return lambda rng: [(effect, _contexts_of(rng) if effect == "defer" else None) for effect in chosen]


@cache
def _effects(aborting: bool) -> _Part:
    """What a terminal body sits behind, innermost first, each with its contexts: up to two of defer and
    conclude, and when ``aborting`` one abort among them (at any place, each place as likely)."""
    choices: list[tuple[int, _Builder]] = []
    for weight, chosen in _EFFECTS:
        if not aborting:
            choices.append((weight, _effects_of(chosen)))
            continue
        places = len(chosen) + 1
        for place in range(places):
            for abort in ("abort-caller", "abort-then-await", "abort-replacement", "report-signal"):
                effects = (*chosen[:place], abort, *chosen[place:])
                choices.append((weight * 6 // places, _effects_of(effects)))
    return _built(*choices)


def _indent(rng: random.Random) -> Any:
    """A json renderer's indent: mostly a few spaces, now and then any number or string."""
    return _copied(seeded.pick(rng, _ODD_INDENTS)) if seeded.chance(rng, 0.25) else rng.randrange(5)


@cache
def _renderers(kinds: tuple[str, ...], sealed: bool, failing: bool) -> _Part:
    """Renderers: ``failing`` ones (raising, or rendering exotic content), else sound ones; ``sealed`` ones
    never show a value's ``secret`` field."""
    if failing:
        exotic = _exotic_or_plain_of(kinds)
        return _built(
            (1, lambda rng: {"kind": "raise", "message": _message(rng)}),
            (1, lambda rng: {"kind": "exotic", "content": [exotic(rng) for _ in range(rng.randint(1, 2))]}),
        )
    names = ("keep",) if sealed else ("keep", "text", "0", "a")

    def field(rng: random.Random) -> dict[str, Any]:
        return _with_optional(rng, {"kind": "field", "name": seeded.pick(rng, names)}, prefix=_message)

    def constant(rng: random.Random) -> dict[str, Any]:
        return {"kind": "constant", "content": _text_blocks_of(rng)}

    if sealed:
        sound: tuple[tuple[int, _Builder], ...] = ((3, field), (1, constant))
    else:
        sound = (
            (3, lambda rng: _with_optional(rng, {"kind": "text"}, prefix=_message)),
            (2, lambda rng: _with_optional(rng, {"kind": "json"}, indent=_indent)),
            (2, field),
            (1, _constant(kind="blocks")),
            (1, constant),
            (1, _constant(kind="keys")),  # key names only: never a value's secret
        )
    return _built(*sound, (1, _wrapping("mutate-then", sound)))


@cache
def _projectors(kinds: tuple[str, ...], sealed: bool, failing: bool) -> _Part:
    """Metadata projectors (``None``: none), as :func:`_renderers`."""
    raising = (1, lambda rng: {"kind": "raise", "message": _message(rng)})
    # define_tool wraps a projector that is not callable: each direct call fails at its metadata (R-REG-1)
    not_callable = (1, lambda rng: {"kind": "not-callable", "value": _copied(seeded.pick(rng, _NOT_CALLABLE))})
    not_callable_scalar = (1, lambda rng: {"kind": "not-callable", "value": seeded.pick(rng, _NOT_CALLABLE[:3])})
    if failing:
        if sealed:
            return _built(raising, (2, not_callable[1]), not_callable_scalar)
        exotic = _exotic_or_plain_of(kinds)
        exotic_meta = (1, lambda rng: {"kind": "exotic", "value": exotic(rng)})
        return _built(raising, (2, not_callable[1]), not_callable_scalar, exotic_meta)
    choices: list[tuple[int, _Builder]] = [
        (4, lambda rng: None),
        (1, lambda rng: {"kind": "constant", "value": seeded.value(rng, 3)}),
        (1, _constant(kind="null")),
    ]
    if not sealed:
        choices += [
            (2, _constant(kind="value")),
            (2, lambda rng: {"kind": "wrap", "key": seeded.pick(rng, ("projected", "v"))}),
        ]
    projecting = tuple(choice for choice in choices[1:])  # a mutate-then projects as one of these
    return _built(*choices, (1, _wrapping("mutate-then", projecting)))


@cache
def _finalizers(failing: bool) -> _Part:
    """A raising finalizer when ``failing``, else a sound one three times in four (``None``: none)."""
    if failing:
        return _built((1, lambda rng: {"kind": "raise", "message": _message(rng)}))
    sound: tuple[tuple[int, _Builder], ...] = (
        (1, _constant(kind="keep")),
        (1, lambda rng: {"kind": "replace", "content": _text_blocks_of(rng)}),
        (1, lambda rng: {"kind": "truncate", "chars": rng.randrange(13)}),
    )
    return _built((9, lambda rng: None), *sound, (1, _wrapping("mutate-then", sound)))


# Hook actions: the ones that let the call succeed weigh more, so that most calls of a scenario still succeed
# and what comes after (persist, replay, probes) has values to work on. An action wrapping another
# (abort-caller, dispose-tool-then) picks the inner one with its own seed.


def _contexts_optional(rng: random.Random, part: dict[str, Any]) -> dict[str, Any]:
    return _with_optional(rng, part, additionalContexts=_contexts_of)


def _wrapping(kind: str, inner: tuple[tuple[int, _Builder], ...]) -> _Builder:
    return lambda rng: {"kind": kind, "then": _either(*inner)(rng)}


@cache
def _pre_execute_actions(cancellation: bool) -> _Part:
    actions: tuple[tuple[int, _Builder], ...] = (
        (4, _constant(kind="allow")),
        (1, lambda rng: {"kind": "deny", "reason": _deny_reason(rng, may_be_null=True)}),
        (1, lambda rng: _with_optional(rng, {"kind": "ask"}, reason=_message)),
        (1, _raising("raise")),
    )
    wrapping = [(1, _wrapping("mutate-then", actions))]
    if cancellation:
        wrapping.append((1, _wrapping("abort-caller", actions)))
    return _built(*actions, *wrapping)


@cache
def _guard_actions() -> _Part:
    actions: tuple[tuple[int, _Builder], ...] = (
        (4, _constant(kind="pass")),
        (1, lambda rng: {"kind": "deny", "reason": _deny_reason(rng, may_be_null=False)}),
        (1, _raising("raise")),
    )
    return _built(*actions, (1, _wrapping("mutate-then", actions)))


@cache
def _execute_actions(kinds: tuple[str, ...], cancellation: bool) -> _Part:
    values = _values_of(kinds, 3)

    def success(rng: random.Random) -> dict[str, Any]:
        part = {"kind": "short-circuit-success", "value": values(rng)}
        optional = {"content": _text_blocks_of, "meta": _plain_of(3), "additionalContexts": _contexts_of}
        return _with_optional(rng, part, **optional)

    def failure(rng: random.Random) -> dict[str, Any]:
        error = _with_optional(rng, {"message": _message(rng)}, info=lambda rng: dict(seeded.pick(rng, _ERROR_CLASSES)))
        part = {"kind": "short-circuit-failure", "error": error, "content": _text_blocks_of(rng)}
        return _with_optional(rng, part, meta=_plain_of(3), additionalContexts=_contexts_of)

    actions: tuple[tuple[int, _Builder], ...] = (
        (4, _constant(kind="passthrough")),
        (3, lambda rng: {"kind": "spread", "additionalContexts": _contexts_of(rng)}),
        (2, success),
        (2, failure),
        (1, _raising("raise")),
        (1, _constant(kind="cache")),
        (1, lambda rng: _with_optional(rng, {"kind": "look-alike"}, content=_text_blocks_of)),
    )
    if cancellation:
        actions += (
            (1, _constant(kind="replace-signal-aborted")),
            (1, _constant(kind="replace-signal-aborted", later=True)),
            (1, _constant(kind="abort-caller-after-next")),
        )
    return _built(*actions, (2, _wrapping("dispose-tool-then", actions)), (2, _wrapping("mutate-then", actions)))


@cache
def _post_execute_actions(kinds: tuple[str, ...], cancellation: bool) -> _Part:
    values = _values_of(kinds, 3)

    def feedback(rng: random.Random) -> Any:
        # Always a list holding no null: the message of feedback that is no list, or of a null in place of a block,
        # is each host's own text (docs/edge-cases.md section 4), which a generated scenario must not pin.
        if seeded.chance(rng, 0.5):
            return _text_blocks_of(rng)
        items = (seeded.value(rng, 2) for _ in range(rng.randrange(1, 4)))
        return [_message(rng) if item is None else item for item in items]

    actions: tuple[tuple[int, _Builder], ...] = (
        (4, lambda rng: _contexts_optional(rng, {"kind": "accept"})),
        (2, lambda rng: _contexts_optional(rng, {"kind": "accept-content", "content": _text_blocks_of(rng)})),
        (2, lambda rng: _contexts_optional(rng, {"kind": "accept-value", "value": values(rng)})),
        (
            1,
            lambda rng: {"kind": "accept-both", "content": _text_blocks_of(rng), "value": seeded.value(rng, 3)},
        ),
        (1, lambda rng: _contexts_optional(rng, {"kind": "block", "feedback": feedback(rng)})),
        (1, _raising("raise")),
    )
    wrapping = [(1, _wrapping("dispose-tool-then", actions)), (1, _wrapping("mutate-then", actions))]
    if cancellation:
        wrapping += [(1, _wrapping("abort-caller", actions)), (1, _wrapping("report-signal", actions))]
    return _built(*actions, *wrapping)


# --- policies, MCP tools, registrations and thresholds ---------------------------------------------------

_MCP_SERVER: Final = "fixture"  # the scenario format's MCP server (docs/protocol.md, "MCP tools")
_IMAGES: Final = (("image/png", "iVBORw0KGgo="), ("image/jpeg", "/9j/4AAQSkZJRg=="), ("image/gif", "R0lGODlh"))
_BAD_IMAGES: Final = (
    {"mimeType": "image/bmp", "data": "AAAA"},
    {"mimeType": "image/png", "data": "AAA"},
    {"mimeType": "image/png"},
)
_ODD_BLOCKS: Final = ({"type": "video"}, {"kind": "no type"}, "not an object", {"type": "text"}, {"type": "audio"})
# isError: absent most often; exactly true; and values a truthiness slip takes for true (R-MCP-3)
_IS_ERROR: Final = ((8, None), (3, True), (1, False), (1, 1), (1, "true"), (1, [1]), (1, "null"), (1, 0))
_STRUCTURED_SCHEMA: Final = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
    "additionalProperties": False,
}
_OUTSIDE_SUBSET: Final = {"type": "object", "patternProperties": {".*": {}}}
_MCP_RAW_NAMES: Final = ("read.me", "名前", "x" * 60, "a-b_c")
_TASK_SUPPORT: Final = ("required", "optional", "forbidden")
_INPUT_SCHEMAS: Final = (
    {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    {"type": "object"},
    {"type": "object", "properties": {"q": {"type": "string", "minLength": 3}}},
)


def _mcp_block(rng: random.Random) -> Any:
    """One block of an MCP result: mostly text, some images (valid or not), the bridge's other literals."""
    form = seeded.weighted(
        rng, ((6, "text"), (3, "image"), (1, "bad-image"), (1, "link"), (1, "audio"), (1, "resource"), (1, "odd"))
    )
    if form == "text":
        return {"type": "text", "text": _message(rng)}
    if form == "image":
        media_type, data = seeded.pick(rng, _IMAGES)
        return {"type": "image", "mimeType": media_type, "data": data}
    if form == "bad-image":
        return {"type": "image", **seeded.pick(rng, _BAD_IMAGES)}
    if form == "link":
        return _with_optional(rng, {"type": "resource_link", "uri": "file:///spec"}, name=_message)
    if form == "audio":
        return {"type": "audio", "mimeType": "audio/wav", "data": "AAAA"}
    if form == "resource":
        return {"type": "resource", "resource": _with_optional(rng, {"uri": "file:///r"}, text=_message)}
    return copy.deepcopy(seeded.pick(rng, _ODD_BLOCKS))


def _mcp_spec(rng: random.Random) -> dict[str, Any]:
    """An MCP fixture: what its server answers (blocks, a legacy result, content that is not a list), its
    ``isError``, an advertised output schema (in the subset or not) with or without ``structuredContent``, now
    and then an input schema and an execution mode."""
    shape = seeded.weighted(rng, ((6, "blocks"), (1, "legacy"), (1, "not-a-list")))
    response: dict[str, Any] = {}
    if shape == "blocks":
        response["content"] = [_mcp_block(rng) for _ in range(rng.randrange(5))]
    elif shape == "legacy":
        if seeded.chance(rng, 0.75):
            response["toolResult"] = seeded.value(rng, 3)
    else:
        response["content"] = _message(rng)
    is_error = seeded.weighted(rng, _IS_ERROR)
    if is_error is not None:
        response["isError"] = None if is_error == "null" else copy.deepcopy(is_error)
    mcp: dict[str, Any] = {}
    advertised = seeded.weighted(rng, ((4, None), (3, "subset"), (1, "outside")))
    if advertised == "subset":
        mcp["outputSchema"] = copy.deepcopy(_STRUCTURED_SCHEMA)
    elif advertised == "outside":
        mcp["outputSchema"] = copy.deepcopy(_OUTSIDE_SUBSET)
    structured = seeded.weighted(rng, ((3, None), (3, "valid"), (1, "invalid"), (1, "any")))
    if structured == "valid":
        response["structuredContent"] = {"n": seeded.safe_integer(rng)}
    elif structured == "invalid":
        response["structuredContent"] = {"n": seeded.pick(rng, ("one", 2.5, None))}
    elif structured == "any":
        response["structuredContent"] = seeded.value(rng, 3)
    if seeded.chance(rng, 0.2):
        mcp["inputSchema"] = copy.deepcopy(seeded.pick(rng, _INPUT_SCHEMAS))
    if seeded.chance(rng, 0.15):
        mcp["execution"] = {"taskSupport": seeded.pick(rng, _TASK_SUPPORT)}
    mcp["response"] = response
    return {"mcp": mcp}


_MCP_TOOLS: Final = _seeded(_mcp_spec)

_SOUND_OUTPUT: Final = {"schema": {"type": "json"}, "render": {"kind": "json"}}
# Fixtures whose registration fails, each one check of R-REG-5's order deciding (or two, the first winning).
_REFUSED: Final[tuple[dict[str, Any], ...]] = (
    {"rawParameters": {}, "body": {"kind": "return", "value": 1}},
    {"rawParameters": {}, "output": {"schema": {"type": "json"}}, "body": {"kind": "return", "value": 1}},
    {
        "rawParameters": {},
        "output": {
            "rawSchema": {},
            "render": {"kind": "json"},
            "presentationMeta": {"kind": "not-callable", "value": 1},
        },
        "body": {"kind": "return", "value": 1},
    },
    {"rawParameters": {}, "output": {"render": {"kind": "json"}}, "body": {"kind": "return", "value": 1}},
    {
        "rawParameters": {},
        "output": {"schema": {"type": "json"}},
        "timeoutMs": 0,
        "body": {"kind": "return", "value": 1},
    },
    {"rawParameters": {}, "output": _SOUND_OUTPUT, "timeoutMs": "5", "body": {"kind": "return", "value": 1}},
    {"rawParameters": {}, "output": _SOUND_OUTPUT, "timeoutMs": -0.5, "body": {"kind": "return", "value": 1}},
    {"parameters": {}, "output": _SOUND_OUTPUT, "timeoutMs": -1, "body": {"kind": "return", "value": 1}},
    {
        "parameters": {},
        "output": {"schema": {"type": "bogus"}, "render": {"kind": "json"}},
        "timeoutMs": "10",
        "body": {"kind": "return", "value": 1},
    },
    {"name": "run_code", "parameters": {}, "output": _SOUND_OUTPUT, "body": {"kind": "return", "value": 1}},
)
_TWO_REFUSALS: Final[tuple[dict[str, Any], ...]] = (
    {
        "rawParameters": {},
        "output": {"schema": {"type": "json"}},
        "timeoutMs": -1,
        "body": {"kind": "return", "value": 1},
    },
    {
        "rawParameters": {},
        "output": {"rawSchema": {"type": "string", "pattern": "x"}, "render": {"kind": "json"}},
        "timeoutMs": 0,
        "body": {"kind": "return", "value": 1},
    },
    {
        "name": "run_code",
        "rawParameters": {},
        "output": {"rawSchema": {"type": "date"}, "render": {"kind": "json"}},
        "body": {"kind": "return", "value": 1},
    },
)
# Output schemas outside the subset, raw (R-SUBSET-*) and in the DSL (R-DSL-*).
_RAW_OUTSIDE: Final[tuple[Any, ...]] = (
    5,
    [{"type": "string"}],
    {"type": "string", "pattern": "x"},
    {"type": "string", "description": 5},
    {"properties": {}},
    {"type": "string", "oneOf": [{}, {}]},
    {"oneOf": [{}]},
    {"oneOf": [{}, 5]},
    {"type": ["string", "null"]},
    {"type": "date"},
    {"type": "string", "items": {}},
    {"type": "object", "properties": [], "required": ["x"]},
    {"type": "object", "required": "x", "additionalProperties": 1},
    {"type": "string", "enum": []},
    {"type": "integer", "enum": [1, "one"]},
    {"type": "integer", "const": "one"},
    {"type": "integer", "enum": [1, 2], "const": 3},
    {"type": "object", "pattern": 1, "properties": {"a": {"type": "string", "minLength": 1}}, "required": ["b"]},
    {"type": "array", "items": {"type": "string", "format": "date"}, "minItems": 1},
)
_DSL_OUTSIDE: Final[tuple[Any, ...]] = (
    5,
    {"type": "string", "pattern": "x"},
    {"type": "object", "properties": {}},
    {"type": "bogus"},
    {},
    {"type": "string", "oneOf": [{"type": "string"}, {"type": "null"}]},
    {"oneOf": {"type": "string"}},
    {"type": "array", "items": 5},
    {"type": "object", "additionalProperties": False, "properties": {"a": {"type": "string", "required": False}}},
    {
        "type": "object",
        "additionalProperties": True,
        "properties": {"a": {"type": "string", "required": True}, "b": {"type": "x"}},
    },
    {"type": "json", "enum": [1]},
)
_DSL_PARAMETERS_OUTSIDE: Final[tuple[Any, ...]] = (
    {"a": {"type": "string", "required": False}},
    {"a": 5},
    {"a": {"type": "object", "properties": {}}},
)


def _refused_spec(rng: random.Random) -> dict[str, Any]:
    """A fixture whose registration fails (a ``registerError``): no output or render, a projector that is not
    callable on a raw definition, a budget that is not a positive number, a schema outside the subset or the
    DSL, the reserved name; R-REG-5's order decides which check speaks."""
    form = seeded.weighted(
        rng, ((3, "refused"), (3, "budget"), (3, "raw"), (3, "dsl"), (2, "parameters"), (1, "reserved"), (2, "order"))
    )
    body = {"kind": "return", "value": 1}
    if form == "order":  # two checks fail: the earlier one of R-REG-5's order speaks
        spec = copy.deepcopy(seeded.pick(rng, _TWO_REFUSALS))
    elif form == "reserved":
        spec = {"parameters": {}, "output": copy.deepcopy(_SOUND_OUTPUT), "body": body, "name": "run_code"}
    elif form == "budget":  # up to zero, on a raw definition or through define_tool
        spec = {"output": copy.deepcopy(_SOUND_OUTPUT), "body": body, "timeoutMs": seeded.pick(rng, (0, -0.5, -1))}
        spec["parameters" if seeded.chance(rng, 0.5) else "rawParameters"] = {}
    elif form == "refused":
        spec = copy.deepcopy(seeded.pick(rng, _REFUSED))
    elif form == "raw":
        schema = copy.deepcopy(seeded.pick(rng, _RAW_OUTSIDE))
        spec = {"rawParameters": {}, "output": {"rawSchema": schema, "render": {"kind": "json"}}, "body": body}
    elif form == "dsl":
        schema = copy.deepcopy(seeded.pick(rng, _DSL_OUTSIDE))
        spec = {"parameters": {}, "output": {"schema": schema, "render": {"kind": "json"}}, "body": body}
    else:
        parameters = copy.deepcopy(seeded.pick(rng, _DSL_PARAMETERS_OUTSIDE))
        spec = {"parameters": parameters, "output": copy.deepcopy(_SOUND_OUTPUT), "body": body}
    spec["registerError"] = True
    return spec


_REFUSED_TOOLS: Final = _seeded(_refused_spec)

# A tool's timeoutMs: in time (the last budget a timer is armed for among them), firing at once (given only to a
# body that waits for its abort, and only with the timeout policy installed), past the timer's bound (the wrapper
# raises), or refused at registration (up to zero).
_IN_TIME_BUDGETS: Final = (
    (3, 60_000),
    (1, thresholds.MAX_TIMER_DELAY_MS - 1),
    (1, thresholds.MAX_TIMER_DELAY_MS - 0.5),
    (2, thresholds.MAX_TIMER_DELAY_MS),
    (1, float(thresholds.MAX_TIMER_DELAY_MS)),
)
_FIRING_BUDGETS: Final = ((3, 1), (2, 0.5), (1, 2.5), (1, 1e-7))
_PAST_TIMER_BUDGETS: Final = (
    (2, thresholds.MAX_TIMER_DELAY_MS + 0.5),
    (2, thresholds.MAX_TIMER_DELAY_MS + 1),
    (1, 1.7976931348623157e308),
)
# The spill policy's bound, and how far from it an echoed text lands (in UTF-8 bytes; None: anywhere).
_SPILL_BOUNDS: Final = ((1, 1), (3, 16), (3, 110), (1, 4096), (1, 0))  # 0 last: shrinking ends at 1
_SPILL_OFFSETS: Final = ((2, -1), (3, 0), (3, 1), (2, None))
_LAST_CHARACTERS: Final = ("a", "é", "😀", "\ud800", "名")


def _sides(last: int, far: int) -> tuple[tuple[int, int], ...]:
    """A measure just below, at, just above ``last`` (each as likely), and ``far`` past it now and then."""
    return ((1, last - 1), (1, last), (1, last + 1), (1, far))


def _nest(depth: int, leaf: Any, *, in_objects: bool = False, key: str = "a") -> dict[str, Any]:
    tag: dict[str, Any] = {"$generate": "nest", "depth": depth, "in": "object" if in_objects else "array"}
    if in_objects:
        tag["key"] = key
    tag["leaf"] = leaf
    return tag


def _array_chain(arrays: int, leaf: dict[str, Any]) -> dict[str, Any]:
    """A schema of ``arrays`` array nodes, each the ``items`` of the one above, ``leaf`` the innermost items."""
    return {
        "$generate": "nest",
        "depth": arrays,
        "in": "object",
        "key": "items",
        "with": {"type": "array"},
        "leaf": leaf,
    }


def _deep_value(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """A value nested just below, at or just above the iterative snapshot's depth (``snapshot-depth``)."""
    depth = seeded.weighted(rng, _sides(thresholds.FAST_DEPTH + 1, 1000))
    in_objects = seeded.chance(rng, 0.5)
    value = _nest(depth, seeded.scalar(rng), in_objects=in_objects, key=seeded.pick(rng, ("a", "0", "10", "😀")))
    return {"schema": {"type": "json"}}, {"kind": "return", "value": value}


def _wide_value(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """A first value whose root holds just fewer, as many or just more items than generate the fused walk at
    once (``fused-items``), typed or not; one item in four of the typed ones breaks its schema."""
    count = seeded.weighted(rng, _sides(thresholds.FUSED_THRESHOLD - 2, 100))
    form = seeded.weighted(rng, ((2, "json"), (2, "dsl"), (2, "raw"), (1, "object")))
    if form == "object":  # written as an object tag where generated values may be
        member = seeded.pick(rng, (0, "v"))
        return {"schema": {"type": "json"}}, {
            "kind": "return",
            "value": {f"k{index}": member for index in range(count)},
        }
    items: list[Any] = [seeded.pick(rng, (0, index)) for index in range(count)]
    if form != "json" and seeded.chance(rng, 0.25):
        items[seeded.pick(rng, (0, count // 2, count - 1))] = seeded.pick(rng, ("x", 1.5, None))
    schema: dict[str, Any] = {"schema": {"type": "json"}}
    if form == "dsl":
        schema = {"schema": {"type": "array", "items": {"type": "integer"}}}
    elif form == "raw":
        schema = {"rawSchema": {"type": "array", "items": {"type": "integer"}}}
    return schema, {"kind": "return", "value": items}


def _wide_schema(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """Objects of just fewer, as many or just more properties than are checked inline (``fused-properties``),
    63 of them in the first value so that it is fused at once; one flaw now and then (an extra key on a closed
    object, a wrong type, a missing required property) at the first, a middle or the last item."""
    count = seeded.weighted(rng, _sides(thresholds.UNROLLED_PROPERTIES, 40))
    names = [f"p{index}" for index in range(count)]
    closed = seeded.chance(rng, 0.5)
    node: dict[str, Any] = {
        "type": "object",
        "properties": {name: {"type": "integer"} for name in names},
        "required": names if seeded.chance(rng, 0.5) else names[::2],
    }
    if closed:
        node["additionalProperties"] = False
    items = [{name: index for index, name in enumerate(names)} for _ in range(thresholds.FUSED_THRESHOLD - 1)]
    flaw = seeded.weighted(rng, ((4, None), (1, "extra"), (1, "type"), (1, "missing")))
    if flaw is not None:
        item: dict[str, Any] = items[seeded.pick(rng, (0, len(items) // 2, len(items) - 1))]
        if flaw == "extra":
            item["extra"] = 1
        elif flaw == "type":
            item[names[-1]] = "x"
        else:
            del item[names[0]]
    return {"rawSchema": {"type": "array", "items": node}}, {"kind": "return", "value": items}


def _leaf(rng: random.Random, valid: bool) -> Any:
    return seeded.safe_integer(rng) if valid else seeded.pick(rng, ("x", 1.5, [0], None))


def _deep_schema(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """An output schema of nested arrays just below, at or just above the validator closures' height
    (``closure-height``) or the fused walk's depth (``fused-schema-depth``, 63 values in the first so that it is
    fused at once), and a value as deep: valid, or wrong at its leaf, or an array short."""
    valid = seeded.chance(rng, 0.75)
    if seeded.chance(rng, 0.4):
        height = seeded.weighted(rng, _sides(thresholds.CLOSURE_HEIGHT, 120))
        arrays, roots = height - 1, 1
    else:
        arrays = seeded.weighted(rng, _sides(thresholds.FUSED_SCHEMA_DEPTH + 1, 80))
        roots = thresholds.FUSED_THRESHOLD - 1
    schema = _array_chain(arrays, {"type": "integer"})
    short = not valid and seeded.chance(rng, 0.5)
    inner = _nest(arrays - 2 if short else arrays - 1, _leaf(rng, valid or short))
    value = {"$generate": "repeat", "count": roots, "item": inner}
    return {"rawSchema": schema}, {"kind": "return", "value": value}


def _deep_parameters(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """DSL parameters whose compiled schema is just below, at or just above the validator closures' height
    (``closure-height``), and arguments as deep (valid, or wrong at the leaf): the tool returns them."""
    height = seeded.weighted(rng, _sides(thresholds.CLOSURE_HEIGHT, 120))
    arrays = height - 2  # the root object and the integer leaf are the other two levels
    parameters = {"items": _array_chain(arrays, {"type": "integer"})}
    arguments = {"items": _nest(arrays, _leaf(rng, seeded.chance(rng, 0.75)))}
    return parameters, arguments


_THRESHOLD_VALUES: Final = _built((3, _deep_value), (3, _wide_value), (2, _wide_schema), (3, _deep_schema))
_SHALLOW_THRESHOLD_VALUES: Final = _built((3, _wide_value), (2, _wide_schema))
_DEEP_PARAMETERS: Final = _seeded(_deep_parameters)
# Renderers that take any depth of value in both languages (the reference adapter's `keys` does not).
_DEEP_RENDERERS: Final = _built(
    (3, _constant(kind="json")),
    (1, lambda rng: {"kind": "constant", "content": _text_blocks_of(rng)}),
    (1, _constant(kind="blocks")),
)


def _spill_text(target: int, last: str) -> str:
    """A text of exactly ``target`` UTF-8 bytes (a lone surrogate counts 3, as ``TextEncoder`` writes U+FFFD)
    ending in ``last`` (ASCII, two-byte, astral, a lone surrogate, three-byte) when it fits."""
    size = _utf8_length(last)
    if target < size:
        return "a" * max(target, 0)
    return "a" * (target - size) + last


def _utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


# --- building a scenario -------------------------------------------------------------------------------

_Drawn = TypeVar("_Drawn")


class Draw(Protocol):
    """What :class:`ScenarioBuilder` draws with: the ``draw`` of an ``@st.composite`` function, or the ``draw``
    of ``st.data()`` in a test or a state machine rule."""

    def __call__(self, strategy: SearchStrategy[_Drawn], /) -> _Drawn:
        """Draw one value from ``strategy``."""
        ...


@dataclass(slots=True)
class _Tool:
    parameters: int  # index into _PARAMETERS
    tainted: bool = False  # its value may hold the canary
    value: Any = None  # what its body returns, when that is known in advance
    program: bool = False
    nested_calls: int = 0
    call_name: str = ""  # the name its calls use (an MCP tool's public name, a shared name)
    registered: bool = True  # registration is expected to succeed
    arguments: Any = None  # the arguments its calls pass, when they are its own (deep parameters)
    echo: str | None = None  # an echo of its text argument: the prefix its renderer puts before it


@dataclass(slots=True)
class _Step:
    id: str
    kind: str
    value: Any = None  # the value its call should return, when known in advance
    arguments: Any = None
    tainted: bool = False
    exotic_arguments: bool = False
    nested_calls: int = 0
    call_id: str | None = None  # its call's own callId, when it has one (else the step id)


class ScenarioBuilder:
    """Builds one scenario document step by step from hypothesis draws (``draw`` is the ``draw`` of an
    ``@st.composite`` function or ``st.data().draw``).

    Fixture tools come from the behaviour catalogue (renderers, metadata projectors, bodies, content
    finalizers), hooks act at every stage with step filters, an approval service and a change listener may be
    installed, and steps are calls (some with exotic arguments), freeze probes, persist, model steps, replay
    and schemas. Whatever is added, :meth:`document` is a valid scenario (once it has a step) that the
    reference runs without error and without waiting for ever:

    - a body that waits for its abort (``await-abort``) always follows an ``abort-caller``;
    - a program calls only tools that are not programs, so nested dispatch always ends;
    - a ``return-result-of`` wrapper applies only to calls made after the step it names;
    - :data:`CANARY` appears only in the ``secret`` field of values whose tool renders and projects without
      it (a program that may receive such a value is sealed the same way, and no ``return-result-of``
      hands it to another tool), so that by the contract it never reaches a persisted event.

    ``capabilities`` limits the optional capabilities used (default :data:`SCENARIO_CAPABILITIES`),
    ``exotic_kinds`` the exotic tags drawn (default :data:`REFERENCE_EXOTIC_KINDS`; empty for none).
    """

    def __init__(
        self,
        *,
        capabilities: Iterable[str] | None = None,
        exotic_kinds: Iterable[str] | None = None,
        scenario_id: str = "generated",
    ) -> None:
        self.capabilities = frozenset(SCENARIO_CAPABILITIES if capabilities is None else capabilities)
        self.exotic_kinds = _exotic_kinds(REFERENCE_EXOTIC_KINDS if exotic_kinds is None else exotic_kinds)
        self.scenario_id = scenario_id
        self.tools: dict[str, dict[str, Any]] = {}
        self.hooks: list[dict[str, Any]] = []
        self.steps: list[dict[str, Any]] = []
        self._tools: dict[str, _Tool] = {}
        self._steps: list[_Step] = []
        self._mutating_wrapper = False  # a mutate-then wrapper is installed: no inner one may author a success
        self._model_step_tools: set[str] = set()  # the tools a model step calls: they stay exclusive
        self.approval: dict[str, Any] | None = None
        self.change_listener: dict[str, Any] | None = None
        self.change_listeners: list[dict[str, Any]] = []
        self.spill: dict[str, Any] | None = None
        self.bare: list[str] = []
        self.attachments: dict[str, Any] | None = None
        self.timeout: dict[str, Any] | None = None

    def allows(self, capability: str) -> bool:
        """Whether generated parts may need ``capability``."""
        return capability in self.capabilities

    @property
    def call_steps(self) -> list[str]:
        """The ids of the call steps so far, in order."""
        return [step.id for step in self._steps if step.kind == "call"]

    @property
    def persist_steps(self) -> list[str]:
        """The ids of the steps so far that wrote a log a replay can read (persist and model steps), in order."""
        return [step.id for step in self._steps if step.kind in {"persist", "modelStep"}]

    def document(self) -> dict[str, Any]:
        """The scenario so far as a fresh document (valid once it has a step), with ``requires`` computed."""
        document: dict[str, Any] = {
            "formatVersion": FORMAT_VERSION,
            "id": self.scenario_id,
            "description": "Drawn by toolcanon_conformance.strategies.",
            "requires": [],
            "tools": _copied(self.tools),
            "hooks": _copied(self.hooks),
            "steps": _copied(self.steps),
        }
        if any(program["calls"] for program in _programs(self.tools)):
            # A hook disposing a tool before a program's run starts leaves it no binding of that tool: what the
            # program's call does then is left to each implementation (docs/edge-cases.md section 5).
            document["hooks"] = [_without_disposals(hook) for hook in document["hooks"]]
        if self.approval is not None:
            document["approval"] = _copied(self.approval)
        if self.change_listener is not None:
            document["changeListener"] = _copied(self.change_listener)
        if self.change_listeners:
            document["changeListeners"] = _copied(self.change_listeners)
        if self.bare:
            document["bare"] = list(self.bare)
        for member, service in (("spill", self.spill), ("attachments", self.attachments), ("timeout", self.timeout)):
            if service is not None:
                document[member] = _copied(service)
        if self.allows("generated-values"):
            _write_compactly(document)
        document["requires"] = _requirements(document)
        return document

    # --- services -------------------------------------------------------------------------------------

    def add_approval(self, draw: Draw) -> None:
        """Install an approval service (when allowed): what it answers every ``ask`` (an unknown string now and
        then), whether it aborts the caller first (with cancellation), whether it reports what it was asked."""
        if not self.allows("approval"):
            return
        outcome, abort, report = draw(
            _combined(
                ((3, "allowed-once"), (2, "rejected"), (1, "cancelled"), (1, "unavailable"), (1, "maybe")),
                ((4, False), (1 if self.allows("cancellation") else 0, True)),
                ((1, True), (1, False)),
            )
        )
        approval: dict[str, Any] = {"outcome": outcome}
        if abort:
            approval["abortCaller"] = True
        if report:
            approval["report"] = True
        self.approval = approval

    def add_change_listener(self, draw: Draw) -> None:
        """Install a tools/change listener that raises on some of the first notifications (registrations, the
        rollbacks those raises cause, and disposals), or, one time in three, two or three such listeners in order."""
        count = draw(_weighted((2, 1), (1, 2), (1, 3)))
        raise_ons = [set(draw(_notification_numbers(2 * len(self.tools) + 3))) for _ in range(count)]
        # Never on the registration of a tool a program calls: what a program's call of a name that never
        # registered does is left to each implementation (docs/edge-cases.md section 5).
        called = {call["name"] for program in _programs(self.tools) for call in program["calls"]}
        # Nor on an MCP tool's: the original's client registers its server's tools as one generation and takes
        # them all back when one fails, the reference one by one, and no document decides which notifications
        # a refused generation makes.
        called |= {name for name, spec in self.tools.items() if "mcp" in spec}
        notification = 0
        for name, spec in self.tools.items():
            if spec.get("registerError") or spec.get("register") is False:
                continue  # a refused or unregistered tool notifies no one, so the counts of those after it hold
            notification += 1
            raised = any(notification in raise_on for raise_on in raise_ons)
            if raised and name in called:
                for raise_on in raise_ons:
                    raise_on.discard(notification)
            elif raised:
                notification += 1  # the rollback of the registration the raise refused
        listeners = [{"raiseOn": sorted(raise_on), "message": _messages().draw(draw)} for raise_on in raise_ons]
        if count > 1:
            self.change_listeners = listeners  # one that never raises still sees every notification in its turn
        elif raise_ons[0]:
            self.change_listener = listeners[0]

    def add_spill(self, draw: Draw) -> None:
        """Install the spill policy (when allowed) with a bound echo tools' calls land at, below or above."""
        if self.allows("spill"):
            self.spill = {"maxBytes": _chosen(*_SPILL_BOUNDS).draw(draw)}

    def add_spill_failure(self, draw: Draw) -> None:
        """Make the installed spill store fail (raising at once, or its answer rejecting) on every call or on
        some of the calls so far, direct or nested (the text then stays whole, on either arm)."""
        if self.spill is None:
            return
        how, every = draw(_combined(((1, "raise"), (1, "reject")), ((1, True), (2 if self.call_steps else 0, False))))
        fail: dict[str, Any] = {"how": how}
        if not every:
            fail["calls"] = draw(_subsets(tuple(self.call_steps + self._nested_calls()), 3))
        self.spill["fail"] = fail

    def add_bare(self, draw: Draw) -> None:
        """List some pipeline stages as ``bare``: no instrumentation hook there, so that a registry with no hook
        of a stage (the no-wrapper execute path) runs unless the scenario's own hooks install one."""
        self.bare = sorted(draw(_subsets(_BARE_STAGES, 4)), key=_BARE_STAGES.index)

    def add_timeout(self, draw: Draw) -> None:
        """Install the timeout policy (when allowed): from now on a tool may declare a budget that fires."""
        if self.allows("timeout"):
            self.timeout = {}

    def add_attachments(self, draw: Draw) -> None:
        """Admit MCP images (when allowed): an attachment store, every call's agent routed to image input."""
        if self.allows("mcp"):
            self.attachments = {}

    # --- tools ----------------------------------------------------------------------------------------

    def add_tool(self, draw: Draw) -> str:
        """Add a fixture tool (a plain, canary, program, first-party, echo, threshold or MCP one, or one whose
        registration fails or that is never registered) and return its key.

        Most tools are sound; a third have one flaw that makes their calls fail in a way of its own (a raising
        or exotic renderer or projector, a raising body or one returning exotic values, a raising finalizer, an
        abort). A tool with a body may declare a ``timeoutMs``: in time, past the timer's bound, or (with the
        timeout policy installed) one that fires on a body waiting for its abort.
        """
        name = f"t{len(self.tools)}"
        originals = [key for key, known in self._tools.items() if known.registered and "mcp" not in self.tools[key]]
        special = _chosen(
            (20, None),
            (3 if self.allows("mcp") and self._mcp_may_follow() else 0, "mcp"),
            (3, "refused"),
            (1, "unregistered"),
            (1 if originals else 0, "duplicate"),
            (6, "threshold"),
            (self._echo_weight(), "echo"),
        ).draw(draw)
        if special == "mcp":
            return self._add_mcp_tool(draw, name)
        if special == "refused":
            refused: dict[str, Any] = _REFUSED_TOOLS.draw(draw)
            self.tools[name] = refused
            self._tools[name] = _Tool(0, call_name=refused.get("name", name), registered=False)
            return name
        callable_tools = any(not known.program and known.registered for known in self._tools.values())
        kinds = (
            (3, "plain"),
            (3, "canary"),
            (2 if self.allows("nested") and callable_tools else 0, "program"),
            (1 if self.allows("first-party-renderers") else 0, "first-party"),
        )
        flaws = (
            (10, None),
            (1, "render"),
            (1, "projector"),
            (2, "body"),
            (1 if self.allows("finalize-content") else 0, "finalizer"),
            (1 if self.allows("cancellation") else 0, "abort"),
        )
        kind, flaw, parameters = draw(_combined(kinds, flaws, _PARAMETER_MAPS))
        if special in ("threshold", "echo"):
            kind = "plain"
            flaw = flaw if flaw in ("finalizer", "abort") else None
        tool = _Tool(parameters, call_name=name)
        exotic_kinds = self.exotic_kinds
        schema: dict[str, Any] = {"schema": {"type": "json"}}
        first_party: dict[str, Any] | None = None
        parameter_map: Any = _copied(_PARAMETERS[parameters][0])
        if special == "threshold":
            deep = self.allows("generated-values")
            if deep and draw(_weighted((4, False), (1, True))):
                parameter_map, tool.arguments = _DEEP_PARAMETERS.draw(draw)
                terminal: dict[str, Any] = {"kind": "return-arg", "arg": "items"}
            else:
                schema, terminal = (_THRESHOLD_VALUES if deep else _SHALLOW_THRESHOLD_VALUES).draw(draw)
        elif special == "echo":
            tool.parameters = parameters = 2  # {text: a required string}
            parameter_map = _copied(_PARAMETERS[parameters][0])
            schema = {"schema": {"type": "string"}}
            terminal = {"kind": "return-arg", "arg": "text", "default": ""}
        elif kind == "program":
            terminal = self._program(draw, tool)
        elif flaw == "body":
            invalid = kind == "plain" and bool(exotic_kinds) and draw(_BOOLEANS)
            terminal = (
                {"kind": "return", "value": _exotic(exotic_kinds).draw(draw)}
                if invalid
                else _raises("raise").draw(draw)
            )
        elif kind == "canary":
            tool.tainted = True
            tool.value = {"keep": _kept_values().draw(draw), "secret": CANARY}
            terminal = {"kind": "return", "value": tool.value}
        elif kind == "first-party":
            family = draw(_sampled(_FIRST_PARTY_FAMILIES))
            tool.value = _first_party_values(family).draw(draw)
            terminal = {"kind": "return", "value": tool.value}
            schema = {"schema": thaw(FAMILIES[family].schema)}
            first_party = {"kind": "first-party", "family": family}
        else:
            schema, terminal, tool.value = _outputs().draw(draw)
        sealed = tool.tainted
        presentation = _paired(
            _renderers(exotic_kinds, sealed, flaw == "render"), _projectors(exotic_kinds, sealed, flaw == "projector")
        )
        render, projector = presentation.draw(draw)
        if special == "threshold":
            render, projector = _DEEP_RENDERERS.draw(draw), None
        elif special == "echo":
            tool.echo = draw(_sampled(("", "out: ", "😀 ")))
            render, projector = {"kind": "text", "prefix": tool.echo}, None
        output: dict[str, Any] = {**schema, "render": render}
        if first_party is not None and flaw != "render":
            output["render"] = first_party
        if projector is not None:
            output["presentationMeta"] = projector
        finalizing = flaw == "finalizer" or self.allows("finalize-content")
        finalizers = _finalizers(flaw == "finalizer") if finalizing else _NONE
        effects, finalizer = _paired(_effects(flaw == "abort"), finalizers).draw(draw)
        spec: dict[str, Any] = {
            "parameters": parameter_map,
            "output": output,
            "body": _behind(terminal, effects),
        }
        if finalizer is not None:
            spec["finalizeContent"] = finalizer
        self._add_budget(draw, spec)
        if draw(_weighted((6, False), (1, True))):
            spec["description"] = _descriptions().draw(draw)
        if special == "unregistered":
            spec["register"] = False
            tool.registered = False
        elif special == "duplicate":
            # registered under an earlier tool's name: refused, and its calls would reach the earlier tool
            spec["name"] = tool.call_name = self._tools[_one_of(draw, originals)].call_name
            spec["registerError"] = True
            tool.registered = False
        self.tools[name] = spec
        self._tools[name] = tool
        return name

    def _mcp_may_follow(self) -> bool:
        """Whether an MCP fixture may be added now: MCP fixtures stand together in key order, since the original's
        adapter registers its one server's tools together, where the first of them stands."""
        keys = list(self.tools)
        return not any("mcp" in spec for spec in self.tools.values()) or "mcp" in self.tools[keys[-1]]

    def _echo_weight(self) -> int:
        """Echo tools are what the spill bound is judged on: one is all but sure once the policy is installed."""
        if self.spill is None:
            return 1
        return 4 if any(known.echo is not None for known in self._tools.values()) else 40

    def _add_mcp_tool(self, draw: Draw, key: str) -> str:
        """An MCP fixture, under its key or (now and then) a raw name the bridge must sanitize."""
        spec = _MCP_TOOLS.draw(draw)
        raw_name = draw(_weighted((6, None), *((1, raw) for raw in _MCP_RAW_NAMES)))
        if any(tool.get("name") == raw_name for tool in self.tools.values() if "mcp" in tool):
            # One server listing a name twice: the original's client refuses the listing, the reference the second
            # registration, which no document decides yet; generated scenarios list each raw name once.
            raw_name = None
        if raw_name is not None:
            spec["name"] = raw_name
        call_name = public_tool_name(_MCP_SERVER, raw_name if raw_name is not None else key)
        self.tools[key] = spec
        self._tools[key] = _Tool(0, call_name=call_name)
        return key

    def _add_budget(self, draw: Draw, spec: dict[str, Any]) -> None:
        """Now and then a ``timeoutMs``: in time, past the timer's bound, or firing on a body made to wait for its
        abort first (only with the timeout policy installed, which then aborts it)."""
        fires = self.timeout is not None and self.allows("cancellation")
        budget = _chosen((10, None), (3, "in-time"), (4 if fires else 0, "fires"), (2, "past")).draw(draw)
        if budget == "in-time":
            spec["timeoutMs"] = _chosen(*_IN_TIME_BUDGETS).draw(draw)
        elif budget == "past":
            spec["timeoutMs"] = _chosen(*_PAST_TIMER_BUDGETS).draw(draw)
        elif budget == "fires":
            spec["timeoutMs"] = _chosen(*_FIRING_BUDGETS).draw(draw)
            # the caller may abort too: before the deadline (ABORTED stays) or after it fired (TOOL_TIMEOUT stays)
            caller = _chosen((3, None), (1, "before"), (1, "after")).draw(draw)
            waits = {"kind": "await-abort", "then": spec["body"]}
            if caller == "after":
                waits["then"] = {"kind": "abort-caller", "then": spec["body"]}
            spec["body"] = {"kind": "abort-caller", "then": waits} if caller == "before" else waits

    def _program(self, draw: Draw, tool: _Tool) -> dict[str, Any]:
        # Only tools that are not programs: a program calling a program could recurse for ever.
        # Only tools that register, too: a refused one's name never registers (docs/edge-cases.md section 5).
        targets = [name for name, known in self._tools.items() if not known.program and known.registered]
        names = draw(_program_calls(tuple(targets)))
        calls = []
        for target in names:
            known = self._tools.get(target)
            exotic = bool(self.exotic_kinds) and _chosen((8, False), (1, True)).draw(draw)
            arguments = _exotic(self.exotic_kinds).draw(draw) if exotic else self._arguments_for(draw, known, 3)
            calls.append({"name": known.call_name if known is not None else target, "arguments": arguments})
            tool.tainted = tool.tainted or (known is not None and known.tainted)
        tool.program = True
        tool.nested_calls = len(calls)
        program: dict[str, Any] = {"kind": "program", "calls": calls}
        result = draw(_weighted(*_PROGRAM_RESULTS))
        if result is not None:
            program["result"] = result
        return program

    def _callable(self, key: str) -> bool:
        """Whether calls may name the tool of ``key``: not when it shares an earlier tool's name, since its calls
        would reach that tool, whose value the builder would not know."""
        known = self._tools[key]
        return known.registered or key == known.call_name

    def _arguments_for(self, draw: Draw, known: _Tool | None, max_leaves: int) -> Any:
        """Arguments a call of ``known`` passes: its own when it has them, else ones its parameters accept."""
        if known is not None and known.arguments is not None:
            return _copied(known.arguments)
        return (_argument_values(known.parameters) if known is not None else _plain(max_leaves)).draw(draw)

    # --- steps ----------------------------------------------------------------------------------------

    def add_step(self, draw: Draw) -> str:
        """Add a step of a kind drawn among those possible now (a call when nothing else is); return its id."""
        calls, persisted = bool(self.call_steps), bool(self.persist_steps)
        kind = draw(
            _weighted(
                (4, "call"),
                (4 if calls else 0, "probe"),
                (2 if calls and self.allows("persistence") else 0, "persist"),
                (3 if persisted and self.allows("persistence") else 0, "replay"),
                (2 if persisted and self.allows("persistence") else 0, "reopen"),
                (1 if self.allows("schemas") else 0, "schemas"),
                (1 if self.allows("execution-mode") else 0, "executionMode"),
                (2 if self.allows("model-step") else 0, "modelStep"),
            )
        )
        if kind == "executionMode":
            return self.add_execution_mode(draw)
        if kind == "modelStep":
            return self.add_model_step(draw)
        if kind == "probe":
            return self.add_probe(draw)
        if kind == "persist":
            return self.add_persist(draw)
        if kind == "replay":
            return self.add_replay(draw)
        if kind == "reopen":
            return self.add_reopen(draw)
        if kind == "schemas":
            return self.add_schemas()
        return self.add_call(draw)

    def _new_step(self, kind: str) -> _Step:
        step = _Step(id=f"s{len(self._steps)}", kind=kind)
        self._steps.append(step)
        return step

    def add_call(self, draw: Draw) -> str:
        """Add a call of a fixture tool with valid arguments, or (a third of the time) a flawed call: of an
        unknown tool, with invalid or exotic arguments, or aborted before it is made."""
        flaws = (
            (8, None),
            (1, "unknown-tool"),
            (1, "invalid-arguments"),
            (2 if self.exotic_kinds else 0, "exotic-arguments"),
            (1 if self.allows("cancellation") else 0, "abort-before"),
        )
        # One draw: the flaw, whether an agent makes the call, and which tool it calls (ignored when unknown).
        tools = tuple((1, name) for name in self.tools if self._callable(name)) or ((1, _UNKNOWN_TOOL),)
        flaw, agent, name = draw(_combined(flaws, _AGENTS, tools))
        if flaw == "unknown-tool":
            name = _UNKNOWN_TOOL
        known = self._tools.get(name)
        call_name = known.call_name if known is not None else name
        if known is not None and not known.registered:
            known = None  # a call of a name no tool answers to
        if flaw == "invalid-arguments":
            arguments = _invalid_arguments().draw(draw)
        elif flaw == "exotic-arguments":
            arguments = _exotic(self.exotic_kinds).draw(draw)
        elif known is not None and known.echo is not None and self.spill is not None:
            arguments = {"text": self._spill_edge(draw, known.echo)}
        else:
            arguments = self._arguments_for(draw, known, 2)
        step = self._new_step("call")
        if known is not None:
            step.tainted, step.nested_calls, step.value = known.tainted, known.nested_calls, known.value
        step.arguments = arguments
        step.exotic_arguments = not _has_no_tag(arguments)
        call: dict[str, Any] = {"name": call_name, "arguments": arguments}
        if agent:
            call["agent"] = _AGENT
        if draw(_weighted((6, False), (1, True))):
            step.call_id = call["callId"] = f"{step.id}-{draw(_sampled(('x', '名', '😀')))}"
        document: dict[str, Any] = {"id": step.id, "call": call}
        if flaw == "abort-before":
            document["abort"] = "before"
        self.steps.append(document)
        return step.id

    def _spill_edge(self, draw: Draw, prefix: str) -> str:
        """An echo tool's text: its content (the prefix and the text) lands just below, at or just above the
        spill bound, or anywhere."""
        assert self.spill is not None
        offset = _chosen(*_SPILL_OFFSETS).draw(draw)
        if offset is None:
            message: str = _messages().draw(draw)
            return message
        target = self.spill["maxBytes"] + offset - _utf8_length(prefix)
        return _spill_text(target, draw(_sampled(_LAST_CHARACTERS)))

    def add_probe(self, draw: Draw) -> str:
        """Add a freeze probe of an earlier call's value, content or arguments (adding a call if none)."""
        if not self.call_steps:
            self.add_call(draw)
        calls = [step for step in self._steps if step.kind == "call"]
        called = _one_of(draw, calls)
        target, to_container, below_the_top = draw(_PROBES)
        expected = {"value": called.value, "content": [{"type": "text"}], "arguments": called.arguments}[target]
        containers = list(_container_paths(expected))
        inner = [path for path in containers if path]  # a shallow freeze shows only below the top
        if containers and to_container:
            paths = inner if inner and below_the_top else containers
            path = _one_of(draw, paths)
        else:
            path = list(draw(_sampled(_PROBE_PATHS)))
        probe = {"step": called.id, "target": target, "path": path}
        step = self._new_step("probe")
        self.steps.append({"id": step.id, "probe": probe})
        return step.id

    def add_persist(self, draw: Draw, steps: list[str] | None = None) -> str:
        """Persist earlier calls (``steps``, else drawn ones) to a fresh log, with raw argument text where needed
        (adding a call if none)."""
        if not self.call_steps:
            self.add_call(draw)
        calls = self.call_steps
        chosen = steps or draw(_subsets(tuple(calls), min(4, len(calls))))
        exotic = {step.id for step in self._steps if step.exotic_arguments}
        persist: dict[str, Any] = {"steps": list(chosen)}
        raw = {
            name: draw(_sampled(_RAW_ARGUMENTS))
            for name in chosen
            if name in exotic or draw(_weighted((6, False), (1, True)))
        }
        if raw:
            persist["rawArguments"] = raw
        if draw(_weighted((3, False), (1, True))):
            persist["bytes"] = True
        step = self._new_step("persist")
        self.steps.append({"id": step.id, "persist": persist})
        return step.id

    def add_model_step(self, draw: Draw) -> str:
        """Add a model step: one to three calls, each of a fixture tool (now and then an unknown one) with raw
        argument text (mostly the JSON of arguments the tool accepts, else text the agent loop keeps as it is or
        reads as something else), always with the agent the agent loop runs a step for, sometimes aborted before its
        first call. It calls exclusive tools only: the loop runs concurrency-safe ones in a pool."""
        exclusive = [
            name for name, spec in self.tools.items() if "concurrencySafe" not in spec and self._callable(name)
        ]
        tools = tuple((1, name) for name in exclusive) or ((1, _UNKNOWN_TOOL),)
        count = draw(_integers(1, 3))
        step = self._new_step("modelStep")
        calls = []
        for index in range(count):
            # One draw: whether the tool is unknown, whether the text is a literal one, and the tool.
            unknown, literal, name = draw(_combined(((8, False), (1, True)), ((3, False), (1, True)), tools))
            if unknown:
                name = _UNKNOWN_TOOL
            known = self._tools.get(name)
            if literal:
                raw = draw(_sampled(_RAW_ARGUMENTS))
            else:
                # raw text holds no generator tag: a tool's own (tagged) arguments are not used here
                arguments = (_argument_values(known.parameters) if known is not None else _plain(2)).draw(draw)
                raw = canonical_json(arguments)
            call_name = known.call_name if known is not None else name
            calls.append({"callId": f"{step.id}-{index + 1}", "name": call_name, "arguments": raw})
            self._model_step_tools.add(name)
        model_step: dict[str, Any] = {"calls": calls, "agent": _AGENT}
        flaw = draw(_weighted((5, False), (1 if self.allows("cancellation") else 0, True)))
        document: dict[str, Any] = {"id": step.id, "modelStep": model_step}
        if flaw:
            document["abort"] = "before"
        self.steps.append(document)
        return step.id

    def add_replay(self, draw: Draw) -> str:
        """Replay an earlier persist or model step's log (adding a persist step if none)."""
        if not self.persist_steps:
            self.add_persist(draw)
        step = self._new_step("replay")
        replay: dict[str, Any] = {"persist": _one_of(draw, self.persist_steps)}
        if draw(_weighted((1, True), (3, False))):
            replay["damage"] = copy.deepcopy(_DAMAGES[draw(_integers(0, len(_DAMAGES) - 1))])
        self.steps.append({"id": step.id, "replay": replay})
        return step.id

    def add_reopen(self, draw: Draw) -> str:
        """Reopen an earlier persist or model step's log (a damaged copy, one time in three) for appending, and
        append some earlier calls, as a resumed session does (adding a persist step if none).

        The calls appended have arguments of plain JSON (they are appended as its canonical text), and a reopened
        log is never reopened or replayed again: a resume may log events of its own (the original's
        ``session/end-seed`` marker), so what a later damage hits is each implementation's own."""
        if not self.persist_steps:
            self.add_persist(draw)
        appendable = tuple(step.id for step in self._steps if step.kind == "call" and not step.exotic_arguments)
        step = self._new_step("reopen")
        reopen: dict[str, Any] = {"persist": _one_of(draw, self.persist_steps)}
        if draw(_weighted((1, True), (2, False))):
            reopen["damage"] = copy.deepcopy(_DAMAGES[draw(_integers(0, len(_DAMAGES) - 1))])
        reopen["steps"] = draw(_subsets(appendable, min(3, len(appendable)))) if appendable else []
        self.steps.append({"id": step.id, "reopen": reopen})
        return step.id

    def add_execution_mode(self, draw: Draw) -> str:
        """Ask the execution mode of a call of a fixture (given a drawn ``concurrencySafe`` if it has none)."""
        names = [name for name, spec in self.tools.items() if "body" in spec and self._callable(name)]
        name = draw(_sampled((*names, _UNKNOWN_TOOL)))
        if (
            name != _UNKNOWN_TOOL
            and "concurrencySafe" not in self.tools[name]
            and name not in self._model_step_tools
            and draw(_weighted((1, False), (3, True)))
        ):
            self.tools[name]["concurrencySafe"] = copy.deepcopy(
                _CONCURRENCY_CHECKS[draw(_integers(0, len(_CONCURRENCY_CHECKS) - 1))]
            )
        arguments = ({}, {"a": True}, {"a": 1})[draw(_integers(0, 2))]
        step = self._new_step("executionMode")
        call_name = self._tools[name].call_name if name in self._tools else name
        self.steps.append({"id": step.id, "executionMode": {"name": call_name, "arguments": arguments}})
        return step.id

    def add_schemas(self) -> str:
        """Add a ``schemas`` step (the registry's tool schemas)."""
        step = self._new_step("schemas")
        self.steps.append({"id": step.id, "schemas": {}})
        return step.id

    # --- hooks ----------------------------------------------------------------------------------------

    def add_hook(self, draw: Draw) -> None:
        """Add a hook at a drawn stage, for every call or only for some calls (direct or nested)."""
        stages = ["pre-execute", "result-observer"]
        stages += [stage for capability, stage in _HOOK_STAGES if self.allows(capability)]
        names = self.call_steps + self._nested_calls()
        # Mostly for some calls only, when there are calls to name.
        filters = ((1, False), (3, True)) if names else ((1, False),)
        stage, filtered = draw(_combined(tuple((1, stage) for stage in stages), filters))
        hook: dict[str, Any] = {"stage": stage}
        if filtered:
            hook["steps"] = draw(_subsets(tuple(names), 2))
        cancellation = self.allows("cancellation")
        if stage == "pre-execute":
            hook["action"] = _pre_execute_actions(cancellation).draw(draw)
        elif stage == "guard":
            hook["action"] = _guard_actions().draw(draw)
        elif stage == "execute":
            returning = self._return_result_of(draw)
            if returning is not None:
                hook["steps"], hook["action"] = returning
            else:
                hook["action"] = self._execute_action(draw, cancellation)
        elif stage == "post-execute":
            hook["action"] = _post_execute_actions(self.exotic_kinds, cancellation).draw(draw)
        else:
            later, mutate = draw(_BOOLEANS), draw(_BOOLEANS)
            observe: dict[str, Any] = {"kind": "mutate"}
            if not mutate:
                observe = {"kind": "raise", "message": _messages().draw(draw)}
            hook["action"] = {"kind": "later", "then": observe} if later else observe
        self.hooks.append(hook)
        if self.call_steps and draw(_weighted((3, False), (1, True))):
            self._remove_hook(draw, len(self.hooks) - 1)

    def _nested_calls(self) -> list[str]:
        """The call ids of the nested calls the steps so far make (``<callId>:code:<n>``)."""
        return [f"{step.call_id or step.id}:code:{n}" for step in self._steps for n in range(1, step.nested_calls + 1)]

    def _execute_action(self, draw: Draw, cancellation: bool) -> dict[str, Any]:
        """An around action; once a ``mutate-then`` wrapper is installed, none inside it authors a success (what
        it would try to mutate is the inner wrapper's own, changed in each language's own way)."""
        action: dict[str, Any] = _execute_actions(self.exotic_kinds, cancellation).draw(draw)
        kinds = set(_kinds_inside(action))
        if self._mutating_wrapper and kinds & {"short-circuit-success", "look-alike"}:
            return {"kind": "passthrough"}
        self._mutating_wrapper = self._mutating_wrapper or "mutate-then" in kinds
        return action

    def _remove_hook(self, draw: Draw, index: int) -> None:
        """Remove hook ``index`` by a ``removeHook`` step placed among the steps (after the first call)."""
        first_call = next(position for position, step in enumerate(self.steps) if "call" in step)
        position = draw(_integers(first_call + 1, len(self.steps)))
        step = self._new_step("removeHook")
        self.steps.insert(position, {"id": step.id, "removeHook": {"hook": index}})

    def _return_result_of(self, draw: Draw) -> tuple[list[str], dict[str, Any]] | None:
        """Half of the time, a ``return-result-of`` action (or a ``look-alike`` of the same result) and the later
        calls it applies to, when there are any.

        The named step must have run before the wrapper asks for its result, and its value must not hold the
        canary: the wrapped tool re-renders the returned value with its own renderer.
        """
        calls = [step for step in self._steps if step.kind == "call"]
        candidates = [index for index, step in enumerate(calls[:-1]) if not step.tainted]
        if not candidates or not draw(_BOOLEANS):
            return None
        index = _one_of(draw, candidates)
        later = [step.id for step in calls[index + 1 :]]
        steps = draw(_subsets(tuple(later), 2))
        # or a look-alike copy of that result (a success authored outside a mutate-then wrapper only)
        kind = draw(_weighted((3, "return-result-of"), (0 if self._mutating_wrapper else 1, "look-alike")))
        return steps, {"kind": kind, "step": calls[index].id}


def _copied(value: Any) -> Any:
    """A copy of scenario data that shares nothing with it, not even between its own parts (a part drawn twice
    is two objects in the document, as it is in the document's JSON)."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value


def _write_compactly(document: dict[str, Any]) -> None:
    """Write the call arguments and returned values of a document with generator tags wherever one stands for
    exactly the same JSON (a run of equal items, a one-item array, a one-member object, a repeated character),
    so that drawn scenarios exercise the tags without changing what they mean."""
    for step in document["steps"]:
        if "call" in step:
            step["call"]["arguments"] = _compacted(step["call"]["arguments"], top=True)
    for tool in document["tools"].values():
        body = tool.get("body")
        while isinstance(body, dict):
            if body.get("kind") == "return":
                body["value"] = _compacted(body["value"], top=True)
            body = body.get("then")


def _compacted(value: Any, top: bool = False) -> Any:
    """``value`` with its compactable parts written as generator tags (drawn values are shallow: recursion is
    fine); ``top`` keeps an arguments object an object, so that the argument checks still see one."""
    if isinstance(value, dict):
        if "$exotic" in value or "$generate" in value:
            return value
        members = {key: _compacted(item) for key, item in value.items()}
        generated = _object_tag(members)
        if generated is not None:
            return generated
        if len(members) == 1 and not top:
            ((key, item),) = members.items()
            return {"$generate": "nest", "depth": 1, "in": "object", "key": key, "leaf": item}
        return members
    if isinstance(value, list):
        items = [_compacted(item) for item in value]
        if len(items) >= 2 and all(item == items[0] for item in items) and _has_no_tag(items[0]):
            return {"$generate": "repeat", "count": len(items), "item": items[0]}
        if len(items) == 1:
            return {"$generate": "nest", "depth": 1, "in": "array", "leaf": items[0]}
        return items
    if isinstance(value, str) and len(value) >= 2 and len(set(value)) == 1:
        return {"$generate": "string", "length": utf16_length(value), "unit": value[0]}
    return value


def _object_tag(members: dict[str, Any]) -> dict[str, Any] | None:
    """An ``object`` tag for members ``<prefix>0``, ``<prefix>1``, … that are all one scalar, else ``None``."""
    if len(members) < 2:
        return None
    first, item = next(iter(members.items()))
    prefix = first[:-1]
    if not first.endswith("0") or isinstance(item, (dict, list)):
        return None
    if list(members) != [f"{prefix}{index}" for index in range(len(members))]:
        return None
    if any(type(other) is not type(item) or other != item for other in members.values()):
        return None
    return {"$generate": "object", "count": len(members), "key": prefix, "value": item}


def _container_paths(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[list[str | int]]:
    """The paths of the lists and objects inside a scenario value (exotic tags are not containers)."""
    if isinstance(value, dict) and "$exotic" not in value:
        yield list(path)
        for key, item in value.items():
            yield from _container_paths(item, (*path, key))
    elif isinstance(value, list):
        yield list(path)
        for index, item in enumerate(value):
            yield from _container_paths(item, (*path, index))


def _kinds_inside(value: Any) -> Iterable[str]:
    """Every behaviour ``kind`` inside a scenario part (bodies, actions, renderers), exotic tags left out."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if "$exotic" in item:
                continue
            kind = item.get("kind")
            if isinstance(kind, str):
                yield kind
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _requirements(document: Mapping[str, Any]) -> list[str]:
    """The optional capabilities a scenario document needs, in :data:`SCENARIO_CAPABILITIES` order."""
    needed: set[str] = set()
    stages = {hook["stage"] for hook in document["hooks"]}
    needed.update(capability for capability, stage in _HOOK_STAGES if stage in stages)
    if any("finalizeContent" in tool for tool in document["tools"].values()):
        needed.add("finalize-content")
    # Only behaviours carry a "kind"; values that happen to hold one would at worst over-declare.
    kinds = set(_kinds_inside([document["tools"], document["hooks"]]))
    if kinds & _CANCELLING or any(step.get("abort") == "before" for step in document["steps"]):
        needed.add("cancellation")
    if "program" in kinds:
        needed.add("nested")
    if "first-party" in kinds:
        needed.add("first-party-renderers")
    if any("persist" in step or "replay" in step or "reopen" in step for step in document["steps"]):
        needed.add("persistence")
    if any("modelStep" in step for step in document["steps"]):
        needed.add("model-step")
    if "approval" in document:
        needed.add("approval")
    if "attachments" in document or any("mcp" in tool for tool in document["tools"].values()):
        needed.add("mcp")
    needed.update(policy for policy in ("spill", "timeout") if policy in document)
    if any("schemas" in step for step in document["steps"]):
        needed.add("schemas")
    if any("executionMode" in step for step in document["steps"]) or any(
        "concurrencySafe" in tool for tool in document["tools"].values()
    ):
        needed.add("execution-mode")
    if holds_generator_tags(document):
        needed.add("generated-values")
    return [capability for capability in SCENARIO_CAPABILITIES if capability in needed]


_SERVICE: Final = ((5, False), (1, True))  # each policy: in one scenario of six


@st.composite
def _scenario(
    draw: st.DrawFn,
    capabilities: tuple[str, ...] | None,
    exotic_kinds: tuple[str, ...],
    max_tools: int,
    max_steps: int,
    max_hooks: int,
) -> dict[str, Any]:
    builder = ScenarioBuilder(capabilities=capabilities, exotic_kinds=exotic_kinds)
    # The policies come first: a tool's budget that fires, and an echo's text at the spill bound, depend on them.
    timeout, spill, attachments = _chosen(
        *((a * b * c, (x, y, z)) for a, x in _SERVICE for b, y in _SERVICE for c, z in _SERVICE)
    ).draw(draw)
    if timeout:
        builder.add_timeout(draw)
    if spill:
        builder.add_spill(draw)
    if attachments:
        builder.add_attachments(draw)
    for _ in range(draw(_integers(1, max_tools))):
        _in_span(draw, builder.add_tool)
    for _ in range(draw(_integers(1, max_steps))):
        _in_span(draw, builder.add_step)
    if builder.allows("persistence") and draw(_BOOLEANS):
        # Most invariants are about what persist and replay make of the calls: end with both, often.
        builder.add_persist(draw, builder.call_steps)
        builder.add_replay(draw)
    for _ in range(draw(_integers(0, max_hooks))):
        _in_span(draw, builder.add_hook)
    services = draw(_combined(((3, False), (1, True)), ((5, False), (1, True))))
    if services[0]:
        _in_span(draw, builder.add_approval)
    if services[1]:
        _in_span(draw, builder.add_change_listener)
    spill_fails, bare = draw(_combined(((3, False), (1, builder.spill is not None)), ((7, False), (1, True))))
    if spill_fails:
        _in_span(draw, builder.add_spill_failure)
    if bare:
        _in_span(draw, builder.add_bare)
    return builder.document()


class _Pending(threading.local):
    """The actions waiting for :data:`_ACTION` to run them, one stack per thread."""

    def __init__(self) -> None:
        self.actions: list[Callable[[Draw], Any]] = []


_PENDING: Final = _Pending()


@st.composite
def _pending_action(draw: st.DrawFn) -> Any:
    return _PENDING.actions.pop()(draw)


_ACTION: Final = _pending_action()


def _in_span(draw: Draw, action: Callable[[Draw], _Drawn]) -> _Drawn:
    """``action(draw)``, its draws grouped as one span of the choice sequence.

    The shrinker deletes whole spans, and tries so right after lowering a count: a tool, a step or a hook that
    is one span goes away with the count that made it. Drawing one strategy, made once, that runs the pending
    action costs one draw; a new strategy for each action would cost many.
    """
    actions = _PENDING.actions
    actions.append(action)
    try:
        result: _Drawn = draw(_ACTION)
    finally:
        if actions and actions[-1] is action:
            actions.pop()  # hypothesis stopped the draw before running it
    return result


def scenarios(
    *,
    capabilities: Iterable[str] | None = None,
    exotic_kinds: Iterable[str] | None = None,
    max_tools: int = 4,
    max_steps: int = 8,
    max_hooks: int = 3,
) -> SearchStrategy[dict[str, Any]]:
    """Whole scenario documents of format version 1, valid against the scenario schema.

    Each has one to ``max_tools`` fixture tools drawn from the behaviour catalogue (renderers, metadata
    projectors, bodies — programs of nested calls included — and content finalizers), one to ``max_steps``
    steps (calls, some with exotic arguments, freeze probes, persist and replay, schemas), often followed by a
    persist of every call and its replay, and up to ``max_hooks`` hooks at any stage, some with step filters.
    The reference runs every one without error and none waits for ever; :class:`ScenarioBuilder` says what
    else is guaranteed (notably where :data:`CANARY` may appear). The scenario's ``id`` is ``generated``.

    ``capabilities`` limits the optional capabilities the scenarios need (default: all of
    :data:`SCENARIO_CAPABILITIES`); ``exotic_kinds`` the exotic tags they hold (default
    :data:`REFERENCE_EXOTIC_KINDS`, the kinds the reference can express; an empty list for none).
    """
    chosen = None if capabilities is None else tuple(sorted(set(capabilities)))
    kinds = _exotic_kinds(REFERENCE_EXOTIC_KINDS if exotic_kinds is None else exotic_kinds)
    return _scenario(chosen, kinds, max_tools, max_steps, max_hooks)
