"""Hypothesis strategies for lossless JSON values, schemas of the supported subset, and values valid for them.

Reusable by implementers and renderer authors (``pip install hypothesis``). Every strategy is a function that
returns a :class:`~hypothesis.strategies.SearchStrategy` (built once and cached where it takes no schema);
generated values are plain ``dict``/``list`` data.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Final, Protocol, TypeVar

from hypothesis import strategies as st

from toolcontract.jsonvalue import MAX_SAFE_INTEGER, JsonValue, thaw
from toolcontract.renderers import FAMILIES
from toolcontract.schema import compile_validator, compile_value_schema
from toolcontract_conformance.exotic import PYTHON_INEXPRESSIBLE
from toolcontract_conformance.scenario import FORMAT_VERSION, iter_exotic_tags, scenario_schema

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

# Strings that exercise the canonical writer and key ordering: escapes, astral pairs, lone surrogates.
_SPECIAL_STRINGS: Final = ("", "a", "😀", "\ud800", "\udc00x", 'quote"', "back\\", "\u2028", "\x00", "名前", "x y")
_SPECIAL_CHARS: Final = ("a", "é", "😀", "\ud800", "\udfff", '"', "\\", "\n", "\u2028", "\x7f", "\x00")
# Keys whose ECMAScript order differs from insertion order, and near-misses that are not array indices.
_INDEX_LIKE_KEYS: Final = ("0", "1", "2", "10", "4294967294", "4294967295", "01", "-1", "1.5", "1e3", " 1")
_ORDINARY_KEYS: Final = ("a", "b", "z", "__proto__", "toString", "constructor", "x y", 'quote"', "名前", "😀", "")
_SCALAR_TYPES: Final = ("string", "number", "integer", "boolean", "null")


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
    "cancellation",
    "persistence",
    "nested",
    "schemas",
    "first-party-renderers",
)
"""The optional capabilities generated scenarios may require, in the order of ``requires``."""

_UNKNOWN_TOOL: Final = "missing-tool"
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
# First-party families whose renderer reads only the value; each renders any value valid for its schema.
# (`read` is not one: the original's renderer re-reads `file_path` from the arguments and fails without it.)
# The first is where shrinking ends: glob's value and text are the smallest.
_FIRST_PARTY_FAMILIES: Final = ("glob", "grep", "bash", "write", "edit", "todo_write", "web_search", "lsp")
_MESSAGES: Final = ("boom", "denied by policy", "", "ünïcödé 😀", "two\nlines")
_ERROR_CLASSES: Final = ({"name": "QuotaError", "code": "QUOTA"}, {"name": "PolicyError", "code": "POLICY"})
_RAW_ARGUMENTS: Final = ('{"x":NaN}', "{", "not json", '{"text":"raw"}', "")
_HOOK_STAGES: Final = (("guards", "guard"), ("wrappers", "execute"), ("post-execute", "post-execute"))
_CANCELLING: Final = frozenset(("abort-caller", "await-abort", "replace-signal-aborted", "abort-caller-after-next"))


def _weighted(*choices: tuple[int, Any]) -> SearchStrategy[Any]:
    return st.sampled_from([choice for weight, choice in choices for _ in range(weight)])


def _one_of_weighted(*choices: tuple[int, SearchStrategy[Any]]) -> SearchStrategy[Any]:
    # st.one_of drops repeated branches, so the weights are a sampled choice of strategy.
    return _weighted(*choices).flatmap(lambda strategy: strategy)


# Drawing from a strategy built once is far cheaper than from a new one: every part is cached.


@cache
def _messages() -> SearchStrategy[str]:
    return _one_of_weighted((3, st.sampled_from(_MESSAGES)), (1, json_strings()))


@cache
def _contexts() -> SearchStrategy[list[dict[str, str]]]:
    context = st.fixed_dictionaries({"id": st.sampled_from(("ctx-a", "ctx-b", "ctx-1")), "text": _messages()})
    return st.lists(context, max_size=2)


@cache
def _text_blocks() -> SearchStrategy[list[dict[str, str]]]:
    return st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": _messages()}), max_size=2)


@cache
def _values(kinds: tuple[str, ...], max_leaves: int) -> SearchStrategy[Any]:
    """Plain values, and (one time in four) values holding exotic tags of ``kinds``."""
    plain = _plain_values(max_leaves)
    return _one_of_weighted((3, plain), (1, _values_with_exotics(kinds))) if kinds else plain


@cache
def _exotic_or_plain(kinds: tuple[str, ...]) -> SearchStrategy[Any]:
    return _values_with_exotics(kinds) if kinds else _plain_values(2)


@cache
def _raises(kind: str) -> SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"kind": st.just(kind), "message": _messages()},
        optional={"error": st.sampled_from(_ERROR_CLASSES).map(dict)},
    )


@cache
def _argument_values(parameters: int) -> SearchStrategy[Any]:
    return values_for(_PARAMETERS[parameters][1])


@cache
def _kept_values() -> SearchStrategy[Any]:
    """What a canary tool shows: a container, more often than not (for freeze probes to reach into)."""
    plain = _plain_values(3)
    return st.one_of(
        plain, st.lists(plain, min_size=1, max_size=3), st.dictionaries(_plain_keys(), plain, min_size=1, max_size=3)
    )


@cache
def _invalid_arguments() -> SearchStrategy[Any]:
    """Arguments a tool may refuse: any object, or any value (most are not objects)."""
    return st.one_of(st.dictionaries(_plain_keys(), _plain_values(3), max_size=3), _plain_values(3))


@cache
def _first_party_values(family: str) -> SearchStrategy[Any]:
    return values_for(thaw(compile_value_schema(FAMILIES[family].schema)))


@cache
def _outputs() -> SearchStrategy[tuple[dict[str, Any], SearchStrategy[Any]]]:
    """An output schema (DSL or raw) and the values a body returns for it (not always valid ones)."""
    plain = _plain_values(5)
    raw = subset_schemas(max_leaves=4).map(lambda schema: ({"rawSchema": schema}, values_for(schema)))
    return _one_of_weighted(
        (2, st.just(({"schema": {"type": "json"}}, plain))),
        (1, st.just(({"schema": {"type": "string"}}, json_strings()))),
        (
            1,
            st.just(({"schema": {"type": "array", "items": {"type": "json"}}}, st.lists(_plain_values(3), max_size=3))),
        ),
        (1, raw),
    )


@cache
def _return_arg() -> SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"kind": st.just("return-arg"), "arg": st.sampled_from(_ARGUMENT_NAMES)},
        optional={"default": _plain_values(3)},
    )


@cache
def _renderers(kinds: tuple[str, ...], sealed: bool, failing: bool) -> SearchStrategy[dict[str, Any]]:
    """Renderers: ``failing`` ones (raising, or rendering exotic content), else sound ones; ``sealed`` ones
    never show a value's ``secret`` field."""
    if failing:
        return st.one_of(
            st.fixed_dictionaries({"kind": st.just("raise"), "message": _messages()}),
            st.fixed_dictionaries(
                {"kind": st.just("exotic"), "content": st.lists(_exotic_or_plain(kinds), min_size=1, max_size=2)}
            ),
        )
    field = st.fixed_dictionaries(
        {"kind": st.just("field"), "name": st.just("keep") if sealed else st.sampled_from(("keep", "text", "0", "a"))},
        optional={"prefix": _messages()},
    )
    constant = st.fixed_dictionaries({"kind": st.just("constant"), "content": _text_blocks()})
    if sealed:
        return _one_of_weighted((3, field), (1, constant))
    return _one_of_weighted(
        (3, st.fixed_dictionaries({"kind": st.just("text")}, optional={"prefix": _messages()})),
        (2, st.fixed_dictionaries({"kind": st.just("json")}, optional={"indent": st.integers(0, 4)})),
        (2, field),
        (1, st.just({"kind": "blocks"})),
        (1, constant),
    )


@cache
def _projectors(kinds: tuple[str, ...], sealed: bool, failing: bool) -> SearchStrategy[dict[str, Any] | None]:
    """Metadata projectors (``None``: none), as :func:`_renderers`."""
    if failing:
        raising = st.fixed_dictionaries({"kind": st.just("raise"), "message": _messages()})
        return (
            raising
            if sealed
            else st.one_of(
                raising, st.fixed_dictionaries({"kind": st.just("exotic"), "value": _exotic_or_plain(kinds)})
            )
        )
    choices: list[tuple[int, SearchStrategy[dict[str, Any] | None]]] = [
        (4, st.none()),
        (1, st.fixed_dictionaries({"kind": st.just("constant"), "value": _plain_values(3)})),
        (1, st.just({"kind": "null"})),
    ]
    if not sealed:
        choices += [
            (2, st.just({"kind": "value"})),
            (2, st.fixed_dictionaries({"kind": st.just("wrap"), "key": st.sampled_from(("projected", "v"))})),
        ]
    return _one_of_weighted(*choices)


@cache
def _finalizers(failing: bool) -> SearchStrategy[dict[str, Any]]:
    if failing:
        return st.fixed_dictionaries({"kind": st.just("raise"), "message": _messages()})
    return st.one_of(
        st.just({"kind": "keep"}),
        st.fixed_dictionaries({"kind": st.just("replace"), "content": _text_blocks()}),
        st.fixed_dictionaries({"kind": st.just("truncate"), "chars": st.integers(0, 12)}),
    )


# Hook actions: the ones that let the call succeed weigh more, so that most calls of a scenario still succeed
# and what comes after (persist, replay, probes) has values to work on.


@cache
def _pre_execute_actions(cancellation: bool, nested: bool = True) -> SearchStrategy[dict[str, Any]]:
    actions: list[tuple[int, SearchStrategy[dict[str, Any]]]] = [
        (4, st.just({"kind": "allow"})),
        (1, st.fixed_dictionaries({"kind": st.just("deny"), "reason": _messages()})),
        (1, st.fixed_dictionaries({"kind": st.just("ask")}, optional={"reason": _messages()})),
        (1, _raises("raise")),
    ]
    if nested and cancellation:
        then = _pre_execute_actions(cancellation, nested=False)
        actions.append((1, then.map(lambda action: {"kind": "abort-caller", "then": action})))
    return _one_of_weighted(*actions)


@cache
def _guard_actions() -> SearchStrategy[dict[str, Any]]:
    return _one_of_weighted(
        (4, st.just({"kind": "pass"})),
        (1, st.fixed_dictionaries({"kind": st.just("deny"), "reason": _messages()})),
        (1, _raises("raise")),
    )


@cache
def _execute_actions(kinds: tuple[str, ...], cancellation: bool, nested: bool = True) -> SearchStrategy[dict[str, Any]]:
    plain = _plain_values(3)
    actions: list[tuple[int, SearchStrategy[dict[str, Any]]]] = [
        (4, st.just({"kind": "passthrough"})),
        (3, st.fixed_dictionaries({"kind": st.just("spread"), "additionalContexts": _contexts()})),
        (
            2,
            st.fixed_dictionaries(
                {"kind": st.just("short-circuit-success"), "value": _values(kinds, 3)},
                optional={"content": _text_blocks(), "meta": plain, "additionalContexts": _contexts()},
            ),
        ),
        (
            1,
            st.fixed_dictionaries(
                {
                    "kind": st.just("short-circuit-failure"),
                    "error": st.fixed_dictionaries(
                        {"message": _messages()}, optional={"info": st.sampled_from(_ERROR_CLASSES).map(dict)}
                    ),
                    "content": _text_blocks(),
                },
                optional={"meta": plain, "additionalContexts": _contexts()},
            ),
        ),
        (1, _raises("raise")),
    ]
    if cancellation:
        actions += [(1, st.just({"kind": "replace-signal-aborted"})), (1, st.just({"kind": "abort-caller-after-next"}))]
    if nested:
        then = _execute_actions(kinds, cancellation, nested=False)
        actions.append((1, then.map(lambda action: {"kind": "dispose-tool-then", "then": action})))
    return _one_of_weighted(*actions)


@cache
def _post_execute_actions(
    kinds: tuple[str, ...], cancellation: bool, nested: bool = True
) -> SearchStrategy[dict[str, Any]]:
    plain = _plain_values(3)
    contexts = {"additionalContexts": _contexts()}
    actions: list[tuple[int, SearchStrategy[dict[str, Any]]]] = [
        (4, st.fixed_dictionaries({"kind": st.just("accept")}, optional=contexts)),
        (2, st.fixed_dictionaries({"kind": st.just("accept-content"), "content": _text_blocks()}, optional=contexts)),
        (2, st.fixed_dictionaries({"kind": st.just("accept-value"), "value": _values(kinds, 3)}, optional=contexts)),
        (1, st.fixed_dictionaries({"kind": st.just("accept-both"), "content": _text_blocks(), "value": plain})),
        (
            1,
            st.fixed_dictionaries(
                {"kind": st.just("block"), "feedback": st.one_of(_messages(), plain)}, optional=contexts
            ),
        ),
        (1, _raises("raise")),
    ]
    if nested:
        then = _post_execute_actions(kinds, cancellation, nested=False)
        actions.append((1, then.map(lambda action: {"kind": "dispose-tool-then", "then": action})))
        if cancellation:
            actions.append((1, then.map(lambda action: {"kind": "abort-caller", "then": action})))
    return _one_of_weighted(*actions)


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


@dataclass(slots=True)
class _Step:
    id: str
    kind: str
    value: Any = None  # the value its call should return, when known in advance
    arguments: Any = None
    tainted: bool = False
    exotic_arguments: bool = False
    nested_calls: int = 0


class ScenarioBuilder:
    """Builds one scenario document step by step from hypothesis draws (``draw`` is the ``draw`` of an
    ``@st.composite`` function or ``st.data().draw``).

    Fixture tools come from the behaviour catalogue (renderers, metadata projectors, bodies, content
    finalizers), hooks act at every stage with step filters, and steps are calls (some with exotic
    arguments), freeze probes, persist, replay and schemas. Whatever is added, :meth:`document` is a valid
    scenario (once it has a step) that the reference runs without error and without waiting for ever:

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

    def allows(self, capability: str) -> bool:
        """Whether generated parts may need ``capability``."""
        return capability in self.capabilities

    @property
    def call_steps(self) -> list[str]:
        """The ids of the call steps so far, in order."""
        return [step.id for step in self._steps if step.kind == "call"]

    @property
    def persist_steps(self) -> list[str]:
        """The ids of the persist steps so far, in order."""
        return [step.id for step in self._steps if step.kind == "persist"]

    def document(self) -> dict[str, Any]:
        """The scenario so far as a fresh document (valid once it has a step), with ``requires`` computed."""
        document: dict[str, Any] = {
            "formatVersion": FORMAT_VERSION,
            "id": self.scenario_id,
            "description": "Drawn by toolcontract_conformance.strategies.",
            "requires": [],
            "tools": copy.deepcopy(self.tools),
            "hooks": copy.deepcopy(self.hooks),
            "steps": copy.deepcopy(self.steps),
        }
        document["requires"] = _requirements(document)
        return document

    # --- tools ----------------------------------------------------------------------------------------

    def add_tool(self, draw: Draw) -> str:
        """Add a fixture tool (a plain, canary, program or first-party one) and return its name.

        Most tools are sound; a third have one flaw that makes their calls fail in a way of its own (a raising
        or exotic renderer or projector, a raising body or one returning exotic values, a raising finalizer, an
        abort).
        """
        name = f"t{len(self.tools)}"
        callable_tools = any(not known.program for known in self._tools.values())
        kind = draw(
            _weighted(
                (3, "plain"),
                (3, "canary"),
                (2 if self.allows("nested") and callable_tools else 0, "program"),
                (1 if self.allows("first-party-renderers") else 0, "first-party"),
            )
        )
        flaw = draw(
            _weighted(
                (10, None),
                (1, "render"),
                (1, "projector"),
                (2, "body"),
                (1 if self.allows("finalize-content") else 0, "finalizer"),
                (1 if self.allows("cancellation") else 0, "abort"),
            )
        )
        parameters = draw(st.integers(0, len(_PARAMETERS) - 1))
        tool = _Tool(parameters)
        kinds = self.exotic_kinds
        schema: dict[str, Any] = {"schema": {"type": "json"}}
        first_party: dict[str, Any] | None = None
        if kind == "program":
            terminal = self._program(draw, tool)
        elif flaw == "body":
            invalid = kind == "plain" and bool(kinds) and draw(st.booleans())
            terminal = (
                {"kind": "return", "value": draw(_values_with_exotics(kinds))} if invalid else draw(_raises("raise"))
            )
        elif kind == "canary":
            tool.tainted = True
            tool.value = {"keep": draw(_kept_values()), "secret": CANARY}
            terminal = {"kind": "return", "value": tool.value}
        elif kind == "first-party":
            family = draw(st.sampled_from(_FIRST_PARTY_FAMILIES))
            tool.value = draw(_first_party_values(family))
            terminal = {"kind": "return", "value": tool.value}
            schema = {"schema": thaw(FAMILIES[family].schema)}
            first_party = {"kind": "first-party", "family": family}
        else:
            schema, values = draw(_outputs())
            if "schema" in schema and schema["schema"] == {"type": "json"} and draw(_weighted((3, False), (1, True))):
                terminal = draw(_return_arg())
            else:
                tool.value = draw(values)
                terminal = {"kind": "return", "value": tool.value}
        sealed = tool.tainted
        output: dict[str, Any] = {**schema, "render": draw(_renderers(kinds, sealed, flaw == "render"))}
        if first_party is not None and flaw != "render":
            output["render"] = first_party
        projector = draw(_projectors(kinds, sealed, flaw == "projector"))
        if projector is not None:
            output["presentationMeta"] = projector
        spec: dict[str, Any] = {
            "parameters": copy.deepcopy(_PARAMETERS[parameters][0]),
            "output": output,
            "body": self._body(draw, terminal, aborting=flaw == "abort"),
        }
        if flaw == "finalizer" or (self.allows("finalize-content") and draw(_weighted((3, False), (1, True)))):
            spec["finalizeContent"] = draw(_finalizers(flaw == "finalizer"))
        self.tools[name] = spec
        self._tools[name] = tool
        return name

    def _program(self, draw: Draw, tool: _Tool) -> dict[str, Any]:
        # Only tools that are not programs: a program calling a program could recurse for ever.
        targets = [name for name, known in self._tools.items() if not known.program]
        names = draw(
            st.lists(_weighted(*((4, target) for target in targets), (1, _UNKNOWN_TOOL)), min_size=1, max_size=3)
        )
        calls = []
        for target in names:
            known = self._tools.get(target)
            arguments = draw(_argument_values(known.parameters) if known is not None else _plain_values(3))
            calls.append({"name": target, "arguments": arguments})
            tool.tainted = tool.tainted or (known is not None and known.tainted)
        tool.program = True
        tool.nested_calls = len(calls)
        program: dict[str, Any] = {"kind": "program", "calls": calls}
        result = draw(st.one_of(st.none(), st.sampled_from(("last", "received")), st.integers(0, 3)))
        if result is not None:
            program["result"] = result
        return program

    def _body(self, draw: Draw, terminal: dict[str, Any], aborting: bool) -> dict[str, Any]:
        """The terminal body behind up to two effects (defer, conclude), and one abort when ``aborting``."""
        chosen = draw(st.lists(st.sampled_from(("defer", "conclude")), max_size=2))
        if aborting:
            chosen.insert(
                draw(st.integers(0, len(chosen))), draw(st.sampled_from(("abort-caller", "abort-then-await")))
            )
        body = terminal
        for effect in chosen:
            if effect == "defer":
                body = {"kind": "defer", "contexts": draw(_contexts()), "then": body}
            elif effect == "abort-then-await":
                # await-abort waits for ever unless something aborts its signal first.
                body = {"kind": "abort-caller", "then": {"kind": "await-abort", "then": body}}
            else:
                body = {"kind": effect, "then": body}
        return body

    # --- steps ----------------------------------------------------------------------------------------

    def add_step(self, draw: Draw) -> str:
        """Add a step of a kind drawn among those possible now (a call when nothing else is); return its id."""
        calls, persisted = bool(self.call_steps), bool(self.persist_steps)
        kind = draw(
            _weighted(
                (4, "call"),
                (4 if calls else 0, "probe"),
                (2 if calls and self.allows("persistence") else 0, "persist"),
                (2 if persisted else 0, "replay"),
                (1 if self.allows("schemas") else 0, "schemas"),
            )
        )
        if kind == "probe":
            return self.add_probe(draw)
        if kind == "persist":
            return self.add_persist(draw)
        if kind == "replay":
            return self.add_replay(draw)
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
        flaw = draw(
            _weighted(
                (8, None),
                (1, "unknown-tool"),
                (1, "invalid-arguments"),
                (2 if self.exotic_kinds else 0, "exotic-arguments"),
                (1 if self.allows("cancellation") else 0, "abort-before"),
            )
        )
        name = draw(st.sampled_from(list(self.tools))) if self.tools and flaw != "unknown-tool" else _UNKNOWN_TOOL
        known = self._tools.get(name)
        if flaw == "invalid-arguments":
            arguments = draw(_invalid_arguments())
        elif flaw == "exotic-arguments":
            arguments = draw(_values_with_exotics(self.exotic_kinds))
        else:
            arguments = draw(_argument_values(known.parameters) if known is not None else _plain_values(2))
        step = self._new_step("call")
        if known is not None:
            step.tainted, step.nested_calls, step.value = known.tainted, known.nested_calls, known.value
        step.arguments = arguments
        step.exotic_arguments = not _has_no_tag(arguments)
        call: dict[str, Any] = {"name": name, "arguments": arguments}
        if draw(_weighted((4, False), (1, True))):
            call["agent"] = _AGENT
        document: dict[str, Any] = {"id": step.id, "call": call}
        if flaw == "abort-before":
            document["abort"] = "before"
        self.steps.append(document)
        return step.id

    def add_probe(self, draw: Draw) -> str:
        """Add a freeze probe of an earlier call's value, content or arguments (adding a call if none)."""
        if not self.call_steps:
            self.add_call(draw)
        called = draw(st.sampled_from([step for step in self._steps if step.kind == "call"]))
        target = draw(_weighted((3, "value"), (1, "content"), (1, "arguments")))
        expected = {"value": called.value, "content": [{"type": "text"}], "arguments": called.arguments}[target]
        # Mostly a path to a container the call should hand out (hooks may change it), else any path.
        containers = list(_container_paths(expected))
        inner = [path for path in containers if path]  # a shallow freeze shows only below the top
        if containers and draw(_weighted((4, True), (1, False))):
            path = draw(st.sampled_from(inner if inner and draw(_weighted((1, False), (3, True))) else containers))
        else:
            path = draw(st.lists(st.sampled_from(_PROBE_PATH_ELEMENTS), max_size=2))
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
        chosen = steps or draw(st.lists(st.sampled_from(calls), min_size=1, max_size=min(4, len(calls)), unique=True))
        exotic = {step.id for step in self._steps if step.exotic_arguments}
        persist: dict[str, Any] = {"steps": list(chosen)}
        raw = {
            name: draw(st.sampled_from(_RAW_ARGUMENTS))
            for name in chosen
            if name in exotic or draw(_weighted((6, False), (1, True)))
        }
        if raw:
            persist["rawArguments"] = raw
        step = self._new_step("persist")
        self.steps.append({"id": step.id, "persist": persist})
        return step.id

    def add_replay(self, draw: Draw) -> str:
        """Replay an earlier persist step's log (adding a persist step if none)."""
        if not self.persist_steps:
            self.add_persist(draw)
        step = self._new_step("replay")
        self.steps.append({"id": step.id, "replay": {"persist": draw(st.sampled_from(self.persist_steps))}})
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
        stage = draw(st.sampled_from(stages))
        hook: dict[str, Any] = {"stage": stage}
        nested = [f"{step.id}:code:{n}" for step in self._steps for n in range(1, step.nested_calls + 1)]
        names = self.call_steps + nested
        if bool(names) and draw(_weighted((1, False), (3, True))):
            hook["steps"] = draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True))
        cancellation = self.allows("cancellation")
        if stage == "pre-execute":
            hook["action"] = draw(_pre_execute_actions(cancellation))
        elif stage == "guard":
            hook["action"] = draw(_guard_actions())
        elif stage == "execute":
            returning = self._return_result_of(draw)
            if returning is not None and draw(st.booleans()):
                hook["steps"], hook["action"] = returning
            else:
                hook["action"] = draw(_execute_actions(self.exotic_kinds, cancellation))
        elif stage == "post-execute":
            hook["action"] = draw(_post_execute_actions(self.exotic_kinds, cancellation))
        else:
            hook["action"] = {"kind": "raise", "message": draw(_messages())}
        self.hooks.append(hook)

    def _return_result_of(self, draw: Draw) -> tuple[list[str], dict[str, Any]] | None:
        """A ``return-result-of`` action and the later calls it applies to, when there are any.

        The named step must have run before the wrapper asks for its result, and its value must not hold the
        canary: the wrapped tool re-renders the returned value with its own renderer.
        """
        calls = [step for step in self._steps if step.kind == "call"]
        candidates = [index for index, step in enumerate(calls[:-1]) if not step.tainted]
        if not candidates:
            return None
        index = draw(st.sampled_from(candidates))
        later = [step.id for step in calls[index + 1 :]]
        steps = draw(st.lists(st.sampled_from(later), min_size=1, max_size=2, unique=True))
        return steps, {"kind": "return-result-of", "step": calls[index].id}


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
    if any("persist" in step or "replay" in step for step in document["steps"]):
        needed.add("persistence")
    if any("schemas" in step for step in document["steps"]):
        needed.add("schemas")
    return [capability for capability in SCENARIO_CAPABILITIES if capability in needed]


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
    for _ in range(draw(st.integers(1, max_tools))):
        builder.add_tool(draw)
    for _ in range(draw(st.integers(1, max_steps))):
        builder.add_step(draw)
    if builder.allows("persistence") and draw(st.booleans()):
        # Most invariants are about what persist and replay make of the calls: end with both, often.
        builder.add_persist(draw, builder.call_steps)
        builder.add_replay(draw)
    for _ in range(draw(st.integers(0, max_hooks))):
        builder.add_hook(draw)
    return builder.document()


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
