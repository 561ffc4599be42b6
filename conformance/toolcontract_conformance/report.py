"""Conformance reports: the machine form (JSON, with a schema), Markdown, and one self-contained HTML page.

:func:`report_json` turns the runs of one check, one :class:`Run` per implementation, into the JSON report
(``schemas/report.schema.json``, format version 2) and judges each run's verdict. The other forms are written
from that JSON alone, so a saved report can be rendered again later (``toolcontract report FILE --format
md|html``); :func:`read_report` also reads a report of format version 1 (one implementation). With several
implementations, Markdown and HTML put them side by side: one column each, per scenario and per rule, with
the first difference in each cell. Every form says how many scenarios have a golden from each source (the
reference, or the implementation a golden is recorded from: :mod:`~toolcontract_conformance.golden_source`).
Every form carries what the adapter wrote on standard error while a scenario that did not pass ran (HTML: a
collapsed block), and any string the contract allows: lone surrogates come out as ``\\ud800`` escapes
(:func:`~toolcontract_conformance.display.visible`).
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Literal, TypeAlias

from toolcontract_conformance._schemas import load_schema, schema_errors
from toolcontract_conformance.display import Excerpt, excerpts, visible
from toolcontract_conformance.golden_source import REFERENCE, count_sources, sources_text
from toolcontract_conformance.protocol import PROTOCOL_VERSION, info_to_wire
from toolcontract_conformance.runner import NO_RULE, ScenarioResult, SuiteResult

__all__ = [
    "REPORT_FORMAT_VERSION",
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
    "run_json",
    "validate_report",
    "verdict_line",
]

REPORT_FORMAT_VERSION = 2
ReportFormat: TypeAlias = Literal["json", "md", "html"]
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
class Run:
    """One implementation's run as the report shows it.

    ``selected_by`` is the command-line option and value that named the implementation (``("--impl-cmd",
    "node adapter.mjs")``), ``baseline_file`` the baseline it was judged with, ``selected`` how many scenarios
    were to run (default: all of ``suite.results``; more when the run was interrupted).
    """

    suite: SuiteResult
    selected_by: tuple[str, str] | None = None
    baseline_file: str | None = None
    selected: int | None = None

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
        return metadata.version("toolcontract")
    except metadata.PackageNotFoundError:
        return "unknown"


# --- the JSON report -------------------------------------------------------------------------------------


def _scenario_json(result: ScenarioResult) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": result.scenario,
        "description": result.description,
        "rules": list(result.rules),
        "status": result.status,
        "seconds": round(result.seconds, 6),
        "goldenSource": result.golden_source,
    }
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
    entry["countsAsFailure"] = result.counts_as_failure
    return entry


def _outcome(scenario: dict[str, Any]) -> str:
    """The class a scenario shows as: its status, or the baseline's view of it."""
    verdict = scenario.get("baseline", {}).get("verdict")
    if verdict == "known-failure":
        return "known"
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
        "knownFailures": outcomes["known"],
        "stale": outcomes["stale"],
        "baselineProblems": len(baseline_problems),
    }


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
        "scenarios": [_scenario_json(result) for result in suite.results],
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
    order = ["implementation", "selectedBy", "baselineFile", "started", "seconds", "ok", "verdict"]
    order += ["verdictReasons", "selected", "summary", "goldenSources", "rules", "scenarios", "baselineProblems"]
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
        "kit": kit or {"name": "toolcontract", "version": _kit_version(), "protocolVersion": PROTOCOL_VERSION},
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


def _tally_text(tally: dict[str, Any]) -> str:
    keys = ("passed", "failed", "errored", "skipped", "known")
    if not any(tally[key] for key in keys[1:]):
        return f"✓ {tally['passed']}"
    mark = "✗ " if tally["failed"] or tally["errored"] else ""
    return mark + ", ".join(f"{tally[key]} {key}" for key in keys if tally[key])


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


def report_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: headline, metadata, tables by rule (and by scenario, side by side), then the
    failures, errors and skips of each implementation."""
    runs: list[dict[str, Any]] = report["implementations"]
    lines = _md_single(report, runs[0]) if len(runs) == 1 else _md_side_by_side(report, runs)
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


def _md_single(report: dict[str, Any], run: dict[str, Any]) -> list[str]:
    implementation = run["implementation"]
    lines = [
        f"# Conformance report: {_implementation_line(run)}",
        "",
        f"**{verdict_line(run)}**",
        "",
        f"- capabilities: {', '.join(implementation['capabilities']) or 'none'}",
    ]
    for key in ("homepage", "issues"):
        if key in implementation:
            lines.append(f"- {key}: {implementation[key]}")
    if "selectedBy" in run:
        lines.append(f"- selected by: {_md_code(_selected_by(run))}")
    if "baselineFile" in run:
        lines.append(f"- baseline: {_md_code(run['baselineFile'])}")
    lines.append(f"- {golden_sources_line(run)}")
    lines += _md_kit_lines(report)
    lines += [
        "",
        "## By rule",
        "",
        "| Rule | Passed | Failed | Errored | Skipped | Known |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for tally in run["rules"]:
        counts = " | ".join(str(tally[key]) for key in ("passed", "failed", "errored", "skipped", "known"))
        lines.append(f"| {_md_cell(tally['rule'])} | {counts} |")
    return lines + _md_details(run, "##")


def _md_side_by_side(report: dict[str, Any], runs: list[dict[str, Any]]) -> list[str]:
    names = [_column(run, index) for index, run in enumerate(runs)]
    title = "no implementation" if not runs else ", ".join(_implementation_line(run) for run in runs)
    lines = [f"# Conformance report: {title}", ""]
    lines += [f"- **{_md_cell(name)}**: **{verdict_line(run)}**" for name, run in zip(names, runs, strict=True)]
    lines += [*([""] if runs else []), *_md_kit_lines(report)]
    if not runs:
        return lines
    lines += ["", "## Implementations", ""]
    lines.append("| | " + " | ".join(_md_cell(name) for name in names) + " |")
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
    lines += ["", "## By rule", "", "| Rule | " + " | ".join(_md_cell(name) for name in names) + " |"]
    lines.append("|---" * (len(runs) + 1) + "|")
    tallies = [{tally["rule"]: tally for tally in run["rules"]} for run in runs]
    rules = list(dict.fromkeys(rule for by_rule in tallies for rule in by_rule))
    for rule in rules:
        cells = [_tally_text(by_rule[rule]) if rule in by_rule else "" for by_rule in tallies]
        lines.append(f"| {_md_cell(rule)} | " + " | ".join(cells) + " |")
    lines += ["", "## By scenario", "", "| Scenario | Rules | " + " | ".join(_md_cell(name) for name in names) + " |"]
    lines.append("|---" * (len(runs) + 2) + "|")
    by_ids = [_by_id(run) for run in runs]
    for scenario_id, scenario_rules in _side_by_side_ids(runs):
        cells = [_md_outcome_cell(by_id.get(scenario_id)) for by_id in by_ids]
        rules_text = _md_cell(", ".join(scenario_rules) or NO_RULE)
        lines.append(f"| {_md_table_code(scenario_id)} | {rules_text} | " + " | ".join(cells) + " |")
    for name, run in zip(names, runs, strict=True):
        details = _md_details(run, "###")
        if details:
            lines += ["", f"## {_md_cell(name)}: what did not pass", *details]
    return lines


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


def _md_details(run: dict[str, Any], level: str) -> list[str]:
    lines: list[str] = []
    for title, scenarios in _sections(run):
        lines += ["", f"{level} {title}", ""]
        for scenario in scenarios:
            lines += _md_scenario(scenario)
    if run["baselineProblems"]:
        lines += ["", f"{level} Baseline problems", ""]
        lines += [f"- {_md_code(p['scenario'])} ({p['kind']}): {p['message']}" for p in run["baselineProblems"]]
    return lines


def _sections(run: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The scenarios shown in detail, by section: every one that did not simply pass is in one of them."""
    scenarios = run["scenarios"]
    sections = [
        ("Failures", [s for s in scenarios if s["status"] == "failed"]),
        ("Errored", [s for s in scenarios if s["status"] == "errored"]),
        ("Stale baseline entries", [s for s in scenarios if s["status"] == "passed" and _outcome(s) == "stale"]),
        ("Skipped", [s for s in scenarios if s["status"] == "skipped"]),
    ]
    return [(title, chosen) for title, chosen in sections if chosen]


def _md_scenario(scenario: dict[str, Any]) -> list[str]:
    rules = ", ".join(scenario["rules"]) or "no rule"
    head = f"- {_md_code(scenario['id'])} [{rules}]{_golden_note(scenario)}"
    baseline = scenario.get("baseline")
    if baseline is not None:
        head += f" — baseline: {baseline['verdict']}" + (f" ({baseline['note']})" if baseline["note"] else "")
    lines = [head]
    if scenario["status"] == "failed" and scenario.get("differences"):
        first = scenario["differences"][0]
        detail = f", {first['detail']}" if first["detail"] else ""
        expected, actual = excerpts(first["expected"], first["actual"])
        lines.append(f"  - first difference at {_md_code(first['path'])} ({first['kind']}{detail})")
        lines.append(f"    - expected: {_md_excerpt(expected)}")
        lines.append(f"    - actual: {_md_excerpt(actual)}")
        if scenario["differenceCount"] > 1:
            lines.append(f"  - {scenario['differenceCount'] - 1} more difference(s)")
    elif "message" in scenario:
        lines.append(f"  - {scenario['message']}")
    stderr = _stderr(scenario)
    if stderr:
        lines += ["  - standard error:", *_md_fenced(stderr, "    ")]
    return lines


def _stderr(scenario: dict[str, Any]) -> str:
    """What the adapter wrote on standard error while the scenario ran, if anything but blanks."""
    stderr = str(scenario.get("stderr", ""))
    return stderr.rstrip("\n") if stderr.strip() else ""


def _md_fenced(text: str, indent: str) -> list[str]:
    """``text`` as a fenced code block: the fence is longer than any run of backticks in it, so no line of it
    closes the block, and every line is indented to stay inside the list item."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = [indent + line for line in re.split("\r\n|\r|\n", text)]
    return [f"{indent}{fence}text", *body, indent + fence]


# --- HTML ------------------------------------------------------------------------------------------------

_CSS = """
:root { --passed: #2e7d32; --failed: #c62828; --errored: #6a1b9a; --skipped: #9e9e9e;
        --known: #f9a825; --stale: #ef6c00; --nothing: #455a64; --interrupted: #5d4037;
        --ink: #1b1b1b; --rule: #d0d0d0; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 24px; }
h1 { font-size: 22px; margin: 0 0 8px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--rule); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 20px 0 6px; }
code, pre { font: 12.5px/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
.verdict { display: inline-block; padding: 4px 10px; border-radius: 4px; color: #fff; font-weight: 600; }
.verdict.pass { background: var(--passed); } .verdict.fail { background: var(--failed); }
.verdict.nothing-passed { background: var(--nothing); } .verdict.interrupted { background: var(--interrupted); }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 12px 0; }
dl.meta dt { font-weight: 600; } dl.meta dd { margin: 0; }
.legend span { display: inline-block; margin-right: 14px; }
.swatch { display: inline-block; width: 12px; height: 12px; vertical-align: -1px; margin-right: 4px; }
.matrix-wrap { overflow: auto; max-height: 80vh; border: 1px solid var(--rule); }
table.matrix { border-collapse: collapse; }
table.matrix th, table.matrix td { border: 1px solid #eee; padding: 0; }
table.matrix thead th { position: sticky; top: 0; background: #fff; z-index: 1; }
table.matrix th.rule { height: 110px; width: 20px; vertical-align: bottom; }
table.matrix th.rule span { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap;
                           font-weight: 500; font-size: 12px; padding: 4px 0; }
table.matrix tbody th { text-align: left; font-weight: 400; padding: 1px 8px 1px 4px; white-space: nowrap;
                        position: sticky; left: 0; background: #fff; }
table.matrix td.cell { width: 20px; height: 18px; text-align: center; color: #fff; font-size: 11px; }
table.matrix tr.tally th { font-weight: 600; }
table.matrix tr.tally td { font-size: 11px; text-align: center; color: #fff; }
.passed { background: var(--passed); } .failed { background: var(--failed); }
.errored { background: var(--errored); } .skipped { background: var(--skipped); }
.known { background: var(--known); } .stale { background: var(--stale); }
.not-run { background: #fff; color: var(--ink); }
td.cell a { color: inherit; text-decoration: none; display: block; }
table.rules, table.side { border-collapse: collapse; }
table.verdicts td, table.verdicts th { padding: 3px 10px 3px 0; text-align: left; vertical-align: middle; }
table.rules th, table.rules td { border: 1px solid var(--rule); padding: 3px 8px; text-align: right; }
table.rules th:first-child, table.rules td:first-child { text-align: left; }
.side-wrap { overflow: auto; max-height: 80vh; border: 1px solid var(--rule); }
table.side th, table.side td { border: 1px solid var(--rule); padding: 2px 8px; text-align: left;
                               vertical-align: top; }
table.side thead th { position: sticky; top: 0; background: #fff; z-index: 1; }
table.side tbody th { font-weight: 400; white-space: nowrap; }
table.side td.cell { color: #fff; max-width: 480px; overflow-wrap: anywhere; }
table.side td.cell.not-run { color: var(--ink); }
table.side td.cell a { color: inherit; }
table.side td.cell code { font-size: 11.5px; }
.scenario { border: 1px solid var(--rule); border-left-width: 6px; padding: 8px 12px; margin: 10px 0; }
.scenario.failed-box { border-left-color: var(--failed); } .scenario.errored-box { border-left-color: var(--errored); }
.scenario.skipped-box { border-left-color: var(--skipped); } .scenario.known-box { border-left-color: var(--known); }
.scenario.stale-box { border-left-color: var(--stale); }
.diff { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin-top: 6px; }
.diff pre { margin: 0; white-space: pre-wrap; word-break: break-all; padding: 2px 6px; }
.diff .expected { background: #e8f5e9; } .diff .actual { background: #ffebee; }
details pre { white-space: pre-wrap; background: #f6f6f6; padding: 6px; max-height: 320px; overflow: auto; }
.muted { color: #666; }
"""

_SYMBOLS = {"passed": "✓", "failed": "✗", "errored": "!", "skipped": "–", "known": "≈", "stale": "↻"}
_LABELS = {
    "passed": "passed",
    "failed": "failed",
    "errored": "errored",
    "skipped": "skipped",
    "known": "known failure (baseline)",
    "stale": "stale baseline entry",
}


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def report_html(report: dict[str, Any]) -> str:
    """The report as one self-contained HTML page (inline CSS, no script, nothing fetched).

    With several implementations the page opens with them side by side (verdicts, a table per rule and a
    table per scenario, one column each), then one section per implementation, its element ids prefixed
    ``i<k>-`` (``i1-matrix``, ``i1-s3``).
    """
    runs: list[dict[str, Any]] = report["implementations"]
    several = len(runs) != 1
    title = (
        f"Conformance: {_implementation_line(runs[0])}" if not several else f"Conformance: {len(runs)} implementations"
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<header><h1>{_e(title)}</h1>",
    ]
    if several:
        parts += [_html_verdicts(runs), _html_report_metadata(report), "</header>"]
        parts += _html_side_by_side(runs) if runs else []
        for index, run in enumerate(runs):
            parts.append(f'<section id="i{index}"><h2>{_e(_column(run, index))}: {_e(_implementation_line(run))}</h2>')
            parts += _html_run(run, f"i{index}-", heading="h3")
            parts.append("</section>")
    else:
        run = runs[0]
        parts += [
            f'<p id="verdict" class="verdict {run["verdict"]}">{_e(verdict_line(run))}</p>',
            _html_metadata(run, report),
            "</header>",
        ]
        parts += _html_run(run, "", heading="h2")
    parts.append("</body></html>")
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


def _html_report_metadata(report: dict[str, Any]) -> str:
    items = "".join(f"<dt>{_e(key)}</dt><dd>{_e(value)}</dd>" for key, value in _kit_rows(report))
    return f'<dl class="meta" id="report">{items}</dl>'


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
    rows.append(("goldens", sources_text(_golden_sources(run["scenarios"]))))
    return rows


def _html_metadata(run: dict[str, Any], report: dict[str, Any] | None, prefix: str = "") -> str:
    rows = _implementation_rows(run)
    rows += _kit_rows(report) if report is not None else [("duration", f"{run['seconds']:.2f} s")]
    items = "".join(f"<dt>{_e(key)}</dt><dd>{_e(value)}</dd>" for key, value in rows)
    return f'<dl class="meta" id="{prefix}implementation">{items}</dl>'


def _html_run(run: dict[str, Any], prefix: str, *, heading: str) -> list[str]:
    """One implementation's part of the page: matrix, table by rule, then what did not pass."""
    scenarios: list[dict[str, Any]] = run["scenarios"]
    anchors = {scenario["id"]: f"{prefix}s{index}" for index, scenario in enumerate(scenarios)}
    parts: list[str] = []
    if prefix:
        parts.append(_html_metadata(run, None, prefix))
    parts += [
        f"<section><{heading}>Rules × scenarios</{heading}>",
        _html_legend(),
        _html_matrix(run, anchors, prefix),
        "</section>",
        f"<section><{heading}>By rule</{heading}>",
        _html_rule_table(run, prefix),
        "</section>",
    ]
    ids = {"Failures": "failed", "Errored": "errored", "Stale baseline entries": "stale", "Skipped": "skipped"}
    for title_text, chosen in _sections(run):
        parts.append(f'<section id="{prefix}{ids[title_text]}"><{heading}>{title_text} ({len(chosen)})</{heading}>')
        parts += [_html_scenario(scenario, anchors[scenario["id"]]) for scenario in chosen]
        parts.append("</section>")
    if run["baselineProblems"]:
        parts.append(f'<section id="{prefix}baseline"><{heading}>Baseline problems</{heading}><ul>')
        parts += [
            f"<li><code>{_e(p['scenario'])}</code> ({_e(p['kind'])}): {_e(p['message'])}</li>"
            for p in run["baselineProblems"]
        ]
        parts.append("</ul></section>")
    return parts


def _html_legend(*, blank: str = "blank: the scenario does not exercise the rule") -> str:
    items = "".join(
        f'<span><i class="swatch {key}"></i>{_e(_SYMBOLS[key])} {_e(label)}</span>' for key, label in _LABELS.items()
    )
    return f'<p class="legend">{items}<span class="muted">{_e(blank)}</span></p>'


def _html_matrix(run: dict[str, Any], anchors: dict[str, str], prefix: str) -> str:
    rules = [tally["rule"] for tally in run["rules"]]
    head = "".join(f'<th class="rule" scope="col"><span>{_e(rule)}</span></th>' for rule in rules)
    tally_cells = "".join(
        f'<td class="{"failed" if tally["failed"] or tally["errored"] else "ok"}" '
        f'title="{_e(tally["rule"])}: {tally["failed"] + tally["errored"]} failing">'
        f"{tally['failed'] + tally['errored'] or ''}</td>"
        for tally in run["rules"]
    )
    rows: list[str] = []
    for scenario in run["scenarios"]:
        outcome = _outcome(scenario)
        anchor = anchors[scenario["id"]]
        exercised = set(scenario["rules"]) or {NO_RULE}
        cells = []
        for rule in rules:
            if rule in exercised:
                label = f"{scenario['id']} — {rule}: {_LABELS[outcome]}"
                link = f'<a href="#{anchor}">{_SYMBOLS[outcome]}</a>' if outcome != "passed" else _SYMBOLS[outcome]
                cells.append(f'<td class="cell {outcome}" title="{_e(label)}">{link}</td>')
            else:
                cells.append("<td></td>")
        rows.append(
            f'<tr class="row-{outcome}" data-scenario="{_e(scenario["id"])}">'
            f'<th scope="row"><span class="swatch {outcome}"></span>{_e(scenario["id"])}</th>{"".join(cells)}</tr>'
        )
    return (
        f'<div class="matrix-wrap"><table id="{prefix}matrix" class="matrix">'
        f'<thead><tr><th scope="col">scenario</th>{head}</tr>'
        f'<tr class="tally"><th scope="row">failing</th>{tally_cells}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _html_rule_table(run: dict[str, Any], prefix: str) -> str:
    keys = ("passed", "failed", "errored", "skipped", "known")
    head = "".join(f"<th>{key}</th>" for key in ("rule", *keys))
    body = "".join(
        f'<tr class="{"ok" if not (t["failed"] or t["errored"]) else "bad"}"><td>{_e(t["rule"])}</td>'
        + "".join(f"<td>{t[key]}</td>" for key in keys)
        + "</tr>"
        for t in run["rules"]
    )
    return f'<table class="rules" id="{prefix}rules"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _html_side_by_side(runs: list[dict[str, Any]]) -> list[str]:
    """The implementations side by side: a table per rule and a table per scenario, one column each."""
    columns = "".join(f'<th scope="col">{_e(_column(run, index))}</th>' for index, run in enumerate(runs))
    tallies = [{tally["rule"]: tally for tally in run["rules"]} for run in runs]
    rules = list(dict.fromkeys(rule for by_rule in tallies for rule in by_rule))
    rule_rows = []
    for rule in rules:
        cells = "".join(
            f'<td class="cell {_tally_outcome(by_rule[rule])}">{_e(_tally_text(by_rule[rule]))}</td>'
            if rule in by_rule
            else '<td class="cell not-run"></td>'
            for by_rule in tallies
        )
        rule_rows.append(f'<tr><th scope="row">{_e(rule)}</th>{cells}</tr>')
    by_ids = [_by_id(run) for run in runs]
    anchors = [
        {scenario["id"]: f"i{k}-s{j}" for j, scenario in enumerate(run["scenarios"])} for k, run in enumerate(runs)
    ]
    scenario_rows = []
    for scenario_id, scenario_rules in _side_by_side_ids(runs):
        cells = "".join(
            _html_side_cell(by_id.get(scenario_id), anchors[k].get(scenario_id, "")) for k, by_id in enumerate(by_ids)
        )
        scenario_rows.append(
            f'<tr data-scenario="{_e(scenario_id)}"><th scope="row"><code>{_e(scenario_id)}</code></th>'
            f'<td class="muted">{_e(", ".join(scenario_rules) or NO_RULE)}</td>{cells}</tr>'
        )
    return [
        "<section><h2>By rule, side by side</h2>",
        f'<div class="side-wrap"><table class="side" id="rules-side-by-side"><thead><tr><th scope="col">rule</th>'
        f"{columns}</tr></thead><tbody>{''.join(rule_rows)}</tbody></table></div></section>",
        "<section><h2>By scenario, side by side</h2>",
        _html_legend(blank="not run: the run was interrupted before the scenario"),
        f'<div class="side-wrap"><table class="side" id="side-by-side"><thead><tr><th scope="col">scenario</th>'
        f'<th scope="col">rules</th>{columns}</tr></thead><tbody>{"".join(scenario_rows)}</tbody></table></div>',
        "</section>",
    ]


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


def _html_excerpt(excerpt: Excerpt | None, side: str) -> str:
    if excerpt is None:
        return f'<pre class="{side}">{_e("<nothing>")}</pre>'
    offsets = f'<span class="muted offsets">{_e(excerpt.offsets)}</span>' if not excerpt.whole else ""
    return f'<pre class="{side}">{_e(excerpt.marked)}</pre>{offsets}'


def _html_scenario(scenario: dict[str, Any], anchor: str) -> str:
    outcome = _outcome(scenario)
    rules = ", ".join(scenario["rules"]) or "no rule"
    parts = [
        f'<div class="scenario {outcome}-box" id="{anchor}">',
        f'<strong><code>{_e(scenario["id"])}</code></strong> <span class="muted">[{_e(rules)}]'
        f"{_e(_golden_note(scenario))}</span>",
    ]
    if scenario["description"]:
        parts.append(f'<div class="muted">{_e(scenario["description"])}</div>')
    baseline = scenario.get("baseline")
    if baseline is not None:
        parts.append(f"<div>baseline: {_e(baseline['verdict'])} {_e(baseline['note'])}</div>")
    if scenario["status"] == "failed" and scenario.get("differences"):
        first = scenario["differences"][0]
        detail = f" — {_e(first['detail'])}" if first["detail"] else ""
        expected, actual = excerpts(first["expected"], first["actual"])
        parts.append(
            f'<div class="diff"><span>first difference</span><code>{_e(first["path"])}</code>'
            f"<span>kind</span><span>{_e(first['kind'])}{detail}</span>"
            f"<span>expected</span><div>{_html_excerpt(expected, 'expected')}</div>"
            f"<span>actual</span><div>{_html_excerpt(actual, 'actual')}</div></div>"
        )
        more = scenario["differenceCount"] - 1
        if more > 0:
            listed = "".join(
                f"<li><code>{_e(d['path'])}</code> ({_e(d['kind'])})</li>" for d in scenario["differences"][1:]
            )
            parts.append(f"<details><summary>{more} more difference(s)</summary><ul>{listed}</ul></details>")
    elif "message" in scenario:
        parts.append(f"<div>{_e(scenario['message'])}</div>")
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
