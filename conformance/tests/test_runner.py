"""The runner: byte-exact judging, skips, errors, capabilities, baselines, progress."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from toolcanon_conformance.adapters.inprocess import InProcess
from toolcanon_conformance.baseline import Baseline
from toolcanon_conformance.implementation import Errored, ImplementationInfo, Outcome, Ran, Skipped
from toolcanon_conformance.protocol import known_capabilities
from toolcanon_conformance.runner import NO_RULE, ScenarioResult, golden_directory, judge, run_suite, select

GOLDEN = '{"formatVersion":1,"scenario":"%s","steps":{"c1":{"result":{"isError":false,"value":1}}}}'


class Scripted:
    """Answers what each scenario's ``answer`` says; declares the ``wrappers`` capability only."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.stopped = False

    def start(self) -> ImplementationInfo:
        return ImplementationInfo("scripted", "python", "1", ("wrappers",))

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        self.ran.append(scenario["id"])
        answer = scenario.get("answer", "golden")
        if answer == "golden":
            return Ran(GOLDEN % scenario["id"])
        if answer == "wrong-value":
            return Ran((GOLDEN % scenario["id"]).replace('"value":1', '"value":2'))
        if answer == "skip":
            return Skipped("cannot express a set", "https://example.org/i/2")
        if answer == "error":
            return Errored({"message": "unsupported hook", "stderr": "warning: x"})
        raise RuntimeError("the adapter broke")

    def stop(self) -> None:
        self.stopped = True


def scenario(scenario_id: str, answer: str = "golden", **extra: Any) -> dict[str, Any]:
    return {"formatVersion": 1, "id": scenario_id, "rules": ["R-A-1"], "answer": answer, **extra}


def goldens(scenario_id: str) -> bytes | None:
    return None if scenario_id.startswith("orphan") else (GOLDEN % scenario_id).encode()


def run(*scenarios: dict[str, Any], **options: Any) -> Any:
    implementation = Scripted()
    suite = run_suite(InProcess(implementation), list(scenarios), goldens, **options)
    assert implementation.stopped
    return suite, implementation


def test_a_matching_transcript_passes() -> None:
    suite, _ = run(scenario("s1"))
    assert [r.status for r in suite.results] == ["passed"] and suite.ok
    assert suite.implementation.name == "scripted"


def test_a_differing_transcript_fails_with_path_and_rules() -> None:
    suite, _ = run(scenario("s1", "wrong-value", rules=["R-POST-4", "R-SNAP-1"]))
    [result] = suite.results
    assert result.status == "failed" and not suite.ok
    assert result.first_difference is not None
    assert (result.first_difference.where, result.first_difference.expected, result.first_difference.actual) == (
        "$.steps.c1.result.value",
        "1",
        "2",
    )
    explained = result.explain()
    assert "R-POST-4, R-SNAP-1" in explained and "$.steps.c1.result.value" in explained


def test_skipped_errored_and_raising_outcomes() -> None:
    suite, _ = run(scenario("a", "skip"), scenario("b", "error"), scenario("c", "raise"), scenario("orphan"))
    skipped, errored, raised, orphan = suite.results
    assert (skipped.status, skipped.message, skipped.issue_url) == (
        "skipped",
        "cannot express a set",
        "https://example.org/i/2",
    )
    assert errored.status == "errored" and errored.message == "unsupported hook" and "warning: x" in errored.explain()
    assert raised.status == "errored" and "the adapter broke" in raised.message
    assert orphan.status == "errored" and "no golden transcript" in orphan.message
    assert not suite.ok and suite.count("errored") == 3 and suite.count("skipped") == 1


def test_a_scenario_needing_an_undeclared_capability_is_skipped_unsent() -> None:
    suite, implementation = run(
        scenario("s1", requires=["wrappers"]), scenario("s2", requires=["wrappers", "mcp", "spill"])
    )
    assert implementation.ran == ["s1"]
    second = suite.results[1]
    assert second.status == "skipped" and second.message == "missing capability mcp, spill"
    assert second.missing_capabilities == ("mcp", "spill")
    assert suite.ok


def test_ignored_paths_let_host_specific_text_differ() -> None:
    suite, _ = run(scenario("s1", "wrong-value", ignore=["steps.c1.result.value"]))
    assert suite.results[0].status == "passed"


def test_a_baseline_excuses_known_failures_and_catches_stale_entries() -> None:
    known = Baseline.from_json(
        {
            "formatVersion": 1,
            "knownFailures": [
                {"scenario": "broken", "paths": ["$.steps.c1.result.value"]},
                {"scenario": "fixed"},
                {"scenario": "gone"},
            ],
        }
    )
    suite, _ = run(
        scenario("broken", "wrong-value"),
        scenario("fixed"),
        baseline=known,
        all_ids={"broken", "fixed", "elsewhere"},
    )
    broken, fixed = suite.results
    assert broken.baseline == "known-failure" and not broken.counts_as_failure
    assert fixed.baseline == "stale" and fixed.counts_as_failure
    assert [(p.scenario, p.kind) for p in suite.baseline_problems] == [("gone", "unknown-scenario")]
    assert not suite.ok
    only_known, _ = run(scenario("broken", "wrong-value"), baseline=known, all_ids={"broken", "fixed", "gone"})
    assert only_known.ok and only_known.known_failures == 1


def test_an_unlisted_failure_fails_despite_a_baseline() -> None:
    known = Baseline.from_json({"formatVersion": 1, "knownFailures": [{"scenario": "other"}]})
    suite, _ = run(scenario("s1", "wrong-value"), scenario("other", "wrong-value"), baseline=known)
    assert [r.counts_as_failure for r in suite.results] == [True, False]
    assert not suite.ok


def test_progress_is_reported_after_each_scenario() -> None:
    seen: list[tuple[int, int, str]] = []

    def progress(done: int, total: int, result: ScenarioResult) -> None:
        seen.append((done, total, result.status))

    run(scenario("a"), scenario("b", "wrong-value"), progress=progress)
    assert seen == [(1, 2, "passed"), (2, 2, "failed")]


def test_tallies_by_rule() -> None:
    suite, _ = run(
        scenario("a", rules=["R-X-2", "R-X-10"]),
        scenario("b", "wrong-value", rules=["R-X-10"]),
        scenario("c", "skip", rules=[]),
    )
    tallies = suite.by_rule()
    assert list(tallies) == ["R-X-2", "R-X-10", NO_RULE]
    assert (tallies["R-X-10"].passed, tallies["R-X-10"].failed, tallies["R-X-10"].ok) == (1, 1, False)
    assert tallies[NO_RULE].skipped == 1


def test_select_by_pattern_and_rule() -> None:
    scenarios = [scenario("post-accept", rules=["R-POST-1"]), scenario("snap-nan", rules=["R-SNAP-2"])]
    assert [s["id"] for s in select(scenarios, pattern="POST")] == ["post-accept"]
    assert [s["id"] for s in select(scenarios, rules=["R-SNAP-2"])] == ["snap-nan"]
    assert select(scenarios, pattern="post", rules=["R-SNAP-2"]) == []


def test_golden_directory(tmp_path: Path) -> None:
    (tmp_path / "s1.json").write_bytes(b"{}")
    lookup = golden_directory(tmp_path)
    assert lookup("s1") == b"{}" and lookup("s2") is None


class Hanging(Scripted):
    """Hangs on scenarios whose id starts with ``hang``; declares a misspelled capability."""

    def start(self) -> ImplementationInfo:
        return ImplementationInfo("hanging", "python", "1", ("wrappers", "nestd"))

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        if scenario["id"].startswith("hang"):
            time.sleep(5)
        if scenario["id"].startswith("noisy"):
            return Ran((GOLDEN % "another").replace("another", scenario["id"] + "-not"), stderr="warning: odd\n")
        if scenario["id"].startswith("deep"):
            context: dict[str, Any] = {"message": "deep"}
            for _ in range(100):
                context = {"inner": context}
            return Errored(context)
        return super().run(seq, scenario)


def test_an_in_process_hang_on_every_scenario_ends_the_run() -> None:
    warnings: list[str] = []
    implementation = InProcess(Hanging(), timeout=0.2)
    ids = ["hang1", "hang2", "hang3", "ok", "hang4"]
    suite = run_suite(implementation, [scenario(i) for i in ids], goldens, max_failures=2, warn=warnings.append)
    assert [result.context.get("kind") for result in suite.results] == ["timed-out"] * 2 + ["unresponsive"] * 3
    assert suite.unresponsive.startswith("the implementation is unresponsive: 2 scenarios in a row went unanswered")
    assert not suite.ok
    assert warnings == [
        "hanging declares an unknown capability 'nestd': the known ones are "
        + ", ".join(known_capabilities())
        + " (scenarios that require a misspelled capability are skipped)"
    ]


def test_skips_without_sending_do_not_end_a_streak_and_answers_do() -> None:
    ids = ["hang1", "needs-mcp", "hang2", "ok", "hang3"]
    scenarios = [scenario(i, requires=["mcp"] if i == "needs-mcp" else []) for i in ids]
    suite = run_suite(InProcess(Hanging(), timeout=0.2), scenarios, goldens, max_failures=2, warn=lambda _: None)
    statuses = [(result.status, result.context.get("kind")) for result in suite.results]
    assert statuses == [
        ("errored", "timed-out"),
        ("skipped", None),
        ("errored", "timed-out"),
        ("errored", "unresponsive"),
        ("errored", "unresponsive"),
    ]


def test_the_stderr_of_a_failing_transcript_is_shown() -> None:
    [result] = run_suite(InProcess(Hanging()), [scenario("noisy")], goldens, warn=lambda _: None).results
    assert result.status == "failed" and result.stderr == "warning: odd\n"
    assert result.explain().splitlines()[-2:] == ["--- stderr ---", "warning: odd"]


def test_an_errored_context_too_deep_for_a_report_is_an_invalid_outcome() -> None:
    [result] = run_suite(InProcess(Hanging()), [scenario("deep")], goldens, warn=lambda _: None).results
    assert result.status == "errored"
    assert result.context == {
        "kind": "invalid-outcome",
        "message": "Errored.context is nested deeper than 64 levels (or holds a cycle)",
    }


def test_judging_a_transcript_100000_levels_deep() -> None:
    deep = '{"formatVersion":1,"scenario":"s","steps":' + "[" * 100_000 + "]" * 100_000 + "}"
    assert judge({"id": "s"}, deep, deep.encode()).status == "passed"
    failed = judge({"id": "s"}, deep, (GOLDEN % "s").encode())
    assert failed.status == "failed" and failed.first_difference is not None
    assert failed.first_difference.where == "$.steps"
