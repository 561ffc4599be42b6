"""The tutorial's adapter, docs/examples/minimal-adapter.mjs, does what docs/writing-an-adapter.md says it does.

The guide's commands are run for real: the handshake, the whole suite through ``toolcanon check`` (and the
pytest plugin), and the failure, baseline and stale baseline of the bug it walks through. Each output shown
must be what the kit prints, timings aside; the guide's JavaScript excerpts must be the adapter's own lines.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from toolcanon_conformance.cli import main
from toolcanon_conformance.exotic import PYTHON_INEXPRESSIBLE
from toolcanon_conformance.scenario import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "writing-an-adapter.md"
ADAPTER = ROOT / "docs" / "examples" / "minimal-adapter.mjs"
COMMAND = "node docs/examples/minimal-adapter.mjs"
HANDSHAKE = '{"cmd":"start","version":1}\n{"cmd":"stop"}\n'
FENCE = re.compile(r"^```(?P<info>[^\n]*)\n(?P<body>.*?)^```$", re.M | re.S)
PLAIN = ["-p", "no:randomly", "-p", "no:cacheprovider"]  # a session whose output does not depend on plugins
SECONDS = re.compile(r" in [0-9.]+ ?s\b")
# The documented bug: a validator that builds a new list where it should add to the one it was given.
CORRECT_LINE = "    return push(out, `${label(path)} must be ${EXPECTED[type]}`)"
BUGGY_LINE = "    return [...out, `${label(path)} must be ${EXPECTED[type]}`]"


def _node_version() -> int | None:
    node = shutil.which("node")
    if node is None:
        return None
    found = re.match(
        r"v(\d+)\.", subprocess.run([node, "--version"], check=False, capture_output=True, text=True).stdout
    )
    return int(found.group(1)) if found else None


needs_node = pytest.mark.skipif((_node_version() or 0) < 20, reason="node >= 20 is not on PATH")


def guide_blocks() -> list[tuple[str, str]]:
    """The guide's fenced blocks: their info string and their text."""
    return [(block.group("info"), block.group("body")) for block in FENCE.finditer(GUIDE.read_text("utf-8"))]


def shown(command: str) -> str:
    """The output the guide shows for ``$ <command>`` (the block's lines after it), timings removed."""
    for _, body in guide_blocks():
        first, _, rest = body.partition("\n")
        if first == f"$ {command}":
            return SECONDS.sub("", rest)
    raise AssertionError(f"the guide shows no output of `{command}`")


def shown_lines(command: str) -> list[str]:
    """The lines of what the guide shows for a command, without its `…` elisions."""
    return [line for line in shown(command).splitlines() if line.strip() != "…"]


def check(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Run ``toolcanon check`` in this process; its exit status and standard output, timings removed."""
    capsys.readouterr()
    status = main(["check", *arguments])
    return status, SECONDS.sub("", capsys.readouterr().out)


def test_the_quoted_code_is_the_adapters_own() -> None:
    source = ADAPTER.read_text("utf-8")
    excerpts = [body for info, body in guide_blocks() if info == "js"]
    assert len(excerpts) >= 5
    for excerpt in excerpts:
        assert excerpt in source, f"not a verbatim excerpt of {ADAPTER.name}:\n{excerpt}"


def test_the_guide_counts_the_scenarios_that_need_no_capability() -> None:
    core = [scenario for scenario in load_scenarios() if not scenario.requires]
    assert f"The {len(core)} such scenarios" in GUIDE.read_text("utf-8")


@needs_node
def test_the_handshake_is_what_the_guide_shows() -> None:
    command = f"printf '{HANDSHAKE.encode('unicode_escape').decode()}' | {COMMAND}"
    process = subprocess.run(
        ["node", str(ADAPTER)],
        input=HANDSHAKE,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert process.stdout == shown(command)


@needs_node
def test_the_suite_passes_with_every_other_scenario_skipped(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(ROOT)
    status, output = check(["--impl-cmd", COMMAND, "--validate-protocol", "--report", str(tmp_path / "r.json")], capsys)
    assert status == 0, output
    verdict = output.rstrip("\n").rsplit("\n", 1)[-1]
    assert verdict == shown_lines(f'toolcanon check --impl-cmd "{COMMAND}"')[-1], "update the guide's numbers"
    (run,) = json.loads((tmp_path / "r.json").read_text("utf-8"))["implementations"]
    assert run["summary"]["failed"] == run["summary"]["errored"] == 0
    for scenario in run["scenarios"]:
        if scenario["status"] == "skipped":  # by capability, or for a value only Python has
            message = scenario["message"]
            python_only = message.startswith("not expressible: ") and message[17:] not in PYTHON_INEXPRESSIBLE
            assert scenario.get("missingCapabilities") or python_only, scenario
        else:
            assert scenario["status"] == "passed", scenario


@needs_node
def test_the_pytest_plugin_gives_the_guides_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    process = subprocess.run(
        [sys.executable, "-m", "pytest", "--pyargs", "toolcanon_conformance", "--impl-cmd", COMMAND, "-q", *PLAIN],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert process.returncode == 0, process.stdout[-3000:]
    expected = shown_lines(f'pytest --pyargs toolcanon_conformance --impl-cmd "{COMMAND}" -q')
    assert SECONDS.sub("", process.stdout).rstrip("\n").splitlines()[-2:] == expected


@needs_node
def test_the_documented_bug_fails_is_baselined_and_goes_stale(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = ADAPTER.read_text("utf-8")
    assert source.count(CORRECT_LINE) == 1
    (tmp_path / "my-adapter.mjs").write_text(source.replace(CORRECT_LINE, BUGGY_LINE), "utf-8")
    (tmp_path / "fixed.mjs").write_text(source, "utf-8")
    monkeypatch.chdir(tmp_path)
    buggy = "node my-adapter.mjs"
    known = "known.json"

    status, output = check(["--impl-cmd", buggy, "-k", "val-argument-paths"], capsys)
    assert status == 1
    assert output.splitlines() == shown_lines(f'toolcanon check --impl-cmd "{buggy}" -k val-argument-paths')

    status, output = check(["--impl-cmd", buggy, "--write-baseline", known], capsys)
    assert status == 1
    assert output.splitlines()[-1] == shown_lines(f'toolcanon check --impl-cmd "{buggy}" --write-baseline {known}')[-1]
    entries = json.loads(Path(known).read_text("utf-8"))["knownFailures"]
    documented = next(json.loads(body) for info, body in guide_blocks() if info == "json")["knownFailures"][0]
    assert {key: value for key, value in documented.items() if key != "reason"} in entries

    status, output = check(["--impl-cmd", buggy, "--baseline", known], capsys)
    assert status == 0
    assert output.splitlines()[-1] == shown_lines(f'toolcanon check --impl-cmd "{buggy}" --baseline {known}')[-1]

    status, output = check(["--impl-cmd", "node fixed.mjs", "--baseline", known], capsys)
    assert status == 1
    stale = next(body for info, body in guide_blocks() if body.lstrip().startswith("baseline: stale"))
    assert stale.strip() in output
