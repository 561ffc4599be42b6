"""The README's tour runs, prints value, content and failures, and writes a replayable log without the value."""

from __future__ import annotations

import asyncio
from pathlib import Path

from toolcontract.demo import tour
from toolcontract.session import replay


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
