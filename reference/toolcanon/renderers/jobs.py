"""``job_output`` / ``job_list`` / ``job_kill``: background jobs and their status line (renderers.md §18)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, array, enum, integer, obj, optional, required, string
from toolcanon.renderers._ecma import retain_text_tail, utf8_length

__all__ = [
    "JOB_FAMILIES",
    "JOB_SCHEMAS",
    "OUTPUT_TRUNCATED",
    "RESULT_TRUNCATED",
    "finalize_content",
    "job_outputs",
    "render_job_kill",
    "render_job_list",
    "render_job_output",
    "status_line",
]

OUTPUT_TRUNCATED: Final = "\n[output truncated]"
RESULT_TRUNCATED: Final = "\n[result truncated]"

_JOB: Final[Node] = obj(
    {
        "id": required(string()),
        "kind": required(string()),
        "label": required(string()),
        "status": required(enum("running", "stopping", "completed", "killed", "failed")),
        "detail": optional(string()),
        "startedAt": required(integer()),
        "finishedAt": optional(integer()),
    }
)

JOB_SCHEMAS: Final[dict[str, Node]] = {
    "job_output": obj({"text": required(string()), "job": required(_JOB)}),
    "job_list": array(_JOB),
    "job_kill": obj({"outcome": required(enum("cancellation-requested", "already-finished")), "job": required(_JOB)}),
}

JOB_FAMILIES: Final = tuple(JOB_SCHEMAS)


def status_line(job: Any) -> str:
    """``[status: <status>, <detail>]`` when the job has a detail (even an empty one), else ``[status: <status>]``."""
    if "detail" in job:
        return f"[status: {job['status']}, {job['detail']}]"
    return f"[status: {job['status']}]"


def _job_output_body(value: Any) -> str:
    body: str = value["text"] or "(no new output)"
    return body if body.endswith("\n") else body + "\n"


def render_job_output(args: Any, value: Any) -> TextContent:
    """The new output (or ``(no new output)``), a newline, the status line."""
    return text_content(_job_output_body(value) + status_line(value["job"]))


def render_job_list(args: Any, value: Any) -> TextContent:
    """``<id> [<kind>] <status> — <label>`` per job, or ``(no background jobs)``."""
    if not value:
        return text_content("(no background jobs)")
    return text_content("\n".join(f"{job['id']} [{job['kind']}] {job['status']} — {job['label']}" for job in value))


def render_job_kill(args: Any, value: Any) -> TextContent:
    """A cancellation request, or the already-finished job's status line."""
    job = value["job"]
    if value["outcome"] == "cancellation-requested":
        return text_content(f"requested cancellation of job {job['id']}")
    return text_content(f"job {job['id']} had already finished {status_line(job)}")


def _fit_with_suffix(content: str, suffix: str, limit: int, omitted: str) -> str:
    """``content + suffix`` within ``limit`` UTF-8 bytes: the tail of ``content``, then ``omitted`` and ``suffix``.

    ``omitted`` is left out when ``content`` already ends with its text (``[… truncated]``); when the marker and
    the suffix alone reach the limit, only their tail is kept.
    """
    complete = content + suffix
    if utf8_length(complete) <= limit:
        return complete
    fixed = ("" if content.endswith(omitted.lstrip()) else omitted) + suffix
    fixed_bytes = utf8_length(fixed)
    if fixed_bytes >= limit:
        return retain_text_tail(fixed, limit).text
    return retain_text_tail(content, limit - fixed_bytes).text + fixed


def _raw_single_text(content: Sequence[Any]) -> Any:
    if len(content) != 1 or not isinstance(content[0], dict) or content[0].get("type") != "text":
        return None
    return content[0].get("text")


def finalize_content(family: str, value: Any, content: Sequence[Any], *, output_limit_bytes: int | None) -> list[Any]:
    """Re-bound the final content of ``job_output`` / ``job_kill`` when the job has an output limit.

    ``value`` is ``None`` for a failure. A ``job_output`` success whose content is its own rendering keeps the
    UTF-8 tail of the body, then ``[output truncated]`` and the status line; any other content of one text
    block keeps its tail and ``[result truncated]``. Without a limit, or for other content, it is unchanged.
    """
    if output_limit_bytes is None:
        return list(content)
    text = _raw_single_text(content)
    if family == "job_output" and value is not None:
        body: str = value["text"] or "(no new output)"
        kept = body[:-1] if body.endswith("\n") else body
        suffix = "\n" + status_line(value["job"])
        if text == kept + suffix:
            return text_content(_fit_with_suffix(kept, suffix, output_limit_bytes, OUTPUT_TRUNCATED))
    if not isinstance(text, str):
        return list(content)
    return text_content(_fit_with_suffix(text, "", output_limit_bytes, RESULT_TRUNCATED))


def job_outputs() -> dict[str, Output]:
    """The three job output declarations, keyed by tool name."""
    return {
        "job_output": Output(schema=JOB_SCHEMAS["job_output"], render=render_job_output),
        "job_list": Output(schema=JOB_SCHEMAS["job_list"], render=render_job_list),
        "job_kill": Output(schema=JOB_SCHEMAS["job_kill"], render=render_job_kill),
    }
