"""``python -m mutation``: mutate the reference's core modules, run a sample of the mutants against the scenario
suite and the unit tests, print each suite's score per module, then the target and whether each module meets
it (see ``docs/mutation.md``).

Options: ``--module NAME`` (repeatable; ``schema`` is ``schema`` and every ``_schema_*``), ``--sample N``
(default 600; ``--quick`` is ``--sample 100``, ``--all`` every mutant), ``--seed S``, ``--suite
scenarios|unit|both``, ``--jobs N`` (mutants at once), ``--out DIR`` (the scratch projects and the report);
``--rescore REPORT`` prints a report's tables again with the current triage, running nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from mutation.errors import MutationError
from mutation.goal import format_verdicts, judge, together
from mutation.names import list_mutants
from mutation.outcomes import Outcome, function_of, read_hashes, read_outcomes
from mutation.run import RunTimes, run_mutmut
from mutation.sampling import sample
from mutation.score import SCHEMA_ROW, WHOLE, Tally, format_table, tally
from mutation.scratch import SUITES, Checkout, Suite, build
from mutation.targets import SCHEMA_GROUP, core_modules, select_modules
from mutation.triage import BLIND_SPOTS, TRIAGE_FILE, Triage, current, load_triage

__all__ = ["DEFAULT_SAMPLE", "DEFAULT_SEED", "QUICK_SAMPLE", "main", "parse_arguments", "sample_digest"]

DEFAULT_SAMPLE: Final = 600
QUICK_SAMPLE: Final = 100
DEFAULT_SEED: Final = 1
REPORT_NAME: Final = "mutation-report.json"


def parse_arguments(arguments: Sequence[str]) -> argparse.Namespace:
    """The command line's options."""
    parser = argparse.ArgumentParser(prog="python -m mutation", description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append", default=[], metavar="NAME", help="a mutated module (repeatable)")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--sample", type=int, default=DEFAULT_SAMPLE, metavar="N", help="mutants, spread over modules")
    size.add_argument("--quick", action="store_const", dest="sample", const=QUICK_SAMPLE, help="--sample 100")
    size.add_argument("--all", action="store_const", dest="sample", const=None, help="every mutant (hours)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the draw's seed (default 1)")
    parser.add_argument("--suite", choices=[*SUITES, "both"], default="both", help="which tests (default both)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, metavar="N", help="mutants run at once")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "toolcanon-mutation")
    parser.add_argument("--rescore", type=Path, metavar="REPORT", help="a report's tables with the current triage")
    return parser.parse_args(arguments)


def sample_digest(names: Sequence[str]) -> str:
    """A short fingerprint of a sample: two runs measured the same mutants when their digests are equal."""
    return hashlib.sha256("\n".join(sorted(names)).encode()).hexdigest()[:12]


def _commit(root: Path) -> str:
    def git(*words: str) -> str:
        done = subprocess.run(["git", "-C", str(root), *words], capture_output=True, text=True, check=False)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short=12", "HEAD") or "(no commit)"
    changed = git("status", "--porcelain", "--", "reference", "fixtures", "snapshots", "mutation")
    return commit + (" + uncommitted changes" if changed else "")


@dataclass(frozen=True, slots=True)
class SuiteRun:
    """What one suite's run measured."""

    suite: Suite
    outcomes: list[Outcome]
    rows: dict[str, Tally]
    times: RunTimes
    triage: dict[str, Triage]
    stale: list[Triage]


def main(arguments: Sequence[str] | None = None, echo: Callable[[str], None] = print) -> int:
    """Run the measure; 0 when it ran, 2 for a usage error or a set-up that cannot measure anything."""
    options = parse_arguments(sys.argv[1:] if arguments is None else arguments)
    try:
        if options.rescore is not None:
            return _rescore(options.rescore, echo)
        return _measure(options, echo)
    except MutationError as error:
        print(f"python -m mutation: {error}", file=sys.stderr)
        return 2


def _measure(options: argparse.Namespace, echo: Callable[[str], None]) -> int:
    if importlib.util.find_spec("toolcanon") is not None:
        raise MutationError(
            "toolcanon is importable in this venv: it would shadow mutmut's mutated copy "
            "(install the kit with --no-deps, never the reference)"
        )
    checkout = Checkout(Path(__file__).resolve().parents[1])
    modules = select_modules(options.module, core_modules(checkout.package))
    suites: tuple[Suite, ...] = SUITES if options.suite == "both" else (options.suite,)
    triage = load_triage(TRIAGE_FILE)
    where = options.out.resolve()
    where.mkdir(parents=True, exist_ok=True)

    projects = {suite: build(where, suite, checkout, modules) for suite in suites}
    every = list_mutants(projects[suites[0]], modules)
    chosen = sample(every, options.sample, options.seed)
    names = [name for module in modules for name in chosen[module]]
    header = {
        "commit": _commit(checkout.root),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "seed": options.seed,
        "sample": options.sample,
        "mutants": len(names),
        "sampleDigest": sample_digest(names),
        "modules": {module: {"mutants": len(every[module]), "sampled": len(chosen[module])} for module in modules},
    }
    _print_header(header, echo)

    runs = [_run_suite(suite, projects[suite], names, modules, triage, options.jobs, echo) for suite in suites]
    report = {**header, "suites": {run.suite: _suite_report(run) for run in runs}}
    (where / REPORT_NAME).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for run in runs:
        _print_suite(run, echo)
    _print_target(runs, modules, _whole_rows(header), echo)
    echo(f"every mutant's outcome: {where / REPORT_NAME}; mutmut's projects (mutmut show NAME): {where}/<suite>")
    return 0


def _print_header(header: Mapping[str, Any], echo: Callable[[str], None]) -> None:
    drawn = "every mutant" if header["sample"] is None else f"a sample of {header['sample']}"
    modules: Mapping[str, Mapping[str, int]] = header["modules"]
    total = sum(counts["mutants"] for counts in modules.values())
    echo(f"commit {header['commit']}, {header['date']}: {drawn}, seed {header['seed']}, spread over the modules")
    echo(f"{header['mutants']} of {total} mutants (sample digest {header['sampleDigest']}):")
    echo("  " + ", ".join(f"{module} {counts['sampled']}/{counts['mutants']}" for module, counts in modules.items()))


def _rescore(path: Path, echo: Callable[[str], None]) -> int:
    """Print the tables of a report again, with the triage as it is now."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
        _print_header(report, echo)
        modules = list(report["modules"])
        runs = []
        for suite, measured in report["suites"].items():
            outcomes = [
                Outcome(o["name"], o["status"], o["mutmut"], o["exitCode"], o["seconds"], o["function"])
                for o in measured["outcomes"]
            ]
            hashes = {f"{o.module}.{function_of(o.name)}": o.function_hash for o in outcomes}
            valid, stale = current(load_triage(TRIAGE_FILE), hashes)
            equivalent, api_only = _set_aside(suite, valid)
            times = RunTimes(measured["seconds"], measured["mutationSeconds"])
            run = SuiteRun(suite, outcomes, tally(outcomes, modules, equivalent, api_only), times, valid, stale)
            _print_suite(run, echo)
            runs.append(run)
        _print_target(runs, modules, _whole_rows(report), echo)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise MutationError(f"--rescore {path}: not a report of python -m mutation ({error})") from None
    return 0


def _run_suite(
    suite: Suite,
    project: Path,
    names: list[str],
    modules: Sequence[str],
    triage: Mapping[str, Triage],
    jobs: int,
    echo: Callable[[str], None],
) -> SuiteRun:
    echo(f"[{suite}] {len(names)} mutants in {project}")
    times = run_mutmut(project, names, label=suite, jobs=jobs, echo=echo)
    mutants = project / "mutants"
    outcomes = read_outcomes(mutants, names)
    valid, stale = current(triage, read_hashes(mutants))
    equivalent, api_only = _set_aside(suite, valid)
    rows = tally(outcomes, modules, equivalent, api_only)
    if rows[WHOLE].killed == 0:
        raise MutationError(f"{suite}: not one mutant was killed: the tests cannot be seeing the mutants")
    return SuiteRun(suite, outcomes, rows, times, valid, stale)


def _whole_rows(header: Mapping[str, Any]) -> set[str]:
    """The table rows whose every mutant the run took: modules run whole, and the schema group's row when the
    run selected the group (its ``schema`` module) and took each of its modules whole."""
    counts: Mapping[str, Mapping[str, int]] = header["modules"]
    whole = {module for module, count in counts.items() if count["sampled"] == count["mutants"]}
    group = [module for module in counts if module == SCHEMA_GROUP or module.startswith("_schema_")]
    if SCHEMA_GROUP in counts and all(module in whole for module in group):
        whole.add(SCHEMA_ROW)
    return whole


def _print_target(
    runs: Sequence[SuiteRun], modules: Sequence[str], whole: Collection[str], echo: Callable[[str], None]
) -> None:
    """The target and whether each module meets it (``mutation.goal``): "together" needs both suites, a floor
    a module run whole."""
    by_suite = {run.suite: run for run in runs}
    scenarios, unit = by_suite.get("scenarios"), by_suite.get("unit")
    both = None
    if scenarios is not None and unit is not None:
        equivalent, _ = _set_aside("scenarios", scenarios.triage)
        both = together(scenarios.outcomes, unit.outcomes, modules, equivalent)
    echo("")
    for line in format_verdicts(judge(scenarios.rows if scenarios is not None else None, both, whole)):
        echo(line)


def _set_aside(suite: str, triage: Mapping[str, Triage]) -> tuple[set[str], set[str]]:
    """The mutants triaged equivalent, and those the scenario suite leaves to the unit tests (none for them)."""
    equivalent = {name for name, entry in triage.items() if entry.verdict == "equivalent"}
    if suite != "scenarios":
        return equivalent, set()
    return equivalent, {name for name, entry in triage.items() if entry.verdict == "unit test"}


def _rate(run: SuiteRun) -> float:
    return len(run.outcomes) / run.times.mutation_seconds if run.times.mutation_seconds else 0.0


def _survivors(run: SuiteRun) -> list[Outcome]:
    return [outcome for outcome in run.outcomes if outcome.status != "killed"]


def _print_suite(run: SuiteRun, echo: Callable[[str], None]) -> None:
    title = {"scenarios": "the scenario suite", "unit": "the unit tests (reference/tests)"}[run.suite]
    echo("")
    echo(f"== {title}: {len(run.outcomes)} mutants, {run.times.seconds / 60:.1f} min "
         f"({run.times.mutation_seconds / 60:.1f} min testing mutants, {_rate(run):.2f} mutants/s)")  # fmt: skip
    echo(format_table(run.rows))
    survivors = _survivors(run)
    verdicts: dict[str, int] = {}
    spots: dict[str, int] = {}
    untriaged: list[str] = []
    for outcome in survivors:
        entry = run.triage.get(outcome.name)
        if entry is None:
            untriaged.append(outcome.name)
            continue
        verdicts[entry.verdict] = verdicts.get(entry.verdict, 0) + 1
        if entry.blind_spot is not None:
            spots[entry.blind_spot] = spots.get(entry.blind_spot, 0) + 1
    killed_equivalent = [o.name for o in run.outcomes if o.status == "killed" and _is_equivalent(run, o.name)]
    # the triage speaks of what the scenarios leave: one they now kill needs its entry no more
    killed_triaged = [
        (entry.verdict, o.name)
        for o in run.outcomes
        if run.suite == "scenarios" and o.status == "killed" and (entry := run.triage.get(o.name)) is not None
        and entry.verdict != "equivalent"
    ]  # fmt: skip
    counts = ", ".join(f"{count} {verdict}" for verdict, count in verdicts.items()) or "none triaged"
    echo(f"not killed: {len(survivors)} ({counts}, {len(untriaged)} untriaged)")
    for spot in BLIND_SPOTS:
        if spot in spots:
            echo(f"  needs a scenario, {spot}: {spots[spot]}")
    if run.stale:
        echo(f"stale triage entries (their function changed; triage them again): {len(run.stale)}")
    for name in killed_equivalent:
        echo(f"  triaged equivalent, but killed (the triage is wrong): {name}")
    for verdict, name in killed_triaged:
        echo(f"  triaged {verdict!r}, but the scenarios kill it (remove the entry): {name}")
    if run.suite == "unit":
        for outcome in survivors:
            entry = run.triage.get(outcome.name)
            if entry is not None and entry.verdict == "unit test":
                echo(f"  triaged to the unit tests, but they do not kill it (a unit test is missing): {outcome.name}")
    for name in untriaged:
        echo(f"  untriaged: {name}")


def _is_equivalent(run: SuiteRun, name: str) -> bool:
    entry = run.triage.get(name)
    return entry is not None and entry.verdict == "equivalent"


def _suite_report(run: SuiteRun) -> dict[str, Any]:
    def row(tally_: Tally) -> dict[str, Any]:
        return {
            "run": tally_.run,
            "killed": tally_.killed,
            "survived": tally_.survived,
            "timeout": tally_.timeout,
            "noTests": tally_.no_tests,
            "equivalent": tally_.equivalent,
            "other": tally_.other,
            "score": tally_.score,
            "apiOnly": tally_.api_only,
            "inReach": tally_.in_reach,
        }

    outcomes = []
    for outcome in run.outcomes:
        entry = run.triage.get(outcome.name)
        triaged = {"triage": entry.verdict, "blindSpot": entry.blind_spot} if entry is not None else {}
        outcomes.append({**outcome.report(), **{key: value for key, value in triaged.items() if value is not None}})
    return {
        "seconds": round(run.times.seconds, 1),
        "mutationSeconds": round(run.times.mutation_seconds, 1),
        "mutantsPerSecond": round(_rate(run), 3),
        "table": {name: row(tally_) for name, tally_ in run.rows.items()},
        "staleTriage": sorted(entry.name for entry in run.stale),
        "outcomes": outcomes,
    }
