"""The first differing JSON path of two transcripts, expected and actual."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolcanon_conformance import diff as diff_module
from toolcanon_conformance.diff import Difference, compare, format_path, parse_path
from toolcanon_conformance.display import excerpts, first_difference


def diff(expected: str, actual: str, ignore: tuple[str, ...] = ()) -> tuple[Difference, ...]:
    return compare(expected.encode(), actual.encode(), [parse_path(path) for path in ignore])


def test_equal_bytes_have_no_difference() -> None:
    assert diff('{"a":[1,2]}', '{"a":[1,2]}') == ()


def test_a_changed_value_is_named_by_its_path() -> None:
    [first] = diff(
        '{"steps":{"c1":{"result":{"content":[{"text":"a"}]}}}}',
        '{"steps":{"c1":{"result":{"content":[{"text":"b"}]}}}}',
    )
    assert first.where == "$.steps.c1.result.content[0].text"
    assert (first.kind, first.expected, first.actual) == ("value", '"a"', '"b"')
    assert "character 0" in first.detail
    assert "$.steps.c1.result.content[0].text: value" in str(first)


def test_differences_come_in_document_order() -> None:
    found = diff('{"a":1,"b":{"c":2},"d":[1,2]}', '{"a":0,"b":{"c":2,"x":1},"d":[1]}')
    assert [(d.where, d.kind) for d in found] == [("$.a", "value"), ("$.b.x", "unexpected"), ("$.d[1]", "missing")]


def test_a_missing_key_and_a_type_change() -> None:
    found = diff('{"meta":null,"value":"x"}', '{"value":["x"]}')
    assert [(d.where, d.kind, d.expected, d.actual) for d in found] == [
        ("$.meta", "missing", "null", None),
        ("$.value", "type", '"x"', '["x"]'),
    ]


def test_number_text_matters() -> None:
    [first] = diff('{"n":1}', '{"n":1.0}')
    assert first.kind == "value" and first.detail == "the same number written differently"


def test_key_order_matters() -> None:
    [first] = diff('{"isError":false,"value":1}', '{"value":1,"isError":false}')
    assert first.kind == "key-order" and first.where == "$"


def test_form_only_differences_point_at_the_place() -> None:
    [first] = diff('{"a":{"t":"é"}}', '{"a":{"t":"\\u00e9"}}')
    assert (first.kind, first.where) == ("format", "$.a.t")
    [spaced] = diff('{"a":[1,2]}', '{"a":[1, 2]}')
    assert spaced.kind == "format" and spaced.where == "$.a[1]"


def test_an_answer_that_is_not_json() -> None:
    [first] = diff('{"a":1}', '{"a":1')
    assert first.kind == "not-json" and first.where == "$"
    [long] = diff('{"a":"' + "b" * 5000 + '"}', '{"a":"' + "b" * 5000 + '"')
    assert long.expected == '{"a":"' + "b" * 5000 + '"}' and long.actual == '{"a":"' + "b" * 5000 + '"'  # whole


def test_a_repeated_key_is_a_difference() -> None:
    [first] = diff('{"a":1}', '{"a":1,"a":1}')
    assert first.kind == "format" and "repeated" in first.detail


def test_ignored_paths_do_not_count() -> None:
    expected = '{"steps":{"c1":{"error":{"message":"host A"}}}}'
    assert diff(expected, '{"steps":{"c1":{"error":{"message":"host B"}}}}', ("steps.c1.error.message",)) == ()
    assert diff(expected, '{"steps":{"c1":{"error":{"message":"host B","x":1}}}}', ("steps.c1.error.message",))


def test_long_strings_show_where_they_part() -> None:
    [first] = diff('{"t":"' + "a" * 5000 + 'X"}', '{"t":"' + "a" * 5000 + 'Y"}')
    assert first.detail == "strings part at character 5000"  # where: the text form shows the region itself
    assert first.expected == '"' + "a" * 5000 + 'X"'  # kept whole
    shown = str(first)
    assert "  expected: …" + "a" * 80 + 'X" (characters 4921–5003 of 5003)\n' in shown
    assert shown.endswith("  actual:   …" + "a" * 80 + 'Y" (characters 4921–5003 of 5003)')
    assert len(shown) < 500


@pytest.mark.parametrize(
    "path",
    [(), ("steps", "c1", "result"), ("steps", 0, "a b", "", "x-y", "名")],
)
def test_paths_round_trip(path: tuple[str | int, ...]) -> None:
    assert parse_path(format_path(path)) == path


def test_parse_path_accepts_the_short_form() -> None:
    assert parse_path("steps.c1.result.content[0].text") == ("steps", "c1", "result", "content", 0, "text")
    with pytest.raises(ValueError):
        parse_path("$.steps..c1")


# --- any depth, any size ----------------------------------------------------------------------------------

DEEP = 100_000


def nested(depth: int, leaf: str) -> str:
    return "[" * depth + leaf + "]" * depth


def test_a_difference_at_the_bottom_of_a_100000_deep_value() -> None:
    [first] = diff(nested(DEEP, "1"), nested(DEEP, "2"))
    assert (first.kind, first.path, first.expected, first.actual) == ("value", (0,) * DEEP, "1", "2")


def test_a_100000_deep_value_that_differs_only_in_form() -> None:
    [first] = diff(nested(DEEP, '"x"'), nested(DEEP, ' "x"'))
    assert first.kind == "format" and first.path == (0,) * DEEP


def test_a_100000_deep_value_where_the_golden_has_a_scalar() -> None:
    [first] = diff('{"steps":{}}', '{"steps":' + nested(DEEP, "") + "}")
    assert (first.where, first.kind, first.detail) == ("$.steps", "type", "object ≠ array")
    assert first.actual == nested(DEEP, "")


def test_deep_objects_and_a_missing_deep_member() -> None:
    deep_object = '{"a":' * DEEP + "1" + "}" * DEEP
    assert diff(deep_object, deep_object.replace("1", "2")) == (Difference(("a",) * DEEP, "value", "1", "2"),)
    deep_object = '{"a":' * 20_000 + "1" + "}" * 20_000
    [missing] = diff('{"x":' + deep_object + ',"y":1}', '{"y":1}')
    assert (missing.where, missing.kind, missing.expected) == ("$.x", "missing", deep_object)


def test_many_keys_are_judged() -> None:
    # How the time grows with the keys is a benchmark row (bench/run.py, judge_million_keys), not a test.
    keys = 200_000
    members = ",".join(f'"k{i}":{i}' for i in range(keys))
    expected = ('{"steps":{' + members + "}}").encode()
    actual = expected.replace(f'"k{keys - 1}":{keys - 1}'.encode(), f'"k{keys - 1}":-1'.encode())
    [first] = compare(expected, actual)
    assert (first.path, first.expected, first.actual) == (("steps", f"k{keys - 1}"), str(keys - 1), "-1")


def test_an_ignored_difference_does_not_hide_a_changed_key_order() -> None:
    [first] = diff('{"a":"host A","b":1}', '{"b":1,"a":"host B"}', ("a",))
    assert (first.where, first.kind) == ("$", "key-order")


def test_an_integer_longer_than_int_can_read() -> None:
    [first] = diff('{"n":' + "1" * 5000 + "}", '{"n":' + "1" * 4999 + "2}")
    assert (first.where, first.kind) == ("$.n", "value")
    assert first.actual == "1" * 4999 + "2"


# --- where two texts part ------------------------------------------------------------------------------


@pytest.mark.parametrize("length", [0, 1, 63, 64, 65, 200, 4096, 70_000, 300_000])
def test_first_difference_finds_the_first_differing_character(length: int) -> None:
    text = "".join(chr(0x61 + index % 26) for index in range(length + 10))
    for at in sorted({0, length // 3, length - 1, length} - {-1}):
        changed = text[:at] + "\ud800" + text[at + 1 :]
        assert first_difference(text, changed) == at
        assert first_difference(changed, text) == at
    assert first_difference(text, text) == len(text)
    assert first_difference(text[:length], text) == length  # a prefix: the shorter length
    assert first_difference("", text) == 0


@given(st.text(), st.text(), st.text())
def test_first_difference_is_the_common_prefix_length(prefix: str, left: str, right: str) -> None:
    left, right = prefix * 50 + left, prefix * 50 + right
    naive = next((i for i, (a, b) in enumerate(zip(left, right, strict=False)) if a != b), min(len(left), len(right)))
    assert first_difference(left, right) == naive


def test_a_difference_at_the_end_of_10_mb_is_located() -> None:
    expected, actual = "a" * 10_000_000 + "b", "a" * 10_000_000 + "c"
    assert first_difference(expected, actual) == 10_000_000
    before, after = excerpts(expected, actual)
    assert before is not None and after is not None and (before.start, after.end) == (9_999_920, 10_000_001)


def test_the_diff_locates_long_strings_with_the_same_scan() -> None:
    # The diff says where strings part, and a difference of form where it starts, with the display's scan.
    long = "a" * 3_000_000
    [value] = diff('{"t":"' + long + 'X"}', '{"t":"' + long + 'Y"}')
    [form] = diff('{"t":"' + long + 'X"}', '{"t":"' + long + '\\u0058"}')
    assert "strings part at character 3000000" in value.detail
    assert (form.kind, form.detail) == ("format", "the same data written differently, from character 3000006")
    assert not hasattr(diff_module, "_common_prefix_length")  # one scan, display.first_difference
