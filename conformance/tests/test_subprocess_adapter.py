"""Subprocess: a misbehaving adapter is errored, never passed, and the next scenario still runs."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fake_suite import write_suite
from misbehaving_adapter import deep_transcript, transcript

from toolcanon_conformance.adapters.subprocess import MAX_LINE_BYTES, Subprocess
from toolcanon_conformance.exceptions import CannotStart, InvalidResponse, TimedOut, VersionMismatch
from toolcanon_conformance.implementation import Errored, Ran, Skipped
from toolcanon_conformance.protocol import known_capabilities
from toolcanon_conformance.runner import run_suite

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
        ("deep-context", "invalid-response", "(nested deeper than 64 levels, in $.context.data)"),
        ("deep-key", "invalid-response", "(nested deeper than 64 levels, in $.note[0])"),
        ("invalid-utf8", "invalid-response", "(not UTF-8: byte 0xff at 26)"),
        ("seq-string", "invalid-response", "(answered seq '0' to the run command seq 0)"),
        ("seq-float", "invalid-response", "(answered seq 0.0 to the run command seq 0)"),
        ("seq-bool", "invalid-response", "(answered seq False to the run command seq 0)"),
        ("close-stdout", "crashed", "the adapter closed its output during run seq 0"),
        ("half-line", "timed-out", "no answer to run seq 0 within 0.5 s"),
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
    suite = run_suite(implementation, [scenario(f"s{n}") for n in range(5)], goldens, max_failures=0)
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


# --- hostile answers: each has one exact outcome, none is a pass, none hangs --------------------------------


def test_a_100000_deep_transcript_is_judged_not_refused() -> None:
    deep = scenario("deep")
    passing = run_suite(adapter("deep-transcript"), [deep], lambda _: deep_transcript(deep).encode())
    assert [result.status for result in passing.results] == ["passed"]
    [failing] = run_suite(adapter("deep-transcript"), [deep], goldens).results
    assert failing.status == "failed" and failing.first_difference is not None
    assert (failing.first_difference.where, failing.first_difference.detail) == ("$.steps", "object ≠ array")


@pytest.mark.parametrize(
    "mode",
    ["many-keys", pytest.param("million-keys", marks=pytest.mark.thorough)],  # 10,000 keys; 1,000,000 (2 s)
)
def test_a_transcript_of_many_keys_is_judged(mode: str) -> None:
    began = time.perf_counter()
    [result] = run_suite(adapter(mode, timeout=60.0), [scenario("s1")], goldens).results
    assert result.status == "failed" and len(result.differences) == 100
    first = result.differences[0]
    assert (first.where, first.kind, first.actual) == ("$.steps.c0", "unexpected", "0")
    assert time.perf_counter() - began < 60


def test_a_lone_surrogate_in_a_transcript_fails_where_it_stands() -> None:
    [result] = run_suite(adapter("surrogate-transcript"), [scenario("s1")], goldens).results
    assert result.status == "failed" and result.first_difference is not None
    assert (result.first_difference.where, result.first_difference.actual) == ("$.steps.t", '"\ud800"')
    assert "\\ud800" in str(result.first_difference)  # shown as its escape
    escaped = transcript({"id": "s1"}).replace('"steps":{}', '"steps":{"t":"\\ud800"}').encode()
    [unescaped] = run_suite(adapter("surrogate-transcript"), [scenario("s1")], lambda _: escaped).results
    assert unescaped.status == "failed" and unescaped.first_difference is not None
    assert (unescaped.first_difference.where, unescaped.first_difference.kind) == ("$.steps.t", "format")


def test_a_lone_surrogate_in_an_errored_context_is_kept() -> None:
    outcome = run_one("surrogate-context")
    assert outcome == Errored({"message": "bad text \ud800", "detail": ["\udfff"]})


def test_two_answers_to_one_command_error_the_next_scenario() -> None:
    implementation = adapter("two-answers")
    suite = run_suite(implementation, [scenario("s0"), scenario("s1"), scenario("s2")], goldens)
    first, second, third = suite.results
    assert (first.status, third.status) == ("passed", "passed")
    assert second.status == "errored" and second.context["kind"] == "invalid-response"
    assert second.message.startswith(
        "invalid response (a line nobody asked for, written after its answer to run seq 0)"
    )
    assert implementation.launches == 2


def test_an_adapter_that_exits_after_its_answer_crashes_the_next_scenario() -> None:
    implementation = adapter("exit-after-answer")
    suite = run_suite(implementation, [scenario("s0"), scenario("s1"), scenario("s2")], goldens)
    assert [(result.status, result.context.get("kind")) for result in suite.results] == [
        ("passed", None),
        ("errored", "crashed"),
        ("passed", None),
    ]
    assert implementation.launches == 2


def test_a_line_of_100_mb_is_refused_at_the_limit() -> None:
    outcome = run_one("huge-line", timeout=30.0)
    assert isinstance(outcome, Errored) and outcome.context["kind"] == "invalid-response"
    assert outcome.context["reason"] == f"a line longer than {MAX_LINE_BYTES} bytes"
    assert outcome.context["line"].startswith('{"seq": 0, "transcript": "xxx')


def test_a_hang_on_every_scenario_ends_the_run_after_three() -> None:
    implementation = adapter("hang")
    began = time.perf_counter()
    suite = run_suite(implementation, [scenario(f"s{n}") for n in range(20)], goldens)
    assert time.perf_counter() - began < 3 * (QUICK + 2)
    kinds = [result.context["kind"] for result in suite.results]
    assert kinds == ["timed-out"] * 3 + ["unresponsive"] * 17
    assert implementation.launches == 3
    assert suite.unresponsive.startswith(
        "the implementation is unresponsive: 3 scenarios in a row went unanswered (timed out or crashed), "
        "the last s2: no answer to run seq 2 within 0.5 s"
    )
    assert suite.results[3].message == "not run: " + suite.unresponsive
    assert suite.results[3].explain() == f"s3 errored [R-TEST-1]: not run: {suite.unresponsive}"


def test_max_failures_counts_only_failures_in_a_row() -> None:
    ids = ["bad1", "bad2", "ok1", "bad3", "bad4", "ok2"]
    suite = run_suite(adapter("crash-marked"), [scenario(i) for i in ids], goldens, max_failures=3)
    assert [result.status for result in suite.results] == ["errored", "errored", "passed"] * 2
    assert not suite.unresponsive
    strict = run_suite(adapter("crash-marked"), [scenario(i) for i in ids], goldens, max_failures=1)
    assert [result.context.get("kind") for result in strict.results] == ["crashed"] + ["unresponsive"] * 5


def test_the_stderr_of_a_failing_scenario_is_its_own() -> None:
    suite = run_suite(adapter("noisy-wrong-marked"), [scenario("ok1"), scenario("bad"), scenario("ok2")], goldens)
    before, failing, after = suite.results
    assert [result.status for result in suite.results] == ["passed", "failed", "passed"]
    assert failing.stderr == "adapter: warning while running bad\n"
    assert "--- stderr ---\nadapter: warning while running bad" in failing.explain()
    assert before.stderr == after.stderr == ""  # passing scenarios carry none


def test_a_flood_on_stderr_keeps_its_tail() -> None:
    [result] = run_suite(adapter("stderr-flood"), [scenario("s1")], goldens).results
    assert result.status == "failed"
    assert result.stderr.startswith("…") and result.stderr.endswith("x\nadapter: the end\n")
    assert len(result.stderr) == 8001


def test_an_unknown_capability_is_a_warning_without_protocol_validation() -> None:
    warnings: list[str] = []
    suite = run_suite(adapter("unknown-capability"), [scenario("s1")], goldens, warn=warnings.append)
    assert suite.implementation.capabilities == ("wrappers", "wrapers")
    assert warnings == [
        "misbehaving declares an unknown capability 'wrapers': the known ones are "
        + ", ".join(known_capabilities())
        + " (scenarios that require a misspelled capability are skipped)"
    ]


def test_an_unknown_capability_stops_the_run_with_protocol_validation() -> None:
    with pytest.raises(InvalidResponse) as raised:
        run_suite(adapter("unknown-capability", validate_protocol=True), [scenario("s1")], goldens)
    assert raised.value.reason == "unknown capability 'wrapers': the known ones are " + ", ".join(known_capabilities())
    assert "timeout" in known_capabilities() and "wrappers" in known_capabilities()


def test_a_start_answer_nested_too_deep() -> None:
    with pytest.raises(InvalidResponse, match=r"nested deeper than 64 levels, in \$\.implementation"):
        adapter("deep-start").start()


def test_an_adapter_that_closes_its_output_before_answering_start() -> None:
    with pytest.raises(CannotStart, match="closed its output before answering start"):
        adapter("start-close-stdout").start()


def test_a_scenario_larger_than_a_pipe_to_an_adapter_that_reads_no_more() -> None:
    implementation = adapter("deaf")
    implementation.start()
    began = time.perf_counter()
    try:
        outcome = implementation.run(0, {**scenario("s1"), "description": "x" * 4_000_000})
    finally:
        implementation.stop()
    assert isinstance(outcome, Errored) and outcome.context["kind"] == "timed-out"
    assert time.perf_counter() - began < QUICK + 5


def test_a_scenario_that_cannot_be_sent_is_errored_unsent() -> None:
    implementation = adapter("good")
    implementation.start()
    try:
        outcome = implementation.run(0, {**scenario("s1"), "value": float("nan")})
        assert isinstance(outcome, Errored) and outcome.context["kind"] == "invalid-command"
        assert implementation.run(1, scenario("s2")) == Ran(transcript({"id": "s2"}))
    finally:
        implementation.stop()


@pytest.mark.parametrize(
    ("mode", "status"),
    [
        ("deep-transcript", "failed"),
        ("deep-context", "errored"),
        ("deep-key", "errored"),
        ("surrogate-transcript", "failed"),
        ("surrogate-context", "errored"),
        ("invalid-utf8", "errored"),
        ("seq-float", "errored"),
    ],
)
def test_toolcanon_check_reports_a_hostile_answer(tmp_path: Path, mode: str, status: str) -> None:
    """The whole command, as a user runs it (output to a file): a verdict and a report, never a traceback."""
    scenarios, golden_folder = write_suite(tmp_path / "suite", {"ok-one": ["R-SNAP-1"]})
    report = tmp_path / "report.json"
    command = [sys.executable, "-c", "from toolcanon_conformance.cli import main; raise SystemExit(main())"]
    completed = subprocess.run(
        [
            *command,
            "check",
            "--impl-cmd",
            f"{sys.executable} {SCRIPT} {mode}",
            "--scenarios",
            str(scenarios),
            "--goldens",
            str(golden_folder),
            "--report",
            str(report),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert b"Traceback" not in completed.stderr, completed.stderr.decode()
    assert completed.returncode == 1, completed.stderr.decode()
    written = json.loads(report.read_text("utf-8"))
    assert json.dumps(written).count(f'"status": "{status}"') >= 1
