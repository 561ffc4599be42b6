"""Benchmark: generated scenarios per second, in-process and through the subprocess adapter, and the share of
the time spent drawing them.

Two measurements, each the median of several runs on the same scenarios (a derandomized or seeded draw):

- the differential check (``properties.check_differential``) of the bundled reference against itself, with
  the fuzz command's hypothesis settings, the scenarios drawn by ``strategies.scenarios()``;
- ``toolcanon fuzz`` itself (``fuzz_cli.fuzz``: the differential check and the invariants, the session
  logs in the command's scratch folder), when the installed kit has it.

Each runs with the reference in-process (``InProcess``) and through its protocol adapter
(``python -m toolcanon_conformance.adapters.reference``). The drawing share is the wall time spent inside
the scenario strategy over the wall time of the run. ``python bench/fuzz.py`` prints the table alone;
``bench/run.py --only fuzz`` prints it as one section of the benchmarks.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity
from hypothesis import settings as Settings
from hypothesis import strategies as st

Row = tuple[str, float, str]

REFERENCE = "toolcanon_conformance.adapters.reference:implementation"


def _adapter_command() -> str:
    return f"{sys.executable} -m toolcanon_conformance.adapters.reference"


def _timed(strategy: st.SearchStrategy[Any], spent: list[float]) -> st.SearchStrategy[Any]:
    @st.composite
    def timed(draw: st.DrawFn) -> Any:
        started = time.perf_counter()
        try:
            return draw(strategy)
        finally:
            spent[0] += time.perf_counter() - started

    return timed()


def _settings(examples: int) -> Settings:
    # The fuzz command's settings, derandomized: every run draws the same scenarios.
    return Settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.generate,),
        verbosity=Verbosity.quiet,
    )


def differential(make: Callable[[], Any], examples: int) -> tuple[float, float]:
    """Seconds for ``examples`` scenarios of the differential check, and the seconds spent drawing them."""
    from toolcanon_conformance.properties import check_differential
    from toolcanon_conformance.strategies import scenarios

    spent = [0.0]
    started = time.perf_counter()
    check_differential(make(), settings=_settings(examples), strategy=_timed(scenarios(), spent))
    return time.perf_counter() - started, spent[0]


def command(make: Callable[[], Any], examples: int, concurrent: bool) -> tuple[float, float]:
    """Seconds for ``examples`` scenarios of ``toolcanon fuzz --seed 1`` (its session logs in its scratch
    folder, as the command puts them), and the seconds spent drawing."""
    from toolcanon_conformance.fuzz_cli import fuzz, scratch_directory
    from toolcanon_conformance.properties import ImplementationPair

    with scratch_directory():
        run = fuzz(ImplementationPair(make(), concurrent=concurrent), examples=examples, seed_value=1)
    assert not run.found, [found.signature for found in run.found]
    assert run.examples == examples, run.examples
    return run.seconds, run.drawing_seconds


def _medians(measure: Callable[[], tuple[float, float]], runs: int) -> tuple[float, float]:
    measure()  # warm-up: imports, the strategies' caches, the adapter's first start
    samples = [measure() for _ in range(runs)]
    return statistics.median(s for s, _ in samples), statistics.median(d / s for s, d in samples)


def rows(runs: int, examples: int) -> list[Row]:
    """The section's rows: for each way, the median seconds of a run, its scenarios/s and drawing share."""
    from toolcanon_conformance.adapters.inprocess import InProcess
    from toolcanon_conformance.adapters.subprocess import Subprocess

    def in_process() -> Any:
        return InProcess(REFERENCE)

    def subprocess() -> Any:
        return Subprocess(_adapter_command())

    ways: list[tuple[str, Callable[[], tuple[float, float]]]] = [
        ("differential check, in-process", lambda: differential(in_process, examples)),
        ("differential check, subprocess adapter", lambda: differential(subprocess, examples)),
    ]
    try:
        import toolcanon_conformance.fuzz_cli  # noqa: F401
    except ImportError:
        pass
    else:
        ways += [
            ("toolcanon fuzz, in-process", lambda: command(in_process, examples, False)),
            ("toolcanon fuzz, subprocess adapter", lambda: command(subprocess, examples, True)),
        ]
    table: list[Row] = []
    for label, measure in ways:
        seconds, share = _medians(measure, runs)
        note = f"{examples / seconds:,.0f} scenarios/s, {share:.0%} drawing"
        table.append((f"{label} ({examples} scenarios)", seconds, note))
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per figure (median; default 5)")
    parser.add_argument("--examples", type=int, default=300, help="scenarios per run (default 300)")
    options = parser.parse_args(argv)
    print("| measurement | median | note |\n|---|---:|---|")
    for label, seconds, note in rows(options.runs, options.examples):
        print(f"| {label} | {seconds * 1e3:.1f} ms | {note} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
