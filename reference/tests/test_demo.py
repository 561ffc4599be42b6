"""The README's tour runs, prints value, content and failures, and writes a replayable log without the value."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from toolcanon.demo import replay_hint, tour
from toolcanon.session import replay


def test_tour_prints_and_logs_without_the_value(tmp_path: Path) -> None:
    log = tmp_path / "demo.jsonl"
    printed = asyncio.run(tour(log))
    assert 'value         = {"words":4,"longest":"lossless"}' in printed
    assert "error.info    = ToolArgsError / INVALID_ARGS" in printed
    assert 'error.message = unknown tool "nope"' in printed
    text = log.read_text(encoding="utf-8")
    assert '"words":4' not in text  # the value never reaches the log, only its rendering
    assert "4 words; longest: lossless" in text
    replayed = replay(log)
    assert [message["source"]["callId"] for message in replayed.messages] == ["c1", "c2", "c3"]


def test_the_replay_hint_names_a_command_that_is_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Beside an interpreter with the kit installed, the hint is its command's path; elsewhere, how to install it."""
    log, scripts = tmp_path / "demo.jsonl", tmp_path / "venv" / "bin"
    scripts.mkdir(parents=True)
    monkeypatch.setattr(sys, "executable", str(scripts / "python"))
    assert replay_hint(log) == (
        f"replay it with the conformance kit (pip install toolcanon-conformance): toolcanon replay {log}"
    )
    command = scripts / ("toolcanon.exe" if os.name == "nt" else "toolcanon")
    command.write_text("")
    assert replay_hint(log) == f"replay it with: {command} replay {log}"
