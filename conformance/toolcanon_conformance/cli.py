"""The ``toolcanon`` command: check implementations, smoke-test and describe one, render reports, list and
export the cases, render and replay.

Commands: ``check`` (the scenarios against one or more implementations), ``smoke`` (the handshake and one
trivial scenario), ``info`` (an implementation's ``start`` metadata), ``report`` (a saved JSON report as JSON,
Markdown, HTML or a badge), ``cases`` (list the scenarios and rules, or ``--export`` them with their goldens),
``twins`` (the scenarios' values nested deeper and widened must keep their outcomes), and the delegated
``render``, ``replay`` and ``fuzz``. ``toolcanon --version`` prints the versions.

Exit status, the same for every command:

- 0: everything asked for succeeded (``check``: the verdict of every implementation's run is PASS; ``smoke``:
  its scenario passed);
- 1: a deviation: ``check`` found a failure, or a run in which nothing passed; ``smoke``'s scenario did not
  pass; a twin of ``twins`` did not keep its case's outcome;
- 2: a usage error, in one line, found before any scenario runs (an unknown ``--rule`` or ``--require``
  capability, an ``--impl`` that cannot be imported, an output file that cannot be written, a non-empty
  ``--export`` folder, a report that cannot be read), or an implementation could not be started;
- 130: interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from toolcanon_conformance._schemas import load_schema
from toolcanon_conformance.adapters.inprocess import BUNDLED_REFERENCE, InProcess, default_timeout
from toolcanon_conformance.adapters.subprocess import Subprocess
from toolcanon_conformance.arguments import whole_number
from toolcanon_conformance.baseline import Baseline, BaselineError, KnownFailure
from toolcanon_conformance.check_text import Layout, parse_parts, run_text, verdict_lines
from toolcanon_conformance.display import Style, colour_wanted, visible
from toolcanon_conformance.exceptions import AdapterError
from toolcanon_conformance.implementation import Implementation, ImplementationInfo, Outcome
from toolcanon_conformance.report import (
    Invocation,
    Policy,
    ReportError,
    ReportFormat,
    Run,
    read_report,
    render,
    report_json,
    run_json,
    verdict_line,
)
from toolcanon_conformance.runner import (
    DEFAULT_MAX_FAILURES,
    NO_RULE,
    ScenarioResult,
    SuiteResult,
    golden_directory,
    rule_sort_key,
    run_suite,
)
from toolcanon_conformance.selection import UnknownRule, known_rules, resolve_rules, select

__all__ = ["DEFAULT_IMPLEMENTATION", "main"]

#: The implementation ``check`` runs when given none: the bundled reference, in-process.
DEFAULT_IMPLEMENTATION = BUNDLED_REFERENCE

_DELEGATED = {
    "render": ("toolcanon_conformance.render_cli", "render_command", "render a value with a first-party renderer"),
    "replay": ("toolcanon_conformance.replay_cli", "replay_command", "derive the model messages from a session log"),
    "example": ("toolcanon_conformance.example_cli", "example_command", "write the adapter guide's example into DIR"),
    "fuzz": (
        "toolcanon_conformance.fuzz_cli",
        "fuzz_command",
        "generate scenarios and compare against the reference",
    ),
}

_CHECK_EPILOG = """\
Several implementations: give --impl and --impl-cmd as often as needed, in any mix; each runs the same
scenarios in turn (its own start and stop), and --report puts them side by side.
Pairing: a --baseline or --write-baseline belongs to the --impl or --impl-cmd given last before it, at most
one of each per implementation. With a single implementation it may stand anywhere. Example, a baseline for
the second implementation only:
  toolcanon check --impl pkg:impl --impl-cmd "node adapter.mjs" --baseline baseline.json
Selection: -k PATTERN takes the scenarios whose id contains PATTERN (ignoring case); --rule R-… those
exercising the rule (ignoring case; an unknown id is a usage error). Each is repeatable: a scenario matching
any -k is taken, and any --rule; both together take those matching a -k and a --rule.
Output, for each run: its name, one line each for the rules, known failures, skips and optional differences
(--show prints them whole), then every scenario that did not pass with its differences, and the verdict line
last; --failures-only keeps only those two. With several implementations, one verdict line each ends the output.
Exit status: 0 every run passed, 1 a run failed or nothing passed in it, 2 usage error or an implementation
could not be started, 130 interrupted."""

_SMOKE_EPILOG = """\
The scenario is pre-default-allow: one tool returning its argument, called once without any policy; it needs
no optional capability. Exit status: 0 it passed, 1 it did not (failed, errored or skipped), 2 usage error or
the implementation could not be started."""


_TWINS_EPILOG = """\
Each value a scenario normalizes against a schema (a tool's output, a call's arguments) runs as it is and in
twins nested deeper and widened past the reference's engine thresholds; a twin must give the same outcome, its
paths under the copy's prefix. No golden is read. Exit status: 0 every twin keeps its outcome, 1 one does not
(or a twin scenario errored), 2 usage error or the implementation could not be started."""


class _UsageError(Exception):
    """A problem with what the user asked for: reported in one line, exit status 2."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``toolcanon`` command with ``argv`` (default: the process arguments); return its status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in _DELEGATED:
        return _delegate(arguments[0], arguments[1:])
    _escape_what_cannot_be_encoded(sys.stdout)
    parser = _parser()
    options = parser.parse_args(arguments)
    if options.command is None:
        parser.print_help(sys.stderr)
        return 2
    handler: Callable[[argparse.Namespace], int] = options.handler
    try:
        return handler(options)
    except _UsageError as error:
        print(visible(f"toolcanon {options.command}: {error}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"toolcanon {options.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``toolcanon cases | head``): stop quietly, as a killed pipe writer would.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _escape_what_cannot_be_encoded(stream: IO[str]) -> None:
    # Output is made visible() already; this keeps a narrower encoding (PYTHONIOENCODING=ascii) from crashing.
    if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
        stream.reconfigure(errors="backslashreplace")


def _out(text: str) -> None:
    print(visible(text))


@dataclass(frozen=True, slots=True)
class _Terminal:
    """Where a command's text for people goes, coloured when that stream wants colour."""

    stream: IO[str]
    style: Style

    @classmethod
    def of(cls, stream: IO[str]) -> _Terminal:
        return cls(stream, Style(colour_wanted(stream)))

    def line(self, text: str = "") -> None:
        print(visible(text), file=self.stream)


class _Version(argparse.Action):
    """``--version``: the kit's, the reference's and the protocol's versions (read when asked, not before)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        from toolcanon_conformance.versions import version_text

        print(version_text())
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolcanon",
        description="The conformance kit of the canonical tool output contract.",
        epilog="Exit status: 0 success, 1 a deviation, 2 usage error or an implementation could not be started, "
        "130 interrupted.",
    )
    parser.add_argument(
        "--version", action=_Version, help="print the kit's version and the reference implementation's, and exit"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser(
        "check",
        help="run the scenarios against one or more implementations",
        epilog=_CHECK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.set_defaults(targets=[], baselines=[], written_baselines=[])
    check.add_argument(
        "--impl",
        action=_AddTarget,
        metavar="MODULE:ATTR",
        help=f"a Python object; repeatable (default, when neither option is given: {DEFAULT_IMPLEMENTATION})",
    )
    check.add_argument(
        "--impl-cmd",
        action=_AddTarget,
        metavar="CMD",
        help="a command speaking the adapter protocol; repeatable, in any mix with --impl",
    )
    _selection_options(check)
    check.add_argument(
        "--id",
        dest="ids",
        action="append",
        default=[],
        metavar="ID",
        help="only the scenario of exactly this id (repeatable; with -k and --rule, only those they take)",
    )
    check.add_argument(
        "--baseline",
        action=_PairWithTarget,
        dest="baselines",
        metavar="FILE",
        help="known failures of the implementation given last before it (see Pairing below)",
    )
    check.add_argument(
        "--write-baseline",
        action=_PairWithTarget,
        dest="written_baselines",
        metavar="FILE",
        help="write the failures of the implementation given last before it as a baseline file",
    )
    check.add_argument("--report", metavar="FILE", help="write the report (.json, .md or .html, by suffix)")
    check.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="json: print the JSON report (as --report FILE.json writes it) on standard output, "
        "the text on standard error",
    )
    check.add_argument(
        "--show",
        action="extend",
        type=parse_parts,
        default=[],
        metavar="PART[,PART]",
        help="print these whole instead of one line each: rules (the table by rule), skips (the skipped "
        "scenarios), known (the baseline's known failures), optional (the differences where the contract leaves "
        "the bytes open), all (repeatable)",
    )
    check.add_argument(
        "--failures-only",
        action="store_true",
        help="print only what did not pass, with its differences, and the verdict lines",
    )
    check.add_argument(
        "-q",
        "--quiet",
        action="count",
        default=0,
        help="--failures-only, and no progress bar; -qq: only the verdict line of each run (and errors)",
    )
    check.add_argument(
        "--require",
        action="append",
        default=[],
        metavar="CAPABILITY",
        help="fail a run whose implementation does not declare CAPABILITY (repeatable)",
    )
    check.add_argument("--fail-on-skip", action="store_true", help="fail a run in which any scenario was skipped")
    _connection_options(check)
    check.add_argument(
        "--max-failures",
        type=whole_number(0, "count"),
        default=DEFAULT_MAX_FAILURES,
        metavar="N",
        help=f"give up on an implementation after N scenarios in a row time out or crash (default "
        f"{DEFAULT_MAX_FAILURES}; 0: never): the rest are errored unsent",
    )
    _data_options(check, goldens=True)
    check.add_argument("--schema", action="store_true", help="print the JSON Schema of the report and exit")
    check.set_defaults(handler=_check)

    smoke = commands.add_parser(
        "smoke",
        help="start an implementation and run one trivial scenario",
        epilog=_SMOKE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _single_target_options(smoke)
    _connection_options(smoke)
    smoke.set_defaults(handler=_smoke)

    info = commands.add_parser("info", help="print what an implementation says about itself when started")
    _single_target_options(info)
    _connection_options(info)
    info.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="json: the metadata as one JSON object (selectedBy, implementation, protocolVersion); default text",
    )
    info.set_defaults(handler=_info)

    report = commands.add_parser("report", help="render a JSON report as JSON, Markdown, HTML or a badge")
    report.add_argument(
        "file", nargs="?", metavar="FILE", help="a JSON report (toolcanon check --report); - reads standard input"
    )
    report.add_argument(
        "--format",
        choices=("json", "md", "html", "trend", "badge"),
        default="md",
        help="trend: the passed, failed and known counts of each implementation in run order, and by rule family, "
        "as text; badge: a shields.io endpoint badge of one implementation",
    )
    report.add_argument("-o", "--output", metavar="OUT", help="write there instead of standard output")
    report.add_argument(
        "--impl-index",
        type=whole_number(1, "position"),
        metavar="N",
        help="badge: the Nth implementation of the report (from 1)",
    )
    report.add_argument("--impl-name", metavar="NAME", help="badge: the implementation of that name")
    report.add_argument("--label", metavar="TEXT", help="badge: the label (default: toolcanon)")
    report.add_argument("--schema", action="store_true", help="print the JSON Schema of a JSON report and exit")
    report.set_defaults(handler=_report)

    cases = commands.add_parser("cases", help="list the scenarios and the rules they exercise, or export them")
    _selection_options(cases)
    cases.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="json: the listing as one JSON object (--schema prints its schema); default text",
    )
    cases.add_argument(
        "--export",
        metavar="DIR",
        help="copy the selected scenarios, their goldens and the schemas into DIR "
        "(DIR/scenarios, DIR/goldens, DIR/schemas)",
    )
    cases.add_argument("--force", action="store_true", help="--export into a folder that is not empty")
    _data_options(cases, goldens=True)
    cases.add_argument("--schema", action="store_true", help="print the JSON Schema of --format json and exit")
    cases.set_defaults(handler=_cases)

    twins = commands.add_parser(
        "twins",
        help="check that the scenarios' values keep their outcomes when nested deeper and widened",
        epilog=_TWINS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _single_target_options(twins)
    _connection_options(twins)
    _selection_options(twins)
    twins.add_argument(
        "--sample",
        action="store_true",
        help="the first three small cases of each scenario, one twin each, in turn (default: every twin of every case)",
    )
    _data_options(twins, goldens=False)
    twins.set_defaults(handler=_twins)

    for name, (_module, _function, summary) in _DELEGATED.items():
        commands.add_parser(name, help=summary, add_help=False)
    return parser


def _selection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-k",
        dest="patterns",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only scenarios whose id contains PATTERN, ignoring case (repeatable: any of them)",
    )
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="R-…",
        help="only scenarios exercising this rule, ignoring case (repeatable: any of them)",
    )


def _connection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--validate-protocol", action="store_true", help="check every message against the schemas")
    parser.add_argument(
        "--timeout", type=float, metavar="S", help="seconds per scenario (default 30; the bundled reference: no limit)"
    )
    parser.add_argument("--startup-timeout", type=float, default=30.0, metavar="S", help="seconds to answer start")


def _single_target_options(parser: argparse.ArgumentParser) -> None:
    parser.set_defaults(targets=[])
    parser.add_argument(
        "--impl",
        action=_AddTarget,
        metavar="MODULE:ATTR",
        help=f"a Python object (default, when neither option is given: {DEFAULT_IMPLEMENTATION})",
    )
    parser.add_argument("--impl-cmd", action=_AddTarget, metavar="CMD", help="a command speaking the adapter protocol")


def _data_options(parser: argparse.ArgumentParser, *, goldens: bool) -> None:
    parser.add_argument("--scenarios", metavar="DIR", help="scenario files (default: the kit's own)")
    if goldens:
        parser.add_argument("--goldens", metavar="DIR", help="golden transcripts, <id>.json (default: the kit's)")


def _print_schema(file_name: str) -> int:
    print(json.dumps(load_schema(file_name), indent=2, ensure_ascii=False))
    return 0


# --- check: the command line -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Target:
    """One implementation named on the command line, with the baseline files paired with it."""

    option: str
    value: str
    baseline: str | None = None
    write_baseline: str | None = None

    def __str__(self) -> str:
        return f"{self.option} {self.value}"


class _AddTarget(argparse.Action):
    """``--impl`` / ``--impl-cmd``: one more implementation, in command-line order."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        namespace.targets = [*namespace.targets, _Target(option_string or self.option_strings[0], str(values))]


class _PairWithTarget(argparse.Action):
    """``--baseline`` / ``--write-baseline``: a file for the implementation named last before it.

    Each is recorded as (index of that implementation, -1 when none came before; the option; the file).
    """

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        pairs = getattr(namespace, self.dest)
        setattr(namespace, self.dest, [*pairs, (len(namespace.targets) - 1, option_string, str(values))])


def _targets(options: argparse.Namespace) -> list[_Target]:
    """The implementations to check, in order, each with its baseline files (usage errors raised here)."""
    targets: list[_Target] = list(options.targets)
    for target in targets:
        if not target.value.strip():
            raise _UsageError(f"{target.option} is empty: name the implementation (an unset variable?)")
    if not targets:
        targets = [_Target("--impl", DEFAULT_IMPLEMENTATION)]
    for field_name, pairs in (("baseline", options.baselines), ("write_baseline", options.written_baselines)):
        for index, option, file in pairs:
            if not file.strip():
                raise _UsageError(f"{option} is empty: name the file")
            if index < 0 and len(targets) > 1:
                raise _UsageError(
                    f"{option} {file} comes before every --impl/--impl-cmd: with several implementations, "
                    "give it right after the implementation it belongs to"
                )
            position = max(index, 0)
            if getattr(targets[position], field_name) is not None:
                raise _UsageError(
                    f"{targets[position]} has two {option} files: one per implementation, "
                    "each given after the implementation it belongs to"
                )
            targets[position] = replace(targets[position], **{field_name: file})
    return targets


def _writable(file: str, option: str) -> Path:
    """``file`` when it can be written; a usage error, before anything runs, otherwise."""
    path = Path(file)
    folder = path.parent
    if path.is_dir():
        raise _UsageError(f"{option} {file}: that is a folder")
    if not folder.exists():
        raise _UsageError(f"{option} {file}: the folder {folder} does not exist")
    if not folder.is_dir():
        raise _UsageError(f"{option} {file}: {folder} is not a folder")
    if not os.access(path if path.exists() else folder, os.W_OK):
        raise _UsageError(f"{option} {file}: permission denied")
    return path


def _outputs(options: argparse.Namespace, targets: list[_Target]) -> None:
    """Check every output file before any scenario runs: writable, and no file written twice."""
    named = [("--report", options.report)] if options.report else []
    named += [("--write-baseline", target.write_baseline) for target in targets if target.write_baseline]
    seen: dict[Path, str] = {}
    for option, file in named:
        if not file.strip():
            raise _UsageError(f"{option} is empty: name the file")
        path = _writable(file, option).resolve()
        if path in seen:
            raise _UsageError(f"{option} {file}: {seen[path]} writes that file already")
        seen[path] = f"{option} {file}"


def _policy(options: argparse.Namespace) -> Policy:
    for capability in options.require:
        if not capability.strip():
            raise _UsageError("--require is empty: name the capability")
    from toolcanon_conformance.protocol import UnknownCapability, resolve_capabilities

    try:
        required = resolve_capabilities(options.require)
    except UnknownCapability as error:
        raise _UsageError(str(error)) from None
    return Policy(required, options.fail_on_skip)


def _layout(options: argparse.Namespace) -> Layout:
    """What each run's text holds: ``--show``'s parts whole, or (``--failures-only``, ``-q``) the failures alone."""
    shown = frozenset(options.show)
    if shown and (options.failures_only or options.quiet):
        other = "--failures-only" if options.failures_only else "-q"
        raise _UsageError(f"--show prints what {other} leaves out: give one or the other")
    return Layout(shown, options.failures_only or options.quiet > 0)


def _selected(options: argparse.Namespace, everything: list[dict[str, Any]]) -> tuple[list[Any], tuple[str, ...]]:
    """The scenarios ``-k`` and ``--rule`` take, and the rules asked for (an unknown rule: a usage error)."""
    try:
        rules = resolve_rules(options.rule, known_rules(everything))
    except UnknownRule as error:
        raise _UsageError(str(error)) from None
    return select(everything, options.patterns, rules), rules


# --- check: the runs -------------------------------------------------------------------------------------


def _load_scenarios(directory: str | None) -> list[dict[str, Any]]:
    return _load_scenario_files(directory)[0]


def _load_scenario_files(directory: str | None) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The scenarios of a folder (default: the kit's), and the file of each id."""
    from toolcanon_conformance.scenario import ScenarioError, load_scenarios

    try:
        loaded = load_scenarios(directory)
    except (ScenarioError, FileNotFoundError) as error:
        raise _UsageError(str(error)) from None
    files = {scenario.id: os.path.abspath(scenario.source) for scenario in loaded if scenario.source is not None}
    return [scenario.data for scenario in loaded], files


def _with_ids(ids: Sequence[str], everything: list[dict[str, Any]], chosen: list[Any]) -> list[Any]:
    """``--id``: the chosen scenarios of exactly these ids (all of them when none is given)."""
    if not ids:
        return chosen
    known = {str(scenario["id"]) for scenario in everything}
    for scenario_id in ids:
        if scenario_id not in known:
            raise _UsageError(f"--id {scenario_id}: no scenario has that id")
    return [scenario for scenario in chosen if scenario["id"] in ids]


def _invocation(options: argparse.Namespace, files: dict[str, str], goldens: Path) -> Invocation:
    """How this check runs, as the report's command that runs one of its scenarios alone needs it."""
    words: list[str] = []
    if options.timeout is not None:
        words += ["--timeout", str(options.timeout)]
    if options.startup_timeout != 30.0:
        words += ["--startup-timeout", str(options.startup_timeout)]
    if options.validate_protocol:
        words.append("--validate-protocol")
    return Invocation(os.getcwd(), options.scenarios, options.goldens, tuple(words), files, os.path.abspath(goldens))


def _goldens_dir(directory: str | None) -> Path:
    if directory is not None:
        return Path(directory)
    from toolcanon_conformance.locations import goldens_dir

    try:
        return goldens_dir()
    except FileNotFoundError as error:
        raise _UsageError(str(error)) from None


def _implementation(target: _Target, options: argparse.Namespace) -> Implementation:
    if target.option == "--impl-cmd":
        try:
            return Subprocess(
                target.value,
                timeout=30.0 if options.timeout is None else options.timeout,
                startup_timeout=options.startup_timeout,
                validate_protocol=options.validate_protocol,
            )
        except ValueError as error:
            raise _UsageError(f"{target}: {error}") from None
    timeout = default_timeout(target.value) if options.timeout is None else options.timeout
    implementation = InProcess(target.value, timeout=timeout)
    try:
        implementation.resolve()  # now, so that an --impl that cannot be imported is known before anything runs
    except AdapterError as error:
        raise _UsageError(f"{target}: {error}") from None
    return implementation


def _baseline(target: _Target) -> Baseline | None:
    try:
        return Baseline.load(target.baseline) if target.baseline else None
    except BaselineError as error:
        raise _UsageError(str(error)) from None


class _Recorded:
    """An implementation that remembers its ``start`` answer, so that an interrupted run keeps its metadata."""

    def __init__(self, inner: Implementation) -> None:
        self.inner = inner
        self.info: ImplementationInfo | None = None

    def __repr__(self) -> str:
        return repr(self.inner)

    def start(self) -> ImplementationInfo:
        self.info = self.inner.start()
        return self.info

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        return self.inner.run(seq, scenario)

    def stop(self) -> None:
        self.inner.stop()


class _Interrupted(Exception):
    """Ctrl-C during a run: the scenarios that had finished, as a suite when the implementation had started."""

    def __init__(self, done: int, suite: SuiteResult | None) -> None:
        super().__init__("interrupted")
        self.done = done
        self.suite = suite


def _check(options: argparse.Namespace) -> int:
    if options.schema:
        return _print_schema("report.schema.json")
    targets = _targets(options)
    policy = _policy(options)
    _outputs(options, targets)
    everything, files = _load_scenario_files(options.scenarios)
    chosen, _rules = _selected(options, everything)
    chosen = _with_ids(options.ids, everything, chosen)
    if not chosen:
        raise _UsageError("no scenario matches the selection")
    terminal = _Terminal.of(sys.stderr if options.format == "json" else sys.stdout)
    layout = _layout(options)
    baselines = [_baseline(target) for target in targets]
    implementations = [_implementation(target, options) for target in targets]
    goldens_folder = _goldens_dir(options.goldens)
    goldens = golden_directory(goldens_folder)
    invocation = _invocation(options, files, goldens_folder)
    all_ids = {str(scenario["id"]) for scenario in everything}
    runs: list[Run] = []
    for position, target in enumerate(targets):
        try:
            suite = _run_one(
                implementations[position],
                chosen,
                goldens,
                baselines[position],
                all_ids,
                options.max_failures,
                progress_bar=not options.quiet,
            )
        except AdapterError as error:
            print(visible(f"toolcanon check: cannot run {implementations[position]!r}: {error}"), file=sys.stderr)
            return 2
        except _Interrupted as interrupted:
            if interrupted.suite is not None:
                selected_by = (target.option, target.value)
                runs.append(Run(interrupted.suite, selected_by, target.baseline, len(chosen), invocation))
            reached = interrupted.suite is not None
            not_run = targets[position + 1 :] if reached else targets[position:]
            return _interrupted(options, targets, position, runs, not_run, interrupted.done, len(chosen), policy)
        run = Run(suite, (target.option, target.value), target.baseline, len(chosen), invocation)
        runs.append(run)
        if options.quiet > 1:
            if len(targets) == 1:
                terminal.line(terminal.style.verdict(verdict_line(run_json(run, policy))))
            continue
        if len(targets) > 1:
            if position:
                terminal.line("")
            terminal.line(terminal.style.strong(f"[{position + 1}/{len(targets)}] {target}"))
        terminal.line(run_text(run, run_json(run, policy), layout=layout, policy=policy, style=terminal.style))
    report = report_json(runs, policy=policy)
    if len(runs) > 1:
        verdicts = verdict_lines(report, terminal.style)
        terminal.line("\n".join(verdicts if options.quiet > 1 else ["", f"{len(runs)} implementations:", *verdicts]))
    if options.report:
        _write_report(report, Path(options.report))
    if options.format == "json":
        sys.stdout.write(render(report, "json"))
        sys.stdout.flush()
    for target, run in zip(targets, runs, strict=True):
        if target.write_baseline:
            _write_baseline(run.suite, Path(target.write_baseline))
    return 0 if report["ok"] else 1


def _run_one(
    implementation: Implementation,
    chosen: list[Any],
    goldens: Callable[[str], bytes | None],
    baseline: Baseline | None,
    all_ids: set[str],
    max_failures: int = DEFAULT_MAX_FAILURES,
    *,
    progress_bar: bool = True,
) -> SuiteResult:
    """Run the scenarios against one implementation; Ctrl-C becomes :class:`_Interrupted` with what finished."""
    recorded = _Recorded(implementation)
    bar = _ProgressBar(sys.stderr) if progress_bar and sys.stderr.isatty() else None
    done: list[ScenarioResult] = []
    started = datetime.now(UTC).isoformat(timespec="seconds")
    began = time.perf_counter()

    def progress(count: int, total: int, result: ScenarioResult) -> None:
        done.append(result)
        if bar is not None:
            bar.update(count, total, result)

    try:
        return run_suite(
            recorded,
            chosen,
            goldens,
            baseline=baseline,
            all_ids=all_ids,
            progress=progress,
            max_failures=max_failures,
        )
    except KeyboardInterrupt:
        # run_suite has stopped the implementation on the way out.
        suite = None
        if recorded.info is not None:
            suite = SuiteResult(recorded.info, tuple(done), (), time.perf_counter() - began, started)
        raise _Interrupted(len(done), suite) from None
    finally:
        if bar is not None:
            bar.clear()


def _interrupted(
    options: argparse.Namespace,
    targets: list[_Target],
    position: int,
    runs: list[Run],
    not_run: list[_Target],
    done: int,
    selected: int,
    policy: Policy,
) -> int:
    """Say in one line how far the check got, and write the partial report; exit status 130."""
    line = f"interrupted after {done} of {selected} scenarios"
    if len(targets) > 1:
        line += f" of implementation {position + 1} of {len(targets)} ({targets[position]})"
    named = [(target.option, target.value) for target in not_run]
    partial = report_json(runs, policy=policy, not_run=named)
    if options.report:
        _write_report(partial, Path(options.report))
        line += f"; partial report written to {options.report}"
    if options.format == "json":
        sys.stdout.write(render(partial, "json"))
        sys.stdout.flush()
        line += "; partial report written to standard output"
    print(visible(f"toolcanon check: {line}"), file=sys.stderr)
    return 130


def _write_report(report: dict[str, Any], file: Path) -> None:
    suffixes: dict[str, ReportFormat] = {".md": "md", ".html": "html", ".htm": "html"}
    form = suffixes.get(file.suffix.lower(), "json")
    file.write_text(render(report, form), encoding="utf-8")


def _write_baseline(suite: SuiteResult, file: Path) -> None:
    entries: dict[str, KnownFailure] = {}
    for result in suite.results:
        if result.status == "failed":
            paths = tuple(dict.fromkeys(difference.path for difference in result.differences))
            entries[result.scenario] = KnownFailure(result.scenario, paths, "")
        elif result.status == "errored":
            entries[result.scenario] = KnownFailure(result.scenario, (), result.message)
    text = json.dumps(Baseline(entries).to_json(), indent=2, ensure_ascii=False) + "\n"
    file.write_text(visible(text), encoding="utf-8")


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
        label = visible(result.scenario)[: max(0, columns - width - len(counter) - 3)]
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
        raise _UsageError(
            "give the JSON report to render (toolcanon check --report FILE writes one; - reads it from standard input)"
        )
    badge_options = [
        option
        for option, value in (
            ("--impl-index", options.impl_index),
            ("--impl-name", options.impl_name),
            ("--label", options.label),
        )
        if value is not None
    ]
    if badge_options and options.format != "badge":
        raise _UsageError(f"{badge_options[0]} goes with --format badge")
    if options.output is not None:
        if not options.output.strip():
            raise _UsageError("-o is empty: name the file")
        _writable(options.output, "-o")
    report = _read_report(options.file)
    output = _badge_text(report, options) if options.format == "badge" else render(report, options.format)
    if options.output is None:
        sys.stdout.write(output)
        return 0
    try:
        Path(options.output).write_text(output, encoding="utf-8")
    except OSError as error:
        raise _UsageError(f"-o {options.output}: cannot write it: {error.strerror or error}") from None
    return 0


def _read_report(file: str) -> dict[str, Any]:
    """The JSON report in ``file`` (``-``: standard input); what is not one is a usage error naming the file."""
    source = "standard input" if file == "-" else file
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _UsageError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise _UsageError(f"{source}: that is a folder, not a JSON report") from None
    except OSError as error:
        raise _UsageError(f"{source}: cannot read it: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise _UsageError(f"{source}: not a JSON report (not UTF-8 text); {_WHICH_REPORT}") from None
    try:
        parsed = json.loads(text)
    except RecursionError:
        raise _UsageError(f"{source}: not a JSON report (nested too deep)") from None
    except ValueError as error:
        raise _UsageError(f"{source}: not a JSON report ({error}); {_WHICH_REPORT}") from None
    try:
        return read_report(parsed)
    except (ReportError, RecursionError) as error:
        reason = str(error) if isinstance(error, ReportError) else "not a conformance report: nested too deep"
        raise _UsageError(f"{source}: {reason}") from None


_WHICH_REPORT = "toolcanon report reads the JSON report that toolcanon check --report FILE.json writes"


def _badge_text(report: dict[str, Any], options: argparse.Namespace) -> str:
    from toolcanon_conformance.badge import DEFAULT_LABEL, BadgeError, badge, choose_run

    if options.impl_index is not None and options.impl_name is not None:
        raise _UsageError("--impl-index and --impl-name both pick the implementation: give one")
    try:
        run = choose_run(report, options.impl_index, options.impl_name)
    except BadgeError as error:
        raise _UsageError(str(error)) from None
    label = DEFAULT_LABEL if options.label is None else options.label
    return json.dumps(badge(run, label), ensure_ascii=False) + "\n"


# --- cases -----------------------------------------------------------------------------------------------


def _rule_texts() -> dict[str, str]:
    try:
        from toolcanon_conformance.rules import load_rules

        return {rule.id: rule.text for rule in load_rules()}
    except (ImportError, OSError, ValueError):
        return {}


def _cases(options: argparse.Namespace) -> int:
    if options.schema:
        return _print_schema("cases.schema.json")
    if options.force and not options.export:
        raise _UsageError("--force goes with --export DIR")
    if options.goldens is not None and not options.export:
        raise _UsageError("--goldens goes with --export DIR (cases lists the scenarios alone)")
    if options.export:
        return _export(options)
    chosen, wanted = _selected(options, _load_scenarios(options.scenarios))
    texts = _rule_texts()
    by_rule: dict[str, list[str]] = {}
    if not options.patterns:
        # Every rule of the contract is listed, the ones no scenario exercises too (with none).
        by_rule = {rule: [] for rule in texts if not wanted or rule in wanted}
    for scenario in chosen:
        for rule in scenario.get("rules") or (NO_RULE,):
            if not wanted or rule in wanted:
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
        _out(json.dumps(listing, indent=2, ensure_ascii=False))
        return 0
    width = max((len(item["id"]) for item in listing["scenarios"]), default=10)
    _out(f"{len(listing['scenarios'])} scenarios")
    for item in listing["scenarios"]:
        requires = f" (requires {', '.join(item['requires'])})" if item["requires"] else ""
        _out(f"  {item['id'].ljust(width)}  {', '.join(item['rules']) or NO_RULE}{requires}")
    rule_width = max((len(entry["rule"]) for entry in rules), default=10)
    _out(f"\n{len(rules)} rules")
    for entry in rules:
        text = entry.get("text", "")
        shown = text if len(text) <= 90 else text[:89] + "…"
        count = len(entry["scenarios"])
        _out(f"  {entry['rule'].ljust(rule_width)}  {count:>3} scenario(s)" + (f"  {shown}" if shown else ""))
    return 0


def _export(options: argparse.Namespace) -> int:
    """``cases --export DIR``: copy the selected scenarios, their goldens and the schemas; say how many, where."""
    from toolcanon_conformance.export import ExportError, export_cases
    from toolcanon_conformance.scenario import ScenarioError, load_scenarios

    if options.format != "text":
        raise _UsageError("--export lists what it wrote as text: leave out --format")
    try:
        scenarios = load_scenarios(options.scenarios)
    except (ScenarioError, FileNotFoundError) as error:
        raise _UsageError(str(error)) from None
    chosen, _rules = _selected(options, [scenario.data for scenario in scenarios])
    if not chosen:
        raise _UsageError("no scenario matches the selection")
    ids = {str(scenario["id"]) for scenario in chosen}
    destination = Path(options.export)
    try:
        exported = export_cases(
            [scenario for scenario in scenarios if scenario.id in ids],
            _goldens_dir(options.goldens),
            destination,
            force=options.force,
        )
    except ExportError as error:
        raise _UsageError(f"--export {options.export}: {error}") from None
    without = len(exported.scenarios) - len(exported.goldens)
    _out(
        f"wrote {len(exported.scenarios)} scenarios, {len(exported.goldens)} goldens and {len(exported.schemas)} "
        f"schemas to {destination} (scenarios/, goldens/, schemas/)"
        + (f"; {without} scenario(s) without a golden" if without else "")
    )
    return 0


# --- smoke / info ----------------------------------------------------------------------------------------


def _single_target(options: argparse.Namespace) -> _Target:
    """The one implementation ``smoke`` or ``info`` starts (the reference when none is named)."""
    targets: list[_Target] = list(options.targets)
    if len(targets) > 1:
        raise _UsageError(f"one implementation at a time: {targets[0]} and {targets[1]} given")
    if not targets:
        return _Target("--impl", DEFAULT_IMPLEMENTATION)
    if not targets[0].value.strip():
        raise _UsageError(f"{targets[0].option} is empty: name the implementation (an unset variable?)")
    return targets[0]


def _smoke(options: argparse.Namespace) -> int:
    from toolcanon_conformance.scenario import ScenarioError
    from toolcanon_conformance.smoke import smoke, smoke_text

    target = _single_target(options)
    implementation = _implementation(target, options)
    terminal = _Terminal.of(sys.stdout)
    try:
        outcome = smoke(implementation)
    except AdapterError as error:
        print(visible(f"toolcanon smoke: cannot start {implementation!r}: {error}"), file=sys.stderr)
        return 2
    except (ScenarioError, FileNotFoundError) as error:
        raise _UsageError(str(error)) from None
    terminal.line(smoke_text(outcome, terminal.style))
    return 0 if outcome.passed else 1


def _twins(options: argparse.Namespace) -> int:
    from toolcanon_conformance.twins import EVERY_TWIN, SAMPLE, check_twins, twins_text

    target = _single_target(options)
    implementation = _implementation(target, options)
    chosen, _ = _selected(options, _load_scenarios(options.scenarios))
    plans = (SAMPLE if options.sample else EVERY_TWIN).plans(chosen)
    if not plans:
        raise _UsageError("no value of the selected scenarios is normalized against a schema: nothing to twin")
    terminal = _Terminal.of(sys.stdout)
    try:
        report = check_twins(implementation, plans)
    except AdapterError as error:
        print(visible(f"toolcanon twins: cannot start {implementation!r}: {error}"), file=sys.stderr)
        return 2
    terminal.line(twins_text(report, terminal.style))
    return 0 if report.ok else 1


def _info(options: argparse.Namespace) -> int:
    from toolcanon_conformance.info import describe, info_text

    target = _single_target(options)
    implementation = _implementation(target, options)
    try:
        entry = describe(implementation, target.option, target.value)
    except AdapterError as error:
        print(visible(f"toolcanon info: cannot start {implementation!r}: {error}"), file=sys.stderr)
        return 2
    if options.format == "json":
        _out(json.dumps(entry, indent=2, ensure_ascii=False))
    else:
        terminal = _Terminal.of(sys.stdout)
        terminal.line(info_text(entry, terminal.style))
    return 0


# --- render / replay / fuzz ------------------------------------------------------------------------------


def _delegate(name: str, arguments: list[str]) -> int:
    module_name, function_name, _summary = _DELEGATED[name]
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        missing = "is not installed" if getattr(error, "name", None) == module_name else f"cannot be imported: {error}"
        print(f"toolcanon {name}: not available: the module {module_name} {missing}", file=sys.stderr)
        return 2
    command: Callable[[list[str]], int] = getattr(module, function_name)
    return int(command(arguments))
