"""tools/record_goldens.py writes the goldens recorded from another implementation, and refuses every other one."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from fake_suite import scenario
from misbehaving_adapter import transcript

HERE = Path(__file__).parent
TOOLS = HERE.parents[1] / "tools"
RECORDED = {"source": "typescript-dsh-tools", "reason": "JavaScript-only values"}


@pytest.fixture(scope="module")
def tool() -> Iterator[ModuleType]:
    sys.path.insert(0, str(TOOLS))
    try:
        import record_goldens

        yield record_goldens
    finally:
        sys.path.remove(str(TOOLS))


@pytest.fixture
def folders(tmp_path: Path, tool: ModuleType, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Two recorded scenarios and one of the reference, and an adapter table that ``_main`` may change."""
    scenarios, goldens = tmp_path / "scenarios", tmp_path / "goldens"
    scenarios.mkdir()
    goldens.mkdir()
    for scenario_id, marker in (("js-a", RECORDED), ("js-b", RECORDED), ("plain", None)):
        data = scenario(scenario_id, ["R-SNAP-2"])
        if marker is not None:
            data["golden"] = marker
        (scenarios / f"{scenario_id}.json").write_text(json.dumps(data))
    monkeypatch.setitem(tool.ADAPTERS, "typescript-dsh-tools", tool.ADAPTERS["typescript-dsh-tools"])
    return scenarios, goldens


def _main(tool: ModuleType, folders: tuple[Path, Path], *arguments: str, mode: str = "good") -> int:
    """Run the tool with the original played by the misbehaving adapter in ``mode`` (the fixture restores it)."""
    tool.ADAPTERS["typescript-dsh-tools"] = lambda: [sys.executable, str(HERE / "misbehaving_adapter.py"), mode]
    status: int = tool.main([*arguments, "--scenarios", str(folders[0]), "--goldens", str(folders[1])])
    return status


def test_every_recorded_golden_is_written_as_answered(
    tool: ModuleType, folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert _main(tool, folders) == 0
    goldens = folders[1]
    assert sorted(path.name for path in goldens.iterdir()) == ["js-a.json", "js-b.json"]
    assert (goldens / "js-a.json").read_bytes() == transcript({"id": "js-a"}).encode()
    assert "js-a: new (from typescript-dsh-tools)" in capsys.readouterr().out
    assert _main(tool, folders, "--check") == 0
    assert "0 new, 0 changed, 2 unchanged" in capsys.readouterr().out


def test_check_finds_a_golden_that_would_change(tool: ModuleType, folders: tuple[Path, Path]) -> None:
    assert _main(tool, folders, "js-b") == 0
    assert not (folders[1] / "js-a.json").exists()
    (folders[1] / "js-b.json").write_bytes(b"{}")
    assert _main(tool, folders, "--check") == 1
    assert (folders[1] / "js-b.json").read_bytes() == b"{}"
    assert not (folders[1] / "js-a.json").exists()


def test_a_golden_of_the_reference_or_an_unknown_id_is_refused(
    tool: ModuleType, folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert _main(tool, folders, "js-a", "plain") == 2
    assert "plain: its golden is the reference's transcript, not recorded" in capsys.readouterr().err
    assert _main(tool, folders, "nope") == 2
    assert "nope: no such scenario" in capsys.readouterr().err
    assert list(folders[1].iterdir()) == []


def test_an_answer_that_is_no_transcript_writes_nothing(
    tool: ModuleType, folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert _main(tool, folders, mode="skip") == 1
    assert "js-a: typescript-dsh-tools did not answer a transcript" in capsys.readouterr().out
    assert _main(tool, folders, mode="wrong-transcript") == 1
    assert list(folders[1].iterdir()) == []


def test_a_missing_engine_is_a_usage_error_that_says_what_to_do(
    tool: ModuleType, folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    def unavailable() -> list[str]:
        raise tool.NodeUnavailable("no Node.js ^22.19.0 || >=24.0.0 to run the original (found no node): run npm ci")

    tool.ADAPTERS["typescript-dsh-tools"] = unavailable
    status = tool.main(["--scenarios", str(folders[0]), "--goldens", str(folders[1])])
    assert status == 2
    assert "record_goldens.py: no Node.js ^22.19.0 || >=24.0.0 to run the original" in capsys.readouterr().err
    assert list(folders[1].iterdir()) == []
