"""docs/writing-an-adapter.md, followed literally, builds a working adapter: docs/examples/minimal-adapter.mjs.

The guide's JavaScript blocks, concatenated in order, are the example adapter byte for byte. The guide is then
followed as a reader would, in an empty folder: ``toolcanon example`` writes the registry, the adapter is
written from the guide's blocks (only those above each command), the registry edited and the baseline written
as the guide says, and each command shown is run in a shell, its output compared with what the guide shows
(timings aside; a ``…`` line stands for any lines). The counts its prose states are the suite's, and
``toolcanon example`` writes the files the guide starts from, installed or in a checkout.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from toolcanon_conformance import locations
from toolcanon_conformance.cli import main
from toolcanon_conformance.example_cli import EXAMPLE_FILES, examples_dir
from toolcanon_conformance.exotic import PYTHON_INEXPRESSIBLE
from toolcanon_conformance.golden_source import REFERENCE, golden_source_of
from toolcanon_conformance.protocol import known_capabilities
from toolcanon_conformance.scenario import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "writing-an-adapter.md"
EXAMPLES = ROOT / "docs" / "examples"
ADAPTER = EXAMPLES / "minimal-adapter.mjs"
#: The file the guide has its reader write, block by block.
MY_ADAPTER = "my-adapter.mjs"
FENCE = re.compile(r"^```(?P<info>[^\n]*)\n(?P<body>.*?)^```$", re.M | re.S)
PROMPT = "$ "
ELISION = "…"
SECONDS = re.compile(r" in [0-9.]+ ?s\b")
NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _node_version() -> int | None:
    node = shutil.which("node")
    if node is None:
        return None
    found = re.match(
        r"v(\d+)\.", subprocess.run([node, "--version"], check=False, capture_output=True, text=True).stdout
    )
    return int(found.group(1)) if found else None


needs_node = pytest.mark.skipif((_node_version() or 0) < 20, reason="node >= 20 is not on PATH")
needs_shell = pytest.mark.skipif(shutil.which("sh") is None, reason="a POSIX shell (sh) is not on PATH")


@dataclass(frozen=True, slots=True)
class Block:
    """A fenced block of the guide: its language, the file it is for (``file=NAME``), its text."""

    language: str
    file: str | None
    body: str


def guide_blocks() -> list[Block]:
    """The guide's fenced blocks, in order."""
    blocks = []
    for match in FENCE.finditer(GUIDE.read_bytes().decode("utf-8")):
        language, *attributes = match.group("info").split() or [""]
        files = [attribute.removeprefix("file=") for attribute in attributes if attribute.startswith("file=")]
        blocks.append(Block(language, files[0] if files else None, match.group("body")))
    return blocks


def commands(body: str) -> list[tuple[str, list[str]]]:
    """The ``$ command`` lines of a block, each with the output lines the guide shows after it."""
    shown: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith(PROMPT):
            shown.append((line.removeprefix(PROMPT), []))
        elif shown:
            shown[-1][1].append(line)
    return shown


def matches(shown: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` is what ``shown`` shows, each ``…`` line standing for any lines (none included)."""
    segments: list[list[str]] = [[]]
    for line in shown:
        if line.strip() == ELISION:
            segments.append([])
        else:
            segments[-1].append(line)
    if len(segments) == 1:
        return shown == actual
    first, *middle, last = segments
    start, end = len(first), len(actual) - len(last)
    if end < start or actual[:start] != first or actual[end:] != last:
        return False
    for segment in middle:
        found = next(
            (at for at in range(start, end - len(segment) + 1) if actual[at : at + len(segment)] == segment), None
        )
        if found is None:
            return False
        start = found + len(segment)
    return True


def _prose() -> str:
    """The guide's text with every run of whitespace one space, so that a phrase may span lines."""
    return " ".join(GUIDE.read_text("utf-8").split())


def _environment() -> dict[str, str]:
    """A reader's shell: this interpreter's ``toolcanon``, ``pytest`` and ``python3`` first, no colour, and
    none of the settings of the session running this test."""
    inherited = {"FORCE_COLOR", "COLUMNS", "LINES"}
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("PYTEST_") and name not in inherited
    }
    environment["NO_COLOR"] = "1"
    environment["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), environment.get("PATH", "")])
    return environment


def _apply(block: Block, folder: Path) -> None:
    """Do what a block marked ``file=NAME`` says to ``folder/NAME``: append JavaScript, write JSON, edit by diff."""
    assert block.file is not None
    target = folder / block.file
    if block.language == "js":
        with target.open("a", encoding="utf-8", newline="") as file:
            file.write(block.body)
    elif block.language == "json":
        written = json.loads(target.read_text("utf-8"))["knownFailures"] if target.exists() else []
        for entry in json.loads(block.body)["knownFailures"]:  # narrowing keeps entries of the written baseline
            assert {key: value for key, value in entry.items() if key != "reason"} in written, entry
        target.write_text(block.body, "utf-8", newline="")
    elif block.language == "diff":
        lines = block.body.splitlines()
        removed = "\n".join(line[1:] for line in lines if line.startswith("-")) + "\n"
        added = "\n".join(line[1:] for line in lines if line.startswith("+")) + "\n"
        source = target.read_text("utf-8")
        assert source.count(removed) == 1, f"{block.file} does not hold this line once: {removed}"
        target.write_text(source.replace(removed, added), "utf-8", newline="")
    else:
        raise AssertionError(f"a block for {block.file} in an unknown language: {block.language!r}")


def test_the_guides_javascript_blocks_are_the_example_adapter() -> None:
    blocks = [block for block in guide_blocks() if block.language == "js"]
    assert all(block.file == MY_ADAPTER for block in blocks), "every JavaScript block is one of the adapter's"
    assert len(blocks) >= 10
    assert "".join(block.body for block in blocks) == ADAPTER.read_bytes().decode("utf-8")


@needs_node
@needs_shell
def test_following_the_guide_builds_a_working_adapter(tmp_path: Path) -> None:
    folder = tmp_path
    environment = _environment()
    problems: list[str] = []
    ran = 0
    for block in guide_blocks():
        if block.file is not None:
            _apply(block, folder)
            continue
        for command, shown in commands(block.body):
            if command.startswith("cd "):
                folder = folder / command.removeprefix("cd ")
                assert folder.is_dir(), f"`{command}`: no such folder"
                continue
            process = subprocess.run(
                command,
                shell=True,
                cwd=folder,
                env=environment,
                capture_output=True,
                text=True,
                encoding="utf-8",
                timeout=600,
                check=False,
            )
            ran += 1
            actual = SECONDS.sub("", process.stdout).splitlines()
            expected = [SECONDS.sub("", line) for line in shown]
            status = 1 if expected and expected[-1].startswith("FAIL") else 0
            if not matches(expected, actual) or process.returncode != status:
                problems.append(
                    f"$ {command}\n--- the guide shows (exit status {status}):\n"
                    + "\n".join(expected)
                    + f"\n--- it printed (exit status {process.returncode}):\n{process.stdout}"
                    + f"--- on standard error:\n{process.stderr[-3000:]}"
                )
    assert ran >= 15, "the guide shows fewer commands than it did"
    assert not problems, "\n\n".join(problems)
    assert (folder / MY_ADAPTER).read_bytes() == ADAPTER.read_bytes()


@needs_node
def test_the_example_adapter_passes_every_scenario_it_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(EXAMPLES)
    report = tmp_path / "report.json"
    status = main(["check", "--impl-cmd", "node minimal-adapter.mjs", "--validate-protocol", "--report", str(report)])
    assert status == 0, capsys.readouterr().out
    (run,) = json.loads(report.read_text("utf-8"))["implementations"]
    assert run["summary"]["failed"] == run["summary"]["errored"] == 0
    declined: list[str] = []  # the kinds of the scenarios it declines: values Python has and JavaScript has not
    for scenario in run["scenarios"]:
        if scenario["status"] == "skipped" and not scenario.get("missingCapabilities"):
            assert scenario["message"].startswith("not expressible: "), scenario
            declined.append(scenario["message"].removeprefix("not expressible: "))
            assert declined[-1] not in PYTHON_INEXPRESSIBLE, scenario
        elif scenario["status"] != "skipped":
            assert scenario["status"] == "passed", scenario
    kinds = ", ".join(f"`{kind}`" for kind in sorted(set(declined)))
    assert f"{NUMBER_WORDS[len(declined)].capitalize()} of them hold values only Python has ({kinds})" in _prose()


def test_the_counts_the_guides_prose_states_are_the_suites() -> None:
    text = _prose()
    core = [scenario for scenario in load_scenarios() if not scenario.requires]
    assert f"The {len(core)} such scenarios" in text
    javascript_only = sum(golden_source_of(scenario.data) != REFERENCE for scenario in core)
    assert f"{NUMBER_WORDS[javascript_only]} hold values only JavaScript has" in text
    vectors = json.loads((ROOT / "fixtures" / "vectors" / "ecmascript-json.json").read_text("utf-8"))
    assert f"printed for {len(vectors['numbers']):,} numbers" in text
    section = GUIDE.read_text("utf-8").split("### What each capability asks for", 1)[1]
    table = re.findall(r"^\| `([a-z-]+)` \|", section, re.M)
    assert sorted(table) == list(known_capabilities()), "the capability table lists every capability, once"


def test_example_writes_the_example_files_byte_for_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["example", "tutorial"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        *(str(Path("tutorial") / name) for name in EXAMPLE_FILES),
        "wrote the example registry and its adapter to tutorial",
    ]
    assert sorted(path.name for path in (tmp_path / "tutorial").iterdir()) == sorted(EXAMPLE_FILES)
    for name in EXAMPLE_FILES:
        assert (tmp_path / "tutorial" / name).read_bytes() == (EXAMPLES / name).read_bytes()
    assert main(["example", str(tmp_path / "a" / "b")]) == 0  # parents are made too
    assert (tmp_path / "a" / "b" / EXAMPLE_FILES[0]).is_file()


def test_example_refuses_a_folder_that_is_not_empty_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("mine", "utf-8")
    (tmp_path / EXAMPLE_FILES[1]).write_text("my own adapter", "utf-8")
    capsys.readouterr()
    assert main(["example", str(tmp_path)]) == 2
    output = capsys.readouterr()
    assert output.out == ""
    assert output.err == f"toolcanon example: {tmp_path} is not empty (--force writes into it anyway)\n"
    assert (tmp_path / EXAMPLE_FILES[1]).read_text("utf-8") == "my own adapter"
    assert not (tmp_path / EXAMPLE_FILES[0]).exists()

    assert main(["example", str(tmp_path), "--force"]) == 0
    assert (tmp_path / EXAMPLE_FILES[1]).read_bytes() == ADAPTER.read_bytes()
    assert (tmp_path / "notes.txt").read_text("utf-8") == "mine"


def test_example_refuses_a_file_and_a_folder_it_cannot_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "file"
    file.write_text("", "utf-8")
    capsys.readouterr()
    assert main(["example", str(file)]) == 2
    assert capsys.readouterr().err == f"toolcanon example: {file} is not a folder\n"
    assert main(["example", str(file / "below")]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"toolcanon example: cannot write {file / 'below'}: ") and error.count("\n") == 1


def test_example_copies_the_installed_package_data_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "site-packages" / "toolcanon_conformance"
    installed = package / "_data" / "docs" / "examples"
    installed.mkdir(parents=True)
    for name in EXAMPLE_FILES:
        (installed / name).write_text(f"// installed {name}\n", "utf-8")
    monkeypatch.setattr(locations, "_PACKAGE", package)
    assert examples_dir() == installed
    assert main(["example", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / EXAMPLE_FILES[0]).read_text("utf-8") == f"// installed {EXAMPLE_FILES[0]}\n"


def test_the_build_hook_carries_the_examples_where_the_command_finds_them() -> None:
    hook = ast.parse((ROOT / "conformance" / "hatch_build.py").read_text("utf-8"))
    assigned = {
        target.id: node.value
        for node in hook.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    folders = ast.literal_eval(assigned["DATA_FOLDERS"])
    assert "docs/examples" in folders
    assert ast.literal_eval(assigned["PACKAGE_DATA"]) == "toolcanon_conformance/_data"
    assert examples_dir() == EXAMPLES  # in a checkout: the folder the hook copies
