"""The fixed-shape families: todo_write, ask_user_question, exit_plan_mode, structured_output, subagent, skill
(renderers.md §8-11, §13, §19)."""

from __future__ import annotations

import pytest

from toolcanon.renderers import FAMILIES, output_for, render_native
from toolcanon.renderers.skill import escape_attribute, escape_text


def test_todo_counts_sentence() -> None:
    """§8 [D]: only the counts are rendered."""
    value = {
        "todos": [{"content": "x", "status": "completed"}],
        "counts": {"pending": 1, "inProgress": 1, "completed": 0},
    }
    assert render_native("todo_write", value)[0]["text"] == "Updated todo list: 1 pending, 1 in progress, 0 completed."


def test_ask_user_question_is_compact_json() -> None:
    """§9 [T]: ``JSON.stringify(value)``."""
    value = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
    assert render_native("ask_user_question", value)[0]["text"] == '{"answers":[{"id":"pkg","selected":["pnpm"]}]}'


def test_constant_renderers_ignore_args() -> None:
    """§10-11 [T]: constant sentences whatever the arguments."""
    assert render_native("exit_plan_mode", {"approved": True}, {"x": 1})[0]["text"] == (
        "Plan approved — plan mode exited; carry out the plan starting with your next step."
    )
    assert render_native("structured_output", {"recorded": True})[0]["text"] == "Structured output recorded."


def test_subagent_concatenates_text_blocks_only() -> None:
    """§19: text fields of text blocks, no separator; everything else ignored."""
    value = {
        "kind": "foreground",
        "runId": "r",
        "output": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}],
    }
    assert render_native("subagent", value)[0]["text"] == "ab"


def test_skill_escapes() -> None:
    """§13 [T]: the attribute escape leaves ``>``; the text escape covers ``&``, ``<``, ``>``."""
    assert escape_attribute('x"&<y>') == "x&quot;&amp;&lt;y>"
    assert escape_text("a & <b>") == "a &amp; &lt;b&gt;"


def test_families_without_metadata() -> None:
    """§8-13, §19: these families declare no presentation metadata."""
    for family in ("todo_write", "ask_user_question", "exit_plan_mode", "structured_output", "skill", "subagent"):
        assert FAMILIES[family].presentation_meta is None, family


@pytest.mark.parametrize(
    ("family", "option"),
    [
        ("read", "read_limit"),
        ("glob", "max_results"),
        ("grep", "max_matches"),
        ("grep", "max_line_bytes"),
        ("web_fetch", "max_chars"),
        ("workflow", "max_result_chars"),
        ("ralph", "max_result_chars"),
    ],
)
@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_caps_are_positive_integers(family: str, option: str, bad: object) -> None:
    """A family's caps are positive integers, as the original's plugin configs require (2.0 counts as 2)."""
    with pytest.raises(ValueError, match=f"^{option} must be a positive integer"):
        output_for(family, **{option: bad})
    assert output_for(family, **{option: 2.0}) is not None
