"""``terminal_*`` and ``job_*``: byte caps and ``finalize_content`` re-bounding (renderers.md §17-18)."""

from __future__ import annotations

import pytest

from toolcanon.renderers import FAMILIES, finalize_native, output_for, render_native
from toolcanon.renderers.terminal import bound_terminal_text


def test_bound_terminal_text() -> None:
    """§17: a UTF-8 head of ``max - 19`` bytes plus the marker; the marker's tail on a smaller cap."""
    assert bound_terminal_text("short", 64) == "short"
    assert bound_terminal_text("界" * 30, 25) == "界界\n[output truncated]"
    assert bound_terminal_text("x" * 30, 10) == "truncated]"


def test_finalize_applies_to_error_text() -> None:
    """§17: the re-bounding also applies to ``Error: …`` failures (one text block)."""
    content = [{"type": "text", "text": "Error: " + "e" * 100}]
    bounded = finalize_native("terminal_read", None, content, max_result_bytes=64)
    assert bounded == [{"type": "text", "text": "Error: " + "e" * 38 + "\n[output truncated]"}]


def test_list_keeps_its_tail_over_the_cap() -> None:
    """§17: ``terminal_list`` is bounded in render as a read page is, without metadata: the last sessions stay."""
    sessions = [{"sessionId": f"pty-{n}", "type": "shell", "status": {"kind": "running"}} for n in range(10)]
    text = "g\npty-8 [shell] running\npty-9 [shell] running\n[output truncated]"
    assert render_native("terminal_list", sessions, config={"max_result_bytes": 64})[0]["text"] == text
    assert render_native("terminal_list", sessions, config={"max_result_bytes": 64}, finalize=True)[0]["text"] == text
    assert "pty-0" in render_native("terminal_list", sessions)[0]["text"]


def test_finalize_leaves_multi_block_content() -> None:
    """§17: only a content of exactly one text block is re-bounded."""
    content = [{"type": "text", "text": "a" * 100}, {"type": "text", "text": "b"}]
    assert finalize_native("terminal_list", None, content, max_result_bytes=64) == content


def test_minimum_cap() -> None:
    """§17: ``maxResultBytes`` is at least 64."""
    with pytest.raises(ValueError, match="at least 64"):
        output_for("terminal_read", max_result_bytes=63)


def test_send_meta() -> None:
    """§17: foreground projects the viewport fields; background projects null."""
    projector = FAMILIES["terminal_send"].presentation_meta
    assert projector is not None
    assert projector({}, {"kind": "background", "jobId": "j"}) is None
    foreground = {
        "kind": "foreground",
        "viewport": "v",
        "waitReason": "timeout",
        "sessionStatus": {"kind": "running"},
        "truncated": False,
    }
    assert projector({}, foreground) == {
        k: foreground[k] for k in ("viewport", "waitReason", "sessionStatus", "truncated")
    }


def test_signal_uses_args() -> None:
    """§17: the delivered signal's name comes from the arguments."""
    assert render_native("terminal_signal", {"delivered": True, "targetPgid": 7}, {"signal": "SIGHUP"})[0]["text"] == (
        "delivered SIGHUP to foreground process group 7"
    )


JOB = {"id": "job-1", "kind": "bash", "label": "l", "status": "running", "startedAt": 0}


def test_job_finalize_without_limit_is_identity() -> None:
    """§18: without ``outputLimitBytes`` the content is unchanged."""
    content = [{"type": "text", "text": "z" * 1000}]
    assert finalize_native("job_output", {"text": "z", "job": JOB}, content) == content


def test_job_finalize_failure_uses_result_marker() -> None:
    """§18: a single text block other than a job_output success keeps its tail and ``[result truncated]``."""
    content = [{"type": "text", "text": "Error: " + "e" * 100}]
    bounded = finalize_native("job_kill", None, content, output_limit_bytes=40)
    assert bounded == [{"type": "text", "text": "e" * 21 + "\n[result truncated]"}]


def test_job_finalize_marker_already_there() -> None:
    """§18: a body already ending in ``[output truncated]`` gets no second marker; a tiny limit keeps a tail."""
    value = {"text": "x" * 50 + "[output truncated]", "job": JOB}
    content = render_native("job_output", value)
    assert finalize_native("job_output", value, content, output_limit_bytes=40)[0]["text"] == (
        "x" * 4 + "[output truncated]\n[status: running]"
    )
    assert finalize_native("job_output", value, content, output_limit_bytes=5)[0]["text"] == "ning]"


def test_job_status_line_shows_an_empty_detail() -> None:
    """§18: a present ``detail`` is printed even when empty (``[status: completed, ]``)."""
    value = {"text": "", "job": {**JOB, "status": "completed", "detail": ""}}
    assert render_native("job_output", value)[0]["text"] == "(no new output)\n[status: completed, ]"
