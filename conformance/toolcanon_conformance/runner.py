"""Run scenarios against an implementation and judge each transcript against its golden, byte for byte.

A scenario *passes* when the implementation's transcript equals the golden transcript exactly; it *fails*
when the bytes differ (the result names the differing JSON paths, expected and actual, and the scenario's
rules); it is *errored* when the implementation or its adapter broke down (a crash, a hang, a garbage answer,
an exception, a missing golden); and it is *skipped* only when the implementation declines it, either by
answering ``skipped`` or because the scenario ``requires`` a capability the implementation did not declare
(then it is not even sent). A :class:`~toolcanon_conformance.baseline.Baseline` turns listed failures into
known ones and reports the entries that went stale.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path as FilePath
from typing import Any, Final, Literal, TypeAlias

from toolcanon_conformance.baseline import Baseline, BaselineProblem, Kind, Verdict
from toolcanon_conformance.diff import Difference, Path, parse_path
from toolcanon_conformance.golden_source import REFERENCE, golden_source_of
from toolcanon_conformance.implementation import (
    Errored,
    Implementation,
    ImplementationInfo,
    Ran,
    Skipped,
)
from toolcanon_conformance.optional import OptionalDifference, judge_bytes, optional_paths

__all__ = [
    "DEFAULT_MAX_FAILURES",
    "NO_RULE",
    "STATUSES",
    "UNANSWERED_KINDS",
    "GoldenLookup",
    "Progress",
    "RuleTally",
    "ScenarioResult",
    "Status",
    "SuiteResult",
    "Watchdog",
    "apply_baseline",
    "capability_warning",
    "golden_directory",
    "judge",
    "rule_sort_key",
    "run_scenario",
    "run_suite",
    "select",
]

Status: TypeAlias = Literal["passed", "failed", "errored", "skipped"]
STATUSES: tuple[Status, ...] = ("passed", "failed", "errored", "skipped")

#: The rule under which a scenario that names no rule is tallied.
NO_RULE = "(no rule)"

#: The golden transcript (bytes) of a scenario id, or ``None`` when there is none.
GoldenLookup: TypeAlias = Callable[[str], bytes | None]

#: Called after each scenario with (how many are done, how many in all, the scenario's result).
Progress: TypeAlias = Callable[[int, int, "ScenarioResult"], None]

#: The kinds of errored outcome in which the implementation gave no answer at all: it hung, it crashed, or it
#: could not be started again. Each costs up to a whole timeout.
UNANSWERED_KINDS: Final = frozenset({"timed-out", "crashed", "cannot-start"})

#: After this many unanswered scenarios in a row an implementation is declared unresponsive.
DEFAULT_MAX_FAILURES: Final = 3


def golden_directory(directory: str | FilePath) -> GoldenLookup:
    """The goldens kept as ``<directory>/<scenario id>.json``."""
    folder = FilePath(directory)

    def lookup(scenario_id: str) -> bytes | None:
        try:
            return (folder / f"{scenario_id}.json").read_bytes()
        except FileNotFoundError:
            return None

    return lookup


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    """The outcome of one scenario, judged.

    ``differences`` (failed only) lists where the transcript differs, the first difference first.
    ``message`` says why a scenario was skipped or errored; ``context`` is the errored outcome's context;
    ``missing_capabilities`` is set when the scenario was skipped without being sent. ``stderr`` is what the
    adapter wrote on its standard error while the scenario ran, kept for any scenario that did not pass.
    ``baseline`` is how a baseline judged it (``None`` without a baseline or when it does not list the scenario),
    ``baseline_kind`` the kind its entry names.
    ``golden_source`` is where the scenario's golden comes from (:mod:`~toolcanon_conformance.golden_source`).
    ``optional_differences`` (passed only) lists where the transcript differs at the scenario's ``optional``
    paths, which the contract leaves open (:mod:`~toolcanon_conformance.optional`).
    """

    scenario: str
    rules: tuple[str, ...]
    status: Status
    seconds: float = 0.0
    description: str = ""
    differences: tuple[Difference, ...] = ()
    message: str = ""
    issue_url: str | None = None
    context: Mapping[str, Any] = field(default_factory=dict)
    missing_capabilities: tuple[str, ...] = ()
    transcript: str | None = None
    baseline: Verdict | None = None
    baseline_note: str = ""
    stderr: str = ""
    golden_source: str = REFERENCE
    optional_differences: tuple[OptionalDifference, ...] = ()
    baseline_kind: Kind | None = None

    @property
    def counts_as_failure(self) -> bool:
        """True when this result fails the run (a baseline's known failure does not; a stale entry does)."""
        if self.baseline == "known-failure":
            return False
        return self.baseline == "stale" or self.status in ("failed", "errored")

    @property
    def first_difference(self) -> Difference | None:
        """The first place where the transcript differs, if it does."""
        return self.differences[0] if self.differences else None

    def explain(self) -> str:
        """A readable account of why the scenario did not pass (empty when it passed)."""
        rules = ", ".join(self.rules) or NO_RULE
        lines: list[str] = []
        if self.status == "failed":
            first = self.first_difference
            lines.append(f"{self.scenario} failed [{rules}]: the transcript differs from the golden")
            if first is not None:
                lines.append(str(first))
            if len(self.differences) > 1:
                lines.append(f"(and {len(self.differences) - 1} more difference(s))")
        elif self.status == "errored":
            lines.append(f"{self.scenario} errored [{rules}]: {self.message}")
        elif self.status == "skipped":
            lines.append(f"{self.scenario} skipped: {self.message}")
        if self.status != "passed" and self.stderr.strip():
            lines.append("--- stderr ---\n" + self.stderr.rstrip("\n"))
        trace = self.context.get("traceback")
        if self.status == "errored" and isinstance(trace, str) and trace.strip():
            lines.append(trace.rstrip("\n"))
        if self.baseline is not None:
            lines.append(f"baseline: {self.baseline}" + (f" ({self.baseline_note})" if self.baseline_note else ""))
        return "\n".join(lines)


@dataclass(slots=True)
class RuleTally:
    """How the scenarios exercising one rule ended."""

    passed: int = 0
    failed: int = 0
    errored: int = 0
    skipped: int = 0
    known: int = 0

    @property
    def ok(self) -> bool:
        """True when nothing under this rule fails the run."""
        return self.failed == 0 and self.errored == 0


@dataclass(frozen=True, slots=True)
class SuiteResult:
    """Every scenario's result for one implementation, and what is wrong with the baseline.

    ``unresponsive`` says why the run gave up on the implementation (empty when it did not): every scenario
    after that point is errored without being sent.
    """

    implementation: ImplementationInfo
    results: tuple[ScenarioResult, ...]
    baseline_problems: tuple[BaselineProblem, ...] = ()
    seconds: float = 0.0
    started: str = ""
    unresponsive: str = ""

    @property
    def ok(self) -> bool:
        """True only when every scenario passed, was skipped, or is a known failure, and no entry is stale."""
        return not self.baseline_problems and not any(result.counts_as_failure for result in self.results)

    def count(self, status: Status) -> int:
        """How many scenarios ended with ``status``."""
        return sum(1 for result in self.results if result.status == status)

    @property
    def known_failures(self) -> int:
        """How many failures the baseline lists."""
        return sum(1 for result in self.results if result.baseline == "known-failure")

    def by_rule(self) -> dict[str, RuleTally]:
        """A tally per rule id, in sorted order (a scenario counts under each of its rules)."""
        tallies: dict[str, RuleTally] = {}
        for result in self.results:
            for rule in result.rules or (NO_RULE,):
                tally = tallies.setdefault(rule, RuleTally())
                if result.baseline == "known-failure":
                    tally.known += 1
                elif result.baseline == "stale":
                    tally.failed += 1
                else:
                    setattr(tally, result.status, getattr(tally, result.status) + 1)
        return dict(sorted(tallies.items(), key=lambda item: rule_sort_key(item[0])))


@cache
def _contract_order() -> dict[str, int]:
    try:
        from toolcanon_conformance.rules import load_rules

        return {rule.id: index for index, rule in enumerate(load_rules())}
    except (ImportError, OSError, ValueError):
        return {}


def rule_sort_key(rule: str) -> tuple[bool, int, tuple[tuple[int, int, str], ...]]:
    """Rules in the order of ``docs/contract.md``, then unknown ids in natural order, then :data:`NO_RULE`."""
    order = _contract_order()
    parts = rule.split("-")
    natural = tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in parts)
    return rule == NO_RULE, order.get(rule, len(order)), natural


def _rules_of(scenario: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(rule) for rule in scenario.get("rules", ()))


def _ignored_paths(scenario: Mapping[str, Any]) -> tuple[Path, ...]:
    return tuple(parse_path(str(text)) for text in scenario.get("ignore", ()))


def judge(scenario: Mapping[str, Any], transcript: str, golden: bytes | None) -> ScenarioResult:
    """Compare one transcript with the golden of its scenario (byte for byte, minus ``ignore`` paths; a
    difference under an ``optional`` path is kept apart, and passes)."""
    scenario_id = str(scenario["id"])
    common: dict[str, Any] = {
        "rules": _rules_of(scenario),
        "description": str(scenario.get("description", "")),
        "transcript": transcript,
    }
    if golden is None:
        return ScenarioResult(
            scenario_id,
            status="errored",
            message=f"no golden transcript for {scenario_id}",
            context={"kind": "no-golden", "message": f"no golden transcript for {scenario_id}"},
            **common,
        )
    actual = transcript.encode("utf-8", errors="surrogatepass")
    differences, optional = judge_bytes(golden, actual, _ignored_paths(scenario), optional_paths(scenario))
    if not differences:
        return ScenarioResult(scenario_id, status="passed", optional_differences=optional, **common)
    return ScenarioResult(scenario_id, status="failed", differences=differences, **common)


def _missing_capabilities(scenario: Mapping[str, Any], info: ImplementationInfo) -> tuple[str, ...]:
    return tuple(str(c) for c in scenario.get("requires", ()) if c not in info.capabilities)


def run_scenario(
    implementation: Implementation,
    info: ImplementationInfo,
    seq: int,
    scenario: Mapping[str, Any],
    golden: bytes | None,
) -> ScenarioResult:
    """Run one scenario on a started implementation and judge its outcome (no baseline)."""
    began = time.perf_counter()
    scenario_id = str(scenario["id"])
    rules = _rules_of(scenario)
    description = str(scenario.get("description", ""))
    missing = _missing_capabilities(scenario, info)
    if missing:
        return ScenarioResult(
            scenario_id,
            rules,
            "skipped",
            description=description,
            message="missing capability " + ", ".join(missing),
            missing_capabilities=missing,
        )
    outcome = implementation.run(seq, dict(scenario))
    seconds = time.perf_counter() - began
    if isinstance(outcome, Ran):
        result = judge(scenario, outcome.transcript, golden)
        return replace(result, seconds=seconds, stderr="" if result.status == "passed" else outcome.stderr)
    if isinstance(outcome, Skipped):
        return ScenarioResult(
            scenario_id,
            rules,
            "skipped",
            seconds,
            description,
            message=outcome.message,
            issue_url=outcome.issue_url,
            stderr=outcome.stderr,
        )
    if isinstance(outcome, Errored):
        context = dict(outcome.context)
        message = str(context.get("message") or context.get("kind") or "errored without a message")
        stderr = context.get("stderr")
        return ScenarioResult(
            scenario_id,
            rules,
            "errored",
            seconds,
            description,
            message=message,
            context=context,
            stderr=stderr if isinstance(stderr, str) else "",
        )
    return ScenarioResult(
        scenario_id,
        rules,
        "errored",
        seconds,
        description,
        message=f"run returned {type(outcome).__name__}, not an outcome",
    )


def apply_baseline(result: ScenarioResult, baseline: Baseline | None) -> ScenarioResult:
    """``result`` as the baseline judges it."""
    if baseline is None:
        return result
    verdict, note = baseline.judge(result.scenario, result.status, result.differences)
    if verdict is None:
        return result
    return replace(result, baseline=verdict, baseline_note=note, baseline_kind=baseline.entries[result.scenario].kind)


@dataclass
class Watchdog:
    """Declares an implementation unresponsive once ``max_failures`` scenarios in a row went unanswered.

    Unanswered means errored with a kind of :data:`UNANSWERED_KINDS` (timed out, crashed, not restartable);
    any other outcome of a scenario that was sent ends the streak. ``max_failures`` 0 never gives up. Once
    ``unresponsive`` is set, :meth:`not_run` is the result of every scenario that follows (:meth:`gives_up_on`):
    a hang on every scenario costs ``max_failures`` timeouts, not one per scenario.
    """

    max_failures: int = DEFAULT_MAX_FAILURES
    streak: int = 0
    #: Why the implementation was declared unresponsive (empty until it is).
    unresponsive: str = ""

    def record(self, result: ScenarioResult) -> None:
        """Count one judged scenario."""
        if result.status == "errored" and result.context.get("kind") in UNANSWERED_KINDS:
            self.streak += 1
            if self.max_failures and self.streak >= self.max_failures and not self.unresponsive:
                self.unresponsive = (
                    f"the implementation is unresponsive: {self.streak} scenarios in a row went unanswered "
                    f"(timed out or crashed), the last {result.scenario}: {(result.message.splitlines() or [''])[0]}"
                )
        elif not result.missing_capabilities:
            self.streak = 0

    def gives_up_on(self, scenario: Mapping[str, Any], info: ImplementationInfo) -> bool:
        """Whether ``scenario`` is not to be sent: the implementation is unresponsive (a scenario it lacks a
        capability for is skipped all the same)."""
        return bool(self.unresponsive) and not _missing_capabilities(scenario, info)

    def not_run(self, scenario: Mapping[str, Any]) -> ScenarioResult:
        """The result of a scenario not sent to an unresponsive implementation."""
        message = "not run: " + self.unresponsive
        return ScenarioResult(
            str(scenario["id"]),
            _rules_of(scenario),
            "errored",
            description=str(scenario.get("description", "")),
            message=message,
            context={"kind": "unresponsive", "message": message},
        )


def capability_warning(info: ImplementationInfo) -> str | None:
    """A warning naming the capabilities ``info`` declares that the scenario format does not know, if any."""
    from toolcanon_conformance.protocol import unknown_capabilities, unknown_capabilities_message

    unknown = unknown_capabilities(info.capabilities)
    if not unknown:
        return None
    return (
        f"{info.name} declares an {unknown_capabilities_message(unknown)} "
        "(scenarios that require a misspelled capability are skipped)"
    )


def _warn_on_stderr(message: str) -> None:
    print(f"toolcanon: warning: {message}", file=sys.stderr)


def run_suite(
    implementation: Implementation,
    scenarios: Sequence[Mapping[str, Any]],
    goldens: GoldenLookup,
    *,
    baseline: Baseline | None = None,
    all_ids: Collection[str] | None = None,
    progress: Progress | None = None,
    max_failures: int = DEFAULT_MAX_FAILURES,
    warn: Callable[[str], None] = _warn_on_stderr,
) -> SuiteResult:
    """Start ``implementation``, run ``scenarios`` in order, stop it, and return every judged result.

    ``all_ids`` is the id of every scenario there is (the run may be a selection), against which the
    baseline's ids are checked. Failing to start raises the adapter's
    :class:`~toolcanon_conformance.exceptions.AdapterError`. After ``max_failures`` unanswered scenarios in
    a row (0: never) the implementation is declared unresponsive and the rest are errored unsent
    (:class:`Watchdog`). ``warn`` receives a warning for capability names the scenario format does not know.
    """
    started = datetime.now(UTC).isoformat(timespec="seconds")
    began = time.perf_counter()
    info = implementation.start()
    warning = capability_warning(info)
    if warning is not None:
        warn(warning)
    watchdog = Watchdog(max_failures)
    results: list[ScenarioResult] = []
    try:
        for seq, scenario in enumerate(scenarios):
            if watchdog.gives_up_on(scenario, info):
                result = watchdog.not_run(scenario)
            else:
                result = run_scenario(implementation, info, seq, scenario, goldens(str(scenario["id"])))
                watchdog.record(result)
            result = apply_baseline(replace(result, golden_source=golden_source_of(scenario)), baseline)
            results.append(result)
            if progress is not None:
                progress(len(results), len(scenarios), result)
    finally:
        implementation.stop()
    problems: list[BaselineProblem] = []
    if baseline is not None:
        known = set(all_ids) if all_ids is not None else {str(s["id"]) for s in scenarios}
        problems = baseline.unknown_scenarios(known)
    return SuiteResult(
        info, tuple(results), tuple(problems), time.perf_counter() - began, started, watchdog.unresponsive
    )


def select(
    scenarios: Iterable[Mapping[str, Any]],
    *,
    pattern: str | None = None,
    rules: Collection[str] = (),
) -> list[Mapping[str, Any]]:
    """The scenarios whose id contains ``pattern`` (case-insensitive) and that exercise one of ``rules``."""
    chosen: list[Mapping[str, Any]] = []
    for scenario in scenarios:
        if pattern and pattern.lower() not in str(scenario["id"]).lower():
            continue
        if rules and not set(_rules_of(scenario)) & set(rules):
            continue
        chosen.append(scenario)
    return chosen
