"""The ``toolcontract`` command: check an implementation, render reports, list the cases, render and replay.

Exit status: 0 when everything asked for succeeded (``check``: every scenario passed, was skipped, or is a
known failure of the baseline); 1 when ``check`` found a failure; 2 for a usage error or when the
implementation could not be started.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from toolcontract_conformance._schemas import load_schema
from toolcontract_conformance.adapters.inprocess import InProcess
from toolcontract_conformance.adapters.subprocess import Subprocess
from toolcontract_conformance.baseline import Baseline, BaselineError, KnownFailure
from toolcontract_conformance.exceptions import AdapterError
from toolcontract_conformance.implementation import Implementation
from toolcontract_conformance.report import ReportError, ReportFormat, render, report_json, validate_report
from toolcontract_conformance.runner import (
    NO_RULE,
    ScenarioResult,
    SuiteResult,
    golden_directory,
    rule_sort_key,
    run_suite,
    select,
)

__all__ = ["DEFAULT_IMPLEMENTATION", "main"]

#: The implementation ``check`` runs when given none: the bundled reference, in-process.
DEFAULT_IMPLEMENTATION = "toolcontract_conformance.adapters.reference:implementation"

_DELEGATED = {
    "render": ("toolcontract_conformance.render_cli", "render_command", "render a value with a first-party renderer"),
    "replay": ("toolcontract_conformance.replay_cli", "replay_command", "derive the model messages from a session log"),
}


class _UsageError(Exception):
    """A problem with what the user asked for: reported in one line, exit status 2."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``toolcontract`` command with ``argv`` (default: the process arguments); return its status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in _DELEGATED:
        return _delegate(arguments[0], arguments[1:])
    parser = _parser()
    options = parser.parse_args(arguments)
    if options.command is None:
        parser.print_help(sys.stderr)
        return 2
    handler: Callable[[argparse.Namespace], int] = options.handler
    try:
        return handler(options)
    except _UsageError as error:
        print(f"toolcontract {options.command}: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (``toolcontract cases | head``): stop quietly, as a killed pipe writer would.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolcontract",
        description="The conformance kit of the canonical tool output contract.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser("check", help="run the scenarios against an implementation")
    implementation = check.add_mutually_exclusive_group()
    implementation.add_argument(
        "--impl", metavar="MODULE:ATTR", help=f"a Python object (default: {DEFAULT_IMPLEMENTATION})"
    )
    implementation.add_argument("--impl-cmd", metavar="CMD", help="a command speaking the adapter protocol")
    check.add_argument("-k", dest="pattern", metavar="PATTERN", help="only scenarios whose id contains PATTERN")
    check.add_argument("--rule", action="append", default=[], metavar="R-…", help="only scenarios of this rule")
    check.add_argument("--baseline", metavar="FILE", help="a baseline file of known failures")
    check.add_argument("--write-baseline", metavar="FILE", help="write the run's failures as a baseline file")
    check.add_argument("--report", metavar="FILE", help="write the report (.json, .md or .html, by suffix)")
    check.add_argument("--validate-protocol", action="store_true", help="check every message against the schemas")
    check.add_argument("--timeout", type=float, metavar="S", help="seconds per scenario (--impl-cmd default: 30)")
    check.add_argument("--startup-timeout", type=float, default=30.0, metavar="S", help="seconds to answer start")
    _data_options(check, goldens=True)
    check.add_argument("--schema", action="store_true", help="print the JSON Schema of the report and exit")
    check.set_defaults(handler=_check)

    report = commands.add_parser("report", help="render a JSON report as JSON, Markdown or HTML")
    report.add_argument("file", nargs="?", metavar="FILE", help="a JSON report (toolcontract check --report)")
    report.add_argument("--format", choices=("json", "md", "html"), default="md")
    report.add_argument("-o", "--output", metavar="OUT", help="write there instead of standard output")
    report.add_argument("--schema", action="store_true", help="print the JSON Schema of a JSON report and exit")
    report.set_defaults(handler=_report)

    cases = commands.add_parser("cases", help="list the scenarios and the rules they exercise")
    cases.add_argument("--rule", action="append", default=[], metavar="R-…", help="only scenarios of this rule")
    cases.add_argument("-k", dest="pattern", metavar="PATTERN", help="only scenarios whose id contains PATTERN")
    cases.add_argument("--format", choices=("text", "json"), default="text")
    _data_options(cases, goldens=False)
    cases.add_argument("--schema", action="store_true", help="print the JSON Schema of --format json and exit")
    cases.set_defaults(handler=_cases)

    for name, (_module, _function, summary) in _DELEGATED.items():
        commands.add_parser(name, help=summary, add_help=False)
    return parser


def _data_options(parser: argparse.ArgumentParser, *, goldens: bool) -> None:
    parser.add_argument("--scenarios", metavar="DIR", help="scenario files (default: the kit's own)")
    if goldens:
        parser.add_argument("--goldens", metavar="DIR", help="golden transcripts, <id>.json (default: the kit's)")


def _print_schema(file_name: str) -> int:
    print(json.dumps(load_schema(file_name), indent=2, ensure_ascii=False))
    return 0


# --- check -----------------------------------------------------------------------------------------------


def _load_scenarios(directory: str | None) -> list[dict[str, Any]]:
    from toolcontract_conformance.scenario import ScenarioError, load_scenarios

    try:
        return [scenario.data for scenario in load_scenarios(directory)]
    except (ScenarioError, FileNotFoundError) as error:
        raise _UsageError(str(error)) from None


def _goldens_dir(directory: str | None) -> Path:
    if directory is not None:
        return Path(directory)
    from toolcontract_conformance.locations import goldens_dir

    try:
        return goldens_dir()
    except FileNotFoundError as error:
        raise _UsageError(str(error)) from None


def _implementation(options: argparse.Namespace) -> Implementation:
    if options.impl_cmd:
        return Subprocess(
            options.impl_cmd,
            timeout=30.0 if options.timeout is None else options.timeout,
            startup_timeout=options.startup_timeout,
            validate_protocol=options.validate_protocol,
        )
    return InProcess(options.impl or DEFAULT_IMPLEMENTATION, timeout=options.timeout)


def _check(options: argparse.Namespace) -> int:
    if options.schema:
        return _print_schema("report.schema.json")
    everything = _load_scenarios(options.scenarios)
    chosen = select(everything, pattern=options.pattern, rules=options.rule)
    if not chosen:
        raise _UsageError("no scenario matches the selection")
    try:
        baseline = Baseline.load(options.baseline) if options.baseline else None
    except BaselineError as error:
        raise _UsageError(str(error)) from None
    implementation = _implementation(options)
    bar = _ProgressBar(sys.stderr) if sys.stderr.isatty() else None
    try:
        suite = run_suite(
            implementation,
            chosen,
            golden_directory(_goldens_dir(options.goldens)),
            baseline=baseline,
            all_ids={str(scenario["id"]) for scenario in everything},
            progress=None if bar is None else bar.update,
        )
    except AdapterError as error:
        print(f"toolcontract check: cannot run {implementation!r}: {error}", file=sys.stderr)
        return 2
    finally:
        if bar is not None:
            bar.clear()
    print(summary_text(suite))
    if options.report:
        _write_report(suite, Path(options.report))
    if options.write_baseline:
        _write_baseline(suite, Path(options.write_baseline))
    return 0 if suite.ok else 1


def summary_text(suite: SuiteResult) -> str:
    """The table by rule, then what did not pass, then a one-line verdict."""
    info = suite.implementation
    lines = [f"{info.name} {info.version} ({info.language})", "", _rule_table(suite)]
    failing = [result for result in suite.results if result.counts_as_failure]
    if failing:
        lines += ["", f"Not passing ({len(failing)}):"]
        lines += [_indent(result.explain()) for result in failing]
    known = [result for result in suite.results if result.baseline == "known-failure"]
    if known:
        lines += ["", f"Known failures, listed in the baseline ({len(known)}):"]
        lines += [
            f"  {result.scenario}" + (f" — {result.baseline_note}" if result.baseline_note else "") for result in known
        ]
    skipped = [result for result in suite.results if result.status == "skipped"]
    if skipped:
        lines += ["", f"Skipped ({len(skipped)}):"]
        lines += [
            f"  {result.scenario}: {result.message}" + (f" ({result.issue_url})" if result.issue_url else "")
            for result in skipped
        ]
    if suite.baseline_problems:
        lines += ["", "Baseline problems:"]
        lines += [f"  {problem.scenario}: {problem.message}" for problem in suite.baseline_problems]
    counts = ", ".join(f"{suite.count(status)} {status}" for status in ("passed", "failed", "errored", "skipped"))
    if suite.known_failures:
        counts += f", {suite.known_failures} known"
    lines += [
        "",
        f"{'PASS' if suite.ok else 'FAIL'}: {counts} of {len(suite.results)} scenarios in {suite.seconds:.2f} s",
    ]
    return "\n".join(lines)


def _rule_table(suite: SuiteResult) -> str:
    tallies = suite.by_rule()
    columns = ("passed", "failed", "errored", "skipped", "known")
    width = max([len("rule"), len(NO_RULE), *(len(rule) for rule in tallies)])
    header = "rule".ljust(width) + "".join(column.rjust(9) for column in columns)
    rows = [header, "-" * len(header)]
    for rule, tally in tallies.items():
        mark = "" if tally.ok else "  ✗"
        rows.append(rule.ljust(width) + "".join(str(getattr(tally, c)).rjust(9) for c in columns) + mark)
    return "\n".join(rows)


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def _write_report(suite: SuiteResult, file: Path) -> None:
    suffixes: dict[str, ReportFormat] = {".md": "md", ".html": "html", ".htm": "html"}
    form = suffixes.get(file.suffix.lower(), "json")
    file.write_text(render(report_json(suite), form), encoding="utf-8")


def _write_baseline(suite: SuiteResult, file: Path) -> None:
    entries: dict[str, KnownFailure] = {}
    for result in suite.results:
        if result.status == "failed":
            paths = tuple(dict.fromkeys(difference.path for difference in result.differences))
            entries[result.scenario] = KnownFailure(result.scenario, paths, "")
        elif result.status == "errored":
            entries[result.scenario] = KnownFailure(result.scenario, (), result.message)
    text = json.dumps(Baseline(entries).to_json(), indent=2, ensure_ascii=False) + "\n"
    file.write_text(text, encoding="utf-8")


class _ProgressBar:
    """A one-line progress bar redrawn in place on a terminal."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.failing = 0

    def update(self, done: int, total: int, result: ScenarioResult) -> None:
        self.failing += result.counts_as_failure
        columns = shutil.get_terminal_size((80, 20)).columns
        counter = f" {done}/{total}" + (f" ({self.failing} failing)" if self.failing else "") + " "
        width = max(10, min(40, columns - len(counter) - 20))
        filled = width * done // max(total, 1)
        label = result.scenario[: max(0, columns - width - len(counter) - 3)]
        self.stream.write("\r\x1b[2K[" + "█" * filled + "·" * (width - filled) + "]" + counter + label)
        self.stream.flush()

    def clear(self) -> None:
        self.stream.write("\r\x1b[2K")
        self.stream.flush()


# --- report ----------------------------------------------------------------------------------------------


def _report(options: argparse.Namespace) -> int:
    if options.schema:
        return _print_schema("report.schema.json")
    if options.file is None:
        raise _UsageError("give the JSON report to render (toolcontract check --report FILE writes one)")
    try:
        report = json.loads(Path(options.file).read_text(encoding="utf-8"))
        validate_report(report)
    except (OSError, ValueError) as error:
        raise _UsageError(f"{options.file}: {error}") from None
    except ReportError as error:
        raise _UsageError(f"{options.file}: {error}") from None
    text = render(report, options.format)
    if options.output:
        Path(options.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


# --- cases -----------------------------------------------------------------------------------------------


def _rule_texts() -> dict[str, str]:
    try:
        from toolcontract_conformance.rules import load_rules

        return {rule.id: rule.text for rule in load_rules()}
    except (ImportError, OSError, ValueError):
        return {}


def _cases(options: argparse.Namespace) -> int:
    if options.schema:
        return _print_schema("cases.schema.json")
    chosen = select(_load_scenarios(options.scenarios), pattern=options.pattern, rules=options.rule)
    texts = _rule_texts()
    by_rule: dict[str, list[str]] = {}
    if not options.pattern:
        # Every rule of the contract is listed, the ones no scenario exercises too (with none).
        by_rule = {rule: [] for rule in texts if not options.rule or rule in options.rule}
    for scenario in chosen:
        for rule in scenario.get("rules") or (NO_RULE,):
            if not options.rule or rule in options.rule:
                by_rule.setdefault(str(rule), []).append(str(scenario["id"]))
    rules: list[dict[str, Any]] = []
    for rule in sorted(by_rule, key=rule_sort_key):
        entry: dict[str, Any] = {"rule": rule, "scenarios": by_rule[rule]}
        if rule in texts:
            entry["text"] = texts[rule]
        rules.append(entry)
    listing: dict[str, Any] = {
        "formatVersion": 1,
        "scenarios": [
            {
                "id": str(scenario["id"]),
                "rules": [str(rule) for rule in scenario.get("rules", ())],
                "requires": [str(capability) for capability in scenario.get("requires", ())],
                "description": str(scenario.get("description", "")),
            }
            for scenario in chosen
        ],
        "rules": rules,
    }
    if options.format == "json":
        print(json.dumps(listing, indent=2, ensure_ascii=False))
        return 0
    width = max((len(item["id"]) for item in listing["scenarios"]), default=10)
    print(f"{len(listing['scenarios'])} scenarios")
    for item in listing["scenarios"]:
        requires = f" (requires {', '.join(item['requires'])})" if item["requires"] else ""
        print(f"  {item['id'].ljust(width)}  {', '.join(item['rules']) or NO_RULE}{requires}")
    rule_width = max((len(entry["rule"]) for entry in rules), default=10)
    print(f"\n{len(rules)} rules")
    for entry in rules:
        text = entry.get("text", "")
        shown = text if len(text) <= 90 else text[:89] + "…"
        count = len(entry["scenarios"])
        print(f"  {entry['rule'].ljust(rule_width)}  {count:>3} scenario(s)" + (f"  {shown}" if shown else ""))
    return 0


# --- render / replay -------------------------------------------------------------------------------------


def _delegate(name: str, arguments: list[str]) -> int:
    module_name, function_name, _summary = _DELEGATED[name]
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        missing = "is not installed" if getattr(error, "name", None) == module_name else f"cannot be imported: {error}"
        print(f"toolcontract {name}: not available: the module {module_name} {missing}", file=sys.stderr)
        return 2
    command: Callable[[list[str]], int] = getattr(module, function_name)
    return int(command(arguments))
