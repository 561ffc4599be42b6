"""Known disagreements (``toolcanon fuzz --known FILE``): how a known one is told from a new one, and the original's
file kept honest: each entry names a scenario of the suite, of the class the baseline gives it, and recognises what
that scenario shows when the original runs it."""

from __future__ import annotations

import io
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_baseline_kinds import original_source, quoted_in

from toolcanon_conformance.adapters.inprocess import BUNDLED_REFERENCE, InProcess
from toolcanon_conformance.adapters.subprocess import Subprocess
from toolcanon_conformance.baseline import Baseline, Intent
from toolcanon_conformance.diff import Difference
from toolcanon_conformance.fuzz_cli import fuzz_command
from toolcanon_conformance.known import KnownDisagreements, KnownError, parse_path_pattern
from toolcanon_conformance.properties import ConformanceFailure, ImplementationPair
from toolcanon_conformance.scenario import load_scenarios
from toolcanon_conformance.strategies import REFERENCE_EXOTIC_KINDS

ROOT = Path(__file__).resolve().parents[2]
ORIGINAL = ROOT / "implementations" / "typescript-dsh-tools"
KNOWN_FILE = ORIGINAL / "fuzz-known.json"
KNOWN = KnownDisagreements.load(KNOWN_FILE)
sys.path.insert(0, str(ROOT / "tools"))
try:
    import original_node
finally:
    sys.path.remove(str(ROOT / "tools"))


def entry(**fields: Any) -> dict[str, Any]:
    return {
        "id": "e",
        "class": "not-pinned",
        "scenario": "s",
        "reason": "r",
        "intent": {"source": "a.ts", "quote": "q"},
        **fields,
    }


def known_of(*entries: dict[str, Any]) -> KnownDisagreements:
    return KnownDisagreements.from_json({"formatVersion": 1, "knownDisagreements": list(entries)})


def differs(
    *differences: Difference, scenario: dict[str, Any] | None = None, transcripts: Any = None
) -> ConformanceFailure:
    return ConformanceFailure(
        "the transcript differs from the reference's",
        scenario or {"steps": []},
        difference=differences[0],
        differences=differences,
        transcripts=transcripts,
    )


MESSAGE = Difference(("steps", "c1", "result", "error", "message"), "value", '"mine"', '"x is not a function"')
TEXT = Difference(
    ("steps", "c1", "result", "content", 0, "text"), "value", '"Error: mine"', '"Error: x is not a function"'
)


# --- telling a known disagreement from a new one ---------------------------------------------------------


def test_a_failure_is_known_only_when_every_difference_is_explained() -> None:
    known = known_of(entry(differences=[{"path": "$.steps.*.result.error.message", "actual": "is not a function"}]))
    assert [e.id for e in known.classify(differs(MESSAGE))] == ["e"]
    assert known.classify(differs(MESSAGE, TEXT)) == ()  # the text is not explained, so the failure is new
    wider = known_of(entry(differences=[{"path": "$.steps.*.result"}]))
    assert [e.id for e in wider.classify(differs(MESSAGE, TEXT))] == ["e"]


def test_each_sides_expression_must_match() -> None:
    known = known_of(entry(differences=[{"path": "$.steps.*.result", "expected": '^"mine"$', "actual": "function"}]))
    assert known.classify(differs(MESSAGE)) != ()
    other = Difference(MESSAGE.path, "value", '"theirs"', '"x is not a function"')
    assert known.classify(differs(other)) == ()
    absent = Difference(MESSAGE.path, "missing", '"mine"', None)
    assert known.classify(differs(absent)) == ()  # an expression for a side with nothing there never matches


def test_an_entry_applies_only_to_a_scenario_holding_its_patterns() -> None:
    known = known_of(entry(holds=[{"kind": "block", "feedback": ["a", "b"]}], differences=[{"path": "$.steps"}]))
    holding = {"hooks": [{"action": {"kind": "block", "feedback": "b", "extra": 1}}]}
    assert known.classify(differs(MESSAGE, scenario=holding)) != ()
    assert known.classify(differs(MESSAGE, scenario={"hooks": [{"action": {"kind": "block", "feedback": "c"}}]})) == ()
    assert known.classify(differs(MESSAGE, scenario={"hooks": [{"action": {"kind": "accept"}}]})) == ()


def test_a_reordered_array_is_known_only_when_it_holds_the_same_items() -> None:
    known = known_of(entry(reordered=["$.steps.*.events"]))
    difference = Difference(("steps", "p", "events", 0, "type"), "value", '"a"', '"b"')
    swapped = (
        '{"steps":{"p":{"events":[{"type":"a"},{"type":"b"}]}}}',
        '{"steps":{"p":{"events":[{"type":"b"},{"type":"a"}]}}}',
    )
    changed = (
        '{"steps":{"p":{"events":[{"type":"a"},{"type":"b"}]}}}',
        '{"steps":{"p":{"events":[{"type":"b"},{"type":"b"}]}}}',
    )
    assert known.classify(differs(difference, transcripts=swapped)) != ()
    assert known.classify(differs(difference, transcripts=changed)) == ()


def test_an_errored_outcome_is_known_by_its_message() -> None:
    known = known_of(entry(errored="never settles"))
    errored = ConformanceFailure("errored", {}, kind="errored", context={"message": "the run never settles: boom"})
    assert known.classify(errored) != ()
    other = ConformanceFailure("errored", {}, kind="errored", context={"message": "crashed"})
    assert known.classify(other) == ()
    invariant = ConformanceFailure("broken", {}, violations=["$.steps.c1: the value reached the log"])
    assert known.classify(invariant) == ()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"formatVersion": 1}, "not a known-disagreements file"),
        ({"formatVersion": 1, "knownDisagreements": [entry()]}, "not a known-disagreements file"),
        (
            {"formatVersion": 1, "knownDisagreements": [{**entry(differences=[{"path": "$"}]), "intent": None}]},
            "not a known",
        ),
        ({"formatVersion": 1, "knownDisagreements": [entry(errored="(")]}, "e: missing ), unterminated subpattern"),
        ({"formatVersion": 1, "knownDisagreements": [entry(differences=[{"path": "$.a..b"}])]}, "not a path pattern"),
        ({"formatVersion": 1, "knownDisagreements": [entry(errored="x"), entry(errored="y")]}, "e is listed twice"),
    ],
)
def test_a_bad_file_is_a_typed_error(data: dict[str, Any], message: str) -> None:
    with pytest.raises(KnownError, match=message.replace("(", r"\(").replace(")", r"\)")):
        KnownDisagreements.from_json(data)


def test_path_patterns() -> None:
    assert parse_path_pattern("$.steps.*.events[*].data") == ("steps", "*", "events", "*", "data")
    assert parse_path_pattern('$.steps["a b"][2]') == ("steps", "a b", 2)


# --- through the command ---------------------------------------------------------------------------------


def run_fuzz(*arguments: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = fuzz_command(list(arguments), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_a_known_disagreement_is_counted_and_the_hunt_goes_on(tmp_path: Path) -> None:
    explains_the_bug = tmp_path / "known.json"
    explains_the_bug.write_text(
        json.dumps(
            {
                "formatVersion": 1,
                "knownDisagreements": [
                    entry(
                        id="value-logged",
                        scenario="log-value-never-persisted",
                        differences=[{"path": "$.steps.*.events"}, {"path": "$.steps.*.lines"}],
                    )
                ],
            }
        ),
        encoding="utf-8",
    )
    arguments = ["--impl", "test_fuzz_cli:persists_the_value", "--examples", "60", "--seed", "1"]
    status, out, _err = run_fuzz(*arguments, "--known", str(explains_the_bug))
    assert status == 0, out
    assert "no failure in 60 scenarios" in out
    assert re.search(r"Known disagreements \(.*known\.json\): \d+ scenarios? \(not-pinned \d+\):", out), out
    assert "not-pinned  value-logged (S:log-value-never-persisted)" in out
    unknown, _, _ = run_fuzz(*arguments)
    assert unknown == 1


def test_a_known_file_that_cannot_be_read_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "known.json"
    bad.write_text("{", encoding="utf-8")
    status, _out, err = run_fuzz("--impl", "test_fuzz_cli:persists_the_value", "--known", str(bad))
    assert status == 2
    assert err.startswith("toolcanon fuzz: --known ") and "cannot read the known disagreements" in err


# --- the original's file --------------------------------------------------------------------------------


SCENARIOS = {scenario.id: scenario for scenario in load_scenarios()}


def test_each_entry_names_a_scenario_of_the_suite_of_the_class_the_baseline_gives_it() -> None:
    baseline = Baseline.load(ORIGINAL / "baseline.json")
    for known in KNOWN.entries:
        assert known.scenario in SCENARIOS, f"{known.id}: {known.scenario} is no scenario of the suite"
        listed = baseline.entries.get(known.scenario)
        if known.cls == "not-pinned":
            assert listed is None, f"{known.id}: a not-pinned case is no known failure of {known.scenario}"
            data = SCENARIOS[known.scenario].data
            assert data.get("optional") or data.get("ignore"), f"{known.id}: {known.scenario} leaves nothing open"
        else:
            assert listed is not None and listed.kind == known.cls, f"{known.id}: the baseline lists it otherwise"
            if listed.intent is not None:
                assert known.intent == (listed.intent.source, listed.intent.quote), f"{known.id}: another quote"


@pytest.fixture(scope="module")
def original_pair() -> Iterator[ImplementationPair]:
    try:
        node = original_node.original_node()
    except original_node.NodeUnavailable as error:
        pytest.skip(f"missing capability: the Node that runs the original ({error})")
    adapter = f"{node} {ORIGINAL / 'adapter.mjs'}"
    pair = ImplementationPair(Subprocess(adapter, timeout=30), InProcess(BUNDLED_REFERENCE), concurrent=True)
    pair.start()
    yield pair
    pair.stop()


@pytest.mark.parametrize("known", KNOWN.entries, ids=lambda known: known.id)
def test_each_entry_recognises_what_its_scenario_shows_on_the_original(
    known: Any, original_pair: ImplementationPair
) -> None:
    # The scenario as generated scenarios are judged: byte for byte, nothing left optional.
    scenario = {
        key: value for key, value in SCENARIOS[known.scenario].data.items() if key not in ("optional", "ignore")
    }
    with pytest.raises(ConformanceFailure) as raised:
        original_pair.check(scenario, differential=True, invariants=False)
    explained = KNOWN.classify(raised.value)
    assert known.id in [entry.id for entry in explained], str(raised.value)


def test_the_session_fuzzes_the_original_with_every_exotic_kind_both_express() -> None:
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    block = re.search(r"^UPSTREAM_EXOTIC_KINDS = (.*?)^\S", noxfile, re.MULTILINE | re.DOTALL)
    assert block is not None, "noxfile.py defines no UPSTREAM_EXOTIC_KINDS"
    adapter = (ORIGINAL / "adapter.mjs").read_text(encoding="utf-8")
    inexpressible = re.search(r"const JS_INEXPRESSIBLE = new Set\(\[(.*?)\]\)", adapter)
    assert inexpressible is not None, "adapter.mjs defines no JS_INEXPRESSIBLE"
    javascript = set(re.findall(r"'([a-z-]+)'", inexpressible.group(1)))
    assert set(re.findall(r'"([a-z-]+)"', block.group(1))) == set(REFERENCE_EXOTIC_KINDS) - javascript


def test_a_reordered_array_may_hold_numbers_the_canonical_writer_refuses() -> None:
    known = known_of(entry(reordered=["$.steps.*.events"]))
    difference = Difference(("steps", "p", "events", 0), "value", "9007199254740993", "1")
    swapped = ('{"steps":{"p":{"events":[9007199254740993,1]}}}', '{"steps":{"p":{"events":[1,9007199254740993]}}}')
    assert known.classify(differs(difference, transcripts=swapped)) != ()


@pytest.mark.parametrize("known", [known for known in KNOWN.entries if known.intent is not None], ids=lambda k: k.id)
def test_each_quote_is_the_originals_own_words(known: Any) -> None:
    source, quote = known.intent
    assert quoted_in(Intent(source, quote), original_source(source)), f"{known.id}: not the words of {source}"
