"""Conformance reports: the machine form (JSON, with a schema), Markdown, and one self-contained HTML page.

:func:`report_json` turns a run's :class:`~toolcontract_conformance.runner.SuiteResult` into the JSON report
(``schemas/report.schema.json``). The other forms are written from that JSON alone, so a saved report can be
rendered again later (``toolcontract report FILE --format md|html``).
"""

from __future__ import annotations

import html
import json
from importlib import metadata
from typing import Any, Literal, TypeAlias

from toolcontract_conformance._schemas import load_schema, schema_errors
from toolcontract_conformance.protocol import PROTOCOL_VERSION, info_to_wire
from toolcontract_conformance.runner import ScenarioResult, SuiteResult

__all__ = [
    "REPORT_FORMAT_VERSION",
    "ReportError",
    "ReportFormat",
    "render",
    "report_html",
    "report_json",
    "report_markdown",
    "report_schema",
    "validate_report",
]

REPORT_FORMAT_VERSION = 1
ReportFormat: TypeAlias = Literal["json", "md", "html"]

_DIFFERENCES_KEPT = 20
_STATUSES = ("passed", "failed", "errored", "skipped")


class ReportError(ValueError):
    """A JSON report that does not follow ``schemas/report.schema.json``."""


def report_schema() -> dict[str, Any]:
    """The JSON Schema of a JSON report."""
    return load_schema("report.schema.json")


def validate_report(report: Any) -> None:
    """Raise :class:`ReportError` listing every violation of the report schema."""
    errors = schema_errors("report.schema.json", report)
    if errors:
        raise ReportError("not a conformance report: " + "; ".join(errors[:10]))


def _kit_version() -> str:
    try:
        return metadata.version("toolcontract")
    except metadata.PackageNotFoundError:
        return "unknown"


def _scenario_json(result: ScenarioResult) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": result.scenario,
        "description": result.description,
        "rules": list(result.rules),
        "status": result.status,
        "seconds": round(result.seconds, 6),
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
    if result.baseline is not None:
        entry["baseline"] = {"verdict": result.baseline, "note": result.baseline_note}
    entry["countsAsFailure"] = result.counts_as_failure
    return entry


def report_json(suite: SuiteResult) -> dict[str, Any]:
    """The JSON report of a run (``schemas/report.schema.json``)."""
    scenarios_by_rule: dict[str, list[str]] = {}
    for result in suite.results:
        for rule in result.rules or ("(no rule)",):
            scenarios_by_rule.setdefault(rule, []).append(result.scenario)
    rules = [
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
    ]
    return {
        "formatVersion": REPORT_FORMAT_VERSION,
        "kit": {"name": "toolcontract", "version": _kit_version(), "protocolVersion": PROTOCOL_VERSION},
        "implementation": info_to_wire(suite.implementation),
        "started": suite.started,
        "seconds": round(suite.seconds, 6),
        "ok": suite.ok,
        "summary": {
            "total": len(suite.results),
            "passed": suite.count("passed"),
            "failed": suite.count("failed"),
            "errored": suite.count("errored"),
            "skipped": suite.count("skipped"),
            "knownFailures": suite.known_failures,
            "baselineProblems": len(suite.baseline_problems),
        },
        "rules": rules,
        "scenarios": [_scenario_json(result) for result in suite.results],
        "baselineProblems": [
            {"scenario": problem.scenario, "kind": problem.kind, "message": problem.message}
            for problem in suite.baseline_problems
        ],
    }


def render(report: dict[str, Any], form: ReportFormat) -> str:
    """The report written in ``form`` (the JSON form is indented, with a final newline)."""
    if form == "json":
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    if form == "md":
        return report_markdown(report)
    return report_html(report)


# --- shared wording --------------------------------------------------------------------------------------


def _headline(report: dict[str, Any]) -> str:
    summary = report["summary"]
    parts = [f"{summary[status]} {status}" for status in _STATUSES]
    if summary["knownFailures"]:
        parts.append(f"{summary['knownFailures']} known failure(s)")
    if summary["baselineProblems"]:
        parts.append(f"{summary['baselineProblems']} baseline problem(s)")
    verdict = "PASS" if report["ok"] else "FAIL"
    return f"{verdict}: {', '.join(parts)} of {summary['total']} scenarios in {report['seconds']:.2f} s"


def _implementation_line(report: dict[str, Any]) -> str:
    implementation = report["implementation"]
    return f"{implementation['name']} {implementation['version']} ({implementation['language']})"


def _outcome(scenario: dict[str, Any]) -> str:
    """The class a scenario shows as: its status, or the baseline's view of it."""
    verdict = scenario.get("baseline", {}).get("verdict")
    if verdict == "known-failure":
        return "known"
    if verdict == "stale":
        return "stale"
    return str(scenario["status"])


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


def report_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: headline, metadata, a table by rule, then failures, errors and skips."""
    implementation = report["implementation"]
    lines = [
        f"# Conformance report: {_implementation_line(report)}",
        "",
        f"**{_headline(report)}**",
        "",
        f"- capabilities: {', '.join(implementation['capabilities']) or 'none'}",
    ]
    for key in ("homepage", "issues"):
        if key in implementation:
            lines.append(f"- {key}: {implementation[key]}")
    kit = report["kit"]
    lines.append(f"- kit: {kit['name']} {kit['version']}, protocol version {kit['protocolVersion']}")
    lines.append(f"- started: {report['started']}")
    lines += [
        "",
        "## By rule",
        "",
        "| Rule | Passed | Failed | Errored | Skipped | Known |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for tally in report["rules"]:
        counts = " | ".join(str(tally[key]) for key in ("passed", "failed", "errored", "skipped", "known"))
        lines.append(f"| {_md_cell(tally['rule'])} | {counts} |")
    sections: list[tuple[str, list[dict[str, Any]]]] = [
        ("Failures", [s for s in report["scenarios"] if s["status"] == "failed"]),
        ("Errored", [s for s in report["scenarios"] if s["status"] == "errored"]),
        ("Skipped", [s for s in report["scenarios"] if s["status"] == "skipped"]),
    ]
    for title, scenarios in sections:
        if not scenarios:
            continue
        lines += ["", f"## {title}", ""]
        for scenario in scenarios:
            lines += _md_scenario(scenario)
    if report["baselineProblems"]:
        lines += ["", "## Baseline problems", ""]
        lines += [f"- {_md_code(p['scenario'])} ({p['kind']}): {p['message']}" for p in report["baselineProblems"]]
    return "\n".join(lines) + "\n"


def _md_scenario(scenario: dict[str, Any]) -> list[str]:
    rules = ", ".join(scenario["rules"]) or "no rule"
    head = f"- {_md_code(scenario['id'])} [{rules}]"
    baseline = scenario.get("baseline")
    if baseline is not None:
        head += f" — baseline: {baseline['verdict']}" + (f" ({baseline['note']})" if baseline["note"] else "")
    lines = [head]
    if scenario["status"] == "failed" and scenario.get("differences"):
        first = scenario["differences"][0]
        detail = f", {first['detail']}" if first["detail"] else ""
        lines.append(f"  - first difference at {_md_code(first['path'])} ({first['kind']}{detail})")
        lines.append(f"    - expected: {_md_code(first['expected'] or '<nothing>')}")
        lines.append(f"    - actual: {_md_code(first['actual'] or '<nothing>')}")
        if scenario["differenceCount"] > 1:
            lines.append(f"  - {scenario['differenceCount'] - 1} more difference(s)")
    elif "message" in scenario:
        lines.append(f"  - {scenario['message']}")
    return lines


# --- HTML ------------------------------------------------------------------------------------------------

_CSS = """
:root { --passed: #2e7d32; --failed: #c62828; --errored: #6a1b9a; --skipped: #9e9e9e;
        --known: #f9a825; --stale: #ef6c00; --ink: #1b1b1b; --rule: #d0d0d0; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 24px; }
h1 { font-size: 22px; margin: 0 0 8px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--rule); padding-bottom: 4px; }
code, pre { font: 12.5px/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
.verdict { display: inline-block; padding: 4px 10px; border-radius: 4px; color: #fff; font-weight: 600; }
.verdict.pass { background: var(--passed); } .verdict.fail { background: var(--failed); }
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
td.cell a { color: inherit; text-decoration: none; display: block; }
table.rules { border-collapse: collapse; } table.rules th, table.rules td { border: 1px solid var(--rule);
  padding: 3px 8px; text-align: right; } table.rules th:first-child, table.rules td:first-child { text-align: left; }
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
    """The report as one self-contained HTML page (inline CSS, no script, nothing fetched)."""
    scenarios: list[dict[str, Any]] = report["scenarios"]
    anchors = {scenario["id"]: f"s{index}" for index, scenario in enumerate(scenarios)}
    title = f"Conformance: {_implementation_line(report)}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<header><h1>{_e(title)}</h1>",
        f'<p id="verdict" class="verdict {"pass" if report["ok"] else "fail"}">{_e(_headline(report))}</p>',
        _html_metadata(report),
        "</header>",
        "<section><h2>Rules × scenarios</h2>",
        _html_legend(),
        _html_matrix(report, anchors),
        "</section>",
        "<section><h2>By rule</h2>",
        _html_rule_table(report),
        "</section>",
    ]
    for title_text, status in (("Failures", "failed"), ("Errored", "errored"), ("Skipped", "skipped")):
        chosen = [s for s in scenarios if s["status"] == status]
        if chosen:
            parts.append(f'<section id="{status}"><h2>{title_text} ({len(chosen)})</h2>')
            parts += [_html_scenario(scenario, anchors[scenario["id"]]) for scenario in chosen]
            parts.append("</section>")
    if report["baselineProblems"]:
        parts.append('<section id="baseline"><h2>Baseline problems</h2><ul>')
        parts += [
            f"<li><code>{_e(p['scenario'])}</code> ({_e(p['kind'])}): {_e(p['message'])}</li>"
            for p in report["baselineProblems"]
        ]
        parts.append("</ul></section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _html_metadata(report: dict[str, Any]) -> str:
    implementation = report["implementation"]
    rows = [
        ("implementation", implementation["name"]),
        ("language", implementation["language"]),
        ("version", implementation["version"]),
        ("capabilities", ", ".join(implementation["capabilities"]) or "none"),
    ]
    rows += [(key, implementation[key]) for key in ("homepage", "issues") if key in implementation]
    kit = report["kit"]
    rows += [
        ("kit", f"{kit['name']} {kit['version']} (protocol version {kit['protocolVersion']})"),
        ("started", report["started"]),
        ("duration", f"{report['seconds']:.2f} s"),
    ]
    items = "".join(f"<dt>{_e(key)}</dt><dd>{_e(value)}</dd>" for key, value in rows)
    return f'<dl class="meta" id="implementation">{items}</dl>'


def _html_legend() -> str:
    items = "".join(
        f'<span><i class="swatch {key}"></i>{_e(_SYMBOLS[key])} {_e(label)}</span>' for key, label in _LABELS.items()
    )
    return f'<p class="legend">{items}<span class="muted">blank: the scenario does not exercise the rule</span></p>'


def _html_matrix(report: dict[str, Any], anchors: dict[str, str]) -> str:
    rules = [tally["rule"] for tally in report["rules"]]
    head = "".join(f'<th class="rule" scope="col"><span>{_e(rule)}</span></th>' for rule in rules)
    tally_cells = "".join(
        f'<td class="{"failed" if tally["failed"] or tally["errored"] else "ok"}" '
        f'title="{_e(tally["rule"])}: {tally["failed"] + tally["errored"]} failing">'
        f"{tally['failed'] + tally['errored'] or ''}</td>"
        for tally in report["rules"]
    )
    rows: list[str] = []
    for scenario in report["scenarios"]:
        outcome = _outcome(scenario)
        anchor = anchors[scenario["id"]]
        exercised = set(scenario["rules"]) or {"(no rule)"}
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
        '<div class="matrix-wrap"><table id="matrix" class="matrix">'
        f'<thead><tr><th scope="col">scenario</th>{head}</tr>'
        f'<tr class="tally"><th scope="row">failing</th>{tally_cells}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _html_rule_table(report: dict[str, Any]) -> str:
    keys = ("passed", "failed", "errored", "skipped", "known")
    head = "".join(f"<th>{key}</th>" for key in ("rule", *keys))
    body = "".join(
        f'<tr class="{"ok" if not (t["failed"] or t["errored"]) else "bad"}"><td>{_e(t["rule"])}</td>'
        + "".join(f"<td>{t[key]}</td>" for key in keys)
        + "</tr>"
        for t in report["rules"]
    )
    return f'<table class="rules" id="rules"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _html_scenario(scenario: dict[str, Any], anchor: str) -> str:
    outcome = _outcome(scenario)
    rules = ", ".join(scenario["rules"]) or "no rule"
    parts = [
        f'<div class="scenario {outcome}-box" id="{anchor}">',
        f'<strong><code>{_e(scenario["id"])}</code></strong> <span class="muted">[{_e(rules)}]</span>',
    ]
    if scenario["description"]:
        parts.append(f'<div class="muted">{_e(scenario["description"])}</div>')
    baseline = scenario.get("baseline")
    if baseline is not None:
        parts.append(f"<div>baseline: {_e(baseline['verdict'])} {_e(baseline['note'])}</div>")
    if scenario["status"] == "failed" and scenario.get("differences"):
        first = scenario["differences"][0]
        detail = f" — {_e(first['detail'])}" if first["detail"] else ""
        parts.append(
            f'<div class="diff"><span>first difference</span><code>{_e(first["path"])}</code>'
            f"<span>kind</span><span>{_e(first['kind'])}{detail}</span>"
            f'<span>expected</span><pre class="expected">{_e(first["expected"] or "<nothing>")}</pre>'
            f'<span>actual</span><pre class="actual">{_e(first["actual"] or "<nothing>")}</pre></div>'
        )
        more = scenario["differenceCount"] - 1
        if more > 0:
            listed = "".join(
                f"<li><code>{_e(d['path'])}</code> ({_e(d['kind'])})</li>" for d in scenario["differences"][1:]
            )
            parts.append(f"<details><summary>{more} more difference(s)</summary><ul>{listed}</ul></details>")
    elif "message" in scenario:
        parts.append(f"<div>{_e(scenario['message'])}</div>")
    if scenario["status"] == "errored" and scenario.get("context"):
        context = json.dumps(scenario["context"], indent=2, ensure_ascii=False)
        parts.append(f"<details><summary>context</summary><pre>{_e(context)}</pre></details>")
    parts.append("</div>")
    return "".join(parts)
