"""Subprocess: a misbehaving adapter is errored, never passed, and the next scenario still runs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from misbehaving_adapter import transcript

from toolcontract_conformance.adapters.subprocess import Subprocess
from toolcontract_conformance.exceptions import CannotStart, InvalidResponse, TimedOut, VersionMismatch
from toolcontract_conformance.implementation import Errored, Ran, Skipped
from toolcontract_conformance.runner import run_suite

SCRIPT = Path(__file__).with_name("misbehaving_adapter.py")
QUICK = 0.5  # seconds: a well-behaved answer takes milliseconds


def adapter(mode: str, *arguments: str, **options: Any) -> Subprocess:
    options.setdefault("timeout", QUICK)
    options.setdefault("startup_timeout", 5.0)
    return Subprocess([sys.executable, str(SCRIPT), mode, *arguments], **options)


def scenario(scenario_id: str) -> dict[str, Any]:
    return {"formatVersion": 1, "id": scenario_id, "rules": ["R-TEST-1"]}


def goldens(scenario_id: str) -> bytes:
    return transcript({"id": scenario_id}).encode()


def run_one(mode: str, **options: Any) -> Any:
    implementation = adapter(mode, **options)
    implementation.start()
    try:
        return implementation.run(0, scenario("s1"))
    finally:
        implementation.stop()


def test_a_well_behaved_adapter_answers_its_transcript() -> None:
    implementation = adapter("good")
    info = implementation.start()
    assert info.name == "misbehaving" and info.capabilities == ("wrappers",)
    assert implementation.run(7, scenario("s1")) == Ran(transcript({"id": "s1"}))
    implementation.stop()
    implementation.stop()  # idempotent


@pytest.mark.parametrize(
    ("mode", "kind", "words"),
    [
        ("crash", "crashed", "exited with code 139"),
        ("hang", "timed-out", "no answer to run seq 0"),
        ("garbage", "invalid-response", "not JSON"),
        ("wrong-seq", "invalid-response", "answered seq 1 to the run command seq 0"),
        ("answer-on-stderr", "timed-out", "no answer"),
        ("two-kinds", "invalid-response", "not exactly one of"),
        ("transcript-object", "invalid-response", "not a string"),
        ("nan", "invalid-response", "not JSON"),
        ("array", "invalid-response", "not a JSON object"),
    ],
)
def test_a_misbehaving_adapter_is_errored_with_context(mode: str, kind: str, words: str) -> None:
    outcome = run_one(mode)
    assert isinstance(outcome, Errored)
    assert outcome.context["kind"] == kind
    assert words in outcome.context["message"]


def test_the_stderr_of_a_crash_is_attached() -> None:
    outcome = run_one("crash")
    assert isinstance(outcome, Errored)
    assert "segmentation fault in s1" in outcome.context["stderr"]
    assert outcome.context["returncode"] == 139


def test_the_stderr_of_a_hang_is_attached() -> None:
    outcome = run_one("answer-on-stderr")
    assert isinstance(outcome, Errored)
    assert '"seq": 0' in outcome.context["stderr"]


def test_a_garbage_line_is_quoted() -> None:
    outcome = run_one("garbage")
    assert isinstance(outcome, Errored)
    assert outcome.context["line"].startswith("Traceback (most recent call last)")


def test_stderr_is_free_for_logs() -> None:
    assert run_one("noisy-stderr") == Ran(transcript({"id": "s1"}))


def test_skipped_and_errored_answers_are_taken_as_given() -> None:
    assert run_one("skip") == Skipped("no cycles here", "https://example.org/1")
    errored = run_one("errored")
    assert isinstance(errored, Errored) and errored.context == {"message": "boom", "traceback": "at line 1"}


def test_unknown_keys_pass_only_without_protocol_validation() -> None:
    assert isinstance(run_one("extra-key"), Ran)
    strict = run_one("extra-key", validate_protocol=True)
    assert isinstance(strict, Errored)
    assert "violates the run-response schema" in strict.context["message"]
    assert "note" in strict.context["message"]


@pytest.mark.parametrize("mode", ["crash-marked", "hang-marked", "garbage-marked"])
def test_the_adapter_is_restarted_for_the_next_scenario(mode: str) -> None:
    implementation = adapter(mode)
    suite = run_suite(implementation, [scenario("first"), scenario("bad"), scenario("after")], goldens)
    assert [result.status for result in suite.results] == ["passed", "errored", "passed"]
    assert implementation.launches == 2
    assert not suite.ok


def test_an_always_crashing_adapter_passes_nothing() -> None:
    implementation = adapter("crash")
    suite = run_suite(implementation, [scenario(f"s{n}") for n in range(3)], goldens)
    assert [result.context["kind"] for result in suite.results] == ["crashed"] * 3
    assert implementation.launches == 3


def test_restarting_gives_up_after_failed_restarts(tmp_path: Path) -> None:
    implementation = adapter("crash", str(tmp_path / "broken"), max_restarts=2)
    suite = run_suite(implementation, [scenario(f"s{n}") for n in range(5)], goldens)
    assert [result.status for result in suite.results] == ["errored"] * 5
    kinds = [(result.context["kind"], result.context.get("phase")) for result in suite.results]
    assert kinds[:3] == [("crashed", "run seq 0"), ("cannot-start", "restart"), ("cannot-start", "restart")]
    assert "gave up restarting the adapter after 2 failed attempts" in suite.results[4].message


def test_an_adapter_that_cannot_be_launched() -> None:
    with pytest.raises(CannotStart, match="cannot launch"):
        Subprocess(["/nonexistent/adapter"]).start()


def test_an_adapter_that_exits_before_the_handshake() -> None:
    with pytest.raises(CannotStart, match="exited before answering start") as raised:
        adapter("exit-at-once").start()
    assert "missing dependency" in raised.value.stderr
    assert "missing dependency" in str(raised.value)


def test_an_adapter_that_crashes_on_start() -> None:
    with pytest.raises(CannotStart) as raised:
        adapter("start-crash").start()
    assert raised.value.returncode == 4
    assert "cannot initialise" in raised.value.context()["stderr"]


def test_an_adapter_of_another_protocol_version() -> None:
    with pytest.raises(VersionMismatch, match="kit speaks version 1, the adapter answered 2"):
        adapter("wrong-version").start()


def test_an_adapter_that_never_answers_start() -> None:
    with pytest.raises(TimedOut, match=r"no answer to start within 0\.5 s"):
        adapter("start-hang", startup_timeout=0.5).start()


def test_an_adapter_that_greets_instead_of_answering_start() -> None:
    with pytest.raises(InvalidResponse, match="not JSON"):
        adapter("start-garbage").start()


def test_a_failing_start_fails_the_whole_suite() -> None:
    with pytest.raises(VersionMismatch):
        run_suite(adapter("wrong-version"), [scenario("s1")], goldens)


def test_a_wrong_transcript_fails_and_names_the_rule() -> None:
    suite = run_suite(adapter("wrong-transcript"), [scenario("s1")], goldens)
    [result] = suite.results
    assert result.status == "failed"
    assert result.first_difference is not None and result.first_difference.where == "$.scenario"
    assert "R-TEST-1" in result.explain()
