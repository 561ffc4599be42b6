"""The mutation target (``docs/mutation.md``, "The target") and whether a run meets it, module by module.

Three parts, each judged per module on the run's sample:

- **in reach**: the scenario suite kills at least 97 % of the mutants a scenario can express (its *in reach*
  column: the equivalent mutants and those triaged to the unit tests left out); the triage behind it is re-read
  on a sample at each release;
- **together**: the scenarios and the unit tests, run on one sample, kill at least 97 % of its non-equivalent
  mutants between them (a mutant either suite kills is killed);
- **floor**: the scenario suite's raw score on the module's whole population does not fall below the module's
  floor, a ratchet raised as the scores rise and never lowered. It is judged only where the run took every
  mutant of the module (``--all``): a sample's raw score estimates the population's within a few points, so on
  a sample it is printed against the floor and not judged. ``result`` has none: its survivors are Python's.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from mutation.outcomes import Outcome
from mutation.score import SCHEMA_ROW, WHOLE, Tally, tally

__all__ = ["FLOORS", "IN_REACH", "TOGETHER", "ModuleVerdict", "format_verdicts", "judge", "together"]

IN_REACH: Final = 0.97
"""The least share of the mutants in reach the scenario suite kills, per module."""

TOGETHER: Final = 0.97
"""The least share of the non-equivalent mutants the scenarios and the unit tests kill between them, per module."""

FLOORS: Final[Mapping[str, float]] = {
    "jsonvalue": 0.80,
    "registry": 0.80,
    "session": 0.82,
    "_schema_deep": 0.62,
    SCHEMA_ROW: 0.82,
    "_fused": 0.89,
}
"""The scenario suite's raw score on each module's whole population may not fall below these (a ratchet:
raised, never lowered); ``docs/mutation.md`` says where each was measured."""


def together(
    scenarios: Iterable[Outcome], unit: Iterable[Outcome], modules: Sequence[str], equivalent: Collection[str]
) -> dict[str, Tally]:
    """The tally of both suites on one sample: a mutant is killed when either suite killed it, else it keeps the
    scenario run's outcome (the unit run's for a mutant only it ran)."""
    merged = {outcome.name: outcome for outcome in unit}
    for outcome in scenarios:
        other = merged.get(outcome.name)
        if other is None or other.status != "killed":
            merged[outcome.name] = outcome
    return tally(merged.values(), modules, equivalent)


@dataclass(frozen=True, slots=True)
class ModuleVerdict:
    """One module's shares and whether each meets its part of the target (``None``: not measured, or no part
    applies)."""

    module: str
    in_reach: float | None
    together: float | None
    score: float | None
    floor: float | None
    whole: bool = False
    """The run took every mutant of the module (of every module of the schema group, for its row)."""

    @property
    def meets_in_reach(self) -> bool | None:
        """In reach at least :data:`IN_REACH`."""
        return None if self.in_reach is None else self.in_reach >= IN_REACH

    @property
    def meets_together(self) -> bool | None:
        """Both suites together at least :data:`TOGETHER`."""
        return None if self.together is None else self.together >= TOGETHER

    @property
    def meets_floor(self) -> bool | None:
        """The raw scenario score at its floor or above (``None`` when the module has no floor, or the run took
        a sample of it: the floors are the whole population's)."""
        if self.floor is None or self.score is None or not self.whole:
            return None
        return self.score >= self.floor

    @property
    def meets(self) -> bool:
        """Every part measured is met (a part not measured does not fail the module)."""
        return all(part is not False for part in (self.meets_in_reach, self.meets_together, self.meets_floor))


def judge(
    scenarios: Mapping[str, Tally] | None, both: Mapping[str, Tally] | None, whole: Collection[str] = ()
) -> list[ModuleVerdict]:
    """A verdict per module row (the schema group's too, not the whole) of the scenario suite's tally and of
    both suites' (``None`` when that suite, or one of the two, did not run); ``whole`` names the rows whose
    every mutant the run took, the only ones whose floor is judged."""
    names = [name for name in (scenarios or both or {}) if name != WHOLE]
    verdicts = []
    for name in names:
        row = scenarios.get(name) if scenarios is not None else None
        pair = both.get(name) if both is not None else None
        if (row is None or row.run == 0) and (pair is None or pair.run == 0):
            continue  # a module without mutants in the sample (``schema`` re-exports only)
        verdicts.append(
            ModuleVerdict(
                name,
                row.in_reach if row is not None else None,
                pair.score if pair is not None else None,
                row.score if row is not None else None,
                FLOORS.get(name),
                name in whole,
            )
        )
    return verdicts


def _share(share: float | None, met: bool | None) -> str:
    if share is None:
        return "-"
    return f"{100 * share:.1f} % {'ok' if met else 'MISSED'}" if met is not None else f"{100 * share:.1f} %"


def _score(verdict: ModuleVerdict) -> str:
    if verdict.floor is not None and verdict.score is not None and not verdict.whole:
        return f"{100 * verdict.score:.1f} % sample"
    return _share(verdict.score, verdict.meets_floor)


def format_verdicts(verdicts: Sequence[ModuleVerdict]) -> list[str]:
    """The target and each module's verdict, as lines to print after the tables."""
    floors = ", ".join(f"{name} {round(100 * floor)}" for name, floor in FLOORS.items())
    lines = [
        f"the target: in reach >= {100 * IN_REACH:.0f} % per module (the triage re-read on a sample at each release); "
        f"scenarios and unit tests together >= {100 * TOGETHER:.0f} % per module; the raw scenario score at its "
        f"floor or above on the module's whole population ({floors}; result none)",
    ]
    header = ("module", "in reach", "together", "scenario score", "floor", "meets")
    body = [
        (
            verdict.module,
            _share(verdict.in_reach, verdict.meets_in_reach),
            _share(verdict.together, verdict.meets_together),
            _score(verdict),
            "-" if verdict.floor is None else f"{100 * verdict.floor:.0f} %",
            "yes" if verdict.meets else "no",
        )
        for verdict in verdicts
    ]
    widths = [max(len(row[column]) for row in [header, *body]) for column in range(len(header))]
    for row in [header, *body]:
        lines.append(
            "  ".join([row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True))])
        )
    if not verdicts:
        return [*lines, "target not judged: the scenario suite did not run"]
    missed = [verdict.module for verdict in verdicts if not verdict.meets]
    unmeasured = [] if any(v.together is not None for v in verdicts) else ["together not measured (run both suites)"]
    sampled = [v.module for v in verdicts if v.floor is not None and v.score is not None and not v.whole]
    if sampled:
        unmeasured.append(f"floors not judged on a sample ({', '.join(sampled)}: run --all)")
    summary = "met by every module" if not missed else f"missed by {', '.join(missed)}"
    lines.append(f"target {summary}" + "".join(f"; {note}" for note in unmeasured))
    return lines
