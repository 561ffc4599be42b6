"""``bash``: stream assembly and markers (renderers.md §7)."""

from __future__ import annotations

from typing import Any

from toolcanon.renderers import FAMILIES, render_native


def _foreground(**fields: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "kind": "foreground",
        "exitCode": 0,
        "signal": None,
        "timedOut": False,
        "aborted": False,
        "timeoutMs": 1000,
        "stdout": {"text": "", "truncated": False},
        "stderr": {"text": "", "truncated": False},
    }
    value.update(fields)
    return value


def test_marker_order() -> None:
    """§7: sandbox, then timeout, then signal (which hides the exit code)."""
    value = _foreground(
        exitCode=9, signal="SIGKILL", timedOut=True, sandbox={"mode": "workspace-write", "denied": True}
    )
    assert render_native("bash", value)[0]["text"] == (
        "(no output)\n[sandbox: file access denied under workspace-write mode]\n[timed out after 1000ms]\n"
        "[killed by signal: SIGKILL]"
    )


def test_escalation_marker_only_when_configured() -> None:
    """§7: the escalation line appears only when the executor confines commands."""
    value = _foreground(sandbox={"mode": "read-only", "denied": True})
    assert "escalation" not in render_native("bash", value)[0]["text"]
    assert "escalation available" in render_native("bash", value, config={"escalation_available": True})[0]["text"]


def test_runner_failed_is_not_rendered() -> None:
    """§7: ``sandbox.runnerFailed`` is not rendered on the foreground path."""
    value = _foreground(sandbox={"mode": "read-only", "denied": False, "runnerFailed": True})
    assert render_native("bash", value)[0]["text"] == "(no output)"


def test_no_presentation_meta() -> None:
    """§7: bash declares no presentation metadata."""
    assert FAMILIES["bash"].presentation_meta is None
