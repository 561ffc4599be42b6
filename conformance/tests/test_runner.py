"""The runner: byte-exact judging, skips, errors, capabilities, baselines, progress."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolcontract_conformance.adapters.inprocess import InProcess
from toolcontract_conformance.baseline import Baseline
from toolcontract_conformance.implementation import Errored, ImplementationInfo, Outcome, Ran, Skipped
from toolcontract_conformance.runner import NO_RULE, ScenarioResult, golden_directory, run_suite, select

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
