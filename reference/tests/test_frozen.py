"""Deep freezing: every public mutator raises a TypeError subclass; frozen values still act as JSON data."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcanon.frozen import FrozenDict, FrozenError, FrozenList
from toolcanon.jsonvalue import canonical_json, snapshot_json

DICT_MUTATIONS: dict[str, Callable[[Any], object]] = {
    "setitem": lambda d: d.__setitem__("k", 1),
    "delitem": lambda d: d.__delitem__("a"),
    "update": lambda d: d.update({"k": 1}),
    "pop": lambda d: d.pop("a"),
    "popitem": lambda d: d.popitem(),
    "clear": lambda d: d.clear(),
    "setdefault": lambda d: d.setdefault("k", 1),
    "ior": lambda d: d.__ior__({"k": 1}),
    "setattr": lambda d: setattr(d, "k", 1),
    "delattr": lambda d: delattr(d, "k"),
}

LIST_MUTATIONS: dict[str, Callable[[Any], object]] = {
    "setitem": lambda lst: lst.__setitem__(0, 1),
    "setslice": lambda lst: lst.__setitem__(slice(0, 1), [9]),
    "delitem": lambda lst: lst.__delitem__(0),
    "append": lambda lst: lst.append(1),
    "extend": lambda lst: lst.extend([1]),
    "insert": lambda lst: lst.insert(0, 1),
    "pop": lambda lst: lst.pop(),
    "remove": lambda lst: lst.remove(lst[0]),
    "clear": lambda lst: lst.clear(),
    "sort": lambda lst: lst.sort(),
    "reverse": lambda lst: lst.reverse(),
    "iadd": lambda lst: lst.__iadd__([1]),
    "imul": lambda lst: lst.__imul__(2),
    "setattr": lambda lst: setattr(lst, "k", 1),
}


@pytest.mark.parametrize("mutation", DICT_MUTATIONS.values(), ids=DICT_MUTATIONS.keys())
def test_every_dict_mutator_raises(mutation: Callable[[Any], object]) -> None:
    """decisions 9: each mutation attempt raises FrozenError, a TypeError."""
    frozen = snapshot_json({"a": 1})
    with pytest.raises(TypeError) as caught:
        mutation(frozen)
    assert isinstance(caught.value, FrozenError)
    assert frozen == {"a": 1}


@pytest.mark.parametrize("mutation", LIST_MUTATIONS.values(), ids=LIST_MUTATIONS.keys())
def test_every_list_mutator_raises(mutation: Callable[[Any], object]) -> None:
    frozen = snapshot_json([3, 1, 2])
    with pytest.raises(FrozenError):
        mutation(frozen)
    assert frozen == [3, 1, 2]


def test_augmented_assignment_raises() -> None:
    frozen = snapshot_json({"items": [1], "map": {"a": 1}})
    items = frozen["items"]
    mapping = frozen["map"]
    with pytest.raises(FrozenError):
        items += [2]
    with pytest.raises(FrozenError):
        mapping |= {"b": 2}
    with pytest.raises(FrozenError):
        del frozen["items"]
    assert frozen == {"items": [1], "map": {"a": 1}}


def test_frozen_values_behave_as_json_data() -> None:
    """Equal to plain data, Mapping/Sequence, written by json, orjson and the canonical writer."""
    plain = {"b": [1, 2.5, {"c": None}], "a": "x"}
    frozen = snapshot_json(plain)
    assert frozen == plain
    assert isinstance(frozen, Mapping) and isinstance(frozen["b"], Sequence)
    assert json.loads(json.dumps(frozen)) == plain
    assert orjson.loads(orjson.dumps(frozen)) == plain
    assert canonical_json(frozen) == '{"b":[1,2.5,{"c":null}],"a":"x"}'


def test_frozen_values_survive_deepcopy_and_pickle() -> None:
    frozen = snapshot_json({"a": [1, {"b": 2}]})
    assert copy.deepcopy(frozen) == frozen
    assert copy.copy(frozen) is frozen
    restored = pickle.loads(pickle.dumps(frozen))
    assert restored == frozen
    assert type(restored) is FrozenDict and type(restored["a"]) is FrozenList
    with pytest.raises(FrozenError):
        restored["a"].append(3)


def _containers(value: Any) -> list[Any]:
    found: list[Any] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            found.append(node)
            stack.extend(node)
    return found


nested_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=5),
    lambda children: (
        st.lists(children, min_size=1, max_size=3)
        | st.dictionaries(st.text(max_size=3), children, min_size=1, max_size=3)
    ),
    max_leaves=20,
)


@settings(max_examples=3 * settings().max_examples // 2, deadline=None)
@given(nested_values)
def test_freezing_is_deep(value: Any) -> None:
    """digest 3.8: Every nested container of a snapshot refuses every public mutator."""
    frozen = snapshot_json(value)
    for container in _containers(frozen):
        mutations = DICT_MUTATIONS if isinstance(container, dict) else LIST_MUTATIONS
        for mutation in mutations.values():
            with pytest.raises(TypeError):
                mutation(container)
    assert frozen == value
