"""The score of a suite: per module, the share of the mutants it kills among those that can be killed.

``score = killed / (run - equivalent)``: a mutant triaged equivalent (and not killed) is left out; a survivor,
a timeout, a mutant no test reaches ("no tests") and any other outcome count against the suite.

``in reach = killed / (run - equivalent - API only)`` also leaves out the mutants, not killed, that the triage
gives to the unit tests: a Python-API detail that no language-neutral scenario can see. It is the scenario
suite's share of the bugs a scenario can express (for the unit tests nothing is API only, and it is the score).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, fields

from mutation.outcomes import Outcome
from mutation.targets import SCHEMA_GROUP

__all__ = ["SCHEMA_ROW", "WHOLE", "Tally", "format_table", "tally"]

WHOLE = "whole"
"""The row of every module together."""

SCHEMA_ROW = "schema + _schema_*"
"""The row of the schema group (``schema`` and every ``_schema_*``) when it has several modules."""


_OUTCOME_COLUMNS = ("killed", "survived", "timeout", "no_tests", "other", "equivalent")


@dataclass(slots=True)
class Tally:
    """The mutants of one module (or several) by outcome; ``equivalent`` counts triaged-equivalent ones that
    were not killed, and none of them is in another column. ``api_only`` counts, among the others not killed,
    those triaged to the unit tests (they are in their outcome's column too)."""

    killed: int = 0
    survived: int = 0
    timeout: int = 0
    no_tests: int = 0
    other: int = 0
    equivalent: int = 0
    api_only: int = 0

    @property
    def run(self) -> int:
        """Every mutant counted."""
        return sum(getattr(self, column) for column in _OUTCOME_COLUMNS)

    @property
    def score(self) -> float | None:
        """killed / (run - equivalent); ``None`` when no mutant can be killed."""
        killable = self.run - self.equivalent
        return self.killed / killable if killable else None

    @property
    def in_reach(self) -> float | None:
        """killed / (run - equivalent - api_only); ``None`` when no mutant is left."""
        reachable = self.run - self.equivalent - self.api_only
        return self.killed / reachable if reachable else None

    def add(self, outcome: Outcome, equivalent: bool, api_only: bool = False) -> None:
        """Count one outcome (an equivalent or API-only mutant that was killed counts as killed)."""
        if outcome.status == "killed":
            self.killed += 1
        elif equivalent:
            self.equivalent += 1
        else:
            column = outcome.status.replace(" ", "_")
            setattr(self, column, getattr(self, column) + 1)
            if api_only:
                self.api_only += 1

    def __iadd__(self, other: Tally) -> Tally:
        for field in fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))
        return self


def tally(
    outcomes: Iterable[Outcome],
    modules: Sequence[str],
    equivalent: Collection[str],
    api_only: Collection[str] = (),
) -> dict[str, Tally]:
    """A tally per module of ``modules`` (in their order), the schema group's when it has several, and
    :data:`WHOLE`; ``api_only`` names the mutants triaged to the unit tests (empty for the unit suite)."""
    rows = {module: Tally() for module in modules}
    for outcome in outcomes:
        rows.setdefault(outcome.module, Tally()).add(outcome, outcome.name in equivalent, outcome.name in api_only)
    schema = [module for module in rows if module == SCHEMA_GROUP or module.startswith("_schema_")]
    if len(schema) > 1:
        group = Tally()
        for module in schema:
            group += rows[module]
        rows[SCHEMA_ROW] = group
    whole = Tally()
    for module in modules:
        whole += rows[module]
    rows[WHOLE] = whole
    return rows


_COLUMNS = (
    "run",
    "killed",
    "survived",
    "timed out",
    "no tests",
    "equivalent",
    "other",
    "score",
    "API only",
    "in reach",
)


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f} %"


def _cells(row: Tally) -> tuple[str, ...]:
    return (
        str(row.run),
        str(row.killed),
        str(row.survived),
        str(row.timeout),
        str(row.no_tests),
        str(row.equivalent),
        str(row.other),
        _percent(row.score),
        str(row.api_only),
        _percent(row.in_reach),
    )


def format_table(rows: dict[str, Tally]) -> str:
    """The tally as a fixed-width text table, one row per module, the whole last."""
    body = [(name, *_cells(row)) for name, row in rows.items()]
    header = ("module", *_COLUMNS)
    widths = [max(len(line[column]) for line in [header, *body]) for column in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        return "  ".join([first, *(cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))])

    rule = "-" * len(line(header))
    lines = [line(header), rule]
    for cells in body:
        if cells[0] in (SCHEMA_ROW, WHOLE):
            lines.append(rule)
        lines.append(line(cells))
    return "\n".join(lines)
