"""Conformance reports: the machine form (JSON, with a schema), Markdown, and one self-contained HTML page.

:func:`report_json` turns the runs of one check, one :class:`Run` per implementation, into the JSON report
(``schemas/report.schema.json``, format version 2) and judges each run's verdict. The other forms are written
from that JSON alone, so a saved report can be rendered again later (``toolcanon report FILE --format
md|html``); :func:`read_report` also reads a report of format version 1 (one implementation).

Markdown and HTML put what fails first: the verdict, a summary of every failure and error (in the HTML each
links to its account), then those accounts, each with the command that runs its scenario again alone
(:func:`repro_command`), the scenario's and the golden's files, and every difference kept (the region where
long texts part, with its offsets); then the rules grouped by the contract's sections, one column per
implementation; then known failures, skips (with their reason and issue link), the optional differences
(passed scenarios that differ only where the contract leaves the bytes open) and the run's metadata. With
several implementations a table by scenario puts them side by side where they do not all pass. Every form
says how many scenarios have a golden from each source (:mod:`~toolcanon_conformance.golden_source`),
carries what the adapter wrote on standard error while a scenario that did not pass ran (HTML: a collapsed
block), and any string the contract allows: lone surrogates come out as ``\\ud800`` escapes
(:func:`~toolcanon_conformance.display.visible`).
"""

from __future__ import annotations

import html
import json
import os
import re
import shlex
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from typing import Any, Literal, TypeAlias

from toolcanon_conformance._schemas import load_schema, schema_errors
from toolcanon_conformance.display import Excerpt, excerpts, first_difference, visible
from toolcanon_conformance.golden_source import REFERENCE, count_sources, sources_text
from toolcanon_conformance.protocol import PROTOCOL_VERSION, info_to_wire
from toolcanon_conformance.runner import NO_RULE, ScenarioResult, SuiteResult, rule_sort_key

__all__ = [
    "REPORT_FORMAT_VERSION",
    "Invocation",
    "Policy",
    "ReportError",
    "ReportFormat",
    "Run",
    "VerdictKind",
    "golden_sources_line",
    "read_report",
    "render",
    "report_html",
    "report_json",
    "report_markdown",
    "report_schema",
    "repro_command",
    "run_json",
    "validate_report",
    "verdict_line",
]

REPORT_FORMAT_VERSION = 2
ReportFormat: TypeAlias = Literal["json", "md", "html", "trend"]
VerdictKind: TypeAlias = Literal["pass", "fail", "nothing-passed", "interrupted"]

_DIFFERENCES_KEPT = 20
_SCHEMAS = {1: "report-v1.schema.json", 2: "report.schema.json"}
_VERDICT_LABELS: dict[str, str] = {
    "pass": "PASS",
    "fail": "FAIL",
    "nothing-passed": "NOTHING PASSED",
    "interrupted": "INTERRUPTED",
}


class ReportError(ValueError):
    """A JSON report that follows neither ``schemas/report.schema.json`` nor the format version 1 schema."""


@dataclass(frozen=True, slots=True)
class Policy:
    """What a check requires of every implementation besides the scenarios.

    ``require``: capabilities each must declare (a run of one that does not fails). ``fail_on_skip``: a
    skipped scenario fails the run.
    """

    require: tuple[str, ...] = ()
    fail_on_skip: bool = False


@dataclass(frozen=True, slots=True)
class Invocation:
    """How a check ran, as far as running one of its scenarios again alone needs it.

    ``directory`` is the working directory (the command line's relative paths are relative to it);
    ``scenarios_dir`` and ``goldens_dir`` are ``--scenarios`` and ``--goldens`` as given (``None``: the kit's
    own); ``options`` the other options, as given, that bear on how a scenario runs (``("--timeout", "5")``).
    ``scenario_files`` maps each scenario id to its file, and ``goldens`` is the folder the goldens were read
    from (``<goldens>/<id>.json``).
    """

    directory: str
    scenarios_dir: str | None = None
    goldens_dir: str | None = None
    options: tuple[str, ...] = ()
    scenario_files: Mapping[str, str] = field(default_factory=dict)
    goldens: str | None = None


@dataclass(frozen=True, slots=True)
class Run:
    """One implementation's run as the report shows it.

    ``selected_by`` is the command-line option and value that named the implementation (``("--impl-cmd",
    "node adapter.mjs")``), ``baseline_file`` the baseline it was judged with, ``selected`` how many scenarios
    were to run (default: all of ``suite.results``; more when the run was interrupted), ``invocation`` how the
    check ran (what :func:`repro_command` needs besides the implementation and baseline).
    """

    suite: SuiteResult
    selected_by: tuple[str, str] | None = None
    baseline_file: str | None = None
    selected: int | None = None
    invocation: Invocation | None = None

    @property
    def partial(self) -> bool:
        """True when fewer scenarios finished than were selected."""
        return self.selected is not None and self.selected > len(self.suite.results)


def report_schema() -> dict[str, Any]:
    """The JSON Schema of a JSON report (format version 2)."""
    return load_schema("report.schema.json")


def validate_report(report: Any) -> None:
    """Raise :class:`ReportError` listing every violation of the report schema of its format version."""
    version = report.get("formatVersion") if isinstance(report, dict) else None
    schema = _SCHEMAS.get(version, "report.schema.json") if isinstance(version, int) else "report.schema.json"
    errors = schema_errors(schema, report)
    if errors:
        raise ReportError("not a conformance report: " + "; ".join(errors[:10]))


def read_report(report: Any) -> dict[str, Any]:
    """A parsed JSON report, checked, in the current format (a format version 1 report is converted)."""
    validate_report(report)
    if report["formatVersion"] == 2:
        return dict(report)
    return _upgrade_v1(report)


def _upgrade_v1(old: dict[str, Any]) -> dict[str, Any]:
    """A format version 1 report (one implementation) as format version 2, its verdict judged again."""
    run: dict[str, Any] = {
        "implementation": old["implementation"],
        "started": old["started"],
        "seconds": old["seconds"],
        "selected": len(old["scenarios"]),
        "rules": old["rules"],
        "scenarios": old["scenarios"],
        "baselineProblems": old["baselineProblems"],
    }
    return _assemble([run], Policy(), kit=old["kit"])


def _kit_version() -> str:
    try:
        return metadata.version("toolcanon-conformance")
    except metadata.PackageNotFoundError:
        return "unknown"


# --- the JSON report -------------------------------------------------------------------------------------


def _scenario_json(result: ScenarioResult, invocation: Invocation | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": result.scenario,
        "description": result.description,
        "rules": list(result.rules),
        "status": result.status,
        "seconds": round(result.seconds, 6),
        "goldenSource": result.golden_source,
    }
    if invocation is not None:
        scenario_file = invocation.scenario_files.get(result.scenario)
        if scenario_file is not None:
            entry["scenarioFile"] = scenario_file
        if invocation.goldens is not None:
            entry["goldenFile"] = os.path.join(invocation.goldens, f"{result.scenario}.json")
    if result.status == "failed":
        entry["differences"] = [
            {
                "path": difference.where,
                "kind": difference.kind,
                "expected": difference.expected,
                "actual": difference.actual,
                "detail": difference.detail,
            }
            for difference in result.differences[:_DIFFERENCES_KEPT]
        ]
        entry["differenceCount"] = len(result.differences)
    if result.optional_differences:
        entry["optionalDifferences"] = [
            {
                "path": found.difference.where,
                "kind": found.difference.kind,
                "expected": found.difference.expected,
                "actual": found.difference.actual,
                "detail": found.difference.detail,
                "optionalPath": found.optional.where,
                "why": found.optional.why,
            }
            for found in result.optional_differences[:_DIFFERENCES_KEPT]
        ]
        entry["optionalDifferenceCount"] = len(result.optional_differences)
    if result.message:
        entry["message"] = result.message
    if result.issue_url is not None:
        entry["issue_url"] = result.issue_url
    if result.missing_capabilities:
        entry["missingCapabilities"] = list(result.missing_capabilities)
    if result.status == "errored":
        entry["context"] = json.loads(json.dumps(dict(result.context), default=repr))
    if result.status != "passed" and result.stderr:
        entry["stderr"] = result.stderr
    if result.baseline is not None:
        entry["baseline"] = {"verdict": result.baseline, "note": result.baseline_note}
        if result.baseline_kind is not None:
            entry["baseline"]["kind"] = result.baseline_kind
    entry["countsAsFailure"] = result.counts_as_failure
    return entry


def _outcome(scenario: dict[str, Any]) -> str:
    """The class a scenario shows as: its status, or the baseline's view of it (a known failure of kind
    ``predates``, a release older than what its rule requires, shows as ``predates``)."""
    baseline = scenario.get("baseline", {})
    verdict = baseline.get("verdict")
    if verdict == "known-failure":
        return "predates" if baseline.get("kind") == "predates" else "known"
    if verdict == "stale":
        return "stale"
    return str(scenario["status"])


def _summary(scenarios: list[dict[str, Any]], baseline_problems: list[Any]) -> dict[str, int]:
    outcomes = Counter(_outcome(scenario) for scenario in scenarios)
    return {
        "total": len(scenarios),
        "passed": outcomes["passed"],
        "failed": outcomes["failed"],
        "errored": outcomes["errored"],
        "skipped": outcomes["skipped"],
        "knownFailures": outcomes["known"] + outcomes["predates"],
        "stale": outcomes["stale"],
        "baselineProblems": len(baseline_problems),
        "optional": len(_optional_scenarios(scenarios)),
    }


def _optional_scenarios(scenarios: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """The scenarios (with their index) that passed with optional differences."""
    return [(index, scenario) for index, scenario in enumerate(scenarios) if scenario.get("optionalDifferences")]


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else many or one + 's'}"


def _judge(run: dict[str, Any], policy: Policy) -> tuple[VerdictKind, list[str]]:
    """The verdict of one run and what its line says in parentheses."""
    summary = run["summary"]
    if summary["total"] < run["selected"]:
        return "interrupted", [f"after {summary['total']} of {run['selected']} scenarios"]
    capabilities = run["implementation"]["capabilities"]
    reasons: list[str] = []
    missing = [capability for capability in policy.require if capability not in capabilities]
    if missing:
        noun = "capability" if len(missing) == 1 else "capabilities"
        reasons.append(f"does not declare the required {noun} {', '.join(missing)}")
    if policy.fail_on_skip and summary["skipped"]:
        reasons.append(f"{summary['skipped']} skipped, with --fail-on-skip")
    if summary["baselineProblems"]:
        reasons.append(_plural(summary["baselineProblems"], "baseline problem"))
    if summary["stale"]:
        # Said in the line: a FAIL whose counts show nothing failed would read as a contradiction.
        reasons.append(_plural(summary["stale"], "stale baseline entry", "stale baseline entries"))
    if reasons or summary["failed"] or summary["errored"] or summary["stale"]:
        return "fail", reasons
    if summary["passed"] == 0:
        return "nothing-passed", ["it declares no capability"] if not capabilities and summary["skipped"] else []
    known = summary["knownFailures"]
    return "pass", [f"{_plural(known, 'known failure')} excused by the baseline"] if known else []


def run_json(run: Run | SuiteResult, policy: Policy = Policy()) -> dict[str, Any]:
    """One implementation's entry of the JSON report, its verdict judged under ``policy``."""
    if isinstance(run, SuiteResult):
        run = Run(run)
    suite = run.suite
    scenarios_by_rule: dict[str, list[str]] = {}
    for result in suite.results:
        for rule in result.rules or (NO_RULE,):
            scenarios_by_rule.setdefault(rule, []).append(result.scenario)
    entry: dict[str, Any] = {"implementation": info_to_wire(suite.implementation)}
    if run.selected_by is not None:
        entry["selectedBy"] = {"option": run.selected_by[0], "value": run.selected_by[1]}
    if run.baseline_file is not None:
        entry["baselineFile"] = run.baseline_file
    invocation = run.invocation
    if invocation is not None:
        entry["workingDirectory"] = invocation.directory
        if invocation.scenarios_dir is not None:
            entry["scenariosDir"] = invocation.scenarios_dir
        if invocation.goldens_dir is not None:
            entry["goldensDir"] = invocation.goldens_dir
        if invocation.options:
            entry["runOptions"] = list(invocation.options)
    entry |= {
        "started": suite.started,
        "seconds": round(suite.seconds, 6),
        "selected": len(suite.results) if run.selected is None else run.selected,
        "rules": [
            {
                "rule": rule,
                "passed": tally.passed,
                "failed": tally.failed,
                "errored": tally.errored,
                "skipped": tally.skipped,
                "known": tally.known,
                "scenarios": scenarios_by_rule.get(rule, []),
            }
            for rule, tally in suite.by_rule().items()
        ],
        "scenarios": [_scenario_json(result, invocation) for result in suite.results],
        "baselineProblems": [
            {"scenario": problem.scenario, "kind": problem.kind, "message": problem.message}
            for problem in suite.baseline_problems
        ],
    }
    return _judged(entry, policy)


def _golden_sources(scenarios: list[dict[str, Any]]) -> dict[str, int]:
    """How many of the scenarios have a golden from each source (a report without sources: the reference)."""
    return count_sources(scenario.get("goldenSource", REFERENCE) for scenario in scenarios)


def _judged(entry: dict[str, Any], policy: Policy) -> dict[str, Any]:
    """``entry`` with its summary, golden sources, verdict and ok, in the schema's key order."""
    entry = dict(entry)
    entry["summary"] = _summary(entry["scenarios"], entry["baselineProblems"])
    entry["goldenSources"] = _golden_sources(entry["scenarios"])
    verdict, reasons = _judge(entry, policy)
    order = ["implementation", "selectedBy", "baselineFile", "workingDirectory", "scenariosDir", "goldensDir"]
    order += [
        "runOptions",
        "started",
        "seconds",
        "ok",
        "verdict",
        "verdictReasons",
        "selected",
        "summary",
        "goldenSources",
        "rules",
        "scenarios",
        "baselineProblems",
    ]
    entry |= {"ok": verdict == "pass", "verdict": verdict, "verdictReasons": reasons}
    return {key: entry[key] for key in order if key in entry}


def report_json(
    runs: Run | SuiteResult | Sequence[Run | SuiteResult],
    *,
    policy: Policy = Policy(),
    not_run: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    """The JSON report of a check: one entry per run, in order (``schemas/report.schema.json``).

    ``not_run`` names the implementations an interrupted check never reached (option, value).
    """
    chosen = [runs] if isinstance(runs, Run | SuiteResult) else list(runs)
    entries = [run_json(run, policy) for run in chosen]
    return _assemble(entries, policy, not_run=not_run)


def _assemble(
    entries: list[dict[str, Any]],
    policy: Policy,
    *,
    kit: dict[str, Any] | None = None,
    not_run: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    judged = [_judged(entry, policy) for entry in entries]
    partial = bool(not_run) or any(entry["verdict"] == "interrupted" for entry in judged)
    report: dict[str, Any] = {
        "formatVersion": REPORT_FORMAT_VERSION,
        "kit": kit or {"name": "toolcanon", "version": _kit_version(), "protocolVersion": PROTOCOL_VERSION},
        "started": judged[0]["started"] if judged else "",
        "seconds": round(sum(entry["seconds"] for entry in judged), 6),
        "ok": bool(judged) and not partial and all(entry["ok"] for entry in judged),
        "partial": partial,
    }
    if not_run:
        report["notRun"] = [{"option": option, "value": value} for option, value in not_run]
    report["policy"] = {"require": list(policy.require), "failOnSkip": policy.fail_on_skip}
    report["implementations"] = judged
    return report


def render(report: dict[str, Any], form: ReportFormat) -> str:
    """The report written in ``form`` (the JSON form is indented, with a final newline)."""
    if form == "json":
        return visible(json.dumps(report, indent=2, ensure_ascii=False)) + "\n"
    if form == "md":
        return report_markdown(report)
    if form == "trend":
        from toolcanon_conformance.trend import trend_text

        return trend_text(report)
    return report_html(report)


# --- shared wording --------------------------------------------------------------------------------------


def verdict_line(run: dict[str, Any]) -> str:
    """``PASS (1 known failure excused by the baseline): 160 passed, … of 161 scenarios in 1.20 s``."""
    summary = run["summary"]
    counts = [f"{summary[key]} {key}" for key in ("passed", "failed", "errored", "skipped")]
    if summary["knownFailures"]:
        counts.append(f"{summary['knownFailures']} known")
    if summary["stale"]:
        counts.append(f"{summary['stale']} stale")
    reasons = f" ({'; '.join(run['verdictReasons'])})" if run["verdictReasons"] else ""
    return (
        f"{_VERDICT_LABELS[run['verdict']]}{reasons}: {', '.join(counts)} "
        f"of {summary['total']} scenarios in {run['seconds']:.2f} s"
    )


def golden_sources_line(run: dict[str, Any]) -> str:
    """``goldens: reference: 168, typescript-dsh-tools: 9``: how many of the run's scenarios have a golden from each
    source."""
    return "goldens: " + (sources_text(_golden_sources(run["scenarios"])) or "none")


def repro_command(run: Mapping[str, Any], scenario_id: str) -> str | None:
    """The ``toolcanon check`` command line that runs one scenario of a run again, alone.

    It names the same implementation, baseline, ``--scenarios``, ``--goldens`` and options as the check did,
    and the scenario by ``--id``; it is meant for the run's ``workingDirectory``. ``None`` when the run does
    not say how its implementation was named (``selectedBy``: a report written without the command line).
    """
    chosen = run.get("selectedBy")
    if chosen is None:
        return None
    words = ["toolcanon", "check", chosen["option"], chosen["value"]]
    if "baselineFile" in run:
        words += ["--baseline", run["baselineFile"]]
    if "scenariosDir" in run:
        words += ["--scenarios", run["scenariosDir"]]
    if "goldensDir" in run:
        words += ["--goldens", run["goldensDir"]]
    words += [str(word) for word in run.get("runOptions", ())]
    return shlex.join([*words, "--id", scenario_id])


def _id_option(scenario_id: str) -> str:
    return shlex.join(["--id", scenario_id])


def _golden_note(scenario: dict[str, Any]) -> str:
    """`` — golden from <source>`` for a scenario whose golden is not the reference's, else empty."""
    source = scenario.get("goldenSource", REFERENCE)
    return "" if source == REFERENCE else f" — golden from {source}"


def _implementation_line(run: dict[str, Any]) -> str:
    implementation = run["implementation"]
    return f"{implementation['name']} {implementation['version']} ({implementation['language']})"


def _column(run: dict[str, Any], index: int) -> str:
    implementation = run["implementation"]
    return f"#{index + 1} {implementation['name']} {implementation['version']}"


def _selected_by(run: dict[str, Any]) -> str:
    chosen = run.get("selectedBy")
    return "" if chosen is None else f"{chosen['option']} {chosen['value']}"


def _side_by_side_ids(runs: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """Every scenario id of the runs, in run order, with its rules."""
    seen: dict[str, list[str]] = {}
    for run in runs:
        for scenario in run["scenarios"]:
            seen.setdefault(scenario["id"], scenario["rules"])
    return list(seen.items())


def _by_id(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {scenario["id"]: scenario for scenario in run["scenarios"]}


def _short(text: str, limit: int = 60) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _tally_outcome(tally: dict[str, Any]) -> str:
    if tally["failed"] or tally["errored"]:
        return "failed"
    if tally["known"]:
        return "known"
    if tally["skipped"] and not tally["passed"]:
        return "skipped"
    return "passed"


def _tally_text(tally: Mapping[str, Any]) -> str:
    """``✓ 3`` when every scenario passed, else ``✗ 1 failed, 2 passed`` and the like, what fails first."""
    keys = ("failed", "errored", "stale", "known", "predates", "skipped", "passed")
    if not any(tally.get(key, 0) for key in keys[:-1]):
        return f"✓ {tally['passed']}"
    mark = "✗ " if tally["failed"] or tally["errored"] or tally.get("stale", 0) else ""
    return mark + ", ".join(f"{tally[key]} {key}" for key in keys if tally.get(key, 0))


#: The groups a scenario that did not simply pass is shown in, in the order the reports show them; the first
#: three fail the run.
_GROUPS: tuple[tuple[str, str], ...] = (
    ("failed", "Failures"),
    ("errored", "Errors"),
    ("stale", "Stale baseline entries"),
    ("known", "Known failures, excused by the baseline"),
    ("skipped", "Skipped"),
)
_FAILING = ("failed", "errored", "stale")


def _group_of(scenario: dict[str, Any]) -> str | None:
    """The group a scenario is shown in (``None``: it passed, and no baseline entry names it)."""
    verdict = scenario.get("baseline", {}).get("verdict")
    if verdict == "known-failure":
        return "known"
    if scenario["status"] == "passed":
        return "stale" if verdict == "stale" else None
    return str(scenario["status"])


def _grouped(run: dict[str, Any]) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    """The scenarios of each group, each with its index in the run."""
    groups: dict[str, list[tuple[int, dict[str, Any]]]] = {key: [] for key, _ in _GROUPS}
    for index, scenario in enumerate(run["scenarios"]):
        group = _group_of(scenario)
        if group is not None:
            groups[group].append((index, scenario))
    return groups


def _failing_count(run: dict[str, Any]) -> int:
    groups = _grouped(run)
    return sum(len(groups[key]) for key in _FAILING) + len(run["baselineProblems"])


def _counts_phrase(run: dict[str, Any]) -> str:
    """``2 failures, 1 error``: what fails the run, counted (``nothing fails the run`` when nothing does)."""
    groups = _grouped(run)
    parts = [
        _plural(len(groups["failed"]), "failure"),
        _plural(len(groups["errored"]), "error"),
    ]
    if groups["stale"]:
        parts.append(_plural(len(groups["stale"]), "stale baseline entry", "stale baseline entries"))
    if run["baselineProblems"]:
        parts.append(_plural(len(run["baselineProblems"]), "baseline problem"))
    return ", ".join(parts)


def _summary_line(scenario: dict[str, Any]) -> tuple[str, str]:
    """What the summary says of a scenario that fails the run, after its id and rules: the first differing
    path (empty when it has none), and the words after it."""
    differences = scenario.get("differences") or []
    if scenario["status"] == "failed" and differences:
        first = differences[0]
        more = scenario.get("differenceCount", len(differences)) - 1
        return first["path"], f" ({first['kind']})" + (f" and {_plural(more, 'more difference')}" if more > 0 else "")
    if scenario["status"] == "passed":
        note = scenario["baseline"]["note"]
        return "", "stale baseline entry" + (f": {note}" if note else "")
    return "", _short(str(scenario.get("message", "")), 100)


def _is_web_link(url: str) -> bool:
    """Whether ``url`` may be written as a link: http or https only (an adapter writes it)."""
    return re.match(r"https?://[^\s<>\"']+\Z", url, re.IGNORECASE) is not None


_RULE_ID = re.compile(r"(R-[A-Z]+)-[0-9]+\Z")


@cache
def _contract() -> tuple[dict[str, tuple[int, str]], dict[str, str]]:
    """The contract's sections by rule id prefix (``R-REG``: place, ``R-REG — Registration``), and each rule's
    MUST sentence."""
    from toolcanon_conformance.rules import load_rules

    try:
        rules = load_rules()
    except (OSError, ValueError):
        return {}, {}
    sections: dict[str, tuple[int, str]] = {}
    for rule in rules:
        prefix = rule.id.rsplit("-", 1)[0]
        sections.setdefault(prefix, (len(sections), f"{prefix} — {rule.section}"))
    return sections, {rule.id: rule.text for rule in rules}


def _rule_sections(rules: Iterable[str]) -> list[tuple[str, str, list[str]]]:
    """The rules under the contract's sections: ``(slug, heading, rules)`` in the contract's order, a rule of
    no section of the contract under *Other rules*, and :data:`NO_RULE` last."""
    sections, _ = _contract()
    grouped: dict[tuple[int, int], tuple[str, str, list[str]]] = {}
    for rule in sorted(set(rules), key=rule_sort_key):
        match = _RULE_ID.match(rule)
        prefix = match.group(1) if match else ""
        if rule == NO_RULE:
            key, slug, heading = (2, 0), "none", "Scenarios that name no rule"
        elif prefix in sections:
            place, heading = sections[prefix]
            key, slug = (0, place), prefix
        else:
            key, slug, heading = (1, 0), "other", "Other rules"
        grouped.setdefault(key, (slug, heading, []))[2].append(rule)
    return [grouped[key] for key in sorted(grouped)]


def _section_counts(run: dict[str, Any], rules: list[str]) -> Counter[str]:
    """How many of the run's scenarios of these rules show each outcome (each scenario once)."""
    chosen = set(rules)
    return Counter(_outcome(scenario) for scenario in run["scenarios"] if chosen & set(scenario["rules"] or (NO_RULE,)))


def _implementation_rows(run: dict[str, Any]) -> list[tuple[str, str]]:
    implementation = run["implementation"]
    rows = [
        ("implementation", implementation["name"]),
        ("language", implementation["language"]),
        ("version", implementation["version"]),
        ("capabilities", ", ".join(implementation["capabilities"]) or "none"),
    ]
    rows += [(key, implementation[key]) for key in ("homepage", "issues") if key in implementation]
    if "selectedBy" in run:
        rows.append(("selected by", _selected_by(run)))
    if "baselineFile" in run:
        rows.append(("baseline", run["baselineFile"]))
    for key, label in (("workingDirectory", "run in"), ("scenariosDir", "scenarios"), ("goldensDir", "goldens dir")):
        if key in run:
            rows.append((label, run[key]))
    if run.get("runOptions"):
        rows.append(("options", shlex.join(run["runOptions"])))
    rows.append(("goldens", sources_text(_golden_sources(run["scenarios"]))))
    return rows


def _kit_rows(report: dict[str, Any]) -> list[tuple[str, str]]:
    kit = report["kit"]
    rows = [
        ("kit", f"{kit['name']} {kit['version']} (protocol version {kit['protocolVersion']})"),
        ("started", report["started"]),
        ("duration", f"{report['seconds']:.2f} s"),
    ]
    policy = report["policy"]
    if policy["require"]:
        rows.append(("required capabilities", ", ".join(policy["require"])))
    if policy["failOnSkip"]:
        rows.append(("skips", "a skipped scenario fails the run (--fail-on-skip)"))
    if report["partial"]:
        rows.append(("partial", "the check was interrupted"))
    rows += [("not run", f"{item['option']} {item['value']}") for item in report.get("notRun", ())]
    return rows


def _stderr(scenario: dict[str, Any]) -> str:
    """What the adapter wrote on standard error while the scenario ran, if anything but blanks."""
    stderr = str(scenario.get("stderr", ""))
    return stderr.rstrip("\n") if stderr.strip() else ""


# --- Markdown --------------------------------------------------------------------------------------------


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_code(text: str) -> str:
    text = text.replace("\n", "↵")
    fence = "`"
    while fence in text:
        fence += "`"
    padding = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def _md_table_code(text: str) -> str:
    return _md_code(text).replace("|", "\\|")


def _md_excerpt(excerpt: Excerpt | None) -> str:
    if excerpt is None:
        return _md_code("<nothing>")
    code = ("…" if excerpt.start > 0 else "") + _md_code(excerpt.text) + ("…" if excerpt.end < excerpt.length else "")
    return code + (f" ({excerpt.offsets})" if not excerpt.whole else "")


def _md_link(url: str) -> str:
    return f"<{url}>" if _is_web_link(url) else _md_code(url)


def report_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown, what fails first: headline and verdicts, a summary of what fails each run,
    those failures and errors in full, the table by rule (grouped by the contract's sections; with several
    implementations a table by scenario too), then known failures, skips and the run's metadata."""
    runs: list[dict[str, Any]] = report["implementations"]
    lines = _md_single(report, runs[0]) if len(runs) == 1 else _md_several(report, runs)
    return visible("\n".join(lines)) + "\n"


def _md_kit_lines(report: dict[str, Any]) -> list[str]:
    kit = report["kit"]
    lines = [f"- kit: {kit['name']} {kit['version']}, protocol version {kit['protocolVersion']}"]
    lines.append(f"- started: {report['started']}")
    policy = report["policy"]
    if policy["require"]:
        lines.append(f"- required capabilities: {', '.join(policy['require'])}")
    if policy["failOnSkip"]:
        lines.append("- a skipped scenario fails the run (--fail-on-skip)")
    if report["partial"]:
        lines.append("- **partial**: the check was interrupted")
    lines += [f"- not run: {_md_code(item['option'] + ' ' + item['value'])}" for item in report.get("notRun", ())]
    return lines


def _md_summary(run: dict[str, Any]) -> list[str]:
    """One line per scenario (and baseline problem) that fails the run."""
    if not _failing_count(run):
        return ["Nothing fails the run."]
    lines = [f"{_counts_phrase(run)}:", ""]
    groups = _grouped(run)
    for key in _FAILING:
        for _, scenario in groups[key]:
            rules = ", ".join(scenario["rules"]) or NO_RULE
            symbol = _SYMBOLS[_outcome(scenario)]
            path, words = _summary_line(scenario)
            lines.append(f"- {symbol} {_md_code(scenario['id'])} [{rules}]: {_md_code(path) if path else ''}{words}")
    lines += [f"- baseline problem: {_md_code(p['scenario'])} ({p['kind']})" for p in run["baselineProblems"]]
    return lines


def _md_single(report: dict[str, Any], run: dict[str, Any]) -> list[str]:
    lines = [f"# Conformance report: {_implementation_line(run)}", "", f"**{verdict_line(run)}**", ""]
    lines += _md_summary(run)
    lines += _md_groups(run, _FAILING, "##", problems=True)
    lines += ["", "## Rules, by contract section", ""]
    lines += ["| Rule | Passed | Failed | Errored | Skipped | Known |", "|---|--:|--:|--:|--:|--:|"]
    tallies = {tally["rule"]: tally for tally in run["rules"]}
    for _, heading, rules in _rule_sections(tallies):
        lines.append(f"| **{_md_cell(heading)}** | | | | | |")
        for rule in rules:
            counts = " | ".join(str(tallies[rule][key]) for key in ("passed", "failed", "errored", "skipped", "known"))
            lines.append(f"| {_md_cell(rule)} | {counts} |")
    lines += _md_groups(run, ("known", "skipped"), "##")
    lines += _md_optional(run, "##")
    lines += ["", "## About this run", "", *_md_implementation_lines(run), *_md_kit_lines(report)]
    return lines


def _md_implementation_lines(run: dict[str, Any]) -> list[str]:
    lines = []
    for key, value in _implementation_rows(run):
        if key in ("selected by", "baseline", "run in", "scenarios", "goldens dir", "options"):
            value = _md_code(value)
        if key not in ("implementation", "language", "version"):
            lines.append(f"- {key}: {value}")
    return lines


def _md_several(report: dict[str, Any], runs: list[dict[str, Any]]) -> list[str]:
    names = [_column(run, index) for index, run in enumerate(runs)]
    title = "no implementation" if not runs else ", ".join(_implementation_line(run) for run in runs)
    lines = [f"# Conformance report: {title}", ""]
    lines += [f"- **{_md_cell(name)}**: **{verdict_line(run)}**" for name, run in zip(names, runs, strict=True)]
    if not runs:
        return [*lines, *_md_kit_lines(report)]
    lines += ["", "## Summary"]
    for name, run in zip(names, runs, strict=True):
        lines += ["", f"**{_md_cell(name)}**: " + _md_summary(run)[0], *_md_summary(run)[1:]]
    for name, run in zip(names, runs, strict=True):
        details = _md_groups(run, _FAILING, "###", problems=True)
        if details:
            lines += ["", f"## {_md_cell(name)}: what fails the run", *details]
    lines += ["", "## Rules, by contract section", "", "| Rule | " + " | ".join(_md_cell(n) for n in names) + " |"]
    lines.append("|---" * (len(runs) + 1) + "|")
    tallies = [{tally["rule"]: tally for tally in run["rules"]} for run in runs]
    for _, heading, rules in _rule_sections(rule for by_rule in tallies for rule in by_rule):
        lines.append(f"| **{_md_cell(heading)}** |" + " |" * len(runs))
        for rule in rules:
            cells = [_tally_text(by_rule[rule]) if rule in by_rule else "" for by_rule in tallies]
            lines.append(f"| {_md_cell(rule)} | " + " | ".join(cells) + " |")
    lines += _md_scenario_table(runs, names)
    for name, run in zip(names, runs, strict=True):
        details = _md_groups(run, ("known", "skipped"), "###")
        if details:
            lines += ["", f"## {_md_cell(name)}: known failures and skips", *details]
    for name, run in zip(names, runs, strict=True):
        details = _md_optional(run, "###")
        if details:
            lines += ["", f"## {_md_cell(name)}: optional differences", *details]
    lines += ["", "## About this check", "", "| | " + " | ".join(_md_cell(name) for name in names) + " |"]
    lines.append("|---" * (len(runs) + 1) + "|")
    rows: list[tuple[str, list[str]]] = [
        ("verdict", [_VERDICT_LABELS[run["verdict"]] for run in runs]),
        ("language", [run["implementation"]["language"] for run in runs]),
        ("capabilities", [", ".join(run["implementation"]["capabilities"]) or "none" for run in runs]),
        ("selected by", [_md_table_code(_selected_by(run)) if "selectedBy" in run else "" for run in runs]),
        ("baseline", [_md_table_code(run["baselineFile"]) if "baselineFile" in run else "none" for run in runs]),
        ("seconds", [f"{run['seconds']:.2f}" for run in runs]),
        ("goldens", [sources_text(_golden_sources(run["scenarios"])) for run in runs]),
    ]
    for label, cells in rows:
        lines.append(f"| {label} | " + " | ".join(cell.replace("\n", " ") for cell in cells) + " |")
    return [*lines, "", *_md_kit_lines(report)]


def _md_scenario_table(runs: list[dict[str, Any]], names: list[str]) -> list[str]:
    """The scenarios that not every implementation passed, one column per implementation."""
    by_ids = [_by_id(run) for run in runs]
    every = _side_by_side_ids(runs)
    shown = [(sid, rules) for sid, rules in every if not _passed_everywhere(sid, by_ids)]
    lines = ["", "## By scenario, where the implementations do not all pass", ""]
    if not shown:
        return [*lines, f"Every implementation passed all {len(every)} scenarios."]
    lines.append("| Scenario | Rules | " + " | ".join(_md_cell(name) for name in names) + " |")
    lines.append("|---" * (len(runs) + 2) + "|")
    for scenario_id, scenario_rules in shown:
        cells = [_md_outcome_cell(by_id.get(scenario_id)) for by_id in by_ids]
        rules_text = _md_cell(", ".join(scenario_rules) or NO_RULE)
        lines.append(f"| {_md_table_code(scenario_id)} | {rules_text} | " + " | ".join(cells) + " |")
    passed = len(every) - len(shown)
    if passed:
        lines += ["", f"{_plural(passed, 'scenario')} passed by every implementation not listed."]
    return lines


def _passed_everywhere(scenario_id: str, by_ids: list[dict[str, dict[str, Any]]]) -> bool:
    return all(scenario_id in by_id and _outcome(by_id[scenario_id]) == "passed" for by_id in by_ids)


def _md_outcome_cell(scenario: dict[str, Any] | None) -> str:
    if scenario is None:
        return "not run"
    outcome = _outcome(scenario)
    symbol = _SYMBOLS[outcome]
    if outcome == "passed":
        return symbol
    differences = scenario.get("differences") or []
    if differences:
        first = differences[0]
        text = f"{symbol} {_md_table_code(first['path'])} ({first['kind']})"
        expected, actual = first["expected"], first["actual"]
        if expected is not None and actual is not None and len(expected) <= 24 and len(actual) <= 24:
            text += f": {_md_table_code(expected)} → {_md_table_code(actual)}"
        return text
    if outcome == "stale":
        return f"{symbol} stale baseline entry"
    return f"{symbol} {outcome}: {_md_cell(_short(scenario.get('message', '')))}"


def _md_groups(run: dict[str, Any], keys: Sequence[str], level: str, *, problems: bool = False) -> list[str]:
    lines: list[str] = []
    groups = _grouped(run)
    titles = dict(_GROUPS)
    for key in keys:
        if groups[key]:
            lines += ["", f"{level} {titles[key]} ({len(groups[key])})", ""]
            for _, scenario in groups[key]:
                lines += _md_scenario(run, scenario)
    if problems and run["baselineProblems"]:
        lines += ["", f"{level} Baseline problems", ""]
        lines += [f"- {_md_code(p['scenario'])} ({p['kind']}): {p['message']}" for p in run["baselineProblems"]]
    return lines


_OPTIONAL_NOTE = (
    "Passed scenarios that differ only at their scenario's `optional` paths, where the contract leaves the bytes "
    "open; they do not fail the run."
)


def _md_optional(run: dict[str, Any], level: str) -> list[str]:
    """The optional differences of each scenario that passed with some, and why its scenario leaves them open."""
    optional = _optional_scenarios(run["scenarios"])
    if not optional:
        return []
    lines = ["", f"{level} Optional differences ({len(optional)})", "", _OPTIONAL_NOTE, ""]
    for _, scenario in optional:
        differences = scenario["optionalDifferences"]
        count = scenario.get("optionalDifferenceCount", len(differences))
        rules = ", ".join(scenario["rules"]) or "no rule"
        lines.append(f"- {_md_code(scenario['id'])} [{rules}]: {_plural(count, 'optional difference')}")
        for difference in differences:
            detail = f", {difference['detail']}" if difference["detail"] else ""
            expected, actual = excerpts(difference["expected"], difference["actual"])
            lines.append(
                f"  - at {_md_code(difference['path'])} ({difference['kind']}{detail}): expected "
                f"{_md_excerpt(expected)}, actual {_md_excerpt(actual)}"
            )
        if count > len(differences):
            lines.append(f"  - {_plural(count - len(differences), 'more difference')}, not kept in the report")
        lines += [f"  - why: {why}" for why in dict.fromkeys(difference["why"] for difference in differences)]
    return lines


def _md_scenario(run: dict[str, Any], scenario: dict[str, Any]) -> list[str]:
    rules = ", ".join(scenario["rules"]) or "no rule"
    head = f"- {_md_code(scenario['id'])} [{rules}]{_golden_note(scenario)}"
    baseline = scenario.get("baseline")
    if baseline is not None:
        head += f" — baseline: {baseline['verdict']}" + (f", {baseline['kind']}" if "kind" in baseline else "")
        head += f" ({baseline['note']})" if baseline["note"] else ""
    lines = [head]
    if scenario["status"] != "skipped":
        lines += _md_facts(run, scenario)
    if scenario["status"] == "failed" and scenario.get("differences"):
        differences = scenario["differences"]
        count = scenario.get("differenceCount", len(differences))
        for number, difference in enumerate(differences, start=1):
            detail = f", {difference['detail']}" if difference["detail"] else ""
            expected, actual = excerpts(difference["expected"], difference["actual"])
            where = f"difference {number} of {count}" if count > 1 else "difference"
            lines.append(f"  - {where} at {_md_code(difference['path'])} ({difference['kind']}{detail})")
            lines.append(f"    - expected: {_md_excerpt(expected)}")
            lines.append(f"    - actual: {_md_excerpt(actual)}")
        if count > len(differences):
            lines.append(f"  - {_plural(count - len(differences), 'more difference')}, not kept in the report")
    elif "message" in scenario:
        lines.append(f"  - {scenario['message']}")
    if scenario.get("issue_url"):
        lines.append(f"  - issue: {_md_link(scenario['issue_url'])}")
    stderr = _stderr(scenario)
    if stderr:
        lines += ["  - standard error:", *_md_fenced(stderr, "    ")]
    return lines


def _md_facts(run: dict[str, Any], scenario: dict[str, Any]) -> list[str]:
    """The command that runs the scenario alone, and its files."""
    command = repro_command(run, scenario["id"])
    where = f" (in {_md_code(run['workingDirectory'])})" if command and "workingDirectory" in run else ""
    alone = (
        _md_code(command) + where if command else f"add {_md_code(_id_option(scenario['id']))} to the check's options"
    )
    lines = [f"  - run alone: {alone}"]
    if "scenarioFile" in scenario:
        lines.append(f"  - scenario: {_md_code(scenario['scenarioFile'])}")
    if "goldenFile" in scenario:
        lines.append(f"  - golden: {_md_code(scenario['goldenFile'])}")
    return lines


def _md_fenced(text: str, indent: str) -> list[str]:
    """``text`` as a fenced code block: the fence is longer than any run of backticks in it, so no line of it
    closes the block, and every line is indented to stay inside the list item."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = [indent + line for line in re.split("\r\n|\r|\n", text)]
    return [f"{indent}{fence}text", *body, indent + fence]


# --- HTML ------------------------------------------------------------------------------------------------

_CSS = """
:root { --passed: #2e7d32; --failed: #c62828; --errored: #6a1b9a; --skipped: #757575;
        --known: #f9a825; --predates: #1565c0; --stale: #ef6c00; --nothing: #455a64; --interrupted: #5d4037;
        --ink: #1b1b1b; --rule: #d0d0d0; --tint: #fdecea; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 0 24px 24px; }
h1 { font-size: 22px; margin: 18px 0 8px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--rule); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 20px 0 6px; }
code, pre { font: 12.5px/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
a { color: #0b57d0; }
.muted { color: #666; }
.verdict { display: inline-block; padding: 4px 10px; border-radius: 4px; color: #fff; font-weight: 600; }
.verdict.pass { background: var(--passed); } .verdict.fail { background: var(--failed); }
.verdict.nothing-passed { background: var(--nothing); } .verdict.interrupted { background: var(--interrupted); }
table.verdicts td, table.verdicts th { padding: 3px 10px 3px 0; text-align: left; vertical-align: middle; }
nav.summary { margin: 10px 0 0; }
nav.summary p { margin: 6px 0; }
nav.summary ol { margin: 4px 0 10px; padding-left: 26px; }
nav.summary li { margin: 1px 0; overflow-wrap: anywhere; }
nav.summary .run-name { font-weight: 600; }
.sym { font-weight: 700; }
.sym.failed { color: var(--failed); } .sym.errored { color: var(--errored); } .sym.stale { color: var(--stale); }
.sym.skipped { color: var(--skipped); } .sym.known { color: #a67c00; } .sym.passed { color: var(--passed); }
.sym.predates { color: var(--predates); }
.scenario { border: 1px solid var(--rule); border-left-width: 6px; padding: 8px 12px; margin: 10px 0; }
.scenario.failed-box { border-left-color: var(--failed); } .scenario.errored-box { border-left-color: var(--errored); }
.scenario.skipped-box { border-left-color: var(--skipped); } .scenario.known-box { border-left-color: var(--known); }
.scenario.stale-box { border-left-color: var(--stale); } .scenario.passed-box { border-left-color: var(--passed); }
.scenario.predates-box { border-left-color: var(--predates); }
dl.facts, dl.meta { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 12px; margin: 6px 0; }
dl.facts dt, dl.meta dt { font-weight: 600; } dl.facts dd, dl.meta dd { margin: 0; overflow-wrap: anywhere; }
code.repro { background: #f1f3f4; padding: 1px 4px; border-radius: 3px; }
.diff { border-top: 1px dashed var(--rule); margin-top: 6px; padding-top: 4px; }
.diff .where { overflow-wrap: anywhere; }
.sides { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 10px; margin-top: 3px; }
.diff pre { margin: 0; white-space: pre-wrap; word-break: break-all; padding: 2px 6px; }
pre.expected, pre.whole-expected { background: #e8f5e9; } pre.actual, pre.whole-actual { background: #ffebee; }
mark { background: #ffd54f; color: inherit; outline: 1px solid #b28704; }
.offsets { color: #666; font-size: 12px; }
details pre { white-space: pre-wrap; word-break: break-all; background: #f6f6f6; padding: 6px; max-height: 320px;
              overflow: auto; }
.legend span { display: inline-block; margin-right: 14px; }
table.matrix { width: 100%; table-layout: fixed; border-collapse: collapse; }
table.matrix th, table.matrix td { border-bottom: 1px solid #eee; padding: 2px 6px; text-align: left;
                                   vertical-align: middle; overflow-wrap: anywhere; }
table.matrix thead th { position: sticky; top: 0; background: #fff; z-index: 2; border-bottom: 2px solid var(--rule); }
table.matrix tr.section th, table.matrix tr.section td { background: #f3f3f3; font-weight: 600; padding-top: 5px; }
table.matrix tbody th { font-weight: 500; white-space: nowrap; }
table.matrix td.text { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; color: #444; }
table.matrix td.cell.failed { background: var(--tint); }
table.matrix td.cell.failed .count, table.matrix tr.section td.failed { color: var(--failed); font-weight: 600; }
details.more > summary { margin-top: 6px; cursor: pointer; }
.count { font-size: 12.5px; margin-left: 4px; }
.chip { display: inline-block; width: 15px; height: 15px; line-height: 15px; margin: 1px; border-radius: 2px;
        text-align: center; color: #fff; font-size: 10px; text-decoration: none; vertical-align: middle; }
.chip.passed { background: var(--passed); } .chip.failed { background: var(--failed); }
.chip.errored { background: var(--errored); } .chip.skipped { background: var(--skipped); }
.chip.known { background: var(--known); } .chip.stale { background: var(--stale); }
.chip.predates { background: var(--predates); }
table.side { width: 100%; table-layout: fixed; border-collapse: collapse; }
table.side th, table.side td { border: 1px solid var(--rule); padding: 2px 8px; text-align: left; vertical-align: top;
                               overflow-wrap: anywhere; }
table.side thead th { position: sticky; top: 0; background: #fff; z-index: 1; }
table.side tbody th { font-weight: 400; }
table.side td.cell { color: #fff; }
table.side td.cell a { color: inherit; }
table.side td.cell code { font-size: 11.5px; }
table.side td.passed { background: var(--passed); } table.side td.failed { background: var(--failed); }
table.side td.errored { background: var(--errored); } table.side td.skipped { background: var(--skipped); }
table.side td.known { background: var(--known); } table.side td.stale { background: var(--stale); }
table.side td.predates { background: var(--predates); }
table.side td.not-run { background: #fff; color: var(--ink); }
"""

_SYMBOLS = {
    "passed": "✓",
    "failed": "✗",
    "errored": "!",
    "skipped": "–",
    "known": "≈",
    "predates": "«",
    "stale": "↻",
}
_LABELS = {
    "passed": "passed",
    "failed": "failed",
    "errored": "errored",
    "skipped": "skipped",
    "known": "known failure (baseline)",
    "predates": "known failure: the release predates what its rule requires (baseline)",
    "stale": "stale baseline entry",
}

#: How many differences of a scenario are shown open; the rest are listed collapsed.
_DIFFERENCES_OPEN = 3
#: Longest text a cut difference repeats whole, collapsed, in the HTML (the JSON report always keeps it whole).
_WHOLE_SHOWN = 20_000


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def report_html(report: dict[str, Any]) -> str:
    """The report as one self-contained HTML page (inline CSS, no script, nothing fetched), what fails first.

    Under the verdict a summary links to every failure and error; their accounts follow (command to run each
    alone, files, every difference kept), then the rules by contract section (one column per
    implementation, each scenario a square linking to its account), then with several implementations a
    table of the scenarios they do not all pass, then known failures, skips and metadata. A scenario's
    account has the id ``s<j>`` (``j``: its index in the run); with several implementations every id of an
    implementation's part is prefixed ``i<k>-`` (``i1-s3``, ``i1-failed``).
    """
    from toolcanon_conformance import trend  # it draws on this module's helpers

    runs: list[dict[str, Any]] = report["implementations"]
    several = len(runs) != 1
    prefixes = [f"i{index}-" for index in range(len(runs))] if several else [""]
    title = f"Conformance: {len(runs)} implementations" if several else f"Conformance: {_implementation_line(runs[0])}"
    css = _CSS + (trend.CSS if several else "")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{css}</style></head><body>",
        f"<header><h1>{_e(title)}</h1>",
    ]
    if several:
        parts += [_html_verdicts(runs) if runs else "", _html_summary(runs, prefixes), "</header><main>"]
    else:
        verdict = f'<p id="verdict" class="verdict {runs[0]["verdict"]}">{_e(verdict_line(runs[0]))}</p>'
        parts += [verdict, _html_summary(runs, prefixes), "</header><main>"]
    for index, (run, prefix) in enumerate(zip(runs, prefixes, strict=True)):
        failing = f"{_column(run, index)}: what fails the run" if several else None
        parts += _html_groups(run, prefix, _FAILING, failing)
    if several and runs:
        anchors = [
            {scenario["id"]: f"{prefix}s{index}" for index, scenario in enumerate(run["scenarios"])}
            for run, prefix in zip(runs, prefixes, strict=True)
        ]
        parts += trend.trend_html(report, anchors)
    if runs:
        parts += _html_matrix(runs, prefixes)
    if several and runs:
        parts += _html_side_by_side(runs, prefixes)
    for index, (run, prefix) in enumerate(zip(runs, prefixes, strict=True)):
        rest = f"{_column(run, index)}: known failures and skips" if several else None
        parts += _html_groups(run, prefix, ("known", "skipped"), rest)
    for index, (run, prefix) in enumerate(zip(runs, prefixes, strict=True)):
        parts += _html_optional(run, prefix, f"{_column(run, index)}: optional differences" if several else None)
    parts += _html_about(report, runs, several)
    parts.append("</main></body></html>")
    return visible("\n".join(parts)) + "\n"


def _html_verdicts(runs: list[dict[str, Any]]) -> str:
    rows = "".join(
        f'<tr><th scope="row">{_e(_column(run, index))}</th>'
        f'<td><span class="verdict {run["verdict"]}" id="i{index}-verdict">{_e(verdict_line(run))}</span></td>'
        f"<td><code>{_e(_selected_by(run))}</code></td>"
        f"<td>{_e(run.get('baselineFile', 'no baseline'))}</td></tr>"
        for index, run in enumerate(runs)
    )
    return f'<table class="verdicts" id="verdicts"><tbody>{rows}</tbody></table>'


def _html_summary(runs: list[dict[str, Any]], prefixes: list[str]) -> str:
    """Per run, a link to every scenario (and baseline problem) that fails it, then to the other parts."""
    parts = ['<nav class="summary" id="summary">']
    for index, (run, prefix) in enumerate(zip(runs, prefixes, strict=True)):
        name = f'<span class="run-name">{_e(_column(run, index))}</span>: ' if len(runs) != 1 else ""
        failing = _failing_count(run)
        parts.append(f"<p>{name}{_e(_counts_phrase(run) if failing else 'nothing fails the run')}</p>")
        if not failing:
            continue
        groups = _grouped(run)
        items = []
        for key in _FAILING:
            for position, scenario in groups[key]:
                outcome = _outcome(scenario)
                rules = ", ".join(scenario["rules"]) or NO_RULE
                path, words = _summary_line(scenario)
                where = f"<code>{_e(path)}</code>" if path else ""
                items.append(
                    f'<li><a href="#{prefix}s{position}"><span class="sym {outcome}">{_SYMBOLS[outcome]}</span> '
                    f"<code>{_e(scenario['id'])}</code></a> "
                    f'<span class="muted">[{_e(rules)}]</span> {where}{_e(words)}</li>'
                )
        items += [
            f'<li><a href="#{prefix}baseline">baseline problem</a>: <code>{_e(problem["scenario"])}</code> '
            f"({_e(problem['kind'])})</li>"
            for problem in run["baselineProblems"]
        ]
        parts.append(f'<ol class="failing">{"".join(items)}</ol>')
    links = ['<a href="#rules">rules by contract section</a>']
    if len(runs) > 1:
        links.append('<a href="#side-by-side">scenarios side by side</a>')
    for index, (run, prefix) in enumerate(zip(runs, prefixes, strict=True)):
        groups = _grouped(run)
        for key, noun in (("known", "known failure"), ("skipped", "skipped")):
            if groups[key]:
                count = len(groups[key])
                label = _plural(count, noun) if key == "known" else f"{count} {noun}"
                label = f"#{index + 1}: {label}" if len(runs) > 1 else label
                links.append(f'<a href="#{prefix}{key}">{_e(label)}</a>')
        optional = _optional_scenarios(run["scenarios"])
        if optional:
            label = f"{_plural(len(optional), 'scenario')} with optional differences"
            label = f"#{index + 1}: {label}" if len(runs) > 1 else label
            links.append(f'<a href="#{prefix}optional">{_e(label)}</a>')
    links.append('<a href="#about">about this check</a>')
    parts.append(f'<p class="muted">Further down: {" · ".join(links) if runs else links[-1]}</p></nav>')
    return "".join(parts)


def _html_groups(run: dict[str, Any], prefix: str, keys: Sequence[str], title: str | None) -> list[str]:
    """The accounts of the run's scenarios in these groups, a section each (under one titled section when
    ``title`` is given); the baseline problems with the groups that fail the run."""
    groups = _grouped(run)
    titles = dict(_GROUPS)
    heading = "h3" if title else "h2"
    parts: list[str] = []
    for key in keys:
        if not groups[key]:
            continue
        parts.append(f'<section id="{prefix}{key}"><{heading}>{titles[key]} ({len(groups[key])})</{heading}>')
        parts += [_html_scenario(run, scenario, f"{prefix}s{position}") for position, scenario in groups[key]]
        parts.append("</section>")
    if "failed" in keys and run["baselineProblems"]:
        parts.append(f'<section id="{prefix}baseline"><{heading}>Baseline problems</{heading}><ul>')
        parts += [
            f"<li><code>{_e(p['scenario'])}</code> ({_e(p['kind'])}): {_e(p['message'])}</li>"
            for p in run["baselineProblems"]
        ]
        parts.append("</ul></section>")
    if title and parts:
        slug = prefix + ("failing" if "failed" in keys else "rest")
        return [f'<section id="{slug}"><h2>{_e(title)}</h2>', *parts, "</section>"]
    return parts


def _html_optional(run: dict[str, Any], prefix: str, title: str | None) -> list[str]:
    """The optional differences of each scenario that passed with some (``o<j>``), and why they are open."""
    optional = _optional_scenarios(run["scenarios"])
    if not optional:
        return []
    heading = "h3" if title else "h2"
    parts = [f'<section id="{prefix}optional">']
    if title:
        parts.append(f"<h2>{_e(title)}</h2>")
    parts.append(f"<{heading}>Optional differences ({len(optional)})</{heading}>")
    parts.append(f'<p class="muted">{_html_code_spans(_OPTIONAL_NOTE)}</p>')
    for position, scenario in optional:
        differences = scenario["optionalDifferences"]
        count = scenario.get("optionalDifferenceCount", len(differences))
        rules = ", ".join(scenario["rules"]) or "no rule"
        parts.append(
            f'<div class="scenario passed-box" id="{prefix}o{position}"><strong><span class="sym passed">'
            f"{_SYMBOLS['passed']}</span> <code>{_e(scenario['id'])}</code></strong> "
            f'<span class="muted">[{_e(rules)}] {_e(_plural(count, "optional difference"))}</span>'
        )
        parts += [_html_difference(difference, number, count) for number, difference in enumerate(differences, 1)]
        whys = dict.fromkeys(difference["why"] for difference in differences)
        parts += [f'<div class="why"><span class="muted">why:</span> {_e(why)}</div>' for why in whys]
        parts.append("</div>")
    parts.append("</section>")
    return parts


def _html_scenario(run: dict[str, Any], scenario: dict[str, Any], anchor: str) -> str:
    outcome = _outcome(scenario)
    rules = ", ".join(scenario["rules"]) or "no rule"
    parts = [
        f'<div class="scenario {outcome}-box" id="{anchor}">',
        f'<strong><span class="sym {outcome}">{_SYMBOLS[outcome]}</span> <code>{_e(scenario["id"])}</code></strong> '
        f'<span class="muted">[{_e(rules)}]{_e(_golden_note(scenario))}</span>',
    ]
    if scenario["description"]:
        parts.append(f'<div class="muted">{_e(scenario["description"])}</div>')
    baseline = scenario.get("baseline")
    if baseline is not None:
        kind = f", {_e(baseline['kind'])}" if "kind" in baseline else ""
        parts.append(f"<div>baseline: {_e(baseline['verdict'])}{kind} {_e(baseline['note'])}</div>")
    if scenario["status"] != "skipped":
        parts.append(_html_facts(run, scenario))
    if scenario["status"] == "failed" and scenario.get("differences"):
        parts += _html_differences(scenario)
    elif "message" in scenario:
        parts.append(f'<div class="message">{_e(scenario["message"])}</div>')
    if scenario.get("issue_url"):
        url = str(scenario["issue_url"])
        link = f'<a href="{_e(url)}" rel="noreferrer">{_e(url)}</a>' if _is_web_link(url) else f"<code>{_e(url)}</code>"
        parts.append(f'<div class="issue">issue: {link}</div>')
    stderr = _stderr(scenario)
    if stderr:
        parts.append(f'<details class="stderr"><summary>standard error</summary><pre>{_e(stderr)}</pre></details>')
    if scenario["status"] == "errored" and scenario.get("context"):
        shown = dict(scenario["context"])
        if stderr and shown.get("stderr") == scenario["stderr"]:
            del shown["stderr"]  # shown in its own block above
        context = json.dumps(shown, indent=2, ensure_ascii=False)
        parts.append(f"<details><summary>context</summary><pre>{_e(context)}</pre></details>")
    parts.append("</div>")
    return "".join(parts)


def _html_facts(run: dict[str, Any], scenario: dict[str, Any]) -> str:
    """The command that runs the scenario alone, and the scenario's and golden's files."""
    command = repro_command(run, scenario["id"])
    if command is not None:
        where = run.get("workingDirectory")
        alone = f'<code class="repro">{_e(command)}</code>'
        alone += f' <span class="muted">in <code>{_e(where)}</code></span>' if where else ""
    else:
        alone = f'add <code class="repro-id">{_e(_id_option(scenario["id"]))}</code> to the check\'s options'
    rows = [("run alone", alone)]
    if "scenarioFile" in scenario:
        rows.append(("scenario", f"<code>{_e(scenario['scenarioFile'])}</code>"))
    if "goldenFile" in scenario:
        rows.append(("golden", f"<code>{_e(scenario['goldenFile'])}</code>"))
    return '<dl class="facts">' + "".join(f"<dt>{key}</dt><dd>{value}</dd>" for key, value in rows) + "</dl>"


def _html_differences(scenario: dict[str, Any]) -> list[str]:
    differences = scenario["differences"]
    count = scenario.get("differenceCount", len(differences))
    parts = [_html_difference(difference, number, count) for number, difference in enumerate(differences, 1)]
    if len(parts) > _DIFFERENCES_OPEN + 1:
        rest = "".join(parts[_DIFFERENCES_OPEN:])
        summary = f"{len(parts) - _DIFFERENCES_OPEN} more differences"
        parts[_DIFFERENCES_OPEN:] = [f'<details class="more"><summary>{summary}</summary>{rest}</details>']
    if count > len(differences):
        parts.append(
            f'<p class="muted">{_plural(count - len(differences), "more difference")}, not kept in the report '
            f"(it keeps the first {len(differences)}).</p>"
        )
    return parts


def _html_difference(difference: dict[str, Any], number: int, count: int) -> str:
    expected, actual = difference["expected"], difference["actual"]
    shown_expected, shown_actual = excerpts(expected, actual)
    at = first_difference(expected, actual) if expected is not None and actual is not None else None
    detail = f" — {_e(difference['detail'])}" if difference["detail"] else ""
    which = f"difference {number} of {count}" if count > 1 else "difference"
    return (
        f'<div class="diff"><div class="where"><span class="muted">{which} at</span> '
        f'<code>{_e(difference["path"])}</code> <span class="kind">{_e(difference["kind"])}{detail}</span></div>'
        f'<div class="sides"><span>expected</span>{_html_side(expected, shown_expected, at, "expected")}'
        f"<span>actual</span>{_html_side(actual, shown_actual, at, 'actual')}</div>"
        f"{_html_whole(expected, actual, shown_expected, shown_actual)}</div>"
    )


def _html_side(text: str | None, excerpt: Excerpt | None, at: int | None, side: str) -> str:
    """One side of a difference: the region shown, its first differing character marked, and its offsets."""
    if text is None or excerpt is None:
        return f'<div><pre class="{side}">{_e("<nothing>")}</pre></div>'
    region = text[excerpt.start : excerpt.end]
    if at is not None and excerpt.start <= at < excerpt.end:
        cut = at - excerpt.start
        shown = f"{_e(region[:cut])}<mark>{_e(region[cut])}</mark>{_e(region[cut + 1 :])}"
    else:
        shown = _e(region)
    shown = ("…" if excerpt.start > 0 else "") + shown + ("…" if excerpt.end < excerpt.length else "")
    offsets = "" if excerpt.whole else f'<span class="offsets">{_e(excerpt.offsets)}</span>'
    return f'<div><pre class="{side}">{shown}</pre>{offsets}</div>'


def _html_whole(
    expected: str | None, actual: str | None, shown_expected: Excerpt | None, shown_actual: Excerpt | None
) -> str:
    """The whole texts, collapsed, when the region shown is a cut (and they are not too long to repeat)."""
    if all(excerpt is None or excerpt.whole for excerpt in (shown_expected, shown_actual)):
        return ""
    lengths = " and ".join(f"{len(text):,}" for text in (expected, actual) if text is not None)
    if max(len(text or "") for text in (expected, actual)) > _WHOLE_SHOWN:
        return f'<p class="muted">whole texts: {lengths} characters, kept whole in the JSON report</p>'
    sides = "".join(
        f'<span>{side}</span><pre class="whole-{side}">{_e(text)}</pre>'
        for side, text in (("expected", expected), ("actual", actual))
        if text is not None
    )
    return f'<details class="whole"><summary>whole texts ({lengths} characters)</summary>{sides}</details>'


def _html_legend() -> str:
    items = "".join(
        f'<span><i class="chip {key}">{_e(_SYMBOLS[key])}</i> {_e(label)}</span>' for key, label in _LABELS.items()
    )
    return f'<p class="legend">{items}</p>'


def _html_matrix(runs: list[dict[str, Any]], prefixes: list[str]) -> list[str]:
    """The rules under the contract's sections, a column per implementation: each scenario of a rule is a
    square of its outcome, linking to its account when it did not pass."""
    tallies = [{tally["rule"]: tally for tally in run["rules"]} for run in runs]
    by_ids = [_by_id(run) for run in runs]
    anchors = [
        {scenario["id"]: f"{prefix}s{index}" for index, scenario in enumerate(run["scenarios"])}
        for run, prefix in zip(runs, prefixes, strict=True)
    ]
    _, texts = _contract()
    share = 30 if len(runs) == 1 else max(12, 50 // len(runs))
    columns = '<col style="width: 8.5em"><col>' + f'<col style="width: {share}%">' * len(runs)
    names = "".join(f'<th scope="col">{_e(_column(run, index))}</th>' for index, run in enumerate(runs))
    parts = [
        '<section id="rules"><h2>Rules, by contract section</h2>',
        _html_legend(),
        f'<table id="matrix" class="matrix"><colgroup>{columns}</colgroup>',
        f'<thead><tr><th scope="col">rule</th><th scope="col">what it requires</th>{names}</tr></thead>',
    ]
    for slug, heading, rules in _rule_sections(rule for by_rule in tallies for rule in by_rule):
        counts = "".join(_html_section_cell(_section_counts(run, rules)) for run in runs)
        parts.append(
            f'<tbody id="rules-{_e(slug)}"><tr class="section"><th colspan="2" scope="rowgroup">'
            f"{_html_code_spans(heading)}</th>"
            f"{counts}</tr>"
        )
        for rule in rules:
            text = texts.get(rule, "")
            cells = "".join(
                _html_rule_cell(by_rule.get(rule), by_id, anchor)
                for by_rule, by_id, anchor in zip(tallies, by_ids, anchors, strict=True)
            )
            parts.append(
                f'<tr data-rule="{_e(rule)}"><th scope="row" title="{_e(text)}">{_e(rule)}</th>'
                f'<td class="text" title="{_e(text)}">{_html_code_spans(text)}</td>{cells}</tr>'
            )
        parts.append("</tbody>")
    parts.append("</table></section>")
    return parts


def _html_section_cell(counts: Counter[str]) -> str:
    """A section's scenarios in one run, counted by outcome (each scenario once)."""
    tally = {key: counts[key] for key in _SYMBOLS}
    failing = counts["failed"] or counts["errored"] or counts["stale"]
    return f'<td class="{"failed" if failing else "ok"}">{_e(_tally_text(tally) if counts else "")}</td>'


def _html_code_spans(text: str) -> str:
    """A rule's sentence, escaped, its `code` spans as code."""
    return re.sub("`([^`]+)`", lambda match: f"<code>{match.group(1)}</code>", _e(text))


def _html_rule_cell(tally: dict[str, Any] | None, by_id: dict[str, dict[str, Any]], anchors: dict[str, str]) -> str:
    if tally is None:
        return '<td class="cell none muted">not run</td>'
    chips = []
    for scenario_id in tally["scenarios"]:
        scenario = by_id.get(scenario_id)
        if scenario is None:
            continue
        outcome = _outcome(scenario)
        label = _e(f"{scenario_id}: {_LABELS[outcome]}")
        if outcome == "passed":
            chips.append(f'<span class="chip passed" title="{label}">{_SYMBOLS[outcome]}</span>')
        else:
            chips.append(
                f'<a class="chip {outcome}" href="#{anchors[scenario_id]}" title="{label}">{_SYMBOLS[outcome]}</a>'
            )
    return (
        f'<td class="cell {_tally_outcome(tally)}">{"".join(chips)}'
        f'<span class="count">{_e(_tally_text(tally))}</span></td>'
    )


def _html_side_by_side(runs: list[dict[str, Any]], prefixes: list[str]) -> list[str]:
    """The scenarios the implementations do not all pass, one column each."""
    columns = "".join(f'<th scope="col">{_e(_column(run, index))}</th>' for index, run in enumerate(runs))
    by_ids = [_by_id(run) for run in runs]
    anchors = [
        {scenario["id"]: f"{prefix}s{index}" for index, scenario in enumerate(run["scenarios"])}
        for run, prefix in zip(runs, prefixes, strict=True)
    ]
    every = _side_by_side_ids(runs)
    rows = []
    for scenario_id, scenario_rules in every:
        if _passed_everywhere(scenario_id, by_ids):
            continue
        cells = "".join(
            _html_side_cell(by_id.get(scenario_id), anchors[k].get(scenario_id, "")) for k, by_id in enumerate(by_ids)
        )
        rows.append(
            f'<tr data-scenario="{_e(scenario_id)}"><th scope="row"><code>{_e(scenario_id)}</code></th>'
            f'<td class="muted">{_e(", ".join(scenario_rules) or NO_RULE)}</td>{cells}</tr>'
        )
    passed = len(every) - len(rows)
    note = f"{_plural(passed, 'scenario')} passed by every implementation not listed." if passed else ""
    parts = ['<section id="side-by-side"><h2>By scenario, where the implementations do not all pass</h2>']
    if rows:
        parts.append(
            f'<table class="side" id="side-by-side-table"><colgroup><col style="width: 20%"><col style="width: 14%">'
            f'</colgroup><thead><tr><th scope="col">scenario</th><th scope="col">rules</th>{columns}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    else:
        parts.append(f"<p>Every implementation passed all {len(every)} scenarios.</p>")
    if note and rows:
        parts.append(f'<p class="muted">{_e(note)}</p>')
    parts.append("</section>")
    return parts


def _html_side_cell(scenario: dict[str, Any] | None, anchor: str) -> str:
    if scenario is None:
        return '<td class="cell not-run">not run</td>'
    outcome = _outcome(scenario)
    symbol = _SYMBOLS[outcome]
    if outcome == "passed":
        return f'<td class="cell passed" title="passed">{symbol}</td>'
    differences = scenario.get("differences") or []
    title = _LABELS[outcome]
    if differences:
        first = differences[0]
        expected, actual = excerpts(first["expected"], first["actual"], context=40)
        title += f" at {first['path']}: expected {expected or '<nothing>'}, actual {actual or '<nothing>'}"
        shown = f"{symbol} <code>{_e(first['path'])}</code> ({_e(first['kind'])})"
    else:
        message = scenario.get("message", "")
        title += f": {message}" if message else ""
        shown = f"{symbol} {_e(outcome)}" + (f": {_e(_short(message))}" if message else "")
    return f'<td class="cell {outcome}" title="{_e(title)}"><a href="#{anchor}">{shown}</a></td>'


def _html_about(report: dict[str, Any], runs: list[dict[str, Any]], several: bool) -> list[str]:
    """The check's and each implementation's metadata."""
    if not several:
        rows = _implementation_rows(runs[0]) + _kit_rows(report)
        items = "".join(f"<dt>{_e(key)}</dt><dd>{_e(value)}</dd>" for key, value in rows)
        return [
            f'<section id="about"><h2>About this run</h2><dl class="meta" id="implementation">{items}</dl></section>'
        ]
    items = "".join(f"<dt>{_e(key)}</dt><dd>{_e(value)}</dd>" for key, value in _kit_rows(report))
    parts = [f'<section id="about"><h2>About this check</h2><dl class="meta" id="report">{items}</dl>']
    for index, run in enumerate(runs):
        listed = "".join(f"<dt>{_e(key)}</dt><dd>{_e(value)}</dd>" for key, value in _implementation_rows(run))
        parts.append(f'<h3>{_e(_column(run, index))}</h3><dl class="meta" id="i{index}-implementation">{listed}</dl>')
    parts.append("</section>")
    return parts
