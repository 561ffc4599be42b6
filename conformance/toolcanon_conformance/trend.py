"""The trend of a check of several implementations: how many scenarios each passed, failed and had excused, in run
order, overall and by rule family, and what changed from one run to the next.

A check of the releases of one implementation, oldest first (``nox -s upstream`` runs the original's that way),
reads as a versions trend: a maintainer sees at a glance what a release changed. :func:`trend` computes it from a
JSON report alone; :func:`trend_text` prints it (``toolcanon report FILE --format trend``), and :func:`trend_html`
is the section the HTML report shows it in, drawn with inline CSS bars (no script, nothing fetched).

The outcomes counted are a scenario's class in the reports: passed, failed, known (a known failure the baseline
excuses), predates (a known failure whose entry says the release predates what its rule requires), errored,
skipped and stale (a baseline entry whose failure is gone).
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass
from typing import Any

from toolcanon_conformance.display import visible
from toolcanon_conformance.report import _column, _outcome, _rule_sections, _section_counts

__all__ = ["OUTCOMES", "Change", "Family", "Point", "Trend", "trend", "trend_html", "trend_text"]

#: The outcomes a trend counts, in the order it draws them: what passes, then what is excused, then what fails.
OUTCOMES: tuple[str, ...] = ("passed", "known", "predates", "failed", "errored", "stale", "skipped")

#: The bar's character of each outcome in the text form (the reports' symbols, a full block for passed).
_BAR_CHARACTERS = {
    "passed": "█",
    "known": "≈",
    "predates": "«",
    "failed": "✗",
    "errored": "!",
    "stale": "↻",
    "skipped": "–",
}
_BAR_WIDTH = 40
#: How many changed scenarios a run lists by name; the rest are counted.
_CHANGES_NAMED = 12


@dataclass(frozen=True, slots=True)
class Change:
    """A scenario whose outcome differs from the run before: its id, that run's outcome and this one's."""

    scenario: str
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class Point:
    """One run of the trend: its column name (``#2 name version``), its counts by outcome, and what changed
    from the run before (nothing for the first)."""

    column: str
    counts: dict[str, int]
    changes: tuple[Change, ...]


@dataclass(frozen=True, slots=True)
class Family:
    """A rule family (a section of the contract, ``R-NEST``): its heading, and its scenarios' counts by outcome in
    each run (each scenario once)."""

    slug: str
    heading: str
    counts: tuple[dict[str, int], ...]

    def changed(self, index: int) -> bool:
        """Whether the family's counts in run ``index`` differ from the run before."""
        return index > 0 and self.counts[index] != self.counts[index - 1]


@dataclass(frozen=True, slots=True)
class Trend:
    """The runs of a report in run order, and its rule families in the contract's order."""

    points: tuple[Point, ...]
    families: tuple[Family, ...]


def _counts(outcomes: Counter[str]) -> dict[str, int]:
    return {outcome: outcomes[outcome] for outcome in OUTCOMES}


def trend(report: dict[str, Any]) -> Trend:
    """The trend of a JSON report's runs (``toolcanon check --report``)."""
    runs: list[dict[str, Any]] = report["implementations"]
    points: list[Point] = []
    previous: dict[str, str] | None = None
    for index, run in enumerate(runs):
        outcomes = {str(scenario["id"]): _outcome(scenario) for scenario in run["scenarios"]}
        changes: tuple[Change, ...] = ()
        if previous is not None:
            changes = tuple(
                Change(scenario, previous[scenario], outcome)
                for scenario, outcome in outcomes.items()
                if scenario in previous and previous[scenario] != outcome
            )
        points.append(Point(_column(run, index), _counts(Counter(outcomes.values())), changes))
        previous = outcomes
    rules = {tally["rule"] for run in runs for tally in run["rules"]}
    families = tuple(
        Family(slug, heading, tuple(_counts(_section_counts(run, members)) for run in runs))
        for slug, heading, members in _rule_sections(rules)
    )
    return Trend(tuple(points), families)


# --- text ------------------------------------------------------------------------------------------------


def _bar(counts: dict[str, int], width: int = _BAR_WIDTH) -> str:
    """The counts as a bar of ``width`` characters, each outcome present at least one character wide."""
    total = sum(counts.values())
    if not total:
        return " " * width
    present = [outcome for outcome in OUTCOMES if counts[outcome]]
    shares = {outcome: max(1, round(width * counts[outcome] / total)) for outcome in present}
    widest = max(present, key=lambda outcome: shares[outcome])
    shares[widest] += width - sum(shares.values())  # rounding lands on the widest, so the bar is width long
    return "".join(_BAR_CHARACTERS[outcome] * shares[outcome] for outcome in present)


def _changes_text(changes: tuple[Change, ...]) -> str:
    named = [f"{change.scenario} {change.before} → {change.after}" for change in changes[:_CHANGES_NAMED]]
    rest = len(changes) - len(named)
    return ", ".join(named) + (f" and {rest} more" if rest else "")


def _family_cell(counts: dict[str, int]) -> str:
    """``12/1/2``: passed, failed (errored and stale with it), known; then ``+1«`` when some predate their rule."""
    failing = counts["failed"] + counts["errored"] + counts["stale"]
    predates = f"+{counts['predates']}«" if counts["predates"] else ""
    return f"{counts['passed']}/{failing}/{counts['known']}{predates}"


def trend_text(report: dict[str, Any]) -> str:
    """The trend as text: a bar and the counts per run, what changed from the run before, then per rule family."""
    shape = trend(report)
    points = shape.points
    lines = [f"Trend of {len(points)} implementation{'' if len(points) == 1 else 's'}, in run order"]
    legend = ", ".join(f"{_BAR_CHARACTERS[outcome]} {outcome}" for outcome in OUTCOMES)
    lines += [f"  ({legend})", ""]
    name_width = max((len(point.column) for point in points), default=0)
    for index, point in enumerate(points):
        counts = ", ".join(f"{point.counts[outcome]} {outcome}" for outcome in OUTCOMES)
        lines.append(f"  {point.column:<{name_width}}  {_bar(point.counts)}  {counts}")
        if index and point.changes:
            lines.append(f"  {'':<{name_width}}  changed from #{index}: {_changes_text(point.changes)}")
        elif index:
            lines.append(f"  {'':<{name_width}}  no scenario changed from #{index}")
    heading = "By rule family: passed/failed/known (+N« predating their rule) per run; * changed from the run before"
    lines += ["", heading]
    cells = [
        [_family_cell(counts) + ("*" if family.changed(k) else "") for k, counts in enumerate(family.counts)]
        for family in shape.families
    ]
    widths = [max([len(f"#{k + 1}")] + [len(row[k]) for row in cells]) for k in range(len(points))]
    slug_width = max((len(family.slug) for family in shape.families), default=6)
    header = "  " + "family".ljust(slug_width) + "".join(f"  {f'#{k + 1}':>{w}}" for k, w in enumerate(widths))
    lines.append(header)
    for family, row in zip(shape.families, cells, strict=True):
        values = "".join(f"  {cell:>{width}}" for cell, width in zip(row, widths, strict=True))
        lines.append(f"  {family.slug:<{slug_width}}{values}  {family.heading}")
    return visible("\n".join(line.rstrip() for line in lines)) + "\n"


# --- HTML ------------------------------------------------------------------------------------------------

#: The trend's own styles, added to the report's (its colours are the report's outcome colours).
CSS = """
table.trend { border-collapse: collapse; width: 100%; table-layout: fixed; }
table.trend th, table.trend td { padding: 3px 8px 3px 0; text-align: left; vertical-align: middle;
                                 overflow-wrap: anywhere; border-bottom: 1px solid #eee; }
.bar { display: flex; height: 16px; width: 100%; background: #eee; border-radius: 2px; overflow: hidden; }
.bar.small { height: 9px; margin-bottom: 2px; }
.bar .seg { height: 100%; }
.seg.passed { background: var(--passed); } .seg.known { background: var(--known); }
.seg.predates { background: var(--predates); } .seg.failed { background: var(--failed); }
.seg.errored { background: var(--errored); } .seg.stale { background: var(--stale); }
.seg.skipped { background: var(--skipped); }
table.families td.changed { outline: 2px solid var(--ink); outline-offset: -2px; background: #fff8e1; }
table.families td { font-size: 12.5px; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _html_bar(counts: dict[str, int], css_class: str = "bar") -> str:
    total = sum(counts.values())
    segments = "".join(
        f'<span class="seg {outcome}" style="width: {100 * counts[outcome] / total:.4f}%" '
        f'title="{counts[outcome]} {outcome}"></span>'
        for outcome in OUTCOMES
        if total and counts[outcome]
    )
    return f'<div class="{css_class}">{segments}</div>'


def trend_html(report: dict[str, Any], anchors: list[dict[str, str]]) -> list[str]:
    """The trend section of the HTML report; ``anchors`` maps each run's scenario ids to their accounts' ids."""
    shape = trend(report)
    points = shape.points
    rows = []
    for index, point in enumerate(points):
        counts = ", ".join(f"{point.counts[outcome]} {outcome}" for outcome in OUTCOMES if point.counts[outcome])
        links = []
        for change in point.changes[:_CHANGES_NAMED]:
            text = f"<code>{_e(change.scenario)}</code> {_e(change.before)} → {_e(change.after)}"
            # the scenario's account: in this run, or, where it passes now, in the run before
            anchor = anchors[index if change.after != "passed" else index - 1].get(change.scenario)
            links.append(f'<a href="#{_e(anchor)}">{text}</a>' if anchor else text)
        rest = len(point.changes) - len(links)
        changed = ", ".join(links) + (f" and {rest} more" if rest else "")
        changed = changed if index == 0 or point.changes else "no scenario changed"
        rows.append(
            f'<tr data-run="{index}"><th scope="row">{_e(point.column)}</th><td>{_html_bar(point.counts)}</td>'
            f'<td class="counts">{_e(counts)}</td><td class="changes">{changed}</td></tr>'
        )
    heads = "".join(f'<th scope="col">{_e(f"#{k + 1}")}</th>' for k in range(len(points)))
    family_rows = []
    for family in shape.families:
        cells = "".join(
            f'<td class="{"changed" if family.changed(k) else "same"}" title="{_e(_title(counts))}">'
            f"{_html_bar(counts, 'bar small')}{_e(_family_cell(counts))}</td>"
            for k, counts in enumerate(family.counts)
        )
        family_rows.append(
            f'<tr data-family="{_e(family.slug)}"><th scope="row" title="{_e(family.heading)}">{_e(family.slug)}</th>'
            f"{cells}</tr>"
        )
    share = max(6, 70 // max(len(points), 1))
    columns = f'<col style="width: {share}%">' * len(points)
    return [
        '<section id="trend"><h2>Trend, by implementation in run order</h2>',
        '<table class="trend" id="trend-runs"><colgroup><col style="width: 22%"><col style="width: 26%">'
        '<col style="width: 22%"><col></colgroup><thead><tr><th scope="col">implementation</th>'
        '<th scope="col">scenarios</th><th scope="col">counts</th><th scope="col">changed from the run before</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>",
        "<h3>By rule family</h3>",
        '<p class="muted">Each cell: passed/failed/known of the family\'s scenarios (+N« those of a release that '
        "predates their rule); outlined where it changed from the run before.</p>",
        f'<table class="trend families" id="trend-families"><colgroup><col style="width: 9em">{columns}</colgroup>'
        f'<thead><tr><th scope="col">family</th>{heads}</tr></thead><tbody>{"".join(family_rows)}</tbody></table>',
        "</section>",
    ]


def _title(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[outcome]} {outcome}" for outcome in OUTCOMES if counts[outcome]) or "no scenario"
