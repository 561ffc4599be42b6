"""Every worked example of the protocol is true: run, each gives exactly the transcript (or answer) shown.

The examples are in docs/protocol-examples.md, each under the heading of the section of docs/protocol.md it
illustrates, which links to it; both documents are read, so an example in either runs. An example is a fenced
``json scenario`` block followed by the block of what it yields: ``json transcript`` (the reference's
transcript), ``json transcript typescript-dsh-tools`` (the original's, for the values only JavaScript has) or
``json answer`` (the reference's whole answer to ``run``, for a skip). A scenario block may leave out
``formatVersion`` and ``id`` (1 and ``example``), and a transcript block ``formatVersion`` and ``scenario``. A
``ndjson session`` block is a conversation with the reference's adapter process: ``→`` lines are sent, ``←``
lines are its answers, where the string ``"…"`` stands for any value.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from toolcanon import canonical_json
from toolcanon_conformance.adapters.reference import run_scenario
from toolcanon_conformance.adapters.subprocess import Subprocess
from toolcanon_conformance.implementation import Ran, Skipped
from toolcanon_conformance.protocol import outcome_to_wire
from toolcanon_conformance.scenario import scenario_from_data

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
try:
    from original_node import NodeUnavailable, adapter_command  # the one place that picks the original's Node
finally:
    sys.path.remove(str(ROOT / "tools"))

SPEC = ROOT / "docs" / "protocol.md"
SPEC_EXAMPLES = ROOT / "docs" / "protocol-examples.md"
#: The documents whose worked examples are run.
DOCUMENTS = (SPEC, SPEC_EXAMPLES)
ORIGINAL = ROOT / "implementations" / "typescript-dsh-tools"
FENCE = re.compile(r"^```(?P<info>[^\n]*)\n(?P<body>.*?)^```$", re.M | re.S)
WILDCARD = "…"
HEADING = re.compile(r"^#{1,6} (.+?)\s*$", re.M)
#: A link of docs/protocol.md to a section of its examples.
LINK = re.compile(r"\]\(protocol-examples\.md#([\w-]+)\)")


@dataclass(frozen=True)
class Example:
    """One worked example: a scenario, and what the doc says it yields."""

    line: int
    scenario: dict[str, Any]
    kind: str  # "transcript" or "answer"
    source: str  # "reference" or "typescript-dsh-tools"
    shown: Any
    document: str = "protocol-examples.md"

    @property
    def name(self) -> str:
        return f"{self.document}:{self.line}"


def anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, spaces as hyphens, other punctuation left out."""
    return re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")


def full_scenario(fragment: dict[str, Any]) -> dict[str, Any]:
    """An example's scenario with the keys it may leave out filled in."""
    return {"formatVersion": 1, "id": "example", **fragment}


def examples(text: str, document: str = "protocol-examples.md") -> list[Example]:
    """The worked examples of a document, in order."""
    found: list[Example] = []
    blocks = list(FENCE.finditer(text))
    for block, after in zip(blocks, [*blocks[1:], None][: len(blocks)], strict=True):
        if block.group("info").split() != ["json", "scenario"]:
            continue
        line = text.count("\n", 0, block.start()) + 1
        if after is None or after.group("info").split()[:2] not in (["json", "transcript"], ["json", "answer"]):
            raise AssertionError(f"{document}:{line}: a scenario block must be followed by what it yields")
        words = after.group("info").split()
        found.append(
            Example(
                line=line,
                scenario=full_scenario(json.loads(block.group("body"))),
                kind=words[1],
                source=words[2] if len(words) > 2 else "reference",
                shown=json.loads(after.group("body")),
                document=document,
            )
        )
    return found


def sessions(text: str) -> list[tuple[int, list[tuple[str, Any]]]]:
    """The ``ndjson session`` blocks: their line, and each ``→``/``←`` line with its JSON."""
    found = []
    for block in FENCE.finditer(text):
        if block.group("info").split() != ["ndjson", "session"]:
            continue
        lines = [(line[0], json.loads(line[1:])) for line in block.group("body").splitlines() if line[:1] in "→←"]
        found.append((text.count("\n", 0, block.start()) + 1, lines))
    return found


def as_shown(example: Example, transcript: dict[str, Any]) -> dict[str, Any]:
    """The transcript with the keys the example's block leaves out left out."""
    if not isinstance(example.shown, dict) or "formatVersion" in example.shown:
        return transcript
    return {key: value for key, value in transcript.items() if key not in ("formatVersion", "scenario")}


def block_text(transcript: dict[str, Any]) -> str:
    """A transcript as a block shows it: one top-level key per line, each step (or registration) on its own."""
    parts = []
    for key, value in transcript.items():
        if key in ("steps", "registrations") and isinstance(value, dict) and value:
            entries = ",\n".join(f"  {canonical_json(name)}: {canonical_json(item)}" for name, item in value.items())
            parts.append(f"{canonical_json(key)}: {{\n{entries}}}")
        else:
            parts.append(f"{canonical_json(key)}: {canonical_json(value)}")
    return "{" + ",\n ".join(parts) + "}"


def matches(expected: Any, actual: Any) -> bool:
    """``actual`` equals ``expected``, key order included, where ``"…"`` in ``expected`` stands for anything."""
    if expected == WILDCARD:
        return True
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and list(expected) == list(actual)
            and all(matches(item, actual[key]) for key, item in expected.items())
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(matches(e, a) for e, a in zip(expected, actual, strict=True))
        )
    return type(expected) is type(actual) and expected == actual


def _original_adapter(command: list[str]) -> Iterator[Subprocess]:
    adapter = Subprocess(command, timeout=60, startup_timeout=60)
    adapter.start()
    try:
        yield adapter
    finally:
        adapter.stop()


def yielded(example: Example, original: Subprocess | None) -> Any:
    """What the example's scenario really yields, in the form its block shows."""
    if example.source == "reference":
        outcome: Any = run_scenario(example.scenario)
    else:
        assert original is not None
        outcome = original.run(0, example.scenario)
    if example.kind == "answer":
        return json.loads(json.dumps(outcome_to_wire(0, outcome)))
    assert isinstance(outcome, Ran), f"{example.name}: {outcome}"
    return as_shown(example, json.loads(outcome.transcript))


EXAMPLES = [example for path in DOCUMENTS for example in examples(path.read_text(encoding="utf-8"), path.name)]
SESSIONS = [
    (f"{path.name}:{line}", exchange)
    for path in DOCUMENTS
    for line, exchange in sessions(path.read_text(encoding="utf-8"))
]


@pytest.fixture(scope="module")
def original() -> Iterator[Subprocess | None]:
    if not any(example.source != "reference" for example in EXAMPLES):
        yield None
        return
    if not (ORIGINAL / "node_modules" / "@deepseek-ai" / "dsh-tools").is_dir():
        pytest.skip("the original implementation is not installed (npm ci in implementations/typescript-dsh-tools)")
    try:
        command = adapter_command(ORIGINAL)
    except NodeUnavailable as error:
        pytest.skip(f"the original's engine is missing: {error}")
    yield from _original_adapter(command)


def test_the_spec_has_worked_examples() -> None:
    assert len(EXAMPLES) >= 30
    assert {example.source for example in EXAMPLES} == {"reference", "typescript-dsh-tools"}
    assert SESSIONS


def test_every_example_is_linked_from_the_section_it_illustrates() -> None:
    """Each heading of the examples holding an example is one of docs/protocol.md, and that section links to it."""
    spec = SPEC.read_text(encoding="utf-8")
    text = SPEC_EXAMPLES.read_text(encoding="utf-8")
    headings = list(HEADING.finditer(text))
    spec_headings = {match.group(1) for match in HEADING.finditer(spec)}
    linked = set(LINK.findall(spec))
    anchors = {anchor(match.group(1)) for match in headings}
    assert linked <= anchors, f"docs/protocol.md links to no such heading: {sorted(linked - anchors)}"
    for match, after in zip(headings, [*headings[1:], None], strict=True):
        body = text[match.end() : after.start() if after else len(text)]
        if not FENCE.search(body):
            continue
        title = match.group(1)
        assert title in spec_headings, f"protocol-examples.md: {title!r} is no section of docs/protocol.md"
        start = re.search(rf"^#+ {re.escape(title)}$", spec, re.M)
        assert start is not None
        following = HEADING.search(spec, start.end())
        section = spec[start.end() : following.start() if following else len(spec)]
        assert f"](protocol-examples.md#{anchor(title)})" in section, f"docs/protocol.md, {title!r}: no link here"


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.source == "reference"], ids=lambda e: e.name)
def test_a_reference_example_yields_what_it_shows(example: Example) -> None:
    scenario_from_data(example.scenario, example.name)  # a valid scenario of the format
    actual = yielded(example, None)
    assert matches(example.shown, actual), f"{example.name} yields:\n{_shown(example, actual)}"


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.source != "reference"], ids=lambda e: e.name)
def test_an_original_example_yields_what_it_shows(example: Example, original: Subprocess | None) -> None:
    scenario_from_data(example.scenario, example.name)
    reference = run_scenario(example.scenario)
    assert isinstance(reference, Skipped) and reference.message.startswith("not expressible: ")
    actual = yielded(example, original)
    assert matches(example.shown, actual), f"{example.name} yields:\n{_shown(example, actual)}"


def _shown(example: Example, actual: Any) -> str:
    return block_text(actual) if example.kind == "transcript" else canonical_json(actual)


@pytest.mark.parametrize("session", SESSIONS, ids=lambda s: s[0])
def test_a_protocol_session_is_what_the_reference_adapter_answers(session: tuple[str, list[tuple[str, Any]]]) -> None:
    where, exchange = session
    sent = "".join(json.dumps(message) + "\n" for arrow, message in exchange if arrow == "→")
    process = subprocess.run(
        [sys.executable, "-m", "toolcanon_conformance.adapters.reference"],
        input=sent.encode(),
        capture_output=True,
        timeout=120,
        check=True,
    )
    answers = [json.loads(text) for text in process.stdout.decode().splitlines()]
    expected = [message for arrow, message in exchange if arrow == "←"]
    assert len(answers) == len(expected), answers
    for shown, answer in zip(expected, answers, strict=True):
        assert matches(shown, answer), f"{where}: answered {canonical_json(answer)}"


def test_a_wrong_example_is_caught() -> None:
    text = (
        '```json scenario\n{"tools": {"t": {"output": {"schema": {"type": "string"}, "render": {"kind": "text"}},'
        ' "body": {"kind": "return", "value": "v"}}}, "steps": [{"id": "c", "call": {"name": "t", "arguments": {}}}]}'
        '\n```\n```json transcript\n{"steps": {"c": {"result": {"isError": false, "value": "other"}}}}\n```\n'
    )
    (example,) = examples(text)
    assert not matches(example.shown, yielded(example, None))
