"""What :mod:`toolcanon.renderers` exports, loaded on first use (every family module, and their declarations)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from types import MappingProxyType
from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.errors import ToolOutputError
from toolcanon.jsonvalue import snapshot_json
from toolcanon.renderers import jobs, terminal
from toolcanon.renderers.ask_user_question import ask_user_question_output
from toolcanon.renderers.bash import bash_output
from toolcanon.renderers.edit import edit_output
from toolcanon.renderers.exit_plan_mode import exit_plan_mode_output
from toolcanon.renderers.glob import glob_output
from toolcanon.renderers.grep import grep_output
from toolcanon.renderers.lsp import lsp_output
from toolcanon.renderers.read import read_image_output, read_output
from toolcanon.renderers.run_code import run_code_output
from toolcanon.renderers.skill import skill_output
from toolcanon.renderers.structured_output import structured_output_output
from toolcanon.renderers.subagent import subagent_output
from toolcanon.renderers.todo import todo_write_output
from toolcanon.renderers.web_fetch import web_fetch_output
from toolcanon.renderers.web_search import web_search_output
from toolcanon.renderers.workflow import ralph_output, workflow_output
from toolcanon.renderers.write import write_output
from toolcanon.schema import compile_validator, compile_value_schema

__all__ = ["FAMILIES", "FINALIZING_FAMILIES", "finalize_native", "output_for", "render_native", "violations_of"]


def _terminal_factory(family: str) -> Callable[..., Output]:
    def build(*, max_result_bytes: int = terminal.DEFAULT_MAX_RESULT_BYTES) -> Output:
        return terminal.terminal_outputs(max_result_bytes=max_result_bytes)[family]

    return build


def _job_factory(family: str) -> Callable[..., Output]:
    def build(*, output_limit_bytes: int | None = None) -> Output:
        # The limit belongs to the job record, not to the renderer: it only matters to finalize_native.
        return jobs.job_outputs()[family]

    return build


_FACTORIES: Final[dict[str, Callable[..., Output]]] = {
    "read": read_output,
    "read_image": read_image_output,
    "write": write_output,
    "edit": edit_output,
    "glob": glob_output,
    "grep": grep_output,
    "bash": bash_output,
    "todo_write": todo_write_output,
    "ask_user_question": ask_user_question_output,
    "exit_plan_mode": exit_plan_mode_output,
    "structured_output": structured_output_output,
    "run_code": run_code_output,
    "skill": skill_output,
    "web_search": web_search_output,
    "web_fetch": web_fetch_output,
    "lsp": lsp_output,
    **{family: _terminal_factory(family) for family in terminal.TERMINAL_FAMILIES},
    **{family: _job_factory(family) for family in jobs.JOB_FAMILIES},
    "subagent": subagent_output,
    "workflow": workflow_output,
    "ralph": ralph_output,
}

FAMILIES: Final[Mapping[str, Output]] = MappingProxyType({name: build() for name, build in _FACTORIES.items()})
"""Every first-party family's output declaration with its default configuration, by family name."""

FINALIZING_FAMILIES: Final = frozenset((*terminal.TERMINAL_FAMILIES, "job_output", "job_kill"))
"""The families whose tools also re-bound their final content (``finalize_content``)."""


def output_for(family: str, **config: Any) -> Output:
    """The ``family`` declaration built with ``config`` (each module's factory documents its options).

    Raises ``KeyError`` for an unknown family and ``TypeError`` for an option the family does not take.
    """
    return _FACTORIES[family](**config)


@cache
def _validator(family: str) -> Any:
    return compile_validator(compile_value_schema(FAMILIES[family].schema))


def violations_of(family: str, value: Any) -> list[str]:
    """The contract's violation messages for ``value`` against the family's schema (root ``value``)."""
    violations: list[str] = _validator(family).violations(value, root="value")
    return violations


def finalize_native(family: str, value: Any, content: Any, **config: Any) -> list[Any]:
    """The family's ``finalize_content`` applied to final ``content`` (``value`` is ``None`` for a failure)."""
    if family in terminal.TERMINAL_FAMILIES:
        limit = config.get("max_result_bytes", terminal.DEFAULT_MAX_RESULT_BYTES)
        return terminal.finalize_content(content, max_result_bytes=limit)
    if family in ("job_output", "job_kill"):
        return jobs.finalize_content(family, value, content, output_limit_bytes=config.get("output_limit_bytes"))
    return list(content)


def render_native(
    family: str,
    value: Any,
    args: Any = None,
    *,
    config: Mapping[str, Any] | None = None,
    finalize: bool = False,
) -> list[Any]:
    """Render ``value`` as the family's tool would on a direct call: the Native content blocks.

    The value and arguments are snapshot (lossless, frozen), the value is validated against the family's
    schema, and a schema violation or a renderer error raises
    :class:`~toolcanon.errors.ToolOutputError` (``INVALID_TOOL_OUTPUT``) with the contract's message.
    With ``finalize=True`` the family's ``finalize_content`` re-bounds the result.
    """
    options = dict(config or {})
    output = output_for(family, **options)
    frozen_args = snapshot_json({} if args is None else args)
    frozen_value = snapshot_json(value)
    violations = violations_of(family, frozen_value)
    if violations:
        raise ToolOutputError(family, violations)
    try:
        rendered = output.render(frozen_args, frozen_value)
    except Exception as error:
        raise ToolOutputError(family, [f"output.render failed: {error}"]) from error
    content: list[Any] = snapshot_json(rendered)
    if finalize:
        content = snapshot_json(finalize_native(family, frozen_value, content, **options))
    return content
