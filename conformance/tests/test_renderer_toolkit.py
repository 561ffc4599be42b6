"""The renderer authors' toolkit: the golden layout, ``native_snapshot`` and ``check_renderer``."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from toolcanon.definition import Output
from toolcanon.renderers import FAMILIES
from toolcanon_conformance.renderer_toolkit import (
    NativeSnapshot,
    RendererNotLossless,
    RendererNotPure,
    RendererNotTotal,
    check_renderer,
    golden_bytes,
    golden_diff,
    native_snapshot,  # noqa: F401
)

SCHEMA = {"type": "object", "additionalProperties": False, "properties": {"n": {"type": "integer", "required": True}}}


def _output(render: Any, meta: Any = None) -> Output:
    return Output(schema=SCHEMA, render=render, presentation_meta=meta)


def _text(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


def test_golden_bytes_layout() -> None:
    """One text block is its UTF-8 text; anything else (or a lone surrogate) is the content's canonical JSON."""
    assert golden_bytes(_text("é\n")) == (".txt", "é\n".encode())
    assert golden_bytes(_text("\ud800")) == (".json", b'[{"type":"text","text":"\\ud800"}]')
    assert golden_bytes([*_text("a"), *_text("b")])[0] == ".json"
    assert golden_bytes([{"type": "image", "attachment": {}}]) == (".json", b'[{"type":"image","attachment":{}}]')


def test_native_snapshot_checks_an_existing_golden(native_snapshot: NativeSnapshot) -> None:  # noqa: F811
    """The fixture renders with frozen inputs and compares with ``snapshots/renderers/<family>/<case>.txt``."""
    value = {"matches": [{"path": "a.ts", "lineNumber": 1, "line": "hit"}]}
    content = native_snapshot(FAMILIES["grep"], value, family="grep", case="one-match")
    assert content == _text("Found 1 match\n\na.ts\nLine 1: hit")


def testgolden_diff_is_readable(tmp_path: Path) -> None:
    """A failing golden shows a line diff whose lines are literals, so tabs and carriage returns show."""
    golden = tmp_path / "one.txt"
    golden.write_bytes(b"Found 1 match\n\na.ts\nLine 1: hit")
    diff = golden_diff(golden, b"Found 1 match\n\na.ts\nLine 1: h\tit\r")
    assert "-'Line 1: hit'\n+'Line 1: h\\tit\\r'" in diff
    assert "--snapshot-update" in golden_diff(tmp_path / "missing.txt", b"")


def test_check_renderer_accepts_the_first_party_renderers() -> None:
    """Every family passes on a few values (the property test covers generated ones)."""
    assert (
        check_renderer(
            FAMILIES["todo_write"], [{"todos": [], "counts": {"pending": 0, "inProgress": 0, "completed": 0}}]
        )
        == 1
    )


def test_not_total() -> None:
    """A renderer that raises for a valid value is named with the value."""

    def render(args: Any, value: Any) -> Any:
        if value["n"] == 3:
            raise ZeroDivisionError("boom")
        return _text("ok")

    with pytest.raises(RendererNotTotal, match=r'value #1 \{"n":3\}.*|ZeroDivisionError: boom'):
        check_renderer(_output(render), [{"n": 1}, {"n": 3}])


def test_not_pure_between_calls() -> None:
    """Two renderings of the same inputs must be the same bytes."""
    counter = itertools.count()
    with pytest.raises(RendererNotPure, match="different results"):
        check_renderer(_output(lambda args, value: _text(str(next(counter)))), [{"n": 1}])


def test_not_pure_mutating_input() -> None:
    """A renderer that tries to change its (frozen) input is impure."""

    def render(args: Any, value: Any) -> Any:
        value["n"] = 2
        return _text("x")

    with pytest.raises(RendererNotPure, match="modify its frozen input"):
        check_renderer(_output(render), [{"n": 1}])


@pytest.mark.parametrize("result", [({"type": "text", "text": "t"},), [{"type": "text", "text": float("nan")}], "text"])
def test_not_lossless(result: Any) -> None:
    """The content must be a lossless JSON list."""
    with pytest.raises(RendererNotLossless):
        check_renderer(_output(lambda args, value: result), [{"n": 1}])


def test_metadata_projector_is_checked_too() -> None:
    """The presentation-metadata projector must be total and lossless as well."""
    with pytest.raises(RendererNotLossless, match="presentation_meta"):
        check_renderer(_output(lambda args, value: _text("x"), lambda args, value: {1, 2}), [{"n": 1}])


def test_invalid_values_are_refused() -> None:
    """A value outside the schema is a caller's mistake, reported with the contract's violations."""
    with pytest.raises(ValueError, match=r'missing required property "value.n"'):
        check_renderer(_output(lambda args, value: _text("x")), [{}])


def test_check_errors_are_assertion_errors() -> None:
    """Failures subclass ``AssertionError`` so pytest reports them as failed assertions."""
    assert issubclass(RendererNotTotal, AssertionError)
