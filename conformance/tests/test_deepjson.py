"""JSON of any depth: the iterative parser agrees with ``json.loads``, and nesting limits are exact."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolcanon_conformance.deepjson import TooDeep, _IterativeParser, first_too_deep, loads

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(
    scalars, lambda children: st.lists(children) | st.dictionaries(st.text(), children), max_leaves=30
)


def parse_iteratively(text: str, **hooks: Any) -> Any:
    """What :func:`loads` answers for a text too deep for the standard parser."""
    hook_names = ("object_pairs_hook", "parse_float", "parse_int", "parse_constant")
    return _IterativeParser(text, *(hooks.get(name) for name in hook_names), None).parse()


@given(values, st.sampled_from([None, 1]), st.sampled_from([(",", ":"), (", ", ": ")]))
def test_the_iterative_parser_reads_what_json_loads_reads(value: Any, indent: int | None, separators: Any) -> None:
    text = json.dumps(value, indent=indent, separators=separators)
    assert parse_iteratively(text) == json.loads(text)
    assert parse_iteratively(text, object_pairs_hook=list, parse_float=str, parse_int=str) == json.loads(
        text, object_pairs_hook=list, parse_float=str, parse_int=str
    )


@pytest.mark.parametrize(
    "text", ["", "[", '{"a"}', '{"a":}', "[1,]", "[1 2]", '{"a":1,}', "01", "[1]x", '"\x01"', "{1:2}", "tru", "-"]
)
def test_the_iterative_parser_refuses_what_json_loads_refuses_with_its_message(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as standard:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as iterative:
        parse_iteratively(text)
    assert iterative.value.msg == standard.value.msg


def test_a_100000_deep_text_is_parsed() -> None:
    value = loads("[" * 100_000 + "]" * 100_000)
    depth = 1
    while value:
        [value] = value
        depth += 1
    assert depth == 100_000


def test_the_nesting_limit_is_exact_and_checked_while_parsing() -> None:
    assert loads("[" * 64 + "]" * 64, max_depth=64) is not None
    for text in ("[" * 65 + "]" * 65, "[" * 10_000_000):  # the second is never built, nor even well-formed
        with pytest.raises(TooDeep, match="nested deeper than 64 levels") as raised:
            loads(text, max_depth=64)
        assert raised.value.path == (0,) * 64
    with pytest.raises(TooDeep) as raised:
        loads('{"a": [1, {"b": [[2]]}]}', max_depth=4)
    assert raised.value.path == ("a", 1, "b", 0)


def test_first_too_deep_names_the_first_place_in_document_order() -> None:
    value = {"a": [1, {"b": [[2]]}], "c": [[[3]]]}
    assert first_too_deep(value, 5) is None
    assert first_too_deep(value, 4) == ("a", 1, "b", 0)
    cycle: list[Any] = []
    cycle.append(cycle)
    assert first_too_deep(cycle, 10) == (0,) * 10
