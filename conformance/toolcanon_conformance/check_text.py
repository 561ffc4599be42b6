"""The text ``toolcanon check`` prints for people: what needs attention last, right above the verdict.

A run's text is, in order: the implementation's name; one line each for the table by rule, the known failures,
the skipped scenarios and the optional differences (passed scenarios that differ only where the contract leaves
the bytes open), folded to their counts unless ``--show`` asks for them whole (then they follow, after the golden
count); how many goldens come from each source; then every scenario that did not pass with its first
difference, the skips when ``--fail-on-skip`` makes them fail the run, the baseline's problems, and the verdict
line, always last. ``--failures-only`` keeps only the failures and the verdict. With several implementations
each run's text follows the other's and :func:`verdict_lines` ends the whole, one line per implementation.

The JSON, Markdown and HTML reports are :mod:`~toolcanon_conformance.report`'s and do not depend on this.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from toolcanon_conformance.baseline import KINDS
from toolcanon_conformance.display import PLAIN, Style
from toolcanon_conformance.report import Policy, Run, golden_sources_line, verdict_line
from toolcanon_conformance.runner import NO_RULE, ScenarioResult, SuiteResult

__all__ = [
    "PARTS",
    "Layout",
    "Part",
    "fold_line_of_known",
    "fold_line_of_optional",
    "fold_line_of_rules",
    "fold_line_of_skips",
    "parse_parts",
    "rule_table",
    "run_text",
    "verdict_lines",
]

Part: TypeAlias = Literal["rules", "skips", "known", "optional"]
#: What ``--show`` can print whole: the table by rule, the skipped scenarios, the baseline's known failures, the
#: optional differences.
PARTS: Final[tuple[Part, ...]] = ("rules", "skips", "known", "optional")
_ALL: Final = "all"
_NO_POLICY: Final = Policy()


def parse_parts(text: str) -> list[Part]:
    """``--show``'s value, ``rules,skips`` (``all``: every part), as an argparse ``type=``."""
    parts: list[Part] = []
    for word in (word.strip().lower() for word in text.split(",")):
        if word == _ALL:
            parts.extend(PARTS)
            continue
        part = next((part for part in PARTS if part == word), None)
        if part is None:
            raise argparse.ArgumentTypeError(f"{word!r} is not a part: choose from {', '.join([*PARTS, _ALL])}")
        parts.append(part)
    return parts


@dataclass(frozen=True, slots=True)
class Layout:
    """What a run's text holds besides its failures and verdict.

    ``show``: the parts printed whole instead of folded to one line. ``failures_only``: no name, no folded
    line, no golden count: the failures and the verdict alone.
    """

    show: frozenset[Part] = frozenset()
    failures_only: bool = False


def run_text(
    run: Run, entry: dict[str, Any], *, layout: Layout = Layout(), policy: Policy = _NO_POLICY, style: Style = PLAIN
) -> str:
    """One implementation's text, its verdict line last (``entry`` is its entry of the JSON report)."""
    suite = run.suite
    results = suite.results
    failing = [result for result in results if result.counts_as_failure]
    known = [result for result in results if result.baseline == "known-failure"]
    skipped = [result for result in results if result.status == "skipped"]
    optional = [result for result in results if result.optional_differences]
    # Under --fail-on-skip the skips fail the run: they are shown with the failures.
    skips_fail = policy.fail_on_skip and bool(skipped)
    blocks: list[list[str]] = []
    if not layout.failures_only:
        info = suite.implementation
        head = [style.strong(f"{info.name} {info.version} ({info.language})")]
        if "rules" not in layout.show:
            head.append(fold_line_of_rules(suite))
        if known and "known" not in layout.show:
            head.append(fold_line_of_known(known))
        if skipped and "skips" not in layout.show and not skips_fail:
            head.append(fold_line_of_skips(skipped))
        if optional and "optional" not in layout.show:
            head.append(fold_line_of_optional(optional))
        head.append(golden_sources_line(entry))
        blocks.append(head)
        if "rules" in layout.show:
            blocks.append(rule_table(suite, style).splitlines())
        if known and "known" in layout.show:
            blocks.append(_known_section(known, style))
        if skipped and "skips" in layout.show and not skips_fail:
            blocks.append(_skips_section(skipped, style))
        if optional and "optional" in layout.show:
            blocks.append(_optional_section(optional, style))
    if failing:
        blocks.append([style.bad(f"Not passing ({len(failing)}):"), *(_indent(result.explain()) for result in failing)])
    if skips_fail:
        blocks.append(_skips_section(skipped, style, failing_the_run=True))
    if suite.baseline_problems:
        problems = [f"  {problem.scenario}: {problem.message}" for problem in suite.baseline_problems]
        blocks.append([style.bad("Baseline problems:"), *problems])
    blocks.append([style.verdict(verdict_line(entry))])
    return "\n\n".join("\n".join(block) for block in blocks)


def verdict_lines(report: dict[str, Any], style: Style = PLAIN) -> list[str]:
    """One line per implementation of a report: ``  #1 NAME VERSION  VERDICT…``."""
    runs = report["implementations"]
    names = [
        f"#{index + 1} {run['implementation']['name']} {run['implementation']['version']}"
        for index, run in enumerate(runs)
    ]
    width = max(len(name) for name in names)
    return [f"  {name.ljust(width)}  {style.verdict(verdict_line(run))}" for name, run in zip(names, runs, strict=True)]


def rule_table(suite: SuiteResult, style: Style = PLAIN) -> str:
    """The table by rule: a row per rule, its scenarios counted by outcome, ``✗`` where one failed or errored."""
    tallies = suite.by_rule()
    columns = ("passed", "failed", "errored", "skipped", "known")
    width = max([len("rule"), len(NO_RULE), *(len(rule) for rule in tallies)])
    header = "rule".ljust(width) + "".join(column.rjust(9) for column in columns)
    rows = [header, "-" * len(header)]
    for rule, tally in tallies.items():
        mark = "" if tally.ok else "  " + style.bad("✗")
        rows.append(rule.ljust(width) + "".join(str(getattr(tally, c)).rjust(9) for c in columns) + mark)
    return "\n".join(rows)


def fold_line_of_rules(suite: SuiteResult) -> str:
    """``rules: 2 of 150 with a failure or an error; --show rules prints the table`` (the rows marked ``✗``)."""
    tallies = suite.by_rule()
    marked = sum(1 for tally in tallies.values() if not tally.ok)
    count = f"{marked} of {len(tallies)}" if marked else f"none of {len(tallies)}"
    return f"rules: {count} with a failure or an error; --show rules prints the table"


def fold_line_of_skips(skipped: Sequence[ScenarioResult]) -> str:
    """``12 skipped: 9 need a capability it does not declare (approval 8, timeout 2), 3 declined by the
    implementation; --show skips lists them``.

    Each capability is followed by how many of the scenarios skipped unsent need it: a scenario that needs two
    counts under both.
    """
    unsent = [result for result in skipped if result.missing_capabilities]
    needed = Counter(capability for result in unsent for capability in dict.fromkeys(result.missing_capabilities))
    reasons: list[str] = []
    if unsent:
        by_count = ", ".join(f"{name} {count}" for name, count in sorted(needed.items(), key=lambda i: (-i[1], i[0])))
        verb = "needs" if len(unsent) == 1 else "need"
        reasons.append(f"{len(unsent)} {verb} a capability it does not declare ({by_count})")
    if len(skipped) > len(unsent):
        reasons.append(f"{len(skipped) - len(unsent)} declined by the implementation")
    return f"{len(skipped)} skipped: {', '.join(reasons)}; --show skips lists them"


#: How the folded line counts each kind of known failure: one, several.
_KIND_NOUNS: dict[str, tuple[str, str]] = {
    "deviation": ("deviation", "deviations"),
    "host-limit": ("host limit", "host limits"),
    "predates": ("predating its rule", "predating their rules"),
}


def fold_line_of_known(known: Sequence[ScenarioResult]) -> str:
    """``2 known failures, excused by the baseline; --show known lists them``, the kinds counted after the noun
    (``(1 deviation, 1 host limit)``) when the baseline's entries name them."""
    noun = "known failure" if len(known) == 1 else "known failures"
    kinds = Counter(result.baseline_kind for result in known)
    if set(kinds) != {None}:
        counts = [f"{n} {_KIND_NOUNS[kind][n != 1]}" for kind in KINDS if (n := kinds[kind])]
        counts += [f"{kinds[None]} unclassified"] if kinds[None] else []
        noun += f" ({', '.join(counts)})"
    return f"{len(known)} {noun}, excused by the baseline; --show known lists them"


def fold_line_of_optional(optional: Sequence[ScenarioResult]) -> str:
    """``optional: 2 scenarios differ only where the contract leaves the bytes open; --show optional lists them``."""
    noun = "scenario differs" if len(optional) == 1 else "scenarios differ"
    return f"optional: {len(optional)} {noun} only where the contract leaves the bytes open; --show optional lists them"


def _optional_section(optional: Sequence[ScenarioResult], style: Style) -> list[str]:
    """Each scenario's optional differences, under the reason its scenario gives for each."""
    noun = "scenario" if len(optional) == 1 else "scenarios"
    lines = [style.warning(f"Optional differences, where the contract leaves the bytes open ({len(optional)} {noun}):")]
    for result in optional:
        count = len(result.optional_differences)
        rules = ", ".join(result.rules) or NO_RULE
        lines.append(f"  {result.scenario} [{rules}]: {count} optional difference{'' if count == 1 else 's'}")
        by_why: dict[str, list[str]] = {}
        for found in result.optional_differences:
            by_why.setdefault(found.optional.why, []).append(str(found.difference))
        for why, differences in by_why.items():
            lines.append(f"    {why}:")
            lines += ["\n".join("      " + line for line in text.splitlines()) for text in differences]
    return lines


def _known_section(known: Sequence[ScenarioResult], style: Style) -> list[str]:
    lines = [style.warning(f"Known failures, listed in the baseline ({len(known)}):")]
    for result in known:
        kind = f" ({result.baseline_kind})" if result.baseline_kind else ""
        lines.append(f"  {result.scenario}{kind}" + (f" — {result.baseline_note}" if result.baseline_note else ""))
    return lines


def _skips_section(skipped: Sequence[ScenarioResult], style: Style, *, failing_the_run: bool = False) -> list[str]:
    title = f"Skipped ({len(skipped)})" + (", failing the run under --fail-on-skip" if failing_the_run else "") + ":"
    lines = [style.bad(title) if failing_the_run else style.warning(title)]
    lines += [
        f"  {result.scenario}: {result.message}" + (f" ({result.issue_url})" if result.issue_url else "")
        for result in skipped
    ]
    return lines


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())
