"""Lossless snapshot, ECMAScript key order and the canonical JSON writer (digest 3.x, decisions 1-8)."""

from __future__ import annotations

import functools
import gc
import json
import math
import struct
import weakref
from collections import OrderedDict
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import line_budget
from toolcanon._fused import FusedNormalization, OutputRejected
from toolcanon._text_cache import TextKeyedCache
from toolcanon.frozen import FrozenDict, FrozenList
from toolcanon.jsonvalue import (
    MAX_SAFE_INTEGER,
    NotLosslessJson,
    Rejection,
    canonical_json,
    es_key_order,
    format_number,
    format_path,
    freeze,
    in_es_order,
    is_lossless_json,
    iter_rejections,
    snapshot_json,
    thaw,
)

VECTORS = json.loads(
    (Path(__file__).parents[2] / "fixtures" / "vectors" / "ecmascript-json.json").read_text(encoding="utf-8")
)


def _from_bits(bits: str) -> float:
    number: float = struct.unpack(">d", bytes.fromhex(bits))[0]
    return number


def _from_utf16(units: list[int]) -> str:
    return b"".join(u.to_bytes(2, "little") for u in units).decode("utf-16-le", "surrogatepass")


# --- the canonical writer against JSON.stringify vectors (decisions 8) ----------------------------


def _written(number: float) -> str:
    if number == 0 and math.copysign(1.0, number) < 0:
        return format_number(number)  # JSON.stringify(-0) is "0"
    return canonical_json(number)


def test_numbers_match_ecmascript() -> None:
    """Number::toString for 3,000 doubles, byte for byte (one test: each vector alone costs more to run than
    to check; a mismatch names the vector's bits)."""
    mismatches = [
        f"{case['bits']}: {written!r} != {case['json']!r}"
        for case in VECTORS["numbers"]
        if (written := _written(_from_bits(case["bits"]))) != case["json"]
    ]
    assert len(VECTORS["numbers"]) == 3000
    assert mismatches == []


def test_strings_match_ecmascript() -> None:
    """String escaping (control characters, lone surrogates as lowercase \\udxxx, astral literal)."""
    mismatches = [
        f"{case['utf16']}: {written!r} != {case['json']!r}"
        for case in VECTORS["strings"]
        if (written := canonical_json(_from_utf16(case["utf16"]))) != case["json"]
    ]
    assert VECTORS["strings"] and mismatches == []


@pytest.mark.parametrize("case", VECTORS["objects"], ids=lambda case: case["json"][:20])
def test_object_key_order_matches_ecmascript(case: dict[str, Any]) -> None:
    """Array-index keys first in ascending order, then insertion order (decisions 4)."""
    value = {key: index for index, key in enumerate(case["insertion"])}
    assert canonical_json(value) == case["json"]
    assert canonical_json(snapshot_json(value)) == case["json"]
    assert list(snapshot_json(value)) == list(json.loads(case["json"]))


@pytest.mark.parametrize("case", VECTORS["indent"], ids=lambda case: case["json"][:20])
def test_indented_output_matches_ecmascript(case: dict[str, Any]) -> None:
    """``JSON.stringify(v, null, 2)``."""
    assert canonical_json(case["value"], indent=case["indent"]) == case["json"]


def test_writer_handles_any_depth() -> None:
    """The writer is iterative: a 100,000-deep list is written."""
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    text = canonical_json(deep)
    assert text == "[" * 100_001 + "]" * 100_001


def test_writer_rejects_non_json() -> None:
    """Never a hang or a silent ``null``: a cycle, NaN, non-string keys and foreign types are refused."""
    with pytest.raises(NotLosslessJson):
        canonical_json(_cycle())
    looped: dict[str, Any] = {"a": [1]}
    looped["a"].append(looped)
    with pytest.raises(NotLosslessJson):
        canonical_json(looped)
    shared = [1]
    assert canonical_json([shared, shared]) == "[[1],[1]]"
    with pytest.raises(NotLosslessJson):
        canonical_json(math.nan)
    with pytest.raises(NotLosslessJson):
        canonical_json({1: "a"})
    with pytest.raises(NotLosslessJson):
        canonical_json((1, 2))


class _HostileKey(str):
    """A str subclass key whose text methods raise: the writer must refuse it without calling them."""

    __slots__ = ()

    def __getitem__(self, index: Any) -> str:
        raise RuntimeError("read the key")

    def isdigit(self) -> bool:
        raise RuntimeError("read the key")


_FOREIGN_KEYS = [1, 1.5, True, ("5",), _HostileKey("1")]


@pytest.mark.parametrize("key", _FOREIGN_KEYS, ids=["int", "float", "bool", "tuple", "hostile-str-subclass"])
@pytest.mark.parametrize("first", [True, False], ids=["before", "after"])
def test_writer_refuses_a_non_string_key_beside_an_array_index(key: Any, first: bool) -> None:
    """An array-index key reorders the object; any key that is not exactly a str is still refused, typed."""
    mapping: dict[Any, Any] = {key: 2, "0": 1} if first else {"0": 1, key: 2}
    for value in (mapping, {"a": [mapping]}):
        with pytest.raises(NotLosslessJson) as caught:
            canonical_json(value)
        assert caught.value.rejections == [Rejection((), "non-string-key")]


def test_unsafe_integers_print_as_their_double() -> None:
    """An integer outside the safe range prints as ECMAScript prints the nearest double."""
    assert format_number(2**53) == "9007199254740992"
    assert format_number(10**21) == "1e+21"


def test_adjacent_surrogate_code_points_join_into_one_character() -> None:
    """A UTF-16 pair held as two code points is one character in ECMAScript: it is written literally."""
    assert canonical_json("\ud83d\ude80") == '"\U0001f680"'
    assert canonical_json("\ude80\ud83d") == '"\\ude80\\ud83d"'


# --- the snapshot (digest 3.x, decisions 1-6) ---------------------------------------------------------


class _Opaque:
    pass


class _DictSubclass(dict):  # type: ignore[type-arg]
    pass


class _ListSubclass(list):  # type: ignore[type-arg]
    pass


class _StrSubclass(str):
    __slots__ = ()


def _cycle() -> list[Any]:
    looped: list[Any] = []
    looped.append(looped)
    return looped


REJECTED: list[tuple[str, Any, str]] = [
    ("nan", math.nan, "nan"),
    ("infinity", math.inf, "infinity"),
    ("negative-infinity", -math.inf, "negative-infinity"),
    ("negative-zero", -0.0, "negative-zero"),
    ("unsafe-integer-high", MAX_SAFE_INTEGER + 1, "unsafe-integer"),
    ("unsafe-integer-low", -MAX_SAFE_INTEGER - 1, "unsafe-integer"),
    ("tuple", (1, 2), "unsupported-type:tuple"),
    ("set", {1}, "unsupported-type:set"),
    ("bytes", b"x", "unsupported-type:bytes"),
    ("decimal", Decimal("1.5"), "unsupported-type:Decimal"),
    ("fraction", Fraction(1, 3), "unsupported-type:Fraction"),
    ("opaque", _Opaque(), "unsupported-type:_Opaque"),
    ("function", len, "unsupported-type:builtin_function_or_method"),
    ("dict-subclass", _DictSubclass(a=1), "unsupported-type:_DictSubclass"),
    ("ordered-dict", OrderedDict(a=1), "unsupported-type:OrderedDict"),
    ("list-subclass", _ListSubclass([1]), "unsupported-type:_ListSubclass"),
    ("str-subclass", _StrSubclass("x"), "unsupported-type:_StrSubclass"),
    ("mapping-proxy", MappingProxyType({"a": 1}), "unsupported-type:mappingproxy"),
    ("cycle", _cycle(), "cycle"),
]


@pytest.mark.parametrize(("label", "value", "kind"), REJECTED, ids=[case[0] for case in REJECTED])
def test_every_non_lossless_kind_is_rejected_with_its_reason(label: str, value: Any, kind: str) -> None:
    """digest 0.1 / 3.3: Each rejection names the path and the reason kind (decisions 6)."""
    wrapped = {"outer": [0, value]}
    with pytest.raises(NotLosslessJson) as caught:
        snapshot_json(wrapped)
    expected_path = ("outer", 1, 0) if kind == "cycle" else ("outer", 1)
    assert caught.value.rejections == [Rejection(expected_path, kind)]
    assert not is_lossless_json(wrapped)


def test_non_string_key_is_rejected_with_its_path() -> None:
    with pytest.raises(NotLosslessJson) as caught:
        snapshot_json({"a": {1: "x"}})
    assert caught.value.rejections == [Rejection(("a", 1), "non-string-key")]


def test_every_rejection_is_reported_in_walk_order() -> None:
    value = {"a": math.nan, "b": [1, math.inf, (1,)], "c": {"d": -0.0}}
    kinds = [(r.path, r.kind) for r in iter_rejections(value)]
    assert kinds == [
        (("a",), "nan"),
        (("b", 1), "infinity"),
        (("b", 2), "unsupported-type:tuple"),
        (("c", "d"), "negative-zero"),
    ]


def test_accepted_scalars_survive_unchanged() -> None:
    """digest 0.1 / 3.2: lone surrogates pass (strings are not validated); safe integers and finite floats pass."""
    value = [None, True, False, 0, -1, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, 0.0, 1.5, "\ud800", ""]
    copy = snapshot_json(value)
    assert copy == value
    assert [type(item) for item in copy] == [type(item) for item in value]


def test_integral_float_stays_float() -> None:
    """decisions 2: 2.0 stays a float in the value (and prints as 2)."""
    copy = snapshot_json({"n": 2.0})
    assert type(copy["n"]) is float
    assert canonical_json(copy) == '{"n":2}'


def test_shared_references_are_copied_separately() -> None:
    """digest 3.4: acyclic sharing is accepted, the copy does not preserve identity."""
    shared = {"x": 1}
    copy = snapshot_json([shared, shared])
    assert copy == [shared, shared]
    assert copy[0] is not copy[1]
    assert copy[0] is not shared


def test_snapshot_is_detached_from_the_input() -> None:
    source = {"a": [1, 2]}
    copy = snapshot_json(source)
    source["a"].append(3)
    assert copy == {"a": [1, 2]}


def test_snapshot_orders_keys_as_ecmascript() -> None:
    """digest 3.6 / decisions 4: array-index keys ascending first, then insertion order."""
    copy = snapshot_json({"b": 1, "10": 2, "2": 3, "a": 4, "01": 5})
    assert list(copy) == ["2", "10", "b", "a", "01"]
    assert es_key_order(["b", "10", "2"]) == ["2", "10", "b"]


def test_frozen_values_can_be_snapshot_again() -> None:
    """decisions 1: the registry's own frozen types are accepted as input."""
    frozen = snapshot_json({"a": [1, {"b": 2}]})
    again = snapshot_json(frozen)
    assert again == frozen
    assert type(again) is FrozenDict


@pytest.mark.parametrize("depth", [5_000, 100_000])
def test_deep_values_snapshot_without_recursion_limit(depth: int) -> None:
    """digest 3.1: the walk is iterative."""
    deep: Any = "leaf"
    for _ in range(depth):
        deep = [deep]
    copy = snapshot_json(deep)
    node = copy
    for _ in range(depth):
        assert type(node) is FrozenList
        node = node[0]
    assert node == "leaf"


def test_deep_non_lossless_value_reports_its_path() -> None:
    deep: Any = math.nan
    for _ in range(2_000):
        deep = {"k": deep}
    rejections = list(iter_rejections(deep))
    assert rejections == [Rejection(("k",) * 2_000, "nan")]


def test_deep_cycle_is_detected() -> None:
    top: dict[str, Any] = {}
    node = top
    for _ in range(1_000):
        child: dict[str, Any] = {}
        node["k"] = child
        node = child
    node["k"] = top
    assert [r.kind for r in iter_rejections(top)] == ["cycle"]


def test_thaw_gives_plain_mutable_copies() -> None:
    frozen = snapshot_json({"a": [1, {"b": 2}]})
    plain = thaw(frozen)
    assert plain == frozen
    assert type(plain) is dict and type(plain["a"]) is list and type(plain["a"][1]) is dict
    plain["a"].append(3)
    assert frozen == {"a": [1, {"b": 2}]}


# --- properties -------------------------------------------------------------------------------------

_keys = st.one_of(st.text(max_size=6), st.integers(0, 30).map(str))
lossless_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: not (x == 0 and math.copysign(1, x) < 0))
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_keys, children, max_size=4),
    max_leaves=25,
)


@settings(max_examples=2 * settings().max_examples, deadline=None)
@given(lossless_values)
def test_snapshot_equals_its_input(value: Any) -> None:
    """snapshot(x) == x for lossless values, and the canonical text round-trips through json."""
    copy = snapshot_json(value)
    assert copy == value
    text = canonical_json(copy)
    parsed = json.loads(text, parse_int=lambda s: int(s) if abs(int(s)) <= MAX_SAFE_INTEGER else float(s))
    assert canonical_json(parsed) == text


_poison = st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 2**53, (1,), {1}, b"x", _Opaque()])


@settings(max_examples=2 * settings().max_examples, deadline=None)
@given(lossless_values, _poison, st.data())
def test_poison_anywhere_is_rejected(value: Any, poison: Any, data: st.DataObject) -> None:
    """Any non-lossless value placed anywhere in a lossless value makes it rejected."""
    containers = [value] if isinstance(value, list | dict) else []
    place = data.draw(st.sampled_from(["root", "wrap"] if not containers else ["root", "wrap", "inside"]))
    if place == "root":
        candidate: Any = poison
    elif place == "wrap":
        candidate = {"w": [value, poison]}
    else:
        candidate = value
        if isinstance(candidate, list):
            candidate.append(poison)
        else:
            candidate["poisoned"] = poison
    assert not is_lossless_json(candidate)
    with pytest.raises(NotLosslessJson):
        snapshot_json(candidate)


# --- what the thorough walk names, and how -------------------------------------------------------------


def test_the_walk_names_only_what_is_rejected() -> None:
    """null, booleans and strings beside a rejection are not rejections; a frozen object inside is walked as an
    object (its members by key), not as the list of its keys."""
    value = {"n": None, "t": True, "s": "x", "frozen": FrozenDict({"a": math.nan}), "list": [False, math.inf]}
    assert list(iter_rejections(value)) == [
        Rejection(("frozen", "a"), "nan"),
        Rejection(("list", 1), "infinity"),
    ]


def test_an_integer_key_is_named_by_its_value_up_to_the_safe_range() -> None:
    keys = {MAX_SAFE_INTEGER: 1, -MAX_SAFE_INTEGER: 2, MAX_SAFE_INTEGER + 1: 3}
    assert [r.path for r in iter_rejections(keys)] == [(MAX_SAFE_INTEGER,), (-MAX_SAFE_INTEGER,), ("<int key>",)]


def test_rejections_read_as_paths_from_the_value() -> None:
    """The diagnostics (never part of a contract message): a path from ``value``, and the first five places."""
    rejection = Rejection(("a", 0, "b"), "nan")
    assert str(rejection) == "value.a[0].b: nan" and format_path((), "arguments") == "arguments"
    error = NotLosslessJson([Rejection((index,), "infinity") for index in range(7)])
    assert str(error) == (
        "not lossless JSON: value[0]: infinity; value[1]: infinity; value[2]: infinity; value[3]: infinity; "
        "value[4]: infinity (and 2 more)"
    )
    assert str(NotLosslessJson([Rejection((index,), "nan") for index in range(6)])).endswith(
        "value[4]: nan (and 1 more)"
    )
    assert str(NotLosslessJson([Rejection((index,), "nan") for index in range(5)])).endswith("value[4]: nan")


def test_freeze_is_the_snapshot_of_a_lossless_value() -> None:
    """``freeze`` gives the frozen copy the snapshot gives: exact frozen types, ECMAScript key order, and the
    refusal of what is not lossless JSON."""
    value = {"b": [1, {"z": None, "0": "x"}], "7": 2.5}
    frozen = freeze(value)
    assert frozen == snapshot_json(value) and type(frozen) is FrozenDict
    assert list(frozen) == ["7", "b"] and list(frozen["b"][1]) == ["0", "z"]
    assert type(frozen["b"]) is FrozenList
    with pytest.raises(NotLosslessJson):
        freeze([math.nan])


def test_an_object_already_in_ecmascript_order_is_kept_as_it_is() -> None:
    ordered = snapshot_json({"b": 1, "a": 2})
    assert in_es_order(ordered) is ordered
    reordered = in_es_order(FrozenDict({"b": 1, "7": 2}))
    assert list(reordered) == ["7", "b"] and type(reordered) is FrozenDict


def test_a_cyclic_object_is_refused_by_the_writer_as_a_cycle() -> None:
    cyclic: dict[str, Any] = {"a": 1}
    cyclic["self"] = [cyclic]
    for value in (cyclic, cyclic["self"]):
        with pytest.raises(NotLosslessJson) as raised:
            canonical_json(value)
        assert raised.value.rejections == [Rejection((), "cycle")]


def _self_holding_object() -> dict[str, Any]:
    looped: dict[str, Any] = {"a": 1}
    looped["b"] = looped
    return looped


_CYCLES_OF_ONE_KIND: dict[str, Callable[[], Any]] = {
    "object-holds-itself": _self_holding_object,
    "array-holds-itself": _cycle,
    "object-cycle-in-an-array": lambda: [0, _self_holding_object()],
    "array-cycle-in-an-object": lambda: {"a": 0, "b": _cycle()},
}


@pytest.mark.parametrize("build", _CYCLES_OF_ONE_KIND.values(), ids=_CYCLES_OF_ONE_KIND.keys())
def test_the_writer_finds_a_cycle_made_of_one_container_kind(build: Callable[[], Any]) -> None:
    """Each container kind records itself as open: a cycle through objects only, or arrays only, is refused."""
    value = build()
    with line_budget(100_000), pytest.raises(NotLosslessJson) as raised:
        canonical_json(value)
    assert raised.value.rejections == [Rejection((), "cycle")]


@pytest.mark.parametrize("build", _CYCLES_OF_ONE_KIND.values(), ids=_CYCLES_OF_ONE_KIND.keys())
def test_the_snapshot_finds_a_cycle_made_of_one_container_kind(build: Callable[[], Any]) -> None:
    """A cycle is infinitely deep: the recursive copy gives up at 400 levels, and the iterative one, which each
    container kind joins on its path, finds the cycle."""
    value = build()
    with line_budget(1_000_000):
        with pytest.raises(NotLosslessJson) as raised:
            snapshot_json(value)
        assert [rejection.kind for rejection in raised.value.rejections] == ["cycle"]
        assert not is_lossless_json(value)


def test_the_writer_names_the_reason_of_a_refused_number() -> None:
    """A number the writer cannot print losslessly is refused with its reason, at the root or inside."""
    for number, reason in ((MAX_SAFE_INTEGER + 1, "unsafe-integer"), (math.nan, "nan"), (-0.0, "negative-zero")):
        for value in (number, [1, number]):
            with pytest.raises(NotLosslessJson) as raised:
                canonical_json(value)
            assert raised.value.rejections == [Rejection((), reason)]


class _IntSubclass(int):
    pass


def test_a_key_of_a_str_or_int_subclass_is_named_by_its_exact_copy() -> None:
    """A rejected key's path element is an exact ``str`` or ``int``; an int beyond the safe range is named by type."""
    for key, element in (
        (_StrSubclass("k"), "k"),
        (_IntSubclass(3), 3),
        (_IntSubclass(MAX_SAFE_INTEGER + 1), "<_IntSubclass key>"),
    ):
        rejections = list(iter_rejections({key: 1}))
        assert rejections == [Rejection((element,), "non-string-key")]
        assert type(rejections[0].path[0]) is type(element)


# --- values nested deeper than the recursive fast paths go take the iterative ones ------------------------

_DEEPER_THAN_RECURSION = 450  # the recursive fast copy and check stop at 400 levels
_KEYS = ["10", "", "2"]


def _nested(inner: Any, keys: list[str]) -> Any:
    """``inner`` under :data:`_DEEPER_THAN_RECURSION` levels, in turn a list (a scalar, then the nesting), an
    object whose ``keys`` come first (each holding a scalar) and the nesting key last, and an object of two keys
    in ECMAScript order already."""
    value = inner
    for level in range(_DEEPER_THAN_RECURSION):
        form = level % 3
        value = [level, value] if form == 0 else {**dict.fromkeys(keys if form == 1 else ["a"], level), "next": value}
    return value


def _order_of(level: int, keys: list[str]) -> list[str]:
    return es_key_order([*keys, "next"]) if level % 3 == 1 else ["a", "next"]


@functools.cache
def _around_the_inner_value(indent: int | None) -> list[str]:
    """The text of the levels around the inner value, before and after it, as ``json`` writes them (which is
    what ``JSON.stringify`` writes for objects in ECMAScript key order, like the snapshot's, of these scalars)."""
    separators = (",", ":") if indent is None else (",", ": ")
    text = json.dumps(snapshot_json(_nested("\x00", _KEYS)), indent=indent, separators=separators)
    return text.split(canonical_json("\x00"))


@settings(max_examples=10, deadline=None)
@given(lossless_values)
def test_deep_values_copy_check_and_write_as_shallow_ones(inner: Any) -> None:
    """The iterative paths give the recursive ones' answers: the same copy (key order included), the same
    verdict, the same text, indented or not."""
    keys = _KEYS
    deep = _nested(inner, keys)
    copy = snapshot_json(deep)
    assert is_lossless_json(deep) and is_lossless_json(copy)
    node, shallow = copy, snapshot_json(inner)
    for level in range(_DEEPER_THAN_RECURSION - 1, -1, -1):
        if level % 3 == 0:
            assert type(node) is FrozenList and node[0] == level
            node = node[1]
        else:
            assert type(node) is FrozenDict and list(node) == _order_of(level, keys)
            node = node["next"]
    assert node == shallow
    for indent in (None, 2):
        prefix, suffix = _around_the_inner_value(indent)
        inner_text = canonical_json(shallow, indent)
        if indent:  # the inner value's own lines stand under every level above it
            inner_text = inner_text.replace("\n", "\n" + "  " * _DEEPER_THAN_RECURSION)
        assert canonical_json(copy, indent) == canonical_json(deep, indent) == prefix + inner_text + suffix


_DEEP_POISONS = {
    "nan": math.nan,
    "negative-zero": -0.0,
    "unsafe-integer": 2**53,
    "unsupported-type:bytes": b"x",
    "cycle": None,
    "non-string-key": None,
}


@pytest.mark.parametrize("kind", list(_DEEP_POISONS))
def test_deep_values_are_rejected_as_shallow_ones(kind: str) -> None:
    """A rejection deep down is found by every entry point, and named at its place, as a shallow one is."""
    inner: Any = {1: "v"} if kind == "non-string-key" else [_DEEP_POISONS[kind]]
    deep = _nested(inner, _KEYS)
    if kind == "cycle":
        inner[0] = deep
    above = tuple("next" if level % 3 else 1 for level in range(_DEEPER_THAN_RECURSION - 1, -1, -1))
    rejections = list(iter_rejections(deep))
    assert rejections == [Rejection((*above, 0 if kind != "non-string-key" else 1), kind)]
    assert not is_lossless_json(deep)
    with pytest.raises(NotLosslessJson) as raised:
        snapshot_json(deep)
    assert raised.value.rejections == rejections
    with pytest.raises(NotLosslessJson):
        canonical_json(deep)


# --- a rejected value is not kept alive by the walk that bailed on it ---------------------------------


def _deep(bottom: Any, depth: int = 500) -> list[Any]:
    """``bottom`` nested deeper than the recursive fast paths go."""
    value: list[Any] = [bottom]
    for _ in range(depth):
        value = [value]
    return value


def _refused(call: Callable[[], Any], error: type[Exception] = NotLosslessJson) -> None:
    with pytest.raises(error):
        call()


def _is_lossless_deep(walked: Any) -> None:
    assert not is_lossless_json(_deep(walked))


def _text_cache_deep(walked: Any) -> None:
    assert TextKeyedCache[None]().get(_deep(walked), lambda data: None) is None


def _fused(walked: Any) -> None:
    _refused(lambda: FusedNormalization({}, threshold=1).normalize({"x": walked}), OutputRejected)


def _snapshot_while_handling(walked: Any) -> None:
    try:
        raise LookupError(walked)
    except LookupError:
        _refused(lambda: snapshot_json({"x": [math.nan]}))


# Each entry point whose recursive fast path bails on the value, and the value around the walked object.
_FAST_PATH_BAILS: dict[str, Callable[[Any], None]] = {
    "snapshot-unsupported": lambda walked: _refused(lambda: snapshot_json({"x": [1, {"y": walked}]})),
    "snapshot-nan": lambda walked: _refused(lambda: snapshot_json({"x": [math.nan], "y": walked})),
    "snapshot-non-string-key": lambda walked: _refused(lambda: snapshot_json({"a": {1: walked}})),
    "snapshot-deep": lambda walked: _refused(lambda: snapshot_json(_deep(walked))),
    "snapshot-while-handling": _snapshot_while_handling,
    "is-lossless-deep": _is_lossless_deep,
    "text-cache-deep": _text_cache_deep,
    "fused": _fused,
}


@pytest.mark.parametrize("entry", list(_FAST_PATH_BAILS.values()), ids=list(_FAST_PATH_BAILS))
def test_a_rejected_value_is_not_kept_alive(entry: Callable[[Any], None]) -> None:
    """A fast path that bails leaves nothing behind: no traceback or context of its bail holds what it walked."""
    walked = _Opaque()
    alive = weakref.ref(walked)
    for _ in range(3):
        entry(walked)
    del walked
    gc.collect()
    assert alive() is None


def test_rejected_values_leave_no_objects_behind() -> None:
    """10,000 rejected snapshots: the number of live objects stays where it was."""
    value = {"x": [math.nan]}
    for _ in range(10):
        _refused(lambda: snapshot_json(value))
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(10_000):
        _refused(lambda: snapshot_json(value))
    gc.collect()
    assert len(gc.get_objects()) - before < 1_000


def test_a_key_that_is_neither_a_string_nor_an_integer_is_named_by_its_repr_or_its_type() -> None:
    """The diagnostics name a built-in scalar key by its repr and any other key by its type alone (its own repr
    is foreign code)."""
    keys = {1.5: 1, b"k": 2, None: 3, 2j: 4, (1, 2): 5, frozenset(): 6}
    assert [r.path for r in iter_rejections(keys)] == [
        ("1.5",), ("b'k'",), ("None",), ("2j",), ("<tuple key>",), ("<frozenset key>",)
    ]  # fmt: skip


def test_an_indent_given_as_text_is_used_as_it_is_up_to_ten_characters() -> None:
    """``JSON.stringify``'s gap: a string gap is taken as it is, cut to ten characters; an empty one is none."""
    assert canonical_json([1, {"a": 2}], "ab") == '[\nab1,\nab{\nabab"a": 2\nab}\n]'
    assert canonical_json([1], "x" * 20) == "[\n" + "x" * 10 + "1\n]"
    assert canonical_json([1], "") == "[1]"


def test_an_indent_is_the_gap_json_stringify_takes_from_its_space() -> None:
    """A number above 0 is truncated and clamped to 10 spaces, one below 1 breaking lines without indenting them as
    V8 does, a string cut after 10 UTF-16 code units (an astral character counts two, and may be split); 0, a
    negative number, NaN and a boolean are no indent (``JSON.stringify`` reads only numbers and strings)."""
    assert canonical_json([1], 2.7) == "[\n  1\n]"
    assert canonical_json({"a": [1]}, 0.5) == canonical_json({"a": [1]}, 1e-300) == '{\n"a": [\n1\n]\n}'
    assert canonical_json([1], -0.5) == canonical_json([1], -3) == canonical_json([1], float("nan")) == "[1]"
    assert canonical_json([1], 1e300) == canonical_json([1], float("inf")) == "[\n" + " " * 10 + "1\n]"
    assert canonical_json([1], True) == canonical_json([1], False) == "[1]"
    assert canonical_json([1], "a" + "\U0001f600" * 5) == "[\na" + "\U0001f600" * 4 + "\ud83d1\n]"
    assert canonical_json([1], "\U0001f600" * 5) == "[\n" + "\U0001f600" * 5 + "1\n]"


def test_the_thorough_walk_names_each_rejection_by_its_kind_and_each_key_by_its_own_text() -> None:
    """``iter_rejections`` (the walk every fast walk gives up to): a valid object has none, a scalar's rejection
    carries its kind, and a key that is not a string is named by the repr of a built-in scalar key."""
    assert list(iter_rejections({"a": [1, {"b": 2}]})) == []
    found = [str(rejection) for rejection in iter_rejections({"a": math.nan, b"k": 1, 1j: 2, None: 4})]
    assert found == [
        "value.a: nan",
        "value.b'k': non-string-key",
        "value.1j: non-string-key",
        "value.None: non-string-key",
    ]


def test_writing_an_object_whose_keys_need_reordering_refuses_a_key_that_is_not_a_string_at_the_root() -> None:
    with pytest.raises(NotLosslessJson) as raised:
        canonical_json({"b": 0, "1": 1, 2: 3})
    assert raised.value.rejections == [Rejection((), "non-string-key")]
    assert str(raised.value) == "not lossless JSON: value: non-string-key"


def test_thaw_gives_a_plain_list_for_an_array() -> None:
    """An array thaws to a ``list`` (not an object keyed by its indices), its members thawed in place."""
    plain = thaw(snapshot_json([1, {"a": [2]}, []]))
    assert type(plain) is list
    assert plain == [1, {"a": [2]}, []]
    assert type(plain[1]) is dict and type(plain[1]["a"]) is list


@pytest.mark.parametrize(
    ("number", "shown"), [(math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf")]
)  # fmt: skip
def test_format_number_refuses_a_number_that_is_not_finite_naming_it(number: float, shown: str) -> None:
    """``format_number`` writes finite numbers only; any other is refused with a message that names it."""
    with pytest.raises(ValueError) as raised:
        format_number(number)
    assert str(raised.value) == f"{shown} is not a finite JSON number"


def test_a_boolean_key_is_named_as_a_boolean() -> None:
    """A ``bool`` key is named by itself (``True``), not by the integer it equals."""
    rejections = list(iter_rejections({True: "v", "a": {False: 1}}))
    assert [str(rejection) for rejection in rejections] == [
        "value[True]: non-string-key",
        "value.a[False]: non-string-key",
    ]
    assert [type(rejection.path[-1]) for rejection in rejections] == [bool, bool]


def test_a_container_met_again_beside_itself_is_no_cycle_to_the_thorough_walk() -> None:
    """A list and an object each shared by two siblings, beside a rejection, are walked again and named nowhere: only
    a container met again inside itself is a cycle."""
    shared_list: list[Any] = [1]
    shared_object: dict[str, Any] = {"a": 1}
    value = {"x": shared_list, "y": shared_list, "o": [shared_object, shared_object], "bad": math.nan}
    assert list(iter_rejections(value)) == [Rejection(("bad",), "nan")]
    with pytest.raises(NotLosslessJson) as raised:
        snapshot_json(value)
    assert raised.value.rejections == [Rejection(("bad",), "nan")]


class _Truthless:
    def __bool__(self) -> bool:
        raise AssertionError("__bool__ ran")


def test_the_writer_refuses_a_value_of_another_type_without_asking_its_truth() -> None:
    """A value that is neither a JSON scalar nor a container is refused as an unsupported type at the root; its own
    ``__bool__`` (foreign code) never runs."""
    with pytest.raises(NotLosslessJson) as raised:
        canonical_json(_Truthless())
    assert raised.value.rejections == [Rejection((), "unsupported-type:_Truthless")]


def test_a_class_whose_qualified_name_is_a_str_subclass_is_unnamed() -> None:
    """A class's name is taken only as an exact ``str``: one whose ``__qualname__`` was set to a ``str`` subclass
    (foreign code) is named ``<unnamed type>``, by ``type_name`` and in the rejection of its instances."""
    from toolcanon.jsonvalue import type_name

    class Name(str):
        __slots__ = ()

    class Odd:
        pass

    Odd.__qualname__ = Name("Odd")
    assert type(type_name(Odd)) is str and type_name(Odd) == "<unnamed type>"
    assert list(iter_rejections([Odd()])) == [Rejection((0,), "unsupported-type:<unnamed type>")]


def test_the_writer_refuses_a_key_that_is_not_a_string_in_an_object_it_writes_in_its_own_order() -> None:
    """An object with no array-index key is written in the order it has, each key checked as it is written: one that
    is not exactly a ``str`` is refused as a non-string key, at the root or deep down."""
    for value in ({1: "a"}, {"a": [{"b": 0, 2.5: "c"}]}, {_StrSubclass("k"): 1}):
        with pytest.raises(NotLosslessJson) as raised:
            canonical_json(value)
        assert raised.value.rejections == [Rejection((), "non-string-key")]


def test_the_thorough_walk_builds_the_copy_the_fast_walks_build() -> None:
    """The walk every fast walk gives up to copies a lossless value as they do: an array stays an array, an object
    is laid out in ECMAScript key order, and a scalar root is itself."""
    from toolcanon.jsonvalue import _thorough_walk

    value = {"b": [1, {"y": 2, "3": [None]}], "a": 1.5}
    copy, rejections = _thorough_walk(value, True)
    assert rejections == [] and copy == snapshot_json(value)
    assert type(copy) is FrozenDict and type(copy["b"]) is FrozenList and list(copy["b"][1]) == ["3", "y"]
    assert _thorough_walk(7, True) == (7, [])
