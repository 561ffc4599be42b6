"""``exit_plan_mode``: a constant confirmation that ignores value and arguments (renderers.md §10)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, const, obj, required

__all__ = ["EXIT_PLAN_MODE_SCHEMA", "PLAN_APPROVED", "exit_plan_mode_output", "render_exit_plan_mode"]

PLAN_APPROVED: Final = "Plan approved — plan mode exited; carry out the plan starting with your next step."

EXIT_PLAN_MODE_SCHEMA: Final[Node] = obj({"approved": required(const("boolean", True))})


def render_exit_plan_mode(args: Any, value: Any) -> TextContent:
    """The fixed sentence :data:`PLAN_APPROVED`."""
    return text_content(PLAN_APPROVED)


def exit_plan_mode_output() -> Output:
    """The ``exit_plan_mode`` output declaration."""
    return Output(schema=EXIT_PLAN_MODE_SCHEMA, render=render_exit_plan_mode)
